#!/bin/sh
# Runs an example script from /examples until its probes are attached, runs a workload, stops
# strobe with a signal, prints strobe's output and then checks that no BPF program, link or
# perf event of the run is left in any process (the background detach child included).
# usage: run.sh SIGNAL SECONDS 'WORKLOAD' EXAMPLE.bt [ARGS…]   (strobe from $STROBE)
#   SIGNAL: TERM, INT or KILL; SECONDS: how long the workload runs before the signal.
# Prints `rc=N` (strobe's exit status) and `open=N` (BPF/perf fds left after up to 60 s).
sig=$1 secs=$2 work=$3
shift 3
S=${STROBE:-strobe}
out=/tmp/example.out
: >$out
__STROBE_NOTIFY_PROBES_ATTACHED=1 $S /examples/"$@" >$out 2>&1 &
p=$!
i=0
while ! grep -q '^__STROBE_NOTIFY_PROBES_ATTACHED$' $out && kill -0 $p 2>/dev/null && [ $i -lt 600 ]; do
  sleep 0.2; i=$((i + 1))
done
sh -c "$work" >/tmp/example.work 2>&1 &
w=$!
sleep "$secs"
kill -"$sig" $p
wait $p
echo "rc=$?"
kill $w 2>/dev/null
wait $w 2>/dev/null
grep -v '^__STROBE_NOTIFY_PROBES_ATTACHED$' $out
for i in $(seq 60); do
  n=$(ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -c 'bpf-prog\|bpf_link\|perf_event')
  [ "$n" = 0 ] && break
  sleep 1
done
echo "open=$n"
