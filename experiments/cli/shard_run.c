/* shard_run.c - running a suite's units in one process: the whole run or one shard, every finished unit journalled, resumed after an interruption, the progress line. */
#define _GNU_SOURCE /* asprintf, realpath */
#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/shard.h"

typedef struct {
	const run_spec *specs;
	size_t nspecs;
	const shard_mode *m;
	const char *command;
	suite_units u;
	unsigned *shard;          /* [nunits] shard of each unit (m->n > 0), else NULL */
	unsigned char *done;      /* [nunits] in a journal already */
	journal_set js;
	/* the progress of this invocation's units */
	FILE *tty, *log;
	double t0, last, work_todo, work_done;
	size_t todo, ndone;
	int step;                 /* tenths of the work logged (log) */
} run_state;

static int mine(const run_state *R, size_t g) { return !R->shard || R->shard[g] == R->m->k - 1; }

/* --------------------------------------------------------------- progress */

/* Units done of this invocation's, the share of their estimated work,
 * elapsed and the ETA: on a terminal as one updated line, in a log (a
 * shard's, not a terminal) one line per tenth of the work. */
static void progress(run_state *R, int final)
{
	const double t = progress_now(), el = t - R->t0;
	const double frac = R->work_todo > 0 ? R->work_done / R->work_todo : 1.0;
	if (R->tty && (final || t - R->last >= 0.25)) {
		R->last = t;
		fprintf(R->tty, "\rskv: %zu/%zu units done, %3.0f%% of the work, %.1f s elapsed", R->ndone, R->todo,
			100 * (frac < 1 ? frac : 1), el);
		if (!final && frac > 0)
			fprintf(R->tty, ", ETA %.1f s  ", el * (1 - frac) / frac);
		else
			fputs(final ? "          \n" : "  ", R->tty);
		fflush(R->tty);
	}
	if (R->log && (int)(10 * frac) > R->step) {
		R->step = (int)(10 * frac);
		fprintf(R->log, "skv: shard %u/%u: %zu/%zu units done, %.0f%% of the work, %.1f s elapsed, ETA %.1f s\n",
			R->m->k, R->m->n, R->ndone, R->todo, 100 * frac, el, frac > 0 ? el * (1 - frac) / frac : 0.0);
		fflush(R->log);
	}
}

/* ------------------------------------------------------------------ runs */

typedef struct {
	run_state *R;
	size_t k;
	unit_set *c;
	journal *j;
} spec_ctx;

/* A finished unit: its record appended to the journal, then gathered
 * (read back from the very bytes journalled). */
static int on_unit(void *ctx, const unit_plan *p, size_t unit, const sweep_row *rows, double busy_s, message *e)
{
	spec_ctx *x = ctx;
	unsigned char *rec = NULL;
	size_t len = 0;
	if (unit_record(&rec, &len, p, x->k, unit, rows, busy_s) != SKV_OK) {
		msg_set(e, "skv: out of memory");
		return SKV_ENOMEM;
	}
	int st = journal_append(x->j, rec, len, e);
	if (st == SKV_OK)
		st = unit_record_add(x->c, p, rec + JOURNAL_FRAME_HEAD, len - JOURNAL_FRAME_HEAD - JOURNAL_FRAME_TAIL, e);
	free(rec);
	x->R->ndone++;
	x->R->work_done += x->R->u.work[x->R->u.unit0[x->k] + unit];
	progress(x->R, 0);
	return st;
}

/* Spec k: its journalled units gathered, the rest of its share run, and
 * (the whole run) its files written. */
static int run_spec_units(run_state *R, size_t k, message *e)
{
	const run_spec *s = &R->specs[k];
	const double t0 = progress_now();
	unit_plan *p = NULL;
	unit_set c;
	size_t *todo = NULL, n = 0;
	int st = unit_plan_open(&p, s, e);
	if (st != SKV_OK)
		return st;
	if (unit_set_init(&c, p) != SKV_OK || !(todo = malloc((unit_count(p) + 1) * sizeof *todo))) {
		unit_plan_close(p);
		free(todo);
		msg_set(e, "skv: out of memory");
		return SKV_ENOMEM;
	}
	st = jset_gather(&R->js, k, &c, p, e);
	for (size_t i = 0; i < unit_count(p); i++)
		if (!c.have[i] && mine(R, R->u.unit0[k] + i))
			todo[n++] = i;
	spec_ctx x = {R, k, &c, jset_journal(&R->js, k)};
	/* Chunks of a few units per thread: each finished chunk is journalled,
	 * and there are enough units in one for the threads to share. */
	if (st == SKV_OK && n > 0)
		st = unit_plan_run(p, todo, n, 4 * (size_t)unit_plan_threads(p), on_unit, &x, e);
	if (st == SKV_OK && !R->m->n)
		st = shard_write(s, &c, p, progress_now() - t0, R->command, e);
	free(todo);
	unit_set_free(&c);
	unit_plan_close(p);
	return st;
}

