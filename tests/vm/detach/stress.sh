#!/bin/sh
# Starts fentry:vfs_* scripts back to back, each one while the previous ones' background
# detach children are still closing their links, then one that is stopped by SIGTERM and one
# by SIGKILL in the middle of attaching; waits for every strobe process to go and checks that
# no BPF program or link is left and that a new script still attaches and counts.
# usage: stress.sh ROUNDS   (strobe from $STROBE; prints timings, also to the console)
S=${STROBE:-strobe}
P='fentry:vfs_* { @[probe] = count(); } interval:s:1 { exit(); }'
now() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
strobes() { for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = strobe ] && echo "${p#/proc/}"; done; }
say() { echo "$*"; echo "stress: $*" >/dev/console; }
i=0
while [ $i -lt "$1" ]; do
  i=$((i + 1)); t=$(now)
  $S -e "$P" >/tmp/stress.out 2>&1
  say "round $i rc=$? took $(since $t) s, strobe processes after: $(strobes | wc -l)"
done
for sig in TERM KILL; do
  t=$(now)
  $S -e "$P" >/tmp/stress.out 2>&1 & p=$!
  sleep 1; kill -$sig $p; wait $p
  say "SIG$sig during attach: rc=$? after $(since $t) s"
done
t=$(now); j=0
while [ -n "$(strobes)" ] && [ $j -lt 300 ]; do sleep 1; j=$((j + 1)); done
say "strobe processes gone after $(since $t) s: left=$(strobes | wc -l)"
say "open bpf fds: $(ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -c 'bpf-prog\|bpf_link')"
t=$(now)
$S -e 'fentry:vfs_read { @ = count(); } interval:s:1 { exit(); }' 2>&1 | grep '^@'
say "final script rc=$? took $(since $t) s"
