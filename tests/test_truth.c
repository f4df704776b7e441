/* test_truth.c - the ground truth against a plain 512-bit computation, precision, splits, bad input. */
#include <float.h>
#include <inttypes.h>
#include <mpfr.h>

#include "testutil.h"
#include "truth_check.h"
#include "truth_internal.h"

/* ------------------------------------- a plain referee at 512 bits */

enum { NAIVE_PREC = 512 };

/* The definition written out with no care for cost or range:
 *   s_j = scale * sum_i q_i k_ji,  L = log sum_j exp(s_j),
 *   out_i = sum_j exp(s_j - L) v_ji,
 * every operation at 512 bits in MPFR's default (huge) exponent range. */
static void naive_score(mpfr_t s, const skv_problem *p, size_t row, size_t j)
{
	mpfr_t t;
	mpfr_init2(t, NAIVE_PREC);
	mpfr_set_zero(s, 1);
	for (size_t i = 0; i < p->d; i++) {
		mpfr_set_d(t, p->q[row * p->d + i], MPFR_RNDN);
		mpfr_mul_d(t, t, p->k[j * p->d + i], MPFR_RNDN);
		mpfr_add(s, s, t, MPFR_RNDN);
	}
	mpfr_mul_d(s, s, p->scale, MPFR_RNDN);
	mpfr_clear(t);
}

static void naive_truth(mpfr_t *out, mpfr_t lse, const skv_problem *p, size_t row, size_t lo, size_t hi)
{
	mpfr_t s, e, t, sum;
	mpfr_inits2(NAIVE_PREC, s, e, t, sum, (mpfr_ptr)0);
	mpfr_set_zero(sum, 1);
	for (size_t j = lo; j < hi; j++) {
		naive_score(s, p, row, j);
		mpfr_exp(e, s, MPFR_RNDN);
		mpfr_add(sum, sum, e, MPFR_RNDN);
	}
	mpfr_log(lse, sum, MPFR_RNDN);
	for (size_t i = 0; i < p->d; i++)
		mpfr_set_zero(out[i], 1);
	for (size_t j = lo; j < hi; j++) {
		naive_score(s, p, row, j);
		mpfr_sub(s, s, lse, MPFR_RNDN);
		mpfr_exp(e, s, MPFR_RNDN);
		for (size_t i = 0; i < p->d; i++) {
			mpfr_mul_d(t, e, p->v[j * p->d + i], MPFR_RNDN);
			mpfr_add(out[i], out[i], t, MPFR_RNDN);
		}
	}
	mpfr_clears(s, e, t, sum, (mpfr_ptr)0);
}

static double max_abs_v(const skv_problem *p, size_t lo, size_t hi)
{
	double m = 0;
	for (size_t j = lo * p->d; j < hi * p->d; j++)
		m = fmax(m, fabs(p->v[j]));
	return m;
}

/* A description of the case for failure messages, so it can be replayed. */
typedef struct {
	const char *name;
	int fmt, dist;
	double sscale;
	uint64_t seed;
} case_id;

/* Compares skv_truth_range on [lo, hi) of row with the plain referee: hi of
 * each value is the double nearest the referee's value, and hi + lo is
 * within 2^-105 of it (the double-double's own resolution) plus 2^-118 of
 * the largest |v| (the truth's error bound at 128 bits is ~2^-123 V). */
