/* test_mma_ref.c - the tensor-core block FMA against an MPFR evaluation of its definition; every FP8 pair. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <string.h>

#include "ref_mpfr.h"
#include "expect.h"
#include "skv.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------ the MPFR referee */

/*
 * The model's definition evaluated in MPFR, independently of lib/mma.c: the
 * exact products; each addend x aligned as trunc(x / g) g with g = 2^(E -
 * 23 - neab) (or the sticky form); the exact sum; one rounding to out_frac
 * + 1 bits with gradual underflow by mpfr_rint / mpfr_prec_round in the
 * unit's mode; then GEMM.m's chaining and its rule for NaN and infinities.
 */
enum { RP = 192 };

static mpfr_rnd_t rnd_of(skv_mma_round m)
{
	return m == SKV_MMA_RNE ? MPFR_RNDN : m == SKV_MMA_RD ? MPFR_RNDD : m == SKV_MMA_RU ? MPFR_RNDU : MPFR_RNDZ;
}

/* floor(log2 |x|) of a nonzero double (the C library's ilogb). */
static long ref_log2(double x) { return ilogb(x); }

static double ref_final(const skv_mma_unit *u, mpfr_t v, skv_mma_round mode)
{
	if (mpfr_zero_p(v))
		return 0.0;
	const int frac = u->par.out_frac, emin = skv_format_emin(u->output), emax = skv_format_emax(u->output);
	mpfr_t r;
	mpfr_init2(r, RP);
	mpfr_set(r, v, MPFR_RNDN);
	if ((long)mpfr_get_exp(v) - 1 < emin) {
		mpfr_div_2si(r, r, emin - frac, MPFR_RNDN);
		mpfr_rint(r, r, rnd_of(mode));
		mpfr_mul_2si(r, r, emin - frac, MPFR_RNDN);
	} else {
		mpfr_prec_round(r, frac + 1, rnd_of(mode));
	}
	double d = mpfr_get_d(r, MPFR_RNDN);
	mpfr_clear(r);
	if (fabs(d) >= ldexp(1.0, emax + 1))
		return mpfr_sgn(v) < 0 ? -INFINITY : INFINITY;
	if (!u->par.out_subnormals && fabs(d) < ldexp(1.0, emin))
		return 0.0;
	return d;
}

typedef struct {
	double p;
	long e;
} rterm;

/* The aligned addend of x (exponent ex) in units of 2^G, added to acc. */
static void ref_add_aligned(mpfr_t acc, double x, long ex, long E, long G, const skv_mma_params *par)
{
	mpfr_t t;
	mpfr_init2(t, RP);
	mpfr_set_d(t, fabs(x), MPFR_RNDN);
	if (!par->sticky) {
		mpfr_div_2si(t, t, G, MPFR_RNDN);
		mpfr_trunc(t, t);
	} else { /* X = floor(|x| 2^(23+neab-ex)); 2 floor(X / 2^s) + (X mod 2^min(s, 24+neab) != 0) */
		long s = E - ex, k = s < 24 + par->neab ? s : 24 + par->neab;
		mpfr_t X, q;
		mpfr_inits2(RP, X, q, (mpfr_ptr)0);
		mpfr_mul_2si(X, t, 23 + par->neab - ex, MPFR_RNDN);
		mpfr_floor(X, X);
		mpfr_div_2si(q, X, k, MPFR_RNDN);
		mpfr_floor(q, q);
		mpfr_mul_2si(q, q, k, MPFR_RNDN);
		int lost = mpfr_cmp(q, X) != 0;
		mpfr_div_2si(t, X, s, MPFR_RNDN);
		mpfr_floor(t, t);
		mpfr_mul_2ui(t, t, 1, MPFR_RNDN);
		mpfr_add_ui(t, t, (unsigned long)lost, MPFR_RNDN);
		mpfr_clears(X, q, (mpfr_ptr)0);
	}
	if (x < 0)
		mpfr_neg(t, t, MPFR_RNDN);
	mpfr_add(acc, acc, t, MPFR_RNDN); /* exact: integers far below 2^RP */
	mpfr_clear(t);
}

