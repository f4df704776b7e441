/* test_merge_rules.c - the merge rules of FA3, xformers, vLLM v2 and llama.cpp CPU, bit for bit against an MPFR evaluation of each formula, the lanes order, and what each returns with empty splits. */
#include "testutil.h"
#include "ref_ops.h"
#include <float.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define D 8

/* The referee: every operation of a formula rounded once to format F by
 * MPFR (tests/ref_ops.h), written here from the formulas in skv.h, not
 * from lib/merge_systems.c. */
static skv_format F;
static double r_add_(double a, double b) { return r_add(F, a, b); }

static double lanes_sum(const double *e, size_t S, size_t T)
{
	double lane[1024];
	for (size_t t = 0; t < T; t++) {
		lane[t] = 0.0;
		for (size_t s = t; s < S; s += T)
			lane[t] = r_add_(lane[t], e[s]);
	}
	return ref_butterfly(F, lane, T);
}

static double seq_sum(const double *e, size_t S)
{
	double a = 0.0;
	for (size_t s = 0; s < S; s++)
		a = r_add(F, a, e[s]);
	return a;
}

/* Random stored partials: LSEs (offset + spread N(0, 1)) and maxes in lse format, sums > 0, rows in
 * the partial format; splits listed in `empty` hold what the kernel
 * writes for no keys (LSE = m = -inf, l = 0, rows 0). */
static void fill(skv_partials *sp, uint64_t seed, const skv_config *c, double offset, double spread,
		 const int *empty)
{
	skv_rng r;
	skv_rng_seed(&r, seed);
	for (size_t s = 0; s < sp->S; s++) {
		int e = empty && empty[s];
		sp->lse[s] = e ? -INFINITY : skv_round(c->lse, offset + spread * skv_rng_normal(&r));
		sp->m[s] = e ? -INFINITY : skv_round(c->lse, sp->lse[s] - 2.0 * skv_rng_uniform(&r));
		sp->l[s] = e ? 0.0 : skv_round(c->lse, 1.0 + 40.0 * skv_rng_uniform(&r));
		for (size_t i = 0; i < sp->d; i++) {
			sp->o[s * sp->d + i] = e ? 0.0 : skv_round(c->partial, skv_rng_normal(&r));
			sp->acc[s * sp->d + i] = e ? 0.0 : skv_round(c->partial, 10.0 * skv_rng_normal(&r));
		}
	}
}

static skv_config cfg_of(skv_format comb, skv_format part, skv_format lse, skv_lse_base base)
{
	skv_config c = skv_config_uniform(SKV_FP32);
	c.combine = comb;
	c.partial = part;
	c.lse = lse;
	c.output = comb;
	c.base = base;
	return c;
}

static void check_row(const char *what, size_t S, const double *got, const double *want, double glse, double wlse)
{
	for (size_t i = 0; i < D; i++)
		if (!ref_same(got[i], want[i]))
			fail_msg("%s:%d: %s S=%zu out[%zu]: got %a, want %a", __FILE__, __LINE__, what, S, i, got[i],
				 want[i]);
	if (!ref_same(glse, wlse))
		fail_msg("%s:%d: %s S=%zu lse: got %a, want %a", __FILE__, __LINE__, what, S, glse, wlse);
}

static const size_t sizes[] = {1, 2, 5, 16, 40, 200};
static const skv_format combines[] = {SKV_FP32, SKV_BF16};

