/* test_report_summary.c - the erratic part and its grid (jumps, shift factors, the lse-grid and lse-magnitude sentences) and REPORT.md's summary and decision table, on synthetic tables with known answers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "core/stats.h"
#include "report/report_internal.h"
#include "results/findings.h"
#include "results/labels.h"
#include "skv.h"

static results table(const char *text, const char *name)
{
	csv_table t;
	results r;
	message err = {NULL};
	if (csv_parse(&t, text, strlen(text), "t.csv", &err) != SKV_OK ||
	    results_from_csv(&r, &t, name, NULL, 0, &err) != SKV_OK)
		fail_msg("%s:%d: synthetic table rejected: %s", __FILE__, __LINE__, msg_text(&err));
	return r;
}

/* Text written to a memory stream by a callback. */
typedef struct {
	char *buf;
	size_t len;
	FILE *f;
} text;

static void text_open(text *t)
{
	t->buf = NULL;
	t->len = 0;
	t->f = open_memstream(&t->buf, &t->len);
	assert_non_null(t->f);
}

static char *text_close(text *t)
{
	assert_int_equal(fclose(t->f), 0);
	return t->buf;
}

static void contains(const char *hay, const char *needle, int line)
{
	if (!strstr(hay, needle)) {
		print_error("%s:%d: \"%s\" not found in:\n%s\n", __FILE__, line, needle, hay);
		fail();
	}
}
#define CONTAINS(hay, needle) contains((hay), (needle), __LINE__)

static void near(double got, double want, int line)
{
	if (!(fabs(got - want) <= 1e-12 * fabs(want)) && !(got == want))
		fail_msg("%s:%d: %a (%.17g), want %a (%.17g)", __FILE__, line, got, got, want, want);
}
#define NEAR(got, want) near((got), (want), __LINE__)

/* ------------------------------------------------------------ jumps */

/* Neighbours only: counts 2 to 64 one apart; 1 -> 2 and 64 -> 128 (and the
 * gap 4 -> 64) are not compared. */
static void jumps_between_neighbours(void **state)
{
	(void)state;
	results r = table("experiment,splits,trial,norm_rel_err\n"
			  "t,1,0,1e-9\nt,2,0,1\nt,3,0,4\nt,4,0,2\nt,64,0,2e3\nt,128,0,1e9\n",
			  "t");
	groups g;
	assert_int_equal(groups_make(&g, &r, NULL, 0, NULL, NULL), SKV_OK);
	find_jump j;
	assert_int_equal(find_jumps(&j, &r, &g, "splits", 0, 2, 64, 1, NULL), SKV_OK);
	NEAR(j.ratio, 4);
	NEAR(j.x_a, 2), NEAR(j.y_a, 1), NEAR(j.x_b, 3), NEAR(j.y_b, 4);
	assert_int_equal(j.pairs, 2);
	/* a zero median is never a ratio; no pair at all: NaN */
	assert_int_equal(find_jumps(&j, &r, &g, "splits", 0, 100, 200, 1, NULL), SKV_OK);
	assert_true(isnan(j.ratio));
	assert_int_equal(j.pairs, 0);
	groups_free(&g);
	results_free(&r);
}

