/* C++ uprobe target of cpp.case: an overloaded member function and a namespaced free function,
 * real calls (noinline, noipa) under mangled names. Per round (argv[1], default 3): add(int)
 * once, add(int, int) twice, square once; then it sleeps argv[2] seconds (default 0: output
 * that symbolizes addresses needs the process alive). */
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace strobe_cpp {
struct Counter {
  long total = 0;
  __attribute__((noinline, noipa)) long add(int n);
  __attribute__((noinline, noipa)) long add(int a, int b);
};
long Counter::add(int n) { total += n; return total; }
long Counter::add(int a, int b) { total += a + b; return total; }
__attribute__((noinline, noipa)) long square(long x) { return x * x; }
}  // namespace strobe_cpp

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  strobe_cpp::Counter c;
  long s = 0;
  for (int i = 0; i < n; i++) {
    c.add(i);
    c.add(i, 1);
    c.add(1, i);
    s += strobe_cpp::square(i);
  }
  printf("%ld %ld\n", c.total, s);
  if (argc > 2) sleep(atoi(argv[2]));
  return 0;
}
