/* test_truth_fast.c - the certified fast truth against MPFR: tables, exp, hard cases, ISAs, threads. */
#include <float.h>
#include <inttypes.h>
#include <mpfr.h>

#include "testutil.h"
#include "truth_check.h"
#include "truth_internal.h"

enum { REF_PREC = 256, TAB_PREC = 400 };

/* ---------------------------------------------------------- tables */

/* |w 2^-127 - x| <= 2^-128 for the 128-bit word w = {hi, lo}. */
static void check_word(const char *what, int idx, const uint64_t w[2], mpfr_srcptr x)
{
	mpfr_t a, b;
	mpfr_inits2(TAB_PREC, a, b, (mpfr_ptr)0);
	mpfr_set_ui(a, (unsigned long)(w[0] >> 32), MPFR_RNDN);
	mpfr_mul_2ui(a, a, 32, MPFR_RNDN);
	mpfr_add_ui(a, a, (unsigned long)(w[0] & 0xffffffffu), MPFR_RNDN);
	mpfr_mul_2ui(a, a, 64, MPFR_RNDN);
	mpfr_set_ui(b, (unsigned long)(w[1] >> 32), MPFR_RNDN);
	mpfr_mul_2ui(b, b, 32, MPFR_RNDN);
	mpfr_add_ui(b, b, (unsigned long)(w[1] & 0xffffffffu), MPFR_RNDN);
	mpfr_add(a, a, b, MPFR_RNDN); /* exact: 128 bits */
	mpfr_div_2ui(a, a, 127, MPFR_RNDN);
	mpfr_sub(a, a, x, MPFR_RNDN);
	mpfr_mul_2ui(a, a, 128, MPFR_RNDN);
	const double e = fabs(mpfr_get_d(a, MPFR_RNDN)); /* in units of 2^-128 */
	if (!(e <= 1.0))
		fail_msg("%s:%d: %s[%d] = {0x%016" PRIx64 ", 0x%016" PRIx64 "} is %g 2^-128 off", __FILE__,
			 __LINE__, what, idx, w[0], w[1], e);
	mpfr_clears(a, b, (mpfr_ptr)0);
}

/* Every entry of lib/truth_exp.c's tables is its value rounded to 2^-128,
 * and ln 2 = l0 + l1 + l2 + dL with 42-bit l0, l1 and |dL| < 2^-144. */
static void test_exp_tables(void **state)
{
	(void)state;
	const skv_truth_exp_tables t = skv_truth_exp_tables_get();
	mpfr_t x, f;
	mpfr_inits2(TAB_PREC, x, f, (mpfr_ptr)0);
	for (int i = 0; i < t.n_e1; i++) {
		mpfr_set_si(x, t.e1_lo + i, MPFR_RNDN);
		mpfr_div_ui(x, x, 64, MPFR_RNDN);
		mpfr_exp(x, x, MPFR_RNDN);
		check_word("E1", i, t.e1[i], x);
	}
	for (int i = 0; i < t.n_e2; i++) {
		mpfr_set_si(x, i, MPFR_RNDN);
		mpfr_div_ui(x, x, 4096, MPFR_RNDN);
		mpfr_exp(x, x, MPFR_RNDN);
		check_word("E2", i, t.e2[i], x);
	}
	for (int k = 0; k < t.n_coef; k++) {
		mpfr_fac_ui(f, (unsigned long)k, MPFR_RNDN);
		mpfr_ui_div(x, 1, f, MPFR_RNDN);
		check_word("1/k!", k, t.coef[k], x);
	}
	for (int c = 0; c < 2; c++) {
		int e;
		const uint64_t m = (uint64_t)ldexp(frexp(t.ln2[c], &e), 53);
		CHECK_LE("ln 2 part: trailing zero bits", 11, __builtin_ctzll(m));
	}
	mpfr_const_log2(x, MPFR_RNDN);
	for (int c = 0; c < 3; c++)
		mpfr_sub_d(x, x, t.ln2[c], MPFR_RNDN);
	CHECK_LE("|ln 2 - l0 - l1 - l2|", fabs(mpfr_get_d(x, MPFR_RNDN)), 0x1p-144);
	mpfr_clears(x, f, (mpfr_ptr)0);
}

