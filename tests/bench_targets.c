/* bench_targets.c - each figure of issue 18 measured beside its target and the last recorded value (bench/baseline.txt). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fmt_inline.h"
#include "skv.h"
#include "truth_internal.h"

/*
 * Usage: bench_targets [--quick]   (make bench runs it without --quick)
 * Every ratio is measured in one run, the two sides alternated, and the
 * median of the per-pair ratios reported: the machine is shared, and a
 * ratio of neighbouring runs survives a load that moves both. --quick skips
 * the long figures (recommend, the 1M-key memory, the default suite). The
 * values go to stdout as a table and, as "key value" lines, to
 * B/bench-last.txt (B the build folder); bench/baseline.txt holds the last recorded ones
 * (copy the file over it after a measured change).
 */

extern char **environ;

static char root[4096], skv[4200], last_path[4200];
static FILE *last;

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_dbl(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *x, size_t n)
{
	qsort(x, n, sizeof *x, cmp_dbl);
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* CPU seconds (user + system) of the last run_timed child: the figure a
 * shared machine does not move, beside the wall time that it does. */
static double last_cpu_s;

/* Runs argv (argv[0] a path) with stdout and stderr on /dev/null: its
 * wall time, or -1 when it could not run or failed; *rss_kib (if not NULL)
 * its peak resident set. */
static double run_timed(char *const argv[], long *rss_kib)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	const double t0 = mono();
	const int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int st;
	struct rusage ru;
	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR)
			return -1;
	const double t = mono() - t0;
	if (rss_kib)
		*rss_kib = ru.ru_maxrss;
	last_cpu_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
		     1e-6 * (double)ru.ru_stime.tv_usec;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

/* The value recorded for key in bench/baseline.txt, or NaN. */
static double baseline(const char *key)
{
	char p[4200], k[128];
	snprintf(p, sizeof p, "%s/bench/baseline.txt", root);
	FILE *f = fopen(p, "r");
	double v = NAN, x;
	char line[512];
	while (f && fgets(line, sizeof line, f)) /* "key value", '#' comments */
		if (line[0] != '#' && sscanf(line, "%127s %lf", k, &x) == 2 && strcmp(k, key) == 0)
			v = x;
	if (f)
		fclose(f);
	return v;
}

/* One table row: the figure, its value (and unit), the target, whether it
 * is met (1 met, 0 not, -1 no target), the baseline. */
static void row(const char *key, const char *what, double v, const char *unit, const char *target, int met)
{
	const double b = baseline(key);
	char bs[32] = "-";
	if (!isnan(b))
		snprintf(bs, sizeof bs, "%.4g", b);
	printf("%-46s %12.4g %-9s %-14s %-5s %10s\n", what, v, unit, target,
	       met < 0 ? "info" : met ? "met" : "MISS", bs);
	if (last)
		fprintf(last, "%s %.6g\n", key, v);
}

static void note(const char *what, const char *why) { printf("%-46s %s\n", what, why); }

/* ----------------------------------------------------------- figures */

/* The first python3 on PATH, then /usr/bin/python3, that imports numpy:
 * 1 with its path in buf, else 0. */
static int find_python(char *buf, size_t n)
{
	const char *path = getenv("PATH");
	char *dirs = strdup(path ? path : ""), *save = NULL;
	int found = 0;
	for (char *dir = strtok_r(dirs, ":", &save);; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, n, "%s/python3", dir ? dir : "/usr/bin");
		char *np[] = {buf, "-c", "import numpy", NULL};
		if (access(buf, X_OK) == 0 && run_timed(np, NULL) >= 0) {
			found = 1;
			break;
		}
		if (!dir)
			break;
	}
	free(dirs);
	return found;
}

/* Seed 002's two tables: skv (the audit's two commands, one thread, as the
 * script is single-threaded) against the numpy script, 7 pairs. */
