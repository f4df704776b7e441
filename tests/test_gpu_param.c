/* test_gpu_param.c - the program's --gpu: a row is the library run with skv_config.gpu set, presets on CUDA cores ignore it, refusals say why, recommend takes it. */
#include "testutil.h"
#include "cli/cli.h"
#include "core/stats.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* A spec from an experiment and blank-separated flags, checked: the status,
 * and the message in e; on failure s is freed. */
static int try_spec(run_spec *s, const char *exp, const char *flags, message *e)
{
	char *buf = strdup(flags), *argv[32], *save = NULL;
	int argc = 0;
	for (char *t = strtok_r(buf, " ", &save); t && argc < (int)NELEM(argv); t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	int st = catalog_spec_init(s, exp, e);
	if (st == 0 && ((st = spec_args(s, argc, argv, e)) != 0 || (st = spec_check(s, e)) != 0))
		spec_free(s);
	free(buf);
	return st;
}

static void run_spec_ok(sweep_result *r, run_spec *s, const char *exp, const char *flags)
{
	message e = {NULL};
	if (try_spec(s, exp, flags, &e) != 0)
		fail_msg("%s:%d: skv run %s %s: %s", __FILE__, __LINE__, exp, flags, msg_text(&e));
	if (sweep_run(r, s, NULL, &e) != 0)
		fail_msg("%s:%d: engine: %s", __FILE__, __LINE__, msg_text(&e));
}

/* Rows of --gpu=ieee,h100 (points 0 and 1) against the library called by
 * hand with cfg.gpu set, every metric bit for bit; and the h100 rows are
 * not the IEEE rows (the parameter reaches the kernel). */
static void test_row_is_library(void **state)
{
	(void)state;
	const uint64_t seed = 7;
	const size_t n = 700, d = 40, S = 3, T = 2;
	run_spec s;
	sweep_result r;
	run_spec_ok(&r, &s, "split-count",
		    "--ctx=700 --head-dim=40 --splits=3 --input=bf16 --p=bf16 --partial=fp32 --lse=fp32 "
		    "--gpu=ieee,h100 --trials=2 --seed=7 --threads=2");
	assert_int_equal(r.nrows, 2 * T);
	size_t differ = 0;
	for (size_t pt = 0; pt < 2; pt++)
		for (uint64_t t = 0; t < T; t++) {
			tcase tc;
			tcase_init(&tc, 1, n, d, SKV_DIST_GAUSSIAN, 0.5, SKV_BF16, skv_seed_mix(seed, t), 0);
			size_t bounds[4];
			CHECK_OK(layout_bounds(bounds, n, S, LAYOUT_EVEN, skv_seed_mix(skv_seed_mix(seed, t), 1), 128, 0));
			skv_config cfg = skv_config_uniform(SKV_FP32);
			cfg.input = cfg.p = SKV_BF16;
			cfg.gpu = pt ? SKV_GPU_H100 : SKV_GPU_IEEE;
			const skv_merge_spec ms = skv_merge_spec_default();
			double out[40];
			run_merge(&tc, 0, bounds, S, 128, 0.0, &cfg, &ms, NULL, out);
			skv_errors e;
			CHECK_OK(skv_errors_compute(&e, out, tc.out, d, SKV_FP32));
			const sweep_row *row = &r.rows[pt * T + t];
			assert_int_equal(row->point, pt);
			assert_int_equal(row->trial, t);
			CHECK_BITS("max_abs_err", row->err.max_abs, e.max_abs);
			CHECK_BITS("max_rel_err", row->err.max_rel, e.max_rel);
			CHECK_BITS("norm_rel_err", row->err.norm_rel, e.norm_rel);
			CHECK_BITS("ulp_err", row->err.ulp, e.ulp);
			if (pt)
				differ += memcmp(&row->err.norm_rel, &r.rows[t].err.norm_rel, sizeof(double)) != 0;
			tcase_free(&tc);
		}
	if (differ == 0)
		fail_msg("%s:%d: the h100 rows equal the IEEE rows: --gpu did not reach the kernel", __FILE__, __LINE__);
	sweep_result_free(&r);
	spec_free(&s);
}

/* The CSV of a spec, as skv run writes it. */
static char *csv_text(const run_spec *s, const sweep_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	CHECK_OK(output_csv(f, s, r));
	fclose(f);
	return buf;
}

/* Field k (from 0) of a CSV line, into buf. */
static const char *field(char *buf, size_t n, const char *line, int k)
{
	for (int i = 0; i < k; i++)
		line = strchr(line, ',') + 1;
	const size_t w = strcspn(line, ",\n");
	snprintf(buf, n, "%.*s", (int)(w < n ? w : n - 1), line);
	return buf;
}

/* A preset whose kernels use CUDA cores (flashinfer, vllm-v2) runs IEEE
 * whatever --gpu asks, and its row says so; a tensor-core preset (fa2)
 * runs the GPU's model. The same rows as a run at --gpu=ieee for the
 * CUDA-core presets, bit for bit; the output in fp32, so that fa2's rows
 * show the h100 arithmetic rather than the bf16 rounding of the output. */
static void test_cuda_cores_ignore_gpu(void **state)
{
	(void)state;
	const char *flags = "--preset=flashinfer,vllm-v2,fa2 --ctx=600 --head-dim=64 --splits=1,4 --lse-offset=0 --output=fp32 "
			    "--trials=2 --gpu=%s";
	char f1[256], f2[256];
	snprintf(f1, sizeof f1, flags, "h100");
	snprintf(f2, sizeof f2, flags, "ieee");
	run_spec s1, s2;
	sweep_result r1, r2;
	run_spec_ok(&r1, &s1, "systems", f1);
	run_spec_ok(&r2, &s2, "systems", f2);
	assert_int_equal(r1.nrows, r2.nrows);
	char *c1 = csv_text(&s1, &r1), *c2 = csv_text(&s2, &r2);
	int gcol = -1, pcol = -1;
	char name[64], g[64], p[64];
	for (int k = 0; k < 64 && gcol < 0; k++) {
		if (strcmp(field(name, sizeof name, c1, k), "gpu") == 0)
			gcol = k;
		if (strcmp(name, "preset") == 0)
			pcol = k;
	}
	assert_true(gcol > 0 && pcol > 0);
	size_t tc_rows = 0, tc_differ = 0;
	const char *l1 = strchr(c1, '\n') + 1, *l2 = strchr(c2, '\n') + 1;
	for (size_t i = 0; i < r1.nrows; i++, l1 = strchr(l1, '\n') + 1, l2 = strchr(l2, '\n') + 1) {
		field(p, sizeof p, l1, pcol);
		field(g, sizeof g, l1, gcol);
		const int tc = strcmp(p, "fa2") == 0;
		if (strcmp(g, tc ? "h100" : "ieee") != 0)
			fail_msg("%s:%d: row %zu: preset %s has gpu %s", __FILE__, __LINE__, i, p, g);
		if (!tc) {
			CHECK_BITS(p, r1.rows[i].err.norm_rel, r2.rows[i].err.norm_rel);
			CHECK_BITS(p, r1.rows[i].err.max_abs, r2.rows[i].err.max_abs);
		} else {
			tc_rows++;
			tc_differ += memcmp(&r1.rows[i].err.norm_rel, &r2.rows[i].err.norm_rel, sizeof(double)) != 0;
		}
	}
	assert_int_equal(tc_rows, 2 * 2);
	assert_true(tc_differ > 0);
	free(c1);
	free(c2);
	sweep_result_free(&r1);
	sweep_result_free(&r2);
	spec_free(&s1);
	spec_free(&s2);
}

/* Every refusal of a --gpu configuration: its one-line message, exactly. */
static void test_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *exp, *flags, *msg;
	} cases[] = {
		{"split-count", "--gpu=h101", "skv: unknown GPU 'h101' for --gpu (expected ieee, v100, a100, ada, h100, b200)"},
		{"split-count", "--gpu=h100",
		 "skv: --gpu=h100 has no tensor cores for input fp32 with accumulator fp32 (fp16, bf16, tf32 and FP8 "
		 "inputs as each GPU takes them; the accumulator fp32, or fp16)"},
		{"split-count", "--gpu=v100 --input=bf16 --p=bf16",
		 "skv: --gpu=v100 has no tensor cores for input bf16 with accumulator fp32 (fp16, bf16, tf32 and FP8 "
		 "inputs as each GPU takes them; the accumulator fp32, or fp16)"},
		{"split-count", "--gpu=a100 --input=e4m3 --p=e4m3",
		 "skv: --gpu=a100 has no tensor cores for input e4m3 with accumulator fp32 (fp16, bf16, tf32 and FP8 "
		 "inputs as each GPU takes them; the accumulator fp32, or fp16)"},
		{"split-count", "--gpu=h100 --input=bf16 --p=fp32",
		 "skv: --gpu=h100 needs P in the input format (P is an MMA operand): --p=fp32 with --input=bf16"},
		{"split-count", "--gpu=h100 --input=bf16 --p=bf16 --formula=qscale",
		 "skv: --gpu=h100 does not take --formula=qscale (its q or P are not MMA operands: a CUDA-core kernel)"},
		{"systems", "--preset=fa2 --gpu=h100 --acc=fp64",
		 "skv: --gpu=h100 needs --acc=compute (the accumulator is the MMA's)"},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		run_spec s;
		message e = {NULL};
		const int st = try_spec(&s, cases[i].exp, cases[i].flags, &e);
		if (st == SKV_OK || strcmp(msg_text(&e), cases[i].msg) != 0)
			fail_msg("%s:%d: %s %s: status %d, message '%s', want '%s'", __FILE__, __LINE__, cases[i].exp,
				 cases[i].flags, st, msg_text(&e), cases[i].msg);
		if (st == SKV_OK)
			spec_free(&s);
		msg_free(&e);
	}
}

