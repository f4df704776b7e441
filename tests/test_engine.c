/* test_engine.c - the experiment engine: sharing of instances and kernel runs, reproduction of a row, determinism, physics. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* A checked spec from an experiment name and blank-separated flags. */
static void make_spec(run_spec *s, const char *exp, const char *flags)
{
	message e = {NULL};
	char *buf = strdup(flags), *argv[32], *save = NULL;
	int argc = 0;
	for (char *t = strtok_r(buf, " ", &save); t && argc < (int)(sizeof argv / sizeof argv[0]);
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	int st = catalog_spec_init(s, exp, &e);
	if (st == 0)
		st = spec_args(s, argc, argv, &e);
	if (st == 0)
		st = spec_check(s, &e);
	free(buf);
	if (st != 0)
		fail_msg("%s:%d: skv run %s %s: %s", __FILE__, __LINE__, exp, flags, msg_text(&e));
}

static void run_engine(sweep_result *r, const run_spec *s)
{
	message e = {NULL};
	if (sweep_run(r, s, NULL, &e) != 0)
		fail_msg("%s:%d: engine: %s", __FILE__, __LINE__, msg_text(&e));
}

static char *csv_of(const run_spec *s, const sweep_result *r)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	assert_int_equal(output_csv(f, s, r), SKV_OK);
	fclose(f);
	return buf;
}

static void test_sharing(void **state)
{
	(void)state;
	run_spec s;
	sweep_result r;
	/* 3 split counts x 4 partial x 2 lse formats x 2 offsets, 3 trials: one
	 * instance (and one truth) per trial, one kernel run per trial, split
	 * count and offset, whatever the storage formats. */
	make_spec(&s, "split-count",
		  "--ctx=256 --head-dim=16 --splits=1,4,16 --partial=fp16,bf16,fp32,fp64 --lse=fp16,fp64 "
		  "--lse-offset=0,10 --trials=3 --threads=2");
	run_engine(&r, &s);
	assert_int_equal(r.npoints, 3 * 4 * 2 * 2);
	assert_int_equal(r.nrows, 3 * 4 * 2 * 2 * 3);
	assert_int_equal(r.n_instances, 3);
	assert_int_equal(r.n_truth_calls, 3);
	assert_int_equal(r.n_kernel_runs, 3 * 2 * 3);
	for (size_t k = 0; k < r.nrows; k++) {
		assert_int_equal(r.rows[k].point, k / 3);
		assert_int_equal(r.rows[k].trial, k % 3);
	}
	sweep_result_free(&r);
	spec_free(&s);
	/* A new head dimension is a new instance; a new merge or order is not
	 * even a new kernel run. */
	make_spec(&s, "reduction-order",
		  "--ctx=128 --head-dim=8,16 --splits=8 --combine=fp16,fp32 --trials=2 --threads=1");
	run_engine(&r, &s);
	assert_int_equal(r.n_instances, 4);
	assert_int_equal(r.n_truth_calls, 4);
	assert_int_equal(r.n_kernel_runs, 4);
	assert_int_equal(r.nrows, 2 * 2 * 2 * 2 * 7 * 2); /* head-dim, partial, combine, merge, order, trials */
	sweep_result_free(&r);
	spec_free(&s);
	/* Online kind: causal instances have ctx query rows and one truth per
	 * row; the decode instance one. No split kernel. */
	make_spec(&s, "block-size",
		  "--ctx=16 --head-dim=8 --dist=gaussian --block-size=1,4,16 --causal=0,1 --compute=fp32,fp64 --trials=2");
	run_engine(&r, &s);
	assert_int_equal(r.n_instances, 4);
	assert_int_equal(r.n_truth_calls, 2 * (1 + 16));
	assert_int_equal(r.n_kernel_runs, 0);
	assert_int_equal(r.nrows, 3 * 2 * 2 * 2);
	sweep_result_free(&r);
	spec_free(&s);
}

/* Row (point, trial) computed directly from the library with the seeds the
 * engine documents, bit for bit. */