static void check_vs_naive(const skv_problem *p, size_t row, size_t lo, size_t hi, case_id id)
{
	const size_t d = p->d;
	skv_dd *out = malloc(d * sizeof *out), lse;
	mpfr_t *nout = malloc(d * sizeof *nout), nl;
	assert_non_null(out);
	assert_non_null(nout);
	for (size_t i = 0; i < d; i++)
		mpfr_init2(nout[i], NAIVE_PREC);
	mpfr_init2(nl, NAIVE_PREC);
	CHECK_OK(skv_truth_range(out, &lse, p, row, lo, hi, SKV_TRUTH_PREC));
	naive_truth(nout, nl, p, row, lo, hi);
	const double V = max_abs_v(p, lo, hi);
	double smax = 0;
	for (size_t j = lo; j < hi; j++) {
		mpfr_t s;
		mpfr_init2(s, NAIVE_PREC);
		naive_score(s, p, row, j);
		smax = fmax(smax, fabs(mpfr_get_d(s, MPFR_RNDN)));
		mpfr_clear(s);
	}
	for (size_t i = 0; i <= d; i++) {
		const skv_dd got = i < d ? out[i] : lse;
		mpfr_srcptr want = i < d ? nout[i] : nl;
		const double w = mpfr_get_d(want, MPFR_RNDN);
		const double tol = i < d ? 0x1p-105 * fabs(w) + 0x1p-118 * V
					 : 0x1p-105 * fabs(w) + 0x1p-118 * (1 + smax);
		const double dist = dd_dist(got, want);
		if (memcmp(&got.hi, &w, sizeof w) != 0 || !(dist <= tol))
			fail_msg("%s:%d: %s fmt %d dist %d score_scale %a seed %" PRIu64 " n %zu d %zu row %zu "
				 "keys [%zu, %zu): %s%zu: got (%a, %a), referee %a, |diff| %a > %a",
				 __FILE__, __LINE__, id.name, id.fmt, id.dist, id.sscale, id.seed, p->n, d, row,
				 lo, hi, i < d ? "out " : "lse", i < d ? i : 0, got.hi, got.lo, w, dist, tol);
	}
	for (size_t i = 0; i < d; i++)
		mpfr_clear(nout[i]);
	mpfr_clear(nl);
	free(nout);
	free(out);
}

static void test_vs_naive_random(void **state)
{
	(void)state;
	const double sscales[] = {0.5, 4, 40, 1000};
	const size_t shapes[][2] = {{1, 1}, {2, 3}, {7, 8}, {33, 5}};
	uint64_t seed = 100;
	for (int f = 0; f < SKV_NFORMATS; f++) {
		/* value formats with fp16's range at least (the narrower ones: test_formats.c) */
		if (skv_format_is_scale((skv_format)f) || skv_format_max((skv_format)f) < 65504)
			continue;
		for (int dist = 0; dist < SKV_NDISTS; dist++)
			for (size_t s = 0; s < sizeof sscales / sizeof sscales[0]; s++)
				for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++) {
					skv_problem p;
					const size_t n = shapes[h][0], d = shapes[h][1];
					const case_id id = {"random", f, dist, sscales[s], ++seed};
					CHECK_OK(skv_problem_init(&p, 2, n, d, (skv_dist)dist, sscales[s],
								  (skv_format)f, seed));
					for (size_t row = 0; row < 2; row++) {
						check_vs_naive(&p, row, 0, n, id);
						if (n > 2) {
							check_vs_naive(&p, row, 1, n - 1, id);
							check_vs_naive(&p, row, n / 2, n, id);
						}
					}
					skv_problem_free(&p);
				}
	}
}

/* A hand-built problem: q (one row) and m keys, v from the generator. */
static void build(skv_problem *p, double *q, double *k, double *v, size_t m, size_t d, double scale)
{
	skv_rng r;
	skv_rng_seed(&r, 77);
	for (size_t i = 0; i < m * d; i++)
		v[i] = skv_rng_normal(&r);
	*p = (skv_problem){.nq = 1, .n = m, .d = d, .q = q, .k = k, .v = v, .scale = scale};
}

enum { XM = 6, XD = 2 };

