/* findings.c - the numbers quoted in the report's findings, computed from an experiment's points. */
#include "results/findings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skv.h"
#include "core/stats.h"

/* The points of group gi, their x (column xcol) and median of metric m, in
 * increasing x. Returns the count; *px, *py, *pp are malloc'd. */
static int curve(size_t *n, size_t **pp, double **px, double **py, const results *r, const groups *g,
		 size_t gi, const char *xcol, size_t m, message *e)
{
	size_t k = 0;
	for (size_t p = 0; p < r->npoints; p++)
		k += g->of_point[p] == gi;
	size_t *pt = malloc((k ? k : 1) * sizeof *pt);
	double *x = malloc((k ? k : 1) * sizeof *x), *y = malloc((k ? k : 1) * sizeof *y);
	if (!pt || !x || !y) {
		free(pt), free(x), free(y);
		return SKV_ENOMEM;
	}
	k = 0;
	for (size_t p = 0; p < r->npoints; p++) {
		if (g->of_point[p] != gi)
			continue;
		double v = 0;
		int rc = xcol ? results_number(&v, r, p, xcol, e) : SKV_OK;
		if (!rc && isnan(v)) {
			csv_fail(e, r->csv.name, csv_line(&r->csv, r->point_row[p]), "column '%s' is NaN", xcol);
			rc = SKV_EINVAL;
		}
		if (rc) {
			free(pt), free(x), free(y);
			return rc;
		}
		/* Insertion keeps x increasing; curves have tens of points. */
		size_t i = k++;
		for (; i > 0 && x[i - 1] > v; i--) {
			x[i] = x[i - 1];
			pt[i] = pt[i - 1];
		}
		x[i] = v;
		pt[i] = p;
	}
	for (size_t i = 0; i < k; i++)
		y[i] = results_stat(r, pt[i], m)->median;
	*n = k;
	*pp = pt;
	*px = x;
	*py = y;
	return SKV_OK;
}

static int check(const results *r, const groups *g, size_t m, const void *out)
{
	return r && g && out && m < r->nmetric && g->of_point ? SKV_OK : SKV_EINVAL;
}

/* One finding per curve: fn fills the slot of group gi (size bytes) from
 * the curve's n points pt, abscissas x and medians y of metric m; arg is
 * fn's own. The slots are built apart and copied to out only when every
 * curve was read, so nothing is written on error. */
typedef void (*curve_fn)(void *slot, const results *r, size_t m, size_t n, const size_t *pt, const double *x,
			 const double *y, const void *arg);

static int each_curve(void *out, size_t size, const results *r, const groups *g, const char *xcol, size_t m,
		      curve_fn fn, const void *arg, message *e)
{
	if (check(r, g, m, out) || !xcol)
		return SKV_EINVAL;
	unsigned char *t = malloc((g->n ? g->n : 1) * size);
	if (!t)
		return SKV_ENOMEM;
	for (size_t gi = 0; gi < g->n; gi++) {
		size_t n, *pt;
		double *x, *y;
		int rc = curve(&n, &pt, &x, &y, r, g, gi, xcol, m, e);
		if (rc) {
			free(t);
			return rc;
		}
		fn(t + gi * size, r, m, n, pt, x, y, arg);
		free(pt), free(x), free(y);
	}
	memcpy(out, t, g->n * size);
	free(t);
	return SKV_OK;
}

static void trend_of(void *slot, const results *r, size_t m, size_t n, const size_t *pt, const double *x,
		     const double *y, const void *arg)
{
	(void)arg;
	find_trend o = {.slope = NAN, .x_first = x[0], .y_first = y[0], .x_last = x[n - 1], .y_last = y[n - 1]};
	double c;
	if (stats_fit_loglog(&o.slope, &c, &o.used, x, y, n) != SKV_OK)
		o.slope = NAN, o.used = 0;
	for (size_t i = 0; i < n; i++)
		o.nnan += results_stat(r, pt[i], m)->nnan;
	*(find_trend *)slot = o;
}