/* FA3: w_s = e(L_s - M) RN(1/sum), the total LSE not in the weights. */
static void ref_onepass_norm(double *out, double *lse, const skv_partials *sp, int lanes)
{
	double M = -INFINITY, e[200], w[200];
	for (size_t s = 0; s < sp->S; s++)
		M = sp->lse[s] > M ? sp->lse[s] : M;
	double Ms = M == -INFINITY ? 0.0 : M; /* the fa3 policy's substitute */
	for (size_t s = 0; s < sp->S; s++)
		e[s] = r_exp(F, r_sub(F, sp->lse[s], Ms));
	double sum = lanes ? lanes_sum(e, sp->S, 32) : seq_sum(e, sp->S);
	*lse = r_add(F, r_log(F, sum), M);
	double inv = (sum == 0.0 || sum != sum) ? 0.0 : r_div(F, 1.0, sum);
	for (size_t i = 0; i < D; i++)
		out[i] = 0.0;
	for (size_t s = 0; s < sp->S; s++) {
		w[s] = r_mul(F, e[s], inv);
		for (size_t i = 0; w[s] > 0.0 && i < D; i++)
			out[i] = r_fma(F, w[s], sp->o[s * D + i], out[i]);
	}
}

static void test_onepass_norm_vs_mpfr(void **state)
{
	(void)state;
	for (size_t ci = 0; ci < NELEM(combines); ci++)
		for (size_t k = 0; k < NELEM(sizes); k++)
			for (int lanes = 0; lanes < 2; lanes++) {
				F = combines[ci];
				skv_config c = cfg_of(F, SKV_FP32, SKV_FP32, SKV_BASE_E);
				skv_merge_spec m = skv_merge_spec_default();
				m.merge = SKV_MERGE_ONEPASS_NORM;
				m.empty = SKV_EMPTY_FA3;
				if (lanes) {
					m.order = SKV_ORDER_LANES;
					m.threads = 32;
				}
				skv_partials sp;
				CHECK_OK(skv_partials_init(&sp, sizes[k], D));
				fill(&sp, 100 + k + 10 * ci, &c, 0.0, 3.0, NULL);
				double got[D], want[D], gl, wl;
				CHECK_OK(skv_merge_run(got, &gl, &sp, &m, &c));
				ref_onepass_norm(want, &wl, &sp, lanes);
				check_row(lanes ? "onepass-norm lanes" : "onepass-norm seq", sizes[k], got, want, gl, wl);
				skv_partials_free(&sp);
			}
}

/* xformers in base e2: e_s = exp2(RN(RN(L_s - M) RN(1.44269504))), out =
 * sum RN(O_s e_s) / sum e_s, L = M + log2(den) / RN(1.44269504) added in
 * the wider format (here the fp64 LSE's). */
static void ref_ratio(double *out, double *lse, const skv_partials *sp, skv_format wide)
{
	double M = -INFINITY, e[200], num[D], k = ref_round(F, 1.44269504);
	for (size_t s = 0; s < sp->S; s++)
		M = sp->lse[s] > M ? sp->lse[s] : M;
	/* the difference in the LSE's fp64, then .to(float32): two roundings */
	for (size_t s = 0; s < sp->S; s++)
		e[s] = r_exp2(F, r_mul(F, ref_round(F, ref_op2(SKV_FP64, mpfr_sub, sp->lse[s], M)), k));
	double den = seq_sum(e, sp->S);
	for (size_t i = 0; i < D; i++) {
		num[i] = 0.0;
		for (size_t s = 0; s < sp->S; s++)
			num[i] = r_add(F, num[i], r_mul(F, sp->o[s * D + i], e[s]));
		out[i] = r_div(F, num[i], den);
	}
	*lse = ref_op2(wide, mpfr_add, M, r_div(F, r_log2(F, den), k));
}

static void test_ratio_vs_mpfr(void **state)
{
	(void)state;
	for (size_t ci = 0; ci < NELEM(combines); ci++)
		for (size_t k = 0; k < NELEM(sizes); k++) {
			F = combines[ci];
			skv_config c = cfg_of(F, SKV_FP32, SKV_FP64, SKV_BASE_E2);
			skv_merge_spec m = skv_merge_spec_default();
			m.merge = SKV_MERGE_RATIO;
			skv_partials sp;
			CHECK_OK(skv_partials_init(&sp, sizes[k], D));
			fill(&sp, 200 + k + 10 * ci, &c, 400.0, 3.0, NULL); /* LSEs near 400: the fp64 storage matters */
			double got[D], want[D], gl, wl;
			CHECK_OK(skv_merge_run(got, &gl, &sp, &m, &c));
			ref_ratio(want, &wl, &sp, SKV_FP64);
			check_row("ratio", sizes[k], got, want, gl, wl);
			skv_partials_free(&sp);
		}
}