/* --------------------------------------------------------------- exp */

/* The bound of skv_truth_exp: m 2^(k-127) = exp(x + a) (1 + r), |a| <=
 * arg_err, |r| <= SKV_TRUTH_EXP_REL, over arguments spread across
 * [-700, 0.5] (every table entry and z up to 2^-12) with small parts; the
 * largest relative error seen is printed. Outside the domain: -1. */
static void test_exp_bound(void **state)
{
	(void)state;
	skv_rng r;
	skv_rng_seed(&r, 1234);
	mpfr_t x, y, e;
	mpfr_inits2(TAB_PREC, x, y, e, (mpfr_ptr)0);
	double worst = 0;
	for (int it = 0; it < 20000; it++) {
		double x0 = it < 3072 ? (it - 1536) / 4096.0 + 0x1.fffp-13 * skv_rng_uniform(&r)
				      : -700 * skv_rng_uniform(&r) + 0.5 * (it % 7 == 0);
		double rest[6];
		const int nr = it % 7;
		for (int i = 0; i < nr; i++)
			rest[i] = ldexp(skv_rng_uniform(&r) - 0.5, -6 - 10 * i);
		skv_texp t;
		if (skv_truth_exp(&t, x0, rest, nr) != 0)
			fail_msg("%s:%d: skv_truth_exp(%a, %d parts) declined", __FILE__, __LINE__, x0, nr);
		mpfr_set_d(x, x0, MPFR_RNDN);
		for (int i = 0; i < nr; i++)
			mpfr_add_d(x, x, rest[i], MPFR_RNDN);
		mpfr_exp(y, x, MPFR_RNDN);
		mpfr_set_ui(e, (unsigned long)(uint64_t)(t.m >> 64), MPFR_RNDN);
		mpfr_mul_2ui(e, e, 64, MPFR_RNDN);
		mpfr_add_ui(e, e, (unsigned long)(uint64_t)t.m, MPFR_RNDN);
		mpfr_mul_2si(e, e, t.k - 127, MPFR_RNDN);
		mpfr_div(e, e, y, MPFR_RNDN);
		mpfr_sub_ui(e, e, 1, MPFR_RNDN);
		const double rel = fabs(mpfr_get_d(e, MPFR_RNDN));
		const double bound = expm1(t.arg_err * (1 + 0x1p-20)) + SKV_TRUTH_EXP_REL * (1 + 0x1p-20);
		if (!(rel <= bound))
			fail_msg("%s:%d: exp(%a + %d parts): relative error %a > bound %a", __FILE__, __LINE__, x0,
				 nr, rel, bound);
		worst = fmax(worst, rel);
	}
	print_message("# skv_truth_exp: largest relative error 2^%.2f (bound 2^%.2f plus arg_err)\n",
		      log2(worst), log2(SKV_TRUTH_EXP_REL));
	skv_texp t;
	const double big[1] = {0x1p-4};
	assert_int_equal(skv_truth_exp(&t, 701, NULL, 0), -1);
	assert_int_equal(skv_truth_exp(&t, 0, big, 1), -1);
	assert_int_equal(skv_truth_exp(&t, NAN, NULL, 0), -1);
	mpfr_clears(x, y, e, (mpfr_ptr)0);
}

/* ------------------------------------------------- against MPFR */

typedef struct {
	double err;      /* ||out - ref|| / ||ref|| */
	double lse_err;  /* |lse - ref| */
	double lse;      /* the lse (its high part) */
	int certified;   /* the fast path took it */
	skv_truth_cert cert;
} truth_check;

/* The public truth of keys [lo, hi) of row 0 against MPFR at ref_prec bits,
 * known to three doubles (so the comparison sees errors far below the
 * double-double's resolution): normwise within 2^-100, and when the fast
 * path certified it, within its certificate (err_norm for out, lse_err for
 * the lse), which it must then have returned bit for bit. */
