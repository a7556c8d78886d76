/* Uprobe target of ustack.case: a call chain with an inlined middle, built with -g -O0 (and
 * frame pointers) so user stacks show file:line and an `[inlined]` frame. ust_leaf is called
 * argv[1] times (default 3), then the program sleeps argv[2] seconds (default 0) and calls it
 * once more (records of a process that has exited by the time they are printed). */
#include <stdlib.h>
#include <unistd.h>

volatile int ust_sink;

__attribute__((noinline)) void ust_leaf(int n)
{
  ust_sink += n;
  __asm__ volatile("" ::: "memory");
}

__attribute__((always_inline)) static inline void ust_middle(int n)
{
  ust_leaf(n);
  ust_sink += 1;
}

__attribute__((noinline)) void ust_outer(int n)
{
  ust_middle(n);
  ust_sink += 2;
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  int pause = argc > 2 ? atoi(argv[2]) : 0;
  for (int i = 0; i < rounds; i++) {
    ust_outer(i);
    usleep(100000);
  }
  if (pause > 0) {
    sleep(pause);
    ust_outer(-1);
  }
  return 0;
}
