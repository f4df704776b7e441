/* test_grade.c - skv export then skv grade: zero error against the exporting preset, identified first; dumps numpy and a stdlib writer made, against float64 references computed apart; the merge alone; identify over split counts; the report's formats; the same bytes on any thread count. */
#include <omp.h>

#include "grade_test.h"

/* ------------------------------------------------------------ round trips */

/* The rows skv grade reports for head h of the exported problem, computed
 * here with the library alone: the same draw (skv_problem_init, two query
 * rows over one KV head, skv run's seed), the same cut, the preset resolved
 * in full, the truth, the kernel, storage, merge and errors. */
static void check_against_library(const graded *g, const skv_preset *pr, size_t n, size_t d, size_t S)
{
	tcase t;
	size_t b[16];
	tcase_init(&t, 2, n, d, SKV_DIST_GAUSSIAN, 0.5, SKV_FP32, skv_seed_mix(1, 0), 0);
	CHECK_OK(layout_bounds(b, n, S, LAYOUT_HOLES, seed_layout(1, 0), 128, 0));
	skv_config c;
	skv_merge_spec m;
	CHECK_OK(skv_preset_resolve_full(&c, &m, pr, SKV_FP32, (unsigned)d));
	c.math = SKV_MATH_EXACT;
	for (size_t h = 0; h < 2; h++) {
		double out[128];
		skv_errors want;
		run_merge(&t, h, b, S, c.acc ? 1 : 128, 0.0, &c, &m, NULL, out);
		CHECK_OK(skv_errors_compute(&want, out, t.out + h * d, d, c.output));
		const grade_row *w = row_of(g, GI_OUT, h, GRADE_NO_SPLIT);
		CHECK_SAME(pr->name, h, w->err.max_abs, want.max_abs);
		CHECK_SAME(pr->name, h, w->err.norm_rel, want.norm_rel);
		CHECK_SAME(pr->name, h, w->err.ulp, want.ulp);
	}
	tcase_free(&t);
}

/* The candidate of preset i reproduces the dump exactly and ranks first
 * (or tied with the first on every key). */
static void check_identified(const graded *g, size_t i)
{
	const grade_ranking *id = &g->id;
	size_t at = 0;
	while (at < id->n && id->c[at].preset != i)
		at++;
	assert_true(at < id->n);
	const grade_cand *c = &id->c[at];
	if (c->status != SKV_OK || c->same_all != c->total_all || c->ulp[3] != 0 || c->normwise != 0)
		fail_msg("%s: %zu of %zu identical, max %g ulp, normwise %g (%s)", skv_preset_at(i)->name,
			 c->same_all, c->total_all, c->ulp[3], c->normwise, c->why);
	for (size_t j = 1; j <= at; j++)
		if (!id->c[j].tie)
			fail_msg("%s is identical but ranks %zu behind %s, not tied", skv_preset_at(i)->name, at + 1,
				 skv_preset_at(id->c[j - 1].preset)->name);
}

/* fp32 inputs, two query heads over one KV head, 300 keys, head_dim 128,
 * six splits with every odd one empty: each preset without a KV cache exported,
 * then graded (its errors as the library computes them) and identified
 * (itself first, 100% bit-identical). */
