/* approx.c - the approximate-math bound model: the correctly rounded fp32 result moved within an instruction's documented maximum error, deterministically from a seed (skv.h states the model and the sources). */
#include <math.h>
#include <string.h>
#include "mathmode.h"

/* One documented bound: `ulps` (+ floor(|ulps_per_a a|), __expf's growth)
 * outside [abs_lo, abs_hi] (open when abs_open), `abs` absolute inside it;
 * `rel` relative outside it instead of ulps when nonzero. */
typedef struct {
	double ulps, ulps_per_a;
	double abs_lo, abs_hi, abs;
	int abs_open;
	double rel;
} bound_row;

#define NOABS 0.0, 0.0, 0.0, 0

/* Indexed by mode and op. CUDA C++ Programming Guide (legacy edition,
 * CUDA 13.0), chapter 17: table 17 (standard functions: expf 2, exp2f 2,
 * logf 1, log2f 1; x/y and 1/x 0 with -prec-div=true) and table 21
 * (intrinsics: __expf 2 + floor(abs(1.173 x)); __logf 2^-21.41 absolute for
 * x in [0.5, 2], else 3 ulp; __fdividef 2 ulp for |y| in [2^-126, 2^126]);
 * PTX ISA 9.1: ex2.approx.f32 2 ulp from the correctly rounded result
 * (9.7.3.21), lg2.approx.f32 2^-22 absolute in (0.5, 2) and 2^-22 relative
 * outside (9.7.3.20), rcp.approx.f32 1 ulp (9.7.3.13), div.full.f32 2 ulp
 * (9.7.3.8). Read in the copies at yayueLaurazhou/flashinfer-bench c6857c6d
 * (flashinfer_bench/agents/RAG/cuda/ptx_9_1/...) and the programming
 * guide's chapter as stored in the search index. */
static const bound_row bounds[SKV_NMATHS][SKV_NMOPS] = {
	[SKV_MATH_FAST] = {
		[SKV_MOP_EXP] = {2.0, 1.173, NOABS, 0.0},
		[SKV_MOP_EXP2] = {2.0, 0.0, NOABS, 0.0},
		[SKV_MOP_LOG] = {3.0, 0.0, 0.5, 2.0, 0x1.8p-22, 0, 0.0}, /* 2^-21.41 rounded down, below */
		[SKV_MOP_LOG2] = {0.0, 0.0, 0.5, 2.0, 0x1p-22, 1, 0x1p-22},
		[SKV_MOP_DIV] = {2.0, 0.0, NOABS, 0.0},
		[SKV_MOP_RCP] = {1.0, 0.0, NOABS, 0.0},
	},
	[SKV_MATH_CUDA] = {
		[SKV_MOP_EXP] = {2.0, 0.0, NOABS, 0.0},
		[SKV_MOP_EXP2] = {2.0, 0.0, NOABS, 0.0},
		[SKV_MOP_LOG] = {1.0, 0.0, NOABS, 0.0},
		[SKV_MOP_LOG2] = {1.0, 0.0, NOABS, 0.0},
		[SKV_MOP_DIV] = {0.0, 0.0, NOABS, 0.0},
		[SKV_MOP_RCP] = {0.0, 0.0, NOABS, 0.0},
	},
};
/* 2^-21.41 = 2^-22 * 2^0.59 = 1.505 * 2^-22; the table keeps 0x1.8p-22 =
 * 1.5 * 2^-22 (2^-21.415), just below it, so the model never exceeds the
 * documented bound. */

static const int ftz[SKV_NMATHS] = {[SKV_MATH_FAST] = 1};

static const char *const math_names[SKV_NMATHS] = {"exact", "fast", "cuda"};

const char *skv_math_name(skv_math m) { return (unsigned)m < SKV_NMATHS ? math_names[m] : NULL; }

