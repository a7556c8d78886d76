# fexit:vfs_read { @ = hist(retval); }
# probe fexit:vmlinux:vfs_read (strobe_p0)
# fexit template, 42 instructions
# map 0: @
# map 1: lost
# map 2: strobe_arm
# relocations:
#   insn    0: map value strobe_arm + 0
#   insn    4: return value slot
#   insn   32: map fd @
    r0 = map_value(0, 0) ll
    r0 = *(u32 *)(r0 + 0)
    if r0 == 0 goto L40
    # t.bt:1: fexit:vfs_read { @ = hist(retval); }
    r0 = *(u64 *)(r1 + 0)
    r1 = 0
    if r0 s< 0 goto L31
    r1 = r0
    r1 += 1
    if r0 <= 0 goto L31
    r1 = 2
    r2 = r0
    r2 >>= 32
    if r2 == 0 goto L16
    r0 = r2
    r1 += 32
L16:
    if r0 <= 65535 goto L19
    r0 >>= 16
    r1 += 16
L19:
    if r0 <= 255 goto L22
    r0 >>= 8
    r1 += 8
L22:
    if r0 <= 15 goto L25
    r0 >>= 4
    r1 += 4
L25:
    if r0 <= 3 goto L28
    r0 >>= 2
    r1 += 2
L28:
    if r0 <= 1 goto L31
    r0 >>= 1
    r1 += 1
L31:
    *(u64 *)(r10 - 8) = r1
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -8
    call 1 # bpf_map_lookup_elem
    if r0 == 0 goto L40
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L40:
    r0 = 0
    exit

