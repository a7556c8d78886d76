/* Uprobe target of control.case: f1 and f2 are real calls (noinline, noipa), main calls f1
 * once and f2 twice per round; argv[1] rounds (default 3), then it sleeps argv[2] seconds
 * (default 0: output that symbolizes addresses needs the process alive). Built as a PIE. */
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
volatile int sink;
int g_val = 0x55555555;
__attribute__((noinline, noipa)) int f1(int x) { sink += x; return x + 1; }
__attribute__((noinline, noipa)) int f2(int x) { sink -= x; return x + 2; }
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  for (int i = 0; i < n; i++) { f1(i); f2(i); f2(i); }
  if (argc > 2) sleep(atoi(argv[2]));
  return 0;
}