/* recommend --gpu: the text says which arithmetic ran (or that a CUDA-core
 * preset's does not change), and its candidates are skv run's rows at the
 * same flags, bit for bit. */
static void test_recommend_gpu(void **state)
{
	(void)state;
	const char *args[] = {"recommend", "--gpu=h100", "--ctx=2048", "--head-dim=64", "--trials=2", NULL};
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len), *err = fopen("/dev/null", "w");
	assert_int_equal(rec_main_io(5, (char **)args, o, err), 0);
	fclose(o);
	assert_non_null(strstr(out, "q.k and P.V on h100 tensor cores (wgmma m64nNk16 .bf16 (FA3), mma.sync m16n8k16"));
	free(out);
	const char *cc[] = {"recommend", "--gpu=h100", "--preset=flashinfer", "--ctx=2048", "--head-dim=64",
			    "--trials=2", NULL};
	o = open_memstream(&out, &len);
	assert_int_equal(rec_main_io(6, (char **)cc, o, err), 0);
	fclose(o);
	assert_non_null(strstr(out, "q.k and P.V in IEEE fp32: flashinfer's kernels use CUDA cores, --gpu=h100 does not apply"));
	free(out);
	/* the CSV and JSON name the arithmetic too */
	const char *cs[] = {"recommend", "--gpu=h100", "--ctx=2048", "--head-dim=64", "--trials=2", "--format=csv", NULL};
	o = open_memstream(&out, &len);
	assert_int_equal(rec_main_io(6, (char **)cs, o, err), 0);
	fclose(o);
	assert_non_null(strstr(out, ",empty,metric,gpu,kv_cache,kv_scale,kv_deq,kv_scale_value,"));
	assert_non_null(strstr(out, ",norm_rel_err,h100,none,none,values,0,"));
	free(out);
	const char *js[] = {"recommend", "--gpu=h100", "--ctx=2048", "--head-dim=64", "--trials=2", "--format=json", NULL};
	o = open_memstream(&out, &len);
	assert_int_equal(rec_main_io(6, (char **)js, o, err), 0);
	fclose(o);
	assert_non_null(strstr(out, "\"gpu\": \"h100\"}"));
	free(out);
	const char *bad[] = {"recommend", "--gpu=b300", NULL};
	o = open_memstream(&out, &len);
	assert_int_not_equal(rec_main_io(2, (char **)bad, err, o), 0);
	fclose(o);
	assert_non_null(strstr(out, "unknown GPU 'b300' for --gpu"));
	free(out);
	fclose(err);

	rec_opts ro;
	int help;
	message e = {NULL};
	CHECK_OK(rec_parse(&ro, &help, 5, (char **)args, &e));
	assert_int_equal(ro.cfg.gpu, SKV_GPU_H100);
	rec_result rr;
	CHECK_OK(rec_run(&rr, &ro, NULL, &e));
	char flags[512];
	int k = snprintf(flags, sizeof flags, "--preset=fa2 --gpu=h100 --ctx=2048 --head-dim=64 --trials=2 --layout=fa2 "
					      "--block-size=%u --splits=", rr.fa2.block_n);
	for (size_t i = 0; i < rr.nrows; i++)
		k += snprintf(flags + k, sizeof flags - (size_t)k, "%s%u", i ? "," : "", rr.rows[i].splits);
	run_spec s;
	sweep_result r;
	run_spec_ok(&r, &s, "split-count", flags);
	assert_int_equal(r.nrows, 2 * rr.nrows);
	for (size_t i = 0; i < rr.nrows; i++) {
		double v[2] = {r.rows[2 * i].err.norm_rel, r.rows[2 * i + 1].err.norm_rel};
		stat_summary st;
		CHECK_OK(stats_compute(&st, v, 2));
		CHECK_BITS("recommend's max against skv run's", rr.rows[i].err_max, st.max);
	}
	sweep_result_free(&r);
	spec_free(&s);
	rec_result_free(&rr);
	rec_opts_free(&ro);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row_is_library),
		cmocka_unit_test(test_cuda_cores_ignore_gpu),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_recommend_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
