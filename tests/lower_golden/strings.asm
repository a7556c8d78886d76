# BEGIN { if (comm == "strobe") { printf("%s\n", comm); } }
# probe BEGIN (strobe_p0)
# rawtracepoint template, 61 instructions
# map 0: ringbuf
# map 1: lost
# relocations:
#   insn   47: map fd ringbuf
#   insn   55: map value lost + 0
    # t.bt:1: BEGIN { if (comm == "strobe") { printf("%s\n", comm); } }
    r1 = r10
    r1 += -16
    r2 = 16
    call 16 # bpf_get_current_comm
    *(u32 *)(r10 - 24) = 1869771891
    *(u8 *)(r10 - 20) = 98
    *(u8 *)(r10 - 19) = 101
    *(u8 *)(r10 - 18) = 0
    r0 = 1
    r1 = *(u8 *)(r10 - 16)
    r2 = *(u8 *)(r10 - 24)
    if r1 != r2 goto L37
    if r1 == 0 goto L36
    r1 = *(u8 *)(r10 - 15)
    r2 = *(u8 *)(r10 - 23)
    if r1 != r2 goto L37
    if r1 == 0 goto L36
    r1 = *(u8 *)(r10 - 14)
    r2 = *(u8 *)(r10 - 22)
    if r1 != r2 goto L37
    if r1 == 0 goto L36
    r1 = *(u8 *)(r10 - 13)
    r2 = *(u8 *)(r10 - 21)
    if r1 != r2 goto L37
    if r1 == 0 goto L36
    r1 = *(u8 *)(r10 - 12)
    r2 = *(u8 *)(r10 - 20)
    if r1 != r2 goto L37
    if r1 == 0 goto L36
    r1 = *(u8 *)(r10 - 11)
    r2 = *(u8 *)(r10 - 19)
    if r1 != r2 goto L37
    if r1 == 0 goto L36
    r1 = *(u8 *)(r10 - 10)
    r2 = *(u8 *)(r10 - 18)
    if r1 != r2 goto L37
L36:
    r0 = 0
L37:
    r1 = 1
    if r0 == 0 goto L40
    r1 = 0
L40:
    if r1 == 0 goto L59
    *(u32 *)(r10 - 24) = 1
    *(u32 *)(r10 - 20) = 0
    r1 = r10
    r1 += -16
    r2 = 16
    call 16 # bpf_get_current_comm
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -24
    r3 = 24
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L59
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L59:
    r0 = 0
    exit

