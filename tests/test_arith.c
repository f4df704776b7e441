/* test_arith.c - emulated arithmetic and elementary functions, against MPFR: exhaustive in fp16/bf16, seeded random elsewhere. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmt_inline.h"
#include "ref_mpfr.h"
#include "expect.h"
#include "skv.h"

/* Double ulps by which test_elementary_exhaustive moves the libm result to
 * emulate a less accurate libm (SKV_FN_MARGIN allows 64). */
enum { PERTURB = 48 };

static const skv_format all_formats[] = {SKV_FP16, SKV_BF16, SKV_FP32, SKV_FP64, SKV_TF32, SKV_E4M3, SKV_E4M3_SAT,
					   SKV_E5M2, SKV_E5M2_SAT, SKV_E2M1};
/* Formats too large to enumerate whose functions are correctly rounded. */
static const skv_format wide_cr_formats[] = {SKV_FP32, SKV_TF32};
/* Formats whose every input is tried (fp16 and bf16: 65,536 each). */
static const skv_format narrow_formats[] = {SKV_FP16, SKV_BF16, SKV_E4M3, SKV_E4M3_SAT, SKV_E5M2, SKV_E5M2_SAT,
					      SKV_E2M1, SKV_E8M0, SKV_UE4M3};
/* Formats of at most 8 bits: every pair of operands is tried. */
static const skv_format tiny_formats[] = {SKV_E4M3, SKV_E4M3_SAT, SKV_E5M2, SKV_E5M2_SAT, SKV_E2M1, SKV_E8M0, SKV_UE4M3};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Uniform integer in [lo, hi] (the tiny modulo bias is irrelevant here). */
static int rand_int(uint64_t *s, int lo, int hi)
{
	return lo + (int)(splitmix64(s) % (uint64_t)(hi - lo + 1));
}

static double rand_unit(uint64_t *s) { return ldexp((double)(splitmix64(s) >> 11), -53); }

/* --------------------------------------------------------- the functions */

static const struct {
	const char *name;
	double (*skv)(skv_format, double);
	ref_fn1 ref;
	double (*libm)(double);
	skv_fn fn;
} fns[] = {
	{"exp", skv_exp, mpfr_exp, exp, SKV_FN_EXP},
	{"exp2", skv_exp2, mpfr_exp2, exp2, SKV_FN_EXP2},
	{"log", skv_log, mpfr_log, log, SKV_FN_LOG},
	{"log2", skv_log2, mpfr_log2, log2, SKV_FN_LOG2},
	{"log1p", skv_log1p, mpfr_log1p, log1p, SKV_FN_LOG1P},
	{"expm1", skv_expm1, mpfr_expm1, expm1, SKV_FN_EXPM1},
};

/*
 * Correct rounding of all six functions on every input of fp16, bf16 and
 * the formats of at most 8 bits (NaN, infinities, zeros, subnormals and
 * every domain error included; the inputs decoded by the referee),
 * bit for bit against MPFR. The MPFR slow path of lib/arith.c is checked
 * alone on every input too, since the fast path rarely or never reaches it.
 * For information the test prints how many inputs the plain "libm double
 * rounded to f" gets wrong and how many take the slow path.
 */
