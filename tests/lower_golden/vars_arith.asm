# BEGIN { $a = pid; $b = $a * 3 + 1; @r = $b / 2 - $b % 5; }
# probe BEGIN (strobe_p0)
# begin template, 30 instructions
# map 0: @r
# map 1: drops
# relocations:
#   insn   15: map fd @r
#   insn   24: map value drops + 0
    # t.bt:1: BEGIN { $a = pid; $b = $a * 3 + 1; @r = $b / 2 - $b % 5; }
    call 14 # bpf_get_current_pid_tgid
    r0 >>= 32
    *(u64 *)(r10 - 8) = r0
    r0 = *(u64 *)(r10 - 8)
    w0 = w0
    r0 *= 3
    r0 += 1
    *(u64 *)(r10 - 16) = r0
    r0 = *(u64 *)(r10 - 16)
    r0 /= 2
    r1 = *(u64 *)(r10 - 16)
    r1 %= 5
    r0 -= r1
    *(u64 *)(r10 - 8) = r0
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L28
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L28:
    r0 = 0
    exit

