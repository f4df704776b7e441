/* test_recommend.c - `skv recommend`: the choice, bad input, rejection of fp16 LSEs at large offsets, determinism. */
#include <fcntl.h>
#include <unistd.h>

#include "testutil.h"
#include "cli/cli.h"
#include "core/stats.h"
#include "core/sweep_internal.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Runs the command on a NULL-terminated argument list, capturing both streams. */
typedef struct {
	int status;
	char *out, *err;
	size_t nout, nerr;
} capture;

static capture run_cmd(const char *const *args)
{
	char *argv[64];
	int argc = 0;
	argv[argc++] = (char *)"recommend";
	for (size_t i = 0; args[i] && argc < (int)NELEM(argv) - 1; i++)
		argv[argc++] = (char *)args[i];
	argv[argc] = NULL;
	capture c = {0, NULL, NULL, 0, 0};
	FILE *o = open_memstream(&c.out, &c.nout), *e = open_memstream(&c.err, &c.nerr);
	assert_non_null(o);
	assert_non_null(e);
	c.status = rec_main_io(argc, argv, o, e);
	fclose(o);
	fclose(e);
	return c;
}

static void capture_free(capture *c)
{
	free(c->out);
	free(c->err);
}

/* A small request, parsed like the command line so the defaults apply. */
static rec_opts opts_of(const char *const *args)
{
	char *argv[64];
	int argc = 0;
	argv[argc++] = (char *)"recommend";
	for (size_t i = 0; args[i] && argc < (int)NELEM(argv) - 1; i++)
		argv[argc++] = (char *)args[i];
	rec_opts o;
	int help;
	message e = {NULL};
	if (rec_parse(&o, &help, argc, argv, &e) != SKV_OK)
		fail_msg("%s:%d: parse: %s", __FILE__, __LINE__, msg_text(&e));
	return o;
}

static rec_result run_opts(const rec_opts *o)
{
	rec_result r;
	message e = {NULL};
	if (rec_run(&r, o, NULL, &e) != SKV_OK)
		fail_msg("%s:%d: run: %s", __FILE__, __LINE__, msg_text(&e));
	return r;
}

/* The choice: largest efficiency within tolerance and allowed, ties to the
 * smaller count, nothing when no row qualifies. */
static void test_choose(void **state)
{
	(void)state;
	/* splits, blocks, eff, median, max, nan, within, fa2, allowed */
	rec_row r[] = {
		{1, 64, 0.25f, 0, 0, 0, 1, 0, 1}, {2, 32, 0.5f, 0, 0, 0, 1, 0, 1},  {4, 16, 0.9f, 0, 0, 0, 1, 0, 1},
		{7, 10, 0.85f, 0, 0, 0, 1, 1, 1}, {8, 8, 0.9f, 0, 0, 0, 1, 0, 1},   {16, 4, 0.9f, 0, 0, 0, 1, 0, 1},
		{32, 2, 0.95f, 0, 0, 0, 0, 0, 1}, {64, 1, 0.99f, 0, 0, 0, 1, 0, 0},
	};
	/* 32 (0.95) is beyond tolerance and 64 (0.99) above --max-splits:
	 * 4, 8 and 16 tie at 0.9 and the smallest, 4, wins */
	assert_int_equal(rec_choose(r, NELEM(r)), 2);
	r[2].within_tol = 0; /* then 8 */
	assert_int_equal(rec_choose(r, NELEM(r)), 4);
	r[6].within_tol = 1; /* 32 at 0.95 */
	assert_int_equal(rec_choose(r, NELEM(r)), 6);
	for (size_t i = 0; i < NELEM(r); i++)
		r[i].within_tol = 0;
	assert_int_equal(rec_choose(r, NELEM(r)), NELEM(r));
	assert_int_equal(rec_choose(r, 0), 0);
	r[0].within_tol = 1;
	assert_int_equal(rec_choose(r, NELEM(r)), 0);
}

/* Every bad input: status 2, nothing on stdout, one line on stderr that
 * names the flag and its value. */