static void test_elementary_exhaustive(void **state)
{
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(narrow_formats); i++) {
		skv_format f = narrow_formats[i];
		for (size_t k = 0; k < COUNT(fns); k++) {
			long naive_wrong = 0, slow = 0, naive_pert = 0;
			const uint64_t npat = ref_npatterns(ref_fmt_of(f));
			for (uint64_t bits = 0; bits < npat; bits++) {
				double x = ref_decode(f, bits);
				double want = ref_op1(f, fns[k].ref, x);
				double got = fns[k].skv(f, x);
				double y = fns[k].libm(x);
				double d = fabs(y) * SKV_FN_MARGIN;
				double hard = skv_fn_hard(f, fns[k].fn, x);

				if (!ref_same(skv_round(f, y), want))
					naive_wrong++;
				const double lo = skv_round(f, y - d), hi = skv_round(f, y + d);
				if (isfinite(y) && !(lo == hi || (lo != lo && hi != hi)))
					slow++;
				if (!ref_same(got, want) && ++nfail <= MAX_REPORTS)
					print_error("%s:%d: %s %s(%a): got %a, want %a\n", __FILE__, __LINE__,
						    skv_format_name(f), fns[k].name, x, got, want);
				if (!ref_same(hard, want) && ++nfail <= MAX_REPORTS)
					print_error("%s:%d: slow path %s %s(%a): got %a, want %a\n", __FILE__,
						    __LINE__, skv_format_name(f), fns[k].name, x, hard, want);
				/* A worse libm: y moved by PERTURB double ulps either way
				 * (inside the margin) must still give the right answer;
				 * plain rounding of such a y would not, so this drives the
				 * hard-case detection and the slow path. */
				for (int dir = -1; dir <= 1; dir += 2) {
					double yp = y;
					for (int u = 0; u < PERTURB && isfinite(yp) && yp != 0; u++)
						yp = nextafter(yp, dir * INFINITY);
					if (!ref_same(skv_round(f, yp), want))
						naive_pert++;
					got = skv_fn_finish_i(f, fns[k].fn, x, yp);
					if (!ref_same(got, want) && ++nfail <= MAX_REPORTS)
						print_error("%s:%d: %s %s(%a) from y = %a: got %a, want %a\n", __FILE__,
							    __LINE__, skv_format_name(f), fns[k].name, x, yp, got, want);
				}
			}
			print_message("%s %-5s: libm rounded once wrong on %ld of %llu, slow path on %ld; "
				      "libm off by %d ulps: rounded once wrong on %ld, skv right on all\n",
				      skv_format_name(f), fns[k].name, naive_wrong, (unsigned long long)npat, slow, PERTURB,
				      naive_pert);
		}
	}
	assert_int_equal(nfail, 0);
}

/* A random value of format f with binade e (emin - p + 1 <= e <= emax),
 * built from integers without the library: significand m in [2^(p-1), 2^p)
 * times 2^(e-p+1); below emin the significand loses emin - e low bits
 * (a subnormal whose leading bit is worth 2^e). */
static double rand_value_e(uint64_t *s, skv_format f, int e, int negative)
{
	const int p = skv_format_precision(f), emin = skv_format_emin(f);
	uint64_t half = UINT64_C(1) << (p - 1);
	uint64_t m = half + splitmix64(s) % half;
	double v;

	if (e < emin)
		v = ldexp((double)(m >> (emin - e)), emin - p + 1);
	else
		v = ldexp((double)m, e - p + 1);
	return negative ? -v : v;
}

static double rand_value(uint64_t *s, skv_format f, int elo, int ehi)
{
	return rand_value_e(s, f, rand_int(s, elo, ehi), (int)(splitmix64(s) & 1));
}

/* Lowest binade that holds a subnormal of f. */
static int e_sub(skv_format f) { return skv_format_emin(f) - skv_format_precision(f) + 1; }

/* An input for fn in format f covering the useful domain: overflow,
 * underflow to subnormals and zero, tiny arguments, arguments near 1 for
 * the logarithms, and a few domain errors. */
static double fn_input(uint64_t *s, skv_format f, skv_fn fn)
{
	const int emax = skv_format_emax(f), esub = e_sub(f);
	const double big = ldexp(1.0, emax + 1); /* 2^(emax+1): exp2 overflows there */
	const double lim = log(big) * 1.01;      /* exp overflows about there */
	unsigned mode = (unsigned)(splitmix64(s) % 4);
	double x;

	switch (fn) {
	case SKV_FN_EXP:
	case SKV_FN_EXPM1:
		if (mode == 0)
			x = rand_value(s, f, esub, 2); /* tiny and moderate */
		else
			x = -1.2 * lim + rand_unit(s) * 2.2 * lim; /* whole range */
		break;
	case SKV_FN_EXP2:
		if (mode == 0)
			x = rand_value(s, f, esub, 2);
		else
			x = (esub - 3) + rand_unit(s) * (emax + 5 - (esub - 3));
		break;
	case SKV_FN_LOG1P:
		if (mode == 0)
			x = rand_value(s, f, esub, -1); /* tiny, both signs, |x| < 1 */
		else if (mode == 1)
			x = -rand_unit(s); /* (-1, 0] */
		else
			x = rand_value_e(s, f, rand_int(s, esub, emax), 0);
		break;
	default: /* log, log2 */
		if (mode == 0)
			x = 1 + (rand_unit(s) - 0.5) * 0x1p-6; /* near 1 */
		else
			x = rand_value_e(s, f, rand_int(s, esub, emax), (splitmix64(s) % 64) == 0);
		break;
	}
	return f == SKV_FP64 ? x : ref_round(f, x); /* a value of f (the referee's rounding) */
}

