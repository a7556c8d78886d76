# BEGIN { printf("hello %d %s\n", 42, comm); exit(); }
# probe BEGIN (strobe_p0)
# begin template, 41 instructions
# map 0: ringbuf
# map 1: lost
# map 2: strobe_exit
# relocations:
#   insn    7: map fd ringbuf
#   insn   15: map value lost + 0
#   insn   19: map value strobe_exit + 0
#   insn   27: map fd ringbuf
#   insn   35: map value lost + 0
    # t.bt:1: BEGIN { printf("hello %d %s\n", 42, comm); exit(); }
    *(u32 *)(r10 - 32) = 1
    *(u32 *)(r10 - 28) = 0
    *(u64 *)(r10 - 24) = 42
    r1 = r10
    r1 += -16
    r2 = 16
    call 16 # bpf_get_current_comm
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -32
    r3 = 32
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L19
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L19:
    r0 = map_value(0, 0) ll
    r1 = *(u32 *)(r0 + 4)
    if r1 != 0 goto L25
    *(u32 *)(r0 + 0) = 0
    *(u32 *)(r0 + 4) = 1
L25:
    *(u32 *)(r10 - 8) = 4
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L39
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L39:
    r0 = 0
    exit