/* The factor between medians one shift apart along x, per group kept. */
static void shift_factors(void **state)
{
	(void)state;
	results r = table("experiment,lse,lse_offset,trial,norm_rel_err\n"
			  "t,fp16,0,0,1\nt,fp16,0.5,0,2\nt,fp16,1,0,1\nt,fp16,1.5,0,4\n"
			  "t,bf16,0,0,1\nt,bf16,1,0,1000\n",
			  "t");
	const char *k = "lse";
	groups g;
	assert_int_equal(groups_make(&g, &r, &k, 1, NULL, NULL), SKV_OK);
	const unsigned char keep[] = {1, 0};
	find_factor q;
	assert_int_equal(find_shift_factor(&q, &r, &g, keep, "lse_offset", 1, 0, NULL), SKV_OK);
	assert_int_equal(q.pairs, 2); /* (0, 1): 1 and (0.5, 1.5): 2 */
	NEAR(q.median, 1.5);
	NEAR(q.max, 2);
	assert_int_equal(find_shift_factor(&q, &r, &g, keep, "lse_offset", 0.5, 0, NULL), SKV_OK);
	assert_int_equal(q.pairs, 3); /* 2, 2, 4 */
	NEAR(q.median, 2);
	NEAR(q.max, 4);
	assert_int_equal(find_shift_factor(&q, &r, &g, NULL, "lse_offset", 1, 0, NULL), SKV_OK);
	NEAR(q.max, 1000); /* bf16 kept too */
	assert_int_equal(find_shift_factor(&q, &r, &g, keep, "lse_offset", 7, 0, NULL), SKV_OK);
	assert_int_equal(q.pairs, 0);
	assert_true(isnan(q.median));
	assert_int_equal(find_shift_factor(&q, &r, &g, keep, "lse_offset", 0, 0, NULL), SKV_EINVAL);
	groups_free(&g);
	results_free(&r);
}

/* narr_jumps: one clause per LSE format, its worst curve named without it. */
static void jumps_sentence(void **state)
{
	(void)state;
	results r = table("experiment,lse_offset,lse,splits,trial,norm_rel_err\n"
			  "t,0,fp16,2,0,1e-3\nt,0,fp16,3,0,3e-3\nt,0,bf16,2,0,1e-2\nt,0,bf16,3,0,1e-2\n"
			  "t,1000,fp16,2,0,1e-2\nt,1000,fp16,3,0,1e-2\nt,1000,bf16,2,0,0.9\nt,1000,bf16,3,0,0.03\n",
			  "lse-magnitude");
	text t;
	text_open(&t);
	narr_jump best;
	assert_int_equal(narr_jumps(t.f, &r, 0, "lse", &best, NULL), SKV_OK);
	char *s = text_close(&t);
	CONTAINS(s, " Between neighbouring split counts (2 to 64) the median moves by up to a factor of 3 with LSE fp16 "
		    "(LSE offset 0: 1e-3 at S = 2, 3e-3 at S = 3) and 30 with LSE bf16 (LSE offset 1000: 0.9 at S = 2, "
		    "0.03 at S = 3).");
	NEAR(best.ratio, 30);
	assert_string_equal(results_get(&r, best.point, "lse"), "bf16");
	NEAR(best.s_a, 2);
	free(s);
	results_free(&r);
}

/* The lse-magnitude findings explain the largest jump by the format's
 * spacing at the split LSEs: bf16 at 1000 + ln(4096 / 2) = 1007.6 stores
 * values 4 apart, e^4 = 55; and two formats that weigh every split alike
 * at the largest offset are said to. */
static void lse_magnitude_grid(void **state)
{
	(void)state;
	text tx;
	text_open(&tx);
	fputs("experiment,ctx,lse_offset,lse,splits,trial,norm_rel_err\n", tx.f);
	static const double off[] = {0, 1000, 10000};
	for (int o = 0; o < 3; o++)
		for (int S = 2; S <= 4; S++) {
			const double b = o == 1 && S == 3 ? 0.9 : 0.01 * S, h = o == 2 ? b : 0.5 * b;
			fprintf(tx.f, "lse-magnitude,4096,%g,bf16,%d,0,%g\n", off[o], S, b);
			fprintf(tx.f, "lse-magnitude,4096,%g,fp16,%d,0,%g\n", off[o], S, h);
		}
	results r = table(text_close(&tx), "lse-magnitude");
	free(tx.buf);
	text t;
	text_open(&t);
	assert_int_equal(catalog_narrate(t.f, &r, NULL), SKV_OK);
	char *s = text_close(&t);
	CONTAINS(s, "45 with LSE bf16 (LSE offset 1000: 0.02 at S = 2, 0.9 at S = 3) and 45 with LSE fp16");
	CONTAINS(s, "At LSE offset 1000, bf16 stores LSEs 4 apart (a split of ctx/S keys has its LSE near the offset + "
		    "ln(ctx/S), 1007.6 at S = 2)");
	CONTAINS(s, "their weights move by a factor e^4 = 55.");
	CONTAINS(s, "At offset 10000, fp16 and bf16 give the same median error (within 1%) at 3 of the 3 split counts "
		    "from 2");
	free(s);
	results_free(&r);
}

