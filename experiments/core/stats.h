/* stats.h - order statistics, log-log least squares and threshold crossings for the report's findings. */
#ifndef SKV_STATS_H
#define SKV_STATS_H

#include <stddef.h>

/* Summary of one metric over the trials of a point. NaN trials are counted
 * apart and left out of the order statistics, so one broken trial shows as
 * nnan > 0 instead of poisoning the median; with every trial NaN the order
 * statistics are NaN. */
typedef struct {
	double median, min, max, q1, q3;
	size_t n;    /* trials */
	size_t nnan; /* trials whose value is NaN */
} stat_summary;

/* Quantile p in [0, 1] of sorted[0..n) (ascending, no NaN) by linear
 * interpolation between order statistics (Hyndman and Fan's type 7, the
 * default of R and NumPy): h = (n - 1) p, q = x[floor h] + (h - floor h)
 * (x[floor h + 1] - x[floor h]). The median of an even count is the mean of
 * the two middle values. SKV_EINVAL for n == 0, p outside [0, 1] or NULL. */
int stats_quantile(double *q, const double *sorted, size_t n, double p);

/* The larger of a and b, NaN if either is: a worst case that a NaN trial
 * or element reaches stays NaN (never a silent finite maximum). */
double stats_max(double a, double b);

/* qsort and bsearch comparators of doubles and of size_t, ascending. The
 * double one orders numbers only: with a NaN the order is unspecified, so
 * callers sort NaN-free arrays (a NaN is counted apart first). */
int stats_cmp_double(const void *a, const void *b);
int stats_cmp_size(const void *a, const void *b);

/* Summary of v[0..n) (any order, NaN allowed; v is not modified).
 * SKV_EINVAL for n == 0 or NULL; SKV_ENOMEM. */
int stats_compute(stat_summary *s, const double *v, size_t n);

/* Least-squares fit of log y = slope * log x + c over the points with x and
 * y finite and positive (log-log axes cannot show the others): *used gets
 * their count. The slope is the exponent of a power law y = C x^slope, so an
 * exact power law gives its exponent back to rounding. SKV_EINVAL when fewer
 * than two usable points remain or their x are all equal (outputs untouched). */
int stats_fit_loglog(double *slope, double *c, size_t *used, const double *x, const double *y, size_t n);

/* Index of the point with the smallest x among those whose y exceeds
 * threshold (y > threshold, or y NaN: a NaN error is never below anything),
 * in *idx; n when no point does. SKV_EINVAL for NULL or a NaN x. */
int stats_first_above(size_t *idx, const double *x, const double *y, size_t n, double threshold);

#endif