/* The format neighbour of r on the side given by dir (> 0 up, < 0 down). */
static double neighbour(skv_format f, double r, int dir)
{
	if (f == SKV_FP32)
		return (double)nextafterf((float)r, dir > 0 ? INFINITY : -INFINITY);
	return nextafter(r, dir > 0 ? INFINITY : -INFINITY);
}

/*
 * Faithful rounding in fp32 and fp64 on seeded random inputs: the result is
 * one of the two values of f around the exact value (the MPFR result rounded
 * to nearest and, when inexact, its neighbour on the side of the exact
 * value, per MPFR's ternary value).
 */
static void test_elementary_faithful(void **state)
{
	const skv_format wide[] = {SKV_FP64};
	const long n = 100000;
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(wide); i++) {
		skv_format f = wide[i];
		for (size_t k = 0; k < COUNT(fns); k++) {
			uint64_t seed = UINT64_C(0xfa17f000) + 16 * i + k;
			long not_rn = 0;
			for (long j = 0; j < n; j++) {
				double x = fn_input(&seed, f, fns[k].fn);
				int t;
				double rn = ref_op1_mode(f, fns[k].ref, x, MPFR_RNDN, &t);
				double other = t == 0 ? rn : neighbour(f, rn, t < 0 ? 1 : -1);
				double got = fns[k].skv(f, x);

				if (!ref_same(got, rn) && !ref_same(got, other) && ++nfail <= MAX_REPORTS)
					print_error("%s:%d: %s %s(%a): got %a, want %a or %a\n", __FILE__, __LINE__,
						    skv_format_name(f), fns[k].name, x, got, rn, other);
				not_rn += !ref_same(got, rn);
			}
			print_message("%s %-5s: %ld random inputs faithful, %ld not correctly rounded\n",
				      skv_format_name(f), fns[k].name, n, not_rn);
		}
	}
	assert_int_equal(nfail, 0);
}

/*
 * fp32 and tf32 are correctly rounded: seeded random inputs bit for bit
 * against MPFR, and inputs whose exact value lies next to a midpoint of the
 * format (precision p), where a libm result rounded once can go the wrong
 * way: exp(x) = 1 + x + x^2/2 + ... with x an odd multiple of 2^-p sits
 * x^2/2 above the midpoint 1 + x; log1p and expm1 of tiny x sit x^2/2 from
 * x; log of 1 + x likewise. Each is also run through skv_fn_finish_i with
 * the libm result moved 48 ulps either way.
 */
