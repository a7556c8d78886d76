# BEGIN { $i = 0; while ($i < 4) { $i++; } @i = $i; }
# probe BEGIN (strobe_p0)
# begin template, 24 instructions
# map 0: @i
# map 1: drops
# relocations:
#   insn    9: map fd @i
#   insn   18: map value drops + 0
    # t.bt:1: BEGIN { $i = 0; while ($i < 4) { $i++; } @i = $i; }
    *(u64 *)(r10 - 8) = 0
L1:
    r0 = *(u64 *)(r10 - 8)
    if r0 s>= 4 goto L7
    r0 = *(u64 *)(r10 - 8)
    r0 += 1
    *(u64 *)(r10 - 8) = r0
    goto L1
L7:
    r0 = *(u64 *)(r10 - 8)
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L22
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L22:
    r0 = 0
    exit

