# BEGIN { @m[1] = 1; delete(@m[1]); clear(@m); zero(@m); }
# probe BEGIN (strobe_p0)
# rawtracepoint template, 69 instructions
# map 0: @m
# map 1: drops
# map 2: ringbuf
# map 3: lost
# relocations:
#   insn    2: map fd @m
#   insn   12: map fd drops
#   insn   21: map fd @m
#   insn   31: map fd ringbuf
#   insn   40: map fd lost
#   insn   50: map fd ringbuf
#   insn   59: map fd lost
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
    *(u64 *)(r10 - 8) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 3 # bpf_map_delete_elem
    r1 = 1
    if r0 == 0 goto L29
    r1 = 0
L29:
    *(u32 *)(r10 - 8) = 9
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L48
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L48
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L48:
    *(u32 *)(r10 - 8) = 10
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L67
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L67
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L67:
    r0 = 0
    exit