static void check_wide_correct(skv_format f)
{
	const long n = 100000;
	const double q = ldexp(1.0, -skv_format_precision(f));
	long nfail = 0, slow = 0;
	for (size_t k = 0; k < COUNT(fns); k++) {
		uint64_t seed = UINT64_C(0xc0ffee00) + k;
		for (long j = 0; j < n + 2 * 4096; j++) {
			double x;
			if (j < n) {
				x = fn_input(&seed, f, fns[k].fn);
			} else {
				/* near a midpoint: x = (2i + 1) 2^-p (exp, expm1, log1p), 1 + x (log, log2), or an
				 * odd multiple of 2^-(p+16) (exp2: 2^x = 1 + x ln 2 + ...) */
				long i = (j - n) / 2;
				double t = (double)(2 * i + 1);
				int neg = (j - n) % 2;
				switch (fns[k].fn) {
				case SKV_FN_LOG:
				case SKV_FN_LOG2: x = ref_round(f, 1.0 + (neg ? -1 : 1) * t * q); break;
				case SKV_FN_EXP2: x = ref_round(f, (neg ? -1 : 1) * t * q * 0x1p-16); break;
				default: x = ref_round(f, (neg ? -1 : 1) * t * q); break;
				}
			}
			double want = ref_op1(f, fns[k].ref, x);
			double got = fns[k].skv(f, x);
			if (!ref_same(got, want) && ++nfail <= MAX_REPORTS)
				print_error("%s:%d: %s %s(%a): got %a, want %a\n", __FILE__, __LINE__, skv_format_name(f),
					    fns[k].name, x, got, want);
			/* the same through a libm 48 ulps off */
			double y = fns[k].libm(x);
			for (int dir = -1; dir <= 1; dir += 2) {
				double yp = y;
				for (int u = 0; u < 48 && isfinite(yp) && yp != 0; u++)
					yp = nextafter(yp, dir * INFINITY);
				double g2 = skv_fn_finish_i(f, fns[k].fn, x, yp);
				slow += !ref_same(skv_round(f, yp), g2);
				if (!ref_same(g2, want) && ++nfail <= MAX_REPORTS)
					print_error("%s:%d: %s %s(%a) from y = %a: got %a, want %a\n", __FILE__, __LINE__,
						    skv_format_name(f), fns[k].name, x, yp, g2, want);
			}
		}
	}
	print_message("%s: correctly rounded on all inputs; the margin check corrected a libm 48 ulps off %ld "
		      "times\n", skv_format_name(f), slow);
	assert_true(slow > 0); /* the near-midpoint inputs do reach the slow path */
	assert_int_equal(nfail, 0);
}

static void test_elementary_wide_correct(void **state)
{
	(void)state;
	for (size_t w = 0; w < COUNT(wide_cr_formats); w++)
		check_wide_correct(wide_cr_formats[w]);
}

/* ----------------------------------------------- the basic operations */

typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FMA, OP_SQRT } op_id;
static const char *const op_names[] = {"add", "sub", "mul", "div", "fma", "sqrt"};
enum { NOPS = sizeof op_names / sizeof op_names[0] };

static double skv_op(op_id op, skv_format f, double a, double b, double c)
{
	switch (op) {
	case OP_ADD: return skv_add(f, a, b);
	case OP_SUB: return skv_sub(f, a, b);
	case OP_MUL: return skv_mul(f, a, b);
	case OP_DIV: return skv_div(f, a, b);
	case OP_FMA: return skv_fma(f, a, b, c);
	default: return skv_sqrt(f, a);
	}
}

static double ref_op(op_id op, skv_format f, double a, double b, double c)
{
	switch (op) {
	case OP_ADD: return ref_op2(f, mpfr_add, a, b);
	case OP_SUB: return ref_op2(f, mpfr_sub, a, b);
	case OP_MUL: return ref_op2(f, mpfr_mul, a, b);
	case OP_DIV: return ref_op2(f, mpfr_div, a, b);
	case OP_FMA: return ref_fma(f, a, b, c);
	default: return ref_op1(f, mpfr_sqrt, a);
	}
}

static void check_op(long *nfail, op_id op, skv_format f, double a, double b, double c, int line)
{
	double got = skv_op(op, f, a, b, c), want = ref_op(op, f, a, b, c);

	if (!ref_same(got, want) && ++*nfail <= MAX_REPORTS)
		print_error("%s:%d: %s %s(%a, %a, %a): got %a, want %a\n", __FILE__, line, skv_format_name(f),
			    op_names[op], a, b, c, got, want);
}

/*
 * Operands for one case. Modes (equally likely):
 *  0: both over the whole range, subnormals included (overflow, underflow)
 *  1: both in [2^-4, 2^5) in magnitude (the ordinary case)
 *  2: b within a few ulps of a, same binade, sign chosen so that add and
 *     sub cancel (exact and subnormal differences; quotients near 1)
 *  3: a near the subnormal range, b moderate (subnormal products/quotients)
 *  4: a near the top, b moderate or also near the top (overflow)
 * c for fma: minus the rounded product (massive cancellation: the result is
 * the product's rounding error), or of the product's magnitude, or random.
 */
