/*
 * Baseline for strobe's mass-attach benchmark: the least a loader can do to attach one fentry
 * program per BTF function matching a pattern. Not part of strobe; scripts/bench-attach builds
 * it (zig cc, static musl) and tests/vm/loader/bench-attach.sh runs it beside `strobe load` in
 * the same guest, so host load affects both alike.
 *
 * usage: minload PATTERN [name] (fnmatch pattern over vmlinux BTF FUNC names, e.g. 'vfs_*';
 *                               `name`: attach in name order, as strobe does, not BTF id order)
 * Prints one JSON line: targets, attached, btf_s (read + scan vmlinux BTF), load_s and
 * attach_s (sums over targets), start_to_attached_s. Then it forks: the child closes the links
 * (each fentry detach waits for an RCU-tasks grace period) while the parent returns at once.
 *
 * Per target: BPF_PROG_LOAD of `r0 = 0; exit` (BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY,
 * attach_btf_id), then BPF_LINK_CREATE (BPF_RAW_TRACEPOINT_OPEN where that is EINVAL, 5.10).
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"

static const char *g_strs;
static uint32_t *g_name_of; /* name offset per BTF id */

static int by_name(const void *a, const void *b) {
  return strcmp(g_strs + g_name_of[*(const uint32_t *)a], g_strs + g_name_of[*(const uint32_t *)b]);
}

static uint32_t u32at(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Bytes that follow the 12-byte common record of a BTF type of this kind. */
static long extra_len(uint32_t kind, uint32_t vlen) {
  switch (kind) {
  case 1: return 4;            /* INT */
  case 3: return 12;           /* ARRAY */
  case 4: case 5: return 12L * vlen; /* STRUCT, UNION */
  case 6: return 8L * vlen;    /* ENUM */
  case 13: return 8L * vlen;   /* FUNC_PROTO */
  case 14: return 4;           /* VAR */
  case 15: return 12L * vlen;  /* DATASEC */
  case 17: return 4;           /* DECL_TAG */
  case 19: return 12L * vlen;  /* ENUM64 */
  default: return 0;           /* PTR, FWD, TYPEDEF, qualifiers, FUNC, FLOAT, TYPE_TAG */
  }
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: %s PATTERN [name]\n", argv[0]);
    return 2;
  }
  double t0 = now();
  struct rlimit inf = {RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_MEMLOCK, &inf); /* kernels before 5.11 charge BPF memory to it */

  int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY);
  if (fd < 0) { perror("vmlinux BTF"); return 1; }
  size_t cap = 1 << 20, len = 0;
  unsigned char *b = malloc(cap);
  for (;;) {
    if (len == cap) b = realloc(b, cap *= 2);
    ssize_t n = read(fd, b + len, cap - len);
    if (n <= 0) break;
    len += n;
  }
  close(fd);
  uint32_t hdr_len = u32at(b + 4), type_off = u32at(b + 8), type_len = u32at(b + 12);
  uint32_t str_off = u32at(b + 16);
  const unsigned char *types = b + hdr_len + type_off;
  const char *strs = (const char *)b + hdr_len + str_off;
  uint32_t *ids = malloc(sizeof(uint32_t) * 65536);
  size_t nids = 0, idcap = 65536;
  uint32_t id = 1;
  g_name_of = malloc(sizeof(uint32_t) * (type_len / 12 + 2));
  for (size_t off = 0; off + 12 <= type_len; id++) {
    uint32_t name = u32at(types + off), info = u32at(types + off + 4);
    g_name_of[id] = name;
    uint32_t kind = (info >> 24) & 0x1f, vlen = info & 0xffff;
    if (kind == 12 && fnmatch(argv[1], strs + name, 0) == 0) {
      if (nids == idcap) ids = realloc(ids, sizeof(uint32_t) * (idcap *= 2));
      ids[nids++] = id;
    }
    off += 12 + extra_len(kind, vlen);
  }
  if (argc == 3 && strcmp(argv[2], "name") == 0) {
    g_strs = strs;
    qsort(ids, nids, sizeof(uint32_t), by_name);
  }
  double t_btf = now();

  struct bpf_insn insns[2] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT},
  };
  int *links = malloc(sizeof(int) * (nids + 1));
  size_t attached = 0;
  double load_s = 0, attach_s = 0;
  for (size_t i = 0; i < nids; i++) {
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.prog_type = BPF_PROG_TYPE_TRACING;
    a.expected_attach_type = BPF_TRACE_FENTRY;
    a.attach_btf_id = ids[i];
    a.insns = (uintptr_t)insns;
    a.insn_cnt = 2;
    a.license = (uintptr_t) "GPL";
    double t = now();
    int prog = sys_bpf(BPF_PROG_LOAD, &a);
    load_s += now() - t;
    if (prog < 0) continue;
    memset(&a, 0, sizeof(a));
    a.link_create.prog_fd = prog;
    a.link_create.attach_type = BPF_TRACE_FENTRY;
    t = now();
    int link = sys_bpf(BPF_LINK_CREATE, &a);
    if (link < 0 && errno == EINVAL) {
      memset(&a, 0, sizeof(a));
      a.raw_tracepoint.prog_fd = prog;
      link = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
    }
    attach_s += now() - t;
    if (link < 0) {
      close(prog);
      continue;
    }
    close(prog); /* the link holds the program */
    links[attached++] = link;
  }
  double t_end = now();
  printf("{\"targets\":%zu,\"attached\":%zu,\"btf_s\":%.4f,\"load_s\":%.4f,\"attach_s\":%.4f,"
         "\"start_to_attached_s\":%.4f}\n",
         nids, attached, t_btf - t0, load_s, attach_s, t_end - t0);
  fflush(stdout);
  if (fork() == 0) {
    for (size_t i = 0; i < attached; i++) close(links[i]);
  }
  return 0;
}