/* The lse-grid findings on a grid two fp16 spacings wide: the error
 * repeats with the spacing (factor exactly 1), half a spacing moves it, and
 * each row's peak sits where offset + ln(ctx/S) lies below a boundary. */
static void lse_grid_sentences(void **state)
{
	(void)state;
	text tx;
	text_open(&tx);
	fputs("experiment,ctx,lse_offset,lse,splits,trial,norm_rel_err\n", tx.f);
	/* e(o, S) depends on o mod 0.5: peak at S = 2 for o mod 0.5 = 0, at
	 * S = 3 for 0.25; offsets 1000 to 1001 in quarters (five rows) */
	for (int k = 0; k <= 4; k++)
		for (int S = 2; S <= 3; S++) {
			const int peak = (k % 2 == 0) == (S == 2);
			fprintf(tx.f, "lse-grid,1024,%g,fp16,%d,0,%g\n", 1000 + 0.25 * k, S, peak ? 0.2 : 0.02);
		}
	results r = table(text_close(&tx), "lse-grid");
	free(tx.buf);
	text t;
	text_open(&t);
	assert_int_equal(catalog_narrate(t.f, &r, NULL), SKV_OK);
	char *s = text_close(&t);
	CONTAINS(s, "Over split counts 2 to 3 and LSE offsets 1000 to 1001, the median normwise error ranges from 0.02 to "
		    "0.2 with LSE fp16 (spacing 0.5, e^h = 1.6).");
	/* one LSE format: the clause names none */
	CONTAINS(s, "the median moves by up to a factor of 10 (LSE offset 1000: 0.2 at S = 2, 0.02 at S = 3).");
	/* (1000, 1000.5), (1000.25, 1000.75), (1000.5, 1001) at two counts */
	CONTAINS(s, "Raising every score by one spacing of the format there (0.5 for fp16) leaves every median error as it "
		    "was (6 pairs)");
	CONTAINS(s, "half a spacing moves it by a median factor of 10 and up to 10 (fp16).");
	/* the rows' peaks: S = 2 at 1000, 1000.5, 1001 and S = 3 at 1000.25,
	 * 1000.75; each distance (k + 1/2) h - v for v = o + ln(1024 / S) */
	double d[5];
	for (int k = 0; k <= 4; k++) {
		const double v = 1000 + 0.25 * k + log(1024.0 / (k % 2 == 0 ? 2 : 3));
		d[k] = (floor(v / 0.5) + 0.5) * 0.5 - v;
	}
	qsort(d, 5, sizeof *d, stats_cmp_double);
	char want[256], a[32], b[32], c[32];
	double q1, med, q3;
	stats_quantile(&q1, d, 5, 0.25), stats_quantile(&med, d, 5, 0.5), stats_quantile(&q3, d, 5, 0.75);
	snprintf(want, sizeof want, "by a median of %s (quartiles %s to %s) for fp16, whose boundaries lie 0.5 apart",
		 label_number(a, sizeof a, med, 2), label_number(b, sizeof b, q1, 2), label_number(c, sizeof c, q3, 2));
	CONTAINS(s, want);
	free(s);
	results_free(&r);
}

/* ------------------------------------------------------------ summary */

/* A job of the given experiments (name, CSV text), for the summary. */
static void job_of(job *j, section *s, const char *const *name, const char *const *csv, size_t n)
{
	memset(j, 0, sizeof *j);
	for (size_t i = 0; i < n; i++) {
		memset(&s[i], 0, sizeof s[i]);
		s[i].name = (char *)name[i];
		s[i].r = table(csv[i], name[i]);
	}
	j->s = s;
	j->n = n;
}

