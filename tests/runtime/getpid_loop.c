/* Calls getpid N times (argv[1]) through syscall(2), so every call reaches the kernel. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 0; i < n; i++)
        syscall(SYS_getpid);
    return 0;
}
