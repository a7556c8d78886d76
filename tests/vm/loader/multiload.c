/*
 * Baseline for the `fentry:*` rows of strobe's mass-attach benchmark: the least a loader can do
 * to put one kprobe_multi link on every traceable kernel function and take it off again. Not
 * part of strobe; scripts/bench-attach builds it (zig cc, static musl) and
 * tests/vm/loader/bench-attach.sh runs it beside strobe's `fentry:*` script rows in the same
 * guest, so what the kernel alone costs is measured in the same run.
 *
 * usage: multiload
 * Reads the traceable functions' addresses from tracefs (available_filter_functions_addrs,
 * 6.5+), loads `r0 = 0; exit` as a BPF_PROG_TYPE_KPROBE program for BPF_TRACE_KPROBE_MULTI,
 * links it to every address, then closes the link. Prints one JSON line: targets, read_s
 * (the address list), link_s (BPF_LINK_CREATE), close_s (close() of the link: the kernel
 * unregisters the fprobe, ftrace patches every call site back).
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"

static int by_value(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  double t0 = now();
  const char *paths[] = {"/sys/kernel/tracing/available_filter_functions_addrs",
                         "/sys/kernel/debug/tracing/available_filter_functions_addrs"};
  FILE *f = NULL;
  for (unsigned i = 0; i < 2 && !f; i++)
    f = fopen(paths[i], "r");
  if (!f) {
    printf("{\"error\":\"no available_filter_functions_addrs (%s)\"}\n", strerror(errno));
    return 1;
  }
  size_t n = 0, cap = 1 << 16;
  uint64_t *addrs = malloc(cap * sizeof(*addrs));
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    char *end;
    uint64_t a = strtoull(line, &end, 16);
    if (end == line || a == 0)
      continue;
    if (n == cap) {
      cap *= 2;
      addrs = realloc(addrs, cap * sizeof(*addrs));
    }
    addrs[n++] = a;
  }
  fclose(f);
  /* One entry per address (a function listed twice is patched once). */
  qsort(addrs, n, sizeof(*addrs), by_value);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (m == 0 || addrs[m - 1] != addrs[i])
      addrs[m++] = addrs[i];
  double t1 = now();

  struct bpf_insn insns[2] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT},
  };
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.prog_type = BPF_PROG_TYPE_KPROBE;
  a.expected_attach_type = BPF_TRACE_KPROBE_MULTI;
  a.insn_cnt = 2;
  a.insns = (uintptr_t)insns;
  a.license = (uintptr_t) "GPL";
  int prog = sys_bpf(BPF_PROG_LOAD, &a);
  if (prog < 0) {
    printf("{\"error\":\"prog load: %s\"}\n", strerror(errno));
    return 1;
  }
  memset(&a, 0, sizeof(a));
  a.link_create.prog_fd = prog;
  a.link_create.attach_type = BPF_TRACE_KPROBE_MULTI;
  a.link_create.kprobe_multi.cnt = m;
  a.link_create.kprobe_multi.addrs = (uintptr_t)addrs;
  int link = sys_bpf(BPF_LINK_CREATE, &a);
  double t2 = now();
  if (link < 0) {
    printf("{\"error\":\"link create over %zu addresses: %s\"}\n", m, strerror(errno));
    return 1;
  }
  close(link);
  double t3 = now();
  close(prog);
  printf("{\"targets\":%zu,\"read_s\":%.4f,\"link_s\":%.4f,\"close_s\":%.4f}\n", m, t1 - t0,
         t2 - t1, t3 - t2);
  return 0;
}
