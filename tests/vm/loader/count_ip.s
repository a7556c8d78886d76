# Counts events per traced function: key = bpf_get_func_ip(ctx) (fentry/fexit 5.15+, kprobes
# 5.15+), which `strobe load` prints as the function's name. The same instructions serve
# fentry, fexit and kprobe programs: only the ctx differs, and the helper takes it opaque.
.license "GPL"
.map counts type=hash key=8 value=8 entries=8192

.section fentry/vfs_read
.globl count_ip
count_ip:
  call bpf_get_func_ip
  *(u64 *)(r10 - 8) = r0
  r1 = counts ll
  r2 = r10
  r2 += -8
  call bpf_map_lookup_elem
  if r0 != 0 goto bump
  r1 = 1
  *(u64 *)(r10 - 16) = r1
  r1 = counts ll
  r2 = r10
  r2 += -8
  r3 = r10
  r3 += -16
  r4 = 1
  call bpf_map_update_elem
  goto out
bump:
  r1 = 1
  lock *(u64 *)(r0 + 0) += r1
out:
  r0 = 0
  exit
