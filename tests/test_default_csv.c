/* test_default_csv.c - the default suite run now writes every CSV of the committed report byte for byte (an optimisation may not move one). */
#include "procutil.h"

/* The folder above build/ (build/skv's parent's parent): the source tree. */
static void tree_root(char *root, size_t n)
{
	snprintf(root, n, "%s", proc_skv());
	for (int up = 0; up < 2; up++)
		*strrchr(root, '/') = '\0';
}

/* Line number (from 1) and offset of the first byte where a and b differ. */
static size_t first_diff(const char *a, size_t na, const char *b, size_t nb, size_t *line)
{
	size_t i = 0;
	*line = 1;
	while (i < na && i < nb && a[i] == b[i])
		*line += a[i++] == '\n';
	return i;
}

/* The line of text that holds offset i, as "%.*s" arguments. */
static int line_len(const char *t, size_t n, size_t i, const char **start)
{
	size_t s = i < n ? i : n;
	while (s > 0 && t[s - 1] != '\n')
		s--;
	size_t e = s;
	while (e < n && t[e] != '\n')
		e++;
	*start = t + s;
	return (int)(e - s);
}

/* Every experiment of experiments/default.suite, run as `make report` runs
 * it (without the charts, which do not touch the CSVs), against
 * reports/default/NAME.csv. The suite's own defaults, thread count
 * included: the bytes do not depend on it (ARCHITECTURE.md). */
static void test_default_suite_csv(void **state)
{
	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	/* The whole default suite under ASan takes most of CI's budget; the
	 * bytes are checked by make check's plain build, and the sanitizers
	 * see the same code on the smaller runs of the other tests. */
	skip();
#endif
	char root[4200], suite[4300], committed[4300], arg[4500];
	tree_root(root, sizeof root);
	snprintf(suite, sizeof suite, "%s/experiments/default.suite", root);
	snprintf(committed, sizeof committed, "%s/reports/default", root);
	char *tmp = fs_tmpdir("default-csv"), out[4400];
	fs_path(out, sizeof out, tmp, "run");
	snprintf(arg, sizeof arg, "--out=%s", out);
	char *argv[] = {"skv", "suite", suite, arg, NULL}, *err = NULL;
	const int st = proc_run(argv, &err, NULL);
	if (st != 0)
		fail_msg("%s:%d: skv suite %s exited with %d: %s", __FILE__, __LINE__, suite, st, err);
	free(err);

	char *text = fs_get("/", suite + 1, NULL), name[64], file[80];
	assert_non_null(text);
	size_t checked = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		if (sscanf(l, "run %63s", name) != 1)
			continue;
		snprintf(file, sizeof file, "%s.csv", name);
		size_t na = 0, nb = 0, line;
		char *a = fs_get(committed, file, &na), *b = fs_get(out, file, &nb);
		if (!a || !b)
			fail_msg("%s:%d: %s missing from %s", __FILE__, __LINE__, file, a ? out : committed);
		const size_t at = first_diff(a, na, b, nb, &line);
		if (at < na || at < nb) {
			const char *sa, *sb;
			const int la = line_len(a, na, at, &sa), lb = line_len(b, nb, at, &sb);
			fail_msg("%s:%d: %s differs from reports/default at byte %zu, line %zu (%zu vs %zu bytes):\n"
				 "  committed: %.*s\n  now:       %.*s",
				 __FILE__, __LINE__, file, at, line, na, nb, la, sa, lb, sb);
		}
		free(a);
		free(b);
		checked++;
	}
	free(text);
	assert_true(checked >= 8); /* the eight experiments of the suite at least */
	fs_rmtree(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_suite_csv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