/* One global alignment over terms[0..m) and c (joins when nonzero). */
static double ref_aligned(const skv_mma_unit *u, const rterm *t, size_t m, double c)
{
	if (m == 0 && c == 0)
		return 0.0;
	long E = LONG_MIN, ec = 0;
	for (size_t j = 0; j < m; j++)
		E = t[j].e > E ? t[j].e : E;
	if (c != 0) {
		ec = ref_log2(c) < -126 ? -126 : ref_log2(c);
		E = ec > E ? ec : E;
	}
	E = E < u->par.min_exp ? u->par.min_exp : E;
	long G = E - 23 - u->par.neab - u->par.sticky;
	mpfr_t acc;
	mpfr_init2(acc, RP);
	mpfr_set_zero(acc, 1);
	for (size_t j = 0; j < m; j++)
		ref_add_aligned(acc, t[j].p, t[j].e, E, G, &u->par);
	if (c != 0)
		ref_add_aligned(acc, c, ec, E, G, &u->par);
	mpfr_mul_2si(acc, acc, G, MPFR_RNDN);
	double d = ref_final(u, acc, u->par.final_round);
	mpfr_clear(acc);
	return d;
}

/* x >> s on a magnitude, rounded as AddTwoNonNormSums rounds (sign neg). */
static void ref_shift(mpfr_t x, long s, skv_mma_round m, int neg)
{
	mpfr_div_2si(x, x, s, MPFR_RNDN);
	if (m == SKV_MMA_RNE)
		mpfr_rint(x, x, MPFR_RNDN);
	else if (m == SKV_MMA_RD)
		neg ? mpfr_ceil(x, x) : mpfr_floor(x, x);
	else if (m == SKV_MMA_RU)
		neg ? mpfr_floor(x, x) : mpfr_ceil(x, x);
	else
		mpfr_trunc(x, x);
}

/* late_partial_sum: products aligned alone, c as round-half-away(|c| 2^(23
 * + neab - e_c)), the smaller side shifted (the products with 7 more bits). */
static double ref_late(const skv_mma_unit *u, const rterm *t, size_t m, double c)
{
	long neab = u->par.neab, E1 = LONG_MIN, E2;
	for (size_t j = 0; j < m; j++)
		E1 = t[j].e > E1 ? t[j].e : E1;
	E1 = E1 < u->par.min_exp ? u->par.min_exp : E1;
	mpfr_t s1, s2, x;
	mpfr_inits2(RP, s1, s2, x, (mpfr_ptr)0);
	mpfr_set_zero(s1, 1);
	for (size_t j = 0; j < m; j++) {
		mpfr_set_d(x, t[j].p, MPFR_RNDN);
		mpfr_div_2si(x, x, E1 - 23 - neab, MPFR_RNDN);
		mpfr_trunc(x, x);
		mpfr_add(s1, s1, x, MPFR_RNDN);
	}
	int neg1 = mpfr_sgn(s1) < 0, neg2 = c < 0;
	mpfr_abs(s1, s1, MPFR_RNDN);
	if (c != 0) {
		E2 = ref_log2(c) < -126 ? -126 : ref_log2(c);
		mpfr_set_d(s2, fabs(c), MPFR_RNDN);
		mpfr_mul_2si(s2, s2, 23 + neab - E2, MPFR_RNDN);
		mpfr_round(s2, s2);
	} else {
		E2 = u->par.c_min_exp ? -126 : -1024;
		mpfr_set_zero(s2, 1);
	}
	long E = E1 > E2 ? E1 : E2;
	if (E1 < E) {
		neab += 7;
		mpfr_mul_2ui(s1, s1, 7, MPFR_RNDN);
		mpfr_mul_2ui(s2, s2, 7, MPFR_RNDN);
		ref_shift(s1, E - E1, u->par.align_round, neg1);
	} else if (E2 < E) {
		ref_shift(s2, E - E2, u->par.align_round, neg2);
	}
	if (neg1)
		mpfr_neg(s1, s1, MPFR_RNDN);
	if (neg2)
		mpfr_neg(s2, s2, MPFR_RNDN);
	mpfr_add(s1, s1, s2, MPFR_RNDN);
	mpfr_mul_2si(s1, s1, E - 23 - neab, MPFR_RNDN);
	double d = ref_final(u, s1, u->par.final_round);
	mpfr_clears(s1, s2, x, (mpfr_ptr)0);
	return d;
}

/* The inputs' parameters, typed in from the OCP FP8 and IEEE definitions. */
static const struct {
	int p, emin, emax;
	double max;
} fmt_tab[] = {{11, -14, 15, 65504.0},
	       {8, -126, 127, 0x1.fep127},
	       {11, -126, 127, 0x1.ffcp127},
	       {4, -6, 8, 448.0},
	       {3, -14, 15, 57344.0}};

