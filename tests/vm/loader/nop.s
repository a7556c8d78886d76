# The baseline's program (`r0 = 0; exit`) for `strobe load`: with the arming guard strobe adds,
# it separates what the loader costs from what a bigger program costs.
.license "GPL"

.section fentry/vfs_read
.globl nop
nop:
  r0 = 0
  exit
