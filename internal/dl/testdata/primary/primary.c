/* Primary library of the loader tests. */
int dl_primary_only(void) { return 1; }
int dl_shared(void) { return 1; }

/* Call helper tests: a failing call records its message per thread, as
 * aclGetRecentErrMsg does. */
static __thread const char *dl_msg;

int dl_fail(int code, const char *msg) { dl_msg = msg; return code; }

const char *dl_recent(void) { const char *m = dl_msg; dl_msg = 0; return m; }

static int dl_object;

void *dl_make(int ok) {
	if (!ok) {
		dl_msg = "dl_make: refused";
		return 0;
	}
	return &dl_object;
}

long dl_sum10(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j) {
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
}

int dl_out(unsigned long *a, unsigned long *b, unsigned long *c) {
	*a = 11;
	*b = 22;
	*c = 33;
	return 0;
}