/* The row of input f in fmt_tab (the saturating variants hold the same values). */
static int row(skv_format f)
{
	return f == SKV_FP16 ? 0 : f == SKV_BF16 ? 1 : f == SKV_TF32 ? 2 : (f == SKV_E4M3 || f == SKV_E4M3_SAT) ? 3 : 4;
}

static int is_value(skv_format f, double x) { return isnan(x) || ref_round(f, x) == x; }

static const skv_format inputs[] = {SKV_FP16, SKV_BF16, SKV_TF32, SKV_E4M3, SKV_E5M2};

static double ref_block(const skv_mma_unit *u, const double *a, const double *b, size_t len, double c)
{
	rterm t[2][64];
	size_t m[2] = {0, 0};
	const long emin = fmt_tab[row(u->input)].emin;
	for (size_t i = 0; i < len; i++) {
		double x = a[i], y = b[i];
		if (!u->par.in_subnormals) {
			x = fabs(x) < ldexp(1.0, (int)emin) ? 0.0 : x;
			y = fabs(y) < ldexp(1.0, (int)emin) ? 0.0 : y;
		}
		double p = x * y; /* exact: at most 22 significant bits */
		if (p == 0)
			continue;
		long e = (ref_log2(x) < emin ? emin : ref_log2(x)) + (ref_log2(y) < emin ? emin : ref_log2(y));
		if (!u->par.denorm_products && fabs(p) >= ldexp(1.0, (int)e + 1))
			e++;
		int l = u->par.halves && (i & 2);
		t[l][m[l]++] = (rterm){p, e};
	}
	double c0 = u->par.cjoin == SKV_MMA_C_AFTER ? 0.0 : c, r;
	if (u->par.cjoin == SKV_MMA_C_LATE)
		return ref_late(u, t[0], m[0], c);
	r = ref_aligned(u, t[0], m[0], c0);
	if (u->par.halves && isfinite(r))
		r = ref_aligned(u, t[1], m[1], r);
	if (u->par.cjoin == SKV_MMA_C_AFTER) {
		r = ref_op2(u->output, mpfr_add, c, r);
		if (!u->par.out_subnormals && fabs(r) < ldexp(1.0, skv_format_emin(u->output)))
			r = 0.0;
	}
	return r;
}

static double ref_dot(const skv_mma_unit *u, const double *a, const double *b, size_t K, double c)
{
	if (u->gpu == SKV_GPU_IEEE) {
		for (size_t i = 0; i < K; i++)
			c = ref_fma(u->output, a[i], b[i], c);
		return c;
	}
	const double lim = ldexp(1.0, skv_format_emax(u->output) + 1);
	int nan = isnan(c), pos = c == INFINITY, neg = c == -INFINITY;
	for (size_t i = 0; i < K; i++) {
		double p = a[i] * b[i];
		nan |= isnan(p);
		if (u->par.product_limit && fabs(p) >= lim && !isnan(p))
			p = p > 0 ? INFINITY : -INFINITY;
		pos |= p == INFINITY;
		neg |= p == -INFINITY;
	}
	if (nan || (pos && neg))
		return NAN;
	if (pos || neg)
		return pos ? INFINITY : -INFINITY;
	if (!u->par.out_subnormals && fabs(c) < ldexp(1.0, skv_format_emin(u->output)))
		c = 0.0;
	for (size_t k0 = 0; k0 < K; k0 += u->par.n)
		if (isfinite(c))
			c = ref_block(u, a + k0, b + k0, K - k0 < u->par.n ? K - k0 : u->par.n, c);
	return c;
}

/* ------------------------------------------------------ generators */

static double unif(uint64_t *s) { return (double)(splitmix64(s) >> 11) * 0x1p-53; }
static long irange(uint64_t *s, long lo, long hi) { return lo + (long)(splitmix64(s) % (uint64_t)(hi - lo + 1)); }

/* A value of input f: exponent in [lo, hi] (within the format), random
 * significand and sign, put on the subnormal grid below emin. */
static double gen_in(skv_format fm, uint64_t *s, long lo, long hi)
{
	const int f = row(fm), p = fmt_tab[f].p, emin = fmt_tab[f].emin;
	lo = lo < emin - p + 1 ? emin - p + 1 : lo > fmt_tab[f].emax ? fmt_tab[f].emax : lo;
	hi = hi > fmt_tab[f].emax ? fmt_tab[f].emax : hi < lo ? lo : hi;
	long e = irange(s, lo, hi);
	double x = ldexp((double)((UINT64_C(1) << (p - 1)) | (splitmix64(s) & ((UINT64_C(1) << (p - 1)) - 1))),
			 (int)e - p + 1);
	if (e < emin)
		x = trunc(x / ldexp(1.0, emin - p + 1)) * ldexp(1.0, emin - p + 1);
	x = x > fmt_tab[f].max ? fmt_tab[f].max : x;
	return (splitmix64(s) & 1) ? -x : x;
}

