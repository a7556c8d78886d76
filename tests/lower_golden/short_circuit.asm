# BEGIN { if (pid > 1 && tid > 1 || cpu == 0) { exit(); } }
# probe BEGIN (strobe_p0)
# begin template, 36 instructions
# map 0: strobe_exit
# map 1: ringbuf
# map 2: lost
# relocations:
#   insn   14: map value strobe_exit + 0
#   insn   22: map fd ringbuf
#   insn   30: map value lost + 0
    # t.bt:1: BEGIN { if (pid > 1 && tid > 1 || cpu == 0) { exit(); } }
    r6 = 1
    r7 = 0
    call 14 # bpf_get_current_pid_tgid
    r0 >>= 32
    if r0 <= 1 goto L9
    call 14 # bpf_get_current_pid_tgid
    w0 = w0
    if r0 <= 1 goto L9
    r7 = 1
L9:
    if r7 != 0 goto L13
    call 8 # bpf_get_smp_processor_id
    if r0 == 0 goto L13
    r6 = 0
L13:
    if r6 == 0 goto L34
    r0 = map_value(0, 0) ll
    r1 = *(u32 *)(r0 + 4)
    if r1 != 0 goto L20
    *(u32 *)(r0 + 0) = 0
    *(u32 *)(r0 + 4) = 1
L20:
    *(u32 *)(r10 - 8) = 4
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -8
    r3 = 8
    r4 = 0
    call 130 # bpf_ringbuf_output
    if r0 == 0 goto L34
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L34:
    r0 = 0
    exit

