# BEGIN { @m[1] = 1; delete(@m[1]); clear(@m); zero(@m); }
# probe BEGIN (strobe_p0)
# begin template, 54 instructions
# map 0: @m
# map 1: drops
# map 2: ringbuf
# map 3: lost
# relocations:
#   insn    2: map fd @m
#   insn   11: map value drops + 0
#   insn   16: map fd @m
#   insn   26: map fd ringbuf
#   insn   34: map value lost + 0
#   insn   40: map fd ringbuf
#   insn   48: map value lost + 0
    # t.bt:1: BEGIN { @m[1] = 1; delete(@m[1]); clear(@m); zero(@m); }
    *(u64 *)(r10 - 8) = 1
    *(u64 *)(r10 - 16) = 1
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
    *(u64 *)(r10 - 8) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 3 # bpf_map_delete_elem
    r1 = 1
    if r0 == 0 goto L24
    r1 = 0
L24:
    *(u32 *)(r10 - 8) = 9
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L38
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L38:
    *(u32 *)(r10 - 8) = 10
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L52
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L52:
    r0 = 0
    exit