/* A value of the output format with exponent about [lo, hi]. */
static double gen_out(skv_format f, uint64_t *s, long lo, long hi)
{
	hi = hi > skv_format_emax(f) ? skv_format_emax(f) : hi;
	double x = ref_round(f, ldexp(1.0 + unif(s), (int)irange(s, lo, hi < lo ? lo : hi)));
	x = isinf(x) ? skv_format_max(f) : x;
	return (splitmix64(s) & 1) ? -x : x;
}

/* Shapes of test vectors: the edge cases of the block FMA. */
enum { WIDE, NARROW, CANCEL, C_DOMINATES, ZEROS, SUBNORMAL, OVERFLOW, UNDERFLOW, NSHAPES };

/* One vector (length returned) and its c for unit u, of shape sh. */
static size_t gen_case(const skv_mma_unit *u, uint64_t *s, int sh, double *a, double *b, double *c)
{
	const int f = row(u->input), p = fmt_tab[f].p, emin = fmt_tab[f].emin, emax = fmt_tab[f].emax;
	const int omin = skv_format_emin(u->output), omax = skv_format_emax(u->output);
	const unsigned n = u->gpu == SKV_GPU_IEEE ? 16 : u->par.n;
	size_t K = (size_t)irange(s, 1, 3 * (long)n);
	long lo = -3, hi = 3, clo = -3, chi = 3;
	double pz = 0.1;
	switch (sh) {
	case WIDE: lo = emin - p + 1, hi = emax, clo = omin - 23, chi = omax; break;
	case C_DOMINATES: lo = -14, hi = -6, clo = chi = 14; break;
	case ZEROS: pz = 0.75; break;
	case SUBNORMAL: lo = emin - p + 1, hi = emin, clo = omin - 24, chi = omin + 2; break;
	case OVERFLOW: lo = omax / 2 - 1, hi = omax / 2 + 1, clo = omax - 2, chi = omax; break;
	case UNDERFLOW: lo = hi = (omin - 12) / 2, clo = omin - 20, chi = omin; break;
	default: break;
	}
	for (size_t i = 0; i < K; i++) {
		a[i] = unif(s) < pz ? ((splitmix64(s) & 1) ? -0.0 : 0.0) : gen_in(u->input, s, lo, hi);
		b[i] = unif(s) < pz ? 0.0 : gen_in(u->input, s, lo, hi);
		if (sh == CANCEL && (i & 1)) { /* a_i b_i = -a_{i-1} b_{i-1}, or one quantum of b off */
			a[i] = -a[i - 1];
			b[i] = b[i - 1];
			if (b[i] != 0 && unif(s) < 0.5) {
				int e = ilogb(b[i]) < emin ? emin : ilogb(b[i]);
				double nb = b[i] + ldexp(1.0, e - p + 1);
				b[i] = fabs(nb) <= fmt_tab[f].max ? nb : b[i];
			}
		}
	}
	*c = unif(s) < 0.2 ? ((splitmix64(s) & 1) ? -0.0 : 0.0) : gen_out(u->output, s, clo, chi);
	return K;
}

/* Compares unit u with the referee on `count` vectors of every shape. */
static long check_unit(const skv_mma_unit *u, uint64_t seed, int count, const char *what)
{
	double a[192], b[192], c;
	long nfail = 0;
	for (int t = 0; t < count; t++) {
		size_t K = gen_case(u, &seed, t % NSHAPES, a, b, &c), i;
		for (i = 0; i < K; i++)
			if (!is_value(u->input, a[i]) || !is_value(u->input, b[i]))
				fail_msg("%s:%d: generator gave a non-value %a", __FILE__, __LINE__, a[i]);
		double got, want = ref_dot(u, a, b, K, c);
		assert_int_equal(skv_mma_dot(&got, u, a, 1, b, 1, K, c), SKV_OK);
		if (ref_same(got, want))
			continue;
		if (++nfail <= MAX_REPORTS) {
			print_error("%s:%d: %s shape %d: K = %zu, c = %a: got %a, want %a\n", __FILE__, __LINE__, what,
				    t % NSHAPES, K, c, got, want);
			for (i = 0; i < K && i < 64; i++)
				print_error("  a[%zu] = %a, b[%zu] = %a\n", i, a[i], i, b[i]);
		}
	}
	return nfail;
}

