# interval:ms:100 { @s = sum(cpu); @m = min(cpu); @M = max(cpu); }
# probe interval:ms:100 (strobe_p0)
# rawtracepoint template, 110 instructions
# map 0: @s
# map 1: drops
# map 2: @m
# map 3: @M
# map 4: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn    9: map fd @s
#   insn   18: map fd @s
#   insn   28: map fd drops
#   insn   39: map fd @m
#   insn   54: map fd @m
#   insn   64: map fd drops
#   insn   75: map fd @M
#   insn   90: map fd @M
#   insn  100: map fd drops
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 != 0 goto L6
    r0 = 0
    exit
L6:
    # t.bt:1: interval:ms:100 { @s = sum(cpu); @m = min(cpu); @M = max(cpu); }
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L17
    lock *(u64 *)(r0 + 0) += r6
    goto L36
L17:
    *(u64 *)(r10 - 16) = r6
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L36
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L36
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L36:
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L52
    r1 = *(u64 *)(r0 + 8)
    if r1 == 0 goto L49
    r1 = *(u64 *)(r0 + 0)
    if r6 >= r1 goto L72
L49:
    *(u64 *)(r0 + 0) = r6
    *(u64 *)(r0 + 8) = 1
    goto L72
L52:
    *(u64 *)(r10 - 24) = r6
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -24
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L72
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L72
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L72:
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L88
    r1 = *(u64 *)(r0 + 8)
    if r1 == 0 goto L85
    r1 = *(u64 *)(r0 + 0)
    if r6 <= r1 goto L108
L85:
    *(u64 *)(r0 + 0) = r6
    *(u64 *)(r0 + 8) = 1
    goto L108
L88:
    *(u64 *)(r10 - 24) = r6
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -24
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L108
    *(u32 *)(r10 - 4) = 0
    r1 = map_fd(1) ll
    r2 = r10
    r2 += -4
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L108
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L108:
    r0 = 0
    exit

