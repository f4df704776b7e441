/* chart_plan.c - what a chart shows, decided before its data file is written: curves, panels, x positions, colours and dashes, the y range and what lies off it. */
#include "report/chart_plan.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "skv.h"

/* A value that names a number format of the library's table: its rank
 * there, from 1 (so fp16 is colour 1, bf16 2, fp32 3, fp64 4 in every
 * chart); 0 for any other value. */
static int is_format(const char *v)
{
	skv_format f;
	return skv_format_parse(&f, v) == SKV_OK ? (int)f + 1 : 0;
}

void chart_plan_free(chart_plan *p)
{
	groups_free(&p->panel);
	groups_free(&p->series);
	groups_free(&p->cat);
	free(p->pos);
	free(p->catval);
	free(p->color);
	free(p->dash);
	free(p->floor);
	free(p->under);
	memset(p, 0, sizeof *p);
}

/* Positions on the x axis. Lines: the numbers themselves on a log axis when
 * all are positive, else (an offset of 0, a block size of 0) one equally
 * spaced category per distinct value, labelled with it. A heatmap: one
 * column per distinct value always, in increasing order. Bars and boxes:
 * one category per value of x (per point when x is NULL). */
static int place(chart_plan *p, message *e)
{
	const results *r = p->r;
	p->pos = malloc(r->npoints * sizeof *p->pos);
	p->catval = malloc(r->npoints * sizeof *p->catval);
	if (!p->pos || !p->catval)
		return SKV_ENOMEM;
	if (p->c->kind != CHART_LINES && p->c->kind != CHART_HEATMAP) {
		for (size_t i = 0; i < r->npoints; i++)
			p->pos[i] = (double)p->cat.of_point[i] + 1;
		p->xcat = 1;
		p->ncat = p->cat.n;
		return SKV_OK;
	}
	int allpos = 1;
	for (size_t i = 0; i < r->npoints; i++) {
		int rc = results_number(&p->pos[i], r, i, p->c->x, e);
		if (rc)
			return rc;
		if (!isfinite(p->pos[i])) {
			csv_fail(e, r->csv.name, csv_line(&r->csv, r->point_row[i]), "column '%s' is not finite",
				 p->c->x);
			return SKV_EINVAL;
		}
		allpos &= p->pos[i] > 0;
	}
	if (allpos && p->c->kind == CHART_LINES)
		return SKV_OK;
	memcpy(p->catval, p->pos, r->npoints * sizeof *p->pos);
	qsort(p->catval, r->npoints, sizeof *p->catval, stats_cmp_double);
	size_t k = 0;
	for (size_t i = 0; i < r->npoints; i++)
		if (k == 0 || p->catval[i] != p->catval[k - 1])
			p->catval[k++] = p->catval[i];
	p->ncat = k;
	p->xcat = 1;
	for (size_t i = 0; i < r->npoints; i++) {
		double *at = bsearch(&p->pos[i], p->catval, k, sizeof *p->catval, stats_cmp_double);
		p->pos[i] = (double)(at - p->catval) + 1;
	}
	return SKV_OK;
}

/* The series keys among the varying parameters vary[0..nv): colour by the
 * first format-valued column, so a format has the same colour in every
 * chart; dash (or fill) by the first other column (causal, merge); the
 * rest follow in CSV order. */
static void series_keys(chart_plan *p, const char *const *vary, size_t nv)
{
	size_t ci = nv, di = nv;
	for (size_t i = 0; i < nv; i++) {
		int fmt = is_format(results_get(p->r, 0, vary[i]));
		if (fmt && ci == nv)
			ci = i;
		else if (!fmt && di == nv)
			di = i;
	}
	if (ci == nv) /* no format column: colour by the first, dash by the next */
		ci = 0, di = nv > 1 ? 1 : nv;
	if (di == nv) /* only formats: dash by the second */
		for (size_t i = 0; i < nv && di == nv; i++)
			if (i != ci)
				di = i;
	if (ci < nv)
		p->skeys[p->nskeys++] = vary[ci];
	if (di < nv)
		p->skeys[p->nskeys++] = vary[di];
	for (size_t i = 0; i < nv; i++)
		if (i != ci && i != di)
			p->skeys[p->nskeys++] = vary[i];
}

