/* findings.h - the numbers quoted in the report's findings, computed from an experiment's points. */
#ifndef SKV_FINDINGS_H
#define SKV_FINDINGS_H

#include <stddef.h>

#include "results/groups.h"
#include "results/results.h"

/* Every function below works on the groups g of r (each group one curve,
 * its points differing only in the swept column) and on the median over
 * trials of metric m; out has one entry per group. They return SKV_EINVAL
 * with "file:line: what" in e when a swept value is not a number, and
 * write nothing to out on error. */

/* How a curve grows along x. */
typedef struct {
	double slope;    /* least-squares slope of log median against log x, NaN
	                  * when fewer than two points have positive x and median */
	size_t used;     /* points in the fit */
	double x_first, y_first; /* smallest x and its median */
	double x_last, y_last;   /* largest x and its median */
	size_t nnan;     /* NaN trials along the curve */
} find_trend;

int find_trends(find_trend *out, const results *r, const groups *g, const char *xcol, size_t m,
		    message *e);

/* Where a curve first rises above a threshold. */
typedef struct {
	double x;        /* smallest x whose median exceeds the threshold (or is
	                  * NaN), NaN when no point does */
	double y;        /* that median */
	double x_last, y_last; /* largest x and its median */
} find_crossing;

int find_crossings(find_crossing *out, const results *r, const groups *g, const char *xcol, size_t m,
		       double threshold, message *e);

/* How much the metric moves across the points of a group (e.g. across
 * reduction orders) on the same trial: for each trial number present at
 * every point of the group, max - min of the metric over those points. */
typedef struct {
	double median, max; /* of the per-trial ranges; NaN without a common trial */
	size_t ntrials;     /* trials present at every point of the group */
	size_t npoints;     /* points in the group */
	size_t lo, hi;      /* points with the smallest and largest median */
} find_spread;

int find_spreads(find_spread *out, const results *r, const groups *g, size_t m);

/* The erratic part of a curve: the largest ratio between the medians at
 * neighbouring x, over the pairs of consecutive points whose x lie in
 * [xmin, xmax] and differ by at most gap (split counts 2 to 64, gap 1:
 * every count against the next), both medians positive and finite. */
typedef struct {
	double ratio;          /* max(y_a / y_b, y_b / y_a); NaN without a pair */
	double x_a, y_a;       /* the pair, x_a < x_b */
	double x_b, y_b;
	size_t pairs;          /* pairs compared */
} find_jump;

int find_jumps(find_jump *out, const results *r, const groups *g, const char *xcol, size_t m, double xmin,
	       double xmax, double gap, message *e);

/* How much the median moves when column xcol moves by d, all else fixed:
 * over every group gi with keep[gi] (keep NULL: every group) and every
 * pair of its points at x and x + d (to within 1e-9 |d|), both medians
 * positive and finite, the factor max / min of the two medians: its median
 * and largest (NaN and 0 pairs when there is none). */
typedef struct {
	double median, max;
	size_t pairs;
} find_factor;

int find_shift_factor(find_factor *out, const results *r, const groups *g, const unsigned char *keep,
		      const char *xcol, double d, size_t m, message *e);

/* Median of group gi's point whose column col equals num, divided by the
 * smallest median among its points whose col is one of den[0..nden):
 * how many times worse one rule is than the best reference rule. *best gets
 * that point. SKV_EINVAL when either side is absent from the group. */
int find_ratio(double *ratio, size_t *best, const results *r, const groups *g, size_t gi,
		   const char *col, const char *num, const char *const *den, size_t nden, size_t m);

#endif
