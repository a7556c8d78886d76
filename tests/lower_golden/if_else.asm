# BEGIN { if (pid > 1) { @a = 1; } else { @a = 2; } }
# probe BEGIN (strobe_p0)
# begin template, 34 instructions
# map 0: @a
# map 1: drops
# relocations:
#   insn    5: map fd @a
#   insn   14: map value drops + 0
#   insn   19: map fd @a
#   insn   28: map value drops + 0
    # t.bt:1: BEGIN { if (pid > 1) { @a = 1; } else { @a = 2; } }
    call 14 # bpf_get_current_pid_tgid
    r0 >>= 32
    if r0 <= 1 goto L17
    *(u64 *)(r10 - 8) = 1
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L32
    r0 = map_value(0, 0) ll
    goto L30
L17:
    *(u64 *)(r10 - 8) = 2
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L32
    r0 = map_value(0, 0) ll
L30:
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L32:
    r0 = 0
    exit