static void test_roundtrip_every_preset(void **state)
{
	(void)state;
	char path[128];
	export_opts o = export_defaults_for_test(in_dir(path, sizeof path, "rt.safetensors"));
	o.ctx = 300, o.heads = 2, o.kv_heads = 1, o.splits = 6, o.layout = LAYOUT_HOLES;
	export_summary sum;
	G_OK(export_run(&sum, &o, &err));
	assert_int_equal(sum.npresets, exported_presets());
	assert_int_equal(sum.ntensors, 4 + 4 * exported_presets());
	size_t distinct = 0;
	for (size_t i = 0; i < skv_preset_count(); i++) {
		if (!exported_preset(skv_preset_at(i)))
			continue; /* not exported: a cache's kernel is its base's; fa3-fp8 takes e4m3 only */
		graded g;
		grade_it(&g, path, skv_preset_at(i)->name, NULL, 1);
		check_identified(&g, i);
		check_against_library(&g, skv_preset_at(i), 300, 128, 6);
		/* the exporting preset's own base, told from the values */
		assert_int_equal(g.r.base, skv_preset_at(i)->cfg.base == SKV_BASE_2 ? SKV_BASE_2 : SKV_BASE_E);
		assert_true(g.r.detected);
		distinct += !g.id.c[1].tie;
		/* the fp64 preset merges in fp64 and rounds once to its fp32 output:
		 * against the exact merge of its partials (the empty splits weigh
		 * nothing) within half an ulp and a hair */
		if (strcmp(skv_preset_at(i)->name, "exact-fp64") == 0)
			for (size_t h = 0; h < 2; h++) {
				const grade_row *mo = row_of(&g, GI_MERGE_OUT, h, GRADE_NO_SPLIT);
				const grade_row *ml = row_of(&g, GI_MERGE_LSE, h, GRADE_NO_SPLIT);
				if (!(mo->err.ulp <= 0.5001) || !(ml->err.max_abs <= 1e-13))
					fail_msg("exact-fp64 head %zu: merge_out %a ulp, merge_lse %a", h, mo->err.ulp,
						 ml->err.max_abs);
			}
		graded_free(&g);
	}
	/* fp32 separates all but the pairs that are the same configuration at
	 * fp32 inputs (sglang and sglang-gqa differ only in P's cast to the
	 * input type) */
	assert_true(distinct >= exported_presets() - 2);
}

/* bf16, GQA (four query heads over two KV heads), a random layout, a folder
 * of .npy files: each preset's manifest (base given) and the folder with a
 * prefix (base told) grade alike and identify the preset. */
static void test_roundtrip_npy_folder(void **state)
{
	(void)state;
	static const char *const presets[] = {"fa2", "flex", "tilelang", "llamacpp-cpu", "xformers"};
	char path[128], man[160];
	export_opts o = export_defaults_for_test(in_dir(path, sizeof path, "gqa"));
	o.ctx = 200, o.head_dim = 64, o.heads = 4, o.kv_heads = 2, o.splits = 5, o.layout = LAYOUT_RANDOM;
	o.input = SKV_BF16, o.all = 0;
	memset(o.use, 0, sizeof o.use);
	for (size_t k = 0; k < COUNT(presets); k++)
		for (size_t i = 0; i < skv_preset_count(); i++)
			o.use[i] |= strcmp(skv_preset_at(i)->name, presets[k]) == 0;
	export_summary sum;
	G_OK(export_run(&sum, &o, &err));
	assert_int_equal(sum.npresets, COUNT(presets));
	/* KV head 0 is skv run's problem of seed 1, trial 0 */
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 2, 200, 64, SKV_DIST_GAUSSIAN, 0.5, SKV_BF16, skv_seed_mix(1, 0)));
	for (size_t k = 0; k < COUNT(presets); k++) {
		graded a, b;
		snprintf(man, sizeof man, "%s/%s.manifest", path, presets[k]);
		grade_it(&a, NULL, NULL, man, 1);
		grade_raw(&b, path, presets[k], NULL, 0, TENSOR_BF16);
		assert_false(a.r.detected);
		assert_true(b.r.detected);
		assert_int_equal(a.r.base, b.r.base);
		assert_int_equal(a.r.nrows, b.r.nrows);
		for (size_t r = 0; r < a.r.nrows; r++)
			CHECK_SAME(presets[k], r, a.r.rows[r].err.norm_rel, b.r.rows[r].err.norm_rel);
		check_identified(&a, (size_t)(skv_preset_find(presets[k]) - skv_preset_at(0)));
		for (size_t i = 0; i < 2 * 64; i++)
			CHECK_SAME("q of KV head 0", i, a.dp.q[i], p.q[i]);
		for (size_t i = 0; i < 200 * 64; i++)
			CHECK_SAME("k of KV head 0", i, a.dp.k[i], p.k[i]);
		assert_int_equal(a.dp.H, 4);
		assert_int_equal(a.dp.Hkv, 2);
		graded_free(&a);
		graded_free(&b);
	}
	skv_problem_free(&p);
}

