/* truth_internal.h - internal: the MPFR path of the ground truth. */
#ifndef SKV_TRUTH_INTERNAL_H
#define SKV_TRUTH_INTERNAL_H
#include <stddef.h>

#include "skv.h"

/* The MPFR truth at prec bits (64 <= prec <= 65536) of a valid, non-empty
 * range (skv_truth_range checks the arguments): lib/truth_mpfr.c. Sets the
 * widest MPFR exponent range for the call and restores the caller's range
 * and flags. SKV_ERANGE when |L| exceeds the largest double; SKV_ENOMEM.
 * Nothing is written on error. */
int skv_truth_mpfr(skv_dd *out, skv_dd *lse, const skv_problem *p, size_t row, size_t lo, size_t hi,
		   long prec);
/* The same, with the next 53 bits of each value (RN(x - hi - lo)) in out3[d]
 * and *lse3 when they are not NULL: a referee beyond the double-double. */
int skv_truth_mpfr3(skv_dd *out, double *out3, skv_dd *lse, double *lse3, const skv_problem *p, size_t row,
		    size_t lo, size_t hi, long prec);

#endif
