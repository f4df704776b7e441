/* test_report_findings.c - statistics, grouping and each findings computation on synthetic tables with known answers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/findings.h"
#include "results/groups.h"
#include "results/labels.h"
#include "results/results.h"
#include "skv.h"
#include "core/stats.h"
#include "catalog/catalog.h"
#include "catalog/narrate.h"

/* |got - want| <= tol, or fail with both in hex so the case replays. */
static void near(double got, double want, double tol, const char *what, const char *file, int line)
{
	if (!(fabs(got - want) <= tol) && !(got == want)) {
		print_error("%s:%d: %s = %a (%.17g), expected %a (%.17g) within %a\n", file, line, what, got, got, want,
			    want, tol);
		fail();
	}
}
#define NEAR(got, want, tol) near((got), (want), (tol), #got, __FILE__, __LINE__)

/* A results table from CSV text held in a memory stream. */
static results table(const char *text, const char *name)
{
	csv_table t;
	results r;
	message err = {NULL};
	if (csv_parse(&t, text, strlen(text), "t.csv", &err) != SKV_OK ||
	    results_from_csv(&r, &t, name, NULL, 0, &err) != SKV_OK) {
		print_error("%s:%d: synthetic table rejected: %s\n", __FILE__, __LINE__, msg_text(&err));
		fail();
	}
	return r;
}

/* The text built by printf into a growing buffer. */
typedef struct {
	char *buf;
	size_t len;
	FILE *f;
} text;

static void text_open(text *t) { t->f = open_memstream(&t->buf, &t->len); }
static char *text_close(text *t)
{
	fclose(t->f);
	return t->buf;
}

static void contains(const char *hay, const char *needle, const char *file, int line)
{
	if (!strstr(hay, needle)) {
		print_error("%s:%d: \"%s\" not found in:\n%s\n", file, line, needle, hay);
		fail();
	}
}
#define CONTAINS(hay, needle) contains((hay), (needle), __FILE__, __LINE__)

/* ------------------------------------------------------------ stats */

static void quantiles(void **state)
{
	(void)state;
	const double x[] = {1, 2, 3, 4};
	double q;
	/* type 7: h = (n - 1) p; 0.25 -> h = 0.75 -> 1.75 */
	assert_int_equal(stats_quantile(&q, x, 4, 0.25), SKV_OK);
	NEAR(q, 1.75, 0);
	assert_int_equal(stats_quantile(&q, x, 4, 0.5), SKV_OK);
	NEAR(q, 2.5, 0);
	assert_int_equal(stats_quantile(&q, x, 4, 1), SKV_OK);
	NEAR(q, 4, 0);
	assert_int_equal(stats_quantile(&q, x, 1, 0.5), SKV_OK);
	NEAR(q, 1, 0);
	const double inf[] = {1, INFINITY, INFINITY};
	assert_int_equal(stats_quantile(&q, inf, 3, 0.75), SKV_OK);
	assert_true(q == INFINITY); /* never inf - inf */
	q = 7;
	assert_int_equal(stats_quantile(&q, x, 0, 0.5), SKV_EINVAL);
	assert_int_equal(stats_quantile(&q, x, 4, 1.5), SKV_EINVAL);
	assert_int_equal(stats_quantile(&q, x, 4, NAN), SKV_EINVAL);
	NEAR(q, 7, 0);

	stat_summary s;
	const double v[] = {3, NAN, 1, 2, 5};
	assert_int_equal(stats_compute(&s, v, 5), SKV_OK);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.nnan, 1);
	NEAR(s.median, 2.5, 0);
	NEAR(s.min, 1, 0);
	NEAR(s.max, 5, 0);
	const double all[] = {NAN, NAN};
	assert_int_equal(stats_compute(&s, all, 2), SKV_OK);
	assert_true(isnan(s.median) && isnan(s.min) && s.nnan == 2);
}

/* An exact power law y = c x^a gives a back to rounding (the logs are
 * correctly rounded to within an ulp, so the slope is within a few ulps
 * of log magnitudes near 40: 1e-13 is generous), whatever c. */