/* ---------------------------------------------------- files skv did not write */

/* numpy's own float16 arithmetic (tests/data/make_grade.py): every item's
 * largest error as skv grade measures it against the certified truth
 * equals numpy's float64 measurement to far better than the errors, and no
 * error is below its floor (each element of a float16 tensor is at least as
 * far from the truth as the truth rounded to float16). */
static void test_numpy_float16(void **state)
{
	(void)state;
	char path[128], args[160], *line = NULL, item[32], sp[16], hex[64];
	size_t cap = 0, n = 0, head;
	in_dir(path, sizeof path, "np");
	mkdir(path, 0755);
	snprintf(args, sizeof args, "'%s'", path);
	data_script("make_grade.py", args);
	graded g;
	grade_it(&g, path, NULL, NULL, 1);
	assert_true(g.r.detected);
	assert_int_equal(g.r.base, SKV_BASE_E);
	assert_int_equal(g.dp.fmt[GT_OUT], SKV_FP16);
	char exp[160];
	snprintf(exp, sizeof exp, "%s/grade_expected.txt", path);
	FILE *f = fopen(exp, "r");
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		assert_int_equal(sscanf(line, "%31s %zu %15s %63s", item, &head, sp, hex), 4);
		int it = 0;
		while (it < GI_N && strcmp(grade_item_name(it), item) != 0)
			it++;
		assert_true(it < GI_N);
		const grade_row *w = row_of(&g, it, head, sp[0] == '-' ? GRADE_NO_SPLIT : strtoul(sp, NULL, 10));
		const double want = strtod(hex, NULL);
		if (!(fabs(w->err.max_abs - want) <= 1e-12) || !(want > 1e-6))
			fail_msg("%s head %zu split %s: skv grade %a, numpy float64 %a", item, head, sp, w->err.max_abs, want);
		n++;
	}
	free(line);
	fclose(f);
	assert_int_equal(n, 4 * (4 + 2 * 3));
	for (size_t i = 0; i < g.r.nrows; i++) {
		const grade_row *w = &g.r.rows[i];
		if (!(w->err.max_abs >= w->floor.max_abs && w->err.norm_rel >= w->floor.norm_rel &&
		      w->err.ulp >= w->floor.ulp && w->err.max_rel >= w->floor.max_rel))
			fail_msg("row %zu (%s): an error below its floor (%a < %a)", i, grade_item_name(w->item),
				 w->err.norm_rel, w->floor.norm_rel);
	}
	/* identify ran every preset that takes head_dim 16 */
	size_t ran = 0;
	for (size_t i = 0; i < g.id.n; i++)
		ran += g.id.c[i].status == SKV_OK;
	assert_int_equal(ran, no_kv_presets() - 3); /* fa3-fp8 (e4m3 only), and FlashInfer's merge dispatches 64..512 only */
	graded_free(&g);
}

/* A .safetensors file from tests/data's standard-library writer: out and
 * lse are the float64 attention of the stored float16 inputs rounded once
 * to float32, so their error is their floor, metric for metric. */
static void test_stdlib_safetensors(void **state)
{
	(void)state;
	char args[160], path[128];
	snprintf(args, sizeof args, "grade '%s'", dir);
	data_script("make_safetensors.py", args);
	graded g;
	grade_it(&g, in_dir(path, sizeof path, "grade.safetensors"), NULL, NULL, 0);
	assert_int_equal(g.dp.fmt[GT_Q], SKV_FP16);
	assert_int_equal(g.r.nrows, 4);
	for (size_t i = 0; i < g.r.nrows; i++) {
		const grade_row *w = &g.r.rows[i];
		CHECK_SAME(grade_item_name(w->item), i, w->err.max_abs, w->floor.max_abs);
		CHECK_SAME(grade_item_name(w->item), i, w->err.ulp, w->floor.ulp);
		assert_true(w->err.max_abs > 0);
	}
	graded_free(&g);
}

