# interval:ms:100 { @[comm] = count(); }
# probe interval:ms:100 (strobe_p0)
# interval template, 29 instructions
# map 0: @
# map 1: drops
# map 2: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn   10: map fd @
#   insn   16: map fd @
#   insn   23: map value drops + 0
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L27
    # t.bt:1: interval:ms:100 { @[comm] = count(); }
    r6 = r10
    r6 += -16
    r1 = r6
    r2 = 16
    call 16 # bpf_get_current_comm
    r2 = r6
    r1 = map_fd(0) ll
    call 1 # bpf_map_lookup_elem
    if r0 != 0 goto L25
    *(u64 *)(r10 - 24) = 1
    r2 = r6
    r1 = map_fd(0) ll
    r3 = r10
    r3 += -24
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L27
    r0 = map_value(0, 0) ll
L25:
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L27:
    r0 = 0
    exit

