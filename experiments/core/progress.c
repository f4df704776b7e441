/* progress.c - the progress line of a sweep on a terminal: the share of the work done, points done, the ETA. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/sweep_internal.h"

/* Work units of roughly equal time, measured once on x86-64: drawing a
 * problem costs about 2 units per drawn value, the exact truth about 8 per
 * key and dimension, the split kernel and the online softmax 1, a store and
 * merge about 1 per split and dimension. Only the ETA uses them. */
enum { WORK_DRAW = 2, WORK_TRUTH = 8, WORK_KERNEL = 1, WORK_MERGE = 1 };

double progress_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void progress_start(progress *pg, FILE *f, const char *name, double t0)
{
	pg->f = f;
	pg->name = name;
	pg->t0 = pg->last = t0;
}

static double keys_dims(const param_value *v, int causal)
{
	double n = (double)v[P_CTX].u, d = (double)v[P_HEAD_DIM].u;
	return (causal ? n * (n + 1) / 2 : n) * d;
}

double progress_draw_work(const param_value *v, size_t nq)
{
	return WORK_DRAW * (double)(nq + 2 * v[P_CTX].u) * (double)v[P_HEAD_DIM].u;
}

double progress_truth_work(const param_value *v, size_t nq) { return WORK_TRUTH * keys_dims(v, nq > 1); }

double progress_kernel_work(const param_value *v) { return WORK_KERNEL * keys_dims(v, 0); }

double progress_row_work(unsigned kind, const param_value *v)
{
	if (kind == KIND_ONLINE)
		return WORK_KERNEL * keys_dims(v, sweep_query_rows(kind, v) > 1);
	return WORK_MERGE * (double)v[P_SPLITS].u * (double)v[P_HEAD_DIM].u;
}

void progress_print(progress *pg, int final)
{
	double el = progress_now() - pg->t0, frac = pg->work_total > 0 ? pg->work_done / pg->work_total : 1.0;
	/* Points finish only in the last phase (each needs all its trials'
	 * truths and kernel runs), so the share of the work leads the line. */
	fprintf(pg->f, "\rskv: %s: %3.0f%% of the work, %zu/%zu points done, %.1f s elapsed", pg->name,
		100.0 * (frac < 1.0 ? frac : 1.0), pg->points_done, pg->npoints, el);
	if (!final && frac > 0)
		fprintf(pg->f, ", ETA %.1f s  ", el * (1.0 - frac) / frac);
	else
		fprintf(pg->f, "%s", final ? "          \n" : "  ");
	fflush(pg->f);
	pg->printed = 1;
}

void progress_add(progress *pg, double work, size_t point)
{
	if (!pg->f)
		return;
#pragma omp critical(skv_progress_line)
	{
		pg->work_done += work;
		if (point != SIZE_MAX && --pg->trials_left[point] == 0)
			pg->points_done++;
		double t = progress_now();
		if (t - pg->last >= 0.25) {
			pg->last = t;
			progress_print(pg, 0);
		}
	}
}
