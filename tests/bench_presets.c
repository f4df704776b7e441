/* bench_presets.c - the systems experiment's problems through the library with every preset whole: the median error of the legacy subset the program maps today, of the full preset, and of the full preset with approximate math. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skv.h"

/* Usage:
 *   bench_presets              a quick run: ctx 1024, head_dim 128, 2 trials
 *   bench_presets systems [T]  the systems experiment's problems (ctx 8192,
 *       head_dim 128, gaussian, score-scale 0.5, blocks of 128 keys, even
 *       splits, trial t drawn from skv_seed_mix(1, t), T trials, 8 by
 *       default) at splits 1, 16, 256 and LSE offsets 0 and 500.
 * For each preset and point it prints the median norm_rel_err over the
 * trials of three runs: `legacy`, skv_preset_resolve (the fields the
 * program maps today: it reproduces the program's systems.csv), `exact`,
 * skv_preset_resolve_full (every mechanism) with correctly rounded math,
 * and `own-math`, the full preset in its own math mode (fast for the GPU
 * systems, cuda for TileLang, exact for llama.cpp CPU and the controls)
 * with math_seed = the trial. llama.cpp CPU runs one key per block (its loop) and llama.cpp
 * CUDA over interleaved 128-key tiles in the full runs. Trials run in
 * parallel, each into its own slot: the output does not depend on the
 * thread count. */

#define NS 3
#define NO 2
static const unsigned splits[NS] = {1, 16, 256};
static const double offsets[NO] = {0.0, 500.0};

enum { LEGACY = 0, EXACT = 1, OWN = 2, NMODES = 3 };

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One run: kernel, storage, merge; the normwise error against the truth
 * (NaN when something failed, so it shows). */
static double run_one(const skv_problem *p, const skv_dd *truth, const skv_preset *pr, int mode, unsigned S,
		      double off, uint64_t trial)
{
	skv_config c;
	skv_merge_spec m;
	int st = mode == LEGACY ? skv_preset_resolve(&c, &m, pr, pr->cfg.input)
				: skv_preset_resolve_full(&c, &m, pr, pr->cfg.input, (unsigned)p->d);
	if (st != SKV_OK)
		return NAN;
	if (mode == EXACT)
		c.math = SKV_MATH_EXACT; /* the full preset, correctly rounded */
	c.math_seed = trial;          /* the preset's own math mode draws from the trial */
	const size_t n = p->n, d = p->d, T = 128;
	const int tiled = mode != LEGACY && pr->system == SKV_HEUR_LLAMACPP_CUDA;
	const size_t block = mode != LEGACY && c.acc ? 1 : 128;
	size_t nb = tiled ? (n + T - 1) / T : S, *b = malloc((nb + 1) * sizeof *b);
	skv_partials sp;
	double out[512], lse, err = NAN;
	if (!b || skv_partials_init(&sp, S, d) != SKV_OK) {
		free(b);
		return NAN;
	}
	for (size_t i = 0; tiled && i <= nb; i++)
		b[i] = i * T < n ? i * T : n;
	st = tiled ? skv_split_kernel_tiled(&sp, p, 0, b, nb, S, T, off, &c)
		   : (skv_bounds_even(b, n, S) == SKV_OK ? skv_split_kernel(&sp, p, 0, b, S, block, off, &c) : SKV_EINVAL);
	skv_errors e;
	if (st == SKV_OK && skv_partials_store(&sp, &sp, &c) == SKV_OK && skv_merge_run(out, &lse, &sp, &m, &c) == SKV_OK &&
	    skv_errors_compute(&e, out, truth, d, c.output) == SKV_OK)
		err = e.norm_rel;
	skv_partials_free(&sp);
	free(b);
	return err;
}

int main(int argc, char **argv)
{
	const int full = argc > 1 && strcmp(argv[1], "systems") == 0;
	const size_t n = full ? 8192 : 1024, d = 128, trials = full && argc > 2 ? strtoul(argv[2], NULL, 10) : full ? 8 : 2;
	const size_t np = skv_preset_count();
	double *err = malloc(np * NMODES * NS * NO * trials * sizeof *err);
	if (!err || trials == 0 || trials > 64)
		return 2;
	printf("bench_presets: ctx %zu, head_dim %zu, %zu trials; median norm_rel_err\n", n, d, trials);
#pragma omp parallel for schedule(dynamic) collapse(2)
	for (size_t pi = 0; pi < np; pi++)
		for (size_t t = 0; t < trials; t++) {
			const skv_preset *pr = skv_preset_at(pi);
			skv_problem p;
			skv_dd truth[128], tl;
			int ok = skv_problem_init(&p, 1, n, d, SKV_DIST_GAUSSIAN, 0.5, pr->cfg.input, skv_seed_mix(1, t)) ==
					 SKV_OK &&
				 skv_truth_range(truth, &tl, &p, 0, 0, n, SKV_TRUTH_PREC) == SKV_OK;
			for (int mo = 0; mo < NMODES; mo++)
				for (size_t si = 0; si < NS; si++)
					for (size_t oi = 0; oi < NO; oi++)
						err[(((pi * NMODES + mo) * NS + si) * NO + oi) * trials + t] =
							ok ? run_one(&p, truth, pr, mo, splits[si], offsets[oi], t) : NAN;
			if (ok)
				skv_problem_free(&p);
		}
	printf("%-18s %6s %6s %11s %11s %11s\n", "preset", "splits", "offset", "legacy", "exact", "own-math");
	for (size_t pi = 0; pi < np; pi++)
		for (size_t si = 0; si < NS; si++)
			for (size_t oi = 0; oi < NO; oi++) {
				double med[NMODES];
				for (int mo = 0; mo < NMODES; mo++)
					med[mo] = median(err + (((pi * NMODES + mo) * NS + si) * NO + oi) * trials, trials);
				printf("%-18s %6u %6g %11.6g %11.6g %11.6g\n", skv_preset_at(pi)->name, splits[si], offsets[oi],
				       med[LEGACY], med[EXACT], med[OWN]);
			}
	free(err);
	return 0;
}
