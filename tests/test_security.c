/* test_security.c - text from a results folder never runs: hostile CSV values, column and file names reach gnuplot as inert data (D1). */
#include "fsutil.h"

#include <errno.h>

#include "report/report.h"
#include "skv.h"

/*
 * Every vector below would create a file in the sentinel folder if any text
 * of the CSV (a value, a column name, the file name) reached gnuplot as code:
 * inside a double-quoted string (backquote substitution), through eval or a
 * macro, or through a shell. The report must succeed, create nothing, and
 * draw every label as written (checked in the SVG, where gnuplot escapes only
 * '&' and '<').
 */

static char *sentinel;

/* s with '&' and '<' as gnuplot's SVG terminal writes them. */
static char *svg_escaped(const char *s)
{
	char *out = malloc(6 * strlen(s) + 1), *o = out;
	for (; *s; s++) {
		if (*s == '&')
			o += sprintf(o, "&amp;");
		else if (*s == '<')
			o += sprintf(o, "&lt;");
		else
			*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* Runs `skv report dir` from inside the sentinel folder (a command in a
 * file name runs in the current folder) and checks that it worked, that the
 * sentinel folder is still empty and that the SVG of `svg` shows each label. */
static void report_inert(const char *dir, const char *svg, const char *const *labels, size_t nlabels,
			 const char *file, int line)
{
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd) || chdir(sentinel) != 0)
		fail_msg("%s:%d: chdir: %s", file, line, strerror(errno));
	char *msg = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&msg, &n);
	int st = report_run(dir, m);
	fclose(m);
	if (chdir(cwd) != 0)
		fail_msg("%s:%d: chdir back: %s", file, line, strerror(errno));
	if (st != 0)
		fail_msg("%s:%d: skv report %s: status %d: %s", file, line, dir, st, msg);
	size_t made = fs_count(sentinel, "");
	if (made)
		fail_msg("%s:%d: %zu file(s) appeared in the sentinel folder %s: text from the CSV ran", file, line,
			 made, sentinel);
	char *text = fs_get(dir, svg, NULL);
	if (!text)
		fail_msg("%s:%d: no %s/%s", file, line, dir, svg);
	for (size_t i = 0; i < nlabels; i++) {
		char *want = svg_escaped(labels[i]);
		if (!strstr(text, want))
			fail_msg("%s:%d: %s/%s does not show the label '%s' as written", file, line, dir, svg, labels[i]);
		free(want);
	}
	free(text);
	free(msg);
}
#define REPORT_INERT(dir, svg, labels) \
	report_inert((dir), (svg), (labels), sizeof(labels) / sizeof *(labels), __FILE__, __LINE__)

/* A CSV of the generic chart: one varying parameter column `col` with the
 * given values (already CSV-quoted where they need it). No experiment
 * column: the file name alone names the experiment. */
static void generic_csv(const char *dir, const char *name, const char *col, const char *const *vals, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fprintf(f, "%s,trial,norm_rel_err\n", col);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s,0,0.%zu\n", vals[i], i + 1);
	fclose(f);
	fs_put(dir, name, buf, len);
	free(buf);
}

static void sentinel_cmd(char *buf, size_t n, const char *fmt, const char *tag)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", sentinel, tag);
	snprintf(buf, n, fmt, p);
}

/* inject.sh (a) and (b), and variants: values of a varying parameter. */
static void test_values(void **state)
{
	(void)state;
	char *dir = fs_tmpdir("inject");
	char v[8][4200];
	sentinel_cmd(v[0], sizeof v[0], "`touch %s`", "a");              /* backquotes */
	sentinel_cmd(v[1], sizeof v[1], "a'touch %s'b", "b");            /* quotes once turned into backquotes */
	sentinel_cmd(v[2], sizeof v[2], "x'.system('touch %s').'y", "c"); /* breaking out of a quoted string */
	sentinel_cmd(v[3], sizeof v[3], "system(\"\"touch %s\"\")", "d"); /* CSV-quoted below */
	sentinel_cmd(v[4], sizeof v[4], "$(touch %s)", "e");               /* shell syntax */
	sentinel_cmd(v[5], sizeof v[5], "p; system('touch %s'); q", "f");  /* a command separator */
	snprintf(v[6], sizeof v[6], "@set_category_tics @panel_setup");   /* macros */
	snprintf(v[7], sizeof v[7], "two\nlines");                        /* a line break (CSV-quoted) */
	char q3[4300], q7[4300];
	snprintf(q3, sizeof q3, "\"%s\"", v[3]);
	snprintf(q7, sizeof q7, "\"%s\"", v[7]);
	const char *vals[] = {v[0], v[1], v[2], q3, v[4], v[5], v[6], q7};
	generic_csv(dir, "evil.csv", "x", vals, 8);
	char d3[4300];
	snprintf(d3, sizeof d3, "system(\"touch %s/d\")", sentinel); /* as the CSV reader unquotes it */
	const char *labels[] = {v[0], v[1], v[2], d3, v[4], v[5], v[6], "two", "lines"};
	REPORT_INERT(dir, "evil.svg", labels);
	fs_rmtree(dir);
}

/* inject.sh (c): a fixed parameter of a known experiment, and a column name. */
static void test_fixed_and_column(void **state)
{
	(void)state;
	char *dir = fs_tmpdir("inject");
	char dist[4200], col[4200], csv[20000];
	sentinel_cmd(dist, sizeof dist, "`touch %s`", "fixed");
	sentinel_cmd(col, sizeof col, "k`touch %s`", "column");
	int k = snprintf(csv, sizeof csv, "experiment,splits,lse,dist,%s,trial,norm_rel_err\n", col);
	for (int s = 1; s <= 4; s *= 2)
		for (int l = 0; l < 2; l++)
			k += snprintf(csv + k, sizeof csv - (size_t)k, "split-count,%d,%s,%s,1,0,%g\n", s,
				      l ? "fp16" : "fp32", dist, 1e-6 * s);
	fs_put(dir, "split-count.csv", csv, (size_t)-1);
	const char *labels[] = {dist};
	REPORT_INERT(dir, "split-count.svg", labels);
	fs_rmtree(dir);
}

/* inject.sh (d): the file name is the experiment name. */
static void test_file_name(void **state)
{
	(void)state;
	char *dir = fs_tmpdir("inject");
	const char *vals[] = {"a", "b"};
	generic_csv(dir, "z`touch name-PWNED`'q'.csv", "x", vals, 2);
	const char *labels[] = {"z`touch name-PWNED`'q'"};
	REPORT_INERT(dir, "z`touch name-PWNED`'q'.svg", labels);
	fs_rmtree(dir);
}

static int setup(void **state)
{
	(void)state;
	sentinel = fs_tmpdir("sentinel");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rmtree(sentinel);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_fixed_and_column),
		cmocka_unit_test(test_file_name),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
