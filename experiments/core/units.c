/* units.c - work units of a spec's sweep: their costs and rows, the shard partition, rows gathered from unit records. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/journal.h"
#include "core/sweep_internal.h"
#include "core/units.h"

struct unit_plan {
	sweep w;
	const run_spec *spec; /* the one spec: w.specs points here */
};

int unit_plan_open(unit_plan **out, const run_spec *s, message *e)
{
	unit_plan *p = calloc(1, sizeof *p);
	const sweep_opts o = {NULL, 0, 1};
	int st = p ? SKV_OK : SKV_ENOMEM;
	if (p) {
		p->spec = s;
		st = sweep_open(&p->w, &p->spec, 1, &o);
	}
	if (st != SKV_OK) {
		free(p);
		msg_set(e, "skv: %s: out of memory planning the units", s->exp->name);
		return st;
	}
	*out = p;
	return SKV_OK;
}

void unit_plan_close(unit_plan *p)
{
	if (!p)
		return;
	sweep_close(&p->w);
	free(p);
}

size_t unit_count(const unit_plan *p) { return p->w.ninst; }
int unit_plan_threads(const unit_plan *p) { return p->w.threads; }

const size_t *unit_rows(const unit_plan *p, size_t unit, size_t *n)
{
	*n = p->w.rows_start[unit + 1] - p->w.rows_start[unit];
	return p->w.rows_by + p->w.rows_start[unit];
}

/* The unit's items priced as progress.c prices them: the draw and the
 * truth, each kernel run (the online kind has none: its row is its
 * computation), each row. Sums of products of integers in a fixed order:
 * the same on every machine. */
void unit_describe(unit_info *u, const unit_plan *p, size_t i)
{
	const sweep *w = &p->w;
	const unsigned kind = p->spec->exp->kind;
	param_value v[NPARAMS];
	sweep_row_values(w, w->inst[i].rep, v);
	const size_t nq = w->inst[i].nq;
	const double truth = progress_draw_work(v, nq) + progress_truth_work(v, nq);
	double work = truth;
	size_t kr = 0;
	for (size_t j = w->runs_start[i]; kind != KIND_ONLINE && j < w->runs_start[i + 1]; j++, kr++) {
		sweep_row_values(w, w->runs[w->runs_by[j]].rep, v);
		work += progress_kernel_work(v);
	}
	for (size_t j = w->rows_start[i]; j < w->rows_start[i + 1]; j++) {
		sweep_row_values(w, w->rows_by[j], v);
		work += progress_row_work(kind, v);
	}
	*u = (unit_info){work, truth, w->rows_start[i + 1] - w->rows_start[i], nq, kr};
}

double unit_seconds(double work) { return work * SWEEP_SECONDS_PER_UNIT; }

/* ------------------------------------------------------------------ runs */

typedef struct {
	unit_plan *p;
	unit_done_fn done;
	void *ctx;
} run_ctx;

static int chunk_done(void *c, sweep *w, const size_t *ids, size_t n, message *e)
{
	run_ctx *r = c;
	for (size_t k = 0; k < n; k++) {
		int st = r->done(r->ctx, r->p, ids[k], w->rows, w->inst_busy[ids[k]], e);
		if (st != SKV_OK)
			return st;
	}
	return SKV_OK;
}

int unit_plan_run(unit_plan *p, const size_t *units, size_t n, size_t chunk_max, unit_done_fn done, void *ctx,
		  message *e)
{
	for (size_t k = 0; k < n; k++) {
		if (units[k] >= p->w.ninst) {
			msg_set(e, "skv: %s: no unit %zu (the run has %zu)", p->spec->exp->name, units[k], p->w.ninst);
			return SKV_EINVAL;
		}
		p->w.inst_busy[units[k]] = 0.0;
	}
	run_ctx r = {p, done, ctx};
	return sweep_run_list(&p->w, units, n, chunk_max, done ? chunk_done : NULL, &r, e);
}

/* ---------------------------------------------------------------- shards */

typedef struct {
	double work;
	size_t idx;
} priced;

