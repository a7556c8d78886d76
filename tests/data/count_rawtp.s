# Counts every event in counts[0]: a raw tracepoint program for `strobe load`.
.license "GPL"
.map counts type=array key=4 value=8 entries=1

.section rawtracepoint/sys_enter
.globl count
count:
  r1 = 0
  *(u32 *)(r10 - 4) = r1
  r1 = counts ll
  r2 = r10
  r2 += -4
  call bpf_map_lookup_elem
  if r0 == 0 goto out
  r1 = 1
  lock *(u64 *)(r0 + 0) += r1
out:
  r0 = 0
  exit