/* vLLM: r_s = l_s e(m_s - M) from M = max(-FLT_MAX, m_s), inv =
 * RN(1/RN(G + RN(1e-6))), out = sum fma(RN(o_s r_s), inv); G over 128
 * lanes; one split copied. */
static void ref_vllm(double *out, double *lse, const skv_partials *sp)
{
	if (sp->S == 1) {
		for (size_t i = 0; i < D; i++)
			out[i] = sp->o[i];
		*lse = sp->lse[0];
		return;
	}
	double M = -(double)FLT_MAX, r[200];
	if (F == SKV_BF16)
		M = -0x1.fep127;
	for (size_t s = 0; s < sp->S; s++)
		M = sp->m[s] > M ? sp->m[s] : M;
	for (size_t s = 0; s < sp->S; s++)
		r[s] = r_mul(F, sp->l[s], r_exp(F, r_sub(F, sp->m[s], M)));
	double G = lanes_sum(r, sp->S, 128), inv = r_div(F, 1.0, r_add(F, G, ref_round(F, 1e-6)));
	for (size_t i = 0; i < D; i++) {
		out[i] = 0.0;
		for (size_t s = 0; s < sp->S; s++)
			out[i] = r_fma(F, r_mul(F, sp->o[s * D + i], r[s]), inv, out[i]);
	}
	*lse = r_add(F, M, r_log(F, G));
}

static void test_vllm_vs_mpfr(void **state)
{
	(void)state;
	for (size_t ci = 0; ci < NELEM(combines); ci++)
		for (size_t k = 0; k < NELEM(sizes); k++) {
			F = combines[ci];
			skv_config c = cfg_of(F, SKV_BF16, SKV_FP32, SKV_BASE_E);
			skv_merge_spec m = skv_merge_spec_default();
			m.merge = SKV_MERGE_VLLM;
			m.order = SKV_ORDER_LANES;
			m.threads = 128;
			m.empty = SKV_EMPTY_NONE;
			skv_partials sp;
			CHECK_OK(skv_partials_init(&sp, sizes[k], D));
			fill(&sp, 300 + k + 10 * ci, &c, 0.0, 3.0, NULL);
			double got[D], want[D], gl, wl;
			CHECK_OK(skv_merge_run(got, &gl, &sp, &m, &c));
			ref_vllm(want, &wl, &sp);
			check_row("vllm", sizes[k], got, want, gl, wl);
			skv_partials_free(&sp);
		}
}

/* llama.cpp CPU: (M, S, acc) from (-inf, 0, 0), splits with l == 0
 * skipped, M' = max, so = e(M - M'), sn = e(m_s - M'), acc = fma(acc, so,
 * RN(acc_s sn)), S likewise; out = acc RN(1/S). */
static void ref_running(double *out, double *lse, const skv_partials *sp)
{
	double M = -INFINITY, S = 0.0, acc[D] = {0};
	for (size_t s = 0; s < sp->S; s++) {
		if (sp->l[s] == 0.0)
			continue;
		double Mn = sp->m[s] > M ? sp->m[s] : M;
		double so = r_exp(F, r_sub(F, M, Mn)), sn = r_exp(F, r_sub(F, sp->m[s], Mn));
		for (size_t i = 0; i < D; i++)
			acc[i] = r_fma(F, acc[i], so, r_mul(F, sp->acc[s * D + i], sn));
		S = r_fma(F, S, so, r_mul(F, sp->l[s], sn));
		M = Mn;
	}
	double inv = S != 0.0 ? r_div(F, 1.0, S) : 1.0;
	for (size_t i = 0; i < D; i++)
		out[i] = S != 0.0 ? r_mul(F, acc[i], inv) : acc[i];
	*lse = r_add(F, M, r_log(F, S));
}

