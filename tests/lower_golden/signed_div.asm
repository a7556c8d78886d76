# BEGIN { $a = (int32)pid; @r = $a / -3; }
# probe BEGIN (strobe_p0)
# begin template, 38 instructions
# map 0: @r
# map 1: drops
# relocations:
#   insn   23: map fd @r
#   insn   32: map value drops + 0
    # t.bt:1: BEGIN { $a = (int32)pid; @r = $a / -3; }
    call 14 # bpf_get_current_pid_tgid
    r0 >>= 32
    r0 <<= 32
    r0 s>>= 32
    *(u64 *)(r10 - 8) = r0
    r0 = *(u64 *)(r10 - 8)
    r0 <<= 32
    r0 s>>= 32
    r1 = -3
    r2 = r0
    if r2 s>= 0 goto L12
    r2 = -r2
L12:
    r3 = r1
    if r3 s>= 0 goto L15
    r3 = -r3
L15:
    r2 /= r3
    r3 = r0
    r3 ^= r1
    if r3 s>= 0 goto L20
    r2 = -r2
L20:
    r0 = r2
    *(u64 *)(r10 - 8) = r0
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L36
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L36:
    r0 = 0
    exit

