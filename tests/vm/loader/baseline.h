/*
 * What the C baselines of strobe's mass-attach benchmark share (minload.c, multiload.c): a
 * monotonic clock in seconds and the raw bpf(2) call.
 */
#ifndef STROBE_BASELINE_H
#define STROBE_BASELINE_H

#include <linux/bpf.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long sys_bpf(int cmd, union bpf_attr *attr) {
  return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

#endif
