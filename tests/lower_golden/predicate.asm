# interval:ms:10 /cpu == 0/ { @ = count(); }
# probe interval:ms:10 (strobe_p0)
# rawtracepoint template, 32 instructions
# map 0: @
# map 1: drops
# map 2: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn   10: map fd @
#   insn   17: map fd @
#   insn   26: map value drops + 0
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L30
    # t.bt:1: interval:ms:10 /cpu == 0/ { @ = count(); }
    call 8 # bpf_get_smp_processor_id
    r1 = 1
    if r0 == 0 goto L8
    r1 = 0
L8:
    if r1 == 0 goto L30
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 != 0 goto L28
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L30
    r0 = map_value(0, 0) ll
L28:
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L30:
    r0 = 0
    exit