int find_trends(find_trend *out, const results *r, const groups *g, const char *xcol, size_t m,
		    message *e)
{
	return each_curve(out, sizeof *out, r, g, xcol, m, trend_of, NULL, e);
}

static void crossing_of(void *slot, const results *r, size_t m, size_t n, const size_t *pt, const double *x,
			const double *y, const void *arg)
{
	(void)r, (void)m, (void)pt;
	size_t at;
	stats_first_above(&at, x, y, n, *(const double *)arg);
	*(find_crossing *)slot = (find_crossing){.x = at < n ? x[at] : NAN, .y = at < n ? y[at] : NAN,
						 .x_last = x[n - 1], .y_last = y[n - 1]};
}

int find_crossings(find_crossing *out, const results *r, const groups *g, const char *xcol, size_t m,
		       double threshold, message *e)
{
	return each_curve(out, sizeof *out, r, g, xcol, m, crossing_of, &threshold, e);
}

typedef struct {
	double xmin, xmax, gap;
} jump_window;

static void jump_of(void *slot, const results *r, size_t m, size_t n, const size_t *pt, const double *x,
		    const double *y, const void *arg)
{
	(void)r, (void)m, (void)pt;
	const jump_window *w = arg;
	find_jump o = {.ratio = NAN};
	for (size_t i = 0; i + 1 < n; i++) {
		const double a = y[i], b = y[i + 1];
		if (x[i] < w->xmin || x[i + 1] > w->xmax || x[i + 1] - x[i] > w->gap || !(a > 0 && b > 0) ||
		    !isfinite(a) || !isfinite(b))
			continue;
		const double q = a > b ? a / b : b / a;
		o.pairs++;
		if (!(q <= o.ratio))
			o = (find_jump){q, x[i], a, x[i + 1], b, o.pairs};
	}
	*(find_jump *)slot = o;
}

int find_jumps(find_jump *out, const results *r, const groups *g, const char *xcol, size_t m, double xmin,
	       double xmax, double gap, message *e)
{
	const jump_window w = {xmin, xmax, gap};
	return each_curve(out, sizeof *out, r, g, xcol, m, jump_of, &w, e);
}

int find_shift_factor(find_factor *out, const results *r, const groups *g, const unsigned char *keep,
		      const char *xcol, double d, size_t m, message *e)
{
	if (check(r, g, m, out) || !xcol || !(d > 0))
		return SKV_EINVAL;
	double *q = malloc(r->npoints * sizeof *q);
	if (!q)
		return SKV_ENOMEM;
	size_t k = 0;
	for (size_t gi = 0; gi < g->n; gi++) {
		if (keep && !keep[gi])
			continue;
		size_t n, *pt;
		double *x, *y;
		int rc = curve(&n, &pt, &x, &y, r, g, gi, xcol, m, e);
		if (rc) {
			free(q);
			return rc;
		}
		/* x is sorted: the partner of x[i] is found moving forward */
		for (size_t i = 0, j = 0; i < n; i++) {
			while (j < n && x[j] < x[i] + d - 1e-9 * d)
				j++;
			if (j < n && fabs(x[j] - (x[i] + d)) <= 1e-9 * d && y[i] > 0 && y[j] > 0 && isfinite(y[i]) &&
			    isfinite(y[j]))
				q[k++] = y[i] > y[j] ? y[i] / y[j] : y[j] / y[i];
		}
		free(pt), free(x), free(y);
	}
	find_factor o = {NAN, NAN, k};
	if (k) {
		qsort(q, k, sizeof *q, stats_cmp_double);
		stats_quantile(&o.median, q, k, 0.5);
		o.max = q[k - 1];
	}
	free(q);
	*out = o;
	return SKV_OK;
}

/* A trial's value at one point of a group. */
typedef struct {
	unsigned long long trial;
	double v;
} tv;

static int cmp_tv(const void *a, const void *b)
{
	const tv *x = a, *y = b;
	return (x->trial > y->trial) - (x->trial < y->trial);
}

