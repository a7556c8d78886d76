# interval:ms:10 /cpu == 0/ { @ = count(); }
# probe interval:ms:10 (strobe_p0)
# interval template, 17 instructions
# map 0: @
# map 1: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn    7: map fd @
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L15
    # t.bt:1: interval:ms:10 /cpu == 0/ { @ = count(); }
    call 8 # bpf_get_smp_processor_id
    if r0 != 0 goto L15
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L15
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L15:
    r0 = 0
    exit

