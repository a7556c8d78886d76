# BEGIN { printf("%s\n", kstack(4)); }
# probe BEGIN (strobe_p0)
# begin template, 23 instructions
# map 0: stack_k4
# map 1: ringbuf
# map 2: lost
# relocations:
#   insn    2: map fd stack_k4
#   insn    9: map fd ringbuf
#   insn   17: map value lost + 0
    # t.bt:1: BEGIN { printf("%s\n", kstack(4)); }
    *(u32 *)(r10 - 16) = 1
    *(u32 *)(r10 - 12) = 0
    r2 = map_fd(0) ll
    r3 = 0
    call 27 # bpf_get_stackid
    *(u64 *)(r10 - 24) = r0
    r0 = *(u64 *)(r10 - 24)
    *(u64 *)(r10 - 8) = r0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -16
    r3 = 16
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L21
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L21:
    r0 = 0
    exit