static void test_running_vs_mpfr(void **state)
{
	(void)state;
	int holes[200] = {0};
	for (size_t s = 0; s < 200; s += 3)
		holes[s] = 1; /* every third split empty, the first among them */
	for (size_t ci = 0; ci < NELEM(combines); ci++)
		for (size_t k = 0; k < NELEM(sizes); k++)
			for (int h = 0; h < 2; h++) {
				F = combines[ci];
				skv_config c = cfg_of(F, SKV_FP32, SKV_FP32, SKV_BASE_E);
				skv_merge_spec m = skv_merge_spec_default();
				m.merge = SKV_MERGE_RUNNING;
				m.norm = SKV_NORM_RCP;
				skv_partials sp;
				CHECK_OK(skv_partials_init(&sp, sizes[k], D));
				fill(&sp, 400 + k + 10 * ci, &c, 0.0, 3.0, h ? holes : NULL);
				double got[D], want[D], gl, wl;
				CHECK_OK(skv_merge_run(got, &gl, &sp, &m, &c));
				ref_running(want, &wl, &sp);
				check_row(h ? "running with holes" : "running", sizes[k], got, want, gl, wl);
				skv_partials_free(&sp);
			}
}

/* The lanes order on the one-pass rule: its exp-sum strided over the
 * lanes and folded; the weighted sum stays in split order. A power of two
 * is required. */
static void test_lanes_order(void **state)
{
	(void)state;
	F = SKV_FP32;
	skv_config c = cfg_of(SKV_FP32, SKV_FP32, SKV_FP32, SKV_BASE_E);
	skv_partials sp;
	CHECK_OK(skv_partials_init(&sp, 300, D));
	fill(&sp, 77, &c, 0.0, 2.0, NULL);
	const unsigned Ts[] = {1, 2, 4, 32, 64, 128, 512};
	for (size_t k = 0; k < NELEM(Ts); k++) {
		skv_merge_spec m = skv_merge_spec_default();
		m.order = SKV_ORDER_LANES;
		m.threads = Ts[k];
		double got[D], gl, e[300];
		CHECK_OK(skv_merge_run(got, &gl, &sp, &m, &c));
		double M = -INFINITY;
		for (size_t s = 0; s < sp.S; s++)
			M = sp.lse[s] > M ? sp.lse[s] : M;
		for (size_t s = 0; s < sp.S; s++)
			e[s] = r_exp(F, r_sub(F, sp.lse[s], M));
		double L = r_add(F, r_log(F, lanes_sum(e, sp.S, Ts[k])), M);
		CHECK_BITS("lanes lse", gl, L);
		for (size_t i = 0; i < D; i++) {
			double o = 0.0;
			for (size_t s = 0; s < sp.S; s++)
				o = r_fma(F, r_exp(F, r_sub(F, sp.lse[s], L)), sp.o[s * D + i], o);
			CHECK_BITS("lanes out (split order)", got[i], o);
		}
	}
	/* the lane count matters: with one dominant split the sum is 1 + x
	 * and log(1 + x) ~ x resolves the order in which x was summed */
	fill(&sp, 78, &c, 0.0, 6.0, NULL);
	skv_merge_spec a = skv_merge_spec_default(), b = a;
	b.order = SKV_ORDER_LANES;
	b.threads = 32;
	double oa[D], ob[D], la, lb;
	CHECK_OK(skv_merge_run(oa, &la, &sp, &a, &c));
	CHECK_OK(skv_merge_run(ob, &lb, &sp, &b, &c));
	assert_true(la != lb);
	b.threads = 24;
	assert_int_equal(skv_merge_run(ob, &lb, &sp, &b, &c), SKV_EINVAL);
	b.threads = 2048;
	assert_int_equal(skv_merge_run(ob, &lb, &sp, &b, &c), SKV_EINVAL);
	skv_partials_free(&sp);
}