static void test_vs_naive_extreme(void **state)
{
	(void)state;
	double q[XD], k[XM * XD], v[XM * XD];
	skv_problem p;
	/* products overflow a double (2^1030; the double dot is inf - inf, so
	 * the reference key is chosen in MPFR) yet the exact dot products
	 * j 2^978 are scaled back to scores 0, 1, ..., 5 */
	q[0] = 0x1p1000;
	q[1] = -0x1p1000;
	for (size_t j = 0; j < XM; j++) {
		k[j * XD] = 0x1p30 + (double)j * 0x1p-22;
		k[j * XD + 1] = 0x1p30;
	}
	build(&p, q, k, v, XM, XD, 0x1p-978);
	check_vs_naive(&p, 0, 0, XM, (case_id){"overflowing products", 3, 0, 0, 0});
	/* the same with the top key first and, on the last key only, a third
	 * product -2^890 (score -2^-88) in chunks that the top key's dot
	 * product does not touch: whatever the MPFR choice of the reference
	 * leaves in the accumulator must not leak into other keys */
	{
		enum { XD3 = 3 };
		double q3[XD3] = {0x1p1000, -0x1p1000, 0x1p445}, k3[XM * XD3], v3[XM * XD3];
		for (size_t j = 0; j < XM; j++) {
			k3[j * XD3] = 0x1p30 + (double)(XM - 1 - j) * 0x1p-22;
			k3[j * XD3 + 1] = 0x1p30;
			k3[j * XD3 + 2] = j == XM - 1 ? -0x1p445 : 0.0;
		}
		build(&p, q3, k3, v3, XM, XD3, 0x1p-978);
		check_vs_naive(&p, 0, 0, XM, (case_id){"overflowing products, stale chunks", 3, 0, 0, 0});
	}
	/* products below the double range (2^-1100 and less: 0 or subnormal
	 * in double), exact in the accumulator; scores of order 2^-80 */
	q[0] = 0x1p-100;
	q[1] = -0x1.8p-100;
	for (size_t j = 0; j < XM; j++) {
		k[j * XD] = 0x1p-1000 * (1 + (double)j / 8);
		k[j * XD + 1] = 0x1p-1001 * (double)(j % 3);
	}
	build(&p, q, k, v, XM, XD, 0x1p1020);
	check_vs_naive(&p, 0, 0, XM, (case_id){"underflowing products", 3, 0, 0, 0});
	/* subnormal inputs: products down to 2^-2148, the accumulator's floor */
	q[0] = 3 * DBL_TRUE_MIN;
	q[1] = -DBL_TRUE_MIN;
	for (size_t j = 0; j < XM; j++) {
		k[j * XD] = (double)(j + 1) * DBL_TRUE_MIN;
		k[j * XD + 1] = (double)(2 * j) * DBL_TRUE_MIN;
	}
	build(&p, q, k, v, XM, XD, DBL_MAX);
	check_vs_naive(&p, 0, 0, XM, (case_id){"subnormal inputs", 3, 0, 0, 0});
	/* the largest doubles: products of 2^2048 cancel to dots j 2^1996,
	 * scores j 2^922 (scale 2^-1074). The top key takes all the mass:
	 * the others' weights exp(-2^922) are below MPFR's range, so they
	 * are 0, and out is v of the last key exactly, L its score. (The
	 * plain referee's unshifted exp overflows here, so the expectations
	 * are written directly; the score itself is exact at 512 bits.) */
	q[0] = DBL_MAX;
	q[1] = -DBL_MAX;
	for (size_t j = 0; j < XM; j++) {
		k[j * XD] = DBL_MAX;
		k[j * XD + 1] = DBL_MAX * (1 - (double)j * DBL_EPSILON);
	}
	build(&p, q, k, v, XM, XD, DBL_TRUE_MIN);
	{
		skv_dd out[XD], lse;
		mpfr_t s;
		mpfr_init2(s, NAIVE_PREC);
		naive_score(s, &p, 0, XM - 1);
		CHECK_OK(skv_truth_range(out, &lse, &p, 0, 0, XM, SKV_TRUTH_PREC));
		for (size_t i = 0; i < XD; i++) {
			CHECK_BITS("largest doubles: out", out[i].hi, v[(XM - 1) * XD + i]);
			CHECK_BITS("largest doubles: out lo", out[i].lo, 0.0);
		}
		CHECK_BITS("largest doubles: lse", lse.hi, mpfr_get_d(s, MPFR_RNDN));
		assert_true(lse.hi > 0x1p922 && isfinite(lse.hi));
		mpfr_clear(s);
	}
	/* all scores equal: out is the mean of v, lse = s + log m */
	for (size_t i = 0; i < XM * XD; i++)
		k[i] = 1.0;
	q[0] = 0.25;
	q[1] = 0.5;
	build(&p, q, k, v, XM, XD, 0.75);
	check_vs_naive(&p, 0, 0, XM, (case_id){"equal scores", 3, 0, 0, 0});
}

