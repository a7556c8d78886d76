/* Target of utargets.case: which files a uprobe/usdt attach point resolves to. Calls
 * strobe_ut_f every 10 ms until killed (or argv[1] times), with a USDT probe next to each
 * call: strobe_ut:tick (two sites when built with -O0) in this program and, built with -DUT_LIB as a shared library,
 * strobe_utlib:lib_tick in strobe_ut_lib_tick(), which the program calls too when linked
 * against it (-DUT_USE_LIB). The notes are written by hand (sdt.h's type 3 layout). */
#include <stdlib.h>
#include <unistd.h>

#define UT_USDT(prov, name)                                                          \
	__asm__ __volatile__("990: nop\n"                                            \
			     ".pushsection .note.stapsdt, \"\", \"note\"\n"          \
			     ".balign 4\n"                                            \
			     ".4byte 992f-991f, 994f-993f, 3\n"                       \
			     "991: .asciz \"stapsdt\"\n"                              \
			     "992: .balign 4\n"                                       \
			     "993: .8byte 990b\n"                                     \
			     ".8byte _.stapsdt.base\n"                                \
			     ".8byte 0\n"                                             \
			     ".asciz \"" prov "\"\n"                                  \
			     ".asciz \"" name "\"\n"                                  \
			     ".asciz \"\"\n"                                          \
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
			     ".endif\n")

#ifdef UT_LIB
__attribute__((noinline, noipa)) void strobe_ut_lib_tick(void) { UT_USDT("strobe_utlib", "lib_tick"); }
#else
#ifdef UT_USE_LIB
void strobe_ut_lib_tick(void);
#endif
volatile int sink;
__attribute__((noinline, noipa)) int strobe_ut_f(int x) { sink += x; return x + 1; }
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : -1;
	for (long i = 0; n < 0 || i < n; i++) {
		strobe_ut_f((int)i);
		/* Two sites of one probe. */
		if (i % 2)
			UT_USDT("strobe_ut", "tick");
		else
			UT_USDT("strobe_ut", "tick");
#ifdef UT_USE_LIB
		strobe_ut_lib_tick();
#endif
		usleep(10000);
	}
	return 0;
}
#endif