/* What each new rule returns with one, several and all splits empty,
 * under the policies that matter: out NaN or not, out all zero or not, and
 * the merged LSE (NaN means NaN). Derived by hand from the formulas. */
static void test_empty_behaviour(void **state)
{
	(void)state;
	enum { FINITE = 0, ZERO = 1, NANOUT = 2 };
	static const struct {
		skv_merge merge;
		skv_empty empty;
		int which;  /* 0: the first split empty, 1: every other, 2: all */
		int out;    /* FINITE, ZERO or NANOUT */
		int lse_fin; /* 1: finite LSE expected, else `lse` */
		double lse;
	} w[] = {
		{SKV_MERGE_ONEPASS_NORM, SKV_EMPTY_FA3, 0, FINITE, 1, 0},
		{SKV_MERGE_ONEPASS_NORM, SKV_EMPTY_FA3, 1, FINITE, 1, 0},
		{SKV_MERGE_ONEPASS_NORM, SKV_EMPTY_FA3, 2, ZERO, 0, -INFINITY},
		{SKV_MERGE_ONEPASS_NORM, SKV_EMPTY_GUARD, 2, ZERO, 0, -INFINITY},
		/* no substitute: e = exp(NaN), sum NaN, inv 0, w NaN skipped */
		{SKV_MERGE_ONEPASS_NORM, SKV_EMPTY_NONE, 2, ZERO, 0, NAN},
		{SKV_MERGE_RATIO, SKV_EMPTY_GUARD, 0, FINITE, 1, 0},
		{SKV_MERGE_RATIO, SKV_EMPTY_GUARD, 1, FINITE, 1, 0},
		{SKV_MERGE_RATIO, SKV_EMPTY_GUARD, 2, ZERO, 0, -INFINITY},
		{SKV_MERGE_RATIO, SKV_EMPTY_NONE, 2, NANOUT, 0, NAN},
		{SKV_MERGE_VLLM, SKV_EMPTY_NONE, 0, FINITE, 1, 0},
		{SKV_MERGE_VLLM, SKV_EMPTY_NONE, 1, FINITE, 1, 0},
		/* M starts at -FLT_MAX: weights 0, G = 0, out 0, L = M + log 0 */
		{SKV_MERGE_VLLM, SKV_EMPTY_NONE, 2, ZERO, 0, -INFINITY},
		{SKV_MERGE_VLLM, SKV_EMPTY_GUARD, 2, ZERO, 0, -INFINITY},
		{SKV_MERGE_RUNNING, SKV_EMPTY_GUARD, 0, FINITE, 1, 0},
		{SKV_MERGE_RUNNING, SKV_EMPTY_GUARD, 1, FINITE, 1, 0},
		{SKV_MERGE_RUNNING, SKV_EMPTY_GUARD, 2, ZERO, 0, -INFINITY},
		/* unguarded, an empty first split merges -inf - -inf */
		{SKV_MERGE_RUNNING, SKV_EMPTY_NONE, 0, NANOUT, 0, NAN},
		{SKV_MERGE_RUNNING, SKV_EMPTY_NONE, 2, NANOUT, 0, NAN},
	};
	skv_config c = cfg_of(SKV_FP32, SKV_FP32, SKV_FP32, SKV_BASE_E);
	for (size_t k = 0; k < NELEM(w); k++) {
		int empty[8] = {0};
		for (size_t s = 0; s < 8; s++)
			empty[s] = w[k].which == 2 || (w[k].which == 1 ? s % 2 == 1 : s == 0);
		skv_partials sp;
		CHECK_OK(skv_partials_init(&sp, 8, D));
		fill(&sp, 500 + k, &c, 0.0, 2.0, empty);
		skv_merge_spec m = skv_merge_spec_default();
		m.merge = w[k].merge;
		m.empty = w[k].empty;
		double out[D], lse;
		CHECK_OK(skv_merge_run(out, &lse, &sp, &m, &c));
		int nan = 0, zero = 1;
		for (size_t i = 0; i < D; i++) {
			nan |= isnan(out[i]) != 0;
			zero &= out[i] == 0.0;
		}
		int got = nan ? NANOUT : zero ? ZERO : FINITE;
		if (got != w[k].out)
			fail_msg("%s:%d: %s/%s case %d: output kind %d, want %d", __FILE__, __LINE__,
				 skv_merge_name(w[k].merge), skv_empty_name(w[k].empty), w[k].which, got, w[k].out);
		int lse_ok = w[k].lse_fin ? isfinite(lse) : isnan(w[k].lse) ? isnan(lse) : lse == w[k].lse;
		if (!lse_ok)
			fail_msg("%s:%d: %s/%s case %d: lse %a", __FILE__, __LINE__, skv_merge_name(w[k].merge),
				 skv_empty_name(w[k].empty), w[k].which, lse);
		skv_partials_free(&sp);
	}
}