static void loglog_slope(void **state)
{
	(void)state;
	const double a[] = {0.5, -0.25, 1, 0, 2.75};
	const double c[] = {3e-7, 2, 1e-300, 5e-3, 1e-12};
	double x[11], y[11];
	for (size_t k = 0; k < sizeof a / sizeof *a; k++) {
		for (size_t i = 0; i < 11; i++) {
			x[i] = ldexp(1, (int)i); /* 1, 2, ..., 1024 */
			y[i] = c[k] * pow(x[i], a[k]);
		}
		double slope, icpt;
		size_t used;
		assert_int_equal(stats_fit_loglog(&slope, &icpt, &used, x, y, 11), SKV_OK);
		assert_int_equal(used, 11);
		NEAR(slope, a[k], 1e-13);
		NEAR(icpt, log(c[k]), 1e-10 * fabs(log(c[k])) + 1e-12);
	}
	/* Points a log axis cannot hold are left out, not fitted. */
	for (size_t i = 0; i < 6; i++) {
		x[i] = i + 1.0;
		y[i] = 4 * x[i] * x[i];
	}
	y[1] = 0;
	y[3] = INFINITY;
	x[4] = -1;
	double slope = 0, icpt = 0;
	size_t used = 0;
	assert_int_equal(stats_fit_loglog(&slope, &icpt, &used, x, y, 6), SKV_OK);
	assert_int_equal(used, 3);
	NEAR(slope, 2, 1e-13);
	/* Fewer than two points, or one abscissa: no slope, outputs untouched. */
	slope = 9;
	assert_int_equal(stats_fit_loglog(&slope, &icpt, &used, x, y, 1), SKV_EINVAL);
	const double same[] = {4, 4, 4}, ys[] = {1, 2, 3};
	assert_int_equal(stats_fit_loglog(&slope, &icpt, &used, same, ys, 3), SKV_EINVAL);
	NEAR(slope, 9, 0);
}

static void threshold_crossing(void **state)
{
	(void)state;
	const double x[] = {1000, 0, 100, 10, 10000};
	const double y[] = {0.5, 1e-5, 2e-3, 1e-3, 3};
	size_t i = 99;
	assert_int_equal(stats_first_above(&i, x, y, 5, 1e-3), SKV_OK);
	assert_int_equal(i, 2); /* x = 100; 1e-3 at x = 10 is not above */
	assert_int_equal(stats_first_above(&i, x, y, 5, 10), SKV_OK);
	assert_int_equal(i, 5); /* none */
	const double yn[] = {0.5, 1e-5, 2e-3, NAN, 3};
	assert_int_equal(stats_first_above(&i, x, yn, 5, 1e-3), SKV_OK);
	assert_int_equal(i, 3); /* a NaN error counts as above */
	const double xn[] = {1, NAN};
	assert_int_equal(stats_first_above(&i, xn, y, 2, 1), SKV_EINVAL);
}

static void number_labels(void **state)
{
	(void)state;
	static const struct {
		double x;
		int digits;
		const char *want;
	} c[] = {
		{1.234e-7, 2, "1.2e-7"}, {0.0017, 2, "1.7e-3"}, {0.14, 2, "0.14"}, {1024, 2, "1024"},
		{1.23e16, 2, "1.2e16"}, {2e-4, 2, "2e-4"}, {0.5, 3, "0.5"}, {10000, 17, "10000"},
		{0, 2, "0"}, {INFINITY, 2, "inf"}, {NAN, 2, "NaN"}, {-3.25, 2, "-3.2"},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		char buf[32];
		label_number(buf, sizeof buf, c[i].x, c[i].digits);
		if (strcmp(buf, c[i].want) != 0) {
			print_error("%s:%d: label_number(%a, %d) = \"%s\", expected \"%s\"\n", __FILE__, __LINE__,
				    c[i].x, c[i].digits, buf, c[i].want);
			fail();
		}
	}
}

/* ---------------------------------------------------------- results */