static void operands(uint64_t *s, skv_format f, op_id op, double *a, double *b, double *c)
{
	const int p = skv_format_precision(f), emin = skv_format_emin(f), emax = skv_format_emax(f);
	const int esub = e_sub(f);
	unsigned mode = (unsigned)(splitmix64(s) % 5);

	switch (mode) {
	case 0:
		*a = rand_value(s, f, esub, emax);
		*b = rand_value(s, f, esub, emax);
		break;
	case 1:
		*a = rand_value(s, f, -4, 4);
		*b = rand_value(s, f, -4, 4);
		break;
	case 2: {
		int e = rand_int(s, esub, emax);
		double ulp = ldexp(1.0, (e < emin ? emin : e) - p + 1);
		double step = (double)rand_int(s, -3, 3) * ulp;
		*a = rand_value_e(s, f, e, (int)(splitmix64(s) & 1));
		*b = *a + step; /* exact (small integers times ulp) */
		/* Below 2^(e+1) every multiple of ulp is a value of f; above,
		 * only the even ones, so keep b inside. */
		if (fabs(*b) >= ldexp(1.0, e + 1))
			*b = *a;
		if (op == OP_ADD)
			*b = -*b;
		break;
	}
	case 3:
		*a = rand_value(s, f, esub, emin + 2);
		*b = rand_value(s, f, -3, 3);
		if (op == OP_MUL && (splitmix64(s) & 1))
			*b = rand_value(s, f, -(p + 2), -1); /* push further down */
		break;
	default:
		*a = rand_value(s, f, emax - 2, emax);
		*b = (splitmix64(s) & 1) ? rand_value(s, f, -2, 4) : rand_value(s, f, emax - 1, emax);
		break;
	}
	if (op == OP_SQRT && (splitmix64(s) % 8) != 0)
		*a = fabs(*a); /* mostly in the domain */
	*c = 0;
	if (op == OP_FMA) {
		unsigned cm = (unsigned)(splitmix64(s) % 3);
		double prod = ref_op2(f, mpfr_mul, *a, *b);
		if (cm == 0 && isfinite(prod))
			*c = -prod;
		else if (cm == 1 && isfinite(prod) && prod != 0)
			*c = rand_value(s, f, ilogb(prod) - p - 2 < esub ? esub : ilogb(prod) - p - 2,
					ilogb(prod) + 1 > emax ? emax : ilogb(prod) + 1);
		else
			*c = rand_value(s, f, esub, emax);
	}
}

static void test_basic_ops_random(void **state)
{
	const long n = 100000;
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(all_formats); i++) {
		skv_format f = all_formats[i];
		for (int op = 0; op < NOPS; op++) {
			uint64_t seed = UINT64_C(0xa417000) + 16 * i + (uint64_t)op;
			for (long j = 0; j < n; j++) {
				double a, b, c;
				operands(&seed, f, (op_id)op, &a, &b, &c);
				check_op(&nfail, (op_id)op, f, a, b, c, __LINE__);
			}
		}
	}
	assert_int_equal(nfail, 0);
}

/*
 * Formats of at most 8 bits: add, sub, mul and div on every pair of
 * patterns and sqrt on every pattern (NaN, infinities and zeros included),
 * and fma on every pair with three addends each: minus the referee's
 * rounded product (the result is then the product's rounding error, or
 * exact cancellation), a value near the product's magnitude, and any value.
 */
static void test_basic_ops_exhaustive(void **state)
{
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(tiny_formats); i++) {
		const skv_format f = tiny_formats[i];
		const uint64_t npat = ref_npatterns(ref_fmt_of(f));
		uint64_t seed = UINT64_C(0xe4a3) + (uint64_t)f;
		for (uint64_t ia = 0; ia < npat; ia++) {
			const double a = ref_decode(f, ia);
			check_op(&nfail, OP_SQRT, f, a, 0, 0, __LINE__);
			for (uint64_t ib = 0; ib < npat; ib++) {
				const double b = ref_decode(f, ib), prod = ref_op2(f, mpfr_mul, a, b);
				const double near = ref_decode(f, (ib ^ ia) & (npat - 1)) * ldexp(1.0, ilogb(prod) / 2);
				const double cs[] = {isfinite(prod) ? -prod : 0.0, isfinite(near) ? ref_round(f, near) : 1.0,
						     ref_decode(f, splitmix64(&seed) & (npat - 1))};
				for (int op = OP_ADD; op <= OP_DIV; op++)
					check_op(&nfail, (op_id)op, f, a, b, 0, __LINE__);
				for (size_t c = 0; c < COUNT(cs); c++)
					check_op(&nfail, OP_FMA, f, a, b, cs[c], __LINE__);
			}
		}
	}
	assert_int_equal(nfail, 0);
}