int skv_math_parse(skv_math *m, const char *name)
{
	for (unsigned i = 0; m && name && i < SKV_NMATHS; i++)
		if (strcmp(math_names[i], name) == 0) {
			*m = (skv_math)i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

/* fp32 values as ordered integers: consecutive fp32 values differ by one,
 * across binades and across zero (+0 and -0 both map to 0). */
static int64_t ord_of(double x)
{
	float f = (float)x; /* exact: x is an fp32 value */
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return (u >> 31) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

static double val_of(int64_t k)
{
	uint32_t u = k < 0 ? (uint32_t)(-k) | 0x80000000u : (uint32_t)k;
	float f;
	memcpy(&f, &u, sizeof f);
	return (double)f;
}

#define ORD_MAX 0x7f7fffff /* FLT_MAX's pattern: a finite r stays finite */

static double flush(double x) { return fabs(x) < 0x1p-126 ? copysign(0.0, x) : x; }

/* The correctly rounded result, and whether it is a special value the
 * model keeps (the PTX tables, zero, infinity, NaN). */
static double cr(skv_math_op op, double a, double b, int *keep)
{
	double r;
	switch (op) {
	case SKV_MOP_EXP: r = skv_exp_i(SKV_FP32, a); break;
	case SKV_MOP_EXP2: r = skv_exp2_i(SKV_FP32, a); break;
	case SKV_MOP_LOG: r = skv_log_i(SKV_FP32, a); break;
	case SKV_MOP_LOG2: r = skv_log2_i(SKV_FP32, a); break;
	case SKV_MOP_DIV: r = skv_div_i(SKV_FP32, a, b); break;
	default: r = skv_div_i(SKV_FP32, 1.0, a); break;
	}
	*keep = r == 0.0 || isinf(r) || isnan(r) || ((op == SKV_MOP_EXP || op == SKV_MOP_EXP2) && a == 0.0);
	return r;
}

/* The bound at (a, r): steps (ulp bounds) or an absolute error. */
static void bound_at(double *steps, double *abs_err, const bound_row *w, double a, double r)
{
	int in = w->abs > 0.0 && (w->abs_open ? a > w->abs_lo && a < w->abs_hi : a >= w->abs_lo && a <= w->abs_hi);
	*steps = 0.0;
	*abs_err = 0.0;
	if (in)
		*abs_err = w->abs;
	else if (w->rel > 0.0)
		*abs_err = w->rel * fabs(r);
	else
		*steps = w->ulps + floor(fabs(w->ulps_per_a * a));
}

double skv_approx_i(skv_math mode, skv_math_op op, double a, double b, uint64_t seed)
{
	if (ftz[mode]) {
		a = flush(a);
		b = flush(b);
	}
	int keep;
	double r = cr(op, a, b, &keep), steps, A;
	if (keep)
		return r;
	bound_at(&steps, &A, &bounds[mode][op], a, r);
	uint64_t ab, bb;
	memcpy(&ab, &a, sizeof ab);
	memcpy(&bb, &b, sizeof bb);
	uint64_t h = skv_seed_mix(skv_seed_mix(skv_seed_mix(seed, (uint64_t)op), ab), bb);
	int64_t k = ord_of(r);
	if (steps > 0.0) {
		/* n uniform in [-N, N]; the modulo bias is below 2^-50 for N < 2^12 */
		int64_t N = (int64_t)steps, n = (int64_t)(h % (uint64_t)(2 * N + 1)) - N;
		k += n;
	} else if (A > 0.0) {
		/* a value uniform in [r - A, r + A], rounded to fp32 and pulled back
		 * one step toward r if the rounding left the interval */
		double t = ((double)(h >> 11) * 0x1p-53 * 2.0 - 1.0) * A;
		k = ord_of(skv_round_i(SKV_FP32, r + t));
		if (fabs(val_of(k) - r) > A)
			k += k > ord_of(r) ? -1 : 1;
	}
	if (k > ORD_MAX)
		k = ORD_MAX;
	if (k < -(int64_t)ORD_MAX)
		k = -(int64_t)ORD_MAX;
	double z = val_of(k);
	return ftz[mode] ? flush(z) : z;
}

int skv_math_apply(double *y, skv_math m, skv_math_op op, skv_format f, double a, double b, uint64_t seed)
{
	if (!y || (unsigned)m >= SKV_NMATHS || (unsigned)op >= SKV_NMOPS || (unsigned)f >= SKV_NFORMATS)
		return SKV_EINVAL;
	skv_mth mt = {m, seed};
	switch (op) {
	case SKV_MOP_EXP: *y = skv_m_exp(&mt, f, a); break;
	case SKV_MOP_EXP2: *y = skv_m_exp2(&mt, f, a); break;
	case SKV_MOP_LOG: *y = skv_m_log(&mt, f, a); break;
	case SKV_MOP_LOG2: *y = skv_m_log2(&mt, f, a); break;
	case SKV_MOP_DIV: *y = skv_m_div(&mt, f, a, b); break;
	default: *y = skv_m_rcp(&mt, f, a); break;
	}
	return SKV_OK;
}

int skv_math_bound(double *ulps, double *abs_err, skv_math m, skv_math_op op, skv_format f, double a, double b)
{
	if (!ulps || !abs_err || (unsigned)m >= SKV_NMATHS || (unsigned)op >= SKV_NMOPS || (unsigned)f >= SKV_NFORMATS)
		return SKV_EINVAL;
	*ulps = *abs_err = 0.0;
	if (m == SKV_MATH_EXACT || f != SKV_FP32)
		return SKV_OK;
	if (ftz[m]) {
		a = flush(a);
		b = flush(b);
	}
	int keep;
	double r = cr(op, a, b, &keep);
	if (!keep)
		bound_at(ulps, abs_err, &bounds[m][op], a, r);
	return SKV_OK;
}
