/* lse_grid.c - the lse-grid experiment: a 16-bit LSE's error over every split count and a fine grid of LSE offsets, as a heatmap. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "core/stats.h"
#include "results/labels.h"

/* One LSE format's part of the grid: its points' offsets and split counts
 * span, the spacing h of the format over all its split LSEs (0 when they
 * cross a binade, so that no one spacing holds), and its median range. */
typedef struct {
	const char *fmt;
	double omin, omax, smin, smax, ctx, h, lo, hi;
} grid_fmt;

static int grid_of(grid_fmt *g, const results *r, size_t m, const char *fmt)
{
	*g = (grid_fmt){fmt, INFINITY, -INFINITY, INFINITY, -INFINITY, NAN, 0, INFINITY, -INFINITY};
	skv_format lf;
	if (skv_format_parse(&lf, fmt) != SKV_OK)
		return SKV_EINVAL;
	for (size_t p = 0; p < r->npoints; p++) {
		double o, s, c;
		if (strcmp(results_get(r, p, "lse"), fmt) != 0)
			continue;
		if (results_number(&o, r, p, "lse_offset", NULL) || results_number(&s, r, p, "splits", NULL) ||
		    results_number(&c, r, p, "ctx", NULL))
			return SKV_EINVAL;
		const double y = results_stat(r, p, m)->median;
		g->omin = fmin(g->omin, o), g->omax = fmax(g->omax, o), g->smin = fmin(g->smin, s);
		g->smax = fmax(g->smax, s), g->ctx = c;
		if (y > 0 && isfinite(y))
			g->lo = fmin(g->lo, y), g->hi = fmax(g->hi, y);
	}
	/* a split of ctx/S keys has its LSE near offset + ln(ctx/S) */
	const double a = skv_ulp(lf, g->omin + log(g->ctx / g->smax)), b = skv_ulp(lf, g->omax + log(g->ctx / g->smin));
	g->h = a == b ? a : 0;
	return SKV_OK;
}

/* The error against the offset moved by one spacing of the format, and by
 * half of one, in one sentence for every format: the curves are (format,
 * split count) along the offset. */
static int shift_sentence(FILE *f, const results *r, size_t m, const grid_fmt *g, size_t ng, message *e)
{
	const char *ex[] = {"lse_offset"};
	narr_curves cv;
	find_factor one[8], half[8];
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, 1);
	if (rc)
		return rc;
	unsigned char *keep = cv.per;
	size_t n = 0, moved = 0;
	for (size_t k = 0; !rc && k < ng; k++) {
		for (size_t i = 0; i < cv.g.n; i++)
			keep[i] = strcmp(results_get(r, cv.g.first[i], "lse"), g[k].fmt) == 0;
		one[k].pairs = half[k].pairs = 0;
		if (g[k].h > 0 && !(rc = find_shift_factor(&one[k], r, &cv.g, keep, "lse_offset", g[k].h, m, e)))
			rc = find_shift_factor(&half[k], r, &cv.g, keep, "lse_offset", g[k].h / 2, m, e);
		if (!rc && one[k].pairs && half[k].pairs)
			n++, moved += one[k].max != 1.0;
	}
	narr_curves_free(&cv);
	char a[NARR_NUM], b[NARR_NUM];
	for (size_t k = 0, i = 0; !rc && k < ng; k++) {
		if (!one[k].pairs || !half[k].pairs)
			continue;
		if (i == 0)
			fputs(" Raising every score by one spacing of the format there (", f);
		fprintf(f, "%s%s for %s", narr_sep(i++, n), narr_num(a, g[k].h), g[k].fmt);
	}
	if (!rc && n) {
		fputs(moved ? ") moves each median error by at most " : ") leaves every median error as it was (", f);
		for (size_t k = 0, i = 0; k < ng; k++)
			if (one[k].pairs && half[k].pairs) {
				if (moved)
					fprintf(f, "%s%.3g%%", narr_sep(i, n), 100 * (one[k].max - 1));
				fprintf(f, "%s%zu", moved ? " over " : narr_sep(i, n), one[k].pairs);
				fputs(i + 1 == n ? " pairs" : "", f), i++;
			}
		fputs(moved ? ": every stored LSE moves by one spacing and their differences not at all" :
			      "): every stored LSE moves by exactly one spacing and their differences not at all", f);
		fputs("; half a spacing moves it by a median factor of ", f);
		for (size_t k = 0, i = 0; k < ng; k++)
			if (one[k].pairs && half[k].pairs)
				fprintf(f, "%s%s and up to %s (%s)", narr_sep(i++, n), narr_num(a, half[k].median),
					narr_num(b, half[k].max), g[k].fmt);
		fputs(".", f);
	}
	return rc;
}

/* Where along each offset's row the error peaks, against the grid: how far
 * offset + ln(ctx/S) at the peak lies below the nearest rounding boundary
 * (a value (k + 1/2) h halfway between two stored ones, in the binade of
 * spacing h), its median and quartiles over the rows. */