/* ------------------------------------------------------------ the merge */

/* Writes the one-head dump: q = 0 (d = 1), four keys, v = 1, 1, 3, 3, two
 * splits; partial 1 says 3.5 instead of 3, out says 2, lse log 4 (e) or 2
 * (base 2). The true attention is 2 (equal scores); the exact merge of the
 * given partials is (1 + 3.5) / 2 = 2.25 whatever the base (the two LSEs
 * are equal). */
static void write_merge_dump(const char *file, int base2)
{
	tensor t[8];
	const size_t s1[1] = {1}, skv[2] = {4, 1}, spo[2] = {2, 1}, sb[1] = {3}, so[1] = {1};
	const double L = base2 ? 1.0 : log(2.0);
	CHECK_OK(tensor_init(&t[0], "q", TENSOR_F32, 1, s1, (double[]){0}, &err));
	CHECK_OK(tensor_init(&t[1], "k", TENSOR_F32, 2, skv, (double[]){1, -2, 0.5, 4}, &err));
	CHECK_OK(tensor_init(&t[2], "v", TENSOR_F32, 2, skv, (double[]){1, 1, 3, 3}, &err));
	CHECK_OK(tensor_init(&t[3], "partial_out", TENSOR_F32, 2, spo, (double[]){1, 3.5}, &err));
	CHECK_OK(tensor_init(&t[4], "partial_lse", TENSOR_F64, 1, spo, (double[]){L, L}, &err));
	CHECK_OK(tensor_init(&t[5], "out", TENSOR_F32, 1, so, (double[]){2}, &err));
	CHECK_OK(tensor_init(&t[6], "lse", TENSOR_F64, 0, NULL, (double[]){base2 ? 2.0 : log(4.0)}, &err));
	CHECK_OK(tensor_init(&t[7], "splits", TENSOR_I64, 1, sb, (double[]){0, 2, 4}, &err));
	G_OK(safetensors_write(file, t, 8, NULL, 0, &err));
	for (int i = 0; i < 8; i++)
		tensor_free(&t[i]);
}

static void test_merge_alone(void **state)
{
	(void)state;
	char path[128];
	for (int base2 = 0; base2 < 2; base2++) {
		write_merge_dump(in_dir(path, sizeof path, "merge.safetensors"), base2);
		graded g;
		grade_it(&g, path, NULL, NULL, 0);
		assert_int_equal(g.r.base, base2 ? SKV_BASE_2 : SKV_BASE_E);
		CHECK_SAME("out", 0, row_of(&g, GI_OUT, 0, GRADE_NO_SPLIT)->err.max_abs, 0.0);
		CHECK_SAME("merge_out", 0, row_of(&g, GI_MERGE_OUT, 0, GRADE_NO_SPLIT)->err.max_abs, 0.25);
		CHECK_SAME("partial_out 0", 0, row_of(&g, GI_PARTIAL_OUT, 0, 0)->err.max_abs, 0.0);
		CHECK_SAME("partial_out 1", 0, row_of(&g, GI_PARTIAL_OUT, 0, 1)->err.max_abs, 0.5);
		/* the LSEs: log 2 (or 1) per split and log 4 (or 2) merged, to the
		 * rounding of the stored natural values and of RN(ln 2) */
		assert_true(row_of(&g, GI_MERGE_LSE, 0, GRADE_NO_SPLIT)->err.max_abs <= 1e-15);
		assert_true(row_of(&g, GI_PARTIAL_LSE, 0, 1)->err.max_abs <= 1e-16);
		assert_true(row_of(&g, GI_LSE, 0, GRADE_NO_SPLIT)->err.max_abs <= 1e-15);
		graded_free(&g);
	}
}

/* NaN and infinities in the outputs are graded, not refused: counted, and
 * their errors NaN or infinite (never a silent finite number). */