static truth_check check_truth(const skv_problem *p, size_t lo, size_t hi, long ref_prec, const char *name)
{
	const size_t d = p->d;
	skv_dd *out = malloc(d * sizeof *out), *ref = malloc(d * sizeof *ref), *fo = malloc(d * sizeof *fo);
	double *ref3 = malloc(d * sizeof *ref3), rl3, den;
	skv_dd lse, rl, fl;
	truth_check c = {0};
	assert_true(out && ref && fo && ref3);
	CHECK_OK(skv_truth_range(out, &lse, p, 0, lo, hi, SKV_TRUTH_PREC));
	CHECK_OK(skv_truth_mpfr3(ref, ref3, &rl, &rl3, p, 0, lo, hi, ref_prec));
	const int st = skv_truth_fast(fo, &fl, &c.cert, p, 0, lo, hi, SKV_TRUTH_ISA_AUTO);
	assert_true(st == SKV_OK || st == SKV_TRUTH_DECLINED);
	c.certified = st == SKV_OK;
	c.lse = lse.hi;
	const double num = dd_norm_err3(&den, out, ref, ref3, d);
	c.err = num == 0 ? 0 : num / den;
	c.lse_err = dd_norm_err3(&den, &lse, &rl, &rl3, 1);
	if (!(c.err <= SKV_TRUTH_CERT_REL))
		fail_msg("%s:%d: %s: n %zu d %zu keys [%zu, %zu): normwise error %a > 2^-100 (fast path %s)",
			 __FILE__, __LINE__, name, p->n, d, lo, hi, c.err, c.certified ? "certified" : "declined");
	if (c.certified) {
		if (!(num <= c.cert.err_norm) || !(c.lse_err <= c.cert.lse_err))
			fail_msg("%s:%d: %s: n %zu d %zu: error %a (lse %a) beyond the certificate %a (lse %a)",
				 __FILE__, __LINE__, name, p->n, d, num, c.lse_err, c.cert.err_norm,
				 c.cert.lse_err);
		assert_memory_equal(fo, out, d * sizeof *out);
		assert_memory_equal(&fl, &lse, sizeof lse);
	}
	print_message("# %s: n %zu d %zu: %s (reason %d), error 2^%.1f, certified 2^%.1f, lse error %.3g "
		      "(certified %.3g), %zu cut\n",
		      name, hi - lo, d, c.certified ? "fast" : "MPFR", (int)c.cert.reason, log2(c.err),
		      c.certified ? log2(c.cert.err_norm / c.cert.out_norm) : 0.0, c.lse_err, c.cert.lse_err,
		      c.cert.ncut);
	free(out);
	free(ref);
	free(ref3);
	free(fo);
	return c;
}

/* The bounds lib/truth_fast.c states for problems without strong
 * cancellation: normwise 2^-105 relative (the double-double rounding of the
 * output dominates), and 2^-104 (1 + |L|) for the lse. */
static void check_stated(const truth_check *c)
{
	CHECK_LE("certified normwise relative bound", c->cert.err_norm / c->cert.out_norm, 0x1p-105);
	CHECK_LE("certified lse bound", c->cert.lse_err, 0x1p-104 * (1 + fabs(c->lse)));
}

/* Random problems of every format and distribution, small and odd shapes
 * (d % 4 != 0 exercises the vector tails), scores from a few nats to
 * hundreds: the fast path certifies every one. */
static void test_random(void **state)
{
	(void)state;
	const size_t shapes[][2] = {{1, 1}, {1, 9}, {3, 5}, {17, 7}, {200, 33}, {1500, 64}};
	const double sscales[] = {0.5, 3, 40};
	uint64_t seed = 500;
	for (int f = 0; f < SKV_NFORMATS; f++) {
		/* value formats with fp16's range at least (the narrower ones: test_formats.c) */
		if (skv_format_is_scale((skv_format)f) || skv_format_max((skv_format)f) < 65504)
			continue;
		for (int dist = 0; dist < SKV_NDISTS; dist++)
			for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++) {
				skv_problem p;
				const double ss = sscales[(f + dist + h) % 3];
				CHECK_OK(skv_problem_init(&p, 1, shapes[h][0], shapes[h][1], (skv_dist)dist, ss,
							  (skv_format)f, ++seed));
				char name[64];
				snprintf(name, sizeof name, "random fmt %d dist %d scale %g", f, dist, ss);
				const truth_check c = check_truth(&p, 0, p.n, REF_PREC, name);
				if (!c.certified)
					fail_msg("%s:%d: %s seed %" PRIu64 ": the fast path declined (%d)", __FILE__,
						 __LINE__, name, seed, (int)c.cert.reason);
				check_stated(&c);
				skv_problem_free(&p);
			}
	}
}

