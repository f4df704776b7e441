/* test_report_repro.c - `make report` reproduces its CSV files byte for byte: one experiment at reduced size, run twice by build/skv. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* build/skv, found from this binary (build/tests/test_report_repro); make
 * check builds it before running the tests. */
static int find_skv(char *buf, size_t n)
{
	char exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (k <= 0)
		return 0;
	exe[k] = '\0';
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (!slash)
			return 0;
		*slash = '\0';
	}
	int w = snprintf(buf, n, "%s/skv", exe);
	return w > 0 && (size_t)w < n && access(buf, X_OK) == 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* Runs split-count as the default suite does, at a size that takes a
 * fraction of a second (every format, three split counts, two trials), into
 * dir; the same thread count as the report would use (the OpenMP default). */
static void run_small(const char *skv, const char *dir)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "'%s' run split-count --ctx=512 --head-dim=16 --splits=1,8,64 --trials=2 --out='%s' 2>/dev/null", skv,
		 dir);
	int st = system(cmd);
	if (st != 0) {
		print_error("%s:%d: `%s` exited with status %d\n", __FILE__, __LINE__, cmd, st);
		fail();
	}
}

static void csv_twice_identical(void **state)
{
	(void)state;
	char skv[4096];
	if (!find_skv(skv, sizeof skv)) {
		print_message("build/skv not found next to this test: run it through make check\n");
		skip();
	}
	char d1[] = "/tmp/skv-repro-1-XXXXXX", d2[] = "/tmp/skv-repro-2-XXXXXX";
	assert_non_null(mkdtemp(d1));
	assert_non_null(mkdtemp(d2));
	run_small(skv, d1);
	run_small(skv, d2);
	static const char *const files[] = {"split-count.csv", "split-count.md"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char p1[4200], p2[4200];
		snprintf(p1, sizeof p1, "%s/%s", d1, files[i]);
		snprintf(p2, sizeof p2, "%s/%s", d2, files[i]);
		size_t n1 = 0, n2 = 0;
		char *a = slurp(p1, &n1), *b = slurp(p2, &n2);
		if (!a || !b || n1 != n2 || memcmp(a, b, n1) != 0 || n1 < 100) {
			size_t at = 0;
			while (a && b && at < n1 && at < n2 && a[at] == b[at])
				at++;
			print_error("%s:%d: %s differs between two runs (%zu and %zu bytes, first difference at byte %zu)\n",
				    __FILE__, __LINE__, files[i], n1, n2, at);
			fail();
		}
		free(a);
		free(b);
	}
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", d1, d2);
	if (system(cmd) != 0)
		print_message("could not remove %s and %s\n", d1, d2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(csv_twice_identical),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