static void test_nonfinite_outputs(void **state)
{
	(void)state;
	char path[128], *out, *e;
	tensor t[6];
	const size_t s1[1] = {1}, skv[2] = {4, 1}, so[1] = {1}, spo[2] = {2, 1}, sb[1] = {3};
	CHECK_OK(tensor_init(&t[0], "q", TENSOR_F32, 1, s1, (double[]){0.5}, &err));
	CHECK_OK(tensor_init(&t[1], "k", TENSOR_F32, 2, skv, (double[]){1, -2, 0.5, 4}, &err));
	CHECK_OK(tensor_init(&t[2], "v", TENSOR_F32, 2, skv, (double[]){1, 1, 3, 3}, &err));
	CHECK_OK(tensor_init(&t[3], "out", TENSOR_F32, 1, so, (double[]){NAN}, &err));
	CHECK_OK(tensor_init(&t[4], "partial_lse", TENSOR_F32, 1, spo, (double[]){INFINITY, -INFINITY}, &err));
	CHECK_OK(tensor_init(&t[5], "splits", TENSOR_I64, 1, sb, (double[]){0, 2, 4}, &err));
	G_OK(safetensors_write(in_dir(path, sizeof path, "nonfinite.safetensors"), t, 6, NULL, 0, &err));
	for (int i = 0; i < 6; i++)
		tensor_free(&t[i]);
	graded g;
	grade_raw(&g, path, NULL, NULL, 0, TENSOR_NONE);
	const grade_row *o = row_of(&g, GI_OUT, 0, GRADE_NO_SPLIT), *l0 = row_of(&g, GI_PARTIAL_LSE, 0, 0);
	const grade_row *l1 = row_of(&g, GI_PARTIAL_LSE, 0, 1);
	assert_int_equal(o->nnan, 1);
	assert_true(isnan(o->err.max_abs) && isnan(o->err.norm_rel));
	assert_int_equal(l0->npinf, 1);
	assert_true(isinf(l0->err.max_abs));
	assert_int_equal(l1->nninf, 1);
	assert_true(isinf(l1->err.max_abs)); /* split 1 has keys: -inf is wrong */
	assert_int_equal(g.r.nlse, 0);          /* no finite LSE: no base to tell */
	graded_free(&g);
	char *argv[] = {"grade", path, NULL};
	assert_int_equal(run_cmd(&out, &e, 0, argv), 0);
	assert_non_null(strstr(out, "1 +inf, 1 -inf"));
	assert_non_null(strstr(out, "  1 nan"));
	assert_non_null(strstr(out, "no finite LSE to tell it from"));
	free(out), free(e);
}

/* -------------------------------------------------------------- identify */

/* A dump with only its inputs and final output: identify over split counts
 * finds the exporting preset at the count it ran. */
static void test_identify_split_counts(void **state)
{
	(void)state;
	char path[128], val[200];
	export_opts o = export_defaults_for_test(in_dir(path, sizeof path, "counts.safetensors"));
	o.ctx = 256, o.head_dim = 64, o.splits = 4, o.all = 0;
	memset(o.use, 0, sizeof o.use);
	const size_t fa2 = (size_t)(skv_preset_find("xformers") - skv_preset_at(0));
	o.use[fa2] = 1;
	export_summary sum;
	G_OK(export_run(&sum, &o, &err));
	grade_sources s;
	grade_sources_init(&s);
	static const char *const names[] = {"q", "k", "v", "xformers.out", "xformers.lse"};
	static const int ids[] = {GT_Q, GT_K, GT_V, GT_OUT, GT_LSE};
	for (size_t i = 0; i < COUNT(ids); i++) {
		snprintf(val, sizeof val, "%s:%s", path, names[i]);
		G_OK(grade_sources_set(&s, ids[i], val, NULL, &err));
	}
	grade_dump dp;
	grade_result r;
	grade_ranking id;
	G_OK(grade_load(&dp, &s, &err));
	assert_null(dp.bounds);
	G_OK(grade_run(&r, &dp, &err));
	const size_t counts[] = {1, 2, 4, 8};
	const grade_id_opts io = {&exact_emu, counts, COUNT(counts), LAYOUT_EVEN, NULL, 0};
	G_OK(grade_identify(&id, &dp, r.base, &io, &err));
	assert_int_equal(id.n, COUNT(counts) * no_kv_presets()); /* the default: the presets without a KV cache */
	assert_int_equal(id.c[0].preset, fa2);
	assert_int_equal(id.c[0].S, 4);
	assert_int_equal(id.c[0].same_all, id.c[0].total_all);
	assert_int_equal(id.c[0].total_all, 64 + 1);
	assert_false(id.c[1].tie);
	grade_ranking_free(&id);
	grade_result_free(&r);
	grade_dump_free(&dp);
	grade_sources_free(&s);
}

