# BEGIN { $s = 0; unroll(3) { $s += cpu; } @s = $s; }
# probe BEGIN (strobe_p0)
# begin template, 30 instructions
# map 0: @s
# map 1: drops
# relocations:
#   insn   15: map fd @s
#   insn   24: map value drops + 0
    # t.bt:1: BEGIN { $s = 0; unroll(3) { $s += cpu; } @s = $s; }
    *(u64 *)(r10 - 8) = 0
    call 8 # bpf_get_smp_processor_id
    r1 = *(u64 *)(r10 - 8)
    r1 += r0
    *(u64 *)(r10 - 8) = r1
    call 8 # bpf_get_smp_processor_id
    r1 = *(u64 *)(r10 - 8)
    r1 += r0
    *(u64 *)(r10 - 8) = r1
    call 8 # bpf_get_smp_processor_id
    r1 = *(u64 *)(r10 - 8)
    r1 += r0
    *(u64 *)(r10 - 8) = r1
    r0 = *(u64 *)(r10 - 8)
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L28
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L28:
    r0 = 0
    exit

