/* Names itself with the bytes argv[1] spells in hex after an `x` ("x" is the empty name,
 * "x6162" is "ab"; prctl PR_SET_NAME: the kernel keeps 15 bytes and a NUL), then calls getpid
 * argv[2] times through syscall(2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || argv[1][0] != 'x')
        return 2;
    char name[64] = {0};
    const char *hex = argv[1] + 1;
    for (size_t i = 0; i < strlen(hex) / 2 && i < sizeof(name) - 1; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return 2;
        name[i] = (char)v;
    }
    prctl(PR_SET_NAME, name, 0, 0, 0);
    long n = atol(argv[2]);
    for (long i = 0; i < n; i++)
        syscall(SYS_getpid);
    return 0;
}