static void test_reproduce_row(void **state)
{
	(void)state;
	run_spec s;
	sweep_result r;
	make_spec(&s, "uneven-splits",
		  "--ctx=300 --head-dim=8 --splits=7 --layout=random,holes --merge=pairwise --order=random "
		  "--partial=bf16 --lse=fp16 --lse-offset=3.5 --trials=3 --seed=42 --threads=2");
	run_engine(&r, &s);
	assert_int_equal(r.nrows, 2 * 3);
	const uint64_t seed = 42, trial = 2;
	const size_t n = 300, d = 8, S = 7;
	skv_problem p;
	assert_int_equal(skv_problem_init(&p, 1, n, d, SKV_DIST_GAUSSIAN, 0.5, SKV_FP32, skv_seed_mix(seed, trial)),
			 SKV_OK);
	skv_dd tout[8], tlse;
	assert_int_equal(skv_truth_range(tout, &tlse, &p, 0, 0, n, SKV_TRUTH_PREC), SKV_OK);
	size_t bounds[8];
	assert_int_equal(layout_bounds(bounds, n, S, LAYOUT_RANDOM,
					       skv_seed_mix(skv_seed_mix(seed, trial), 1), 128, 0),
			 SKV_OK);
	skv_config cfg = skv_config_uniform(SKV_FP32);
	cfg.partial = SKV_BF16;
	cfg.lse = SKV_FP16;
	skv_partials sp;
	assert_int_equal(skv_partials_init(&sp, S, d), SKV_OK);
	assert_int_equal(skv_split_kernel(&sp, &p, 0, bounds, S, 128, 3.5, &cfg), SKV_OK);
	assert_int_equal(skv_partials_store(&sp, &sp, &cfg), SKV_OK);
	skv_merge_spec ms = skv_merge_spec_default();
	ms.merge = SKV_MERGE_PAIRWISE;
	ms.order = SKV_ORDER_RANDOM;
	ms.seed = skv_seed_mix(skv_seed_mix(seed, trial), 2);
	double out[8], lse;
	assert_int_equal(skv_merge_run(out, &lse, &sp, &ms, &cfg), SKV_OK);
	skv_errors e;
	assert_int_equal(skv_errors_compute(&e, out, tout, d, SKV_FP32), SKV_OK);
	const sweep_row *row = &r.rows[0 * 3 + trial]; /* point 0: layout random */
	assert_int_equal(row->trial, trial);
	const double got[4] = {row->err.max_abs, row->err.max_rel, row->err.norm_rel, row->err.ulp};
	const double want[4] = {e.max_abs, e.max_rel, e.norm_rel, e.ulp};
	for (size_t i = 0; i < 4; i++)
		if (memcmp(&got[i], &want[i], sizeof got[i]) != 0)
			fail_msg("%s:%d: metric %zu: engine %a, direct %a", __FILE__, __LINE__, i, got[i], want[i]);
	/* lse_err against the truth plus the offset, in double-double. */
	double lerr = fabs((lse - tlse.hi - 3.5) - tlse.lo);
	if (!(fabs(row->lse_err - lerr) <= 1e-12 * (1 + lerr)))
		fail_msg("%s:%d: lse_err engine %a, direct %a", __FILE__, __LINE__, row->lse_err, lerr);
	assert_true(isfinite(row->err.norm_rel) && row->err.norm_rel > 0);
	skv_partials_free(&sp);
	skv_problem_free(&p);
	sweep_result_free(&r);
	spec_free(&s);
}

