/* test_kvcache_cli.c - the program's KV cache: both references in the CSV, the presets through run and recommend, bad caches refused in one line. */
#include "procutil.h"
#include "io/csv.h"

static char *scratch;

/* The value of column `col` in CSV line `row` (0: the first data row) of
 * text, into buf (the program's CSV reader); NULL when there is none. */
static const char *cell(char *buf, size_t n, const char *text, size_t row, const char *col)
{
	csv_table t;
	message e = {NULL};
	size_t c;
	if (csv_parse(&t, text, strlen(text), "test.csv", &e) != SKV_OK)
		fail_msg("%s:%d: unreadable CSV: %s", __FILE__, __LINE__, e.msg);
	const char *v = csv_find(&t, col, &c) == SKV_OK ? csv_get(&t, row, c) : NULL;
	if (v)
		snprintf(buf, n, "%s", v);
	csv_free(&t);
	return v ? buf : NULL;
}

/* Runs skv with argv into scratch/NAME and returns NAME/EXP.csv's text. */
static char *run_csv(char **argv, const char *exp)
{
	char *err = NULL;
	int st = proc_run(argv, &err, NULL);
	if (st != 0)
		fail_msg("%s:%d: skv %s exited %d: %s", __FILE__, __LINE__, argv[1], st, err);
	free(err);
	char file[80];
	snprintf(file, sizeof file, "%s.csv", exp);
	char *csv = fs_get(scratch, file, NULL);
	assert_non_null(csv);
	return csv;
}

/* Without a cache the orig_ columns are the stored-cache columns, digit for
 * digit; with an fp4 cache the error against the original K and V is the
 * cache's, many times the kernel's on the stored cache. */
static void test_two_references(void **state)
{
	(void)state;
	char out[4200], a[64], b[64];
	snprintf(out, sizeof out, "--out=%s", scratch);
	char *none[] = {"skv", "run", "split-count", "--ctx=512", "--splits=1,8", "--trials=2", "--partial=fp16",
			"--lse=fp32", out, NULL};
	char *csv = run_csv(none, "split-count");
	for (size_t r = 0; r < 4; r++) {
		assert_string_equal(cell(a, sizeof a, csv, r, "norm_rel_err"), cell(b, sizeof b, csv, r, "orig_norm_rel_err"));
		assert_string_equal(cell(a, sizeof a, csv, r, "lse_err"), cell(b, sizeof b, csv, r, "orig_lse_err"));
		assert_string_equal(cell(a, sizeof a, csv, r, "kv_cache"), "none");
	}
	free(csv);
	char *fp4[] = {"skv", "run", "split-count", "--ctx=512", "--splits=1,8", "--trials=2", "--partial=fp32",
		       "--lse=fp32", "--input=bf16", "--kv-cache=e2m1", "--kv-scale=mx", out, NULL};
	csv = run_csv(fp4, "split-count");
	for (size_t r = 0; r < 4; r++) {
		const double stored = atof(cell(a, sizeof a, csv, r, "norm_rel_err"));
		const double orig = atof(cell(b, sizeof b, csv, r, "orig_norm_rel_err"));
		if (!(orig > 0.02 && orig < 1 && stored < orig / 100))
			fail_msg("%s:%d: row %zu: stored %a, orig %a", __FILE__, __LINE__, r, stored, orig);
		assert_string_equal(cell(a, sizeof a, csv, r, "kv_scale"), "mx");
	}
	free(csv);
}

/* With a power-of-two tensor scale and fp32 tensors the two placements
 * are the same arithmetic scaled by powers of two (the codes times 2^-2
 * are the dequantized values exactly, RN32(scale 2^-2) = RN32(scale) 2^-2,
 * and V's 2^-2 on the merged output is exact), so every error agrees
 * digit for digit: the scores placement's scale of the output is applied. */
static void test_placements_agree(void **state)
{
	(void)state;
	char out[4200], a[64], b[64];
	snprintf(out, sizeof out, "--out=%s", scratch);
	char *v[] = {"skv", "run", "split-count", "--ctx=512", "--splits=1,8", "--trials=2", "--partial=fp32", "--lse=fp32",
		     "--kv-cache=e4m3-sat", "--kv-scale=tensor", "--kv-scale-value=0.25", "--kv-deq=values", out, NULL};
	char *cv = run_csv(v, "split-count");
	v[11] = "--kv-deq=scores";
	char *cs = run_csv(v, "split-count");
	for (size_t r = 0; r < 4; r++) {
		assert_string_equal(cell(a, sizeof a, cv, r, "norm_rel_err"), cell(b, sizeof b, cs, r, "norm_rel_err"));
		assert_string_equal(cell(a, sizeof a, cv, r, "orig_max_abs_err"), cell(b, sizeof b, cs, r, "orig_max_abs_err"));
		assert_string_equal(cell(a, sizeof a, cs, r, "kv_deq"), "scores");
	}
	free(cv);
	free(cs);
}

/* Two shards of a kv-cache suite merge into the bytes of one run: the
 * journal carries the second reference. */
