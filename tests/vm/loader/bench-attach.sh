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
# loader=script-kprobe_multi / script-trampoline runs a script, `fentry:PATTERN { @[func] =
# count(); }`, with --fentry-via set to the path (loader/fentry_multi.rs), and a dd workload
# started once it is armed: its JSON adds `detach_s` (from the run's stop, when strobe
# disarms and starts detaching, until no strobe process is left: the background child has
# closed every link), `detach_after_exit_s` (from strobe's exit), `funcs` (distinct functions
# counted) and `events` (their sum).
# BENCH_ROUNDS=N sets the rounds; BENCH_LARGE=1 in /etc/vmtest.env adds `*_read*` (~1000 targets) and the detach-mode runs.
# BENCH_MULTI_ONLY=1 runs only the script rows, BENCH_ROUNDS times, for the comma-separated
# BENCH_MULTI_PATTERNS (default `vfs_*,tcp_*,*`; `*`, every attachable function, through
# kprobe_multi only); BENCH_MULTI_TRAMPOLINES=0 leaves out the trampoline rows.
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
multi_base() { # the kernel alone: one kprobe_multi link on every traceable function
  command -v multiload >/dev/null || return 0
  line=$(multiload)
  echo "STROBE-BENCH loader=multiload prog=nop pattern=* threads=1 detach=foreground $line"
  settle
}
base() { # pattern [name]
  command -v minload >/dev/null || return 0
  line=$(minload "$1" $2)
  echo "STROBE-BENCH loader=minload${2:+-$2} prog=nop pattern=$1 threads=1 detach=background $line"
  settle
}
uptime() { cut -d' ' -f1 /proc/uptime; }
script() { # via pattern
  # The dd workload starts once strobe is armed: on the guest's one vCPU a busy loop started
  # before would take half the CPU from the attach it competes with.
  t0=$(uptime)
  t_exit=
  STROBE_TIMINGS=1 "$strobe" -q --fentry-via "$1" \
    -e "fentry:$2 { @[func] = count(); } interval:s:2 { exit(); }" >/tmp/bench.out 2>/tmp/bench.err &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && ! grep -q start_to_armed /tmp/bench.err; do sleep 0.05; done
  while :; do dd if=/tmp/bench150 of=/dev/null bs=100 count=2 2>/dev/null; done &
  work=$!
  # The detach child (forked when the run stops) ends when its last close returns; it stays a
  # zombie until strobe exits, so a live child is one whose state is not Z.
  child=
  t1=
  while :; do
    if [ -z "$child" ]; then
      for p in $(pidof strobe); do [ "$p" = "$pid" ] || child=$p; done
      # The run has stopped: the workload would only compete with the detach and the printing.
      [ -z "$child" ] || kill "$work" 2>/dev/null
    fi
    if [ -n "$child" ] && [ -z "$t1" ] && ! grep -qs '^State:[[:space:]]*[RSD]' "/proc/$child/status"; then
      t1=$(uptime)
    fi
    if ! grep -qs '^State:[[:space:]]*[RSD]' "/proc/$pid/status"; then
      [ -n "$t_exit" ] || t_exit=$(uptime)
      [ -n "$child" ] || break
      [ -n "$t1" ] && break
    fi
    sleep 0.05
  done
  wait "$pid"
  kill "$work" 2>/dev/null
  wait "$work" 2>/dev/null
  [ -n "$t1" ] || t1=$t_exit
  json=$(grep start_to_armed /tmp/bench.err | tail -n1)
  [ -n "$json" ] || json="{\"error\":\"$(head -c 200 /tmp/bench.err | tr -d '\n"\\')\"}"
  stop=$(sed -n 's/.*"stop_s":\([0-9.]*\).*/\1/p' /tmp/bench.err | tail -n1)
  printed=$(sed -n 's/.*"printed_s":\([0-9.]*\).*/\1/p' /tmp/bench.err | tail -n1)
  print=$(awk -v s="${stop:-0}" -v p="${printed:-0}" 'BEGIN { printf "%.2f", p - s }')
  funcs=$(grep -c '^@\[' /tmp/bench.out)
  events=$(awk -F': ' '/^@\[/ { s += $2 } END { print s + 0 }' /tmp/bench.out)
  # detach_s: from the run's stop (probes disarmed, detach started: strobe's stop_s after its
  # start) until the background child has closed every link (or strobe's exit, when the child
  # ended before the first look); detach_after_exit_s: from strobe's exit, as the user sees it
  # (negative: the links were closed before strobe had printed its results); stop_to_printed_s:
  # from the stop until strobe had printed its results.
  detach=$(awk -v a="$t0" -v s="${stop:-0}" -v b="$t1" 'BEGIN { printf "%.2f", b - a - s }')
  after=$(awk -v a="$t_exit" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  echo "STROBE-BENCH loader=script-$1 prog=count_func pattern=$2 threads=0 detach=background ${json%\}},\"detach_s\":$detach,\"detach_after_exit_s\":$after,\"stop_to_printed_s\":$print,\"funcs\":$funcs,\"events\":$events}"
  settle
}
head -c 150 /dev/zero >/tmp/bench150
# Whether this kernel attaches fentry through kprobe_multi (else `fentry:*` would fall back to
# tens of thousands of trampolines: hours under TCG).
has_multi() {
  "$strobe" -v --fentry-via kprobe_multi -e 'fentry:vfs_read {} interval:ms:1 { exit(); }' 2>&1 |
    grep -q 'through kprobe_multi'
}
if [ "${BENCH_MULTI_ONLY:-0}" = 1 ]; then
  settle
  if has_multi; then
    set -f
    r=0
    while [ "$r" -lt "${BENCH_ROUNDS:-1}" ]; do
      old_ifs=$IFS
      IFS=,
      for pat in ${BENCH_MULTI_PATTERNS:-vfs_*,tcp_*,*}; do
        IFS=$old_ifs
        script kprobe_multi "$pat"
        [ "$pat" != '*' ] || multi_base
        # Tens of thousands of trampolines would take hours under TCG.
        [ "$pat" = '*' ] || [ "${BENCH_MULTI_TRAMPOLINES:-1}" = 0 ] || script trampoline "$pat"
      done
      IFS=$old_ifs
      r=$((r + 1))
    done
    set +f
  fi
  echo "STROBE-BENCH done"
  exit 0
fi
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
    script kprobe_multi "$pat"
    script trampoline "$pat"
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
  has_multi && script kprobe_multi '*'
fi
echo "STROBE-BENCH done"
