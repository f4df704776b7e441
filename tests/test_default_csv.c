/* test_default_csv.c - the default suite run now writes every CSV of the committed report byte for byte (an optimisation may not move one). */
#include "procutil.h"

/* The experiments of the suite newer than reports/default (none once the
 * report is regenerated). */
static int newer_than_report(const char *name)
{
	return strcmp(name, "tensor-cores") == 0 || strcmp(name, "tensor-cores-fp8") == 0;
}

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

/* Parameters added to the table after reports/default was generated, with
 * the value that reproduces every committed row (the arithmetic the rows
 * were computed with). A committed CSV without such a column is compared
 * with the fresh one less that column, and only when every fresh row holds
 * that value: so a new parameter moves the bytes by its column alone, and
 * once the report is regenerated with the column the comparison is whole. */
static const struct {
	const char *col, *value;
} added[] = {
	{"gpu", "ieee"}, /* issue 14: IEEE arithmetic, as before tensor cores */
};

/* Field index of column col in the header line h (up to its newline), -1
 * when absent. */
static int column_of(const char *h, const char *col)
{
	const size_t n = strlen(col);
	int i = 0;
	for (const char *f = h;; i++) {
		const char *e = f + strcspn(f, ",\n");
		if ((size_t)(e - f) == n && strncmp(f, col, n) == 0)
			return i;
		if (*e != ',')
			return -1;
		f = e + 1;
	}
}

/* Removes field k from every line of the CSV t (n bytes, in place), after
 * checking it reads value on every row: the new length, or 0 (with the
 * failure) when a row holds another value. */
static size_t drop_column(char *t, size_t n, int k, const char *value, const char *file)
{
	size_t w = 0, line = 1;
	for (size_t r = 0; r < n; line++) {
		const size_t end = r + strcspn(t + r, "\n");
		size_t f = r;
		for (int i = 0; i < k; i++)
			f += strcspn(t + f, ",\n") + 1;
		const size_t fe = f + strcspn(t + f, ",\n");
		if (line > 1 && (fe - f != strlen(value) || strncmp(t + f, value, fe - f) != 0))
			fail_msg("%s:%d: %s line %zu: column %d reads %.*s, not %s (the committed rows' arithmetic)",
				 __FILE__, __LINE__, file, line, k, (int)(fe - f), t + f, value);
		/* copy the line but the field and the comma after it */
		const size_t w0 = w;
		memmove(t + w, t + r, f - r);
		w += f - r;
		const size_t rest = fe < end ? fe + 1 : fe;
		if (fe == end && w > w0)
			w--; /* a last field takes the comma before it */
		memmove(t + w, t + rest, end - rest + (end < n));
		w += end - rest + (end < n);
		r = end + 1;
	}
	return w;
}

/* The fresh CSV b less the columns of `added` the committed header a lacks. */
static void drop_added(const char *a, char *b, size_t *nb, const char *file)
{
	for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) {
		const int k = column_of(b, added[i].col);
		if (k >= 0 && column_of(a, added[i].col) < 0) {
			*nb = drop_column(b, *nb, k, added[i].value, file);
			printf("# %s: compared without its %s column (all %s; reports/default predates it)\n", file,
			       added[i].col, added[i].value);
		}
	}
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
		if (!b)
			fail_msg("%s:%d: %s missing from %s", __FILE__, __LINE__, file, out);
		if (!a && newer_than_report(name)) {
			/* an experiment newer than the committed report: its rows are
			 * checked where it is tested; the lead's regeneration adds it */
			printf("# %s: not in reports/default yet (regenerate the report)\n", file);
			free(b);
			continue;
		}
		if (!a)
			fail_msg("%s:%d: %s missing from %s", __FILE__, __LINE__, file, committed);
		drop_added(a, b, &nb, file);
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
