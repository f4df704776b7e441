/* bench_round.c - throughput of rounding to each format and of fp16 add/mul/exp, against a plain loop. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fmt_inline.h"
#include "skv.h"

/* Small arrays (L1-resident) so the figures are the arithmetic, not memory. */
enum { N = 4096, BEST_OF = 5 };
static double xs[N], xa[N], ys[N], out[N];

/* Keeps the compiler from dropping or merging repetitions of a loop. */
#define CLOBBER(p) __asm__ volatile("" : : "r"(p) : "memory")

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The kernels' way: the format is a run-time value (a stage of a
 * configuration), so the rounding reads its row of the format table. The
 * volatile keeps the compiler from specialising the loop for one format. */
static volatile int fmt_now;

static void k_plain(void)
{
	for (int i = 0; i < N; i++)
		out[i] = xs[i] + ys[i];
}

/* Inputs of an unsigned format are |x| (a negative one would only measure
 * the NaN path). */
static const double *inputs(skv_format f) { return skv_format_is_signed(f) ? xs : xa; }

static void k_round_inline(void)
{
	const skv_format f = (skv_format)fmt_now;
	const double *x = inputs(f);
	for (int i = 0; i < N; i++)
		out[i] = skv_round_i(f, x[i]);
}

static void k_round_call(void)
{
	const skv_format f = (skv_format)fmt_now;
	const double *x = inputs(f);
	for (int i = 0; i < N; i++)
		out[i] = skv_round(f, x[i]);
}

static void k_round_fp16_const(void)
{
	for (int i = 0; i < N; i++)
		out[i] = skv_round_i(SKV_FP16, xs[i]);
}

static void k_add_fp16(void)
{
	for (int i = 0; i < N; i++)
		out[i] = skv_add_i(SKV_FP16, xs[i], ys[i]);
}

static void k_mul_fp16(void)
{
	for (int i = 0; i < N; i++)
		out[i] = skv_mul_i(SKV_FP16, xs[i], ys[i]);
}

static void k_exp_fp16(void)
{
	for (int i = 0; i < N; i++)
		out[i] = skv_exp_i(SKV_FP16, xs[i]);
}

static void k_exp_libm(void)
{
	for (int i = 0; i < N; i++)
		out[i] = exp(xs[i]);
}

/* Best of BEST_OF timings of `reps` passes, in seconds per value. */
static double time_kernel(void (*k)(void), long reps)
{
	double best = INFINITY;

	for (int b = 0; b < BEST_OF; b++) {
		double t0 = now();
		for (long r = 0; r < reps; r++) {
			CLOBBER(xs);
			k();
		}
		double t = (now() - t0) / ((double)reps * N);
		if (t < best)
			best = t;
	}
	return best;
}

static double row(const char *name, void (*k)(void), long reps, double base)
{
	double t = time_kernel(k, reps);
	printf("%-40s %10.2f %12.0f %12.2f\n", name, t * 1e9, 1e-6 / t, t / base);
	return out[N / 2];
}

/*
 * With an argument "count FORMAT": one pass of the run-time-format rounding
 * loop and of the skv_round loop, for callgrind's instruction counts
 * (valgrind --tool=callgrind --toggle-collect=k_round_inline ...).
 */
int main(int argc, char **argv)
{
	uint64_t seed = 2024;
	const long reps = 2000; /* 8.2 million values per timing */
	double base, sum = 0;
	char name[64];

	/* fp16 values in [-8, 8] (moderate: exp stays finite, products and
	 * sums mostly normal), so the inputs are values of every wide format
	 * and need rounding in the narrow ones. */
	for (int i = 0; i < N; i++) {
		xs[i] = skv_round(SKV_FP16, ldexp((double)(splitmix64(&seed) >> 11), -53) * 16 - 8);
		ys[i] = skv_round(SKV_FP16, ldexp((double)(splitmix64(&seed) >> 11), -53) * 16 - 8);
		xa[i] = fabs(xs[i]);
	}
	if (argc == 3 && strcmp(argv[1], "count") == 0) {
		skv_format f;
		if (skv_format_parse(&f, argv[2]) != SKV_OK) {
			fprintf(stderr, "bench_round: unknown format '%s'\n", argv[2]);
			return 2;
		}
		fmt_now = (int)f;
		k_round_inline();
		k_round_call();
		printf("%g\n", out[N / 2]);
		return 0;
	}
	base = time_kernel(k_plain, reps);
	printf("%-40s %10s %12s %12s\n", "operation", "ns/value", "Mvalues/s", "x plain loop");
	printf("%-40s %10.2f %12.0f %12.2f\n", "plain loop (x + y in double)", base * 1e9, 1e-6 / base, 1.0);
	sum += row("skv_round_i fp16 (format known at compile time)", k_round_fp16_const, reps, base);
	for (int f = 0; f < SKV_NFORMATS; f++) {
		fmt_now = f;
		snprintf(name, sizeof name, "skv_round_i %s (run-time format)", skv_format_name((skv_format)f));
		sum += row(name, k_round_inline, reps, base);
	}
	for (int f = 0; f < SKV_NFORMATS; f++) {
		fmt_now = f;
		snprintf(name, sizeof name, "skv_round %s (call)", skv_format_name((skv_format)f));
		sum += row(name, k_round_call, reps, base);
	}
	sum += row("skv_add_i fp16", k_add_fp16, reps, base);
	sum += row("skv_mul_i fp16", k_mul_fp16, reps, base);
	sum += row("skv_exp_i fp16", k_exp_fp16, reps, base);
	sum += row("exp (libm double, no rounding)", k_exp_libm, reps, base);
	printf("(N = %d values per pass, %ld passes, best of %d; checksum %g)\n", N, reps, BEST_OF, sum);
	return 0;
}