static void test_bad_inputs(void **state)
{
	(void)state;
	const struct {
		const char *args[4];
		const char *names; /* must appear in the message */
	} bad[] = {
		{{"--heads=12", "--kv-heads=5"}, "--kv-heads=5"},
		{{"--heads=8", "--kv-heads=16"}, "--kv-heads=16"},
		{{"--ctx=0"}, "--ctx=0"},
		{{"--sms=0"}, "--sms=0"},
		{{"--batch=0"}, "--batch=0"},
		{{"--heads=0"}, "--heads=0"},
		{{"--head-dim=0"}, "--head-dim=0"},
		{{"--head-dim=300"}, "--head-dim=300"},
		{{"--tol=0"}, "--tol=0"},
		{{"--tol=-1e-3"}, "--tol=-1e-3"},
		{{"--tol=nan"}, "--tol=nan"},
		{{"--tol=inf"}, "--tol=inf"},
		{{"--tol=1e-3y"}, "--tol=1e-3y"},
		{{"--tol=x"}, "--tol=x"},
		{{"--tol=2xx"}, "--tol=2xx"},
		{{"--tol=0x"}, "--tol=0x"},
		{{"--metric=ulp_err", "--tol=0.25"}, "--tol=0.25"},
		{{"--tol=1.5"}, "--tol=1.5"},
		{{"--system=vllm"}, "--system"},
		{{"--system=flashinfer", "--head-dim=80"}, "--system=flashinfer"},
		{{"--system=flex", "--heads=12", "--kv-heads=4"}, "--system=flex"},
		{{"--tol="}, "--tol="},
		{{"--preset=fa9"}, "--preset=fa9"},
		{{"--metric=rms"}, "--metric=rms"},
		{{"--format=xml"}, "--format=xml"},
		{{"--ctx=12x"}, "--ctx=12x"},
		{{"--ctx=-5"}, "--ctx=-5"},
		{{"--ctx=+5"}, "--ctx=+5"},
		{{"--ctx= 5"}, "--ctx= 5"},
		{{"--batch=99999999999999999999999"}, "--batch=99999999999999999999999"},
		{{"--trials=-1"}, "--trials=-1"},
		{{"--seed=18446744073709551616"}, "--seed=18446744073709551616"},
		{{"--trials"}, "--trials"},
		{{"--frobnicate=1"}, "--frobnicate"},
		{{"stray"}, "stray"},
		{{"--splits=3,,4"}, "--splits=3,,4"},
		{{"--splits=200"}, "--splits=200"},
		{{"--split-size=1", "--ctx=100000"}, "--split-size=1"},
		{{"--input=fp8"}, "--input=fp8"},
		{{"--output=half"}, "--output=half"},
		{{"--lse-base=10"}, "--lse-base=10"},
		{{"--lse-offset=1e300"}, "--lse-offset=1e300"},
		{{"--score-scale=0"}, "--score-scale=0"},
		{{"--max-splits=0"}, "--max-splits=0"},
		{{"--threads=-1"}, "--threads=-1"},
		{{"--out=dir"}, "--out=dir"},
		{{"--block-size=64"}, "--block-size"},
		{{"--layout=random"}, "--layout=random"},
		{{"--ctx=1024,2048"}, "--ctx"},
		{{"--candidates=list"}, "--candidates=list"},
		{{"--splits=1,1"}, "--splits=1,1"},
		{{"--split-size=0x"}, "--split-size=0x"},
		{{"--ctx=5", "--ctx=6"}, "--ctx"},
		{{"--layout=odd"}, "--layout=odd"},
		{{"--dist=cauchy"}, "--dist=cauchy"},
	};
	for (size_t i = 0; i < NELEM(bad); i++) {
		capture c = run_cmd(bad[i].args);
		const char *nl = c.err ? strchr(c.err, '\n') : NULL;
		/* "--flag=value" as written, or the flag and the value apart
		 * ("malformed number 'nan' for --tol") */
		char flag[64];
		const char *eq = strchr(bad[i].names, '=');
		snprintf(flag, sizeof flag, "%.*s", eq ? (int)(eq - bad[i].names) : 63, bad[i].names);
		const int named = c.err && (strstr(c.err, bad[i].names) ||
					    (eq && eq[1] && strstr(c.err, flag) && strstr(c.err, eq + 1)));
		if (c.status != 2 || c.nout != 0 || !nl || nl[1] != '\0' || !named ||
		    strncmp(c.err, "skv recommend: ", 15) != 0)
			fail_msg("%s:%d: case %zu (%s): status %d, %zu bytes on stdout, stderr \"%s\"", __FILE__, __LINE__,
				 i, bad[i].args[0], c.status, c.nout, c.err ? c.err : "");
		capture_free(&c);
	}
}

