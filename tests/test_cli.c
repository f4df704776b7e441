/* test_cli.c - the skv program's parsing, sweep order, bad-input messages and exit statuses, and its files. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* A scratch folder per test binary, removed at the end. */
static char scratch[256];

static int setup(void **state)
{
	(void)state;
	snprintf(scratch, sizeof scratch, "/tmp/skv-test-cli-XXXXXX");
	return mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
	return system(cmd) == 0 ? 0 : -1;
}

/* Runs cli_main with stdout and stderr captured into out and err. */
static int run_main(char *out, size_t nout, char *err, size_t nerr, int argc, char **argv)
{
	fflush(stdout);
	fflush(stderr);
	int s1 = dup(1), s2 = dup(2);
	FILE *t1 = tmpfile(), *t2 = tmpfile();
	assert_non_null(t1);
	assert_non_null(t2);
	dup2(fileno(t1), 1);
	dup2(fileno(t2), 2);
	int st = cli_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(s1, 1);
	dup2(s2, 2);
	close(s1);
	close(s2);
	rewind(t1);
	rewind(t2);
	size_t k = fread(out, 1, nout - 1, t1);
	out[k] = '\0';
	k = fread(err, 1, nerr - 1, t2);
	err[k] = '\0';
	fclose(t1);
	fclose(t2);
	return st;
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void check_parse(const char *exp, const char *flags, int want_status, const char *want_msg, int line)
{
	run_spec s;
	message e = {NULL};
	int st = catalog_spec_init(&s, exp, &e);
	if (st == SKV_OK) {
		char *buf = strdup(flags), *argv[16], *save = NULL;
		int argc = 0;
		for (char *t = strtok_r(buf, " ", &save); t && argc < (int)(sizeof argv / sizeof argv[0]);
		     t = strtok_r(NULL, " ", &save))
			argv[argc++] = t;
		st = spec_args(&s, argc, argv, &e);
		if (st == SKV_OK)
			st = spec_check(&s, &e);
		free(buf);
		spec_free(&s);
	}
	if (st != want_status || strcmp(msg_text(&e), want_msg) != 0)
		fail_msg("%s:%d: skv run %s %s: status %d message \"%s\", expected %d \"%s\"", __FILE__, line, exp,
			 flags, st, msg_text(&e), want_status, want_msg);
	msg_free(&e);
}

#define CHECK_PARSE(exp, flags, status, msg) check_parse(exp, flags, status, msg, __LINE__)

/* "skv: unknown experiment 'nope' (expected NAME, NAME, ...)" from the
 * registry, so a new experiment needs no edit here. */
static const char *unknown_nope(void)
{
	static char m[1024];
	size_t k = (size_t)snprintf(m, sizeof m, "skv: unknown experiment 'nope' (expected ");
	for (size_t i = 0; i < nexperiments && k < sizeof m; i++)
		k += (size_t)snprintf(m + k, sizeof m - k, "%s%s", i ? ", " : "", experiments[i]->def.name);
	snprintf(m + k, sizeof m - k, ")");
	return m;
}

static void test_bad_inputs(void **state)
{
	(void)state;
	CHECK_PARSE("nope", "", SKV_EINVAL, unknown_nope());
	CHECK_PARSE("merge-rule", "--fo=1", SKV_EINVAL, "skv: unknown parameter '--fo' (see skv run --help)");
	CHECK_PARSE("merge-rule", "--fo", SKV_EINVAL, "skv: unknown parameter '--fo' (see skv run --help)");
	CHECK_PARSE("merge-rule", "--partial=fp8", SKV_EINVAL,
		    "skv: unknown format 'fp8' for --partial (expected fp16, bf16, fp32, fp64, tf32, e4m3, e4m3-sat, e5m2, e5m2-sat, e2m1)");
	CHECK_PARSE("merge-rule", "--partial=fp16,fp8", SKV_EINVAL,
		    "skv: unknown format 'fp8' for --partial (expected fp16, bf16, fp32, fp64, tf32, e4m3, e4m3-sat, e5m2, e5m2-sat, e2m1)");
	CHECK_PARSE("merge-rule", "--order=sideways", SKV_EINVAL,
		    "skv: unknown order 'sideways' for --order (expected seq, rev, tree, random, asc, desc, strided, lanes)");
	CHECK_PARSE("merge-rule", "--merge=median", SKV_EINVAL,
		    "skv: unknown merge 'median' for --merge (expected onepass, pairwise, mean, sum, flex, onepass-norm, ratio, vllm, running)");
	CHECK_PARSE("merge-rule", "--lse-base=10", SKV_EINVAL, "skv: unknown LSE base '10' for --lse-base (expected e, 2, e2)");
	CHECK_PARSE("merge-rule", "--layout=zigzag", SKV_EINVAL,
		    "skv: unknown layout 'zigzag' for --layout (expected even, random, skewed, holes, last-empty, all-empty, fa2, fixed, system)");
	CHECK_PARSE("merge-rule", "--ctx=12x", SKV_EINVAL,
		    "skv: malformed number '12x' for --ctx (expected an integer in [1, 16777216])");
	CHECK_PARSE("merge-rule", "--ctx=-1", SKV_EINVAL,
		    "skv: malformed number '-1' for --ctx (expected an integer in [1, 16777216])");
	CHECK_PARSE("merge-rule", "--ctx=+5", SKV_EINVAL,
		    "skv: malformed number '+5' for --ctx (expected an integer in [1, 16777216])");
	CHECK_PARSE("merge-rule", "--ctx=1.5", SKV_EINVAL,
		    "skv: malformed number '1.5' for --ctx (expected an integer in [1, 16777216])");
	CHECK_PARSE("merge-rule", "--ctx=0", SKV_EINVAL, "skv: --ctx=0 is out of range (expected an integer in [1, 16777216])");
	CHECK_PARSE("merge-rule", "--seed=18446744073709551616", SKV_EINVAL,
		    "skv: --seed=18446744073709551616 is out of range (expected an integer in [0, "
		    "18446744073709551615])");
	CHECK_PARSE("merge-rule", "--lse-offset=1e", SKV_EINVAL,
		    "skv: malformed number '1e' for --lse-offset (expected a number in [-1000000000, 1000000000])");
	CHECK_PARSE("merge-rule", "--lse-offset=nan", SKV_EINVAL,
		    "skv: malformed number 'nan' for --lse-offset (expected a number in [-1000000000, 1000000000])");
	CHECK_PARSE("merge-rule", "--lse-offset=1e999", SKV_EINVAL,
		    "skv: --lse-offset=1e999 is out of range (expected a number in [-1000000000, 1000000000])");
	CHECK_PARSE("merge-rule", "--score-scale=0", SKV_EINVAL,
		    "skv: --score-scale=0 is out of range (expected a number in (0, 1000000])");
	CHECK_PARSE("merge-rule", "--trials=0", SKV_EINVAL,
		    "skv: --trials=0 is out of range (expected an integer in [1, 1000000])");
	CHECK_PARSE("merge-rule", "--trials=1,2", SKV_EINVAL, "skv: --trials takes one value, not a list ('1,2')");
	CHECK_PARSE("merge-rule", "--splits=1,,2", SKV_EINVAL, "skv: empty value in --splits=1,,2");
	CHECK_PARSE("merge-rule", "--splits=", SKV_EINVAL, "skv: empty value in --splits=");
	CHECK_PARSE("merge-rule", "--ctx=16 --splits=8,32", SKV_EINVAL, "skv: --splits=32 is greater than --ctx=16");
	CHECK_PARSE("merge-rule", "--ctx=16,64 --splits=32", SKV_EINVAL, "skv: --splits=32 is greater than --ctx=16");
	CHECK_PARSE("merge-rule", "--causal=1", SKV_EINVAL, "skv: --causal does not apply to experiment merge-rule");
	CHECK_PARSE("block-size", "--splits=2", SKV_EINVAL, "skv: --splits does not apply to experiment block-size");
	CHECK_PARSE("merge-rule", "splits=2", SKV_EINVAL, "skv: unexpected argument 'splits=2' (flags are --name=value)");
	CHECK_PARSE("merge-rule", "--ctx", SKV_EINVAL, "skv: --ctx needs a value (--ctx=VALUE)");
	CHECK_PARSE("merge-rule", "--out=", SKV_EINVAL, "skv: --out needs a folder name");
	CHECK_PARSE("merge-rule", "--trials=1000000 --ctx=1024,2048", SKV_EINVAL,
		    "skv: the sweep is too large (points x trials above 1000000 rows); shorten a list");
	/* And the good forms. */
	CHECK_PARSE("merge-rule", "--ctx 64 --splits=1,2 --lse-offset=-1e3,0x1p3 --seed=18446744073709551615", 0, "");
}

static void test_defaults_and_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < nexperiments; i++) {
		run_spec s;
		message e = {NULL};
		int st = catalog_spec_init(&s, experiments[i]->def.name, &e);
		if (st == SKV_OK)
			st = spec_check(&s, &e);
		if (st != SKV_OK)
			fail_msg("%s:%d: defaults of %s: %s", __FILE__, __LINE__, experiments[i]->def.name, msg_text(&e));
		assert_string_equal(s.out, "results");
		/* nothing is the user's, but the preset fields an experiment sets
		 * beside its presets (tensor-cores-fp8: FA3 at e4m3 in, bf16 out) */
		const int fp8 = strcmp(experiments[i]->def.name, "tensor-cores-fp8") == 0;
		for (int p = 0; p < NPARAMS; p++)
			assert_int_equal(s.given[p], fp8 && (p == P_INPUT || p == P_OUTPUT));
		spec_free(&s);
	}
	/* Column = flag with '-' -> '_', every default parses, threads has no column. */
	for (int p = 0; p < NPARAMS; p++) {
		const param_def *q = &params[p];
		assert_non_null(q->flag);
		assert_int_equal(param_find(q->flag), p);
		if (p >= P_THREADS) { /* threads and recommend's: no CSV column */
			assert_null(q->column);
			continue;
		}
		char col[64];
		snprintf(col, sizeof col, "%s", q->flag);
		for (char *c = col; *c; c++)
			if (*c == '-')
				*c = '_';
		assert_string_equal(q->column, col);
	}
}