static char *summary_of(job *j)
{
	text t;
	text_open(&t);
	assert_int_equal(report_write_summary(t.f, j), SKV_OK);
	return text_close(&t);
}

static const char systems_csv[] =
	"experiment,preset,output,lse,lse_offset,splits,trial,norm_rel_err,floor_err\n"
	"systems,a,bf16,fp32,0,1,0,1.5e-3,1e-3\nsystems,a,bf16,fp32,0,4,0,1.5e-3,1e-3\n"
	"systems,a,bf16,fp32,500,1,0,1.5e-3,1e-3\nsystems,a,bf16,fp32,500,4,0,1.5e-3,1e-3\n"
	"systems,b,fp16,fp16,0,1,0,3e-4,2e-4\nsystems,b,fp16,fp16,0,4,0,3e-4,2e-4\n"
	"systems,b,fp16,fp16,500,1,0,3e-4,2e-4\nsystems,b,fp16,fp16,500,4,0,2e-2,2e-4\n"
	"systems,exact-fp64,fp64,fp64,0,1,0,1e-15,1e-17\nsystems,exact-fp64,fp64,fp64,0,4,0,1e-15,1e-17\n"
	"systems,exact-fp64,fp64,fp64,500,1,0,1e-15,1e-17\nsystems,exact-fp64,fp64,fp64,500,4,0,1e-15,1e-17\n";

static const char empty_csv[] =
	"experiment,preset,layout,trial,norm_rel_err,out_state,lse_state\n"
	"empty-splits,a,even,0,1e-3,finite,finite\nempty-splits,a,all-empty,0,0,finite,-inf\n"
	"empty-splits,b,even,0,1e-3,finite,finite\nempty-splits,b,all-empty,0,nan,nan,nan\n"
	"empty-splits,c,holes,0,1e-3,finite,-inf\nempty-splits,c,all-empty,0,0,finite,+inf\n";

/* The presets' sentence and decision table: error over the own floor, the
 * counts within 2x at every offset, what empty splits return. */
static void summary_presets(void **state)
{
	(void)state;
	const char *names[] = {"systems", "empty-splits"}, *csv[] = {systems_csv, empty_csv};
	section s[2];
	job j;
	job_of(&j, s, names, csv, 2);
	char *md = summary_of(&j);
	CONTAINS(md, "## Summary\n\n");
	CONTAINS(md, "1 of the 2 production presets stays within 2x at every split count and LSE offset tested; the worst, "
		     "b, reaches 100 times its fp16 floor (LSE offset 500, S = 4), with its LSE stored in fp16.");
	CONTAINS(md, "1 of the 3 presets returns a finite output and a proper merged LSE for every layout tried (one, "
		     "several and all splits empty); the others: b (NaN output with all-empty), c (LSE -inf with holes, "
		     "LSE +inf with all-empty).");
	CONTAINS(md, "| preset | output | floor | error / floor, LSE offset 0 | error / floor, LSE offset 500 | split counts "
		     "within 2x the floor | empty splits |");
	CONTAINS(md, "| a | bf16 | 1e-3 | 1.5 | 1.5 | all (1 to 4) | none |");
	CONTAINS(md, "| b | fp16 | 2e-4 | 1.5 | 100 | 1 | NaN output with all-empty |");
	CONTAINS(md, "| exact-fp64 (reference) | fp64 | 1e-17 | 100 | 100 | none | not run |");
	free(md);
	for (size_t i = 0; i < 2; i++)
		results_free(&s[i].r);
	/* no experiment that backs a conclusion: no summary at all */
	const char *other[] = {"merge-rule"}, *mr[] = {"experiment,merge,trial,norm_rel_err\nmerge-rule,sum,0,1\n"};
	job_of(&j, s, other, mr, 1);
	md = summary_of(&j);
	assert_string_equal(md, "");
	free(md);
	results_free(&s[0].r);
}