/* Special operands: every op on every pair from a list of zeros,
 * infinities, NaN, extremes and ones, in every format. */
static void test_basic_ops_special(void **state)
{
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(all_formats); i++) {
		skv_format f = all_formats[i];
		const double sub = ldexp(1.0, e_sub(f)), mx = skv_format_max(f);
		const double v[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, sub, -sub, mx, -mx, 2.0, 0.5};
		for (size_t x = 0; x < COUNT(v); x++)
			for (size_t y = 0; y < COUNT(v); y++)
				for (int op = 0; op < NOPS; op++)
					for (size_t z = 0; z < (op == OP_FMA ? COUNT(v) : 1); z++)
						check_op(&nfail, (op_id)op, f, v[x], v[y], v[z], __LINE__);
	}
	assert_int_equal(nfail, 0);
}

/* The inline versions are the public ones (same code path), and a bad format
 * gives NaN everywhere, including the slow path. */
static void test_inline_and_bad_format(void **state)
{
	const skv_format bad = (skv_format)SKV_NFORMATS;
	uint64_t seed = 4;
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(all_formats); i++) {
		skv_format f = all_formats[i];
		for (int j = 0; j < 1000; j++) {
			double a = rand_value(&seed, f, -8, 8), b = rand_value(&seed, f, -8, 8);
			if (!ref_same(skv_add_i(f, a, b), skv_add(f, a, b)) || !ref_same(skv_mul_i(f, a, b), skv_mul(f, a, b)) ||
			    !ref_same(skv_fma_i(f, a, b, a), skv_fma(f, a, b, a)) ||
			    !ref_same(skv_exp_i(f, a), skv_exp(f, a)) || !ref_same(skv_log_i(f, b), skv_log(f, b)))
				if (++nfail <= MAX_REPORTS)
					print_error("%s:%d: %s inline/public differ at %a, %a\n", __FILE__, __LINE__,
						    skv_format_name(f), a, b);
		}
	}
	assert_int_equal(nfail, 0);
	assert_true(isnan(skv_add(bad, 1, 2)));
	assert_true(isnan(skv_sub(bad, 1, 2)));
	assert_true(isnan(skv_mul(bad, 1, 2)));
	assert_true(isnan(skv_div(bad, 1, 2)));
	assert_true(isnan(skv_fma(bad, 1, 2, 3)));
	assert_true(isnan(skv_sqrt(bad, 4)));
	for (size_t k = 0; k < COUNT(fns); k++) {
		assert_true(isnan(fns[k].skv(bad, 0.5)));
		assert_true(isnan(skv_fn_hard(bad, fns[k].fn, 0.5)));
		assert_true(isnan(skv_fn_hard(SKV_FP64, fns[k].fn, 0.5)));
		/* the slow path alone is correctly rounded in fp32 and tf32 too */
		for (size_t w = 0; w < COUNT(wide_cr_formats); w++) {
			const skv_format f = wide_cr_formats[w];
			uint64_t seed = UINT64_C(0x5109) + k;
			for (int j = 0; j < 2000; j++) {
				double x = fn_input(&seed, f, fns[k].fn);
				double want = ref_op1(f, fns[k].ref, x), got = skv_fn_hard(f, fns[k].fn, x);
				if (!ref_same(got, want))
					fail_msg("%s:%d: %s slow path %s(%a) = %a, want %a", __FILE__, __LINE__,
						 skv_format_name(f), fns[k].name, x, got, want);
			}
		}
	}
	assert_true(isnan(skv_fn_hard(SKV_FP16, (skv_fn)SKV_NFNS, 0.5)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elementary_exhaustive),
		cmocka_unit_test(test_elementary_faithful),
		cmocka_unit_test(test_elementary_wide_correct),
		cmocka_unit_test(test_basic_ops_random),
		cmocka_unit_test(test_basic_ops_exhaustive),
		cmocka_unit_test(test_basic_ops_special),
		cmocka_unit_test(test_inline_and_bad_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