static void fig_anchor(void)
{
	char script[4300], out_a[64], out_b[64];
	snprintf(script, sizeof script, "%s/../shared/anchors/split_kv_combine.py", root);
	if (access(script, R_OK) != 0)
		snprintf(script, sizeof script, "%s/../../shared/anchors/split_kv_combine.py", root);
	char python[4200];
	char *py[] = {python, script, NULL};
	if (access(script, R_OK) != 0) {
		note("anchor: skv / numpy wall time", "skipped: shared/anchors/split_kv_combine.py not found");
		return;
	}
	if (!find_python(python, sizeof python)) {
		note("anchor: skv / numpy wall time", "skipped: python3 with numpy not installed");
		return;
	}
	snprintf(out_a, sizeof out_a, "--out=/tmp/skv-bench-%d-a", (int)getpid());
	snprintf(out_b, sizeof out_b, "--out=/tmp/skv-bench-%d-b", (int)getpid());
	char *a[] = {skv, "run", "merge-rule", "--ctx=1024", "--head-dim=8", "--splits=8", "--trials=1",
		     "--threads=1", out_a, NULL};
	char *b[] = {skv, "run", "split-count", "--ctx=16384", "--head-dim=128", "--splits=1,2,4,8,16,32",
		     "--partial=fp16,fp64", "--lse=fp16,fp64", "--trials=1", "--input=fp64", "--compute=fp64",
		     "--p=fp64", "--combine=fp64", "--output=fp64", "--lse-base=2", "--block-size=0",
		     "--threads=1", out_b, NULL};
	enum { PAIRS = 7 };
	double r[PAIRS], ts[PAIRS], tp[PAIRS];
	for (int i = 0; i < PAIRS; i++) {
		const double x = run_timed(a, NULL), y = run_timed(b, NULL), z = run_timed(py, NULL);
		if (x < 0 || y < 0 || z < 0) {
			note("anchor: skv / numpy wall time", "FAILED: a command did not run");
			return;
		}
		ts[i] = x + y, tp[i] = z, r[i] = (x + y) / z;
	}
	char rm[200];
	snprintf(rm, sizeof rm, "rm -rf /tmp/skv-bench-%d-a /tmp/skv-bench-%d-b", (int)getpid(), (int)getpid());
	if (system(rm) != 0)
		note("anchor", "could not remove its output folders");
	const double ratio = median(r, PAIRS);
	row("anchor_skv_s", "anchor: skv's two tables, wall", median(ts, PAIRS), "s", "", -1);
	row("anchor_numpy_s", "anchor: numpy script, wall", median(tp, PAIRS), "s", "", -1);
	row("anchor_ratio", "anchor: skv / numpy (median of 7 pairs)", ratio, "x", "<= 1.0", ratio <= 1.0);
}

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The truth of one query row at n = 16384, d = 128 (fp16 input, Gaussian):
 * the public truth (certified fast path) against the MPFR path at 128 bits
 * (the truth before it), 3 alternated pairs, CPU time. */
static void fig_truth(void)
{
	const size_t n = 16384, d = 128;
	skv_problem p;
	skv_dd *out = malloc(d * sizeof *out), lse;
	if (!out || skv_problem_init(&p, 1, n, d, SKV_DIST_GAUSSIAN, 0.5, SKV_FP16, 2) != SKV_OK) {
		note("truth", "FAILED: no problem");
		free(out);
		return;
	}
	enum { PAIRS = 3 };
	double tf[PAIRS], tm[PAIRS], r[PAIRS];
	for (int i = 0; i < PAIRS; i++) {
		double c0 = cpu_now();
		int st = skv_truth_range(out, &lse, &p, 0, 0, n, SKV_TRUTH_PREC);
		tf[i] = cpu_now() - c0;
		c0 = cpu_now();
		st |= skv_truth_mpfr(out, &lse, &p, 0, 0, n, 128);
		tm[i] = cpu_now() - c0;
		if (st != SKV_OK) {
			note("truth", "FAILED: a truth call failed");
			break;
		}
		r[i] = tm[i] / tf[i];
	}
	skv_problem_free(&p);
	free(out);
	row("truth_fast_s", "truth n=16384 d=128: certified fast path", median(tf, PAIRS), "s cpu", "", -1);
	row("truth_mpfr_s", "truth n=16384 d=128: MPFR at 128 bits", median(tm, PAIRS), "s cpu", "", -1);
	const double ratio = median(r, PAIRS);
	row("truth_ratio", "truth: MPFR / fast (median of 3 pairs)", ratio, "x", ">= 10", ratio >= 10);
}

/* Normal variates: skv_rng_normals against the scalar skv_rng_normal on
 * the same stream (2^22 values, 5 alternated pairs), CPU time. */