/* experiments/default.suite runs every experiment of the registry, once
 * each, in the registry's order (REPORT.md's order too). */
static void test_default_suite_is_the_registry(void **state)
{
	(void)state;
	char path[4300], exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	assert_true(k > 0);
	exe[k] = '\0';
	*strrchr(exe, '/') = '\0'; /* build/tests */
	*strrchr(exe, '/') = '\0'; /* build */
	snprintf(path, sizeof path, "%s/../experiments/default.suite", exe);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[1024], name[256];
	size_t i = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "run %255s", name) == 1) {
			if (i >= nexperiments || strcmp(name, experiments[i]->def.name) != 0)
				fail_msg("%s:%d: default.suite line %zu runs %s, the registry's experiment %zu is %s", __FILE__,
					 __LINE__, i + 1, name, i, i < nexperiments ? experiments[i]->def.name : "(none)");
			i++;
		}
	fclose(f);
	assert_int_equal(i, nexperiments);
}

static void test_lists_and_point_order(void **state)
{
	(void)state;
	run_spec s;
	message e = {NULL};
	assert_int_equal(catalog_spec_init(&s, "split-count", &e), 0);
	char *argv[] = {"--splits=1,4,16", "--partial=fp16,fp64", "--lse=bf16", "--trials=3", "--seed=7,9"};
	assert_int_equal(spec_args(&s, 5, argv, &e), 0);
	assert_int_equal(spec_check(&s, &e), 0);
	assert_int_equal(s.given[P_SPLITS], 1);
	assert_int_equal(s.given[P_CTX], 0);
	assert_int_equal(s.list[P_SPLITS].n, 3);
	/* 3 splits x 2 partial x 2 seeds, trials not a sweep. */
	assert_int_equal(spec_npoints(&s), 12);
	assert_int_equal(spec_trials(&s), 3);
	/* Table order with the last parameter fastest: splits, partial, seed. */
	const uint64_t want_splits[12] = {1, 1, 1, 1, 4, 4, 4, 4, 16, 16, 16, 16};
	const uint64_t want_partial[12] = {SKV_FP16, SKV_FP16, SKV_FP64, SKV_FP64, SKV_FP16, SKV_FP16,
					   SKV_FP64, SKV_FP64, SKV_FP16, SKV_FP16, SKV_FP64, SKV_FP64};
	const uint64_t want_seed[12] = {7, 9, 7, 9, 7, 9, 7, 9, 7, 9, 7, 9};
	for (size_t p = 0; p < 12; p++) {
		param_value v[NPARAMS];
		spec_point(&s, p, v);
		assert_int_equal(v[P_SPLITS].u, want_splits[p]);
		assert_int_equal(v[P_PARTIAL].u, want_partial[p]);
		assert_int_equal(v[P_SEED].u, want_seed[p]);
		assert_int_equal(v[P_LSE].u, SKV_BF16);
		assert_int_equal(v[P_CTX].u, 16384);
	}
	/* A flag given twice in one set of flags is refused (D25); a later set
	 * (the suite's command line over a line) overrides an earlier one. */
	char *again[] = {"--splits=2", "--splits", "8"};
	assert_int_equal(spec_args(&s, 3, again, &e), SKV_EINVAL);
	assert_string_equal(msg_text(&e),
			    "skv: --splits is given twice (--splits=2 and --splits=8); give one list instead");
	assert_int_equal(s.list[P_SPLITS].v[0].u, 2);
	char *later[] = {"--splits=8"};
	assert_int_equal(spec_args(&s, 1, later, &e), 0);
	assert_int_equal(s.list[P_SPLITS].n, 1);
	assert_int_equal(s.list[P_SPLITS].v[0].u, 8);
	msg_free(&e);
	spec_free(&s);
}