/* The panels, the curves and the categories of x. */
static int plan_groups(chart_plan *p)
{
	const results *r = p->r;
	const chart_spec *c = p->c;
	const char *panel = c->panel && results_varies(r, c->panel) ? c->panel : NULL;
	const char *except[] = {c->x, panel, "experiment"};
	const char *vary[64];
	size_t nv = results_keys(r, vary, sizeof vary / sizeof *vary, except, sizeof except / sizeof *except);
	int rc = groups_make(&p->panel, r, &panel, panel ? 1 : 0, NULL, NULL);
	if (rc)
		return rc;
	if (c->x) {
		series_keys(p, vary, nv);
		rc = groups_make(&p->cat, r, &c->x, 1, NULL, NULL);
	} else {
		/* Generic chart: every point its own category, one series. */
		rc = groups_make(&p->cat, r, vary, nv, NULL, NULL);
	}
	if (!rc)
		rc = groups_make(&p->series, r, p->skeys, c->x ? p->nskeys : 0, NULL, NULL);
	return rc;
}

/* ranks[p] = the 1-based rank of point p's value of column col among the
 * column's distinct values in order of first appearance (formats by their
 * fixed rank, so fp16 is always colour 1). O(P log P): the points sorted
 * by (value, point), each run of one value a group whose first point is
 * its appearance. */
static const results *rank_r;
static size_t rank_col;
static int cmp_value_point(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int d = strcmp(csv_get(&rank_r->csv, rank_r->point_row[x], rank_col),
		       csv_get(&rank_r->csv, rank_r->point_row[y], rank_col));
	return d ? d : (x > y) - (x < y);
}
static int value_ranks(size_t *ranks, const results *r, const char *col)
{
	const size_t P = r->npoints;
	size_t *idx = malloc(P * sizeof *idx), *first = malloc(P * sizeof *first), c;
	if (!idx || !first || csv_find(&r->csv, col, &c) != SKV_OK) {
		free(idx), free(first);
		return SKV_ENOMEM;
	}
	for (size_t p = 0; p < P; p++)
		idx[p] = p;
	rank_r = r, rank_col = c;
	qsort(idx, P, sizeof *idx, cmp_value_point);
	/* first[p]: the first point with p's value */
	size_t ngroups = 0;
	for (size_t k = 0, g0 = 0; k < P; k++) {
		if (k == 0 || strcmp(results_get(r, idx[k], col), results_get(r, idx[g0], col)) != 0)
			g0 = k, ngroups++;
		first[idx[k]] = idx[g0];
	}
	/* the groups' first points in order give the ranks */
	size_t *firsts = malloc((ngroups ? ngroups : 1) * sizeof *firsts), n = 0;
	if (!firsts) {
		free(idx), free(first);
		return SKV_ENOMEM;
	}
	for (size_t p = 0; p < P; p++)
		if (first[p] == p)
			firsts[n++] = p; /* already ascending */
	for (size_t p = 0; p < P; p++) {
		int f = is_format(results_get(r, p, col));
		size_t *at = bsearch(&first[p], firsts, n, sizeof *firsts, stats_cmp_size);
		ranks[p] = f ? (size_t)f : (size_t)(at - firsts) + 1;
	}
	free(firsts), free(idx), free(first);
	return SKV_OK;
}

/* Points ordered by (series, panel, x position), to find a curve's point
 * at a given panel and x by binary search. */
static const chart_plan *key_plan;
static int cmp_spx(const chart_plan *p, size_t i, size_t series, size_t panel, double pos)
{
	if (p->series.of_point[i] != series)
		return p->series.of_point[i] < series ? -1 : 1;
	if (p->panel.of_point[i] != panel)
		return p->panel.of_point[i] < panel ? -1 : 1;
	return (p->pos[i] > pos) - (p->pos[i] < pos);
}

static int cmp_point_spx(const void *a, const void *b)
{
	size_t y = *(const size_t *)b;
	const chart_plan *p = key_plan;
	int d = cmp_spx(p, *(const size_t *)a, p->series.of_point[y], p->panel.of_point[y], p->pos[y]);
	return d ? d : (*(const size_t *)a > y) - (*(const size_t *)a < y);
}

/* The point of curve `series` at (panel, pos) in the sorted index, or
 * SIZE_MAX. */