static void results_and_errors(void **state)
{
	(void)state;
	results r = table("experiment,splits,trial,norm_rel_err\n"
			      "e,4,0,3\n"
			      "e,2,0,1\n"
			      "e,4,1,5\n"
			      "e,2,1,nan\n"
			      "e,4,2,4\n",
			      "e");
	assert_int_equal(r.npoints, 2);
	/* points in order of first appearance: splits 4 first */
	assert_string_equal(results_get(&r, 0, "splits"), "4");
	size_t m;
	assert_int_equal(results_metric(&r, "norm_rel_err", &m), SKV_OK);
	NEAR(results_stat(&r, 0, m)->median, 4, 0);
	assert_int_equal(results_stat(&r, 0, m)->n, 3);
	assert_int_equal(results_stat(&r, 1, m)->nnan, 1);
	NEAR(results_stat(&r, 1, m)->median, 1, 0);
	assert_true(results_varies(&r, "splits"));
	assert_false(results_varies(&r, "experiment"));
	results_free(&r);

	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"splits,norm_rel_err\n1,2\n", "t.csv:1: missing required column 'trial'"},
		{"splits,trial\n1,0\n", "t.csv:1: missing required column 'norm_rel_err'"},
		{"splits,trial,norm_rel_err\n", "t.csv:1: no data rows"},
		{"splits,trial,norm_rel_err\n1,0,1\n1,1,abc\n", "t.csv:3: column 'norm_rel_err': 'abc' is not an error value (a number >= 0, inf or nan)"},
		{"splits,trial,norm_rel_err\n1,-1,1\n", "t.csv:2: column 'trial': '-1' is not a nonnegative integer"},
		{"splits,trial,norm_rel_err,ulp_err\n1,0,1,\n", "t.csv:2: column 'ulp_err': '' is not an error value (a number >= 0, inf or nan)"},
		{"splits,trial,norm_rel_err\n1,0,1\n2,0,1\n1,0,2\n", "t.csv:4: trial 0 repeats the parameters and trial of line 2"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		csv_table t;
		message err = {NULL};
		assert_int_equal(csv_parse(&t, bad[i].text, strlen(bad[i].text), "t.csv", &err), SKV_OK);
		int rc = results_from_csv(&r, &t, "e", NULL, 0, &err);
		if (rc != SKV_EINVAL || strncmp(msg_text(&err), bad[i].msg, strlen(bad[i].msg)) != 0) {
			print_error("%s:%d: case %zu: status %d, message \"%s\", expected \"%s\"\n", __FILE__, __LINE__, i,
				    rc, msg_text(&err), bad[i].msg);
			fail();
		}
		msg_free(&err);
	}
	/* a column the caller requires */
	csv_table t;
	message err = {NULL};
	const char *text = "trial,norm_rel_err\n0,1\n";
	const char *need[] = {"splits"};
	assert_int_equal(csv_parse(&t, text, strlen(text), "t.csv", &err), SKV_OK);
	assert_int_equal(results_from_csv(&r, &t, "e", need, 1, &err), SKV_EINVAL);
	assert_string_equal(msg_text(&err), "t.csv:1: missing required column 'splits'");
	msg_free(&err);
}

/* ------------------------------------------------------- split-count */

/* Writes rows whose median over three trials (value / 2, value, 2 value)
 * is exactly `value`. */
static void rows3(FILE *f, const char *prefix, double value)
{
	const double k[] = {1.0, 0.5, 2.0};
	for (int t = 0; t < 3; t++)
		fprintf(f, "%s,%d,%.17g\n", prefix, t, value * k[t]);
}

