# fentry:vfs_read { @[comm] = sum(args.count); }
# probe fentry:vmlinux:vfs_read (strobe_p0)
# fentry template, 32 instructions
# map 0: @
# map 1: drops
# map 2: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn    6: argument slot of `count`
#   insn   11: map fd @
#   insn   19: map fd @
#   insn   26: map value drops + 0
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L30
    # t.bt:1: fentry:vfs_read { @[comm] = sum(args.count); }
    r6 = r10
    r6 += -16
    r7 = *(u64 *)(r1 + 0)
    r1 = r6
    r2 = 16
    call 16 # bpf_get_current_comm
    r2 = r6
    r1 = map_fd(0) ll
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L17
    lock *(u64 *)(r0 + 0) += r7
    goto L30
L17:
    *(u64 *)(r10 - 24) = r7
    r2 = r6
    r1 = map_fd(0) ll
    r3 = r10
    r3 += -24
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L30
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L30:
    r0 = 0
    exit

