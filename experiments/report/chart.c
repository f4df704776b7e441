/* chart.c - the aggregated data file a chart's gnuplot script reads, written from the chart's plan (chart_plan.c). */
#include "report/chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "report/chart_plan.h"
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
	/* a KV cache's rows: against the exact attention of the original K, V */
	{"orig_norm_rel_err", "normwise relative error vs original K, V"},
	{"orig_max_abs_err", "largest absolute error vs original K, V"},
	{"orig_lse_err", "error of the merged LSE vs original K, V"},
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

/* Parameter on's value when its column is there and does not vary. */
static const char *fixed_value(int on, void *ctx)
{
	const results *r = ctx;
	size_t c;
	if (!params[on].column || csv_find(&r->csv, params[on].column, &c) != SKV_OK || r->varies[c])
		return NULL;
	return csv_get(&r->csv, 0, c);
}

/* The parameters that do not vary, as "ctx 16384, head-dim 128, ...", wrapped
 * into lines of about `width` characters; those another makes inert (no
 * KV cache: its scales) left out. */
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
		const int id = param_by_column(col);
		if (id >= 0 && param_inert(id, fixed_value, (void *)r))
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

static void write_header(FILE *f, const chart_plan *p)
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
	/* A heatmap: the metric on its colour box, its rows' column on y. */
	fputs("\nzlabel = ", f);
	put_str(f, axis_title(metric));
	fputs("\nylabel = ", f);
	if (p->c->kind == CHART_HEATMAP) {
		put_str(f, p->nskeys == 1 ? axis_title(p->skeys[0]) : "curve");
	} else if (strcmp(metric, "ulp_err") == 0 || strcmp(metric, "norm_ulp_err") == 0) {
		const char *out = results_varies(r, "output") ? NULL : results_get(r, 0, "output");
		char y[200];
		if (metric[0] == 'u')
			snprintf(y, sizeof y, "largest error in ulps of the output format%s%s%s", out ? " (" : "",
				 out ? out : "", out ? ")" : "");
		else /* short: it stands along a panel's height */
			snprintf(y, sizeof y, "largest error in ulps of %s at max |o*|", out ? out : "the output");
		put_str(f, y);
	} else {
		put_str(f, axis_title(metric));
	}
	fputc('\n', f);
}

/* Curve si's name: "partial fp16, LSE bf16". */
static char *series_label(char *buf, size_t n, const chart_plan *p, size_t si)
{
	const char *vals[sizeof p->skeys / sizeof *p->skeys];
	for (size_t k = 0; k < p->series.nkeys; k++)
		vals[k] = groups_value(&p->series, p->r, si, k);
	return label_join(buf, n, p->series.key, vals, p->series.nkeys);
}