static void split_count_trends(void **state)
{
	(void)state;
	/* error = c_p S^a_p with the LSE in fp64; an LSE in fp16 adds 1e-3 */
	static const struct {
		const char *fmt;
		double c, a;
	} p[] = {{"fp16", 2e-4, 0.5}, {"bf16", 1e-3, 0.25}, {"fp32", 3e-7, -0.125}, {"fp64", 1e-16, 0}};
	text tx;
	text_open(&tx);
	fputs("experiment,splits,partial,lse,trial,norm_rel_err\n", tx.f);
	for (size_t i = 0; i < sizeof p / sizeof *p; i++)
		for (int lse = 0; lse < 2; lse++)
			for (int e = 0; e <= 10; e++) {
				char prefix[64];
				double S = ldexp(1, e);
				snprintf(prefix, sizeof prefix, "split-count,%.0f,%s,%s", S, p[i].fmt, lse ? "fp16" : "fp64");
				rows3(tx.f, prefix, p[i].c * pow(S, p[i].a) + (lse ? 1e-3 : 0));
			}
	results r = table(text_close(&tx), "split-count");
	free(tx.buf);
	const char *key = "partial";
	groups g;
	assert_int_equal(groups_make(&g, &r, &key, 1, "lse", "fp64"), SKV_OK);
	assert_int_equal(g.n, 4);
	find_trend t[4];
	size_t m;
	assert_int_equal(results_metric(&r, "norm_rel_err", &m), SKV_OK);
	assert_int_equal(find_trends(t, &r, &g, "splits", m, NULL), SKV_OK);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(groups_value(&g, &r, i, 0), p[i].fmt);
		NEAR(t[i].slope, p[i].a, 1e-12);
		assert_int_equal(t[i].used, 11);
		NEAR(t[i].x_first, 1, 0);
		NEAR(t[i].x_last, 1024, 0);
		NEAR(t[i].y_last, p[i].c * pow(1024, p[i].a), 0);
	}
	groups_free(&g);
	/* The paragraph quotes the fitted slopes and the error at S = 1024. */
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *s = text_close(&out);
	CONTAINS(s, "a = 0.50 for partial fp16");
	CONTAINS(s, "a = 0.25 for partial bf16");
	CONTAINS(s, "a = -0.12 for partial fp32"); /* -0.125 printed %.2f, ties to even */
	CONTAINS(s, "At S = 1024 the median error is 6.4e-3 (partial fp16)"); /* 2e-4 * 32 */
	CONTAINS(s, "a = 0.00 for partial fp64");
	CONTAINS(s, "With fp64 partials the LSE format alone goes from S = 1 to S = 1024 as 1e-16 to 1e-16 (LSE fp64) "
		    "and 1e-3 to 1e-3 (LSE fp16).");
	/* the synthetic LSE fp16 curve costs at S = 1 already: no claim that it does not */
	assert_null(strstr(s, "only starts to cost at S = 2"));
	free(s);
	results_free(&r);
}

/* ----------------------------------------------------- lse-magnitude */

static void lse_magnitude_crossings(void **state)
{
	(void)state;
	const double off[] = {0, 10, 100, 1000, 10000};
	text tx;
	text_open(&tx);
	fputs("experiment,splits,lse_offset,lse,trial,norm_rel_err\n", tx.f);
	for (int S = 4; S <= 64; S *= 16)
		for (size_t i = 0; i < 5; i++) {
			char prefix[96];
			/* fp16: 1e-4 (1 + offset) crosses 1e-3 at 10; at 64 splits
			 * twenty times larger, crossing at 0. bf16: 5e-4 at 4 splits
			 * for every offset (never), 2e-3 at 64 (at 0); fp32: 1e-7
			 * (never). */
			snprintf(prefix, sizeof prefix, "lse-magnitude,%d,%g,fp16", S, off[i]);
			rows3(tx.f, prefix, 1e-4 * (1 + off[i]) * (S == 64 ? 20 : 1));
			snprintf(prefix, sizeof prefix, "lse-magnitude,%d,%g,bf16", S, off[i]);
			rows3(tx.f, prefix, S == 4 ? 5e-4 : 2e-3);
			snprintf(prefix, sizeof prefix, "lse-magnitude,%d,%g,fp32", S, off[i]);
			rows3(tx.f, prefix, 1e-7);
		}
	results r = table(text_close(&tx), "lse-magnitude");
	free(tx.buf);
	const char *keys[] = {"splits", "lse"};
	groups g;
	assert_int_equal(groups_make(&g, &r, keys, 2, NULL, NULL), SKV_OK);
	assert_int_equal(g.n, 6);
	find_crossing c[6];
	size_t m;
	assert_int_equal(results_metric(&r, "norm_rel_err", &m), SKV_OK);
	assert_int_equal(find_crossings(c, &r, &g, "lse_offset", m, 1e-3, NULL), SKV_OK);
	/* groups in sweep order: (4, fp16), (4, bf16), (4, fp32), (64, ...) */
	NEAR(c[0].x, 10, 0);
	NEAR(c[0].y, 1.1e-3, 1e-18);
	assert_true(isnan(c[1].x));
	assert_true(isnan(c[2].x));
	NEAR(c[3].x, 0, 0);
	NEAR(c[4].x, 0, 0);
	assert_true(isnan(c[5].x));
	NEAR(c[0].x_last, 10000, 0);
	groups_free(&g);
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *s = text_close(&out);
	CONTAINS(s, "first exceeds 1e-3 at an LSE offset of 0 with LSE fp16 (first at splits 64)");
	CONTAINS(s, "0 with LSE bf16 (first at splits 64)");
	CONTAINS(s, "never does within the sweep (offsets 0 to 10000) with LSE fp32");
	CONTAINS(s, "worst median error over the other parameters is 20 (LSE fp16)"); /* 1e-4 * 10001 * 20 */
	free(s);
	results_free(&r);
}

