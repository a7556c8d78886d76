/* Target of speak.case's uprobe cases: a pointer to a pointer to a struct, and a char array
 * that its string fills without a NUL. `strobe_spk_f` must stay a real call. */
#include <string.h>

struct strobe_spk {
	int a;
	char s[5];
};

__attribute__((noinline, noipa)) int strobe_spk_f(struct strobe_spk **pp, struct strobe_spk *p)
{
	return (*pp)->a + p->s[0];
}

int main(void)
{
	struct strobe_spk v = { .a = 123 };
	struct strobe_spk *pv = &v;
	memcpy(v.s, "hello", 5);
	return strobe_spk_f(&pv, &v) == 0;
}