/* ------------------------------------------------------- precision */

/* The claims of lib/truth_mpfr.c and lib/truth.c. (1) The MPFR path's
 * error bound, normwise:
 *   ||out_P - out|| <= 2^-P (5 + 4 log m) sqrt(sum_i V_i^2),  V_i = max_j |v_ji|,
 * holds at P = 64, 80, 96 (skv_truth_mpfr, against the 256-bit result, plus
 * the two double-doubles' own resolution, 2^-105 relative each), where the
 * error is visible through the double-double; the 64-bit result is off by
 * more than 2^-100, so the comparison does see a shortfall. (2) The public
 * truth at SKV_TRUTH_PREC (the certified fast path) agrees with the 256-bit
 * one (MPFR: prec above SKV_TRUTH_PREC) to better than 2^-100 (normwise
 * relative; lse relative), on diffuse, sink and large-score problems. */
static void test_precision_doubling(void **state)
{
	(void)state;
	const struct {
		int fmt, dist;
		double sscale;
		size_t n, d;
	} cs[] = {
		{SKV_FP16, SKV_DIST_GAUSSIAN, 0.5, 8192, 64},
		{SKV_FP32, SKV_DIST_SINK, 1, 4096, 64},
		{SKV_FP64, SKV_DIST_GAUSSIAN, 30, 4096, 32},
		{SKV_BF16, SKV_DIST_SINK, 8, 2048, 128},
	};
	const long precs[] = {64, 80, 96, SKV_TRUTH_PREC, 2 * SKV_TRUTH_PREC};
	enum { NP = sizeof precs / sizeof precs[0], I128 = NP - 2, I256 = NP - 1 };
	for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
		skv_problem p;
		const size_t n = cs[c].n, d = cs[c].d;
		CHECK_OK(skv_problem_init(&p, 1, n, d, (skv_dist)cs[c].dist, cs[c].sscale,
					  (skv_format)cs[c].fmt, 31 + c));
		skv_dd *out[NP], lse[NP];
		for (size_t k = 0; k < NP; k++) {
			out[k] = malloc(d * sizeof(skv_dd));
			assert_non_null(out[k]);
			if (k < I128)
				CHECK_OK(skv_truth_mpfr(out[k], &lse[k], &p, 0, 0, n, precs[k]));
			else
				CHECK_OK(skv_truth_range(out[k], &lse[k], &p, 0, 0, n, precs[k]));
		}
		double vn = 0, on = 0;
		for (size_t i = 0; i < d; i++) {
			double vi = 0;
			for (size_t j = 0; j < n; j++)
				vi = fmax(vi, fabs(p.v[j * d + i]));
			vn += vi * vi;
			on += out[I256][i].hi * out[I256][i].hi;
		}
		const double ratio = sqrt(vn / on); /* sqrt(sum V_i^2) / ||out|| */
		for (size_t k = 0; k < I128; k++) {
			const double e = dd_norm_rel(out[k], out[I256], d);
			const double bound = ldexp(5 + 4 * log((double)n), -(int)precs[k]) * ratio + 0x1p-104;
			print_message("# fmt %d dist %d score_scale %g n %zu: prec %ld: error 2^%.1f, bound 2^%.1f\n",
				      cs[c].fmt, cs[c].dist, cs[c].sscale, n, precs[k], log2(e), log2(bound));
			CHECK_LE("normwise error against 256 bits, within the bound of lib/truth_mpfr.c", e, bound);
		}
		const double e128 = dd_norm_rel(out[I128], out[I256], d);
		const double l128 = dd_norm_rel(&lse[I128], &lse[I256], 1);
		print_message("# prec 128: error 2^%.1f (0: the double-doubles are identical), lse 2^%.1f\n",
			      log2(e128), log2(l128));
		CHECK_LE("128 vs 256 bits, output", e128, 0x1p-100);
		CHECK_LE("128 vs 256 bits, lse", l128, 0x1p-100);
		CHECK_GE("64 vs 256 bits, output (the test can see a shortfall)",
			 dd_norm_rel(out[0], out[I256], d), 0x1p-100);
		for (size_t k = 0; k < NP; k++)
			free(out[k]);
		skv_problem_free(&p);
	}
}