static void test_format_double(void **state)
{
	(void)state;
	char b[64];
	const double xs[] = {0.1, 1.0 / 3.0, 0.5, 1e-300, 4.9406564584124654e-324, 1.7976931348623157e308, -2.5,
			     123456789.0, 0x1.fffffffffffffp-1};
	for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		format_double(b, sizeof b, xs[i]);
		if (strtod(b, NULL) != xs[i])
			fail_msg("%s:%d: %a printed as %s does not read back", __FILE__, __LINE__, xs[i], b);
	}
	format_double(b, sizeof b, 0.1);
	assert_string_equal(b, "0.1");
	format_double(b, sizeof b, INFINITY);
	assert_string_equal(b, "inf");
	format_double(b, sizeof b, -INFINITY);
	assert_string_equal(b, "-inf");
	format_double(b, sizeof b, -NAN);
	assert_string_equal(b, "nan");
	format_double(b, sizeof b, 1000.0);
	assert_string_equal(b, "1000");
}

static void check_bounds(const size_t *b, size_t n, size_t S)
{
	assert_int_equal(b[0], 0);
	assert_int_equal(b[S], n);
	for (size_t s = 0; s < S; s++)
		if (b[s] > b[s + 1])
			fail_msg("%s:%d: bounds decrease at %zu (n %zu, S %zu)", __FILE__, __LINE__, s, n, S);
}