/* Softmax weights of row 0 in double (exp of the scores minus the top),
 * good to a few ulps: enough to build a cancellation. */
static void approx_softmax(double *pw, const skv_problem *p)
{
	double top = -INFINITY, s = 0;
	for (size_t j = 0; j < p->n; j++) {
		double a = 0;
		for (size_t i = 0; i < p->d; i++)
			a += p->q[i] * p->k[j * p->d + i];
		pw[j] = a * p->scale;
		top = fmax(top, pw[j]);
	}
	for (size_t j = 0; j < p->n; j++)
		s += pw[j] = exp(pw[j] - top);
	for (size_t j = 0; j < p->n; j++)
		pw[j] /= s;
}

/* Cancellation in V: v_ji -= f c_i with c_i = the double-precision out_i,
 * so values of both signs sum to (1 - f) out_i plus the rounding of c_i.
 * f = 1 - 2^-12 leaves ||A|| / ||out|| ~ 2^12, within the fast path's
 * reach; f = 1 leaves out ~ 2^-53 A, which it declines and MPFR serves (at
 * 256 bits; the referee runs at 1024). */
static void test_cancellation(void **state)
{
	(void)state;
	const double fs[] = {1 - 0x1p-12, 1 - 0x1p-20, 1};
	const int want_fast[] = {1, 0, 0};
	for (size_t c = 0; c < sizeof fs / sizeof fs[0]; c++) {
		skv_problem p;
		CHECK_OK(skv_problem_init(&p, 1, 700, 24, SKV_DIST_GAUSSIAN, 1.0, SKV_FP64, 90 + c));
		double *pw = malloc(p.n * sizeof *pw);
		assert_non_null(pw);
		approx_softmax(pw, &p);
		for (size_t i = 0; i < p.d; i++) {
			double ci = 0;
			for (size_t j = 0; j < p.n; j++)
				ci += pw[j] * p.v[j * p.d + i];
			for (size_t j = 0; j < p.n; j++)
				p.v[j * p.d + i] -= fs[c] * ci;
		}
		const truth_check t = check_truth(&p, 0, p.n, 1024, "cancellation in V");
		if (t.certified != want_fast[c])
			fail_msg("%s:%d: cancellation 1 - %a: fast path %s, expected otherwise", __FILE__, __LINE__,
				 1 - fs[c], t.certified ? "certified" : "declined");
		free(pw);
		skv_problem_free(&p);
	}
}

/* Scores spanning hundreds to thousands of nats (score_scale 300: most
 * weights below e^-600, cut), sinks at several sizes, and a large |q|
 * (q times 64 on top of score_scale 4): certified fast, within bounds. */
static void test_large_scores_and_sinks(void **state)
{
	(void)state;
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 1, 3000, 32, SKV_DIST_GAUSSIAN, 300, SKV_FP32, 7));
	truth_check t = check_truth(&p, 0, p.n, REF_PREC, "huge score range");
	assert_true(t.certified);
	check_stated(&t);
	CHECK_GE("keys cut (weights below e^-600)", (double)t.cert.ncut, 100);
	skv_problem_free(&p);
	const size_t ns[] = {2, 64, 5000};
	for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
		CHECK_OK(skv_problem_init(&p, 1, ns[c], 40, SKV_DIST_SINK, 1.0, SKV_BF16, 11 + c));
		t = check_truth(&p, 0, p.n, REF_PREC, "sink");
		assert_true(t.certified);
		check_stated(&t);
		t = check_truth(&p, 1, p.n, REF_PREC, "sink excluded");
		skv_problem_free(&p);
	}
	CHECK_OK(skv_problem_init(&p, 1, 2000, 16, SKV_DIST_RAMP, 4.0, SKV_FP64, 5));
	for (size_t i = 0; i < p.d; i++)
		p.q[i] *= 64;
	t = check_truth(&p, 0, p.n, REF_PREC, "large |q|");
	assert_true(t.certified);
	check_stated(&t);
	skv_problem_free(&p);
}

