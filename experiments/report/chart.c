/* chart.c - which chart each experiment gets, and the aggregated data file its gnuplot script reads. */
#include "report/chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "results/groups.h"
#include "results/labels.h"
#include "skv.h"

/* gnuplot cannot aggregate trials or name curves from a CSV, so skv writes
 * each chart's numbers, names and axis hints into one gnuplot file that the
 * chart's script loads; the scripts only decide how things look. Which
 * chart an experiment gets is in its catalog entry (catalog/NAME.c). */

/* Axis titles: the quantity and its unit. */
static const struct {
	const char *col, *axis;
} axes[] = {
	{"splits", "number of KV splits S"},
	{"lse_offset", "LSE offset added to every score (natural-log units)"},
	{"block_size", "online-softmax block size (keys per block)"},
	{"order", "reduction order of the merge"},
	{"merge", "merge rule"},
	{"layout", "split layout"},
	{"norm_rel_err", "normwise relative error ‖o − o*‖₂ / ‖o*‖₂"},
	{"max_abs_err", "largest absolute error max_i |o_i − o*_i|"},
	{"max_rel_err", "largest relative error max_i |o_i − o*_i| / |o*_i|"},
	{"lse_err", "error of the merged LSE |L − L*| (natural-log units)"},
};

static const char *axis_title(const char *col)
{
	for (size_t i = 0; col && i < sizeof axes / sizeof *axes; i++)
		if (strcmp(axes[i].col, col) == 0)
			return axes[i].axis;
	return col ? label_column(col) : "parameter point";
}

/* Writes s as inert gnuplot data: a single-quoted string, where gnuplot
 * performs no backquote command substitution, no macro expansion and no
 * escape processing, so the only character to escape is the quote itself
 * (doubled). A line break cannot sit inside such a string: it is written
 * as a concatenation with the double-quoted constant "\n" (or "\r"),
 * which holds no text from the input. Every text that comes from a CSV
 * (values, column and file names) reaches gnuplot only through here. */
static void put_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("''", f);
		else if (*s == '\n')
			fputs("'.\"\\n\".'", f);
		else if (*s == '\r')
			fputs("'.\"\\r\".'", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* Writes a number for the datablock: NaN for what a log axis cannot show. */
static void put_num(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, " %.6g", x);
	else
		fputs(" NaN", f);
}

/* A value that names a number format of the library's table: its rank
 * there, from 1 (so fp16 is colour 1, bf16 2, fp32 3, fp64 4 in every
 * chart); 0 for any other value. */
static int is_format(const char *v)
{
	skv_format f;
	return skv_format_parse(&f, v) == SKV_OK ? (int)f + 1 : 0;
}

/* Everything the writer derives before printing. */
typedef struct {
	const results *r;
	const chart_spec *c;
	size_t m;               /* metric */
	groups panel, series, cat;
	const char *skeys[64];  /* series key columns: colour key first */
	size_t nskeys;
	double *pos;            /* [npoints] x position of each point */
	int xcat;               /* x is a category index */
	size_t ncat;
	double *catval;         /* [ncat] numeric x of each category (lines) */
	double ymin, ymax;      /* the axis range, whole decades */
	int ylog;               /* log y axis */
	size_t hidden;          /* points whose median a log axis cannot show */
} plan;

static void plan_free(plan *p)
{
	groups_free(&p->panel);
	groups_free(&p->series);
	groups_free(&p->cat);
	free(p->pos);
	free(p->catval);
}

/* Positions on the x axis. Lines: the numbers themselves on a log axis when
 * all are positive, else (an offset of 0, a block size of 0) one equally
 * spaced category per distinct value, labelled with it. Bars and boxes: one
 * category per value of x (per point when x is NULL). */