static void test_layouts(void **state)
{
	(void)state;
	size_t b[130], c[130];
	const size_t ns[] = {1, 7, 64, 1000, 4096};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
		for (size_t S = 1; S <= 128 && S <= ns[i]; S++)
			for (int l = 0; l < NLAYOUTS; l++) {
				if (l == LAYOUT_FIXED || l == LAYOUT_SYSTEM)
					continue; /* its own split size (below), the shape (test_recommend) */
				int st = layout_bounds(b, ns[i], S, (layout_id)l, 99, 128, 0);
				if (l == LAYOUT_LAST_EMPTY && S == 1) {
					assert_int_equal(st, SKV_EINVAL); /* one split cannot be the empty last */
					continue;
				}
				assert_int_equal(st, SKV_OK);
				if (l == LAYOUT_ALL_EMPTY) {
					for (size_t s = 0; s <= S; s++)
						assert_int_equal(b[s], 0); /* no key visited */
					continue;
				}
				check_bounds(b, ns[i], S);
				if (l == LAYOUT_LAST_EMPTY)
					assert_int_equal(b[S - 1], ns[i]); /* only the last split is empty */
			}
	/* even: sizes differ by at most one. */
	assert_int_equal(layout_bounds(b, 1000, 7, LAYOUT_EVEN, 0, 128, 0), SKV_OK);
	for (size_t s = 0; s < 7; s++)
		assert_true(b[s + 1] - b[s] == 142 || b[s + 1] - b[s] == 143);
	/* holes: every odd split empty, the even ones even. */
	assert_int_equal(layout_bounds(b, 1000, 7, LAYOUT_HOLES, 0, 128, 0), SKV_OK);
	const size_t holes[8] = {0, 250, 250, 500, 500, 750, 750, 1000};
	assert_memory_equal(b, holes, sizeof holes);
	/* skewed: n - floor(n / 2^s). */
	assert_int_equal(layout_bounds(b, 1000, 12, LAYOUT_SKEWED, 0, 128, 0), SKV_OK);
	const size_t skew[13] = {0, 500, 750, 875, 938, 969, 985, 993, 997, 999, 1000, 1000, 1000};
	assert_memory_equal(b, skew, sizeof skew);
	/* random: on the even grid, reproducible from the seed, and with empty
	 * splits for most seeds at S = 16. */
	size_t with_empty = 0;
	for (uint64_t seed = 0; seed < 50; seed++) {
		assert_int_equal(layout_bounds(b, 4096, 16, LAYOUT_RANDOM, seed, 128, 0), SKV_OK);
		assert_int_equal(layout_bounds(c, 4096, 16, LAYOUT_RANDOM, seed, 128, 0), SKV_OK);
		assert_memory_equal(b, c, 17 * sizeof *b);
		int empty = 0;
		for (size_t s = 0; s < 16; s++) {
			assert_int_equal(b[s] % 256, 0);
			empty |= b[s] == b[s + 1];
		}
		with_empty += (size_t)empty;
	}
	assert_true(with_empty >= 45);
	/* fixed: splits of the given size, the last shorter; the count must be
	 * ceil(n / size) */
	assert_int_equal(layout_bounds(b, 1000, 4, LAYOUT_FIXED, 0, 128, 300), SKV_OK);
	const size_t want_fixed[] = {0, 300, 600, 900, 1000};
	assert_memory_equal(b, want_fixed, sizeof want_fixed);
	assert_int_equal(layout_bounds(b, 1000, 3, LAYOUT_FIXED, 0, 128, 300), SKV_EINVAL);
	assert_int_equal(layout_bounds(b, 1000, 4, LAYOUT_FIXED, 0, 128, 0), SKV_EINVAL);
	/* fa2: ceil(nb / S) blocks a split, FA2's own function */
	size_t f2[8];
	{
		assert_int_equal(layout_bounds(b, 1000, 3, LAYOUT_FA2, 0, 128, 0), SKV_OK);
		assert_int_equal(skv_fa2_bounds(f2, 1000, 128, 3), SKV_OK);
		assert_memory_equal(b, f2, 4 * sizeof *b);
	}
	assert_int_equal(layout_bounds(b, 4, 5, LAYOUT_EVEN, 0, 128, 0), SKV_EINVAL);
	assert_int_equal(layout_bounds(b, 4, 0, LAYOUT_HOLES, 0, 128, 0), SKV_EINVAL);
	assert_int_equal(layout_bounds(b, 4, 2, (layout_id)NLAYOUTS, 0, 128, 0), SKV_EINVAL);
}

