# BEGIN { @m[1] = 2; $t = 0; for ($kv : @m) { if ($kv.0 == 3) { break; } $t += $kv.1; } @t = $t; }
# probe BEGIN (strobe_p0)
# begin template, 81 instructions
# map 0: @m
# map 1: drops
# map 2: scratch
# map 3: @t
# relocations:
#   insn    3: map fd @m
#   insn   12: map value drops + 0
#   insn   18: map fd scratch
#   insn   31: map fd @m
#   insn   45: map fd @t
#   insn   54: map value drops + 0
    # t.bt:1: BEGIN { @m[1] = 2; $t = 0; for ($kv : @m) { if ($kv.0 == 3) { break; } $t += $kv.1; } @t = $t; }
    *(u64 *)(r10 - 8) = 0
    *(u64 *)(r10 - 16) = 2
    *(u64 *)(r10 - 24) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -24
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L16
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L16:
    *(u64 *)(r10 - 8) = 0
    *(u32 *)(r10 - 12) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -12
    call 1 # bpf_map_lookup_elem
    r6 = r0
    if r6 != 0 goto L27
    r0 = 0
    exit
L27:
    r0 = *(u64 *)(r10 - 8)
    *(u64 *)(r6 + 0) = r0
    *(u64 *)(r10 - 32) = 0
    *(u64 *)(r10 - 16) = r6
    r1 = map_fd(0) ll
    r2 = func(L60) ll
    r3 = r10
    r3 += -32
    r4 = 0
    call 164 # bpf_for_each_map_elem
    r0 = *(u64 *)(r6 + 0)
    *(u64 *)(r10 - 8) = r0
    r0 = *(u64 *)(r10 - 32)
    if r0 != 0 goto L58
    r0 = *(u64 *)(r10 - 8)
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L58
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L58:
    r0 = 0
    exit
L60:
    r0 = *(u64 *)(r4 + 16)
    *(u64 *)(r10 - 16) = 0
    *(u64 *)(r10 - 8) = 0
    r1 = *(u8 *)(r2 + 0)
    r1 <<= 56
    r1 s>>= 56
    *(u8 *)(r10 - 16) = r1
    r1 = *(u64 *)(r3 + 0)
    *(u64 *)(r10 - 8) = r1
    r1 = *(u8 *)(r10 - 16)
    r1 <<= 56
    r1 s>>= 56
    if r1 == 3 goto L79
    r1 = *(u64 *)(r10 - 8)
    r2 = *(u64 *)(r0 + 0)
    r2 += r1
    *(u64 *)(r0 + 0) = r2
    r0 = 0
    exit
L79:
    r0 = 1
    exit

