/* groups.c - an experiment's points partitioned by the values of chosen columns: the curves and panels of charts and findings. */
#include "results/groups.h"

#include <stdlib.h>
#include <string.h>

#include "skv.h"

int groups_make(groups *g, const results *r, const char *const *keys, size_t nkeys,
		    const char *where_col, const char *where_val)
{
	if (!g || !r || (!keys && nkeys) || (where_col && !where_val))
		return SKV_EINVAL;
	size_t wc = 0;
	if (where_col && csv_find(&r->csv, where_col, &wc) != SKV_OK)
		return SKV_EINVAL;
	size_t *kc = malloc((nkeys ? nkeys : 1) * sizeof *kc);
	if (!kc)
		return SKV_ENOMEM;
	for (size_t k = 0; k < nkeys; k++)
		if (!keys[k] || csv_find(&r->csv, keys[k], &kc[k]) != SKV_OK) {
			free(kc);
			return SKV_EINVAL;
		}
	groups o = {.nkeys = nkeys};
	o.of_point = malloc(r->npoints * sizeof *o.of_point);
	o.first = malloc(r->npoints * sizeof *o.first);
	o.key = malloc((nkeys ? nkeys : 1) * sizeof *o.key);
	if (!o.of_point || !o.first || !o.key) {
		free(kc);
		groups_free(&o);
		return SKV_ENOMEM;
	}
	for (size_t k = 0; k < nkeys; k++)
		o.key[k] = keys[k];
	/* Linear search over the groups found so far: charts have tens of groups
	 * and experiments hundreds of points, so this stays far below a
	 * millisecond. */
	for (size_t p = 0; p < r->npoints; p++) {
		const size_t row = r->point_row[p];
		o.of_point[p] = NO_GROUP;
		if (where_col && strcmp(csv_get(&r->csv, row, wc), where_val) != 0)
			continue;
		size_t i;
		for (i = 0; i < o.n; i++) {
			size_t k, row0 = r->point_row[o.first[i]];
			for (k = 0; k < nkeys; k++)
				if (strcmp(csv_get(&r->csv, row, kc[k]), csv_get(&r->csv, row0, kc[k])) != 0)
					break;
			if (k == nkeys)
				break;
		}
		if (i == o.n)
			o.first[o.n++] = p;
		o.of_point[p] = i;
	}
	free(kc);
	*g = o;
	return SKV_OK;
}

void groups_free(groups *g)
{
	if (!g)
		return;
	free(g->of_point);
	free(g->first);
	free(g->key);
	memset(g, 0, sizeof *g);
}

const char *groups_value(const groups *g, const results *r, size_t i, size_t k)
{
	if (!g || !r || i >= g->n || k >= g->nkeys)
		return NULL;
	return results_get(r, g->first[i], g->key[k]);
}

size_t results_varying(const results *r, const char **cols, size_t cap, const char *const *except,
			   size_t nexcept)
{
	size_t n = 0;
	if (!r)
		return 0;
	for (size_t c = 0; c < r->csv.ncols; c++) {
		if (!r->param[c] || !r->varies[c])
			continue;
		const char *name = csv_colname(&r->csv, c);
		size_t e;
		for (e = 0; e < nexcept; e++)
			if (except[e] && strcmp(except[e], name) == 0)
				break;
		if (e < nexcept)
			continue;
		if (cols && n < cap)
			cols[n] = name;
		n++;
	}
	return n;
}

int results_determines(const results *r, const char *a, const char *b)
{
	size_t ca, cb;
	if (!r || !a || !b || csv_find(&r->csv, a, &ca) != SKV_OK || csv_find(&r->csv, b, &cb) != SKV_OK)
		return 0;
	/* Quadratic in the points, which number in the hundreds. */
	for (size_t p = 0; p < r->npoints; p++) {
		const char *pa = csv_get(&r->csv, r->point_row[p], ca), *pb = csv_get(&r->csv, r->point_row[p], cb);
		for (size_t q = 0; q < p; q++)
			if (strcmp(pa, csv_get(&r->csv, r->point_row[q], ca)) == 0 &&
			    strcmp(pb, csv_get(&r->csv, r->point_row[q], cb)) != 0)
				return 0;
	}
	return 1;
}

size_t results_keys(const results *r, const char **cols, size_t cap, const char *const *except,
			size_t nexcept)
{
	if (!r || !cols)
		return 0;
	const size_t max = 256;
	const char *v[256];
	size_t n = results_varying(r, v, max, except, nexcept);
	n = n < max ? n : max;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int drop = 0;
		for (size_t e = 0; e < nexcept && !drop; e++)
			drop = except[e] && results_varies(r, except[e]) && results_determines(r, except[e], v[i]);
		/* Determined by another candidate: dropped, unless they determine
		 * each other and this one comes first. */
		for (size_t j = 0; j < n && !drop; j++)
			drop = j != i && results_determines(r, v[j], v[i]) &&
			       (j < i || !results_determines(r, v[i], v[j]));
		if (!drop && k < cap)
			cols[k++] = v[i];
	}
	return k;
}
