/* mpi_sched.c - skv-mpi's schedule (the largest units first, a batch of one spec per request) and a rank's worker measuring batches. */
#include <stdlib.h>
#include <string.h>
#include "mpi/mpi_run.h"

/* ------------------------------------------------------------- schedule */

int sched_init(mpi_sched *s, const suite_units *u, const unsigned char *done, int nranks)
{
	memset(s, 0, sizeof *s);
	s->u = u;
	s->nranks = nranks;
	s->list = calloc(u->nspecs, sizeof *s->list);
	s->len = calloc(u->nspecs, sizeof *s->len);
	s->pos = calloc(u->nspecs, sizeof *s->pos);
	if (!s->list || !s->len || !s->pos || pthread_mutex_init(&s->mu, NULL) != 0)
		return SKV_ENOMEM;
	for (size_t k = 0; k < u->nspecs; k++) {
		s->list[k] = malloc((u->unit0[k + 1] - u->unit0[k] + 1) * sizeof **s->list);
		if (!s->list[k])
			return SKV_ENOMEM;
		for (size_t g = u->unit0[k]; g < u->unit0[k + 1]; g++)
			if (!done[g])
				s->list[k][s->len[k]++] = g;
		if (unit_by_work(s->list[k], s->len[k], u->work) != SKV_OK)
			return SKV_ENOMEM;
		s->left += s->len[k];
	}
	return SKV_OK;
}

size_t sched_next(mpi_sched *s, size_t *out, size_t threads)
{
	pthread_mutex_lock(&s->mu);
	size_t best = s->u->nspecs, n = 0;
	for (size_t k = 0; k < s->u->nspecs; k++)
		if (s->pos[k] < s->len[k] &&
		    (best == s->u->nspecs || s->u->work[s->list[k][s->pos[k]]] > s->u->work[s->list[best][s->pos[best]]]))
			best = k;
	if (best < s->u->nspecs) {
		size_t share = (s->left + (size_t)s->nranks - 1) / (size_t)s->nranks;
		size_t want = threads < share ? threads : share;
		while (n < (want ? want : 1) && s->pos[best] < s->len[best])
			out[n++] = s->list[best][s->pos[best]++];
		s->left -= n;
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

void sched_free(mpi_sched *s)
{
	for (size_t k = 0; s->list && k < s->u->nspecs; k++)
		free(s->list[k]);
	free(s->list), free(s->len), free(s->pos);
	if (s->u)
		pthread_mutex_destroy(&s->mu);
	memset(s, 0, sizeof *s);
}

/* --------------------------------------------------------------- worker */

int worker_init(mpi_worker *w, const run_spec *specs, const suite_units *u, rec_sink sink, void *ctx, message *e)
{
	memset(w, 0, sizeof *w);
	w->specs = specs, w->u = u, w->sink = sink, w->ctx = ctx;
	w->plans = calloc(u->nspecs ? u->nspecs : 1, sizeof *w->plans);
	if (!w->plans) {
		msg_set(e, "skv-mpi: out of memory");
		return SKV_ENOMEM;
	}
	return SKV_OK;
}

int worker_plan(mpi_worker *w, size_t k, message *e)
{
	return w->plans[k] ? SKV_OK : unit_plan_open(&w->plans[k], &w->specs[k], e);
}

typedef struct {
	mpi_worker *w;
	size_t k;
} batch_ctx;

static int on_unit(void *ctx, const unit_plan *p, size_t unit, const sweep_row *rows, double busy_s, message *e)
{
	batch_ctx *b = ctx;
	unsigned char *rec = NULL;
	size_t len = 0;
	if (unit_record(&rec, &len, p, b->k, unit, rows, busy_s) != SKV_OK) {
		msg_set(e, "skv-mpi: out of memory");
		return SKV_ENOMEM;
	}
	return b->w->sink(b->w->ctx, rec, len, e);
}

int worker_batch(mpi_worker *w, const size_t *g, size_t n, message *e)
{
	size_t unit;
	const size_t k = suite_units_spec(w->u, g[0], &unit);
	size_t *units = malloc(n * sizeof *units);
	int st = units ? worker_plan(w, k, e) : SKV_ENOMEM;
	for (size_t i = 0; st == SKV_OK && i < n; i++)
		units[i] = g[i] - w->u->unit0[k]; /* one spec's, by sched_next */
	const double t0 = progress_now();
	batch_ctx b = {w, k};
	/* One chunk (the memory bound aside): the batch's units share the threads. */
	if (st == SKV_OK)
		st = unit_plan_run(w->plans[k], units, n, 0, on_unit, &b, e);
	w->busy_s += progress_now() - t0;
	if (!units)
		msg_set(e, "skv-mpi: out of memory");
	free(units);
	return st;
}

void worker_free(mpi_worker *w)
{
	for (size_t k = 0; w->plans && k < w->u->nspecs; k++)
		unit_plan_close(w->plans[k]);
	free(w->plans);
	memset(w, 0, sizeof *w);
}
