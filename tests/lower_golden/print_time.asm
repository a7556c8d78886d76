# BEGIN { @x = 1; print(@x); time("%H\n"); }
# probe BEGIN (strobe_p0)
# rawtracepoint template, 60 instructions
# map 0: @x
# map 1: drops
# map 2: ringbuf
# map 3: lost
# relocations:
#   insn    2: map fd @x
#   insn   12: map fd drops
#   insn   22: map fd ringbuf
#   insn   31: map fd lost
#   insn   41: map fd ringbuf
#   insn   50: map fd lost
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
    if r0 == 0 goto L20
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L20
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L20:
    *(u32 *)(r10 - 8) = 2
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L39
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L39
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L39:
    *(u32 *)(r10 - 8) = 3
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L58
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L58
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L58:
    r0 = 0
    exit

