#!/bin/sh
# Runs script A to its end, then script B at once, while A's background detach child is still
# closing A's links; prints how long each took and whether A's child was still detaching when
# B started. While B runs longer than 10 s, dumps the state of every strobe process (state,
# wchan, kernel stacks of each thread, open BPF fds) to the console every 10 s, so a hang
# leaves evidence in the serial log even if the guest never recovers.
# usage: race.sh PROGRAM_A PROGRAM_B   (strobe from $STROBE)
S=${STROBE:-strobe}
now() { cut -d' ' -f1 /proc/uptime; }
strobes() { for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = strobe ] && echo "${p#/proc/}"; done; }
dump() {
  echo "== $(now) s: strobe processes"
  for p in $(strobes); do
    echo "pid $p: $(cut -d' ' -f3 /proc/$p/stat) wchan=$(cat /proc/$p/wchan 2>/dev/null) bpf fds=$(ls -l /proc/$p/fd 2>/dev/null | grep -c 'bpf')"
    for t in /proc/$p/task/*; do echo " task ${t##*/}:"; sed 's/^/   /' $t/stack 2>/dev/null; done
  done
}
t0=$(now)
$S -e "$1" >/tmp/race-a.out 2>&1
echo "A rc=$? took $(awk -v a=$t0 -v b=$(now) 'BEGIN{print b-a}') s" | tee /dev/console
cat /tmp/race-a.out | head -3
echo "detaching processes when B starts: $(strobes | wc -l)"
t1=$(now)
$S -e "$2" >/tmp/race-b.out 2>&1 &
b=$!
i=0
while kill -0 $b 2>/dev/null; do
  sleep 1; i=$((i + 1))
  [ $((i % 10)) = 0 ] && dump | tee /dev/console
done
wait $b
echo "B rc=$? took $(awk -v a=$t1 -v b=$(now) 'BEGIN{print b-a}') s" | tee /dev/console
cat /tmp/race-b.out
# Wait for both detach children: every link closed.
j=0
while [ -n "$(strobes)" ] && [ $j -lt 120 ]; do sleep 1; j=$((j + 1)); done
echo "all detached after $(awk -v a=$t1 -v b=$(now) 'BEGIN{print b-a}') s" >/dev/console
echo "all detached after $(awk -v a=$t1 -v b=$(now) 'BEGIN{print b-a}') s; strobe processes left: $(strobes | wc -l)"
