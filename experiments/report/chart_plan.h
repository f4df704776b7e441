/* chart_plan.h - what a chart shows, decided before its data file is written: curves, panels, x positions, colours and dashes, the y range and what lies off it. */
#ifndef REPORT_CHART_PLAN_H
#define REPORT_CHART_PLAN_H

#include <stddef.h>

#include "catalog/experiment.h"
#include "io/io.h"
#include "results/groups.h"
#include "results/results.h"

/* A legend of more curves than this is not drawn (it could not be read,
 * and would not fit the image); the chart says how many there are. */
enum { CHART_LEGEND_MAX = 40 };

/* At most this many floor lines (output formats) in one chart. */
enum { CHART_FLOOR_MAX = 8 };

/* Colour indices of the scripts' palette (scripts/common.gp): a number
 * format takes its rank in the library's format table, from 1 (fp16 1,
 * bf16 2, fp32 3, fp64 4, in every chart); a lone curve takes sky blue. */
enum { CHART_COLOR_LONE = 7 };

/* Everything chart_write_data derives from the results before printing.
 * The curves (series) are the groups of the varying parameters other than
 * x and the panel column: the first format-valued one picks the colour,
 * the first other one the dash (or fill), the rest follow in CSV order. */
typedef struct {
	const results *r;
	const chart_spec *c;
	size_t m;              /* the metric drawn */
	groups panel, series, cat;
	const char *skeys[64]; /* series key columns: colour key first, then dash */
	size_t nskeys;
	double *pos;           /* [npoints] x position of each point */
	int xcat;              /* x is a category index (1..ncat) */
	size_t ncat;
	double *catval;        /* [ncat] numeric x of each category (lines) */
	size_t *color, *dash;  /* [series.n] colour and dash index of each curve */
	int legend;            /* the curves are named (some key, at most CHART_LEGEND_MAX) */
	double ymin, ymax;     /* the axis range every panel shares, whole decades */
	int ylog;              /* log y axis */
	size_t hidden;         /* points whose median a log axis cannot show */
	double off_lo, off_hi; /* medians of the off-scale preset's points; lo > hi: none */
	/* The floor of each output format drawn: what the exact output rounded
	 * once to it gives (the CSV's floor_err, for the normwise metric), the
	 * median over the drawn points of that format in each panel, as
	 * floor[pi * nfloor + k] (NaN where panel pi has none); for a ulp
	 * metric the bound 1/2 that rounding once meets. floor_fmt[k] names
	 * the format ("" when the CSV has no output column). */
	size_t nfloor;
	const char *floor_fmt[CHART_FLOOR_MAX];
	double *floor;
	int floor_ulp;         /* the floors are the 1/2-ulp bound */
	/* under[si]: the earlier curve that curve si lies on (medians within 2%
	 * at every point, in every panel), so that it would vanish under it;
	 * SIZE_MAX when none. Line charts of at most 64 curves. */
	size_t *under;
} chart_plan;

/* The plan of chart c for results r. SKV_EINVAL with "file:line: what" in
 * e when a swept value is not a finite number, or when r has neither c's
 * metric nor norm_rel_err; SKV_ENOMEM. On error nothing is left to free. */
int chart_plan_make(chart_plan *p, const results *r, const chart_spec *c, message *e);
void chart_plan_free(chart_plan *p);

/* Whether point i belongs to the chart's off-scale preset. */
int chart_offscale(const chart_plan *p, size_t i);

#endif