static int place(plan *p, message *e)
{
	const results *r = p->r;
	p->pos = malloc(r->npoints * sizeof *p->pos);
	p->catval = malloc(r->npoints * sizeof *p->catval);
	if (!p->pos || !p->catval)
		return SKV_ENOMEM;
	if (p->c->kind != CHART_LINES) {
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
	if (allpos)
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

static int plan_make(plan *p, const results *r, const chart_spec *c, message *e)
{
	memset(p, 0, sizeof *p);
	p->r = r;
	p->c = c;
	if (results_metric(r, c->metric, &p->m) != SKV_OK && results_metric(r, "norm_rel_err", &p->m) != SKV_OK)
		return SKV_EINVAL;
	const char *panel = c->panel && results_varies(r, c->panel) ? c->panel : NULL;
	const char *except[] = {c->x, panel, "experiment"};
	const char *vary[64];
	size_t nv = results_keys(r, vary, sizeof vary / sizeof *vary, except, sizeof except / sizeof *except);
	int rc = groups_make(&p->panel, r, &panel, panel ? 1 : 0, NULL, NULL);
	if (rc)
		return rc;
	if (c->x) {
		/* Colour: the first format-valued column, so a format has the same
		 * colour in every chart; dash (or fill): the first other column
		 * (causal, merge); the rest follow in CSV order. */
		size_t ci = nv, di = nv;
		for (size_t i = 0; i < nv; i++) {
			int fmt = is_format(results_get(r, 0, vary[i]));
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
		rc = groups_make(&p->cat, r, &c->x, 1, NULL, NULL);
	} else {
		/* Generic chart: every point its own category, one series. */
		rc = groups_make(&p->cat, r, vary, nv, NULL, NULL);
	}
	if (!rc)
		rc = groups_make(&p->series, r, p->skeys, c->x ? p->nskeys : 0, NULL, NULL);
	if (!rc)
		rc = place(p, e);
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

/* The parameters that do not vary, as "ctx 16384, head-dim 128, ...", wrapped
 * into lines of about `width` characters. */
static void fixed_params(char *buf, size_t n, const results *r, size_t width)
{
	size_t len = 0, line = 0;
	buf[0] = '\0';
	for (size_t c = 0; c < r->csv.ncols; c++) {
		const char *col = csv_colname(&r->csv, c);
		const char *v = csv_get(&r->csv, 0, c);
		if (!r->param[c] || r->varies[c] || !*v || strcmp(col, "experiment") == 0 || strcmp(col, "trials") == 0 ||
		    (strcmp(col, "preset") == 0 && strcmp(v, "none") == 0))
			continue;
		char one[160];
		label_param(one, sizeof one, col, v);
		int wrap = len > 0 && line + strlen(one) + 2 > width;
		int k = snprintf(buf + len, n - len, "%s%s", len == 0 ? "" : wrap ? ",\n" : ", ", one);
		if (k < 0 || (size_t)k >= n - len)
			break;
		len += (size_t)k;
		line = wrap ? strlen(one) : line + (size_t)k;
	}
}

static size_t max_trials(const results *r)
{
	size_t t = 0;
	for (size_t p = 0; p < r->npoints; p++) {
		size_t k = r->point_start[p + 1] - r->point_start[p];
		t = k > t ? k : t;
	}
	return t;
}

static void write_header(FILE *f, const plan *p)
{
	const results *r = p->r;
	const char *metric = csv_colname(&r->csv, r->metric_col[p->m]);
	fprintf(f, "# %s data for scripts/%s.gp, written by `skv report` from %s.csv; do not edit.\n",
		r->name, p->c->script, r->name);
	fputs("# Variables name the chart; $data holds one block per curve, panel pi and\n"
	      "# series si (1-based) at index (pi - 1) * nseries + si - 1, one line per\n"
	      "# point: x  median  min  max  q1  q3 of the metric over the trials.\n"
	      "# A median that is not finite is NaN; min, max, q1, q3 at +inf are ymax\n"
	      "# and, on a log axis, at 0 or below are ymin.\n", f);
	char fixed[2048];
	fixed_params(fixed, sizeof fixed, r, 100);
	size_t t = max_trials(r);
	size_t len = strlen(fixed);
	snprintf(fixed + len, sizeof fixed - len, "%s%zu trial%s per point", len ? ", " : "", t, t == 1 ? "" : "s");
	fputs("experiment = ", f);
	put_str(f, r->name);
	fputs("\ntitle = ", f);
	char title[256];
	snprintf(title, sizeof title, "%s: %s", r->name, p->c->title);
	put_str(f, title);
	fputs("\nfixed = ", f);
	put_str(f, fixed);
	fprintf(f, "\nntrials = %zu\nmetric = ", t);
	put_str(f, metric);
	fputs("\nxlabel = ", f);
	put_str(f, axis_title(p->c->x));
	fputs("\nylabel = ", f);
	if (strcmp(metric, "ulp_err") == 0) {
		const char *out = results_varies(r, "output") ? NULL : results_get(r, 0, "output");
		char y[160];
		snprintf(y, sizeof y, "largest error in ulps of the output format%s%s%s", out ? " (" : "",
			 out ? out : "", out ? ")" : "");
		put_str(f, y);
	} else {
		put_str(f, axis_title(metric));
	}
	fputc('\n', f);
}

/* Points ordered by (series, panel, x position), to find a curve's point
 * at a given panel and x by binary search. */
static const plan *key_plan;
static int cmp_spx(const plan *p, size_t i, size_t series, size_t panel, double pos)
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
	const plan *p = key_plan;
	int d = cmp_spx(p, *(const size_t *)a, p->series.of_point[y], p->panel.of_point[y], p->pos[y]);
	return d ? d : (*(const size_t *)a > y) - (*(const size_t *)a < y);
}

/* The point of curve `series` at (panel, pos) in the sorted index, or
 * SIZE_MAX. */
static size_t find_spx(const plan *p, const size_t *idx, size_t series, size_t panel, double pos)
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

/* A legend of more curves than this is not drawn (it could not be read,
 * and would not fit the image); the chart says how many there are. */
enum { LEGEND_MAX = 40 };

/* Curves beyond this many are not compared for hiding each other: a legend
 * of more curves cannot be read anyway, and the comparison is quadratic in
 * the number of curves. */
enum { HIDE_MAX_SERIES = 64 };

/* Whether curve si lies on an earlier curve in every panel (medians within
 * 2% at every x it has), so drawn solid on top it would hide it: fp32 and
 * fp64 partials both sit on the fp32 floor. Such a curve is drawn dashed
 * when no parameter claims the dash pattern. idx: the points in
 * (series, panel, x) order. */
static int hides_earlier(const plan *p, const size_t *idx, size_t si)
{
	const results *r = p->r;
	if (!idx || p->series.n > HIDE_MAX_SERIES)
		return 0;
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
			return 1;
	}
	return 0;
}

static void write_names(FILE *f, const plan *p)
{
	const results *r = p->r;
	char buf[512];
	fprintf(f, "npanel = %zu\narray panel[%zu] = [", p->panel.n, p->panel.n);
	for (size_t i = 0; i < p->panel.n; i++) {
		const char *v = p->panel.nkeys ? groups_value(&p->panel, r, i, 0) : NULL;
		fputs(i ? ", " : "", f);
		put_str(f, v ? label_value(buf, sizeof buf, p->panel.key[0], v) : "");
	}
	fprintf(f, "]\nnseries = %zu\narray series[%zu] = [", p->series.n, p->series.n);
	for (size_t i = 0; i < p->series.n; i++) {
		const char *vals[sizeof p->skeys / sizeof *p->skeys];
		for (size_t k = 0; k < p->series.nkeys; k++)
			vals[k] = groups_value(&p->series, r, i, k);
		label_join(buf, sizeof buf, p->series.key, vals, p->series.nkeys);
		fputs(i ? ", " : "", f);
		/* "": no legend entry (none at all past LEGEND_MAX curves) */
		put_str(f, p->series.nkeys && p->series.n <= LEGEND_MAX ? buf : "");
	}
	/* Colour by the first series key, dash type by the second. */
	size_t *ranks = malloc(r->npoints * sizeof *ranks), *spx = NULL;
	if (p->c->kind == CHART_LINES && p->series.nkeys < 2 && p->series.n <= HIDE_MAX_SERIES &&
	    (spx = malloc(r->npoints * sizeof *spx))) {
		for (size_t i = 0; i < r->npoints; i++)
			spx[i] = i;
		key_plan = p;
		qsort(spx, r->npoints, sizeof *spx, cmp_point_spx);
	}
	for (int k = 0; k < 2; k++) {
		fprintf(f, "]\narray %s[%zu] = [", k ? "dash" : "color", p->series.n);
		int have = ranks && (size_t)k < p->series.nkeys && value_ranks(ranks, r, p->series.key[k]) == SKV_OK;
		for (size_t i = 0; i < p->series.n; i++) {
			/* A lone curve takes no format's colour: sky blue (7). */
			size_t rank = k == 0 && p->series.nkeys == 0 ? 7 : 1;
			if (have)
				rank = ranks[p->series.first[i]];
			else if (k == 1 && p->c->kind == CHART_LINES && hides_earlier(p, spx, i))
				rank = 2;
			fprintf(f, "%s%zu", i ? ", " : "", rank);
		}
	}
	free(ranks);
	free(spx);
	/* The labels of a category axis, one string each: the scripts add them
	 * as ticks one by one (set xtics add (xticlab[i] i)), never through an
	 * eval of a command built from them. */
	const size_t nlab = p->xcat ? p->ncat : 0;
	size_t longest = 0;
	fprintf(f, "]\nxcat = %d\nncat = %zu\narray xticlab[%zu] = [", p->xcat, nlab, nlab ? nlab : 1);
	for (size_t i = 0; i < nlab; i++) {
		char lab[512];
		if (p->c->kind == CHART_LINES) {
			label_number(lab, sizeof lab, p->catval[i], 6);
		} else {
			const char *vals[sizeof p->skeys / sizeof *p->skeys];
			for (size_t k = 0; k < p->cat.nkeys; k++)
				vals[k] = groups_value(&p->cat, r, i, k);
			if (p->c->x)
				snprintf(lab, sizeof lab, "%s", vals[0]);
			else if (p->cat.nkeys)
				label_join(lab, sizeof lab, p->cat.key, vals, p->cat.nkeys);
			else
				snprintf(lab, sizeof lab, "%s", r->name);
		}
		fputs(i ? ", " : "", f);
		put_str(f, lab);
		longest = strlen(lab) > longest ? strlen(lab) : longest;
	}
	if (!nlab)
		put_str(f, "");
	fputc(']', f);
	/* The longest tick label, in characters, for scripts that rotate them. */
	fprintf(f, "\nxticlen = %zu\n", longest);
}

/* Whether point i belongs to the chart's off-scale preset. */
static int offscale(const plan *p, size_t i)
{
	const char *v = p->c->offscale ? results_get(p->r, i, "preset") : NULL;
	return v && strcmp(v, p->c->offscale) == 0;
}

/* The y range every panel shares: whole decades around the finite positive
 * values, with room. Lines and bars use a log axis always (errors span decades); boxes
 * only when their values span more than two decades. */
static void yrange(plan *p)
{
	const results *r = p->r;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < r->npoints; i++) {
		const stat_summary *s = results_stat(r, i, p->m);
		const double v[] = {s->min, s->median, s->max};
		if (offscale(p, i))
			continue;
		for (size_t k = 0; k < sizeof v / sizeof *v; k++)
			if (isfinite(v[k]) && v[k] > 0) {
				lo = fmin(lo, v[k]);
				hi = fmax(hi, v[k]);
			}
		p->hidden += !(isfinite(s->median) && s->median > 0);
	}
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

static void write_range(FILE *f, const plan *p)
{
	fprintf(f, "ymin = %.17g\nymax = %.17g\nylog = %d\n", p->ymin, p->ymax, p->ylog);
	/* Points a log axis cannot show, said on the chart rather than dropped
	 * silently. */
	char note[320] = "";
	size_t len = 0;
	if (p->hidden && p->ylog)
		len += (size_t)snprintf(note, sizeof note, "%zu point%s with a zero, infinite or NaN median not drawn",
					p->hidden, p->hidden == 1 ? "" : "s");
	if (p->series.nkeys && p->series.n > LEGEND_MAX && len < sizeof note)
		len += (size_t)snprintf(note + len, sizeof note - len, "%s%zu curves, too many to name in a legend",
					len ? "; " : "", p->series.n);
	/* The off-scale preset: where its medians lie, when outside the axis. */
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < p->r->npoints; i++)
		if (offscale(p, i)) {
			double v = results_stat(p->r, i, p->m)->median;
			lo = fmin(lo, v), hi = fmax(hi, v);
		}
	if (lo <= hi && (lo < p->ymin || hi > p->ymax) && len < sizeof note) {
		char a[32], b[32];
		snprintf(note + len, sizeof note - len, "%s%s (medians %s to %s) lies %s the axis", len ? "; " : "",
			 p->c->offscale, label_number(a, sizeof a, lo, 2), label_number(b, sizeof b, hi, 2),
			 hi < p->ymin ? "below" : lo > p->ymax ? "above" : "partly outside");
	}
	fputs("note = ", f);
	put_str(f, note);
	fputc('\n', f);
}

/* A band or whisker end: +inf (a trial overflowed) is drawn at the top of
 * the axis and, on a log axis, 0 at its bottom, so the band still reaches
 * past the edge instead of vanishing. */
static double edge(const plan *p, double v)
{
	if (v == INFINITY)
		return p->ymax;
	if (p->ylog && v <= 0)
		return p->ymin;
	return v;
}

static void write_blocks(FILE *f, const plan *p, size_t *idx)
{
	const results *r = p->r;
	fputs("$data << EOD\n", f);
	for (size_t pi = 0; pi < p->panel.n; pi++)
		for (size_t si = 0; si < p->series.n; si++) {
			size_t k = 0;
			for (size_t i = 0; i < r->npoints; i++)
				if (p->panel.of_point[i] == pi && p->series.of_point[i] == si) {
					/* insertion by x: a block has tens of points */
					size_t j = k++;
					for (; j > 0 && p->pos[idx[j - 1]] > p->pos[i]; j--)
						idx[j] = idx[j - 1];
					idx[j] = i;
				}
			if (pi || si)
				fputs("\n\n", f);
			fprintf(f, "# panel %zu, series %zu\n", pi + 1, si + 1);
			if (k == 0)
				fputs("NaN NaN NaN NaN NaN NaN\n", f);
			for (size_t j = 0; j < k; j++) {
				const stat_summary *s = results_stat(r, idx[j], p->m);
				fprintf(f, "%.17g", p->pos[idx[j]]);
				put_num(f, s->median);
				put_num(f, edge(p, s->min));
				put_num(f, edge(p, s->max));
				put_num(f, edge(p, s->q1));
				put_num(f, edge(p, s->q3));
				fputc('\n', f);
			}
		}
	fputs("EOD\n", f);
}

int chart_write_data(FILE *f, const results *r, const chart_spec *c, message *e)
{
	if (!f || !r || !c)
		return SKV_EINVAL;
	plan p;
	int rc = plan_make(&p, r, c, e);
	size_t *idx = rc ? NULL : malloc(r->npoints * sizeof *idx);
	if (!rc && !idx)
		rc = SKV_ENOMEM;
	if (!rc) {
		yrange(&p);
		write_header(f, &p);
		write_names(f, &p);
		write_range(f, &p);
		write_blocks(f, &p, idx);
		rc = ferror(f) ? SKV_EIO : SKV_OK;
	}
	free(idx);
	plan_free(&p);
	return rc;
}
