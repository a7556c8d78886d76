#!/bin/sh
# Attach/detach timings of the clone loader inside a VM guest (run by tests/vm/loader_bench.case,
# driven from the host by scripts/bench-attach). One line per run:
#   STROBE-BENCH pattern=P threads=N detach=MODE {strobe's --timings JSON}
# threads 0 = one loader thread per CPU. `detach_wait_s` is what the user waits at exit:
# ~0 for background (a child closes the links after strobe returns); sequential vs parallel
# shows whether the kernel lets the per-link RCU-tasks grace periods overlap.
strobe=$1
run() { # pattern threads detach
  line=$("$strobe" load loader/count_all.s --attach "fentry:$1" --duration 0.2 \
    --load-threads "$2" --detach "$3" --timings 2>&1 >/dev/null | grep start_to_armed)
  echo "STROBE-BENCH pattern=$1 threads=$2 detach=$3 $line"
  # Let a background detach finish before the next run: its closes take the same kernel
  # locks as the next run's attaches.
  if [ "$3" = background ]; then
    sleep 1
    while [ "$(pidof strobe | wc -w)" -gt 0 ]; do sleep 1; done
  fi
}
run 'vfs_read' 1 background
run 'vfs_*' 1 sequential
run 'vfs_*' 0 parallel
run 'vfs_*' 0 background
run 'tcp_*' 1 sequential
run 'tcp_*' 0 parallel
run 'tcp_*' 0 background
run '*_read*' 1 background
run '*_read*' 0 parallel
echo "STROBE-BENCH done"
