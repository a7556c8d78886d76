# interval:ms:100 { @a = avg(cpu); @t = stats(cpu); }
# probe interval:ms:100 (strobe_p0)
# interval template, 62 instructions
# map 0: @a
# map 1: drops
# map 2: @t
# map 3: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn    7: map fd @a
#   insn   19: map fd @a
#   insn   28: map value drops + 0
#   insn   35: map fd @t
#   insn   47: map fd @t
#   insn   56: map value drops + 0
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L60
    # t.bt:1: interval:ms:100 { @a = avg(cpu); @t = stats(cpu); }
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L17
    lock *(u64 *)(r0 + 0) += r6
    r1 = 1
    lock *(u64 *)(r0 + 8) += r1
    goto L32
L17:
    *(u64 *)(r10 - 24) = r6
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -24
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L32
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L32:
    call 8 # bpf_get_smp_processor_id
    r6 = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L45
    lock *(u64 *)(r0 + 0) += r6
    r1 = 1
    lock *(u64 *)(r0 + 8) += r1
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
    r0 = 0
    exit

