# interval:ms:10 /cpu == 0/ { @ = count(); }
# probe interval:ms:10 (strobe_p0)
# rawtracepoint template, 20 instructions
# map 0: @
# map 1: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn   10: map fd @
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L18
    # t.bt:1: interval:ms:10 /cpu == 0/ { @ = count(); }
    call 8 # bpf_get_smp_processor_id
    r1 = 1
    if r0 == 0 goto L8
    r1 = 0
L8:
    if r1 == 0 goto L18
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L18
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L18:
    r0 = 0
    exit

