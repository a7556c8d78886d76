# BEGIN { @x = 1; print(@x); time("%H\n"); }
# probe BEGIN (strobe_p0)
# begin template, 45 instructions
# map 0: @x
# map 1: drops
# map 2: ringbuf
# map 3: lost
# relocations:
#   insn    2: map fd @x
#   insn   11: map value drops + 0
#   insn   17: map fd ringbuf
#   insn   25: map value lost + 0
#   insn   31: map fd ringbuf
#   insn   39: map value lost + 0
    # t.bt:1: BEGIN { @x = 1; print(@x); time("%H\n"); }
    *(u64 *)(r10 - 8) = 1
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L15
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L15:
    *(u32 *)(r10 - 8) = 2
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L29
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L29:
    *(u32 *)(r10 - 8) = 3
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L43
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L43:
    r0 = 0
    exit

