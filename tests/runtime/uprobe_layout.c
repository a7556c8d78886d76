/* Uprobe target of control.case with a function of known instruction layout (x86-64):
 * f_layout is endbr64 (+0, 4 bytes), movabs $imm64,%rax (+4, 10 bytes), mov %edi,%eax
 * (+14, 2 bytes), ret (+16): +4, +14 and +16 start instructions, +1..+3, +5..+13 and +15 do
 * not. main calls it argv[1] times (default 3). */
#include <stdlib.h>
__asm__(".text\n"
        ".globl f_layout\n"
        ".type f_layout, @function\n"
        "f_layout:\n"
        ".byte 0xf3, 0x0f, 0x1e, 0xfa\n"
        "movabsq $0x1122334455667788, %rax\n"
        "movl %edi, %eax\n"
        "ret\n"
        ".size f_layout, .-f_layout\n");
int f_layout(int x);
volatile int sink;
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  for (int i = 0; i < n; i++) sink += f_layout(i);
  return 0;
}
