# interval:ms:100 { @l = lhist(cpu, 0, 16, 2); }
# probe interval:ms:100 (strobe_p0)
# interval template, 25 instructions
# map 0: @l
# map 1: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn   15: map fd @l
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L23
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
    if r0 == 0 goto L23
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L23:
    r0 = 0
    exit

