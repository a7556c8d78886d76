# macro twice(x) { x + x } fn clamp($v: int64, $hi: int64): int64 { if ($v > $hi) { return $hi; } return $v; } BEGIN { @m[1] = 1; @r = clamp(twice(cpu), 3) + len(@m) + has_key(@m, 1); }
# probe BEGIN (strobe_p0)
# begin template, 71 instructions
# map 0: @m
# map 1: drops
# map 2: @r
# relocations:
#   insn    2: map fd @m
#   insn   11: map value drops + 0
#   insn   32: map fd @m
#   insn   42: map fd @m
#   insn   54: map fd @r
#   insn   63: map value drops + 0
    # t.bt:1: macro twice(x) { x + x } fn clamp($v: int64, $hi: int64): int64 { if ($v > $hi) { return $hi; } return $v; } BEGIN { @m[1] = 1; @r = clamp(twice(cpu), 3) + len(@m) + has_key(@m, 1); }
    *(u64 *)(r10 - 8) = 1
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L15
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L15:
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    call 8 # bpf_get_smp_processor_id
    r1 = r6
    r1 += r0
    r0 = r1
    r6 = 0
    *(u64 *)(r10 - 8) = r0
    *(u64 *)(r10 - 16) = 3
    r0 = *(u64 *)(r10 - 8)
    r1 = *(u64 *)(r10 - 16)
    if r0 s<= r1 goto L29
    r0 = *(u64 *)(r10 - 16)
    goto L30
L29:
    r0 = *(u64 *)(r10 - 8)
L30:
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(0) ll
    r2 = func(L69) ll
    r3 = r10
    r3 += -8
    r4 = 0
    call 164 # bpf_for_each_map_elem
    r6 += r0
    *(u64 *)(r10 - 8) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    r1 = 1
    if r0 != 0 goto L50
    r1 = 0
L50:
    r0 = r6
    r0 += r1
    *(u64 *)(r10 - 8) = r0
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L67
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L67:
    r0 = 0
    exit
L69:
    r0 = 0
    exit