/* --------------------------------------------------- reduction-order */

static void reduction_order_spread(void **state)
{
	(void)state;
	/* ulp_err at trial t: seq t, rev t + 2, tree t + 0.5, random 3 t (the
	 * per-trial range over orders is then max(2, 2t) - min(0, ...) ...):
	 * computed below by hand for t = 0..3. */
	text tx;
	text_open(&tx);
	fputs("experiment,order,merge,trial,norm_rel_err,ulp_err\n", tx.f);
	for (int t = 0; t < 4; t++) {
		fprintf(tx.f, "reduction-order,seq,onepass,%d,1e-7,%d\n", t, t);
		fprintf(tx.f, "reduction-order,rev,onepass,%d,1e-7,%d\n", t, t + 2);
		fprintf(tx.f, "reduction-order,tree,onepass,%d,1e-7,%.1f\n", t, t + 0.5);
		fprintf(tx.f, "reduction-order,random,onepass,%d,1e-7,%d\n", t, 3 * t);
		/* pairwise: trial 3 missing at tree, so only trials 0-2 count */
		fprintf(tx.f, "reduction-order,seq,pairwise,%d,1e-7,1\n", t);
		fprintf(tx.f, "reduction-order,rev,pairwise,%d,1e-7,%d\n", t, 1 + t);
		if (t < 3)
			fprintf(tx.f, "reduction-order,tree,pairwise,%d,1e-7,1\n", t);
	}
	results r = table(text_close(&tx), "reduction-order");
	free(tx.buf);
	const char *key = "merge";
	groups g;
	assert_int_equal(groups_make(&g, &r, &key, 1, NULL, NULL), SKV_OK);
	find_spread s[2];
	size_t m;
	assert_int_equal(results_metric(&r, "ulp_err", &m), SKV_OK);
	assert_int_equal(find_spreads(s, &r, &g, m), SKV_OK);
	/* onepass, per trial {t, t+2, t+0.5, 3t}: t=0: 2, t=1: 2, t=2: 6-2=4,
	 * t=3: 9-3=6 -> median 3, max 6; medians by order: seq 1.5, rev 3.5,
	 * tree 2, random 4.5 -> lowest seq, highest random. */
	NEAR(s[0].median, 3, 0);
	NEAR(s[0].max, 6, 0);
	assert_int_equal(s[0].ntrials, 4);
	assert_int_equal(s[0].npoints, 4);
	assert_string_equal(results_get(&r, s[0].lo, "order"), "seq");
	assert_string_equal(results_get(&r, s[0].hi, "order"), "random");
	/* pairwise, trials 0-2: {1, 1+t, 1}: ranges 0, 1, 2 -> median 1, max 2 */
	assert_int_equal(s[1].ntrials, 3);
	NEAR(s[1].median, 1, 0);
	NEAR(s[1].max, 2, 0);
	groups_free(&g);
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *txt = text_close(&out);
	CONTAINS(txt, "by a median of 1 to 3 ulps of the output format");
	CONTAINS(txt, "by at most 6 (onepass)");
	CONTAINS(txt, "| onepass | 3 | 6 | seq (1.5) | random (4.5) | 4 |");
	free(txt);
	results_free(&r);
}

/* -------------------------------------------------------- merge-rule */