static int ridge_sentence(FILE *f, const results *r, size_t m, const grid_fmt *g, size_t ng)
{
	const char *ex[] = {"splits"};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, sizeof(double));
	if (rc)
		return rc;
	double *d = cv.per;
	size_t said = 0;
	for (size_t k = 0; k < ng; k++) {
		size_t n = 0;
		for (size_t i = 0; i < cv.g.n && g[k].h > 0; i++) {
			size_t top = NO_GROUP;
			for (size_t p = 0; p < r->npoints; p++)
				if (cv.g.of_point[p] == i && strcmp(results_get(r, p, "lse"), g[k].fmt) == 0 &&
				    (top == NO_GROUP || results_stat(r, p, m)->median > results_stat(r, top, m)->median))
					top = p;
			double o, sp;
			if (top == NO_GROUP || results_number(&o, r, top, "lse_offset", NULL) ||
			    results_number(&sp, r, top, "splits", NULL))
				continue;
			const double v = o + log(g[k].ctx / sp);
			d[n++] = (floor(v / g[k].h) + 0.5) * g[k].h - v;
		}
		if (n < 4)
			continue;
		double q1, med, q3;
		qsort(d, n, sizeof *d, stats_cmp_double);
		stats_quantile(&q1, d, n, 0.25), stats_quantile(&med, d, n, 0.5), stats_quantile(&q3, d, n, 0.75);
		char a[NARR_NUM], b[NARR_NUM], c[NARR_NUM], hh[NARR_NUM];
		fprintf(f, "%s%s%s (quartiles %s to %s) for %s, whose boundaries lie %s apart",
			said ? "; by " : " In each offset's row the error peaks at the split count S whose "
				 "offset + ln(ctx/S) lies just below a rounding boundary of the grid (halfway between two "
				 "stored values): by a median of ",
			narr_num(a, fabs(med)), med >= 0 ? "" : " above it", narr_num(b, q1), narr_num(c, q3), g[k].fmt,
			narr_num(hh, g[k].h));
		said++;
	}
	if (said)
		fputs(". The LSE of a split of n keys is ln n plus the log of the mean of exp(score) over its keys, "
		      "a little more than ln n: at those counts the split LSEs straddle the boundary, round to stored "
		      "values one spacing h apart, and their weights differ by a factor e^h.", f);
	narr_curves_free(&cv);
	return SKV_OK;
}

static int lse_grid(FILE *f, const results *r, message *e)
{
	size_t m = narr_metric(r, "norm_rel_err");
	if (!results_varies(r, "splits") || !results_varies(r, "lse_offset"))
		return narr_generic(f, r, e);
	grid_fmt g[8];
	size_t ng = 0;
	const char *seen[8];
	const size_t nv = narr_values(seen, 8, r, "lse");
	for (; ng < nv; ng++)
		if (grid_of(&g[ng], r, m, seen[ng]) != SKV_OK)
			return narr_generic(f, r, e);
	if (ng == 0)
		return narr_generic(f, r, e);
	char a[NARR_NUM], b[NARR_NUM], c[NARR_NUM], d[NARR_NUM], w[NARR_NUM];
	fprintf(f, "Over split counts %s to %s and LSE offsets %s to %s, the median normwise error ranges ",
		narr_val(a, g[0].smin), narr_val(b, g[0].smax), narr_val(c, g[0].omin), narr_val(d, g[0].omax));
	for (size_t k = 0; k < ng; k++)
		fprintf(f, "%sfrom %s to %s with LSE %s (spacing %s, e^h = %s)", narr_sep(k, ng), narr_num(a, g[k].lo),
			narr_num(b, g[k].hi), g[k].fmt, g[k].h > 0 ? narr_num(c, g[k].h) : "varying",
			g[k].h > 0 ? narr_num(w, exp(g[k].h)) : "-");
	fputs(".", f);
	int rc = narr_jumps(f, r, m, "lse", NULL, e);
	if (!rc)
		rc = shift_sentence(f, r, m, g, ng, e);
	if (!rc)
		rc = ridge_sentence(f, r, m, g, ng);
	if (!rc)
		narr_nan_sentence(f, r, m, 0);
	return rc;
}

const experiment exp_lse_grid = {
	{"lse-grid", KIND_SPLIT,
	 "a 16-bit LSE's error over every split count from 2 to 64 and LSE offsets from 1000 to 1004 in steps of 1/8",
	 "--ctx=1024 --head-dim=16 --splits=2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,"
	 "28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64 "
	 "--lse-offset=1000,1000.125,1000.25,1000.375,1000.5,1000.625,1000.75,1000.875,"
	 "1001,1001.125,1001.25,1001.375,1001.5,1001.625,1001.75,1001.875,"
	 "1002,1002.125,1002.25,1002.375,1002.5,1002.625,1002.75,1002.875,"
	 "1003,1003.125,1003.25,1003.375,1003.5,1003.625,1003.75,1003.875,1004 "
	 "--lse=fp16,bf16 --input=fp32 --compute=fp64 --p=fp64 --partial=fp64 --combine=fp64 --output=fp64 "
	 "--merge=onepass --trials=4",
	 "As lse-magnitude, every stage but the LSE storage in fp64, on a grid fine enough to show the "
	 "structure: at LSE ~ 1000 fp16's spacing is 1/2 and bf16's 4, so the 33 offsets cover eight "
	 "fp16 spacings and one bf16 spacing, four and 32 steps each. ctx 1024, head-dim 16 and 4 "
	 "trials keep the 4158 points within the report's time; a lone split (S = 1) is exact whatever "
	 "its LSE (lse-magnitude shows it) and is left out of the colour scale's way."},
	"The structure behind lse-magnitude's curves: with a 16-bit LSE near 1000, the error over every split count "
	 "(across) and LSE offsets 1/8 apart (up), one heatmap per LSE format.",
	{"heatmap", CHART_HEATMAP, "splits", "lse", "norm_rel_err",
	 "error over split count and LSE offset, per LSE storage format", NULL},
	lse_grid,
};
