/* Target of the array cases in numbers.case: a struct with an int array, one with an array
 * of pointers, and one with a zero-length (flexible) array member followed by another
 * member, all on the stack of main and passed to a call that stays a real call. */
struct strobe_arr_a {
	int x[4];
};

struct strobe_arr_c {
	int *z[4];
};

struct strobe_arr_d {
	int x;
	int y[0];
	int z;
};

__attribute__((noinline, noipa)) int strobe_arr_f(struct strobe_arr_a *a, struct strobe_arr_c *c,
						  struct strobe_arr_d *d)
{
	return a->x[0] + *c->z[0] + d->x;
}

int main(void)
{
	struct strobe_arr_a a = { { 1, 2, 3, 4 } };
	struct strobe_arr_c c = { { &a.x[0], &a.x[1], &a.x[2], &a.x[3] } };
	struct strobe_arr_d d = { .x = 5, .z = 7 };
	return strobe_arr_f(&a, &c, &d) == 0;
}
