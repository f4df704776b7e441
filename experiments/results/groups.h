/* groups.h - an experiment's points partitioned by the values of chosen columns: the curves and panels of charts and findings. */
#ifndef SKV_GROUPS_H
#define SKV_GROUPS_H

#include <stddef.h>

#include "results/results.h"

#define NO_GROUP ((size_t)-1)

/* Points with equal values in the key columns form one group; groups are
 * numbered in the order of their first point (the sweep order). */
typedef struct {
	size_t n;            /* groups */
	size_t nkeys;
	size_t *of_point;    /* [npoints] group of each point, NO_GROUP if filtered out */
	size_t *first;       /* [n] first point of each group */
	const char **key;    /* [nkeys] key column names (the caller's strings) */
} groups;

/* Groups the points of r by the columns keys[0..nkeys) (nkeys may be 0: one
 * group). When where_col is not NULL only the points whose where_col equals
 * where_val are kept. SKV_EINVAL for a key or where_col that is not a column
 * of r (*g untouched); SKV_ENOMEM. A filter that keeps nothing gives n = 0. */
int groups_make(groups *g, const results *r, const char *const *keys, size_t nkeys,
		    const char *where_col, const char *where_val);
void groups_free(groups *g);

/* Value of key column k for group i (from its first point). */
const char *groups_value(const groups *g, const results *r, size_t i, size_t k);

/* The parameter columns of r that take more than one value, in CSV order,
 * leaving out those named in except[0..nexcept): their names (pointers into
 * r) go to cols[0..cap) and their count is returned (it may exceed cap, in
 * which case only cap names were written). */
size_t results_varying(const results *r, const char **cols, size_t cap, const char *const *except,
			   size_t nexcept);

/* Whether column a determines column b: any two points equal in a are
 * equal in b (a preset determines its formats). 0 when either is not a
 * column of r. */
int results_determines(const results *r, const char *a, const char *b);

/* The columns that name the curves of a chart or the rows of a finding: the
 * varying parameters except those in except[0..nexcept), except those that
 * one of except[] determines (a preset's formats when the preset is the
 * axis), and except those determined by another one kept (when a preset
 * varies, its formats say nothing more; of columns that determine each other
 * the first is kept). Names into cols[0..cap), the count returned. */
size_t results_keys(const results *r, const char **cols, size_t cap, const char *const *except,
			size_t nexcept);

#endif
