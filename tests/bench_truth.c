/* bench_truth.c - time of the ground truth for one query row: the fast path against MPFR at 128 bits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "skv.h"
#include "truth_internal.h"

/* Usage:
 *   bench_truth [n [d [prec [reps]]]]   each case: skv_truth_range at prec
 *       (default SKV_TRUTH_PREC: the fast path) and, in the same run, the
 *       MPFR path at 128 bits (skv_truth_mpfr, the truth before the fast
 *       path), with the ratio of their times;
 *   bench_truth scale [d [reps]]         the public truth alone at n = 16384,
 *       131072 and 1048576 (fp32 input, Gaussian), time per key and per
 *       key-dimension, to show it is linear in n (2 GiB of K and V at 1M).
 * Single-threaded by construction (skv_truth_range uses no threads); pin it
 * with taskset -c 0 to be sure. Times are CPU seconds, minimum of reps. */

static double seconds(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static size_t arg(int argc, char **argv, int i, size_t dflt)
{
	return argc > i ? (size_t)strtoull(argv[i], NULL, 10) : dflt;
}

enum { MAX_REPS = 64 };

/* The least CPU time of reps calls (the fast path when mpfr is 0). */
static int time_truth(double *best, skv_dd *out, skv_dd *lse, const skv_problem *p, long prec, int mpfr,
		      size_t reps)
{
	*best = 1e30;
	for (size_t r = 0; r < reps; r++) {
		const double c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
		const int st = mpfr ? skv_truth_mpfr(out, lse, p, 0, 0, p->n, prec)
				    : skv_truth_range(out, lse, p, 0, 0, p->n, prec);
		const double c = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (st != SKV_OK) {
			fprintf(stderr, "truth: %s\n", skv_strerror(st));
			return st;
		}
		*best = c < *best ? c : *best;
	}
	return SKV_OK;
}

static int compare(size_t n, size_t d, long prec, size_t reps)
{
	const struct {
		skv_format f;
		skv_dist dist;
		double score_scale;
	} cases[] = {
		{SKV_FP16, SKV_DIST_GAUSSIAN, 0.5},
		{SKV_FP64, SKV_DIST_GAUSSIAN, 0.5},
		{SKV_FP64, SKV_DIST_SINK, 4.0},
	};
	skv_dd *out = malloc(d * sizeof *out), *old = malloc(d * sizeof *old);
	if (!out || !old)
		return 1;
	printf("# one query row, n = %zu, d = %zu: skv_truth_range (prec %ld) vs MPFR at 128 bits, "
	       "CPU s, min of %zu\n",
	       n, d, prec, reps);
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		skv_problem p;
		int st = skv_problem_init(&p, 1, n, d, cases[c].dist, cases[c].score_scale, cases[c].f, 2);
		double tn, to;
		skv_dd lse, lo;
		if (st == SKV_OK)
			st = time_truth(&tn, out, &lse, &p, prec, 0, reps);
		if (st == SKV_OK)
			st = time_truth(&to, old, &lo, &p, 128, 1, reps);
		if (st != SKV_OK) {
			fprintf(stderr, "%s\n", skv_strerror(st));
			return 1;
		}
		printf("%s input, %-8s score_scale %-4g: new %.4f s (%.2f ns/key/dim), MPFR-128 %.4f s: "
		       "%.1fx faster; %s (lse %.17g)\n",
		       skv_format_name(cases[c].f), skv_dist_name(cases[c].dist), cases[c].score_scale, tn,
		       tn * 1e9 / (double)(n * d), to, to / tn,
		       memcmp(out, old, d * sizeof *out) == 0 ? "same double-doubles" : "double-doubles differ",
		       lse.hi);
		skv_problem_free(&p);
	}
	free(out);
	free(old);
	return 0;
}

static int scale(size_t d, size_t reps)
{
	const size_t ns[] = {16384, 131072, 1048576};
	skv_dd *out = malloc(d * sizeof *out), lse;
	if (!out)
		return 1;
	printf("# skv_truth_range at SKV_TRUTH_PREC, fp32 input, Gaussian 0.5, d = %zu, CPU s, min of %zu\n", d,
	       reps);
	for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
		skv_problem p;
		double t;
		int st = skv_problem_init(&p, 1, ns[c], d, SKV_DIST_GAUSSIAN, 0.5, SKV_FP32, 1);
		if (st == SKV_OK)
			st = time_truth(&t, out, &lse, &p, SKV_TRUTH_PREC, 0, reps);
		if (st != SKV_OK) {
			fprintf(stderr, "%s\n", skv_strerror(st));
			return 1;
		}
		printf("n = %7zu: %.4f s, %.1f ns per key, %.2f ns per key and dimension\n", ns[c], t,
		       t * 1e9 / (double)ns[c], t * 1e9 / (double)(ns[c] * d));
		skv_problem_free(&p);
	}
	free(out);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "scale") == 0) {
		size_t reps = arg(argc, argv, 3, 3);
		return scale(arg(argc, argv, 2, 128), reps == 0 || reps > MAX_REPS ? 3 : reps);
	}
	size_t reps = arg(argc, argv, 4, 3);
	return compare(arg(argc, argv, 1, 16384), arg(argc, argv, 2, 128), (long)arg(argc, argv, 3, SKV_TRUTH_PREC),
		       reps == 0 || reps > MAX_REPS ? 3 : reps);
}