/* ----------------------------------------------------------- splits */

/* The merge identity the whole project measures: for a partition of the
 * keys into splits s with truths (o_s, L_s),
 *   L = log sum_s exp(L_s),   o = sum_s exp(L_s - L) o_s,
 * checked in MPFR at 256 bits from the double-double values. */
static void test_union_of_splits(void **state)
{
	(void)state;
	const size_t n = 1000, d = 16;
	const size_t bounds[] = {0, 1, 137, 137, 600, 999, 1000};
	enum { S = sizeof bounds / sizeof bounds[0] - 1 };
	for (int dist = 0; dist < SKV_NDISTS; dist++) {
		skv_problem p;
		CHECK_OK(skv_problem_init(&p, 1, n, d, (skv_dist)dist, 2.0, SKV_FP32, 5));
		skv_dd all[16], lall, part[S][16], lpart[S];
		assert_true(d <= sizeof all / sizeof all[0]);
		CHECK_OK(skv_truth_range(all, &lall, &p, 0, 0, n, SKV_TRUTH_PREC));
		for (size_t s = 0; s < S; s++)
			CHECK_OK(skv_truth_range(part[s], &lpart[s], &p, 0, bounds[s], bounds[s + 1],
						 SKV_TRUTH_PREC));
		mpfr_t L, t, w;
		mpfr_inits2(256, L, t, w, (mpfr_ptr)0);
		mpfr_set_zero(L, 1);
		for (size_t s = 0; s < S; s++) {
			mpfr_set_d(t, lpart[s].hi, MPFR_RNDN); /* -inf for the empty split */
			mpfr_add_d(t, t, lpart[s].lo, MPFR_RNDN);
			mpfr_exp(t, t, MPFR_RNDN);
			mpfr_add(L, L, t, MPFR_RNDN);
		}
		mpfr_log(L, L, MPFR_RNDN);
		const double dl = dd_dist(lall, L);
		if (!(dl <= 0x1p-100 * (1 + fabs(lall.hi))))
			fail_msg("%s:%d: dist %d: lse of the whole %a + %a, of the union %a, diff %a", __FILE__,
				 __LINE__, dist, lall.hi, lall.lo, mpfr_get_d(L, MPFR_RNDN), dl);
		skv_dd merged[16];
		for (size_t i = 0; i < d; i++) {
			mpfr_t o;
			mpfr_init2(o, 256);
			mpfr_set_zero(o, 1);
			for (size_t s = 0; s < S; s++) {
				mpfr_set_d(w, lpart[s].hi, MPFR_RNDN);
				mpfr_add_d(w, w, lpart[s].lo, MPFR_RNDN);
				mpfr_sub(w, w, L, MPFR_RNDN);
				mpfr_exp(w, w, MPFR_RNDN);
				mpfr_set_d(t, part[s][i].hi, MPFR_RNDN);
				mpfr_add_d(t, t, part[s][i].lo, MPFR_RNDN);
				mpfr_fma(o, w, t, o, MPFR_RNDN);
			}
			merged[i].hi = mpfr_get_d(o, MPFR_RNDN);
			mpfr_sub_d(o, o, merged[i].hi, MPFR_RNDN);
			merged[i].lo = mpfr_get_d(o, MPFR_RNDN);
			mpfr_clear(o);
		}
		const double e = dd_norm_rel(merged, all, d);
		if (!(e <= 0x1p-100))
			fail_msg("%s:%d: dist %d: merged splits vs whole: normwise 2^%.1f", __FILE__, __LINE__,
				 dist, log2(e));
		mpfr_clears(L, t, w, (mpfr_ptr)0);
		skv_problem_free(&p);
	}
}