static void test_shards_merge(void **state)
{
	(void)state;
	char suite[4300], one[4300], a[4300], b[4300], m[4300];
	fs_path(suite, sizeof suite, scratch, "kv.suite");
	fs_put(scratch, "kv.suite", "run kv-cache --ctx=256 --splits=1,4 --kv-scale=tensor,mx --trials=2\n", (size_t)-1);
	snprintf(one, sizeof one, "--out=%s/one", scratch);
	snprintf(a, sizeof a, "--out=%s/sa", scratch);
	snprintf(b, sizeof b, "--out=%s/sb", scratch);
	char *r1[] = {"skv", "suite", suite, one, NULL}, *r2[] = {"skv", "suite", suite, "--shard=1/2", a, NULL},
	     *r3[] = {"skv", "suite", suite, "--shard=2/2", b, NULL};
	char sa[4300], sb[4300];
	snprintf(m, sizeof m, "%s/m", scratch);
	snprintf(sa, sizeof sa, "%s/sa", scratch);
	snprintf(sb, sizeof sb, "%s/sb", scratch);
	char *r4[] = {"skv", "merge", m, sa, sb, NULL};
	char **runs[] = {r1, r2, r3, r4};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(proc_run(runs[i], NULL, NULL), 0);
	size_t n1, n2;
	char *x = fs_get(one + 6, "kv-cache.csv", &n1), *y = fs_get(m, "kv-cache.csv", &n2);
	assert_non_null(x);
	assert_non_null(y);
	assert_int_equal(n1, n2);
	assert_memory_equal(x, y, n1);
	assert_non_null(strstr(x, "orig_norm_rel_err"));
	free(x);
	free(y);
}

/* A preset's cache reaches the CSV and recommend's text. */
static void test_presets_run_and_recommend(void **state)
{
	(void)state;
	char out[4200], a[64];
	snprintf(out, sizeof out, "--out=%s", scratch);
	char *run[] = {"skv", "run", "kv-cache", "--preset=sglang-fp4kv,vllm-fp8kv", "--ctx=256", "--splits=1,4",
		       "--lse-offset=0", "--trials=1", out, NULL};
	char *csv = run_csv(run, "kv-cache");
	assert_string_equal(cell(a, sizeof a, csv, 0, "kv_cache"), "e2m1");
	assert_string_equal(cell(a, sizeof a, csv, 0, "kv_scale"), "sglang-fp4");
	assert_string_equal(cell(a, sizeof a, csv, 2, "kv_cache"), "e4m3-sat");
	assert_string_equal(cell(a, sizeof a, csv, 2, "kv_scale_value"), "1");
	assert_null(cell(a, sizeof a, csv, 4, "kv_cache")); /* 2 presets x 2 counts x 1 offset */
	free(csv);
	/* recommend prints to stdout, which proc_run discards: read it through a pipe */
	char cmd[4400], text[8192] = "";
	snprintf(cmd, sizeof cmd, "'%s' recommend --preset=flashinfer-fp8kv --ctx=1024 --trials=1 2>/dev/null", proc_skv());
	FILE *pf = popen(cmd, "r");
	assert_non_null(pf);
	size_t got = fread(text, 1, sizeof text - 1, pf);
	text[got] = '\0';
	assert_int_equal(pclose(pf), 0);
	assert_non_null(strstr(text, "KV cache e4m3-sat with tensor scales (scores)"));
	assert_non_null(strstr(text, "recommended: "));
}

/* Each bad cache: exit 2 and one line naming the value. */
static void test_bad_caches(void **state)
{
	(void)state;
	char out[4200];
	snprintf(out, sizeof out, "--out=%s/bad", scratch);
	static const struct {
		const char *flags[4];
		const char *want;
	} bad[] = {
		{{"--kv-cache=e8m0"}, "unknown cache format 'e8m0'"},
		{{"--kv-cache=ue4m3", "--kv-scale=tensor"}, "unknown cache format 'ue4m3'"},
		{{"--kv-cache=e2m1", "--kv-scale=mx", "--head-dim=48"}, "--head-dim=48: mx blocks of 32 do not divide"},
		{{"--kv-cache=e2m1", "--kv-scale=nvfp4", "--head-dim=24"}, "blocks of 16 (nvfp4, sglang-fp4) do not divide"},
		{{"--kv-cache=e4m3", "--kv-scale=tensor", "--kv-scale-value=-1"}, "--kv-scale-value=-1 is out of range"},
		{{"--kv-cache=e4m3", "--kv-scale=tensor", "--kv-scale-value=1e-50", "--head-dim=32"}, "--kv-scale-value=1e-50 --head-dim=32: a given KV scale must be finite and positive"},
		{{"--kv-cache=e4m3", "--kv-scale=token", "--kv-scale-value=2"}, "takes no given scale"},
		{{"--kv-cache=e4m3", "--kv-scale=mx", "--kv-deq=scores"}, "scores placement needs one scale per tensor"},
		{{"--kv-cache=e4m3", "--kv-scale=sglang-fp4"}, "sglang-fp4 scales hold e2m1 values only"},
		{{"--kv-scale=tensor"}, "--kv-cache=none --kv-scale=tensor"},
		{{"--kv-cache=e4m3", "--kv-scale=tensor", "--kv-scale-value=0.001"}, "--kv-scale-value=0.001 stores a value beyond"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *argv[12] = {"skv", "run", "split-count", "--ctx=256", "--splits=4", "--trials=1", out};
		size_t k = 7;
		for (size_t j = 0; j < 4 && bad[i].flags[j]; j++)
			argv[k++] = (char *)bad[i].flags[j];
		argv[k] = NULL;
		char *err = NULL;
		int st = proc_run(argv, &err, NULL);
		if (st != 2 || proc_lines(err) != 1 || !strstr(err, bad[i].want))
			fail_msg("%s:%d: case %zu: status %d, stderr \"%s\"; expected 2 and \"%s\"", __FILE__, __LINE__, i, st,
				 err, bad[i].want);
		free(err);
	}
}

static int setup(void **state)
{
	(void)state;
	scratch = fs_tmpdir("kvcache-cli");
	return scratch ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fs_rmtree(scratch);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_references),
		cmocka_unit_test(test_placements_agree),
		cmocka_unit_test(test_shards_merge),
		cmocka_unit_test(test_presets_run_and_recommend),
		cmocka_unit_test(test_bad_caches),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