/* The LSE-storage sentence: the worst median over split counts from 2 per
 * format at the smallest and the largest offset, and the worst anywhere. */
static void summary_lse_storage(void **state)
{
	(void)state;
	const char *names[] = {"lse-magnitude"};
	const char *csv[] = {"experiment,lse_offset,lse,splits,trial,norm_rel_err\n"
			     "lse-magnitude,0,fp16,1,0,1e-15\nlse-magnitude,0,fp16,2,0,1e-3\nlse-magnitude,0,fp16,3,0,2e-3\n"
			     "lse-magnitude,0,fp32,1,0,1e-15\nlse-magnitude,0,fp32,2,0,1e-7\nlse-magnitude,0,fp32,3,0,1e-7\n"
			     "lse-magnitude,100,fp16,1,0,1e-15\nlse-magnitude,100,fp16,2,0,0.5\nlse-magnitude,100,fp16,3,0,0.1\n"
			     "lse-magnitude,100,fp32,1,0,1e-15\nlse-magnitude,100,fp32,2,0,3e-6\nlse-magnitude,100,fp32,3,0,1e-6\n"};
	section s[1];
	job j;
	job_of(&j, s, names, csv, 1);
	char *md = summary_of(&j);
	CONTAINS(md, "the worst median normwise error over the split counts from 2 is 2e-3 (fp16) and 1e-7 (fp32) at LSE "
		     "offset 0, and 0.5 and 3e-6 at LSE offset 100; the worst anywhere is 0.5 (fp16, LSE offset 100, S = 2).");
	/* the structure, from lse-magnitude when lse-grid did not run: fp16 at
	 * 100 + ln(ctx/2) with no ctx column: the spacing at 100, 1/16 */
	CONTAINS(md, "Neighbouring split counts can differ by a factor of 5 (LSE fp16 at offset 100: 0.5 at S = 2, 0.1 at "
		     "S = 3)");
	CONTAINS(md, "stored on fp16's grid of values 0.062 apart there");
	free(md);
	results_free(&s[0].r);
}

/* The KV-cache sentence: each cache format's range against the original
 * K and V, and the largest share of it the kernel and merge add (against
 * the stored cache). */
static void summary_kv_caches(void **state)
{
	(void)state;
	const char *names[] = {"kv-cache"};
	const char *csv[] = {"experiment,kv_cache,kv_scale,splits,trial,norm_rel_err,orig_norm_rel_err\n"
			     "kv-cache,e4m3-sat,tensor,1,0,2e-3,0.03\nkv-cache,e4m3-sat,mx,1,0,2e-3,0.04\n"
			     "kv-cache,e4m3-sat,tensor,64,0,3e-3,0.03\nkv-cache,e2m1,tensor,1,0,2e-3,0.1\n"
			     "kv-cache,e2m1,tensor,64,0,2e-3,0.2\n"};
	section s[1];
	job j;
	job_of(&j, s, names, csv, 1);
	char *md = summary_of(&j);
	CONTAINS(md, "- **KV caches** ([kv-cache](#kv-cache)). Against the original K and V the median normwise error is "
		     "0.03 to 0.04 (e4m3-sat cache) and 0.1 to 0.2 (e2m1 cache) over every scale granularity, split count "
		     "and LSE offset swept; against the stored cache (the kernel's arithmetic and the merge) it is at most "
		     "0.1 times that");
	free(md);
	results_free(&s[0].r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jumps_between_neighbours),
		cmocka_unit_test(summary_kv_caches),
		cmocka_unit_test(shift_factors),
		cmocka_unit_test(jumps_sentence),
		cmocka_unit_test(lse_magnitude_grid),
		cmocka_unit_test(lse_grid_sentences),
		cmocka_unit_test(summary_presets),
		cmocka_unit_test(summary_lse_storage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