static void test_empty_range(void **state)
{
	(void)state;
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 1, 10, 4, SKV_DIST_GAUSSIAN, 1, SKV_FP16, 3));
	const size_t at[] = {0, 3, 10};
	for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
		skv_dd out[4], lse;
		memset(out, 0x5a, sizeof out);
		CHECK_OK(skv_truth_range(out, &lse, &p, 0, at[a], at[a], SKV_TRUTH_PREC));
		for (size_t i = 0; i < 4; i++) {
			CHECK_BITS("empty out hi", out[i].hi, 0.0);
			CHECK_BITS("empty out lo", out[i].lo, 0.0);
		}
		CHECK_BITS("empty lse hi", lse.hi, -INFINITY);
		CHECK_BITS("empty lse lo", lse.lo, 0.0);
	}
	skv_problem_free(&p);
}

static void test_single_key(void **state)
{
	(void)state;
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 1, 10, 5, SKV_DIST_GAUSSIAN, 3, SKV_FP64, 8));
	for (size_t j = 0; j < p.n; j++) {
		skv_dd out[5], lse;
		CHECK_OK(skv_truth_range(out, &lse, &p, 0, j, j + 1, SKV_TRUTH_PREC));
		for (size_t i = 0; i < p.d; i++) {
			CHECK_BITS("one key: out = v", out[i].hi, p.v[j * p.d + i]);
			CHECK_BITS("one key: lo", out[i].lo, 0.0);
		}
		check_vs_naive(&p, 0, j, j + 1, (case_id){"single key", SKV_FP64, 0, 3, 8});
	}
	skv_problem_free(&p);
}

/* The sink of skv_problem_init carries most of the softmax mass: with
 * score_scale 0.5 about e^2 / (e^2 + exp(0.125)) = 0.867 (skv.h). */
static void test_sink_mass(void **state)
{
	(void)state;
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 1, 4096, 64, SKV_DIST_SINK, 0.5, SKV_FP32, 21));
	skv_dd out[64], lse, l0;
	CHECK_OK(skv_truth_range(out, &lse, &p, 0, 0, p.n, SKV_TRUTH_PREC));
	CHECK_OK(skv_truth_range(out, &l0, &p, 0, 0, 1, SKV_TRUTH_PREC)); /* L of one key = its score */
	const double s0 = l0.hi, mass = exp(s0 - lse.hi);
	CHECK_LE("|s0 - (log n + 2)|", fabs(s0 - (log(4096.0) + 2)), 1e-5);
	CHECK_GE("sink mass", mass, 0.80);
	CHECK_LE("sink mass", mass, 0.93);
	print_message("# sink: score %.6f (log n + 2 = %.6f), softmax mass %.4f\n", s0, log(4096.0) + 2,
		      mass);
	skv_problem_free(&p);
}

/* MPFR's exponent range and flags are as the caller left them, and the
 * result does not depend on them (a narrow binary64-like range would
 * underflow the weights of a large-score problem if it were used). */
static void test_mpfr_state(void **state)
{
	(void)state;
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 1, 200, 8, SKV_DIST_GAUSSIAN, 300, SKV_FP64, 4));
	skv_dd a[8], b[8], la, lb;
	CHECK_OK(skv_truth_range(a, &la, &p, 0, 0, p.n, SKV_TRUTH_PREC));
	const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_set_emin(-1073);
	mpfr_set_emax(1024);
	mpfr_clear_flags();
	mpfr_set_divby0();
	CHECK_OK(skv_truth_range(b, &lb, &p, 0, 0, p.n, SKV_TRUTH_PREC));
	assert_true(mpfr_get_emin() == -1073 && mpfr_get_emax() == 1024);
	assert_true(mpfr_flags_save() == MPFR_FLAGS_DIVBY0);
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	mpfr_clear_flags();
	for (size_t i = 0; i < 8; i++) {
		CHECK_BITS("out hi, narrow range", b[i].hi, a[i].hi);
		CHECK_BITS("out lo, narrow range", b[i].lo, a[i].lo);
	}
	CHECK_BITS("lse, narrow range", lb.hi, la.hi);
	skv_problem_free(&p);
}

