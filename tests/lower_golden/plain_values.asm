# BEGIN { @x = 1; @s[1] = "str"; @t = (1, "two"); }
# probe BEGIN (strobe_p0)
# begin template, 73 instructions
# map 0: @x
# map 1: drops
# map 2: @s
# map 3: @t
# relocations:
#   insn    2: map fd @x
#   insn   11: map value drops + 0
#   insn   20: map fd @s
#   insn   29: map value drops + 0
#   insn   58: map fd @t
#   insn   67: map value drops + 0
    # t.bt:1: BEGIN { @x = 1; @s[1] = "str"; @t = (1, "two"); }
    *(u64 *)(r10 - 8) = 1
    *(u64 *)(r10 - 16) = 0
    r1 = map_fd(0) ll
    r2 = r10
    r2 += -16
    r3 = r10
    r3 += -8
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L15
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L15:
    *(u32 *)(r10 - 8) = 7500915
    *(u32 *)(r10 - 12) = 0
    r0 = *(u32 *)(r10 - 8)
    *(u32 *)(r10 - 16) = r0
    *(u64 *)(r10 - 8) = 1
    r1 = map_fd(2) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L33
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L33:
    *(u8 *)(r10 - 8) = 1
    *(u32 *)(r10 - 16) = 7305076
    r0 = *(u8 *)(r10 - 16)
    *(u8 *)(r10 - 7) = r0
    r0 = *(u8 *)(r10 - 15)
    *(u8 *)(r10 - 6) = r0
    r0 = *(u8 *)(r10 - 14)
    *(u8 *)(r10 - 5) = r0
    r0 = *(u8 *)(r10 - 13)
    *(u8 *)(r10 - 4) = r0
    *(u8 *)(r10 - 11) = 0
    *(u16 *)(r10 - 10) = 0
    r0 = *(u8 *)(r10 - 8)
    r0 <<= 56
    r0 s>>= 56
    *(u8 *)(r10 - 16) = r0
    r0 = *(u8 *)(r10 - 7)
    *(u8 *)(r10 - 15) = r0
    r0 = *(u8 *)(r10 - 6)
    *(u8 *)(r10 - 14) = r0
    r0 = *(u8 *)(r10 - 5)
    *(u8 *)(r10 - 13) = r0
    r0 = *(u8 *)(r10 - 4)
    *(u8 *)(r10 - 12) = r0
    *(u64 *)(r10 - 8) = 0
    r1 = map_fd(3) ll
    r2 = r10
    r2 += -8
    r3 = r10
    r3 += -16
    r4 = 0
    call 2 # bpf_map_update_elem
    if r0 == 0 goto L71
    r0 = map_value(0, 0) ll
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
L71:
    r0 = 0
    exit