static void test_named_units(void **state)
{
	(void)state;
	long nfail = 0, units = 0;
	const skv_format outs[] = {SKV_FP32, SKV_FP16};
	for (int g = 0; g < SKV_NGPUS; g++)
		for (int in = 0; in < (int)COUNT(inputs); in++)
			for (size_t o = 0; o < COUNT(outs); o++) {
				skv_mma_unit u;
				char what[64];
				if (skv_mma_unit_init(&u, (skv_gpu)g, inputs[in], outs[o]) != SKV_OK)
					continue;
				snprintf(what, sizeof what, "%s %s -> %s", skv_gpu_name((skv_gpu)g),
					 skv_format_name(inputs[in]), skv_format_name(outs[o]));
				nfail += check_unit(&u, (uint64_t)(g * 100 + in * 10 + (int)o), 320, what);
				units++;
			}
	assert_int_equal(units, 10 + 2 + 4 + 8 + 8 + 8); /* ieee, v100, a100, ada, h100, b200 */
	if (nfail)
		fail_msg("%s:%d: %ld vectors differ from the referee", __FILE__, __LINE__, nfail);
}

/* The flags no NVIDIA unit sets, each against the referee. Fields: n,
 * halves, neab, sticky, final, align, out_frac, min_exp, c_min_exp, in_sub,
 * out_sub, denorm, product_limit, cjoin. */
#define RZ_ SKV_MMA_RZ
#define RN_ SKV_MMA_RNE
#define AL_ SKV_MMA_C_ALIGNED
#define LT_ SKV_MMA_C_LATE
static const struct {
	const char *what;
	skv_format in;
	skv_format out;
	skv_mma_params p;
} custom[] = {
	{"sticky", SKV_BF16, SKV_FP32, {8, 0, 1, 1, RZ_, RZ_, 23, -132, 0, 1, 1, 1, 0, AL_}},
	{"sticky neab -10", SKV_E4M3, SKV_FP32, {16, 0, -10, 1, RZ_, RZ_, 13, -132, 0, 1, 1, 1, 0, AL_}},
	{"sticky fp16 out", SKV_FP16, SKV_FP16, {8, 0, 2, 1, RN_, RZ_, 10, -20, 0, 1, 1, 1, 0, AL_}},
	{"late rz", SKV_FP16, SKV_FP32, {8, 0, 1, 0, RZ_, RZ_, 23, -132, 0, 1, 1, 1, 0, LT_}},
	{"late rne", SKV_FP16, SKV_FP32, {8, 0, 1, 0, RZ_, RN_, 23, -132, 0, 1, 1, 1, 0, LT_}},
	{"late rd", SKV_BF16, SKV_FP32, {8, 0, 1, 0, RN_, SKV_MMA_RD, 23, -132, 0, 1, 1, 1, 0, LT_}},
	{"late ru, c_min_exp", SKV_FP16, SKV_FP16, {4, 0, 0, 0, RN_, SKV_MMA_RU, 10, -20, 1, 1, 1, 1, 0, LT_}},
	{"late neab -10", SKV_E5M2, SKV_FP32, {16, 0, -10, 0, RZ_, RN_, 13, -132, 0, 1, 1, 1, 0, LT_}},
	{"ftz in", SKV_FP16, SKV_FP16, {8, 0, 1, 0, RN_, RZ_, 10, -20, 0, 0, 1, 1, 0, AL_}},
	{"ftz out", SKV_BF16, SKV_FP32, {8, 0, 1, 0, RZ_, RZ_, 23, -132, 0, 1, 0, 1, 0, AL_}},
	{"normalised products", SKV_TF32, SKV_FP32, {4, 0, 1, 0, RZ_, RZ_, 23, -132, 0, 1, 1, 0, 0, AL_}},
	{"product limit", SKV_BF16, SKV_FP32, {8, 0, 1, 0, RZ_, RZ_, 23, -132, 0, 1, 1, 1, 1, AL_}},
	{"final rd", SKV_BF16, SKV_FP32, {8, 0, 1, 0, SKV_MMA_RD, RZ_, 23, -132, 0, 1, 1, 1, 0, AL_}},
	{"final ru fp16", SKV_FP16, SKV_FP16, {8, 0, 1, 0, SKV_MMA_RU, RZ_, 10, -20, 0, 1, 1, 1, 0, AL_}},
	{"halves, c aligned", SKV_E5M2, SKV_FP32, {16, 1, 2, 0, RZ_, RZ_, 23, -133, 0, 1, 1, 1, 0, AL_}},
	{"n 1", SKV_FP16, SKV_FP32, {1, 0, 0, 0, RZ_, RZ_, 23, -132, 0, 1, 1, 1, 0, AL_}},
	{"n 64, neab 7", SKV_BF16, SKV_FP32, {64, 0, 7, 0, RN_, RZ_, 23, -132, 0, 1, 1, 1, 0, AL_}},
	{"min_exp 0, 10 bits", SKV_FP16, SKV_FP32, {8, 0, 1, 0, RZ_, RZ_, 10, 0, 0, 1, 1, 1, 0, AL_}},
};

