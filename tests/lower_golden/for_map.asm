# BEGIN { @m[1] = 2; $t = 0; for ($kv : @m) { if ($kv.0 == 3) { break; } $t += $kv.1; } @t = $t; }
# probe BEGIN (strobe_p0)
# rawtracepoint template, 68 instructions
# map 0: @m
# map 1: drops
# map 2: @t
# relocations:
#   insn    3: map fd @m
#   insn   12: map value drops + 0
#   insn   21: map fd @m
#   insn   33: map fd @t
#   insn   42: map value drops + 0
    # t.bt:1: BEGIN { @m[1] = 2; $t = 0; for ($kv : @m) { if ($kv.0 == 3) { break; } $t += $kv.1; } @t = $t; }
    *(u64 *)(r10 - 8) = 0
    *(u64 *)(r10 - 16) = 2
    *(u64 *)(r10 - 24) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -24
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L16
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L16:
    *(u64 *)(r10 - 8) = 0
    *(u64 *)(r10 - 32) = 0
    r0 = r10
    r0 += -8
    *(u64 *)(r10 - 16) = r0
    r1 = map_fd(0) ll
    r2 = func(L48) ll
    r3 = r10
    r3 += -32
    r4 = 0
    call 164 # bpf_for_each_map_elem
    r0 = *(u64 *)(r10 - 32)
    if r0 != 0 goto L46
    r0 = *(u64 *)(r10 - 8)
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L46
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L46:
    r0 = 0
    exit
L48:
    r0 = *(u64 *)(r4 + 16)
    *(u64 *)(r10 - 16) = 0
    *(u64 *)(r10 - 8) = 0
    r1 = *(u64 *)(r2 + 0)
    *(u64 *)(r10 - 16) = r1
    r1 = *(u64 *)(r3 + 0)
    *(u64 *)(r10 - 8) = r1
    r1 = *(u64 *)(r10 - 16)
    r2 = 1
    if r1 == 3 goto L59
    r2 = 0
L59:
    if r2 != 0 goto L66
    r1 = *(u64 *)(r10 - 8)
    r2 = *(u64 *)(r0 + 0)
    r2 += r1
    *(u64 *)(r0 + 0) = r2
    r0 = 0
    exit
L66:
    r0 = 1
    exit