static void fig_normals(void)
{
	enum { N = 1 << 22, PAIRS = 5 };
	double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), tb[PAIRS], ts[PAIRS], r[PAIRS];
	if (!a || !b) {
		note("normals", "FAILED: out of memory");
		free(a), free(b);
		return;
	}
	int same = 1;
	for (int i = 0; i < PAIRS; i++) {
		skv_rng g, h;
		skv_rng_seed(&g, (uint64_t)i);
		h = g;
		double c0 = cpu_now();
		for (size_t j = 0; j < N; j++)
			a[j] = skv_rng_normal(&g);
		ts[i] = cpu_now() - c0;
		c0 = cpu_now();
		skv_rng_normals(b, N, &h);
		tb[i] = cpu_now() - c0;
		same &= memcmp(a, b, N * sizeof *a) == 0 && memcmp(&g, &h, sizeof g) == 0;
		r[i] = ts[i] / tb[i];
	}
	free(a), free(b);
	if (!same)
		note("normals", "FAILED: the batched stream differs from the scalar one");
	const double nb = median(tb, PAIRS) * 1e9 / N;
	row("normals_batched_ns", "normals: skv_rng_normals, per value", nb, "ns", "", -1);
	row("normals_per_s", "normals: skv_rng_normals, per second", 1e3 / nb, "M/s", "", -1);
	row("normals_scalar_ns", "normals: skv_rng_normal, per value", median(ts, PAIRS) * 1e9 / N, "ns", "", -1);
	const double ratio = median(r, PAIRS);
	row("normals_ratio", "normals: scalar / batched (median of 5)", ratio, "x", ">= 2", same && ratio >= 2);
}

/* Rounding rates: skv_round (the public call) and the kernels' inline
 * skv_round_i on 4096 values in cache, x in (-4, 4), best of 5 of 2^12
 * passes. No target in the issue: the reference for the hardware paths. */
static volatile int fmt_now;
static void fig_round(void)
{
	enum { N = 4096, REPS = 1 << 10 };
	static double x[N], y[N];
	skv_rng g;
	skv_rng_seed(&g, 3);
	for (int i = 0; i < N; i++)
		x[i] = 8 * skv_rng_uniform(&g) - 4;
	const struct {
		skv_format f;
		const char *key;
	} fs[] = {{SKV_FP16, "fp16"}, {SKV_BF16, "bf16"}, {SKV_FP32, "fp32"}};
	for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
		fmt_now = (int)fs[k].f;
		double best[2] = {1e30, 1e30};
		for (int rep = 0; rep < 5; rep++)
			for (int inl = 0; inl < 2; inl++) {
				const skv_format f = (skv_format)fmt_now;
				const double c0 = cpu_now();
				for (int t = 0; t < REPS; t++) {
					for (int i = 0; i < N; i++)
						y[i] = inl ? skv_round_i(f, x[i]) : skv_round(f, x[i]);
					__asm__ volatile("" : : "r"(y) : "memory");
				}
				const double c = (cpu_now() - c0) * 1e9 / ((double)N * REPS);
				best[inl] = c < best[inl] ? c : best[inl];
			}
		char key[64], what[96];
		snprintf(key, sizeof key, "round_%s_call_ns", fs[k].key);
		snprintf(what, sizeof what, "rounding to %s: skv_round, per value", fs[k].key);
		row(key, what, best[0], "ns", "", -1);
		snprintf(key, sizeof key, "round_%s_inline_ns", fs[k].key);
		snprintf(what, sizeof what, "rounding to %s: skv_round_i, per value", fs[k].key);
		row(key, what, best[1], "ns", "", -1);
	}
}

/* skv recommend at ctx 131072, 8 trials (the audit's command), wall time
 * on this machine's cores, and the default suite as make report runs it;
 * peak memory of a 1M-key run per key. One run each: long figures. */