static int by_work_desc(const void *a, const void *b)
{
	const priced *x = a, *y = b;
	if (x->work != y->work)
		return x->work > y->work ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

int unit_by_work(size_t *idx, size_t n, const double *work)
{
	priced *u = malloc((n ? n : 1) * sizeof *u);
	if (!u)
		return SKV_ENOMEM;
	for (size_t i = 0; i < n; i++)
		u[i] = (priced){work[idx[i]], idx[i]};
	qsort(u, n, sizeof *u, by_work_desc);
	for (size_t i = 0; i < n; i++)
		idx[i] = u[i].idx;
	free(u);
	return SKV_OK;
}

/* A min-heap of shards by (load, index): the least loaded on top. */
static int lighter(const double *load, unsigned a, unsigned b) { return load[a] < load[b] || (load[a] == load[b] && a < b); }

static void sift_down(unsigned *h, unsigned n, const double *load)
{
	for (unsigned i = 0;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && lighter(load, h[l], h[m]))
			m = l;
		if (r < n && lighter(load, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		unsigned t = h[i];
		h[i] = h[m], h[m] = t, i = m;
	}
}

int unit_partition(unsigned *shard, const double *work, size_t n, unsigned nshards)
{
	size_t *u = malloc((n ? n : 1) * sizeof *u);
	unsigned *heap = malloc(nshards * sizeof *heap);
	double *load = calloc(nshards, sizeof *load);
	for (size_t i = 0; u && i < n; i++)
		u[i] = i;
	if (!u || !heap || !load || unit_by_work(u, n, work) != SKV_OK) {
		free(u), free(heap), free(load);
		return SKV_ENOMEM;
	}
	for (unsigned k = 0; k < nshards; k++)
		heap[k] = k; /* all loads 0: index order is a heap */
	for (size_t i = 0; i < n; i++) {
		unsigned k = heap[0];
		shard[u[i]] = k;
		load[k] += work[u[i]]; /* only the top grew: one sift restores the heap */
		sift_down(heap, nshards, load);
	}
	free(u), free(heap), free(load);
	return SKV_OK;
}

/* ------------------------------------------------------------- gathering */

int unit_set_init(unit_set *c, const unit_plan *p)
{
	memset(c, 0, sizeof *c);
	c->nrows = p->w.nrows;
	c->nunits = p->w.ninst;
	c->rows = malloc((c->nrows ? c->nrows : 1) * sizeof *c->rows);
	c->have = calloc(c->nunits ? c->nunits : 1, 1);
	if (!c->rows || !c->have) {
		unit_set_free(c);
		return SKV_ENOMEM;
	}
	for (size_t r = 0; r < c->nrows; r++)
		c->rows[r] = (sweep_row){.spec = 0, .point = p->w.rows[r].point, .trial = p->w.rows[r].trial};
	return SKV_OK;
}

void unit_set_free(unit_set *c)
{
	free(c->rows);
	free(c->have);
	memset(c, 0, sizeof *c);
}

void unit_set_result(sweep_result *r, unit_set *c, const unit_plan *p, double wall_s)
{
	*r = (sweep_result){spec_npoints(p->spec), c->nrows, spec_trials(p->spec), c->rows, c->nunits, c->truth_calls,
			    c->kernel_runs, p->w.threads, wall_s};
	c->rows = NULL;
}

/* ---------------------------------------------------------------- records */

/* A row's fields in the record: its number, every metric of skv_errors for
 * the output and for its floor with the LSE error between them, then the
 * output's metrics and LSE error against the original K and V (the second
 * reference of a KV cache) (NFIELDS doubles, taken from the struct's size
 * so a new metric travels too), two states. A journal of the layout before
 * the second reference has other row sizes and is refused as corrupt. */
enum { NERRS = sizeof(skv_errors) / sizeof(double), NFIELDS = 3 * NERRS + 2 };
_Static_assert(sizeof(skv_errors) == NERRS * sizeof(double), "skv_errors holds doubles only");
enum { ROW_BYTES = 8 + NFIELDS * 8 + 2, UNIT_HEAD = 6 * 8 };

static uint64_t bits(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static double real(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

static void row_get(double f[NFIELDS], const sweep_row *r)
{
	memcpy(f, &r->err, sizeof r->err);
	f[NERRS] = r->lse_err;
	memcpy(f + NERRS + 1, &r->floor, sizeof r->floor);
	memcpy(f + 2 * NERRS + 1, &r->err_orig, sizeof r->err_orig);
	f[3 * NERRS + 1] = r->lse_err_orig;
}

static void row_put(sweep_row *r, const double f[NFIELDS])
{
	memcpy(&r->err, f, sizeof r->err);
	r->lse_err = f[NERRS];
	memcpy(&r->floor, f + NERRS + 1, sizeof r->floor);
	memcpy(&r->err_orig, f + 2 * NERRS + 1, sizeof r->err_orig);
	r->lse_err_orig = f[3 * NERRS + 1];
}

int unit_record(unsigned char **rec, size_t *len, const unit_plan *p, uint64_t line, size_t unit,
		const sweep_row *rows, double busy_s)
{
	unit_info u;
	size_t n;
	const size_t *idx = unit_rows(p, unit, &n);
	unit_describe(&u, p, unit);
	unsigned char *b = malloc(UNIT_HEAD + n * ROW_BYTES), *q = b;
	if (!b)
		return SKV_ENOMEM;
	const uint64_t head[6] = {line, unit, n, u.truth_calls, u.kernel_runs, bits(busy_s)};
	for (int i = 0; i < 6; i++, q += 8)
		journal_put64(q, head[i]);
	for (size_t k = 0; k < n; k++) {
		sweep_row r = rows[idx[k]];
		double f[NFIELDS];
		row_get(f, &r);
		journal_put64(q, idx[k]), q += 8;
		for (int i = 0; i < NFIELDS; i++, q += 8)
			journal_put64(q, bits(f[i]));
		*q++ = r.out_state;
		*q++ = r.lse_state;
	}
	int st = journal_frame(rec, len, JOURNAL_UNIT, b, UNIT_HEAD + n * ROW_BYTES);
	free(b);
	return st;
}

int unit_record_line(uint64_t *line, uint64_t *unit, const unsigned char *payload, size_t n)
{
	if (n < UNIT_HEAD)
		return SKV_EINVAL;
	*line = journal_get64(payload);
	*unit = journal_get64(payload + 8);
	return SKV_OK;
}

/* Whether the record's head matches the plan's unit; a reason if not. */
static const char *head_mismatch(const unit_plan *p, uint64_t unit, const unsigned char *b, size_t n)
{
	if (unit >= unit_count(p))
		return "no such unit in this run";
	unit_info u;
	unit_describe(&u, p, (size_t)unit);
	if (journal_get64(b + 16) != u.nrows || n != UNIT_HEAD + u.nrows * ROW_BYTES)
		return "its row count differs from this run's";
	if (journal_get64(b + 24) != u.truth_calls || journal_get64(b + 32) != u.kernel_runs)
		return "its truth or kernel counts differ from this run's";
	return NULL;
}

int unit_record_add(unit_set *c, const unit_plan *p, const unsigned char *b, size_t n, message *e)
{
	uint64_t line, unit;
	if (unit_record_line(&line, &unit, b, n) != SKV_OK) {
		msg_set(e, "a unit record of %zu bytes, too short", n);
		return SKV_EINVAL;
	}
	const char *why = head_mismatch(p, unit, b, n);
	if (!why && c->have[unit])
		why = "recorded twice";
	size_t nr;
	const size_t *idx = why ? NULL : unit_rows(p, (size_t)unit, &nr);
	const unsigned char *q = b + UNIT_HEAD;
	for (size_t k = 0; !why && k < nr; k++, q += ROW_BYTES)
		if (journal_get64(q) != idx[k])
			why = "its row numbers differ from this run's";
		else if (q[ROW_BYTES - 2] > OUT_INF || q[ROW_BYTES - 1] > LSE_NAN)
			why = "an unknown output or LSE state";
	if (why) {
		msg_set(e, "unit %llu of %s: %s", (unsigned long long)unit, p->spec->exp->name, why);
		return SKV_EINVAL;
	}
	q = b + UNIT_HEAD;
	for (size_t k = 0; k < nr; k++, q += ROW_BYTES) {
		sweep_row *r = &c->rows[idx[k]];
		double f[NFIELDS];
		for (int i = 0; i < NFIELDS; i++)
			f[i] = real(journal_get64(q + 8 + 8 * i));
		row_put(r, f);
		r->out_state = q[ROW_BYTES - 2];
		r->lse_state = q[ROW_BYTES - 1];
	}
	c->have[unit] = 1;
	c->nhave++;
	c->truth_calls += (size_t)journal_get64(b + 24);
	c->kernel_runs += (size_t)journal_get64(b + 32);
	c->busy_s += real(journal_get64(b + 40));
	return SKV_OK;
}
