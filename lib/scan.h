/* scan.h - internal: the online-softmax scan of one query row, shared by the split kernel and blockwise attention. */
#ifndef SKV_SCAN_H
#define SKV_SCAN_H
#include "skv.h"

/* The two constants a kernel folds into its scores, rounded once to the
 * compute format: the softmax scale (times log2 e in base 2) and the LSE
 * offset of the experiments (times log2 e in base 2). */
typedef struct {
	double scale, offset;
} skv_scan_consts;

void skv_scan_consts_init(skv_scan_consts *sc, double scale, double lse_offset, const skv_config *cfg);

/* Folds keys [lo, hi) of (k, v) into the running state (*m, *l, acc[d]) of
 * query q, in blocks of `block` keys (0: one block), every operation in
 * cfg->compute and P rounded to cfg->p before P.V. The state starts as
 * m = -inf, l = 0, acc = 0; zbuf has room for one block of scores. */
void skv_scan(double *m, double *l, double *acc, const double *q, const double *k, const double *v,
	      size_t d, size_t lo, size_t hi, size_t block, const skv_scan_consts *sc, const skv_config *cfg,
	      double *zbuf);

/* Ends a scan: out = acc / l and *lse = m + log(l) (log2 in base 2), in
 * compute; an empty state (l == 0) gives out = 0 and lse = -inf. */
void skv_scan_finish(double *out, double *lse, double m, double l, const double *acc, size_t d,
		     const skv_config *cfg);

/* The running max as the split writes it: in the LSE's units (for
 * SKV_BASE_E2 the log2-unit max times ln 2, rounded in compute). */
double skv_scan_max_out(double m, const skv_config *cfg);

/* Converts an LSE in the config's base to natural log units in double
 * (exact enough: one rounding, relative 2^-53). */
double skv_lse_to_natural(double lse, skv_lse_base base);
#endif