/* The CSV is the same for 1 and 2 threads, and on a second run. */
static void test_determinism(void **state)
{
	(void)state;
	const char *flags[] = {
		"--ctx=512 --head-dim=16 --splits=3,16 --layout=even,random,skewed,holes --order=seq,random "
		"--merge=onepass,pairwise,mean --partial=fp16,fp32 --trials=3 --threads=1",
		"--ctx=512 --head-dim=16 --splits=3,16 --layout=even,random,skewed,holes --order=seq,random "
		"--merge=onepass,pairwise,mean --partial=fp16,fp32 --trials=3 --threads=2",
	};
	char *csv[3];
	for (size_t i = 0; i < 3; i++) {
		run_spec s;
		sweep_result r;
		make_spec(&s, "uneven-splits", flags[i == 0 ? 0 : 1]);
		run_engine(&r, &s);
		csv[i] = csv_of(&s, &r);
		sweep_result_free(&r);
		spec_free(&s);
	}
	assert_true(strlen(csv[0]) > 1000);
	assert_string_equal(csv[0], csv[1]);
	assert_string_equal(csv[1], csv[2]);
	for (size_t i = 0; i < 3; i++)
		free(csv[i]);
	/* Online kind too. */
	for (size_t i = 0; i < 2; i++) {
		run_spec s;
		sweep_result r;
		make_spec(&s, "block-size",
			  i ? "--ctx=24 --head-dim=8 --block-size=1,5 --causal=0,1 --compute=bf16,fp32 --trials=2 --threads=2"
			    : "--ctx=24 --head-dim=8 --block-size=1,5 --causal=0,1 --compute=bf16,fp32 --trials=2 --threads=1");
		run_engine(&r, &s);
		csv[i] = csv_of(&s, &r);
		sweep_result_free(&r);
		spec_free(&s);
	}
	assert_string_equal(csv[0], csv[1]);
	free(csv[0]);
	free(csv[1]);
}

/* Every row's norm_rel_err below `hi` (or above `lo`). */
static void check_rows(const sweep_result *r, double lo, double hi, const char *what, int line)
{
	for (size_t k = 0; k < r->nrows; k++) {
		double x = r->rows[k].err.norm_rel;
		if (!(x >= lo && x <= hi))
			fail_msg("%s:%d: %s: row %zu (point %zu trial %llu) norm_rel_err %a (%g) outside [%a, %a]",
				 __FILE__, line, what, k, r->rows[k].point, (unsigned long long)r->rows[k].trial, x, x,
				 lo, hi);
	}
}

static void test_physics_fp64(void **state)
{
	(void)state;
	run_spec s;
	sweep_result r;
	/* Everything fp64 at lse-offset 0: the weighted merges are exact to
	 * roundoff for every order, base, layout and split count. */
	make_spec(&s, "merge-rule",
		  "--ctx=256,1000 --head-dim=8 --splits=1,7,64 --merge=onepass,pairwise "
		  "--order=seq,rev,tree,random,asc,desc --lse-base=e,2 --layout=even,holes --trials=2");
	run_engine(&r, &s);
	check_rows(&r, 0.0, 1e-14, "fp64 weighted merges", __LINE__);
	for (size_t k = 0; k < r.nrows; k++)
		if (!(r.rows[k].lse_err <= 1e-12))
			fail_msg("%s:%d: row %zu lse_err %a", __FILE__, __LINE__, k, r.rows[k].lse_err);
	sweep_result_free(&r);
	spec_free(&s);
	/* The online softmax in fp64, causal and not. */
	make_spec(&s, "block-size",
		  "--ctx=48 --head-dim=8 --block-size=1,7,48 --causal=0,1 --input=fp64 --compute=fp64 --p=fp64 "
		  "--output=fp64 --trials=2");
	run_engine(&r, &s);
	check_rows(&r, 0.0, 1e-14, "fp64 online softmax", __LINE__);
	sweep_result_free(&r);
	spec_free(&s);
}

static void test_physics_fp16_lse(void **state)
{
	(void)state;
	run_spec s;
	sweep_result r;
	/* An fp16 LSE near 1000 has spacing 0.5: each weight is off by up to
	 * exp(0.25), so the merged output is off by far more than 1e-3. */
	make_spec(&s, "lse-magnitude", "--ctx=512 --head-dim=32 --splits=8,64 --lse-offset=1000 --lse=fp16 --trials=3");
	run_engine(&r, &s);
	check_rows(&r, 1e-3, INFINITY, "fp16 LSE at offset 1000", __LINE__);
	sweep_result_free(&r);
	spec_free(&s);
	/* Beyond fp16's range (65504) the stored LSE is inf: the error is NaN or
	 * inf, never a finite small number. */
	make_spec(&s, "lse-magnitude", "--ctx=64 --head-dim=8 --splits=4 --lse-offset=100000 --lse=fp16 --trials=1");
	run_engine(&r, &s);
	for (size_t k = 0; k < r.nrows; k++)
		if (isfinite(r.rows[k].err.norm_rel) && isfinite(r.rows[k].lse_err))
			fail_msg("%s:%d: overflowed fp16 LSE gave finite errors %a %a", __FILE__, __LINE__,
				 r.rows[k].err.norm_rel, r.rows[k].lse_err);
	sweep_result_free(&r);
	spec_free(&s);
}