/* Extreme inputs: V near the overflow threshold (the sums overflow: the
 * fast path declines, MPFR answers), V subnormal, K and q subnormal, q near
 * overflow with tiny K, V spanning the whole exponent range. Each is within
 * 2^-100 of the 1024-bit referee whichever path answers. */
static void test_extreme_inputs(void **state)
{
	(void)state;
	const struct {
		const char *name;
		double vmul, qmul, kmul;
		int fast;
	} cs[] = {
		{"V near overflow", 0x1p1020, 1, 1, 0},
		{"V large, sums fit", 0x1p900, 1, 1, 1},
		{"V subnormal", 0x1p-1060, 1, 1, 0},
		{"V tiny, normal", 0x1p-900, 1, 1, 1},
		{"q and K subnormal", 1, 0x1p-1050, 0x1p-20, -1},
		{"q near overflow, K tiny", 1, 0x1p1000, 0x1p-1010, -1},
	};
	for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
		skv_problem p;
		CHECK_OK(skv_problem_init(&p, 1, 300, 12, SKV_DIST_GAUSSIAN, 1.0, SKV_FP64, 40 + c));
		for (size_t i = 0; i < p.n * p.d; i++) {
			p.v[i] *= cs[c].vmul;
			p.k[i] *= cs[c].kmul;
		}
		for (size_t i = 0; i < p.d; i++)
			p.q[i] *= cs[c].qmul;
		const truth_check t = check_truth(&p, 0, p.n, 1024, cs[c].name);
		if (t.certified)
			check_stated(&t);
		if (cs[c].fast >= 0 && t.certified != cs[c].fast)
			fail_msg("%s:%d: %s: fast path %s", __FILE__, __LINE__, cs[c].name,
				 t.certified ? "certified" : "declined");
		skv_problem_free(&p);
	}
	skv_problem p; /* V across the exponent range, row by row */
	CHECK_OK(skv_problem_init(&p, 1, 64, 8, SKV_DIST_GAUSSIAN, 1.0, SKV_FP64, 77));
	for (size_t j = 0; j < p.n; j++)
		for (size_t i = 0; i < p.d; i++)
			p.v[j * p.d + i] = ldexp(p.v[j * p.d + i], (int)(j * 29 % 1900) - 950);
	check_truth(&p, 0, p.n, 1024, "V across the exponent range");
	skv_problem_free(&p);
}

enum { MK_G = 16, MK_D = 8, MK_LOG_N = 20 };

/* The problem of test_million_keys: key j is kg[g] for a drawn group g,
 * v_ji = x 2^-20 for integers |x| <= 2^20; sum[g][i] = sum of those x. */
static void million_keys_problem(skv_problem *p, double kg[MK_G][MK_D], int64_t sum[MK_G][MK_D],
				 size_t cnt[MK_G])
{
	const size_t n = (size_t)1 << MK_LOG_N;
	*p = (skv_problem){.nq = 1, .n = n, .d = MK_D, .scale = 0.5};
	p->q = malloc(MK_D * sizeof(double));
	p->k = malloc(n * MK_D * sizeof(double));
	p->v = malloc(n * MK_D * sizeof(double));
	assert_true(p->q && p->k && p->v);
	skv_rng r;
	skv_rng_seed(&r, 2024);
	for (size_t i = 0; i < MK_D; i++)
		p->q[i] = skv_rng_normal(&r);
	for (size_t g = 0; g < MK_G; g++)
		for (size_t i = 0; i < MK_D; i++)
			kg[g][i] = skv_rng_normal(&r) * (1 + (double)g / 4);
	memset(sum, 0, MK_G * sizeof sum[0]);
	memset(cnt, 0, MK_G * sizeof cnt[0]);
	for (size_t j = 0; j < n; j++) {
		const size_t g = (size_t)skv_rng_below(&r, MK_G);
		cnt[g]++;
		for (size_t i = 0; i < MK_D; i++) {
			const int64_t x = (int64_t)skv_rng_below(&r, (uint64_t)1 << 21) - ((int64_t)1 << 20);
			p->k[j * MK_D + i] = kg[g][i];
			p->v[j * MK_D + i] = ldexp((double)x, -20);
			sum[g][i] += x;
		}
	}
}

