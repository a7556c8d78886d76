# interval:ms:100 { @h = hist(cpu); }
# probe interval:ms:100 (strobe_p0)
# rawtracepoint template, 56 instructions
# map 0: @h
# map 1: drops
# map 2: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn   34: map fd @h
#   insn   41: map fd @h
#   insn   50: map value drops + 0
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 != 0 goto L6
    r0 = 0
    exit
L6:
    # t.bt:1: interval:ms:100 { @h = hist(cpu); }
    call 8 # bpf_get_smp_processor_id
    r1 = 0
    if r0 s< 0 goto L33
    r1 = r0
    r1 += 1
    if r0 <= 0 goto L33
    r1 = 2
    r2 = r0
    r2 >>= 32
    if r2 == 0 goto L18
    r0 = r2
    r1 += 32
L18:
    if r0 <= 65535 goto L21
    r0 >>= 16
    r1 += 16
L21:
    if r0 <= 255 goto L24
    r0 >>= 8
    r1 += 8
L24:
    if r0 <= 15 goto L27
    r0 >>= 4
    r1 += 4
L27:
    if r0 <= 3 goto L30
    r0 >>= 2
    r1 += 2
L30:
    if r0 <= 1 goto L33
    r0 >>= 1
    r1 += 1
L33:
    *(u64 *)(r10 - 8) = r1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 != 0 goto L52
    *(u64 *)(r10 - 16) = 1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L54
    r0 = map_value(0, 0) ll
L52:
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L54:
    r0 = 0
    exit

