/* Uprobe target of source_line.case, built with -g -O0. The case attaches to lines by number:
 * keep every line where it is (line numbers in the comments). */
#include <stdlib.h>
#include <unistd.h>
volatile long sink;

__attribute__((noinline, noipa)) int branch(int n)
{                   /* line 8: the entry of branch() */
  if (n == 1) {     /* line 9 */
    sink += 1;      /* line 10: n == 1 */
    return 1;
  } else if (n == 2) { /* line 12: n != 1 */
    return 2;
  }
  sink += n;        /* line 15: n == 3 */
  return 3;
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  for (int i = 0; i < rounds; i++) {
    branch(1);
    branch(2);
    branch(3);
    usleep(10000); /* keeps the process alive while the tracer symbolizes `func` */
  }
  return 0;
}
