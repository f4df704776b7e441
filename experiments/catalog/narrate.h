/* narrate.h - the helpers the findings narrators share, and the findings of an experiment with no narrator of its own. */
#ifndef CATALOG_NARRATE_H
#define CATALOG_NARRATE_H

#include <stddef.h>
#include <stdio.h>

#include "results/findings.h"
#include "results/groups.h"
#include "results/results.h"
#include "skv.h"

/* Sizes of the narrators' buffers: key columns, a label, a number. */
enum { NARR_KEYS = 32, NARR_LABEL = 256, NARR_NUM = 32 };

/* The threshold of the LSE-magnitude finding: the normwise error above which
 * an output is taken as wrong in the third significant digit. */
#define FINDINGS_THRESHOLD 1e-3

/* An error or ratio with two significant digits; a parameter value as
 * swept (17); buf holds NARR_NUM bytes. */
const char *narr_num(char *buf, double x);
const char *narr_val(char *buf, double x);
/* A fitted exponent: two decimals, and no "-0.00". */
double narr_slope2(double s);
/* Separator before item i of n in a running list: "", ", ", " and ". */
const char *narr_sep(size_t i, size_t n);

/* Index of metric `name`, else of norm_rel_err (every results table has it). */
size_t narr_metric(const results *r, const char *name);

/* The varying parameters except ex[0..nex), what they determine, and the
 * experiment column (see results_keys). */
size_t narr_keys_except(const results *r, const char **keys, const char *const *ex, size_t nex);

/* The curves a finding compares: the points grouped by the varying
 * parameters except ex[0..nex) (keys[0..nk), as narr_keys_except gives
 * them), keeping only those whose column where_col is where_val when
 * where_col is not NULL (groups_make), and room for one result per curve
 * (per: g.n items of `size` bytes, at least one; NULL when size is 0).
 * SKV_EINVAL or SKV_ENOMEM with nothing to free; else narr_curves_free. */
typedef struct {
	const char *keys[NARR_KEYS];
	size_t nk;
	groups g;
	void *per;
} narr_curves;

int narr_curves_make(narr_curves *c, const results *r, const char *const *ex, size_t nex, const char *where_col,
		     const char *where_val, size_t size);
void narr_curves_free(narr_curves *c);

/* Label of group i: "partial fp16, merge onepass"; `skip` names a key left out. */
char *narr_group_label(char *buf, const groups *g, const results *r, size_t i, const char *skip);

/* Label of point p in the columns keys[0..nk). */
char *narr_point_label(char *buf, const results *r, size_t p, const char *const *keys, size_t nk);

/* Whether some point of r has value val in column col. */
int narr_has_value(const results *r, const char *col, const char *val);

/* The unit of metric m for a sentence. */
void narr_unit(char *buf, size_t n, const results *r, size_t m);

/* Trials whose metric m is NaN, said once per experiment: a NaN is a result
 * (an empty split read as garbage, an overflow), never hidden in a median. */
void narr_nan_sentence(FILE *f, const results *r, size_t m, int always);

/* The merge rules that weigh the partials by their LSEs (the controls
 * mean and sum do not), and whether `merge` is one. */
enum { NARR_NWEIGHTED = 3 };
extern const char *const narr_weighted[NARR_NWEIGHTED];
int narr_is_weighted(const char *merge);

/* The erratic part along the split counts: per value of column `by` (the
 * LSE format; NULL or not a varying column: all curves together), the
 * largest ratio between the medians at neighbouring split counts 2 to 64
 * over its curves (the groups of the other varying parameters), written as
 * " Between neighbouring split counts (2 to 64) the median moves by up to
 * a factor of 35 with LSE bf16 (LSE offset 1000: 0.9 at S = 12, 0.026 at
 * S = 13), ...". *best (when not NULL) gets the largest of them: its ratio
 * (NaN when no curve has two neighbouring counts; nothing is written
 * then) and a point of its curve. */
typedef struct {
	double ratio;
	size_t point;
	double s_a, y_a, s_b, y_b;
} narr_jump;

int narr_jumps(FILE *f, const results *r, size_t m, const char *by, narr_jump *best, message *e);

/* The findings of an experiment that has no narrator of its own: the
 * median error at its best and worst points. */
int narr_generic(FILE *f, const results *r, message *e);

#endif
