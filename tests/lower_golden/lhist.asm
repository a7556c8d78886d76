# interval:ms:100 { @l = lhist(cpu, 0, 16, 2); }
# probe interval:ms:100 (strobe_p0)
# rawtracepoint template, 37 instructions
# map 0: @l
# map 1: drops
# map 2: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn   15: map fd @l
#   insn   22: map fd @l
#   insn   31: map value drops + 0
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L35
    # t.bt:1: interval:ms:100 { @l = lhist(cpu, 0, 16, 2); }
    call 8 # bpf_get_smp_processor_id
    r1 = 0
    if r0 s< 0 goto L14
    r2 = r0
    if r0 s<= 16 goto L10
    r2 = 16
L10:
    r2 -= 0
    r2 /= 2
    r1 = r2
    r1 += 1
L14:
    *(u64 *)(r10 - 8) = r1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 != 0 goto L33
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L35
    r0 = map_value(0, 0) ll
L33:
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L35:
    r0 = 0
    exit

