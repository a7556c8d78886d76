# interval:ms:100 { @[pid, comm, cpu] = count(); }
# probe interval:ms:100 (strobe_p0)
# interval template, 35 instructions
# map 0: @
# map 1: drops
# map 2: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn   13: map fd @
#   insn   20: map fd @
#   insn   29: map value drops + 0
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L33
    # t.bt:1: interval:ms:100 { @[pid, comm, cpu] = count(); }
    call 14 # bpf_get_current_pid_tgid
    r0 >>= 32
    *(u64 *)(r10 - 32) = r0
    r1 = r10
    r1 += -24
    r2 = 16
    call 16 # bpf_get_current_comm
    call 8 # bpf_get_smp_processor_id
    *(u64 *)(r10 - 8) = r0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -32
    call 1 # bpf_map_lookup_elem
    if r0 != 0 goto L31
    *(u64 *)(r10 - 40) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -32
    r3 = r10
    r3 += -40
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L33
    r0 = map_value(0, 0) ll
L31:
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L33:
    r0 = 0
    exit

