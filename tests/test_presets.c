/* test_presets.c - each production preset's configuration and empty-split behaviour, pinned from shared/notes/systems.md. */
#include "testutil.h"
#include "app.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Expected profiles, written from the systems notes (not from preset.c):
 * input, compute, p, partial, lse, combine, output, base, merge, order,
 * threads, empty, round_states, on the default input. */
static const struct {
	const char *name;
	skv_config cfg;
	skv_merge merge;
	skv_order order;
	unsigned threads;
	skv_empty empty;
	int round_states;
} want[] = {
	{"fa2", {SKV_BF16, SKV_FP32, SKV_BF16, SKV_FP32, SKV_FP32, SKV_FP32, SKV_BF16, SKV_BASE_E2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 1, SKV_EMPTY_FA2, 0},
	{"fa3", {SKV_BF16, SKV_FP32, SKV_BF16, SKV_FP32, SKV_FP32, SKV_FP32, SKV_BF16, SKV_BASE_E2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 1, SKV_EMPTY_FA3, 0},
	{"flashinfer", {SKV_BF16, SKV_FP32, SKV_FP32, SKV_BF16, SKV_FP32, SKV_FP32, SKV_BF16, SKV_BASE_2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 SKV_MERGE_PAIRWISE, SKV_ORDER_STRIDED, 8, SKV_EMPTY_NONE, 1},
	{"tilelang", {SKV_FP16, SKV_FP32, SKV_FP16, SKV_FP16, SKV_FP16, SKV_FP32, SKV_FP16, SKV_BASE_2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 1, SKV_EMPTY_NONE, 0},
	{"xformers", {SKV_BF16, SKV_FP32, SKV_BF16, SKV_FP32, SKV_FP64, SKV_FP32, SKV_BF16, SKV_BASE_E2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 SKV_MERGE_ONEPASS, SKV_ORDER_TREE, 1, SKV_EMPTY_GUARD, 0},
	{"sglang", {SKV_BF16, SKV_FP32, SKV_FP32, SKV_FP32, SKV_FP32, SKV_FP32, SKV_BF16, SKV_BASE_E, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 SKV_MERGE_PAIRWISE, SKV_ORDER_SEQ, 1, SKV_EMPTY_GUARD, 0},
	{"flex", {SKV_BF16, SKV_FP32, SKV_BF16, SKV_FP32, SKV_FP32, SKV_FP32, SKV_BF16, SKV_BASE_2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 SKV_MERGE_FLEX, SKV_ORDER_SEQ, 1, SKV_EMPTY_GUARD, 0},
	{"exact-fp64", {SKV_FP64, SKV_FP64, SKV_FP64, SKV_FP64, SKV_FP64, SKV_FP64, SKV_FP64, SKV_BASE_E, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 1, SKV_EMPTY_GUARD, 0},
	{"naive-fp16", {SKV_FP16, SKV_FP16, SKV_FP16, SKV_FP16, SKV_FP16, SKV_FP16, SKV_FP16, SKV_BASE_E, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 1, SKV_EMPTY_NONE, 0},
};

static void check_cfg(const char *name, const skv_config *got, const skv_config *w)
{
	if (memcmp(got, w, sizeof *got) != 0)
		fail_msg("%s:%d: preset %s: got input %d compute %d p %d partial %d lse %d combine %d output %d "
			 "base %d", __FILE__, __LINE__, name, got->input, got->compute, got->p, got->partial, got->lse,
			 got->combine, got->output, got->base);
}

static void test_configs_pinned(void **state)
{
	(void)state;
	assert_int_equal(skv_preset_count(), NELEM(want));
	assert_int_equal(SKV_NPRESETS, NELEM(want));
	for (size_t i = 0; i < NELEM(want); i++) {
		const skv_preset *p = skv_preset_find(want[i].name);
		assert_non_null(p);
		assert_ptr_equal(p, skv_preset_at(i)); /* listing order is the table's */
		assert_true(strlen(p->description) > 20);
		skv_config c;
		skv_merge_spec m;
		CHECK_OK(skv_preset_resolve(&c, &m, p, p->cfg.input));
		CHECK_OK(skv_config_check(&c));
		check_cfg(p->name, &c, &want[i].cfg);
		assert_int_equal(m.merge, want[i].merge);
		assert_int_equal(m.order, want[i].order);
		assert_int_equal(m.threads, want[i].threads);
		assert_int_equal(m.empty, want[i].empty);
		assert_int_equal(m.round_states, want[i].round_states);
	}
	assert_null(skv_preset_find("fa4"));
	assert_null(skv_preset_at(NELEM(want)));
}

/* fa2 on fp16 tensors: P and the output follow the input, nothing else moves;
 * flashinfer's partials follow its output. */
static void test_input_follows(void **state)
{
	(void)state;
	skv_config c;
	skv_merge_spec m;
	CHECK_OK(skv_preset_resolve(&c, &m, skv_preset_find("fa2"), SKV_FP16));
	skv_config w = want[0].cfg;
	w.input = w.p = w.output = SKV_FP16;
	check_cfg("fa2/fp16", &c, &w);
	CHECK_OK(skv_preset_resolve(&c, &m, skv_preset_find("flashinfer"), SKV_FP16));
	assert_int_equal(c.partial, SKV_FP16);
	assert_int_equal(c.output, SKV_FP16);
	assert_int_equal(c.p, SKV_FP32); /* FlashInfer keeps P in fp32 */
	assert_int_equal(skv_preset_resolve(&c, &m, NULL, SKV_FP16), SKV_EINVAL);
	assert_int_equal(skv_preset_resolve(&c, &m, skv_preset_find("fa2"), (skv_format)SKV_NFORMATS), SKV_EINVAL);
}

/* Empty-split behaviour of each system: the merged LSE and whether the
 * output is NaN, for one empty split (the first), and for all splits
 * empty; the systems disagree and skv reproduces each. */
static void test_empty_split_behaviour(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int one_nan;      /* output NaN with the first of 8 splits empty */
		double all_lse;   /* merged LSE with every split empty (NaN: NaN) */
		int all_nan;      /* output NaN with every split empty */
	} w[] = {
		{"fa2", 0, INFINITY, 0},	 /* FA2: all-empty row gets LSE +inf (issue 978) */
		{"fa3", 0, -INFINITY, 0},	 /* FA3: skips unwritten rows, LSE -inf */
		{"flashinfer", 1, NAN, 1},	 /* two empty states meet: NaN (issue 4051) */
		{"tilelang", 0, NAN, 1},	 /* no guard: -inf - -inf */
		{"xformers", 0, -INFINITY, 0},	 /* where(l == 0, 0, acc / l), LSE -inf kept */
		{"sglang", 0, -INFINITY, 0},	 /* empty ranges skipped */
		{"flex", 0, -INFINITY, 0},	 /* rows with max -inf masked */
		{"exact-fp64", 0, -INFINITY, 0}, /* skv's guard */
		{"naive-fp16", 0, NAN, 1},
	};
	tcase t;
	tcase_init(&t, 1, 512, 16, SKV_DIST_GAUSSIAN, 0.5, SKV_BF16, 61, 0);
	const size_t S = 8, d = 16;
	size_t one[9] = {0, 0};
	CHECK_OK(skv_bounds_even(one + 1, 512, 7));
	for (size_t i = 0; i < NELEM(w); i++) {
		const skv_preset *p = skv_preset_find(w[i].name);
		skv_config c;
		skv_merge_spec m;
		CHECK_OK(skv_preset_resolve(&c, &m, p, SKV_BF16));
		skv_partials raw, st;
		CHECK_OK(skv_partials_init(&raw, S, d));
		CHECK_OK(skv_partials_init(&st, S, d));
		/* one empty split (the first) */
		CHECK_OK(skv_split_kernel(&raw, &t.p, 0, one, S, 128, 0.0, &c));
		CHECK_OK(skv_partials_store(&st, &raw, &c));
		double out[16], lse;
		CHECK_OK(skv_merge_run(out, &lse, &st, &m, &c));
		int nan = 0;
		for (size_t k = 0; k < d; k++)
			nan |= isnan(out[k]) != 0;
		if (nan != w[i].one_nan)
			fail_msg("%s:%d: %s with one empty split: output NaN %d, want %d", __FILE__, __LINE__,
				 w[i].name, nan, w[i].one_nan);
		if (!w[i].one_nan)
			CHECK_LE(w[i].name, norm_err(out, t.out, d, c.output), 0.02);
		/* every split empty: what the kernel writes for an empty split */
		for (size_t s = 0; s < S; s++) {
			st.lse[s] = st.m[s] = -INFINITY;
			st.l[s] = 0.0;
			for (size_t k = 0; k < d; k++)
				st.o[s * d + k] = st.acc[s * d + k] = 0.0;
		}
		CHECK_OK(skv_merge_run(out, &lse, &st, &m, &c));
		nan = 0;
		for (size_t k = 0; k < d; k++)
			nan |= isnan(out[k]) != 0;
		if (nan != w[i].all_nan || !(isnan(w[i].all_lse) ? isnan(lse) : lse == w[i].all_lse))
			fail_msg("%s:%d: %s all empty: output NaN %d lse %a, want NaN %d lse %a", __FILE__, __LINE__,
				 w[i].name, nan, lse, w[i].all_nan, w[i].all_lse);
		if (!nan)
			for (size_t k = 0; k < d; k++)
				CHECK_BITS("all-empty output is zero", out[k], 0.0);
		skv_partials_free(&raw);
		skv_partials_free(&st);
	}
	tcase_free(&t);
}

/* The presets are not all the same arithmetic: on one problem at 64 splits
 * with LSEs near 500, the fp16-LSE preset (tilelang) is far worse than the
 * fp64-LSE one (xformers) and exact-fp64 is near roundoff. */
static void test_presets_differ(void **state)
{
	(void)state;
	tcase t16, t64;
	tcase_init(&t16, 1, 4096, 64, SKV_DIST_GAUSSIAN, 0.5, SKV_FP16, 71, 0);
	tcase_init(&t64, 1, 4096, 64, SKV_DIST_GAUSSIAN, 0.5, SKV_FP64, 71, 0);
	size_t b[65];
	CHECK_OK(skv_bounds_even(b, 4096, 64));
	skv_config c;
	skv_merge_spec m;
	CHECK_OK(skv_preset_resolve(&c, &m, skv_preset_find("tilelang"), SKV_FP16));
	double e_tl = run_merge(&t16, 0, b, 64, 128, 500.0, &c, &m, NULL, NULL);
	CHECK_OK(skv_preset_resolve(&c, &m, skv_preset_find("exact-fp64"), SKV_FP64));
	double e_ex = run_merge(&t64, 0, b, 64, 128, 500.0, &c, &m, NULL, NULL);
	CHECK_GE("tilelang at LSE 500", e_tl, 1e-2);
	CHECK_LE("exact-fp64 at LSE 500", e_ex, 1e-12);
	tcase_free(&t16);
	tcase_free(&t64);
}

/* --preset on an experiment: a list sweeps the presets, the fields a
 * preset fixes collapse to the preset's, an explicit flag overrides one. */
static void test_preset_flags(void **state)
{
	(void)state;
	skv_app_spec s;
	skv_app_error e = {NULL};
	assert_int_equal(skv_app_spec_init(&s, "split-count", &e), SKV_APP_EXIT_OK);
	char *argv[] = {"--preset=fa2,tilelang", "--partial=fp64", "--splits=4,8", "--ctx=64"};
	assert_int_equal(skv_app_spec_args(&s, 4, argv, &e), SKV_APP_EXIT_OK);
	assert_int_equal(skv_app_spec_check(&s, &e), SKV_APP_EXIT_OK);
	/* split-count's own lse sweep (4 formats) collapsed: 2 presets x 2 splits */
	assert_int_equal(skv_app_spec_npoints(&s), 4);
	skv_app_value v[SKV_APP_NPARAMS];
	for (size_t pt = 0; pt < 4; pt++) {
		skv_app_spec_values(&s, pt, v);
		const skv_preset *p = skv_preset_at(v[SKV_APP_P_PRESET].u - 1);
		assert_non_null(p);
		assert_int_equal(v[SKV_APP_P_PARTIAL].u, SKV_FP64); /* the explicit flag wins */
		assert_int_equal(v[SKV_APP_P_LSE].u, p->cfg.lse);
		assert_int_equal(v[SKV_APP_P_INPUT].u, p->cfg.input);
		assert_int_equal(v[SKV_APP_P_MERGE].u, p->merge.merge);
		assert_int_equal(v[SKV_APP_P_LSE_BASE].u, p->cfg.base);
	}
	skv_app_spec_free(&s);
	/* --input with fa2 moves P and the output with it */
	assert_int_equal(skv_app_spec_init(&s, "split-count", &e), SKV_APP_EXIT_OK);
	char *argv2[] = {"--preset=fa2", "--input=fp16", "--splits=2", "--ctx=64"};
	assert_int_equal(skv_app_spec_args(&s, 4, argv2, &e), SKV_APP_EXIT_OK);
	skv_app_spec_values(&s, 0, v);
	assert_int_equal(v[SKV_APP_P_P].u, SKV_FP16);
	assert_int_equal(v[SKV_APP_P_OUTPUT].u, SKV_FP16);
	assert_int_equal(v[SKV_APP_P_PARTIAL].u, SKV_FP32);
	skv_app_spec_free(&s);
	/* an unknown preset is named */
	assert_int_equal(skv_app_spec_init(&s, "split-count", &e), SKV_APP_EXIT_OK);
	char *argv3[] = {"--preset=fa4"};
	assert_int_equal(skv_app_spec_args(&s, 1, argv3, &e), SKV_APP_EXIT_USAGE);
	assert_non_null(strstr(skv_app_error_text(&e), "'fa4'"));
	skv_app_error_free(&e);
	skv_app_spec_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_configs_pinned),
		cmocka_unit_test(test_input_follows),
		cmocka_unit_test(test_empty_split_behaviour),
		cmocka_unit_test(test_presets_differ),
		cmocka_unit_test(test_preset_flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