static void write_names(FILE *f, const chart_plan *p)
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
		series_label(buf, sizeof buf, p, i);
		fputs(i ? ", " : "", f);
		/* "": no legend entry (none at all past CHART_LEGEND_MAX curves) */
		put_str(f, p->legend ? buf : "");
	}
	/* Colour by the first series key, dash type by the second (the plan's). */
	for (int k = 0; k < 2; k++) {
		const size_t *v = k ? p->dash : p->color;
		fprintf(f, "]\narray %s[%zu] = [", k ? "dash" : "color", p->series.n);
		for (size_t i = 0; i < p->series.n; i++)
			fprintf(f, "%s%zu", i ? ", " : "", v[i]);
	}
	/* The labels of a category axis, one string each: the scripts add them
	 * as ticks one by one (set xtics add (xticlab[i] i)), never through an
	 * eval of a command built from them. */
	const size_t nlab = p->xcat ? p->ncat : 0;
	size_t longest = 0;
	fprintf(f, "]\nxcat = %d\nncat = %zu\narray xticlab[%zu] = [", p->xcat, nlab, nlab ? nlab : 1);
	for (size_t i = 0; i < nlab; i++) {
		char lab[512];
		if (p->c->kind == CHART_LINES || p->c->kind == CHART_HEATMAP) {
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
	fprintf(f, "\nxticlen = %zu\nnx = %zu\n", longest, p->cat.n);
	/* The rows of a heatmap by their values alone ("1000.125"), for its y
	 * axis (its curves' names without the column, which the axis says). */
	fprintf(f, "array rowlab[%zu] = [", p->series.n ? p->series.n : 1);
	for (size_t i = 0; i < p->series.n; i++) {
		buf[0] = '\0';
		for (size_t k = 0; k < p->series.nkeys; k++) {
			size_t len = strlen(buf);
			snprintf(buf + len, sizeof buf - len, "%s%s", k ? ", " : "", groups_value(&p->series, r, i, k));
		}
		fputs(i ? ", " : "", f);
		put_str(f, buf);
	}
	fputs(p->series.n ? "]\n" : "'']\n", f);
}

/* The floor lines: their formats and, per panel, their heights (NaN where a
 * panel has none of that format). */
static void write_floors(FILE *f, const chart_plan *p)
{
	const size_t nf = p->nfloor, n = p->panel.n * nf;
	fprintf(f, "nfloor = %zu\nfloor_ulp = %d\narray floor_fmt[%zu] = [", nf, p->floor_ulp, nf ? nf : 1);
	for (size_t k = 0; k < nf; k++) {
		fputs(k ? ", " : "", f);
		put_str(f, p->floor_fmt[k]);
	}
	if (!nf)
		put_str(f, "");
	fprintf(f, "]\narray floor_y[%zu] = [", n ? n : 1);
	for (size_t k = 0; k < n; k++)
		if (isfinite(p->floor[k]))
			fprintf(f, k ? ", %.17g" : "%.17g", p->floor[k]);
		else /* gnuplot's name, which %g does not write */
			fputs(k ? ", NaN" : "NaN", f);
	fputs(n ? "]\n" : "NaN]\n", f);
}

/* "partial fp64 lies on partial fp32": the curves drawn exactly under
 * others, which a reader would otherwise miss; appended to note[len..n). */
static size_t note_under(char *note, size_t n, size_t len, const chart_plan *p)
{
	for (size_t t = 0; t < p->series.n && p->legend; t++) {
		size_t k = 0, m = 0;
		for (size_t i = 0; i < p->series.n; i++)
			m += p->under[i] == t;
		for (size_t i = 0; i < p->series.n && len < n; i++) {
			if (p->under[i] != t)
				continue;
			char lab[256];
			series_label(lab, sizeof lab, p, i);
			len += (size_t)snprintf(note + len, n - len, "%s%s", k ? (k + 1 == m ? " and " : ", ") : len ? "; " : "", lab);
			k++;
		}
		if (m && len < n) {
			char lab[256];
			series_label(lab, sizeof lab, p, t);
			len += (size_t)snprintf(note + len, n - len, " lie%s on %s (within 2%%)", m == 1 ? "s" : "", lab);
		}
	}
	return len < n ? len : n - 1;
}

/* Breaks s into lines of about `width` characters at its clauses' "; ", so
 * a long note stays inside the chart (the chart script counts its lines). */
static void wrap_clauses(char *s, size_t width)
{
	char *line = s, *brk = NULL;
	for (char *c = s; *c; c++) {
		if (c[0] == ';' && c[1] == ' ') {
			if (brk && (size_t)(c - line) > width) {
				*brk = '\n';
				line = brk + 1;
			}
			brk = c + 1;
		}
	}
	if (brk && strlen(line) > width)
		*brk = '\n';
}

static void write_range(FILE *f, const chart_plan *p)
{
	fprintf(f, "ymin = %.17g\nymax = %.17g\nylog = %d\n", p->ymin, p->ymax, p->ylog);
	write_floors(f, p);
	/* Points a log axis cannot show, said on the chart rather than dropped
	 * silently. */
	char note[1024] = "";
	size_t len = 0;
	if (p->hidden && p->ylog)
		len += (size_t)snprintf(note, sizeof note, "%zu point%s with a zero, infinite or NaN median not drawn",
					p->hidden, p->hidden == 1 ? "" : "s");
	if (p->series.nkeys && !p->legend && p->c->kind != CHART_HEATMAP && len < sizeof note)
		len += (size_t)snprintf(note + len, sizeof note - len, "%s%zu curves, too many to name in a legend",
					len ? "; " : "", p->series.n);
	/* The off-scale preset: where its medians lie, when outside the axis. */
	const double lo = p->off_lo, hi = p->off_hi;
	if (lo <= hi && (lo < p->ymin || hi > p->ymax) && len < sizeof note) {
		char a[32], b[32];
		len += (size_t)snprintf(note + len, sizeof note - len, "%s%s (medians %s to %s) lies %s the axis",
					len ? "; " : "", p->c->offscale, label_number(a, sizeof a, lo, 2),
					label_number(b, sizeof b, hi, 2),
					hi < p->ymin ? "below" : lo > p->ymax ? "above" : "partly outside");
	}
	if (len < sizeof note)
		len = note_under(note, sizeof note, len, p);
	wrap_clauses(note, 100); /* as the fixed parameters (header_vars) */
	fputs("note = ", f);
	put_str(f, note);
	fputc('\n', f);
}

/* A band or whisker end: +inf (a trial overflowed) is drawn at the top of
 * the axis and, on a log axis, 0 at its bottom, so the band still reaches
 * past the edge instead of vanishing. */
static double edge(const chart_plan *p, double v)
{
	if (v == INFINITY)
		return p->ymax;
	if (p->ylog && v <= 0)
		return p->ymin;
	return v;
}

static void write_blocks(FILE *f, const chart_plan *p, size_t *idx)
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

/* A heatmap's colours: per panel a block of rows (one per curve), each
 * "column row log10(median)" for every column (NaN where the median is
 * not a positive number or the point is absent), for `with image`. */
static int write_grid(FILE *f, const chart_plan *p)
{
	const results *r = p->r;
	const size_t nc = p->ncat, nr = p->series.n, np = p->panel.n, ncell = nc * nr * np;
	double *z = malloc((ncell ? ncell : 1) * sizeof *z);
	if (!z)
		return SKV_ENOMEM;
	for (size_t k = 0; k < ncell; k++)
		z[k] = NAN;
	for (size_t i = 0; i < r->npoints; i++) {
		const double v = results_stat(r, i, p->m)->median;
		const size_t c = (size_t)p->pos[i] - 1;
		if (v > 0 && isfinite(v) && c < nc)
			z[(p->panel.of_point[i] * nr + p->series.of_point[i]) * nc + c] = log10(v);
	}
	fputs("$grid << EOD\n", f);
	for (size_t pi = 0; pi < np; pi++) {
		fprintf(f, "%s# panel %zu\n", pi ? "\n\n" : "", pi + 1);
		for (size_t si = 0; si < nr; si++) {
			for (size_t c = 0; c < nc; c++) {
				fprintf(f, "%zu %zu", c + 1, si + 1);
				put_num(f, z[(pi * nr + si) * nc + c]);
				fputc('\n', f);
			}
			if (si + 1 < nr)
				fputc('\n', f);
		}
	}
	fputs("EOD\n", f);
	free(z);
	return SKV_OK;
}

int chart_write_data(FILE *f, const results *r, const chart_spec *c, message *e)
{
	if (!f || !r || !c)
		return SKV_EINVAL;
	chart_plan p;
	int rc = chart_plan_make(&p, r, c, e);
	if (rc)
		return rc;
	size_t *idx = malloc((r->npoints ? r->npoints : 1) * sizeof *idx);
	rc = idx ? SKV_OK : SKV_ENOMEM;
	if (!rc) {
		write_header(f, &p);
		write_names(f, &p);
		write_range(f, &p);
		write_blocks(f, &p, idx);
		if (c->kind == CHART_HEATMAP)
			rc = write_grid(f, &p);
	}
	rc = rc ? rc : ferror(f) ? SKV_EIO : SKV_OK;
	free(idx);
	chart_plan_free(&p);
	return rc;
}
