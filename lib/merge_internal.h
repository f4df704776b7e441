/* merge_internal.h - internal: the online state merge shared by the split merges and skv_merge_states. */
#ifndef SKV_MERGE_INTERNAL_H
#define SKV_MERGE_INTERNAL_H
#include "skv.h"

/* Folds state b = (mb, db, accb[d]) into a = (*ma, *da, acca[d]), the
 * FlashInfer / SGLang online merge, every operation in format c:
 *   m = max(ma, mb), x = e(ma - m), y = e(mb - m),
 *   d = fma(da, x, db * y),  acc_i = fma(acc_i, x, accb_i * y)
 * with e = exp or exp2. With guard set, a merge whose max is -inf (two
 * empty states) leaves a as it is instead of computing -inf - -inf = NaN. */
void skv_state_merge(double *ma, double *da, double *acca, double mb, double db, const double *accb,
		     size_t d, skv_format c, int base2, int guard);
#endif
