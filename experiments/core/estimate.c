/* estimate.c - a sweep's peak memory and CPU time, estimated from its spec before any work (the numbers a refusal gives). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/sweep_internal.h"

/* One point's sizes; key: what its instance depends on, trial aside (the
 * PROBLEM parameters and the query rows), `len` words at `key`. */
typedef struct {
	double n, d, nq, S;
	const uint64_t *key;
} point_size;

static size_t key_words; /* for the comparator (one thread) */

static int cmp_point_key(const void *a, const void *b)
{
	const point_size *x = a, *y = b;
	return memcmp(x->key, y->key, key_words * sizeof *x->key);
}

/* Bytes the exact truth's MPFR fallback holds per key while it runs (the
 * fast path holds a few hundred doubles whatever the context), with room. */
enum { TRUTH_BYTES_PER_KEY = 160 };

/* Per point: its sizes and key, the largest instance and kernel run, and
 * the kernel and merge work of all its trials. */
static void size_points(point_size *ps, uint64_t *keys, size_t kw, const run_spec *s, double *inst_max,
			double *run_max, double *work)
{
	const size_t np = spec_npoints(s);
	const double T = (double)spec_trials(s);
	for (size_t p = 0; p < np; p++) {
		param_value v[NPARAMS];
		spec_values(s, p, v);
		point_size *q = &ps[p];
		q->n = (double)v[P_CTX].u, q->d = (double)v[P_HEAD_DIM].u;
		q->nq = (double)sweep_query_rows(s->exp->kind, v);
		q->S = s->exp->kind != KIND_ONLINE ? (double)v[P_SPLITS].u : 1;
		uint64_t *k = keys + p * kw;
		for (int i = 0, j = 0; i < NPARAMS; i++)
			if (params[i].stage == STAGE_PROBLEM)
				k[j++] = sweep_key_word(i, v[i]);
		k[kw - 1] = (uint64_t)q->nq;
		q->key = k;
		double inst = (q->nq + 2 * q->n) * q->d * 8 + q->nq * (q->d + 1) * 16;
		*inst_max = inst > *inst_max ? inst : *inst_max;
		double run = q->S * q->d * 16 + q->S * 24 + q->nq * q->d * 8;
		*run_max = run > *run_max ? run : *run_max;
		/* a kernel run or online pass, and a store and merge, per trial */
		*work += T * (progress_kernel_work(v) * (q->nq > 1 ? (q->n + 1) / 2 : 1) + progress_row_work(KIND_SPLIT, v));
	}
}

int sweep_estimate(double *bytes, double *cpu_s, const run_spec *s, int threads)
{
	const size_t np = spec_npoints(s);
	const double T = (double)spec_trials(s);
	size_t kw = 1;
	for (int i = 0; i < NPARAMS; i++)
		kw += params[i].stage == STAGE_PROBLEM;
	point_size *ps = malloc((np ? np : 1) * sizeof *ps);
	uint64_t *keys = malloc((np ? np : 1) * kw * sizeof *keys);
	if (!ps || !keys) {
		free(ps), free(keys);
		return SKV_ENOMEM;
	}
	double inst_max = 0, run_max = 0, work = 0, rows = (double)np * T, nmax = 0;
	size_points(ps, keys, kw, s, &inst_max, &run_max, &work);
	/* Problems and truths once per distinct instance and trial. */
	key_words = kw;
	qsort(ps, np, sizeof *ps, cmp_point_key);
	for (size_t p = 0; p < np; p++) {
		const point_size *q = &ps[p];
		nmax = q->n > nmax ? q->n : nmax;
		if (p == 0 || cmp_point_key(&ps[p - 1], &ps[p]) != 0) {
			double kd = q->nq > 1 ? q->n * (q->n + 1) / 2 * q->d : q->n * q->d;
			work += T * (8 * kd + 2 * (q->nq + 2 * q->n) * q->d); /* progress.c's truth and draw units */
		}
	}
	free(ps), free(keys);
	/* A chunk of instances (SWEEP_CHUNK_BYTES, or one when larger), every
	 * kernel run of the chunk (bounded here by one run per point and trial
	 * of the chunk's instances), each thread's truth and row scratch, the
	 * rows and their sharing keys. */
	const double chunk = inst_max > (double)SWEEP_CHUNK_BYTES ? inst_max : (double)SWEEP_CHUNK_BYTES;
	const double per_chunk = inst_max > 0 ? chunk / inst_max : 1;
	const double runs = run_max * (per_chunk * (double)np < rows ? per_chunk * (double)np : rows);
	*bytes = (inst_max < chunk ? inst_max * per_chunk : inst_max) + runs +
		 (double)threads * (TRUTH_BYTES_PER_KEY * nmax + run_max) + rows * (sizeof(sweep_row) + 96);
	*cpu_s = work * SWEEP_SECONDS_PER_UNIT;
	return SKV_OK;
}