/* Bad input through the whole program: one line on stderr, the status, and
 * no file in the output folder (not even the folder). */
static void check_main_fails(int want, const char *want_err, int argc, char **argv, const char *outdir, int line)
{
	char out[8192], err[8192];
	int st = run_main(out, sizeof out, err, sizeof err, argc, argv);
	struct stat sb;
	if (st != want || strcmp(err, want_err) != 0)
		fail_msg("%s:%d: status %d stderr \"%s\", expected %d \"%s\"", __FILE__, line, st, err, want, want_err);
	if (outdir && stat(outdir, &sb) == 0)
		fail_msg("%s:%d: %s was created", __FILE__, line, outdir);
}

static void test_main_bad_input(void **state)
{
	(void)state;
	char out[512], outflag[600], msg[1200], file[512], sub[600];
	snprintf(out, sizeof out, "%s/never", scratch);
	snprintf(outflag, sizeof outflag, "--out=%s", out);
	{
		char *argv[] = {"skv", "run", "merge-rule", "--partial=fp8", outflag};
		check_main_fails(2, "skv: unknown format 'fp8' for --partial (expected fp16, bf16, fp32, fp64, tf32, e4m3, e4m3-sat, e5m2, e5m2-sat, e2m1)\n", 5,
				 argv, out, __LINE__);
	}
	{
		char *argv[] = {"skv", "run", "merge-rule", outflag, "--splits=2000"};
		check_main_fails(2, "skv: --splits=2000 is greater than --ctx=1024\n", 5, argv, out, __LINE__);
	}
	{
		char *argv[] = {"skv", "run", "nope", outflag};
		char want[1100];
		snprintf(want, sizeof want, "%s\n", unknown_nope());
		check_main_fails(2, want, 4, argv, out, __LINE__);
	}
	{
		char *argv[] = {"skv", "frobnicate"};
		check_main_fails(2,
				 "skv: unknown command 'frobnicate' (expected list, run, suite, merge, report, recommend, mma, grade, export; see skv "
				 "--help)\n",
				 2, argv, NULL, __LINE__);
	}
	{
		char *argv[] = {"skv", "run"};
		check_main_fails(2, "skv: run needs an experiment name (see skv list)\n", 2, argv, NULL, __LINE__);
	}
	/* An unreadable suite file: status 1. */
	snprintf(file, sizeof file, "%s/missing.suite", scratch);
	{
		char *argv[] = {"skv", "suite", file, outflag};
		snprintf(msg, sizeof msg, "skv: cannot read suite file '%s': No such file or directory\n", file);
		check_main_fails(1, msg, 4, argv, out, __LINE__);
	}
	/* A bad line 3 of a suite: nothing runs, nothing is written. */
	snprintf(file, sizeof file, "%s/bad.suite", scratch);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "# a comment\n\nrun merge-rule --ctx=64 --trials=1  # trailing\nrun merge-rule --order=up\n");
	fclose(f);
	{
		char *argv[] = {"skv", "suite", file, outflag};
		snprintf(msg, sizeof msg,
			 "skv: %s:4: unknown order 'up' for --order (expected seq, rev, tree, random, asc, desc, "
			 "strided, lanes)\n",
			 file);
		check_main_fails(2, msg, 4, argv, out, __LINE__);
	}
	f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "go merge-rule\n");
	fclose(f);
	{
		char *argv[] = {"skv", "suite", file, outflag};
		snprintf(msg, sizeof msg, "skv: %s:1: expected 'run EXPERIMENT [--flags]', got 'go'\n", file);
		check_main_fails(2, msg, 4, argv, out, __LINE__);
	}
	/* An unwritable --out: a path under a regular file (unwritable even for
	 * root). Status 1, before any computing. */
	snprintf(file, sizeof file, "%s/plainfile", scratch);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(sub, sizeof sub, "--out=%s/sub", file);
	{
		char *argv[] = {"skv", "run", "merge-rule", sub};
		snprintf(msg, sizeof msg, "skv: cannot write to --out '%s/sub': Not a directory\n", file);
		check_main_fails(1, msg, 4, argv, NULL, __LINE__);
	}
	snprintf(sub, sizeof sub, "--out=%s", file);
	{
		char *argv[] = {"skv", "run", "merge-rule", "--ctx=64", sub};
		snprintf(msg, sizeof msg, "skv: cannot write to --out '%s': Not a directory\n", file);
		check_main_fails(1, msg, 5, argv, NULL, __LINE__);
	}
	assert_int_equal(count_entries(scratch), 2); /* bad.suite, plainfile */
}

