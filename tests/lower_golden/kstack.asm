# BEGIN { printf("%s\n", kstack(4)); }
# probe BEGIN (strobe_p0)
# rawtracepoint template, 47 instructions
# map 0: scratch
# map 1: ringbuf
# map 2: lost
# relocations:
#   insn    4: map fd scratch
#   insn   33: map fd ringbuf
#   insn   41: map value lost + 0
    # t.bt:1: BEGIN { printf("%s\n", kstack(4)); }
    r6 = r1
    *(u32 *)(r10 - 48) = 1
    *(u32 *)(r10 - 44) = 0
    *(u32 *)(r10 - 52) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -52
    call 1 # bpf_map_lookup_elem
    r7 = r0
    if r7 != 0 goto L13
    r0 = 0
    exit
L13:
    r2 = r7
    r2 += 8
    r1 = r6
    r3 = 32
    r4 = 0
    call 67 # bpf_get_stack
    if r0 s>= 0 goto L21
    r0 = 0
L21:
    r0 >>= 3
    *(u64 *)(r7 + 0) = r0
    r0 = *(u64 *)(r7 + 0)
    *(u64 *)(r10 - 40) = r0
    r0 = *(u64 *)(r7 + 8)
    *(u64 *)(r10 - 32) = r0
    r0 = *(u64 *)(r7 + 16)
    *(u64 *)(r10 - 24) = r0
    r0 = *(u64 *)(r7 + 24)
    *(u64 *)(r10 - 16) = r0
    r0 = *(u64 *)(r7 + 32)
    *(u64 *)(r10 - 8) = r0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -48
    r3 = 48
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L45
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L45:
    r0 = 0
    exit

