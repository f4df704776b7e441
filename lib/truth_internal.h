/* truth_internal.h - internal: the ground truth's two paths (MPFR, certified fast) and their parts. */
#ifndef SKV_TRUTH_INTERNAL_H
#define SKV_TRUTH_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

#include "problem_internal.h"
#include "skv.h"

/* The bounds the fast path certifies (lib/truth_fast.c): normwise relative
 * for out, and |lse - L| <= SKV_TRUTH_CERT_LSE (1 + |L|). */
#define SKV_TRUTH_CERT_REL 0x1p-100
#define SKV_TRUTH_CERT_LSE 0x1p-104

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

/* Instruction set of the fast path's loops: both give the same bits. */
typedef enum {
	SKV_TRUTH_ISA_AUTO = 0,    /* AVX2 + FMA when the CPU has them, else generic */
	SKV_TRUTH_ISA_GENERIC = 1, /* portable C, fma() from libm (correctly rounded) */
	SKV_TRUTH_ISA_FMA = 2      /* x86-64 AVX2 + FMA (SKV_EINVAL where absent) */
} skv_truth_isa;

/* Why the fast path did not certify (SKV_TRUTH_DECLINED). */
typedef enum {
	SKV_TRUTH_CERTIFIED = 0,
	SKV_TRUTH_NO_RANGE = 1,   /* sizes, an overflow, or scores beyond 2^40 */
	SKV_TRUTH_NO_TOP = 2,     /* a key scored above the reference by > 1/2 */
	SKV_TRUTH_NO_BOUND = 3    /* the bound exceeds SKV_TRUTH_CERT_REL */
} skv_truth_reason;

/* What the fast path proves about its result (lib/truth_fast.c). */
typedef struct {
	skv_truth_reason reason;
	double err_norm; /* upper bound on ||out - exact||_2 */
	double out_norm; /* lower bound on ||out||_2 of the returned values */
	double lse_err;  /* upper bound on |lse - L| */
	double theta;    /* bound on the relative error of every weight */
	double acc_rel;  /* accumulation error over sum_j w_j |v_ji| */
	size_t ncut;     /* keys whose weight was below e^-600 (taken as 0) */
} skv_truth_cert;

#define SKV_TRUTH_DECLINED (-1)

/* The fast truth of a valid, non-empty range: SKV_OK with out and lse
 * written and *cert filled when the bound certifies; SKV_TRUTH_DECLINED
 * (cert->reason says why; out and lse untouched) otherwise; SKV_ENOMEM;
 * SKV_EINVAL for SKV_TRUTH_ISA_FMA on a CPU without it. No global state. */
int skv_truth_fast(skv_dd *out, skv_dd *lse, skv_truth_cert *cert, const skv_problem *p, size_t row,
		   size_t lo, size_t hi, skv_truth_isa isa);
/* The same on K and V wherever they are (lib/problem_internal.h): a packed
 * problem's rows are decoded a chunk at a time, so the bits are those of the
 * double problem with the same values. */
int skv_truth_fast_kv(skv_dd *out, skv_dd *lse, skv_truth_cert *cert, const skv_kv *s, size_t row, size_t lo,
		      size_t hi, skv_truth_isa isa);

/* ---------------------------------------- fixed-point exp (truth_exp.c) */

/* exp(x) = m 2^(k - 127) with m < 2^128, the argument given exactly as
 * x = x0 + sum_i rest[i]. */
typedef struct {
	unsigned __int128 m;
	int k;
	double arg_err; /* bound on the argument's truncation (see below) */
} skv_texp;

/* Relative error bound of the evaluation, proven in lib/truth_exp.c. */
#define SKV_TRUTH_EXP_REL 0x1.4p-124

/* For |x0| <= 700, |rest[i]| <= 2^-5, nrest <= 6: 0, with
 * m 2^(k-127) = exp(x + a) (1 + r), |a| <= arg_err, |r| <= SKV_TRUTH_EXP_REL,
 * and m in [0.687, 1.455] 2^127; -1 outside that domain (or when the
 * reduced argument leaves the tables, |y| >= 0.375). */
int skv_truth_exp(skv_texp *r, double x0, const double *rest, int nrest);

/* The tables behind it, for tests/test_truth_fast.c to check against MPFR:
 * RN(2^127 exp(t / 64)) for t = -24..23, RN(2^127 exp(t / 4096)) for
 * t = 0..63, RN(2^127 / k!) for k = 0..8, each as {high, low} 64-bit words,
 * and ln 2 split as l[0] + l[1] + l[2] (42, 42 and 53 bits). */
typedef struct {
	const uint64_t (*e1)[2], (*e2)[2], (*coef)[2];
	int e1_lo, n_e1, n_e2, n_coef;
	const double *ln2;
} skv_truth_exp_tables;
skv_truth_exp_tables skv_truth_exp_tables_get(void);

/* ------------------------------------- vector loops (truth_kern.c) */

/* Per-key loops of the fast path, one set per instruction set; q4 and aq4
 * are q and |q| padded with zeros to d4 = d rounded up to a multiple of 4,
 * s0, s1, s2, a are d4 long. */
typedef struct {
	/* pass 1: *dot = fl sum q_i k_i, *abs = fl sum |q_i| |k_i| (4 lanes) */
	void (*scan)(double *dot, double *abs, const double *q4, const double *aq4, const double *k,
		     size_t d);
	/* the three-level compensated dot product of q and k, 4 lanes:
	 * lanes[0..3] level 0, [4..7] level 1, [8..11] level 2 */
	void (*dot3)(double *lanes, const double *q4, const double *k, size_t d);
	/* (s0, s1, s2)_i += (w0 + w1 + w2) v_i (three-level cascade), a_i +=
	 * fl(w0 |v_i|) */
	void (*accum)(double *s0, double *s1, double *s2, double *a, const double *v, size_t d, double w0,
		      double w1, double w2);
} skv_truth_kernels;

/* The kernels for isa (AUTO resolved); NULL for FMA on a CPU without it. */
const skv_truth_kernels *skv_truth_kernels_get(skv_truth_isa isa);

#endif