/* The wrapper writes to the real stdout and stderr: redirected to files,
 * stdout stays empty on bad input. */
static void test_wrapper_streams(void **state)
{
	(void)state;
	char on[] = "/tmp/rec_outXXXXXX", en[] = "/tmp/rec_errXXXXXX";
	const int fo = mkstemp(on), fe = mkstemp(en);
	assert_true(fo >= 0 && fe >= 0);
	fflush(stdout);
	fflush(stderr);
	const int so = dup(1), se = dup(2);
	assert_true(so >= 0 && se >= 0);
	dup2(fo, 1);
	dup2(fe, 2);
	char *argv[] = {(char *)"recommend", (char *)"--ctx=0", NULL};
	const int st = rec_main(2, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	const off_t no = lseek(fo, 0, SEEK_END), ne = lseek(fe, 0, SEEK_END);
	close(fo);
	close(fe);
	unlink(on);
	unlink(en);
	assert_int_equal(st, 2);
	assert_int_equal(no, 0);
	assert_true(ne > 0);
}

static void test_help(void **state)
{
	(void)state;
	const char *args[] = {"--ctx=5", "--help", "--ctx=0", NULL};
	capture c = run_cmd(args);
	assert_int_equal(c.status, 0);
	assert_non_null(strstr(c.out, "usage: skv recommend"));
	assert_int_equal(c.nerr, 0);
	capture_free(&c);
}

/*
 * TileLang stores each split's base-2 LSE in fp16. At lse-offset 1000 the
 * stored LSE is about 1000 log2(e) = 1443, where fp16's spacing is 1: the
 * rounding moves a split's weight 2^(LSE - max) by a factor up to 2^0.5, so
 * any count of 2 or more splits is wrong by percents, while 1 split has
 * weight 2^0 = 1 exactly and keeps the error of the split kernel. The same
 * shape in fp64 is within 1e-3 at every count (its error is ~1e-13).
 * ctx 2048, d 64: block_n 256, 8 blocks; pow2 candidates 1, 2, 4, 8 and
 * FA2's pick. bhm = 32 < 211.2; eligible 1..8 except 5..7 (ceil(8 / s) =
 * 2 for s = 4..7); eff(s) = 32 s / 264 < 1: the best is 8 (0.9697), the
 * threshold 0.824 is first reached at 7 (0.848), which is ineligible, so
 * FA2 picks 8. 16..128 exceed the 8 blocks and are skipped.
 */
static void test_fp16_lse_rejects(void **state)
{
	(void)state;
	const char *tl[] = {"--preset=tilelang", "--lse-offset=1000", "--ctx=2048", "--head-dim=64", "--trials=3",
			    "--tol=1e-3", NULL};
	rec_opts o = opts_of(tl);
	rec_result r = run_opts(&o);
	assert_int_equal(r.fa2_splits, 8);
	assert_int_equal(r.nrows, 4);
	const unsigned want_rows[] = {1, 2, 4, 8}, want_skip[] = {16, 32, 64, 128};
	for (size_t i = 0; i < NELEM(want_rows); i++)
		assert_int_equal(r.rows[i].splits, want_rows[i]);
	assert_int_equal(r.nskipped, NELEM(want_skip));
	for (size_t i = 0; i < NELEM(want_skip); i++)
		assert_int_equal(r.skipped[i], want_skip[i]);
	CHECK_LE("1 split", r.rows[0].err_max, 1e-3);
	assert_true(r.rows[0].within_tol);
	for (size_t i = 1; i < r.nrows; i++) {
		CHECK_GE("2+ splits rejected", r.rows[i].err_max, 3e-3);
		assert_false(r.rows[i].within_tol);
	}
	assert_int_equal(r.recommended, 0);
	assert_false(r.rows[r.pick_row].within_tol);
	rec_result_free(&r);

	const char *ex[] = {"--preset=exact-fp64", "--lse-offset=1000", "--ctx=2048", "--head-dim=64", "--trials=3",
			    "--tol=1e-3", NULL};
	rec_opts_free(&o);
	o = opts_of(ex);
	r = run_opts(&o);
	for (size_t i = 0; i < r.nrows; i++) {
		CHECK_LE("fp64", r.rows[i].err_max, 1e-10);
		assert_true(r.rows[i].within_tol);
	}
	assert_true(r.fixed.within_tol);
	/* every count within tolerance: the most efficient, 8 */
	assert_int_equal(r.rows[r.recommended].splits, 8);
	rec_result_free(&r);

	/* the report says so visibly */
	capture c = run_cmd(tl);
	assert_int_equal(c.status, 0);
	assert_non_null(strstr(c.out, "recommended: 1 split\n"));
	assert_non_null(strstr(c.out, "fa2's choice: 8 splits, beyond tolerance"));
	capture_free(&c);
	rec_opts_free(&o);
}

/* The tool's numbers are the library's: FA2's count recomputed here with
 * the documented recipe (seed mix, FA2 layout, block_n, offset, metric)
 * gives the same error bits; the fixed-size option at FA2's batch-1 size on
 * a batch-1 shape is the same split layout as FA2's pick, so the same bits. */
static void test_recipe(void **state)
{
	(void)state;
	const char *args[] = {"--preset=fa2", "--input=fp16", "--ctx=3000", "--head-dim=80", "--heads=16",
			      "--kv-heads=4", "--lse-offset=7.5", "--trials=3", "--seed=42", NULL};
	rec_opts o = opts_of(args);
	rec_result r = run_opts(&o);
	const rec_row *w = &r.rows[r.pick_row];
	/* d = 80: block_n 128, 24 blocks; folded bhm = 1 x 4 x 1 = 4 */
	assert_int_equal(r.fa2.block_n, 128);
	assert_int_equal(r.fa2.num_n_blocks, 24);
	assert_int_equal(r.fa2.batch_nheads_mblocks, 4);
	const size_t S = w->splits, d = 80;
	size_t *b = malloc((S + 1) * sizeof *b);
	assert_non_null(b);
	CHECK_OK(skv_fa2_bounds(b, 3000, 128, S));
	double worst[REC_NMETRICS] = {0.0, 0.0, 0.0};
	double out[80];
	for (uint64_t t = 0; t < 3; t++) {
		tcase tc;
		tcase_init(&tc, 1, 3000, d, SKV_DIST_GAUSSIAN, 0.5, SKV_FP16, skv_seed_mix(42, t), 0);
		run_merge(&tc, 0, b, S, 128, 7.5, &o.cfg, &o.merge, NULL, out);
		skv_errors e;
		CHECK_OK(skv_errors_compute(&e, out, tc.out, d, o.cfg.output));
		const double m[REC_NMETRICS] = {e.norm_rel, e.max_abs, e.ulp};
		for (int k = 0; k < REC_NMETRICS; k++)
			worst[k] = m[k] > worst[k] ? m[k] : worst[k];
		tcase_free(&tc);
	}
	CHECK_BITS("err max of FA2's count", w->err_max, worst[0]);
	assert_int_equal(r.fixed.splits, w->splits);
	CHECK_BITS("fixed size = FA2's layout at batch 1", r.fixed.err_max, w->err_max);
	CHECK_BITS("fixed size median", r.fixed.err_median, w->err_median);
	/* within tolerance means the max, not the median, is <= tol */
	const double med = w->err_median, mx = w->err_max;
	assert_true(med < mx);
	rec_result_free(&r);
	o.tol_multiple = 0;
	o.tol = 0.5 * (med + mx);
	r = run_opts(&o);
	assert_false(r.rows[r.pick_row].within_tol);
	rec_result_free(&r);
	o.tol = mx;
	r = run_opts(&o);
	assert_true(r.rows[r.pick_row].within_tol);
	rec_result_free(&r);
	/* the other metrics, the ulp one in units of the output format */
	for (int k = 1; k < REC_NMETRICS; k++) {
		o.metric = (rec_metric)k;
		r = run_opts(&o);
		CHECK_BITS(rec_metric_name(o.metric), r.rows[r.pick_row].err_max, worst[k]);
		rec_result_free(&r);
	}
	free(b);
	rec_opts_free(&o);
}

/* Nothing within tolerance: bf16 output rounding alone exceeds 1e-3
 * normwise, so the default fa2 preset (bf16) cannot meet the default
 * tolerance. Exit 0, "none" in text, null in JSON. */
static void test_nothing_within(void **state)
{
	(void)state;
	const char *args[] = {"--ctx=1024", "--head-dim=64", "--trials=2", "--tol=1e-3", NULL};
	rec_opts o = opts_of(args);
	rec_result r = run_opts(&o);
	assert_int_equal(r.recommended, r.nrows);
	CHECK_GE("bf16 floor", r.floor_max, 1e-3);
	rec_result_free(&r);
	rec_opts_free(&o);
	capture c = run_cmd(args);
	assert_int_equal(c.status, 0);
	assert_non_null(strstr(c.out, "recommended: none"));
	capture_free(&c);
	const char *js[] = {"--ctx=1024", "--head-dim=64", "--trials=2", "--format=json", "--tol=1e-3", NULL};
	c = run_cmd(js);
	assert_int_equal(c.status, 0);
	assert_non_null(strstr(c.out, "\"recommended_splits\": null"));
	capture_free(&c);
}

/*
 * The default tolerance is a multiple of the floor, 2x: the threshold is
 * exactly 2 floor_max, a row is within it when its max is at most that, and
 * a bf16 preset (whose floor is above the old absolute 1e-3) gets an answer.
 * --tol=Kx scales it; a K below 1 is below the floor, so nothing passes.
 */
static void test_tol_multiple(void **state)
{
	(void)state;
	const char *args[] = {"--ctx=1024", "--head-dim=64", "--trials=2", NULL};
	rec_opts o = opts_of(args);
	assert_true(o.tol_multiple);
	CHECK_BITS("default K", o.tol, 2.0);
	rec_result r = run_opts(&o);
	CHECK_BITS("threshold", r.tol, 2.0 * r.floor_max);
	assert_true(r.recommended < r.nrows);
	for (size_t i = 0; i < r.nrows; i++)
		assert_int_equal(r.rows[i].within_tol, r.rows[i].err_max <= 2.0 * r.floor_max);
	rec_result_free(&r);
	o.tol = 0.5;
	r = run_opts(&o);
	CHECK_BITS("threshold 0.5x", r.tol, 0.5 * r.floor_max);
	assert_int_equal(r.recommended, r.nrows);
	rec_result_free(&r);
	rec_opts_free(&o);
	const char *txt[] = {"--ctx=1024", "--head-dim=64", "--trials=2", "--tol=3x", NULL};
	capture c = run_cmd(txt);
	assert_int_equal(c.status, 0);
	assert_non_null(strstr(c.out, "(3x the floor)"));
	capture_free(&c);
}

/* Same bits for any thread count. */
static void test_threads(void **state)
{
	(void)state;
	const char *a1[] = {"--preset=flashinfer", "--heads=8", "--kv-heads=2", "--ctx=1500", "--head-dim=64",
			    "--lse-offset=30", "--trials=5", "--threads=1", NULL};
	const char *a3[] = {"--preset=flashinfer", "--heads=8", "--kv-heads=2", "--ctx=1500", "--head-dim=64",
			    "--lse-offset=30", "--trials=5", "--threads=3", "--format=text", NULL};
	capture c1 = run_cmd(a1), c3 = run_cmd(a3);
	assert_int_equal(c1.status, 0);
	assert_int_equal(c3.status, 0);
	assert_int_equal(c1.nout, c3.nout);
	assert_memory_equal(c1.out, c3.out, c1.nout);
	capture_free(&c1);
	capture_free(&c3);
}

/* One candidate: no spread. Two counts in fp64: a spread at the level of
 * fp64 rounding, and the batch-1 FA2 early return. */
static void test_spread(void **state)
{
	(void)state;
	/* 8 x 32 heads fill the GPU: FA2 picks 1, and the list is {1} */
	const char *one[] = {"--batch=8", "--splits=1", "--ctx=500", "--head-dim=16", "--trials=2", NULL};
	rec_opts o = opts_of(one);
	rec_result r = run_opts(&o);
	assert_true(r.fa2_early);
	assert_int_equal(r.fa2_splits, 1);
	assert_int_equal(r.nrows, 1);
	CHECK_BITS("spread ulps", r.spread_ulps, 0.0);
	CHECK_BITS("spread rel", r.spread_norm_rel, 0.0);
	rec_result_free(&r);
	const char *two[] = {"--batch=8", "--splits=1,2", "--ctx=500", "--head-dim=16", "--trials=2",
			     "--preset=exact-fp64", NULL};
	rec_opts_free(&o);
	o = opts_of(two);
	r = run_opts(&o);
	assert_int_equal(r.nrows, 2);
	CHECK_LE("fp64 spread", r.spread_norm_rel, 1e-14);
	CHECK_GE("fp64 spread is not zero", r.spread_norm_rel, 1e-18);
	rec_result_free(&r);
	rec_opts_free(&o);
}

/* CSV: a header and one line per option, 46 fields each; JSON: the keys the
 * issue asks for, the arithmetic and the KV cache. */
static void test_formats(void **state)
{
	(void)state;
	const char *cs[] = {"--ctx=700", "--head-dim=32", "--trials=2", "--format=csv", "--input=fp16", NULL};
	capture c = run_cmd(cs);
	assert_int_equal(c.status, 0);
	size_t lines = 0;
	for (const char *p = c.out; *p; p++)
		lines += *p == '\n';
	rec_opts o = opts_of(cs);
	rec_result r = run_opts(&o);
	assert_int_equal(lines, r.nrows + 2);
	rec_opts_free(&o);
	for (const char *p = c.out; *p;) {
		size_t commas = 0;
		for (; *p && *p != '\n'; p++)
			commas += *p == ',';
		assert_int_equal(commas, 45);
		p += *p == '\n';
	}
	rec_result_free(&r);
	capture_free(&c);
	const char *js[] = {"--ctx=700", "--head-dim=32", "--trials=2", "--format=json", "--input=fp16", NULL};
	c = run_cmd(js);
	assert_int_equal(c.status, 0);
	const char *keys[] = {"\"recommended_splits\": ", "\"fa2_splits\": ", "\"candidates\": [", "\"splits\": ",
			      "\"efficiency\": ", "\"err_median\": ", "\"err_max\": ", "\"within_tol\": ",
			      "\"spread_ulps\": ", "\"seed\": 1,", "\"system\": \"fa2\"", "\"system_splits\": ", "\"tol_floor_multiple\": 2,", "\"preset\": \"fa2\"",
			      "\"gpu\": \"ieee\"}", "\"kv_cache\": {\"format\": \"none\", \"scale\": \"none\""};
	for (size_t i = 0; i < NELEM(keys); i++)
		if (!strstr(c.out, keys[i]))
			fail_msg("%s:%d: no %s in %s", __FILE__, __LINE__, keys[i], c.out);
	assert_int_equal(c.out[0], '{');
	assert_int_equal(c.out[c.nout - 2], '}');
	capture_free(&c);
}

/* Column `name` of a CSV file (no quoted fields: skv's numbers and names),
 * as doubles, in row order; returns the count. */
static size_t csv_column(double *v, size_t max, const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("%s:%d: cannot open %s", __FILE__, __LINE__, path);
	char line[8192];
	int col = -1;
	size_t n = 0;
	if (fgets(line, sizeof line, f)) {
		int k = 0;
		for (char *t = strtok(line, ",\n"); t; t = strtok(NULL, ",\n"), k++)
			if (strcmp(t, name) == 0)
				col = k;
	}
	if (col < 0)
		fail_msg("%s:%d: no column %s in %s", __FILE__, __LINE__, name, path);
	while (n < max && fgets(line, sizeof line, f)) {
		char *p = line;
		for (int k = 0; k < col; k++)
			p = strchr(p, ',') + 1;
		v[n++] = strtod(p, NULL);
	}
	fclose(f);
	return n;
}

/*
 * One measurement path: every candidate's median and max, in each metric,
 * and the floor are those of `skv run split-count` at the same point
 * (--layout=fa2 --block-size=block_n, the counts as --splits), bit for bit.
 * skv run writes shortest round-trip decimals, so strtod gives the bits back.
 */
static void test_equals_run(void **state)
{
	(void)state;
	const char *args[] = {"--preset=flashinfer", "--input=fp16", "--ctx=3000", "--head-dim=64", "--lse-offset=7.5",
			      "--trials=3", "--seed=42", "--dist=ramp", "--system=fa2", "--layout=fa2", "--math=own", NULL};
	rec_opts o = opts_of(args);
	rec_result r = run_opts(&o);
	char dir[] = "/tmp/skv_rec_runXXXXXX", splits[512] = "--splits=", out[600], block[64], csv[600];
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < r.nrows; i++)
		snprintf(splits + strlen(splits), sizeof splits - strlen(splits), "%s%u", i ? "," : "", r.rows[i].splits);
	snprintf(out, sizeof out, "--out=%s", dir);
	snprintf(block, sizeof block, "--block-size=%u", r.fa2.block_n);
	char *argv[] = {"skv", "run", "split-count", "--preset=flashinfer", "--input=fp16", "--ctx=3000", "--head-dim=64",
			"--lse-offset=7.5", "--trials=3", "--seed=42", "--dist=ramp", "--layout=fa2", "--math=own", block, splits,
			out, NULL};
	fflush(stdout);
	assert_int_equal(cli_main((int)NELEM(argv) - 1, argv), 0);
	snprintf(csv, sizeof csv, "%s/split-count.csv", dir);
	const char *cols[REC_NMETRICS] = {"norm_rel_err", "max_abs_err", "ulp_err"};
	double v[256], trial[3];
	for (int m = 0; m < REC_NMETRICS; m++) {
		o.metric = (rec_metric)m;
		rec_result q = run_opts(&o);
		const size_t n = csv_column(v, NELEM(v), csv, cols[m]);
		assert_int_equal(n, 3 * q.nrows);
		for (size_t c = 0; c < q.nrows; c++) {
			stat_summary s;
			memcpy(trial, v + 3 * c, sizeof trial);
			CHECK_OK(stats_compute(&s, trial, 3));
			CHECK_BITS(cols[m], q.rows[c].err_max, s.max);
			CHECK_BITS(cols[m], q.rows[c].err_median, s.median);
		}
		rec_result_free(&q);
	}
	/* the floor: floor_err is the norm_rel_err of the exact output rounded */
	assert_int_equal(csv_column(v, NELEM(v), csv, "floor_err"), 3 * r.nrows);
	stat_summary s;
	CHECK_OK(stats_compute(&s, v, 3));
	CHECK_BITS("floor max", r.floor_max, s.max);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	rec_result_free(&r);
	rec_opts_free(&o);
}

