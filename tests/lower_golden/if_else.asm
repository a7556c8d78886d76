# BEGIN { if (pid > 1) { @a = 1; } else { @a = 2; } }
# probe BEGIN (strobe_p0)
# rawtracepoint template, 49 instructions
# map 0: @a
# map 1: drops
# relocations:
#   insn    8: map fd @a
#   insn   18: map fd drops
#   insn   29: map fd @a
#   insn   39: map fd drops
    # t.bt:1: BEGIN { if (pid > 1) { @a = 1; } else { @a = 2; } }
    call 14 # bpf_get_current_pid_tgid
    r0 >>= 32
    r1 = 1
    if r0 > 1 goto L5
    r1 = 0
L5:
    if r1 == 0 goto L27
    *(u64 *)(r10 - 8) = 1
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L47
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L47
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
    goto L47
L27:
    *(u64 *)(r10 - 8) = 2
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L47
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L47
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L47:
    r0 = 0
    exit

