# interval:ms:100 { @s = sum(cpu); @m = min(cpu); @M = max(cpu); }
# probe interval:ms:100 (strobe_p0)
# interval template, 93 instructions
# map 0: @s
# map 1: drops
# map 2: @m
# map 3: @M
# map 4: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn    7: map fd @s
#   insn   16: map fd @s
#   insn   25: map value drops + 0
#   insn   32: map fd @m
#   insn   47: map fd @m
#   insn   56: map value drops + 0
#   insn   63: map fd @M
#   insn   78: map fd @M
#   insn   87: map value drops + 0
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L91
    # t.bt:1: interval:ms:100 { @s = sum(cpu); @m = min(cpu); @M = max(cpu); }
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L15
    lock *(u64 *)(r0 + 0) += r6
    goto L29
L15:
    *(u64 *)(r10 - 16) = r6
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L29
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L29:
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L45
    r1 = *(u64 *)(r0 + 8)
    if r1 == 0 goto L42
    r1 = *(u64 *)(r0 + 0)
    if r6 >= r1 goto L60
L42:
    *(u64 *)(r0 + 0) = r6
    *(u64 *)(r0 + 8) = 1
    goto L60
L45:
    *(u64 *)(r10 - 24) = r6
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -24
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L60
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L60:
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L76
    r1 = *(u64 *)(r0 + 8)
    if r1 == 0 goto L73
    r1 = *(u64 *)(r0 + 0)
    if r6 <= r1 goto L91
L73:
    *(u64 *)(r0 + 0) = r6
    *(u64 *)(r0 + 8) = 1
    goto L91
L76:
    *(u64 *)(r10 - 24) = r6
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -24
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L91
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L91:
    r0 = 0
    exit