static size_t find_spx(const chart_plan *p, const size_t *idx, size_t series, size_t panel, double pos)
{
	size_t lo = 0, hi = p->r->npoints;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = cmp_spx(p, idx[mid], series, panel, pos);
		if (d == 0)
			return idx[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

/* Curves beyond this many are not compared for hiding each other: a legend
 * of more curves cannot be read anyway, and the comparison is quadratic in
 * the number of curves. */
enum { HIDE_MAX_SERIES = 64 };

/* The first earlier curve that curve si lies on in every panel (medians
 * within 2% at every x it has), so drawn on top it would hide it: fp32 and
 * fp64 partials both sit on the fp32 floor; SIZE_MAX when none. Such a
 * curve is drawn dashed when no parameter claims the dash pattern, and the
 * chart's note names it. idx: the points in (series, panel, x) order. */
static size_t lies_under(const chart_plan *p, const size_t *idx, size_t si)
{
	const results *r = p->r;
	if (!idx || p->series.n > HIDE_MAX_SERIES)
		return SIZE_MAX;
	for (size_t sj = 0; sj < si; sj++) {
		size_t same = 0, all = 0;
		for (size_t a = 0; a < r->npoints; a++) {
			if (p->series.of_point[a] != si)
				continue;
			all++;
			double ma = results_stat(r, a, p->m)->median;
			size_t b = find_spx(p, idx, sj, p->panel.of_point[a], p->pos[a]);
			if (b != SIZE_MAX) {
				double mb = results_stat(r, b, p->m)->median;
				same += isfinite(ma) && isfinite(mb) && fabs(ma - mb) <= 0.02 * fmax(fabs(ma), fabs(mb));
			}
		}
		if (all && same == all)
			return sj;
	}
	return SIZE_MAX;
}

/* Colour by the first series key, dash by the second, each value by its
 * rank (value_ranks); without a second key a curve that would hide an
 * earlier one is dashed (dash 2). */
static int style(chart_plan *p)
{
	const results *r = p->r;
	const size_t n = p->series.n ? p->series.n : 1;
	p->color = malloc(n * sizeof *p->color);
	p->dash = malloc(n * sizeof *p->dash);
	p->under = malloc(n * sizeof *p->under);
	size_t *ranks = malloc(r->npoints * sizeof *ranks), *spx = NULL;
	int rc = p->color && p->dash && p->under && ranks ? SKV_OK : SKV_ENOMEM;
	if (!rc && p->c->kind == CHART_LINES && p->series.n <= HIDE_MAX_SERIES) {
		if ((spx = malloc(r->npoints * sizeof *spx))) {
			for (size_t i = 0; i < r->npoints; i++)
				spx[i] = i;
			key_plan = p;
			qsort(spx, r->npoints, sizeof *spx, cmp_point_spx);
		} else {
			rc = SKV_ENOMEM;
		}
	}
	for (size_t i = 0; i < p->series.n && !rc; i++)
		p->under[i] = lies_under(p, spx, i);
	for (size_t k = 0; k < 2 && !rc; k++) {
		size_t *out = k ? p->dash : p->color;
		int have = k < p->series.nkeys;
		if (have && (rc = value_ranks(ranks, r, p->series.key[k])))
			break;
		for (size_t i = 0; i < p->series.n; i++) {
			/* A lone curve takes no format's colour. */
			size_t rank = k == 0 && p->series.nkeys == 0 ? CHART_COLOR_LONE : 1;
			if (have)
				rank = ranks[p->series.first[i]];
			else if (k == 1 && p->under[i] != SIZE_MAX)
				rank = 2;
			out[i] = rank;
		}
	}
	free(ranks);
	free(spx);
	return rc;
}

/* Whether point i belongs to the chart's off-scale preset. */
int chart_offscale(const chart_plan *p, size_t i)
{
	const char *v = p->c->offscale ? results_get(p->r, i, "preset") : NULL;
	return v && strcmp(v, p->c->offscale) == 0;
}

/* The format of point i's output ("" without an output column). */
static const char *out_fmt(const results *r, size_t i)
{
	const char *v = results_get(r, i, "output");
	return v ? v : "";
}

/* The floor lines (chart_plan.floor): per panel and output format of the
 * drawn points, the median of their floor_err medians, the error of the
 * exact output rounded once (it depends on the problem and the output
 * format alone, so every drawn point of a format shares it but for the
 * trials' instances); the bound 1/2 for a ulp metric: |RN(t) - t| is at
 * most half the spacing at t, and the spacing at t at most that at
 * max |t|. None for a heatmap (its colour is the error) or another
 * metric. */
static int plan_floors(chart_plan *p)
{
	const results *r = p->r;
	const char *metric = csv_colname(&r->csv, r->metric_col[p->m]);
	size_t fm = 0;
	p->floor_ulp = strcmp(metric, "ulp_err") == 0 || strcmp(metric, "norm_ulp_err") == 0;
	/* norm_rel_err's floor is the exact output rounded once to the output
	 * format; against the original K and V (orig_norm_rel_err, a KV cache's
	 * second reference) no computation in that format does better either:
	 * the floor_err of the stored cache's exact output, the same rounding */
	const int normwise = strcmp(metric, "norm_rel_err") == 0 || strcmp(metric, "orig_norm_rel_err") == 0;
	if (p->c->kind == CHART_HEATMAP ||
	    (!p->floor_ulp && (!normwise || results_metric(r, "floor_err", &fm) != SKV_OK)))
		return SKV_OK;
	for (size_t i = 0; i < r->npoints; i++) {
		size_t k = 0;
		const char *f = p->floor_ulp ? "" : out_fmt(r, i);
		while (k < p->nfloor && strcmp(p->floor_fmt[k], f) != 0)
			k++;
		if (k == p->nfloor && !chart_offscale(p, i) && p->nfloor < CHART_FLOOR_MAX)
			p->floor_fmt[p->nfloor++] = f;
	}
	const size_t nf = p->panel.n * p->nfloor;
	p->floor = malloc((nf ? nf : 1) * sizeof *p->floor);
	double *v = malloc(r->npoints * sizeof *v);
	if (!p->floor || !v) {
		free(v);
		return SKV_ENOMEM;
	}
	for (size_t pi = 0; pi < p->panel.n; pi++)
		for (size_t k = 0; k < p->nfloor; k++) {
			size_t n = 0;
			for (size_t i = 0; i < r->npoints; i++) {
				if (p->panel.of_point[i] != pi || chart_offscale(p, i) ||
				    strcmp(p->floor_ulp ? "" : out_fmt(r, i), p->floor_fmt[k]) != 0)
					continue;
				const double x = p->floor_ulp ? 0.5 : results_stat(r, i, fm)->median;
				if (!isnan(x))
					v[n++] = x;
			}
			qsort(v, n, sizeof *v, stats_cmp_double);
			double q = NAN;
			if (n)
				stats_quantile(&q, v, n, 0.5);
			p->floor[pi * p->nfloor + k] = q;
		}
	free(v);
	return SKV_OK;
}

/* The y range every panel shares: whole decades around the finite positive
 * values and floors, with room. Lines, bars and heatmaps (their colour) use
 * a log axis always (errors span decades); boxes only when their values
 * span more than two decades. */
static void yrange(chart_plan *p)
{
	const results *r = p->r;
	double lo = INFINITY, hi = -INFINITY;
	/* A heatmap's colours are medians: its range is theirs alone. */
	const size_t nv = p->c->kind == CHART_HEATMAP ? 1 : 3;
	for (size_t i = 0; i < r->npoints; i++) {
		const stat_summary *s = results_stat(r, i, p->m);
		const double v[] = {s->median, s->min, s->max};
		if (chart_offscale(p, i))
			continue;
		for (size_t k = 0; k < nv; k++)
			if (isfinite(v[k]) && v[k] > 0) {
				lo = fmin(lo, v[k]);
				hi = fmax(hi, v[k]);
			}
		p->hidden += !(isfinite(s->median) && s->median > 0);
	}
	for (size_t k = 0; k < p->panel.n * p->nfloor; k++)
		if (isfinite(p->floor[k]) && p->floor[k] > 0)
			lo = fmin(lo, p->floor[k]), hi = fmax(hi, p->floor[k]);
	if (!(lo <= hi))
		lo = hi = 1;
	/* At least a factor 2 of room at both ends, so no curve runs along
	 * the frame. */
	p->ymin = pow(10, floor(log10(lo / 2)));
	p->ymax = pow(10, ceil(log10(hi * 2)));
	if (p->ymin == p->ymax)
		p->ymin /= 10, p->ymax *= 10;
	p->ylog = p->c->kind != CHART_BOXES || hi / lo > 100;
}

/* Where the off-scale preset's medians lie (NaN ones left out), for the
 * chart's note. */
static void offscale_range(chart_plan *p)
{
	p->off_lo = INFINITY, p->off_hi = -INFINITY;
	for (size_t i = 0; i < p->r->npoints; i++)
		if (chart_offscale(p, i)) {
			double v = results_stat(p->r, i, p->m)->median;
			p->off_lo = fmin(p->off_lo, v), p->off_hi = fmax(p->off_hi, v);
		}
}

int chart_plan_make(chart_plan *p, const results *r, const chart_spec *c, message *e)
{
	memset(p, 0, sizeof *p);
	p->r = r;
	p->c = c;
	if (results_metric(r, c->metric, &p->m) != SKV_OK && results_metric(r, "norm_rel_err", &p->m) != SKV_OK)
		return SKV_EINVAL;
	int rc = plan_groups(p);
	if (!rc)
		rc = place(p, e);
	if (!rc)
		rc = style(p);
	if (rc) {
		chart_plan_free(p);
		return rc;
	}
	if ((rc = plan_floors(p)) != SKV_OK) {
		chart_plan_free(p);
		return rc;
	}
	/* A heatmap's rows are named on its y axis, not in a legend. */
	p->legend = p->series.nkeys && p->series.n <= CHART_LEGEND_MAX && c->kind != CHART_HEATMAP;
	yrange(p);
	offscale_range(p);
	return SKV_OK;
}
