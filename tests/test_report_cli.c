/* test_report_cli.c - `skv report DIR`: its failure paths (status, one-line message, no half-written report) and a full report. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "report/gnuplot.h"
#include "report/report.h"
#include "skv.h"

/* ------------------------------------------------------------ helpers */

static char *mkdir_tmp(void)
{
	char *d = strdup("/tmp/skv-report-test-XXXXXX");
	if (!d || !mkdtemp(d)) {
		print_error("%s:%d: mkdtemp failed\n", __FILE__, __LINE__);
		fail();
	}
	return d;
}

static void rm_tmp(char *d)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
	if (system(cmd) != 0)
		print_message("could not remove %s\n", d);
	free(d);
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		print_error("%s:%d: cannot write %s\n", __FILE__, __LINE__, p);
		fail();
	}
}

/* The whole file, or NULL; *len gets its size. */
static char *get(const char *dir, const char *name, size_t *len)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	if (len)
		*len = n;
	return buf;
}

/* Runs the command with its messages captured; returns the status. */
static int report(const char *dir, char **msg)
{
	size_t n;
	FILE *m = open_memstream(msg, &n);
	int st = report_run(dir, m);
	fclose(m);
	return st;
}

/* A temporary file left in dir (a ".tmp" name) means a failure path did not
 * clean up after itself. */
static int has_tmp(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "find '%s' -name '*.tmp' 2>/dev/null | grep -q .", dir);
	return system(cmd) == 0;
}

static void expect_failure(const char *dir, const char *msg_start, const char *file, int line)
{
	char *msg = NULL;
	int st = report(dir, &msg);
	size_t lines = 0;
	for (const char *s = msg; *s; s++)
		lines += *s == '\n';
	char *old = get(dir, "REPORT.md", NULL);
	if (st == SKV_OK || strncmp(msg, msg_start, strlen(msg_start)) != 0 || lines != 1 ||
	    (old && strcmp(old, "old report\n") != 0) || has_tmp(dir)) {
		print_error("%s:%d: status %d, message \"%s\" (%zu lines), REPORT.md \"%s\"; expected a failing status, one line "
			    "starting \"%s\", the old REPORT.md and no temporary file\n",
			    file, line, st, msg, lines, old ? old : "(none)", msg_start);
		fail();
	}
	free(old);
	free(msg);
}
#define EXPECT_FAILURE(dir, msg) expect_failure((dir), (msg), __FILE__, __LINE__)

static const char header[] = "experiment,splits,partial,lse,trial,norm_rel_err,ulp_err\n";

/* A split-count table with an exact power law per partial format: median
 * error c S^a over trials (value / 2, value, 2 value). */
static char *split_count_csv(void)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	fputs(header, f);
	static const struct {
		const char *fmt;
		double c, a;
	} p[] = {{"fp16", 2e-4, 0.5}, {"fp32", 3e-7, 0.25}};
	const double k[] = {1.0, 0.5, 2.0};
	for (size_t i = 0; i < 2; i++)
		for (int e = 0; e <= 6; e++)
			for (int t = 0; t < 3; t++) {
				double S = ldexp(1, e), v = p[i].c * pow(S, p[i].a) * k[t];
				fprintf(f, "split-count,%.0f,%s,fp64,%d,%.17g,%.17g\n", S, p[i].fmt, t, v, v * 1e6);
			}
	fclose(f);
	return buf;
}

/* ------------------------------------------------------------- tests */

static void usage_errors(void **state)
{
	(void)state;
	char *a1[] = {"skv", "report"};
	char *a3[] = {"skv", "report", "x", "y"};
	char *opt[] = {"skv", "report", "--bogus"};
	assert_int_equal(cli_main(2, a1), 2);
	assert_int_equal(cli_main(4, a3), 2);
	assert_int_equal(cli_main(3, opt), 2);
}