static void test_physics_controls(void **state)
{
	(void)state;
	run_spec s;
	sweep_result r;
	/* Seed 002's setting: the mean and the sum at least 100x worse than
	 * either weighted merge, trial by trial, in both metrics. */
	make_spec(&s, "merge-rule", "--trials=4");
	run_engine(&r, &s);
	assert_int_equal(r.npoints, 4); /* onepass, pairwise, mean, sum */
	for (uint64_t t = 0; t < 4; t++) {
		const sweep_row *one = &r.rows[0 * 4 + t], *pw = &r.rows[1 * 4 + t];
		const sweep_row *mean = &r.rows[2 * 4 + t], *sum = &r.rows[3 * 4 + t];
		double good = fmax(one->err.norm_rel, pw->err.norm_rel);
		double bad = fmin(mean->err.norm_rel, sum->err.norm_rel);
		if (!(bad >= 100 * good))
			fail_msg("%s:%d: trial %llu: weighted %a, controls %a", __FILE__, __LINE__,
				 (unsigned long long)t, good, bad);
		good = fmax(one->err.max_abs, pw->err.max_abs);
		bad = fmin(mean->err.max_abs, sum->err.max_abs);
		if (!(bad >= 100 * good))
			fail_msg("%s:%d: trial %llu: weighted max_abs %a, controls %a", __FILE__, __LINE__,
				 (unsigned long long)t, good, bad);
	}
	sweep_result_free(&r);
	spec_free(&s);
}

/* No output stored in a format beats the exact answer rounded once to it,
 * element by element, so norm_rel_err >= floor_err on every finite row; and
 * the floor is the format's: about u for bf16 and fp16, tiny for fp64. */
static void test_floor(void **state)
{
	(void)state;
	run_spec s;
	sweep_result r;
	make_spec(&s, "systems", "--ctx=512 --head-dim=64 --splits=1,8 --lse-offset=0,500 --trials=2");
	run_engine(&r, &s);
	param_value v[NPARAMS];
	for (size_t k = 0; k < r.nrows; k++) {
		const sweep_row *row = &r.rows[k];
		spec_values(&s, row->point, v);
		double u = skv_format_unit_roundoff((skv_format)v[P_OUTPUT].u);
		if (!(row->floor.norm_rel > 0.0 && row->floor.norm_rel <= u))
			fail_msg("%s:%d: row %zu: floor %a outside (0, u = %a]", __FILE__, __LINE__, k, row->floor.norm_rel, u);
		if (v[P_OUTPUT].u != SKV_FP64 && !(row->floor.norm_rel >= u / 16))
			fail_msg("%s:%d: row %zu: floor %a far below u = %a", __FILE__, __LINE__, k, row->floor.norm_rel, u);
		if (!isnan(row->err.norm_rel) && !(row->err.norm_rel >= row->floor.norm_rel))
			fail_msg("%s:%d: row %zu: error %a below the floor %a", __FILE__, __LINE__, k, row->err.norm_rel,
				 row->floor.norm_rel);
	}
	sweep_result_free(&r);
	spec_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sharing),       cmocka_unit_test(test_reproduce_row),
		cmocka_unit_test(test_determinism),   cmocka_unit_test(test_physics_fp64),
		cmocka_unit_test(test_physics_fp16_lse), cmocka_unit_test(test_physics_controls),
		cmocka_unit_test(test_floor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
