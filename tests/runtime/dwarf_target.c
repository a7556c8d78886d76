/* Uprobe target of dwarf.case, built with -g: functions whose parameters the tracer reads from
 * DWARF (ints, chars, pointers, structs with char/int arrays, nested structs, enums, typedefs,
 * strings). main calls each once per round; argv[1] rounds (default 3). */
#include <stdlib.h>
#include <string.h>

enum color { RED = 1, GREEN = 2, BLUE = 4 };
typedef unsigned long long counter_t;

struct point {
  short x;
  short y;
};

struct rec {
  int id;
  char name[12];
  int vals[3];
  struct point at;
  struct rec *next;
  enum color color;
  unsigned int flag : 3;
  unsigned int mode : 5;
};

volatile long sink;

__attribute__((noinline, noipa)) int dw_scalars(int a, char c, long neg, unsigned char u,
                                                 counter_t big)
{
  sink += a + c + neg + u + (long)big;
  return a * 2;
}

__attribute__((noinline, noipa)) struct rec *dw_rec(struct rec *r, const char *label, int *p)
{
  sink += r->id + *p + (long)strlen(label);
  return r->next;
}

__attribute__((noinline, noipa)) enum color dw_enum(enum color c, struct point *pt)
{
  sink += c + pt->x;
  return c == RED ? GREEN : BLUE;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 3;
  for (int i = 0; i < n; i++) {
    struct rec tail = { .id = 7, .name = "tail", .vals = { 7, 8, 9 }, .at = { 1, 2 } };
    struct rec head = { .id = 42, .name = "head-rec", .vals = { 10, 20, 30 },
                        .at = { -3, 4 }, .next = &tail, .color = BLUE, .flag = 5, .mode = 17 };
    int v = 1000 + i;
    char label[16] = "a label";
    dw_scalars(-5, 'q', -123456789012L, 200, 1ULL << 40);
    dw_rec(&head, label, &v);
    dw_enum(GREEN, &head.at);
  }
  return 0;
}
