/* bench_truth.c - time of the MPFR ground truth for one query row (default n = 16384, d = 128). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "skv.h"

/* Usage: bench_truth [n [d [prec [reps]]]]. Single-threaded by construction
 * (skv_truth_range uses no threads); pin it with taskset -c 0 to be sure. */

static double seconds(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static size_t arg(int argc, char **argv, int i, size_t dflt)
{
	return argc > i ? (size_t)strtoull(argv[i], NULL, 10) : dflt;
}

enum { MAX_REPS = 64 };

int main(int argc, char **argv)
{
	const size_t n = arg(argc, argv, 1, 16384), d = arg(argc, argv, 2, 128);
	const long prec = (long)arg(argc, argv, 3, SKV_TRUTH_PREC);
	size_t reps = arg(argc, argv, 4, 3);
	if (reps == 0 || reps > MAX_REPS)
		reps = 3;
	const struct {
		skv_format f;
		skv_dist dist;
		double score_scale;
	} cases[] = {
		{SKV_FP16, SKV_DIST_GAUSSIAN, 0.5},
		{SKV_FP64, SKV_DIST_GAUSSIAN, 0.5},
		{SKV_FP64, SKV_DIST_SINK, 4.0},
	};
	skv_dd *out = malloc(d * sizeof *out);
	if (!out)
		return 1;
	printf("# skv_truth_range, one query row, n = %zu, d = %zu, prec = %ld, %zu reps\n", n, d, prec,
	       reps);
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		skv_problem p;
		const double g0 = seconds(CLOCK_MONOTONIC);
		int st = skv_problem_init(&p, 1, n, d, cases[c].dist, cases[c].score_scale, cases[c].f, 2);
		const double gen = seconds(CLOCK_MONOTONIC) - g0;
		if (st != SKV_OK) {
			fprintf(stderr, "problem: %s\n", skv_strerror(st));
			return 1;
		}
		double wall[MAX_REPS], cpu[MAX_REPS];
		skv_dd lse = {0, 0};
		for (size_t r = 0; r < reps; r++) {
			const double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
			st = skv_truth_range(out, &lse, &p, 0, 0, n, prec);
			cpu[r] = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
			wall[r] = seconds(CLOCK_MONOTONIC) - w0;
			if (st != SKV_OK) {
				fprintf(stderr, "truth: %s\n", skv_strerror(st));
				return 1;
			}
		}
		qsort(wall, reps, sizeof wall[0], cmp_double);
		qsort(cpu, reps, sizeof cpu[0], cmp_double);
		printf("%s input, %-8s score_scale %-4g: wall min %.3f s median %.3f s, cpu median %.3f s"
		       "  (lse %.17g; skv_problem_init %.3f s)\n",
		       skv_format_name(cases[c].f), skv_dist_name(cases[c].dist), cases[c].score_scale,
		       wall[0], wall[reps / 2], cpu[reps / 2], lse.hi, gen);
		skv_problem_free(&p);
	}
	free(out);
	return 0;
}
