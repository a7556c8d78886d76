# BEGIN { $t = 0; for ($i : 1..cpu) { $t += $i; } @t = $t; }
# probe BEGIN (strobe_p0)
# begin template, 61 instructions
# map 0: scratch
# map 1: @t
# map 2: drops
# relocations:
#   insn    9: map fd scratch
#   insn   36: map fd @t
#   insn   45: map value drops + 0
    # t.bt:1: BEGIN { $t = 0; for ($i : 1..cpu) { $t += $i; } @t = $t; }
    *(u64 *)(r10 - 16) = 0
    *(u64 *)(r10 - 8) = 0
    call 8 # bpf_get_smp_processor_id
    r0 -= 1
    r6 = r0
    if r6 s<= 0 goto L34
    if r6 <= 8388608 goto L8
    r6 = 8388609
L8:
    *(u32 *)(r10 - 12) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -12
    call 1 # bpf_map_lookup_elem
    r7 = r0
    if r7 != 0 goto L18
    r0 = 0
    exit
L18:
    r0 = *(u64 *)(r10 - 8)
    *(u64 *)(r7 + 0) = r0
    *(u64 *)(r10 - 40) = 0
    *(u64 *)(r10 - 24) = r7
    *(u64 *)(r10 - 16) = 1
    r1 = r6
    r2 = func(L51) ll
    r3 = r10
    r3 += -40
    r4 = 0
    call 181 # bpf_loop
    r0 = *(u64 *)(r7 + 0)
    *(u64 *)(r10 - 8) = r0
    r0 = *(u64 *)(r10 - 40)
    if r0 != 0 goto L49
L34:
    r0 = *(u64 *)(r10 - 8)
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L49
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L49:
    r0 = 0
    exit
L51:
    r0 = *(u64 *)(r2 + 16)
    r3 = *(u64 *)(r2 + 24)
    r3 += r1
    *(u64 *)(r10 - 8) = r3
    r1 = *(u64 *)(r10 - 8)
    r3 = *(u64 *)(r0 + 0)
    r3 += r1
    *(u64 *)(r0 + 0) = r3
    r0 = 0
    exit