static void merge_rule_ratios(void **state)
{
	(void)state;
	text tx;
	text_open(&tx);
	fputs("experiment,merge,trial,norm_rel_err\n", tx.f);
	rows3(tx.f, "merge-rule,onepass", 2e-16);
	rows3(tx.f, "merge-rule,pairwise", 3e-16);
	rows3(tx.f, "merge-rule,mean", 4e-2);
	rows3(tx.f, "merge-rule,sum", 6);
	results r = table(text_close(&tx), "merge-rule");
	free(tx.buf);
	groups g;
	assert_int_equal(groups_make(&g, &r, NULL, 0, NULL, NULL), SKV_OK);
	const char *w[] = {"onepass", "pairwise"};
	double q;
	size_t best, m;
	assert_int_equal(results_metric(&r, "norm_rel_err", &m), SKV_OK);
	assert_int_equal(find_ratio(&q, &best, &r, &g, 0, "merge", "mean", w, 2, m), SKV_OK);
	NEAR(q, 4e-2 / 2e-16, 0);
	assert_string_equal(results_get(&r, best, "merge"), "onepass");
	assert_int_equal(find_ratio(&q, &best, &r, &g, 0, "merge", "sum", w, 2, m), SKV_OK);
	NEAR(q, 6 / 2e-16, 0);
	assert_int_equal(find_ratio(&q, &best, &r, &g, 0, "merge", "flex", w, 2, m), SKV_EINVAL);
	groups_free(&g);
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *s = text_close(&out);
	CONTAINS(s, "plain mean's median normwise error is 2e14 times");
	CONTAINS(s, "plain sum's 3e16 times");
	CONTAINS(s, "better LSE-weighted merge (onepass, 2e-16)");
	CONTAINS(s, "within a factor 1.5");
	free(s);
	results_free(&r);
}

/* -------------------------------------------------------- block-size */

static void block_size_trend_and_causal(void **state)
{
	(void)state;
	text tx;
	text_open(&tx);
	fputs("experiment,block_size,causal,compute,trial,norm_rel_err\n", tx.f);
	for (int b = 1; b <= 256; b *= 4)
		for (int causal = 0; causal < 2; causal++) {
			char prefix[96];
			/* fp16: error 1e-3 b^-0.5, causal one quarter of that */
			snprintf(prefix, sizeof prefix, "block-size,%d,%d,fp16", b, causal);
			rows3(tx.f, prefix, 1e-3 * pow(b, -0.5) * (causal ? 0.25 : 1));
			snprintf(prefix, sizeof prefix, "block-size,%d,%d,fp32", b, causal);
			rows3(tx.f, prefix, 1e-7 * (causal ? 0.5 : 1));
		}
	results r = table(text_close(&tx), "block-size");
	free(tx.buf);
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *s = text_close(&out);
	/* fp16: from b = 1 to 256 the error falls 16 times: factor 0.062 */
	CONTAINS(s, "From block size 1 to 256 the median normwise error changes by a factor of 0.062");
	CONTAINS(s, "to 1 (");
	CONTAINS(s, "slopes lie between -0.50 and 0.00");
	CONTAINS(s, "has 0.25 to 0.5 times the median error of the single decode row, over the 10 matching");
	free(s);
	results_free(&r);
}

/* ----------------------------------------------- uneven, generic, NaN */

static void uneven_generic_and_nan(void **state)
{
	(void)state;
	text tx;
	text_open(&tx);
	fputs("experiment,layout,merge,trial,norm_rel_err\n", tx.f);
	rows3(tx.f, "uneven-splits,even,onepass", 1e-7);
	rows3(tx.f, "uneven-splits,skewed,onepass", 3e-7);
	rows3(tx.f, "uneven-splits,even,mean", 1e-2);
	rows3(tx.f, "uneven-splits,holes,mean", 0.5);
	results r = table(text_close(&tx), "uneven-splits");
	free(tx.buf);
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *s = text_close(&out);
	CONTAINS(s, "LSE-weighted merges by at most 3 (layout skewed, onepass)");
	CONTAINS(s, "the factor reaches 50 (layout holes, mean)");
	CONTAINS(s, "No trial gave a NaN norm_rel_err.");
	free(s);
	results_free(&r);

	/* An experiment the report does not know, with a NaN trial. */
	r = table("experiment,knob,trial,norm_rel_err\n"
		  "mystery,a,0,1e-5\nmystery,a,1,3e-5\nmystery,b,0,nan\nmystery,b,1,2e-3\n",
		  "mystery");
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	s = text_close(&out);
	CONTAINS(s, "2 parameter points, up to 2 trials each; the median norm_rel_err ranges from 2e-5 (knob a) to "
		    "2e-3 (knob b).");
	CONTAINS(s, "1 of 4 trials gave a NaN norm_rel_err, at 1 point (the first: knob b)");
	free(s);
	results_free(&r);
}


