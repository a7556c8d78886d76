/* Target of the signed-retval case in numbers.case: returns -120..100 from a real call. */
__attribute__((noinline, noipa)) int strobe_rv_f(int x)
{
	return x;
}

int main(void)
{
	int s = 0;
	for (int x = -120; x <= 100; x++)
		s += strobe_rv_f(x);
	return s == 0;
}