/*
 * Layout system: a count's row is the system's layout of that count
 * (skv_heur_layout), run through the library by hand here: contiguous for
 * SGLang (its 32-rounded lengths, trailing splits empty), interleaved
 * 128-key tiles for llama.cpp CUDA (skv_split_kernel_tiled), and
 * FlashInfer's own plan measured apart when its chunk is not the layout of
 * its count. Same bits as the tool.
 */
static double by_hand(const rec_opts *o, skv_heur_system sys, unsigned S, size_t block, int own)
{
	skv_heur_plan p;
	if (own)
		CHECK_OK(skv_heur_splits(&p, NULL, 0, sys, &o->heur));
	else
		CHECK_OK(skv_heur_layout(&p, NULL, 0, sys, &o->heur, S));
	size_t *b = malloc(p.nbounds * sizeof *b);
	assert_non_null(b);
	if (own)
		CHECK_OK(skv_heur_splits(&p, b, p.nbounds, sys, &o->heur));
	else
		CHECK_OK(skv_heur_layout(&p, b, p.nbounds, sys, &o->heur, S));
	double worst = 0.0, out[64], lse;
	for (uint64_t t = 0; t < o->trials; t++) {
		tcase tc;
		tcase_init(&tc, 1, o->ctx, o->head_dim, o->dist, o->score_scale, o->cfg.input, skv_seed_mix(o->seed, t), 0);
		skv_config cfg = o->cfg; /* the math seed of trial t, as seeds.c gives it */
		cfg.math_seed = cfg.math == SKV_MATH_EXACT ? 0 : skv_seed_mix(skv_seed_mix(o->seed, t), 3);
		skv_partials sp;
		CHECK_OK(skv_partials_init(&sp, p.splits, o->head_dim));
		CHECK_OK(skv_split_kernel_tiled(&sp, &tc.p, 0, b, p.nbounds - 1, p.splits, block, o->lse_offset, &cfg));
		CHECK_OK(skv_partials_store(&sp, &sp, &cfg));
		CHECK_OK(skv_merge_run(out, &lse, &sp, &o->merge, &cfg));
		skv_errors e;
		CHECK_OK(skv_errors_compute(&e, out, tc.out, o->head_dim, o->cfg.output));
		worst = e.norm_rel > worst ? e.norm_rel : worst;
		skv_partials_free(&sp);
		tcase_free(&tc);
	}
	free(b);
	return worst;
}

