/* stats.c - order statistics, log-log least squares and threshold crossings for the report's findings. */
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>

#include "skv.h"

int stats_quantile(double *q, const double *sorted, size_t n, double p)
{
	if (!q || !sorted || n == 0 || !(p >= 0 && p <= 1))
		return SKV_EINVAL;
	double h = (double)(n - 1) * p;
	size_t lo = (size_t)h;
	double frac = h - (double)lo;
	/* frac == 0 and equal neighbours are returned as they are so that an
	 * infinite order statistic never meets inf - inf. */
	if (lo + 1 >= n || frac == 0 || sorted[lo] == sorted[lo + 1])
		*q = sorted[lo];
	else
		*q = sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
	return SKV_OK;
}

int stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int stats_cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

double stats_max(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

int stats_compute(stat_summary *s, const double *v, size_t n)
{
	if (!s || !v || n == 0)
		return SKV_EINVAL;
	double *w = malloc(n * sizeof *w);
	if (!w)
		return SKV_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			w[k++] = v[i];
	stat_summary r = {.n = n, .nnan = n - k};
	if (k == 0) {
		r.median = r.min = r.max = r.q1 = r.q3 = NAN;
	} else {
		qsort(w, k, sizeof *w, stats_cmp_double);
		r.min = w[0];
		r.max = w[k - 1];
		stats_quantile(&r.q1, w, k, 0.25);
		stats_quantile(&r.median, w, k, 0.5);
		stats_quantile(&r.q3, w, k, 0.75);
	}
	free(w);
	*s = r;
	return SKV_OK;
}

int stats_fit_loglog(double *slope, double *c, size_t *used, const double *x, const double *y, size_t n)
{
	if (!slope || !c || !used || (!x && n) || (!y && n))
		return SKV_EINVAL;
	/* Two passes (means, then centred sums) rather than the one-pass normal
	 * equations, which cancel badly when log x is far from zero. */
	size_t k = 0;
	double mx = 0, my = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(x[i]) && isfinite(y[i]) && x[i] > 0 && y[i] > 0) {
			mx += log(x[i]);
			my += log(y[i]);
			k++;
		}
	if (k < 2)
		return SKV_EINVAL;
	mx /= (double)k;
	my /= (double)k;
	double sxx = 0, sxy = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(x[i]) && isfinite(y[i]) && x[i] > 0 && y[i] > 0) {
			double dx = log(x[i]) - mx;
			sxx += dx * dx;
			sxy += dx * (log(y[i]) - my);
		}
	if (!(sxx > 0))
		return SKV_EINVAL;
	*slope = sxy / sxx;
	*c = my - *slope * mx;
	*used = k;
	return SKV_OK;
}

int stats_first_above(size_t *idx, const double *x, const double *y, size_t n, double threshold)
{
	if (!idx || (!x && n) || (!y && n))
		return SKV_EINVAL;
	size_t best = n;
	for (size_t i = 0; i < n; i++) {
		if (isnan(x[i]))
			return SKV_EINVAL;
		if ((y[i] > threshold || isnan(y[i])) && (best == n || x[i] < x[best]))
			best = i;
	}
	*idx = best;
	return SKV_OK;
}