/* The exact truth of that problem at 512 bits: W = sum_g n_g e^(s_g), out_i
 * = sum_g e^(s_g) sum[g][i] 2^-20 / W (N[i] must be initialized). */
static void million_keys_truth(mpfr_t *N, mpfr_t W, const skv_problem *p, double kg[MK_G][MK_D],
			       int64_t sum[MK_G][MK_D], const size_t cnt[MK_G])
{
	mpfr_t s, e, t;
	mpfr_inits2(512, s, e, t, (mpfr_ptr)0);
	mpfr_set_zero(W, 1);
	for (size_t i = 0; i < MK_D; i++)
		mpfr_set_zero(N[i], 1);
	for (size_t g = 0; g < MK_G; g++) {
		mpfr_set_zero(s, 1);
		for (size_t i = 0; i < MK_D; i++) {
			mpfr_set_d(t, p->q[i], MPFR_RNDN);
			mpfr_mul_d(t, t, kg[g][i], MPFR_RNDN);
			mpfr_add(s, s, t, MPFR_RNDN);
		}
		mpfr_mul_d(s, s, p->scale, MPFR_RNDN);
		mpfr_exp(e, s, MPFR_RNDN);
		mpfr_mul_ui(t, e, (unsigned long)cnt[g], MPFR_RNDN);
		mpfr_add(W, W, t, MPFR_RNDN);
		for (size_t i = 0; i < MK_D; i++) {
			mpfr_set_si(t, (long)sum[g][i], MPFR_RNDN);
			mpfr_mul_2si(t, t, -20, MPFR_RNDN);
			mpfr_fma(N[i], e, t, N[i], MPFR_RNDN);
		}
	}
	for (size_t i = 0; i < MK_D; i++)
		mpfr_div(N[i], N[i], W, MPFR_RNDN);
	mpfr_log(W, W, MPFR_RNDN);
	mpfr_clears(s, e, t, (mpfr_ptr)0);
}

/* 2^20 keys drawn from 16 distinct key vectors (scores spread over ~30
 * nats), V integers times 2^-20: the exact answer needs only the 16 group
 * sums of V (exact in int64) and 16 exponentials, so MPFR at 512 bits
 * referees the fast path at a million keys (accumulation over 2^20 keys in
 * 1024 blocks) in milliseconds. */
static void test_million_keys(void **state)
{
	(void)state;
	skv_problem p;
	double kg[MK_G][MK_D];
	int64_t sum[MK_G][MK_D];
	size_t cnt[MK_G];
	million_keys_problem(&p, kg, sum, cnt);
	mpfr_t N[MK_D], L;
	mpfr_init2(L, 512);
	for (size_t i = 0; i < MK_D; i++)
		mpfr_init2(N[i], 512);
	million_keys_truth(N, L, &p, kg, sum, cnt);
	skv_dd out[MK_D], lse;
	skv_truth_cert c;
	CHECK_OK(skv_truth_fast(out, &lse, &c, &p, 0, 0, p.n, SKV_TRUTH_ISA_AUTO));
	double on;
	const double err = dd_norm_err_mpfr(&on, out, N, MK_D), lerr = dd_dist(lse, L);
	print_message("# 2^20 keys: error 2^%.1f relative (certified 2^%.1f), lse error %.3g (certified %.3g), "
		      "theta 2^%.1f, accumulation 2^%.1f\n",
		      log2(err / on), log2(c.err_norm / c.out_norm), lerr, c.lse_err, log2(c.theta), log2(c.acc_rel));
	CHECK_LE("2^20 keys: error within the certificate", err, c.err_norm);
	CHECK_LE("2^20 keys: relative error", err / on, SKV_TRUTH_CERT_REL);
	CHECK_LE("2^20 keys: lse error within the certificate", lerr, c.lse_err);
	CHECK_LE("2^20 keys: certified relative bound", c.err_norm / c.out_norm, 0x1p-105);
	for (size_t i = 0; i < MK_D; i++)
		mpfr_clear(N[i]);
	mpfr_clear(L);
	free(p.q);
	free(p.k);
	free(p.v);
}