static void test_main_help_and_list(void **state)
{
	(void)state;
	char out[32768], err[4096];
	{
		char *argv[] = {"skv", "--version"};
		assert_int_equal(run_main(out, sizeof out, err, sizeof err, 2, argv), 0);
		char want[64];
		snprintf(want, sizeof want, "skv %s\n", SKV_VERSION);
		assert_string_equal(out, want);
	}
	{
		char *argv[] = {"skv", "list"};
		assert_int_equal(run_main(out, sizeof out, err, sizeof err, 2, argv), 0);
		for (size_t i = 0; i < nexperiments; i++) {
			assert_non_null(strstr(out, experiments[i]->def.name));
			assert_non_null(strstr(out, experiments[i]->def.defaults));
		}
	}
	{
		/* Every parameter with its default and its allowed values. */
		char *argv[] = {"skv", "run", "--help"};
		assert_int_equal(run_main(out, sizeof out, err, sizeof err, 3, argv), 0);
		assert_string_equal(err, "");
		for (int p = 0; p < NPARAMS; p++) {
			char flag[64], allowed[256];
			snprintf(flag, sizeof flag, "--%s ", params[p].flag);
			param_allowed(allowed, sizeof allowed, p);
			if (!strstr(out, flag) || !strstr(out, allowed))
				fail_msg("%s:%d: run --help lacks %s or '%s'", __FILE__, __LINE__, flag, allowed);
		}
		assert_non_null(strstr(out, "default fp32; one of fp16, bf16, fp32, fp64"));
	}
	{
		char *argv[] = {"skv", "run", "split-count", "--help"};
		assert_int_equal(run_main(out, sizeof out, err, sizeof err, 4, argv), 0);
		/* every count from 1 to 64, then the larger powers of two */
		assert_non_null(strstr(out, "default 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,"
					    "26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,"
					    "50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,128,256,512,1024;"));
		assert_null(strstr(out, "--causal"));
	}
	{
		char *argv[] = {"skv", "--help"};
		assert_int_equal(run_main(out, sizeof out, err, sizeof err, 2, argv), 0);
		assert_non_null(strstr(out, "skv suite FILE"));
	}
	{
		char *argv[] = {"skv"};
		assert_int_equal(run_main(out, sizeof out, err, sizeof err, 1, argv), 2);
		assert_non_null(strstr(err, "usage: skv"));
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = '\0';
	fclose(f);
	return s;
}

/* A small run and a small suite through cli_main: the three files, the
 * CSV header, no temporary left, the same CSV from the suite. */
static void test_main_run_and_suite(void **state)
{
	(void)state;
	char out[4096], err[4096], dir[512], flag[600], path[700];
	snprintf(dir, sizeof dir, "%s/res/a", scratch);
	snprintf(flag, sizeof flag, "--out=%s", dir);
	char *argv[] = {"skv", "run", "merge-rule", "--ctx=64", "--splits=4", "--trials=2", flag, "--threads=2"};
	assert_int_equal(run_main(out, sizeof out, err, sizeof err, 8, argv), 0);
	assert_non_null(strstr(err, "skv: merge-rule: seed 1, 4 points x 2 trials"));
	assert_int_equal(count_entries(dir), 4); /* the three files and the folder's lock, .skv.lock */
	snprintf(path, sizeof path, "%s/merge-rule.csv", dir);
	char *csv = slurp(path);
	assert_non_null(csv);
	const char *header =
		"experiment,preset,ctx,head_dim,dist,score_scale,input,kv_cache,kv_scale,kv_deq,kv_scale_value,lse_offset,"
		"splits,layout,block_size,causal,"
		"compute,p,lse_base,partial,lse,combine,output,blocks,acc,formula,lanes,lane_keys,math,gpu,merge,order,empty,"
		"merge_threads,round_states,norm,trials,seed,"
		"trial,max_abs_err,max_rel_err,norm_rel_err,ulp_err,norm_ulp_err,lse_err,floor_err,orig_max_abs_err,"
		"orig_norm_rel_err,orig_lse_err,out_state,lse_state\n";
	assert_true(strncmp(csv, header, strlen(header)) == 0);
	const char *row0 = "merge-rule,none,64,8,gaussian,1,fp64,none,none,values,0,0,4,even,128,,fp64,fp64,2,fp64,fp64,fp64,fp64,forward,"
			   "compute,skv,0,0,exact,ieee,onepass,seq,guard,1,0,div,2,1,0,";
	assert_true(strncmp(csv + strlen(header), row0, strlen(row0)) == 0);
	size_t lines = 0;
	for (const char *c = csv; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 1 + 4 * 2);
	snprintf(path, sizeof path, "%s/merge-rule.meta", dir);
	char *meta = slurp(path);
	assert_non_null(meta);
	assert_non_null(strstr(meta, "command: skv run merge-rule --ctx=64 --splits=4 --trials=2"));
	/* the rerun command starts with the checkout's skv as typed from here
	 * (build/skv from the root, where make check runs): one that runs */
	const char *rep = strstr(meta, "reproduce: ");
	assert_non_null(rep);
	rep += strlen("reproduce: ");
	char prog[1024];
	snprintf(prog, sizeof prog, "%.*s", (int)strcspn(rep, " "), rep);
	assert_true(strlen(prog) > 4 && strcmp(prog + strlen(prog) - 4, "/skv") == 0 && access(prog, X_OK) == 0);
	const char *args = " run merge-rule --preset=none --ctx=64 --head-dim=8";
	assert_true(strncmp(rep + strlen(prog), args, strlen(args)) == 0);
	assert_non_null(strstr(meta, "mpfr_version: "));
	snprintf(path, sizeof path, "%s/merge-rule.md", dir);
	char *md = slurp(path);
	assert_non_null(md);
	assert_non_null(strstr(md, "| merge | max_abs_err median | max_abs_err max |"));
	/* The same run from a suite line, into another folder. */
	char suite[600], dir2[512], flag2[600];
	snprintf(suite, sizeof suite, "%s/s.suite", scratch);
	FILE *f = fopen(suite, "w");
	assert_non_null(f);
	fprintf(f, "# tiny\nrun merge-rule --ctx=64 --splits=4 --trials=5\n");
	fclose(f);
	snprintf(dir2, sizeof dir2, "%s/res/b", scratch);
	snprintf(flag2, sizeof flag2, "--out=%s", dir2);
	char *argv2[] = {"skv", "suite", suite, flag2, "--trials=2", "--threads=1"};
	assert_int_equal(run_main(out, sizeof out, err, sizeof err, 6, argv2), 0);
	snprintf(path, sizeof path, "%s/merge-rule.csv", dir2);
	char *csv2 = slurp(path);
	assert_non_null(csv2);
	assert_string_equal(csv, csv2);
	free(csv);
	free(csv2);
	free(meta);
	free(md);
}

/* The installed binary (next to this test's folder) gives the same status
 * and message as the in-process calls: main.c is only a call. */
static char skv_path[1024];
static void test_binary(void **state)
{
	(void)state;
	if (access(skv_path, X_OK) != 0)
		fail_msg("%s:%d: %s not built", __FILE__, __LINE__, skv_path);
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' run merge-rule --lse=fp8 2>'%s/err.txt'", skv_path, scratch);
	int st = system(cmd);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 2);
	char path[700];
	snprintf(path, sizeof path, "%s/err.txt", scratch);
	char *e = slurp(path);
	assert_non_null(e);
	assert_string_equal(e, "skv: unknown format 'fp8' for --lse (expected fp16, bf16, fp32, fp64, tf32, e4m3, e4m3-sat, e5m2, e5m2-sat, e2m1)\n");
	free(e);
	unlink(path);
	snprintf(cmd, sizeof cmd, "'%s' --version >/dev/null", skv_path);
	assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	/* build/tests/test_cli -> build/skv */
	snprintf(skv_path, sizeof skv_path, "%s", argv[0]);
	char *slash = strrchr(skv_path, '/');
	if (slash) {
		*slash = '\0';
		slash = strrchr(skv_path, '/');
	}
	if (slash)
		snprintf(slash, sizeof skv_path - (size_t)(slash - skv_path), "/skv");
	else
		snprintf(skv_path, sizeof skv_path, "../skv");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_defaults_and_table),
		cmocka_unit_test(test_default_suite_is_the_registry),
		cmocka_unit_test(test_lists_and_point_order),
		cmocka_unit_test(test_format_double),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_main_bad_input),
		cmocka_unit_test(test_main_help_and_list),
		cmocka_unit_test(test_main_run_and_suite),
		cmocka_unit_test(test_binary),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