static void missing_and_empty_folder(void **state)
{
	(void)state;
	char *d = mkdir_tmp();
	char missing[600];
	snprintf(missing, sizeof missing, "%s/nope", d);
	char start[700];
	snprintf(start, sizeof start, "skv report: %s: No such file or directory", missing);
	EXPECT_FAILURE(missing, start);
	/* A folder with files but no CSV: nothing to report, nothing written. */
	put(d, "notes.txt", "x\n");
	put(d, "REPORT.md", "old report\n");
	snprintf(start, sizeof start, "skv report: %s: no EXPERIMENT.csv file to report on", d);
	EXPECT_FAILURE(d, start);
	rm_tmp(d);
}

/* Each malformed CSV is named with its line; a good CSV beside it is not
 * reported either: REPORT.md keeps its old content. */
static void malformed_csv(void **state)
{
	(void)state;
	static const struct {
		const char *body, *msg;
	} bad[] = {
		{"split-count,1,fp16,fp64,0,1e-3,5\nsplit-count,2,fp16,fp64,0,1e-3\n", "bad.csv:3: 6 fields, the header has 7"},
		{"split-count,1,fp16,fp64,0,1e-3,5\nsplit-count,2,fp16,fp64,0,0x1p-3q,5\n",
		 "bad.csv:3: column 'norm_rel_err': '0x1p-3q' is not an error value (a number >= 0, inf or nan)"},
		{"split-count,1,fp16,fp64,0,\"1e-3,5\n", "bad.csv:2: unterminated quoted field"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *d = mkdir_tmp();
		char *good = split_count_csv();
		put(d, "split-count.csv", good);
		free(good);
		char *text = malloc(strlen(header) + strlen(bad[i].body) + 1);
		strcpy(text, header);
		strcat(text, bad[i].body);
		put(d, "bad.csv", text);
		free(text);
		put(d, "REPORT.md", "old report\n");
		char start[700];
		snprintf(start, sizeof start, "skv report: %s/%s", d, bad[i].msg);
		EXPECT_FAILURE(d, start);
		rm_tmp(d);
	}
	/* A known experiment without the column its chart and findings need. */
	char *d = mkdir_tmp();
	put(d, "split-count.csv", "experiment,partial,trial,norm_rel_err\nsplit-count,fp16,0,1e-3\n");
	put(d, "REPORT.md", "old report\n");
	char start[700];
	snprintf(start, sizeof start, "skv report: %s/split-count.csv:1: missing required column 'splits'", d);
	EXPECT_FAILURE(d, start);
	rm_tmp(d);
}

static void missing_gnuplot(void **state)
{
	(void)state;
	char *d = mkdir_tmp();
	char *good = split_count_csv();
	put(d, "split-count.csv", good);
	free(good);
	put(d, "REPORT.md", "old report\n");
	char *path = strdup(getenv("PATH") ? getenv("PATH") : "");
	setenv("PATH", "/nonexistent-skv-test", 1);
	char *msg = NULL;
	int st = report(d, &msg);
	setenv("PATH", path, 1);
	free(path);
	if (st == SKV_OK || !strstr(msg, "gnuplot not found") || !strstr(msg, "apt-get install gnuplot-nox")) {
		print_error("%s:%d: status %d, message \"%s\"\n", __FILE__, __LINE__, st, msg);
		fail();
	}
	char *old = get(d, "REPORT.md", NULL);
	assert_string_equal(old, "old report\n");
	assert_false(has_tmp(d));
	free(old);
	free(msg);
	rm_tmp(d);
}

static void full_report(void **state)
{
	(void)state;
	char gp[4096];
	if (gnuplot_find(gp, sizeof gp) != SKV_OK) {
		print_message("gnuplot is not installed: the full report is not tested here\n");
		skip();
	}
	char *d = mkdir_tmp();
	char *csv = split_count_csv();
	put(d, "split-count.csv", csv);
	free(csv);
	put(d, "split-count.md", "# split-count\n\n| splits | norm_rel_err median |\n|---:|---:|\n| 1 | 2e-4 |\n");
	put(d, "split-count.meta", "experiment: split-count\nseed: 7\nskv_version: 0.1.0\nmpfr_version: 4.9.9-test\n"
				   "machine: TestOS 1.0 x86_64\nwall_time_s: 1.25\n");
	put(d, "mystery.csv", "experiment,knob,trial,norm_rel_err\nmystery,a,0,1e-5\nmystery,b,0,3e-3\n");
	char *msg = NULL;
	int st = report(d, &msg);
	if (st != 0) {
		print_error("%s:%d: status %d: %s\n", __FILE__, __LINE__, st, msg);
		fail();
	}
	free(msg);
	size_t len;
	char *md = get(d, "REPORT.md", &len);
	assert_non_null(md);
	static const char *const want[] = {
		"| MPFR version | 4.9.9-test |",                 /* from the .meta */
		"| machine | TestOS 1.0 x86_64 |",
		"| [split-count](#split-count) | 7 | 14 | 3 | 42 | 1.25 |",
		"## split-count",
		"![split-count: error of the merged output against the number of KV splits](split-count.png)",
		"a = 0.50 for partial fp16",                      /* computed: exact S^0.5 */
		"a = 0.25 for partial fp32",
		"At S = 64 the median error is 1.6e-3 (partial fp16)", /* 2e-4 * 8 */
		"[table of every point](split-count.md)",         /* the .md table, linked */
		"## mystery",                                      /* unknown: generic section */
		/* the summary, computed: fp16 partials 2e-4 S^0.5 over S = 1 to 64 */
		"## Summary\n\n- **Partials** ([split-count](#split-count)). With the LSE in fp64, the stored partial "
		"outputs give a median normwise error over the split counts of 2e-4 to 1.6e-3 (fp16)",
		"ranges from 1e-5 (knob a) to 3e-3 (knob b)",
		"`gnuplot -c scripts/generic.gp ",
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!strstr(md, want[i])) {
			print_error("%s:%d: REPORT.md lacks \"%s\":\n%s\n", __FILE__, __LINE__, want[i], md);
			fail();
		}
	/* The summary first, split-count (suite order), the unknown experiment,
	 * and what was run at the end; the wide tables stay in their .md. */
	assert_true(strstr(md, "## Summary") < strstr(md, "## split-count"));
	assert_true(strstr(md, "## split-count") < strstr(md, "## mystery"));
	assert_true(strstr(md, "## mystery") < strstr(md, "## What was run"));
	assert_null(strstr(md, "<details>"));
	assert_null(strstr(md, "| 1 | 2e-4 |"));
	static const char *const charts[] = {"split-count.png", "mystery.png", "split-count.svg", "mystery.svg",
					     ".plot/split-count.gp", ".plot/mystery.gp"};
	for (size_t i = 0; i < sizeof charts / sizeof *charts; i++) {
		size_t n;
		char *c = get(d, charts[i], &n);
		int ok = c && n > 100 &&
			 (i < 2 ? memcmp(c, "\x89PNG\r\n\x1a\n", 8) == 0 : i < 4 ? strstr(c, "<svg") != NULL : 1);
		if (!ok) {
			print_error("%s:%d: %s missing or not a chart (%zu bytes)\n", __FILE__, __LINE__, charts[i], c ? n : 0);
			fail();
		}
		free(c);
	}
	assert_false(has_tmp(d));
	/* Written through temporary files, yet with the mode of any new file. */
	mode_t mask = umask(0);
	umask(mask);
	char p[600];
	struct stat sb;
	snprintf(p, sizeof p, "%s/REPORT.md", d);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0666 & ~mask);
	/* Redrawing from the same files rewrites the same page and data. */
	char *data = get(d, ".plot/split-count.gp", NULL);
	msg = NULL;
	assert_int_equal(report(d, &msg), 0);
	free(msg);
	char *md2 = get(d, "REPORT.md", NULL), *data2 = get(d, ".plot/split-count.gp", NULL);
	assert_string_equal(md, md2);
	assert_string_equal(data, data2);
	free(md), free(md2), free(data), free(data2);
	rm_tmp(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(usage_errors),
		cmocka_unit_test(missing_and_empty_folder),
		cmocka_unit_test(malformed_csv),
		cmocka_unit_test(missing_gnuplot),
		cmocka_unit_test(full_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