static void test_bad_input(void **state)
{
	(void)state;
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 2, 6, 3, SKV_DIST_GAUSSIAN, 1, SKV_FP64, 6));
	skv_dd out[3], lse, so[3], sl;
	memset(so, 0x5a, sizeof so);
	memset(&sl, 0x5a, sizeof sl);
#define EXPECT(call, want)                                                                              \
	do {                                                                                            \
		memcpy(out, so, sizeof out);                                                            \
		lse = sl;                                                                               \
		const int st_ = (call);                                                                 \
		if (st_ != (want))                                                                      \
			fail_msg("%s:%d: %s: status %d, want %d", __FILE__, __LINE__, #call, st_, want);  \
		assert_memory_equal(out, so, sizeof out);                                               \
		assert_memory_equal(&lse, &sl, sizeof lse);                                             \
	} while (0)
	EXPECT(skv_truth_range(NULL, &lse, &p, 0, 0, 6, 128), SKV_EINVAL);
	EXPECT(skv_truth_range(out, NULL, &p, 0, 0, 6, 128), SKV_EINVAL);
	EXPECT(skv_truth_range(out, &lse, NULL, 0, 0, 6, 128), SKV_EINVAL);
	EXPECT(skv_truth_range(out, &lse, &p, 2, 0, 6, 128), SKV_EINVAL);    /* row >= nq */
	EXPECT(skv_truth_range(out, &lse, &p, 0, 4, 3, 128), SKV_EINVAL);    /* lo > hi */
	EXPECT(skv_truth_range(out, &lse, &p, 0, 0, 7, 128), SKV_EINVAL);    /* hi > n */
	EXPECT(skv_truth_range(out, &lse, &p, 0, 0, 6, 63), SKV_EINVAL);     /* prec < 64 */
	EXPECT(skv_truth_range(out, &lse, &p, 0, 0, 6, 1L << 20), SKV_EINVAL);
	const double keep = p.v[4 * 3 + 1];
	p.v[4 * 3 + 1] = NAN; /* key 4 */
	EXPECT(skv_truth_range(out, &lse, &p, 0, 0, 6, 128), SKV_EINVAL);
	CHECK_OK(skv_truth_range(out, &lse, &p, 0, 0, 4, 128)); /* outside the range: fine */
	p.v[4 * 3 + 1] = keep;
	p.k[2] = INFINITY;
	EXPECT(skv_truth_range(out, &lse, &p, 0, 0, 6, 128), SKV_EINVAL);
	p.k[2] = 0.5;
	p.q[3 + 1] = NAN; /* row 1 */
	EXPECT(skv_truth_range(out, &lse, &p, 1, 0, 6, 128), SKV_EINVAL);
	CHECK_OK(skv_truth_range(out, &lse, &p, 0, 0, 6, 128));
	p.q[3 + 1] = 0.5;
	const double scale = p.scale;
	p.scale = NAN;
	EXPECT(skv_truth_range(out, &lse, &p, 0, 0, 6, 128), SKV_EINVAL);
	p.scale = scale;
	/* a log-sum-exp beyond the largest double: dots of 2^1200 */
	for (size_t i = 0; i < 3; i++)
		p.q[i] = p.k[i] = 0x1p600;
	EXPECT(skv_truth_range(out, &lse, &p, 0, 0, 6, 128), SKV_ERANGE);
#undef EXPECT
	skv_problem_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vs_naive_random),
		cmocka_unit_test(test_vs_naive_extreme),
		cmocka_unit_test(test_precision_doubling),
		cmocka_unit_test(test_union_of_splits),
		cmocka_unit_test(test_empty_range),
		cmocka_unit_test(test_single_key),
		cmocka_unit_test(test_sink_mass),
		cmocka_unit_test(test_mpfr_state),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
