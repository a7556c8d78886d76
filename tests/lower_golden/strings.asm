# BEGIN { if (comm == "strobe") { printf("%s\n", comm); } }
# probe BEGIN (strobe_p0)
# begin template, 33 instructions
# map 0: ringbuf
# map 1: lost
# relocations:
#   insn   19: map fd ringbuf
#   insn   27: map value lost + 0
    # t.bt:1: BEGIN { if (comm == "strobe") { printf("%s\n", comm); } }
    r1 = r10
    r1 += -16
    r2 = 16
    call 16 # bpf_get_current_comm
    r0 = 0
    r1 = *(u32 *)(r10 - 16)
    if r1 != 1869771891 goto L12
    r1 = *(u16 *)(r10 - 12)
    if r1 != 25954 goto L12
    r1 = *(u8 *)(r10 - 10)
    if r1 != 0 goto L12
    r0 = 1
L12:
    if r0 == 0 goto L31
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
    if r0 == 0 goto L31
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L31:
    r0 = 0
    exit

