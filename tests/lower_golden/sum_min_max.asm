# interval:ms:100 { @s = sum(cpu); @m = min(cpu); @M = max(cpu); }
# probe interval:ms:100 (strobe_p0)
# rawtracepoint template, 95 instructions
# map 0: @s
# map 1: drops
# map 2: @m
# map 3: @M
# map 4: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn    9: map fd @s
#   insn   18: map fd @s
#   insn   27: map value drops + 0
#   insn   34: map fd @m
#   insn   49: map fd @m
#   insn   58: map value drops + 0
#   insn   65: map fd @M
#   insn   80: map fd @M
#   insn   89: map value drops + 0
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
    goto L31
L17:
    *(u64 *)(r10 - 16) = r6
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L31
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L31:
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L47
    r1 = *(u64 *)(r0 + 8)
    if r1 == 0 goto L44
    r1 = *(u64 *)(r0 + 0)
    if r6 >= r1 goto L62
L44:
    *(u64 *)(r0 + 0) = r6
    *(u64 *)(r0 + 8) = 1
    goto L62
L47:
    *(u64 *)(r10 - 24) = r6
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -24
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L62
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L62:
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L78
    r1 = *(u64 *)(r0 + 8)
    if r1 == 0 goto L75
    r1 = *(u64 *)(r0 + 0)
    if r6 <= r1 goto L93
L75:
    *(u64 *)(r0 + 0) = r6
    *(u64 *)(r0 + 8) = 1
    goto L93
L78:
    *(u64 *)(r10 - 24) = r6
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -24
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L93
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L93:
    r0 = 0
    exit