/* The trial number of a row; parsed and checked when the results were built. */
static unsigned long long trial_of(const results *r, size_t row)
{
	return strtoull(csv_get(&r->csv, row, r->trial_col), NULL, 10);
}

int find_spreads(find_spread *out, const results *r, const groups *g, size_t m)
{
	if (check(r, g, m, out))
		return SKV_EINVAL;
	size_t nrows = r->csv.nrows;
	find_spread *t = malloc((g->n ? g->n : 1) * sizeof *t);
	tv *buf = malloc(nrows * sizeof *buf);
	double *range = malloc(nrows * sizeof *range);
	if (!t || !buf || !range) {
		free(t), free(buf), free(range);
		return SKV_ENOMEM;
	}
	for (size_t gi = 0; gi < g->n; gi++) {
		find_spread o = {.median = NAN, .max = NAN, .lo = g->first[gi], .hi = g->first[gi]};
		size_t k = 0;
		for (size_t p = 0; p < r->npoints; p++) {
			if (g->of_point[p] != gi)
				continue;
			o.npoints++;
			double med = results_stat(r, p, m)->median;
			/* NaN medians lose both contests: they are reported apart. */
			if (med < results_stat(r, o.lo, m)->median || isnan(results_stat(r, o.lo, m)->median))
				o.lo = p;
			if (med > results_stat(r, o.hi, m)->median || isnan(results_stat(r, o.hi, m)->median))
				o.hi = p;
			for (size_t i = r->point_start[p]; i < r->point_start[p + 1]; i++) {
				size_t row = r->point_rows[i];
				buf[k++] = (tv){trial_of(r, row), r->value[row * r->nmetric + m]};
			}
		}
		/* Each point holds a trial at most once (a repeat is rejected when
		 * the results are built), so a trial seen npoints times is present
		 * at every point of the group. */
		qsort(buf, k, sizeof *buf, cmp_tv);
		for (size_t i = 0; i < k;) {
			size_t j = i;
			double lo = buf[i].v, hi = buf[i].v;
			int nan = 0;
			for (; j < k && buf[j].trial == buf[i].trial; j++) {
				nan |= isnan(buf[j].v);
				lo = fmin(lo, buf[j].v);
				hi = fmax(hi, buf[j].v);
			}
			if (j - i == o.npoints && !nan)
				range[o.ntrials++] = lo == hi ? 0 : hi - lo;
			i = j;
		}
		if (o.ntrials) {
			qsort(range, o.ntrials, sizeof *range, stats_cmp_double);
			stats_quantile(&o.median, range, o.ntrials, 0.5);
			o.max = range[o.ntrials - 1];
		}
		t[gi] = o;
	}
	memcpy(out, t, g->n * sizeof *t);
	free(t), free(buf), free(range);
	return SKV_OK;
}

int find_ratio(double *ratio, size_t *best, const results *r, const groups *g, size_t gi,
		   const char *col, const char *num, const char *const *den, size_t nden, size_t m)
{
	if (check(r, g, m, ratio) || !best || gi >= g->n || !col || !num || !den)
		return SKV_EINVAL;
	size_t pn = NO_GROUP, pd = NO_GROUP;
	for (size_t p = 0; p < r->npoints; p++) {
		if (g->of_point[p] != gi)
			continue;
		const char *v = results_get(r, p, col);
		if (!v)
			return SKV_EINVAL;
		if (strcmp(v, num) == 0)
			pn = p;
		for (size_t d = 0; d < nden; d++)
			if (den[d] && strcmp(v, den[d]) == 0 &&
			    (pd == NO_GROUP ||
			     results_stat(r, p, m)->median < results_stat(r, pd, m)->median))
				pd = p;
	}
	if (pn == NO_GROUP || pd == NO_GROUP)
		return SKV_EINVAL;
	*ratio = results_stat(r, pn, m)->median / results_stat(r, pd, m)->median;
	*best = pd;
	return SKV_OK;
}
