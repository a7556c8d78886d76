#!/bin/sh
# Attach/detach timings of the clone loader inside a VM guest (run by tests/vm/loader_bench.case,
# driven from the host by scripts/bench-attach). One line per run:
#   STROBE-BENCH loader=L prog=P pattern=P threads=N detach=MODE {timings JSON}
# loader=strobe runs `strobe load --timings` (threads 0 = one loader thread per CPU);
# loader=minload runs the C baseline (tests/vm/loader/minload.c: sequential load + attach of a
# 2-insn program, no maps), when scripts/bench-attach put it in /bin; loader=minload-name is the
# same in strobe's attach order (by name) instead of BTF id order. Runs of both alternate in
# the same guest, so host load affects both alike. `detach_wait_s` is what the user waits at
# exit: ~0 for background (a child closes the links after strobe returns).
# BENCH_ROUNDS=N sets the rounds; BENCH_LARGE=1 in /etc/vmtest.env adds `*_read*` (~1000 targets) and the detach-mode runs.
strobe=$1
[ -f /etc/vmtest.env ] && . /etc/vmtest.env
# Let a background detach finish before the next run: its closes take the same kernel locks
# as the next run's attaches.
settle() {
  sleep 1
  while [ "$(pidof strobe minload | wc -w)" -gt 0 ]; do sleep 1; done
}
run() { # prog pattern threads detach
  line=$("$strobe" load "loader/$1.s" --attach "fentry:$2" --duration 0.2 \
    --load-threads "$3" --detach "$4" --timings 2>&1 >/dev/null | grep start_to_armed)
  echo "STROBE-BENCH loader=strobe prog=$1 pattern=$2 threads=$3 detach=$4 $line"
  settle
}
base() { # pattern [name]
  command -v minload >/dev/null || return 0
  line=$(minload "$1" $2)
  echo "STROBE-BENCH loader=minload${2:+-$2} prog=nop pattern=$1 threads=1 detach=background $line"
  settle
}
# Rounds of the same interleaved runs (the host's load changes by the minute; compare the
# medians): BENCH_ROUNDS (default 3) for vfs_*, one fewer (at least 1) for tcp_*, whose
# background detach takes ~1 minute per run.
rounds=${BENCH_ROUNDS:-3}
settle # a background detach of an earlier case must not overlap the first run
for pat in 'vfs_*' 'tcp_*'; do
  n=$rounds
  [ "$pat" = 'tcp_*' ] && [ "$n" -gt 1 ] && n=$((n - 1))
  r=0
  while [ "$r" -lt "$n" ]; do
    base "$pat"
    run nop "$pat" 1 background
    base "$pat" name
    run count_all "$pat" 1 background
    run count_all "$pat" 0 background
    r=$((r + 1))
  done
done
if [ "${BENCH_LARGE:-0}" = 1 ]; then
  run count_all 'vfs_*' 1 sequential
  run count_all 'vfs_*' 0 parallel
  run count_all 'tcp_*' 1 sequential
  run count_all 'tcp_*' 0 parallel
  base '*_read*'
  run count_all '*_read*' 1 background
  run count_all '*_read*' 0 background
fi
echo "STROBE-BENCH done"