static void test_system_layouts(void **state)
{
	(void)state;
	const char *sg[] = {"--preset=sglang", "--ctx=1000", "--head-dim=64", "--heads=8", "--kv-heads=2", "--trials=2",
			    "--splits=3,30", NULL};
	rec_opts o = opts_of(sg);
	assert_int_equal(o.system, SKV_HEUR_SGLANG);
	rec_result r = run_opts(&o);
	for (size_t i = 0; i < r.nrows; i++)
		CHECK_BITS("sglang", r.rows[i].err_max, by_hand(&o, SKV_HEUR_SGLANG, r.rows[i].splits, r.fa2.block_n, 0));
	rec_result_free(&r);
	rec_opts_free(&o);
	const char *ll[] = {"--preset=llamacpp-cuda", "--ctx=1000", "--head-dim=64", "--heads=8", "--kv-heads=2",
			    "--trials=2", "--splits=3,5", NULL};
	o = opts_of(ll);
	assert_int_equal(o.system, SKV_HEUR_LLAMACPP_CUDA);
	r = run_opts(&o);
	assert_int_equal(r.plan.tile, 128);
	for (size_t i = 0; i < r.nrows; i++)
		CHECK_BITS("llamacpp-cuda", r.rows[i].err_max,
			   by_hand(&o, SKV_HEUR_LLAMACPP_CUDA, r.rows[i].splits, r.fa2.block_n, 0));
	rec_result_free(&r);
	rec_opts_free(&o);
	/* FlashInfer at batch 4: its chunk search gives chunks whose layout is
	 * not that of their count, so the plan is measured apart */
	const char *fi[] = {"--preset=flashinfer", "--ctx=3000", "--head-dim=64", "--heads=8", "--kv-heads=2",
			    "--batch=4", "--sms=8", "--trials=2", NULL};
	o = opts_of(fi);
	r = run_opts(&o);
	skv_heur_plan forced;
	CHECK_OK(skv_heur_layout(&forced, NULL, 0, SKV_HEUR_FLASHINFER, &o.heur, r.plan.splits));
	if (forced.span == r.plan.span) {
		assert_true(r.pick_row < r.nrows);
	} else {
		assert_int_equal(r.pick_row, r.nrows);
		CHECK_BITS("flashinfer's own plan", r.own.err_max,
			   by_hand(&o, SKV_HEUR_FLASHINFER, r.plan.splits, r.fa2.block_n, 1));
	}
	rec_result_free(&r);
	rec_opts_free(&o);
}