/* ---------------------------------------- presets: keys, systems, empty */

/* A preset determines its formats: the formats are never curves or rows of
 * their own, and the operating points are the other parameters. */
static void preset_keys(void **state)
{
	(void)state;
	text tx;
	text_open(&tx);
	fputs("experiment,preset,input,splits,lse_offset,trial,norm_rel_err\n", tx.f);
	/* per (splits, offset): a 1e-3, b 2e-3 (at 64 splits 5e-4), ref 1e-15 */
	static const char *const pre[] = {"a", "b", "exact-fp64"};
	static const char *const in[] = {"bf16", "fp16", "fp64"};
	for (int S = 1; S <= 64; S *= 64)
		for (int off = 0; off <= 50; off += 50)
			for (int k = 0; k < 3; k++) {
				char prefix[96];
				snprintf(prefix, sizeof prefix, "systems,%s,%s,%d,%d", pre[k], in[k], S, off);
				rows3(tx.f, prefix, k == 0 ? 1e-3 : k == 1 ? (S == 64 ? 5e-4 : 2e-3) : 1e-15);
			}
	results r = table(text_close(&tx), "systems");
	free(tx.buf);
	assert_true(results_determines(&r, "preset", "input"));
	assert_true(results_determines(&r, "input", "preset"));
	assert_false(results_determines(&r, "preset", "splits"));
	const char *keys[8];
	const char *ex[] = {"preset"};
	size_t n = results_keys(&r, keys, 8, ex, 1);
	assert_int_equal(n, 2);
	assert_string_equal(keys[0], "splits");
	assert_string_equal(keys[1], "lse_offset");
	const char *ex2[] = {"splits", "lse_offset"};
	n = results_keys(&r, keys, 8, ex2, 2);
	assert_int_equal(n, 1); /* preset and input determine each other: the first stays */
	assert_string_equal(keys[0], "preset");
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *sum = text_close(&out);
	CONTAINS(sum, "a has the smallest median normwise error at 2 of the 4 operating points and a the largest at 2");
	CONTAINS(sum, "| splits 1, LSE offset 0 | exact-fp64 (1e-15), a (1e-3), b (2e-3) |");
	CONTAINS(sum, "| splits 64, LSE offset 50 | exact-fp64 (1e-15), b (5e-4), a (1e-3) |");
	free(sum);
	results_free(&r);
}

/* The normwise order spread, in units of the output format's u = 2^-24:
 * per-trial ranges 2e-7 and 0, median 1e-7, that is 1.7 u. */
static void reduction_order_normwise(void **state)
{
	(void)state;
	results r = table("experiment,order,output,trial,ulp_err,norm_rel_err\n"
			      "reduction-order,seq,fp32,0,10,1e-7\n"
			      "reduction-order,seq,fp32,1,10,2e-7\n"
			      "reduction-order,rev,fp32,0,30,3e-7\n"
			      "reduction-order,rev,fp32,1,10,2e-7\n",
			      "reduction-order");
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *sum = text_close(&out);
	CONTAINS(sum, "by a median of 1.7 to 1.7 units of fp32's unit roundoff u");
	CONTAINS(sum, "| median spread, normwise (u) |");
	free(sum);
	results_free(&r);
}

/* The floor sentence: the largest median error / median floor per preset. */
static void systems_floor(void **state)
{
	(void)state;
	results r = table("experiment,preset,input,splits,trial,norm_rel_err,floor_err\n"
			      "systems,a,bf16,1,0,2e-3,1e-3\n"
			      "systems,a,bf16,64,0,1.5e-3,1e-3\n"
			      "systems,b,fp16,1,0,1e-3,1e-3\n"
			      "systems,b,fp16,64,0,5e-3,1e-3\n",
			      "systems");
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *sum = text_close(&out);
	CONTAINS(sum, "largest ratio of median error to median floor over the operating points is 2 (a) and 5 (b)");
	free(sum);
	results_free(&r);
}