/* Names and parsing of the new rules, the order and the normalisations;
 * m, l, acc required by the rules that read them. */
static void test_names_and_needs(void **state)
{
	(void)state;
	static const char *const names[] = {"onepass-norm", "ratio", "vllm", "running"};
	static const skv_merge ids[] = {SKV_MERGE_ONEPASS_NORM, SKV_MERGE_RATIO, SKV_MERGE_VLLM, SKV_MERGE_RUNNING};
	for (size_t i = 0; i < NELEM(names); i++) {
		skv_merge m;
		CHECK_OK(skv_merge_parse(&m, names[i]));
		assert_int_equal(m, ids[i]);
		assert_string_equal(skv_merge_name(ids[i]), names[i]);
	}
	skv_order o;
	CHECK_OK(skv_order_parse(&o, "lanes"));
	assert_int_equal(o, SKV_ORDER_LANES);
	skv_norm n;
	CHECK_OK(skv_norm_parse(&n, "rcp"));
	assert_int_equal(n, SKV_NORM_RCP);
	assert_int_equal(skv_norm_parse(&n, "mul"), SKV_EINVAL);
	assert_null(skv_norm_name((skv_norm)SKV_NNORMS));
	skv_config c = cfg_of(SKV_FP32, SKV_FP32, SKV_FP32, SKV_BASE_E);
	skv_partials sp;
	CHECK_OK(skv_partials_init(&sp, 3, D));
	fill(&sp, 9, &c, 0.0, 1.0, NULL);
	double *keep = sp.m, out[D], lse;
	sp.m = NULL;
	skv_merge_spec m = skv_merge_spec_default();
	m.merge = SKV_MERGE_VLLM;
	assert_int_equal(skv_merge_run(out, &lse, &sp, &m, &c), SKV_EINVAL);
	m.merge = SKV_MERGE_RUNNING;
	assert_int_equal(skv_merge_run(out, &lse, &sp, &m, &c), SKV_EINVAL);
	m.merge = SKV_MERGE_RATIO; /* reads o and lse only */
	CHECK_OK(skv_merge_run(out, &lse, &sp, &m, &c));
	m.norm = (skv_norm)SKV_NNORMS;
	assert_int_equal(skv_merge_run(out, &lse, &sp, &m, &c), SKV_EINVAL);
	sp.m = keep;
	skv_partials_free(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_onepass_norm_vs_mpfr), cmocka_unit_test(test_ratio_vs_mpfr),
		cmocka_unit_test(test_vllm_vs_mpfr),	    cmocka_unit_test(test_running_vs_mpfr),
		cmocka_unit_test(test_lanes_order),	    cmocka_unit_test(test_empty_behaviour),
		cmocka_unit_test(test_names_and_needs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