/*
 * The floor rounds the truth with skv_dd_round, the library's one rounding:
 * at fp16's overflow threshold 65520 (the midpoint of 65504 and 2^16) the
 * truth's low part decides, so 65520 - 2^-40 rounds to 65504 (an error of
 * 16 - 2^-40) and 65520 + 2^-40 to infinity. A rounding of hi alone (the
 * tie to even goes to 2^16, that is inf) gets the first wrong.
 */
static void test_floor_overflow_tie(void **state)
{
	(void)state;
	skv_errors fe;
	skv_dd below[2] = {{65520.0, -0x1p-40}, {1.0, 0.0}}, above[2] = {{65520.0, 0x1p-40}, {1.0, 0.0}};
	CHECK_OK(measure_floor(&fe, below, 2, SKV_FP16));
	CHECK_BITS("below the tie", fe.max_abs, 16.0 - 0x1p-40);
	CHECK_OK(measure_floor(&fe, above, 2, SKV_FP16));
	CHECK_BITS("above the tie", fe.max_abs, INFINITY);
	/* in bf16 (8 bits) 65520 is not a midpoint: up to 2^16; in fp32 it is a value */
	CHECK_OK(measure_floor(&fe, below, 2, SKV_BF16));
	CHECK_BITS("bf16 rounds up to 2^16", fe.max_abs, 16.0 + 0x1p-40);
	CHECK_OK(measure_floor(&fe, below, 2, SKV_FP32));
	CHECK_BITS("fp32", fe.max_abs, 0x1p-40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),         cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_wrapper_streams), cmocka_unit_test(test_help),
		cmocka_unit_test(test_fp16_lse_rejects), cmocka_unit_test(test_recipe),
		cmocka_unit_test(test_nothing_within), cmocka_unit_test(test_threads),
		cmocka_unit_test(test_spread),         cmocka_unit_test(test_formats),
		cmocka_unit_test(test_equals_run),     cmocka_unit_test(test_floor_overflow_tie),
		cmocka_unit_test(test_tol_multiple),     cmocka_unit_test(test_system_layouts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