/* --------------------------------------------------------- the commands */

/* The report in each format through the command: CSV with a header and
 * one row per graded item (or candidate), each with the header's columns;
 * JSON that Python's json module reads; the same bytes on 1, 2 and 3
 * threads. */
/* --gpus: the presets on tensor cores also run with each GPU's model
 * (PRESET@GPU), the others not; an IEEE export is still found first and bit
 * for bit, the h100 runs differ from it; a bad name is refused. */
static void test_identify_gpus(void **state)
{
	(void)state;
	char path[128], *out, *e;
	char *ex[] = {"export", "--ctx=200", "--head-dim=64", "--splits=4", "--input=bf16", "--preset=fa2", NULL, NULL};
	char outflag[160];
	snprintf(outflag, sizeof outflag, "--out=%s", in_dir(path, sizeof path, "gpus.safetensors"));
	ex[6] = outflag;
	assert_int_equal(run_cmd(&out, &e, 1, ex), 0);
	free(out), free(e);
	char *id[] = {"grade", path, "--prefix=fa2", "--identify", "--presets=fa2,flashinfer", "--gpus=h100,a100",
		      "--format=csv", NULL};
	assert_int_equal(run_cmd(&out, &e, 0, id), 0);
	if (!strstr(out, "\n1,fa2,4,ok,") || !strstr(out, ",fa2@h100,4,ok,") || !strstr(out, ",fa2@a100,4,ok,") ||
	    strstr(out, "flashinfer@") || strstr(out, ",fa2@b200,"))
		fail_msg("%s:%d: identify --gpus ranked\n%s", __FILE__, __LINE__, out);
	/* the h100 model is not IEEE: its row is not all bit-identical */
	const char *h = strstr(out, ",fa2@h100,4,ok,");
	unsigned long same = 0, total = 0;
	assert_int_equal(sscanf(h, ",fa2@h100,4,ok,%lu,%lu", &same, &total), 2);
	assert_true(same < total);
	free(out), free(e);
	char *bad[] = {"grade", path, "--prefix=fa2", "--identify", "--gpus=h101", NULL};
	assert_int_equal(run_cmd(&out, &e, 0, bad), 2);
	assert_non_null(strstr(e, "--gpus=h101: expected all or GPU names"));
	free(out), free(e);
}