/* The end of a run: the whole run's journals are no longer needed; a
 * shard's journal becomes its shard file, whole and flushed. */
static int finish(run_state *R, message *e)
{
	char *fin = NULL;
	int st = jset_finish(&R->js, R->m, &fin, e);
	if (st == SKV_OK && fin)
		fprintf(stderr, "skv: shard %u/%u: %zu unit%s of %zu, %.1f s -> %s\n", R->m->k, R->m->n, R->ndone,
			R->ndone == 1 ? "" : "s", R->u.nunits, progress_now() - R->t0, fin);
	free(fin);
	return st;
}

/* The estimate before the run: always for a shard, --resume or
 * --estimate, else on a terminal. */
static void estimate(const run_state *R)
{
	if (R->m->n || R->m->resume || R->m->estimate || R->tty)
		shard_estimate(stderr, &R->u, R->shard, R->m, spec_threads(&R->specs[0]));
}

/* Plans and partitions (--estimate: prints the estimate and sets *stop). */
static int prepare(run_state *R, int *stop, message *e)
{
	int st = suite_units_plan(&R->u, R->specs, R->nspecs, R->m->n, e);
	if (st != SKV_OK)
		return st;
	R->done = calloc(R->u.nunits + 1, 1);
	R->shard = R->m->n ? malloc((R->u.nunits + 1) * sizeof *R->shard) : NULL;
	if (!R->done || (R->m->n && !R->shard) ||
	    (R->m->n && unit_partition(R->shard, R->u.work, R->u.nunits, R->m->n) != SKV_OK)) {
		msg_set(e, "skv: out of memory");
		return SKV_ENOMEM;
	}
	*stop = R->m->estimate;
	if (*stop) {
		estimate(R);
		shard_estimate_lines(stderr, &R->u, R->specs);
	}
	return SKV_OK;
}

int shard_execute(const run_spec *specs, size_t n, const shard_mode *m, const char *command, message *e)
{
	run_state R;
	memset(&R, 0, sizeof R);
	R.specs = specs, R.nspecs = n, R.m = m, R.command = command;
	R.tty = isatty(fileno(stderr)) ? stderr : NULL;
	R.log = !R.tty && m->n ? stderr : NULL;
	int stop = 0;
	int st = prepare(&R, &stop, e);
	if (st == SKV_OK && !stop)
		st = jset_start(&R.js, specs, n, &R.u, m, R.shard, R.done, e);
	if (st == SKV_OK && !stop) {
		estimate(&R); /* after the journal's checks: a refusal is its one line */
		size_t share = 0;
		for (size_t g = 0; g < R.u.nunits; g++)
			if (mine(&R, g) && (share++, !R.done[g]))
				R.todo++, R.work_todo += R.u.work[g];
		if (m->resume)
			fprintf(stderr, "skv: --resume: %zu of the %zu units%s were in the journal; %zu to run\n",
				share - R.todo, share, m->n ? " of the shard" : "", R.todo);
		R.t0 = R.last = progress_now();
		for (size_t k = 0; k < n && st == SKV_OK; k++)
			st = run_spec_units(&R, k, e);
		if (R.tty && R.ndone)
			progress(&R, 1);
	}
	if (st == SKV_OK && !stop)
		st = finish(&R, e);
	else if (st != SKV_OK && R.ndone > 0 && R.js.nfj > 0) {
		char *why = strdup(msg_text(e));
		msg_set(e, "%s (the %zu finished unit%s kept in '%s': --resume continues from there)", why ? why : "",
			R.ndone, R.ndone == 1 ? " is" : "s are", R.js.fj[0].path);
		free(why);
	}
	jset_free(&R.js);
	suite_units_free(&R.u);
	free(R.shard), free(R.done);
	return st;
}
