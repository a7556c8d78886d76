/* Target of the user-memory cases in values.case: a uprobe's pointer arguments and a usdt
 * probe's string argument point into this process's stack, which only probe_read_user
 * reads. `strobe_um_f` must stay a real call with its arguments in registers; its name
 * argument has different bytes after the NUL in each call. */
#include <stdint.h>
#include <string.h>

struct strobe_um {
	int32_t x;
	char name[16];
};

__attribute__((noinline, noipa)) int strobe_um_f(long a, long b, struct strobe_um *p,
						 int32_t *q)
{
	return (int)(a + b) + p->x + *q;
}

/* A SystemTap USDT note (provider strobe_um, probe s, one 8-byte argument), written by
 * hand: the note type 3 layout of sdt.h, with the register the compiler chose. */
#define STROBE_UM_USDT(arg)                                                          \
	__asm__ __volatile__("990: nop\n"                                            \
			     ".pushsection .note.stapsdt, \"\", \"note\"\n"          \
			     ".balign 4\n"                                            \
			     ".4byte 992f-991f, 994f-993f, 3\n"                       \
			     "991: .asciz \"stapsdt\"\n"                              \
			     "992: .balign 4\n"                                       \
			     "993: .8byte 990b\n"                                     \
			     ".8byte _.stapsdt.base\n"                                \
			     ".8byte 0\n"                                             \
			     ".asciz \"strobe_um\"\n"                                 \
			     ".asciz \"s\"\n"                                         \
			     ".asciz \"8@%0\"\n"                                      \
			     "994: .balign 4\n"                                       \
			     ".popsection\n"                                          \
			     ".ifndef _.stapsdt.base\n"                               \
			     ".pushsection .stapsdt.base, \"aG\", \"progbits\", "     \
			     ".stapsdt.base, comdat\n"                                \
			     ".weak _.stapsdt.base\n"                                 \
			     ".hidden _.stapsdt.base\n"                               \
			     "_.stapsdt.base: .space 1\n"                             \
			     ".size _.stapsdt.base, 1\n"                              \
			     ".popsection\n"                                          \
			     ".endif\n"                                               \
			     :                                                        \
			     : "r"(arg))

int main(void)
{
	struct strobe_um s = { .x = 4242 };
	int32_t q = -77;
	char text[32];
	int r = 0;
	strcpy(text, "usdt_text_arg");
	STROBE_UM_USDT(text);
	/* The same name twice, with different bytes after its NUL. */
	memcpy(s.name, "ab\0garbage_one", 15);
	r += strobe_um_f(1, 2, &s, &q);
	memcpy(s.name, "ab\0garbage_two", 15);
	r += strobe_um_f(1, 2, &s, &q);
	return r == 0;
}