static void test_command_formats(void **state)
{
	(void)state;
	char path[128], *out, *e;
	char *ex[] = {"export", "--ctx=150", "--head-dim=64", "--heads=2", "--splits=3", "--input=fp16",
		      "--preset=fa2,naive-fp16", NULL, NULL};
	char outflag[160];
	snprintf(outflag, sizeof outflag, "--out=%s", in_dir(path, sizeof path, "cmd.safetensors"));
	ex[7] = outflag;
	assert_int_equal(run_cmd(&out, &e, 1, ex), 0);
	assert_string_equal(out, "");
	assert_non_null(strstr(e, "2 presets: 12 tensors"));
	free(out), free(e);
	char *csv[] = {"grade", path, "--prefix=fa2", "--format=csv", NULL};
	assert_int_equal(run_cmd(&out, &e, 0, csv), 0);
	assert_string_equal(e, "");
	size_t lines = 0, header_commas = 0;
	for (char *l = out, *nl; (nl = strchr(l, '\n')); l = nl + 1, lines++) {
		size_t c = 0;
		for (char *x = l; x < nl; x++)
			c += *x == ',';
		if (!lines)
			header_commas = c;
		assert_int_equal(c, header_commas);
	}
	assert_int_equal(lines, 1 + 2 * (4 + 2 * 3)); /* 2 heads x (out, lse, 2 merges, 3 x 2 partials) */
	free(out), free(e);
	char *json[] = {"grade", path, "--prefix=fa2", "--format=json", "--identify", NULL};
	char *first = NULL;
	for (int th = 1; th <= 3; th++) {
		omp_set_num_threads(th);
		assert_int_equal(run_cmd(&out, &e, 0, json), 0);
		if (!first)
			first = strdup(out);
		else if (strcmp(first, out) != 0)
			fail_msg("the JSON report differs on %d threads", th);
		free(out), free(e);
	}
	char jpath[160], cmd[400];
	snprintf(jpath, sizeof jpath, "%s/report.json", dir);
	put_file(jpath, first, strlen(first));
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
				  "assert d[\"identify\"][\"ranking\"][0][\"preset\"]==\"fa2\"' '%s'", jpath);
	if (access("/usr/bin/python3", X_OK) == 0)
		assert_int_equal(system(cmd), 0);
	free(first);
	char *text[] = {"grade", path, "--prefix=naive-fp16", "--identify", "--top=2", NULL};
	assert_int_equal(run_cmd(&out, &e, 0, text), 0);
	assert_non_null(strstr(out, "top: naive-fp16 reproduces the dump bit for bit"));
	assert_non_null(strstr(out, "more: --top=0 shows them all"));
	free(out), free(e);
}

/* The README's example: the same files, the same command, the same report. */
static void test_readme_example(void **state)
{
	(void)state;
	char path[4200], here[4096], *doc = NULL, *out, *e;
	size_t n = 0;
	snprintf(path, sizeof path, "%s/README.md", root);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getdelim(&doc, &n, '\0', f) > 0);
	fclose(f);
	const char *h = strstr(doc, "### Grading a real kernel"), *b = h ? strstr(h, "```\n") : NULL;
	assert_non_null(b);
	b += 4;
	const char *end = strstr(b, "\n```");
	assert_non_null(end);
	const char *make = "$ mkdir dump && /usr/bin/python3 tests/data/make_grade.py dump\n", *cmd = "$ build/skv grade ";
	assert_true(strncmp(b, make, strlen(make)) == 0);
	b += strlen(make);
	assert_true(strncmp(b, cmd, strlen(cmd)) == 0);
	const char *nl = strchr(b, '\n');
	char args[256], *argv[16] = {"grade"};
	snprintf(args, sizeof args, "%.*s", (int)(nl - b - strlen(cmd)), b + strlen(cmd));
	int argc = 1;
	for (char *save = NULL, *t = strtok_r(args, " ", &save); t && argc < 15; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	char *want = strndup(nl + 1, (size_t)(end - nl));
	in_dir(path, sizeof path, "readme");
	mkdir(path, 0755);
	char dump[4300], q[4310];
	snprintf(dump, sizeof dump, "%s/dump", path);
	mkdir(dump, 0755);
	snprintf(q, sizeof q, "'%s'", dump);
	data_script("make_grade.py", q);
	assert_non_null(getcwd(here, sizeof here));
	assert_int_equal(chdir(path), 0);
	const int rc = run_cmd(&out, &e, 0, argv);
	assert_int_equal(chdir(here), 0);
	assert_int_equal(rc, 0);
	if (strcmp(out, want) != 0)
		fail_msg("skv grade printed\n%s\nbut the README shows\n%s", out, want);
	free(out), free(e), free(want), free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_every_preset),
		cmocka_unit_test(test_roundtrip_npy_folder),
		cmocka_unit_test(test_numpy_float16),
		cmocka_unit_test(test_stdlib_safetensors),
		cmocka_unit_test(test_merge_alone),
		cmocka_unit_test(test_nonfinite_outputs),
		cmocka_unit_test(test_identify_split_counts),
		cmocka_unit_test(test_identify_gpus),
		cmocka_unit_test(test_command_formats),
		cmocka_unit_test(test_readme_example),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