static void fig_long(void)
{
	char out[80], tmp[64];
	snprintf(tmp, sizeof tmp, "/tmp/skv-bench-%d-long", (int)getpid());
	snprintf(out, sizeof out, "--out=%s", tmp);
	char *rec[] = {skv, "recommend", "--batch=4", "--heads=32", "--kv-heads=8", "--ctx=131072",
		       "--head-dim=128", "--sms=132", "--trials=8", NULL};
	const double t = run_timed(rec, NULL);
	row("recommend_wall_s", "recommend ctx 131072, 8 trials, wall", t, "s", "<= 4", t >= 0 && t <= 4);
	row("recommend_cpu_s", "recommend ctx 131072, 8 trials, cpu", last_cpu_s, "s", "", -1);
	char *mem[] = {skv, "run", "split-count", "--ctx=1048576", "--head-dim=128", "--splits=1,64", "--trials=1", "--input=fp16",
		       out, NULL};
	long kib = 0;
	const double tm = run_timed(mem, &kib);
	const double per = (double)kib * 1024 / 1048576;
	row("mem_bytes_per_key", "peak RSS per key, 1M keys, d=128, fp16", per, "B", "<= 600", tm >= 0 && per <= 600);
	char suite[4300], rout[96];
	snprintf(suite, sizeof suite, "%s/experiments/default.suite", root);
	snprintf(rout, sizeof rout, "--out=%s/suite", tmp);
	char *rep[] = {skv, "suite", suite, rout, "--report", NULL};
	const double ts = run_timed(rep, NULL);
	row("suite_wall_s", "default suite + report (make report), wall", ts, "s", "<= 60", ts >= 0 && ts <= 60);
	row("suite_cpu_s", "default suite + report (make report), cpu", last_cpu_s, "s", "", -1);
	char rm[128];
	snprintf(rm, sizeof rm, "rm -rf %s", tmp);
	if (system(rm) != 0)
		note("long figures", "could not remove their output folder");
}

/* The child of fig_packed: a 1M-key problem at d = 128, fp16 input, packed
 * or as doubles, and its truth over every key; exit status 0 on success. */
static int rss_child(int packed)
{
	const size_t n = 1 << 20, d = 128;
	skv_dd *out = malloc(d * sizeof *out), lse;
	int st;
	if (packed) {
		skv_packed p;
		st = skv_packed_init(&p, 1, n, d, SKV_DIST_GAUSSIAN, 0.5, SKV_FP16, 1);
		if (st == SKV_OK)
			st = skv_truth_range_packed(out, &lse, &p, 0, 0, n, SKV_TRUTH_PREC);
		skv_packed_free(&p);
	} else {
		skv_problem p;
		st = skv_problem_init(&p, 1, n, d, SKV_DIST_GAUSSIAN, 0.5, SKV_FP16, 1);
		if (st == SKV_OK)
			st = skv_truth_range(out, &lse, &p, 0, 0, n, SKV_TRUTH_PREC);
		skv_problem_free(&p);
	}
	free(out);
	return st == SKV_OK ? 0 : 1;
}

/* Peak RSS per key of a 1M-key problem and its truth, packed and as
 * doubles, each in a process of its own (this binary again). */
static void fig_packed(const char *self)
{
	const char *mode[2] = {"--rss-double", "--rss-packed"};
	for (int packed = 0; packed < 2; packed++) {
		char *argv[] = {(char *)self, (char *)mode[packed], NULL};
		long kib = 0;
		const double t = run_timed(argv, &kib);
		const double per = (double)kib * 1024 / 1048576;
		if (packed)
			row("mem_packed_bytes_per_key", "peak RSS per key: packed problem + truth, 1M", per, "B",
			    "<= 600", t >= 0 && per <= 600);
		else
			row("mem_double_bytes_per_key", "peak RSS per key: double problem + truth, 1M", per, "B", "",
			    -1);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strncmp(argv[1], "--rss-", 6) == 0)
		return rss_child(strcmp(argv[1], "--rss-packed") == 0);
	const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	char self[4096];
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	if (k <= 0)
		return 1;
	self[k] = '\0';
	memcpy(root, self, sizeof root);
	for (int up = 0; up < 2; up++) /* B/tests/bench_targets -> B */
		*strrchr(root, '/') = '\0';
	snprintf(skv, sizeof skv, "%s/skv", root);
	snprintf(last_path, sizeof last_path, "%s/bench-last.txt", root);
	*strrchr(root, '/') = '\0'; /* B's parent: the tree */
	if (access(skv, X_OK) != 0) {
		fprintf(stderr, "bench_targets: %s is missing (make builds it)\n", skv);
		return 1;
	}
	last = fopen(last_path, "w");
	printf("# issue 18's figures (ratios: alternated pairs in this run; %s)\n", quick ? "quick" : "all");
	printf("%-46s %12s %-9s %-14s %-5s %10s\n", "figure", "measured", "unit", "target", "", "baseline");
	fig_anchor();
	fig_truth();
	fig_normals();
	fig_round();
	if (!quick) {
		fig_packed(self);
		fig_long();
	}
	if (last)
		fclose(last);
	printf("# values written to %s; bench/baseline.txt holds the recorded ones\n", last_path);
	return 0;
}
