# BEGIN { @t = cpu == 0 ? 10 : 20; }
# probe BEGIN (strobe_p0)
# begin template, 25 instructions
# map 0: @t
# map 1: drops
# relocations:
#   insn   10: map fd @t
#   insn   19: map value drops + 0
    # t.bt:1: BEGIN { @t = cpu == 0 ? 10 : 20; }
    call 8 # bpf_get_smp_processor_id
    r1 = 1
    if r0 == 0 goto L4
    r1 = 0
L4:
    if r1 == 0 goto L7
    r0 = 10
    goto L8
L7:
    r0 = 20
L8:
    *(u64 *)(r10 - 8) = r0
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L23
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L23:
    r0 = 0
    exit

