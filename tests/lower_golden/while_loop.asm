# BEGIN { $i = 0; while ($i < 4) { $i++; } @i = $i; }
# probe BEGIN (strobe_p0)
# rawtracepoint template, 30 instructions
# map 0: @i
# map 1: drops
# relocations:
#   insn   15: map fd @i
#   insn   24: map value drops + 0
    # t.bt:1: BEGIN { $i = 0; while ($i < 4) { $i++; } @i = $i; }
    *(u64 *)(r10 - 8) = 0
    r0 = 0
L2:
    if r0 >= 1024 goto L13
    r1 = *(u64 *)(r10 - 8)
    r2 = 1
    if r1 s< 4 goto L7
    r2 = 0
L7:
    if r2 == 0 goto L13
    r1 = *(u64 *)(r10 - 8)
    r1 += 1
    *(u64 *)(r10 - 8) = r1
    r0 += 1
    goto L2
L13:
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