/* The generic loops (libm fma) and the AVX2 + FMA ones give the same bits
 * (outputs, lse, certificate, decision), every d from 1 to 9 and a few
 * hard cases. */
static void test_isa_identical(void **state)
{
	(void)state;
	if (!skv_truth_kernels_get(SKV_TRUTH_ISA_FMA)) {
		print_message("# no AVX2 + FMA on this CPU: only the generic loops exist here\n");
		return;
	}
	for (size_t d = 1; d <= 9; d++)
		for (int dist = 0; dist < SKV_NDISTS; dist++) {
			skv_problem p;
			CHECK_OK(skv_problem_init(&p, 1, 257, d, (skv_dist)dist, d == 9 ? 300 : 1.5, SKV_FP64,
						  d * 3 + dist));
			if (d == 8)
				for (size_t j = 0; j < p.n * d; j++)
					p.v[j] -= 0.01; /* some cancellation */
			skv_dd a[9], b[9], la, lb;
			skv_truth_cert ca, cb;
			const int sa = skv_truth_fast(a, &la, &ca, &p, 0, 0, p.n, SKV_TRUTH_ISA_GENERIC);
			const int sb = skv_truth_fast(b, &lb, &cb, &p, 0, 0, p.n, SKV_TRUTH_ISA_FMA);
			assert_int_equal(sa, sb);
			assert_int_equal(ca.reason, cb.reason);
			if (sa == SKV_OK) {
				assert_memory_equal(a, b, d * sizeof a[0]);
				assert_memory_equal(&la, &lb, sizeof la);
				assert_memory_equal(&ca, &cb, sizeof ca);
			}
			skv_problem_free(&p);
		}
}

/* Called from OpenMP threads at once, the truth gives the bits it gives
 * serially; the fast path leaves MPFR's state alone. */
static void test_threads_and_state(void **state)
{
	(void)state;
	enum { NQ = 12, D = 20 };
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, NQ, 1000, D, SKV_DIST_SINK, 1.0, SKV_FP16, 9));
	skv_dd ser[NQ][D], par[NQ][D], ls[NQ], lp[NQ];
	for (size_t r = 0; r < NQ; r++)
		CHECK_OK(skv_truth_range(ser[r], &ls[r], &p, r, r, p.n - r, SKV_TRUTH_PREC));
	int bad = 0;
#pragma omp parallel for schedule(dynamic) num_threads(4) reduction(| : bad)
	for (size_t r = 0; r < NQ; r++)
		bad |= skv_truth_range(par[r], &lp[r], &p, r, r, p.n - r, SKV_TRUTH_PREC) != SKV_OK;
	assert_false(bad);
	assert_memory_equal(ser, par, sizeof ser);
	assert_memory_equal(ls, lp, sizeof ls);
	const mpfr_exp_t emin = mpfr_get_emin();
	mpfr_set_emin(-100);
	mpfr_clear_flags();
	mpfr_set_inexflag();
	skv_truth_cert c;
	CHECK_OK(skv_truth_fast(par[0], &lp[0], &c, &p, 0, 0, p.n, SKV_TRUTH_ISA_AUTO));
	assert_true(mpfr_get_emin() == -100 && mpfr_flags_save() == MPFR_FLAGS_INEXACT);
	mpfr_set_emin(emin);
	mpfr_clear_flags();
	assert_memory_equal(par[0], ser[0], sizeof ser[0]);
	skv_problem_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exp_tables),
		cmocka_unit_test(test_exp_bound),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_cancellation),
		cmocka_unit_test(test_large_scores_and_sinks),
		cmocka_unit_test(test_extreme_inputs),
		cmocka_unit_test(test_million_keys),
		cmocka_unit_test(test_isa_identical),
		cmocka_unit_test(test_threads_and_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
