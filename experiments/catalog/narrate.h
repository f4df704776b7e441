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

/* A ratio as the change it makes, in percent with two significant digits
 * ("+21%", "-0.38%", "0%"); buf holds NARR_NUM bytes. */
const char *narr_pct(char *buf, double ratio);

/* The ratio of metric m's median at each point whose column col reads val
 * (any value but base when val is NULL) to its median at the point of the
 * same curve (every other varying parameter equal) where col reads base:
 * the number of ratios, how many are exactly 1, and the smallest and
 * largest with their points (NO_GROUP when n is 0). A zero or NaN median
 * gives no ratio. SKV_ENOMEM. */
typedef struct {
	size_t n, equal, lo, hi;
	double rlo, rhi;
} narr_ratios;
int narr_ratios_to(narr_ratios *out, const results *r, const char *col, const char *base, const char *val, size_t m);

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
 * then) and a point of its curve. f NULL: *best only, nothing written. */
typedef struct {
	double ratio;
	size_t point;
	double s_a, y_a, s_b, y_b;
} narr_jump;

int narr_jumps(FILE *f, const results *r, size_t m, const char *by, narr_jump *best, message *e);
/* The distinct values of col in sweep order: up to cap pointers into r. */
size_t narr_values(const char **v, size_t cap, const results *r, const char *col);
/* The spacing of the LSE format's values at a jump's point: at the split
 * LSE offset + ln(ctx / S_a) (*lse; *have_ctx 0 when ctx is missing or
 * below S_a, then the offset alone), *off the offset. NaN when the point
 * has no LSE format or offset. */
double narr_jump_spacing(const results *r, const narr_jump *j, double *off, double *lse, int *have_ctx);

/* The findings of tensor-cores and tensor-cores-fp8 (catalog/tensor_cores.c):
 * each GPU's errors as ratios to IEEE arithmetic's at the same point. */
int tc_findings(FILE *f, const results *r, message *e);

/* The findings of an experiment that has no narrator of its own: the
 * median error at its best and worst points. */
int narr_generic(FILE *f, const results *r, message *e);

#endif