static void empty_split_outcomes(void **state)
{
	(void)state;
	results r = table("experiment,preset,input,layout,trial,norm_rel_err,out_state,lse_state\n"
			      "empty-splits,fa2,bf16,even,0,1e-3,finite,finite\n"
			      "empty-splits,fa2,bf16,even,1,3e-3,finite,finite\n"
			      "empty-splits,fa2,bf16,all-empty,0,0,finite,+inf\n"
			      "empty-splits,fa2,bf16,all-empty,1,0,finite,+inf\n"
			      "empty-splits,fi,fp16,even,0,2e-3,finite,finite\n"
			      "empty-splits,fi,fp16,even,1,nan,nan,nan\n"
			      "empty-splits,fi,fp16,all-empty,0,nan,nan,nan\n"
			      "empty-splits,fi,fp16,all-empty,1,nan,nan,nan\n",
			      "empty-splits");
	/* the outcome columns are not parameters: 4 points of 2 trials */
	assert_int_equal(r.npoints, 4);
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *s = text_close(&out);
	CONTAINS(s, "Merged output NaN: fi (even, all-empty). 1 of 2 presets return NaN");
	CONTAINS(s, "| preset | even | all-empty |");
	CONTAINS(s, "| fa2 | finite, LSE finite (2e-3) | finite, LSE +inf (0) |");
	CONTAINS(s, "| fi | finite 1, nan 1, LSE finite 1, nan 1 (2e-3) | nan, LSE nan |");
	free(s);
	results_free(&r);
}

/* ------------------------------------------------------ tensor-cores */

/* Each GPU's median against IEEE's at the same point: the extremes with
 * their points, the unchanged count, the range per GPU. */
static void tensor_core_ratios(void **state)
{
	(void)state;
	text tx;
	text_open(&tx);
	fputs("experiment,preset,gpu,trial,norm_rel_err\n", tx.f);
	rows3(tx.f, "tensor-cores,fa2,ieee", 1e-3);
	rows3(tx.f, "tensor-cores,fa2,a100", 1e-3);
	rows3(tx.f, "tensor-cores,fa2,h100", 1.2e-3);
	rows3(tx.f, "tensor-cores,tilelang,ieee", 2e-4);
	rows3(tx.f, "tensor-cores,tilelang,a100", 2e-4);
	rows3(tx.f, "tensor-cores,tilelang,h100", 1.9e-4);
	results r = table(text_close(&tx), "tensor-cores");
	free(tx.buf);
	size_t m;
	assert_int_equal(results_metric(&r, "norm_rel_err", &m), SKV_OK);
	narr_ratios q;
	assert_int_equal(narr_ratios_to(&q, &r, "gpu", "ieee", "h100", m), SKV_OK);
	assert_int_equal(q.n, 2);
	assert_int_equal(q.equal, 0);
	NEAR(q.rlo, 1.9e-4 / 2e-4, 0);
	NEAR(q.rhi, 1.2e-3 / 1e-3, 0);
	assert_string_equal(results_get(&r, q.lo, "preset"), "tilelang");
	assert_string_equal(results_get(&r, q.hi, "preset"), "fa2");
	text out;
	text_open(&out);
	assert_int_equal(catalog_narrate(out.f, &r, NULL), SKV_OK);
	char *s = text_close(&out);
	CONTAINS(s, "moves the median normwise error by between -5% (tilelang, gpu h100) and +20% (fa2, gpu h100)");
	CONTAINS(s, "2 of the 4 medians do not move");
	CONTAINS(s, "a100 0% to 0%; h100 -5% to +20%.");
	free(s);
	results_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantiles),
		cmocka_unit_test(loglog_slope),
		cmocka_unit_test(threshold_crossing),
		cmocka_unit_test(number_labels),
		cmocka_unit_test(results_and_errors),
		cmocka_unit_test(split_count_trends),
		cmocka_unit_test(lse_magnitude_crossings),
		cmocka_unit_test(reduction_order_spread),
		cmocka_unit_test(merge_rule_ratios),
		cmocka_unit_test(block_size_trend_and_causal),
		cmocka_unit_test(uneven_generic_and_nan),
		cmocka_unit_test(preset_keys),
		cmocka_unit_test(reduction_order_normwise),
		cmocka_unit_test(systems_floor),
		cmocka_unit_test(empty_split_outcomes),
		cmocka_unit_test(tensor_core_ratios),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