static void test_custom_units(void **state)
{
	(void)state;
	long nfail = 0;
	for (size_t i = 0; i < COUNT(custom); i++) {
		skv_mma_unit u;
		const skv_mma_params *p = &custom[i].p;
		if (skv_mma_unit_custom(&u, p, custom[i].in, custom[i].out) != SKV_OK)
			fail_msg("%s:%d: %s: parameters refused", __FILE__, __LINE__, custom[i].what);
		assert_int_equal(u.fast, !p->sticky && p->cjoin != LT_ && p->in_subnormals && p->denorm_products &&
						 !p->product_limit);
		nfail += check_unit(&u, 7000 + i, 320, custom[i].what);
	}
	if (nfail)
		fail_msg("%s:%d: %ld vectors differ from the referee", __FILE__, __LINE__, nfail);
}

/* Every pair of finite e4m3 or e5m2 values as a one-product dot, with c
 * zero, a dominated and a dominating value, for the FP8 units. */
static void test_fp8_exhaustive(void **state)
{
	(void)state;
	const struct {
		skv_gpu g;
		skv_format in;
		skv_format out;
	} units[] = {{SKV_GPU_H100, SKV_E4M3, SKV_FP32},
		     {SKV_GPU_ADA, SKV_E5M2, SKV_FP16},
		     {SKV_GPU_B200, SKV_E4M3, SKV_FP32},
		     {SKV_GPU_H100, SKV_E5M2, SKV_FP16}};
	const double cs[] = {0.0, -0x1.8p-1, 0x1.ffcp-3};
	double vals[256];
	long nfail = 0, n = 0;
	for (size_t k = 0; k < COUNT(units); k++) {
		skv_mma_unit u;
		assert_int_equal(skv_mma_unit_init(&u, units[k].g, units[k].in, units[k].out), SKV_OK);
		const int p = fmt_tab[row(units[k].in)].p, ebits = 7 - (p - 1), bias = (1 << (ebits - 1)) - 1;
		size_t nv = 0;
		for (unsigned bits = 0; bits < 256; bits++) { /* decoded from the OCP field layout */
			unsigned e = (bits >> (p - 1)) & ((1u << ebits) - 1), m = bits & ((1u << (p - 1)) - 1);
			double v = e ? ldexp(1.0 + ldexp(m, 1 - p), (int)e - bias) : ldexp(m, 2 - p - bias);
			if (is_value(units[k].in, v) && fabs(v) <= fmt_tab[row(units[k].in)].max)
				vals[nv++] = (bits & 0x80) ? -v : v;
		}
		assert_int_equal(nv, units[k].in == SKV_E4M3 ? 254 : 248);
		for (size_t i = 0; i < nv; i++)
			for (size_t j = 0; j < nv; j++)
				for (size_t ci = 0; ci < COUNT(cs); ci++) {
					double got, want = ref_dot(&u, &vals[i], &vals[j], 1, cs[ci]);
					assert_int_equal(skv_mma_dot(&got, &u, &vals[i], 1, &vals[j], 1, 1, cs[ci]),
							 SKV_OK);
					n++;
					if (!ref_same(got, want) && ++nfail <= MAX_REPORTS)
						print_error("%s:%d: %s: %a * %a + %a: got %a, want %a\n", __FILE__,
							    __LINE__, u.source, vals[i], vals[j], cs[ci], got, want);
				}
	}
	print_message("%ld one-product FP8 cases\n", n);
	if (nfail)
		fail_msg("%s:%d: %ld of %ld differ", __FILE__, __LINE__, nfail, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_units),
		cmocka_unit_test(test_custom_units),
		cmocka_unit_test(test_fp8_exhaustive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
