/* grade_identify.c - every preset run on a dump's inputs and split boundaries, and ranked by how closely it reproduces the dump: bit-identical elements, ulp distances, normwise distance. */
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grade.h"
#include "core/stats.h"

/* ------------------------------------------------------------ emulation */

void grade_emu_free(grade_emu *em)
{
	if (!em)
		return;
	free(em->po);
	free(em->pl);
	free(em->out);
	free(em->lse);
	memset(em, 0, sizeof *em);
}

/* The preset resolved for the dump and the arrays of its results. The
 * preset's math mode is kept only when asked: its approximate modes are a
 * seeded bound model, not any GPU's bits (skv.h), so by default every
 * operation is correctly rounded. */
static int emu_prepare(grade_emu *em, const grade_dump *dp, size_t S, const skv_preset *p, skv_format input,
		       const grade_emu_opts *o, message *e)
{
	memset(em, 0, sizeof *em);
	skv_config cfg;
	skv_merge_spec ms;
	if (skv_preset_resolve_full(&cfg, &ms, p, input, (unsigned)dp->d) != SKV_OK || dp->d > UINT32_MAX) {
		msg_set(e, "preset %s does not take %s inputs with head_dim %zu",
			p->name, skv_format_name(input), dp->d);
		return SKV_EINVAL;
	}
	if (!o->own_math)
		cfg.math = SKV_MATH_EXACT;
	cfg.math_seed = o->math_seed;
	if (o->gpu != SKV_GPU_IEEE && p->tensor_cores) {
		cfg.gpu = o->gpu;
		if (skv_config_check(&cfg) != SKV_OK) {
			msg_set(e, "preset %s has no %s tensor-core path for %s inputs", p->name,
				skv_gpu_name((skv_gpu)o->gpu), skv_format_name(input));
			return SKV_EINVAL;
		}
	}
	*em = (grade_emu){.H = dp->H, .S = S, .d = dp->d, .cfg = cfg, .merge = ms,
			  .base = cfg.base == SKV_BASE_2 ? SKV_BASE_2 : SKV_BASE_E};
	em->po = malloc(S * dp->H * dp->d * sizeof *em->po);
	em->pl = malloc(S * dp->H * sizeof *em->pl);
	em->out = malloc(dp->H * dp->d * sizeof *em->out);
	em->lse = malloc(dp->H * sizeof *em->lse);
	if (!em->po || !em->pl || !em->out || !em->lse) {
		grade_emu_free(em);
		msg_set(e, "skv grade: out of memory");
		return SKV_ENOMEM;
	}
	return SKV_OK;
}

/* Head h: the split kernel over the bounds, the stored partials, the merge.
 * A preset with a narrow P.V accumulator (llama.cpp CPU) runs one key per
 * block, its loop; the others blocks of o->block keys. */
static int emu_head(grade_emu *em, const grade_dump *dp, const size_t *bounds, size_t h, size_t block)
{
	const size_t S = em->S, d = em->d, H = em->H;
	const skv_problem p = grade_head_problem(dp, h);
	skv_partials sp;
	int st = skv_partials_init(&sp, S, d);
	if (st != SKV_OK)
		return st;
	st = skv_split_kernel(&sp, &p, 0, bounds, S, em->cfg.acc ? 1 : block, 0.0, &em->cfg);
	if (st == SKV_OK)
		st = skv_partials_store(&sp, &sp, &em->cfg);
	if (st == SKV_OK)
		st = skv_merge_run(em->out + h * d, &em->lse[h], &sp, &em->merge, &em->cfg);
	for (size_t s = 0; st == SKV_OK && s < S; s++) {
		memcpy(em->po + (s * H + h) * d, sp.o + s * d, d * sizeof *em->po);
		em->pl[s * H + h] = sp.lse[s];
	}
	skv_partials_free(&sp);
	/* the kernels' fp32 exp and log reach MPFR in their hard cases */
	mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
	return st;
}

int grade_emulate(grade_emu *em, const grade_dump *dp, const size_t *bounds, size_t S, const skv_preset *p,
		  skv_format input, const grade_emu_opts *o, message *e)
{
	grade_emu m;
	int rc = emu_prepare(&m, dp, S, p, input, o, e);
	int *st = rc == SKV_OK ? malloc(dp->H * sizeof *st) : NULL;
	if (rc == SKV_OK && !st)
		rc = SKV_ENOMEM;
	if (rc != SKV_OK) {
		grade_emu_free(&m);
		return rc;
	}
#pragma omp parallel for schedule(dynamic)
	for (size_t h = 0; h < dp->H; h++)
		st[h] = emu_head(&m, dp, bounds, h, o->block);
	for (size_t h = 0; h < dp->H && rc == SKV_OK; h++)
		if ((rc = st[h]) != SKV_OK)
			msg_set(e, "preset %s: the split kernel or merge refused head %zu: %s", p->name, h,
				skv_strerror(rc));
	free(st);
	if (rc != SKV_OK) {
		grade_emu_free(&m);
		return rc;
	}
	*em = m;
	return SKV_OK;
}

/* ----------------------------------------------------------- agreement */

static int same_bits(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }

/* |a - b| in ulps of format f at the dump's value b: 0 for equal values
 * (+0 and -0 too) and for two NaNs, infinite when only one is NaN or
 * infinite. */
static double ulp_dist(double a, double b, skv_format f)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b) ? 0.0 : INFINITY;
	if (a == b)
		return 0.0;
	if (isinf(a) || isinf(b))
		return INFINITY;
	return fabs(a - b) / skv_ulp(f, b);
}

/* The running comparison of one candidate. */
typedef struct {
	grade_cand *c;
	double *ulps; /* every element's distance */
	size_t n;
} agree;

static void add(agree *a, int id, double emu, double dump, skv_format f)
{
	a->c->same[id] += same_bits(emu, dump);
	a->c->total[id]++;
	a->ulps[a->n++] = ulp_dist(emu, dump, f);
}

/* ||emu - dump|| / ||dump|| over n values: two NaNs differ by 0, one NaN
 * or two different infinities by +inf; the dump's NaNs count 0 in its norm. */
static double normwise(const double *emu, const double *dump, size_t n, double *scratch)
{
	for (size_t i = 0; i < n; i++) {
		const double a = emu[i], b = dump[i];
		scratch[i] = isnan(a) || isnan(b) ? (isnan(a) && isnan(b) ? 0.0 : INFINITY)
			     : a == b             ? 0.0
			     : isinf(a) || isinf(b) ? INFINITY
						  : a - b;
	}
	const double num = skv_norm2(scratch, n);
	for (size_t i = 0; i < n; i++)
		scratch[i] = isnan(dump[i]) ? 0.0 : dump[i];
	const double den = skv_norm2(scratch, n);
	return num == 0 ? 0.0 : den == 0 || isinf(den) ? INFINITY : num / den;
}

/* The elements the dump has, against the candidate's. */
static int compare(grade_cand *c, const grade_emu *em, const grade_dump *dp, int base)
{
	const size_t H = dp->H, d = dp->d, S = dp->po || dp->pl ? dp->S : 0;
	const size_t cap = H * d + H + S * H * d + S * H;
	agree a = {c, malloc(cap * sizeof(double)), 0};
	double *scratch = malloc((S > 1 ? S : 1) * H * d * sizeof *scratch);
	if (!a.ulps || !scratch) {
		free(a.ulps);
		free(scratch);
		return SKV_ENOMEM;
	}
	for (size_t i = 0; dp->out && i < H * d; i++)
		add(&a, GT_OUT, em->out[i], dp->out[i], dp->fmt[GT_OUT]);
	for (size_t h = 0; dp->lse && h < H; h++)
		add(&a, GT_LSE, grade_lse_convert(em->lse[h], SKV_BASE_E, base), dp->lse[h], dp->fmt[GT_LSE]);
	for (size_t i = 0; dp->po && i < S * H * d; i++)
		add(&a, GT_PARTIAL_OUT, em->po[i], dp->po[i], dp->fmt[GT_PARTIAL_OUT]);
	for (size_t i = 0; dp->pl && i < S * H; i++)
		add(&a, GT_PARTIAL_LSE, grade_lse_convert(em->pl[i], em->base, base), dp->pl[i], dp->fmt[GT_PARTIAL_LSE]);
	for (int id = 0; id < GT_N; id++) {
		c->same_all += c->same[id];
		c->total_all += c->total[id];
	}
	qsort(a.ulps, a.n, sizeof *a.ulps, stats_cmp_double); /* no NaN: ulp_dist gives none */
	static const double qs[GRADE_NQ] = {0.5, 0.9, 0.99, 1.0};
	for (int k = 0; k < GRADE_NQ; k++)
		stats_quantile(&c->ulp[k], a.ulps, a.n, qs[k]);
	c->normwise = dp->out ? normwise(em->out, dp->out, H * d, scratch)
			      : dp->po ? normwise(em->po, dp->po, S * H * d, scratch) : NAN;
	free(a.ulps);
	free(scratch);
	return SKV_OK;
}

/* ------------------------------------------------------------- ranking */

static int cmp_num(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b); /* NaN last */
	return (a > b) - (a < b);
}

/* Equal on every key but the presets' order. */
static int cmp_keys(const grade_cand *x, const grade_cand *y)
{
	if ((x->status != SKV_OK) != (y->status != SKV_OK))
		return x->status != SKV_OK ? 1 : -1;
	if (x->status != SKV_OK)
		return 0;
	if (x->same_all != y->same_all)
		return x->same_all > y->same_all ? -1 : 1;
	static const int key[3] = {0, 1, 3}; /* median, 90th percentile, max */
	for (int k = 0; k < 3; k++) {
		const int c = cmp_num(x->ulp[key[k]], y->ulp[key[k]]);
		if (c)
			return c;
	}
	return cmp_num(x->normwise, y->normwise);
}

static int cmp_cand(const void *a, const void *b)
{
	const grade_cand *x = a, *y = b;
	const int c = cmp_keys(x, y);
	if (c)
		return c;
	if (x->preset != y->preset)
		return x->preset < y->preset ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return (x->S > y->S) - (x->S < y->S);
}

/* ------------------------------------------------------------ identify */

void grade_ranking_free(grade_ranking *r)
{
	if (!r)
		return;
	free(r->c);
	memset(r, 0, sizeof *r);
}

/* The split boundaries of candidate count S: the dump's own, or the
 * layout's. */
static int count_bounds(size_t **b, const grade_dump *dp, size_t S, const grade_id_opts *o, message *e)
{
	if (!(*b = malloc((S + 1) * sizeof **b)))
		return SKV_ENOMEM;
	if (dp->bounds) {
		memcpy(*b, dp->bounds, (S + 1) * sizeof **b);
		return SKV_OK;
	}
	const int st = layout_bounds(*b, dp->n, S, o->layout, 0, o->emu->block, 0);
	if (st != SKV_OK) {
		free(*b);
		*b = NULL;
		msg_set(e, "skv grade: %zu splits of %zu keys%s cannot be laid out", S, dp->n,
			o->layout == LAYOUT_FA2 ? " in FA2's blocks of --block-size keys" : "");
	}
	return st;
}

static int input_format(skv_format *f, const grade_dump *dp, message *e)
{
	if (dp->fmt[GT_K] != dp->fmt[GT_Q] || dp->fmt[GT_V] != dp->fmt[GT_Q]) {
		msg_set(e, "skv grade: --identify needs q, k and v in one format (a preset has one input format): "
			   "q is %s, k %s, v %s",
			skv_format_name(dp->fmt[GT_Q]), skv_format_name(dp->fmt[GT_K]), skv_format_name(dp->fmt[GT_V]));
		return SKV_EINVAL;
	}
	*f = dp->fmt[GT_Q];
	return SKV_OK;
}

/* One candidate: preset i at count S over bounds b. A preset that does not
 * take the problem is kept, ranked last, with the reason. */
static int run_candidate(grade_cand *c, const grade_dump *dp, const size_t *b, size_t S, size_t i, int gpu,
			 skv_format input, int base, const grade_id_opts *o)
{
	message m = {NULL};
	grade_emu em;
	grade_emu_opts eo = *o->emu;
	eo.gpu = gpu;
	memset(c, 0, sizeof *c);
	c->preset = i;
	c->gpu = gpu;
	c->S = S;
	c->status = grade_emulate(&em, dp, b, S, skv_preset_at(i), input, &eo, &m);
	if (c->status == SKV_ENOMEM) {
		msg_free(&m);
		return SKV_ENOMEM;
	}
	if (c->status != SKV_OK)
		snprintf(c->why, sizeof c->why, "%s", msg_text(&m));
	msg_free(&m);
	int st = SKV_OK;
	if (c->status == SKV_OK) {
		st = compare(c, &em, dp, base);
		grade_emu_free(&em);
	}
	return st;
}

/* Preset i at count S with IEEE arithmetic and, on tensor cores, with each
 * GPU model of o->gpus whose unit takes the input (one that does not is
 * left out, not listed as not run: the preset itself ran). */
static int run_models(grade_ranking *g, const grade_dump *dp, const size_t *b, size_t S, size_t i,
		      skv_format input, int base, const grade_id_opts *o)
{
	int st = run_candidate(&g->c[g->n++], dp, b, S, i, SKV_GPU_IEEE, input, base, o);
	for (int gpu = 1; gpu < SKV_NGPUS && st == SKV_OK && skv_preset_at(i)->tensor_cores; gpu++) {
		if (!(o->gpus & (1u << gpu)))
			continue;
		st = run_candidate(&g->c[g->n], dp, b, S, i, gpu, input, base, o);
		g->n += st == SKV_OK && g->c[g->n].status == SKV_OK;
	}
	return st;
}

int grade_identify(grade_ranking *r, const grade_dump *dp, int base, const grade_id_opts *o, message *e)
{
	skv_format input;
	int st = input_format(&input, dp, e);
	if (st != SKV_OK)
		return st;
	static const size_t one = 1;
	const size_t *counts = dp->bounds ? &dp->S : o->counts ? o->counts : &one;
	const size_t nc = dp->bounds || !o->counts ? 1 : o->ncounts, np = skv_preset_count();
	grade_ranking g = {.c = calloc(nc * np * SKV_NGPUS, sizeof *g.c), .n = 0, .base = base, .input = input};
	if (!g.c)
		return (msg_set(e, "skv grade: out of memory"), SKV_ENOMEM);
	for (size_t k = 0; k < nc && st == SKV_OK; k++) {
		size_t *b = NULL;
		st = count_bounds(&b, dp, counts[k], o, e);
		for (size_t i = 0; i < np && st == SKV_OK; i++)
			/* by default every preset without a KV cache: a cache preset's
			 * kernel is its base preset's, and the tensors a kernel read
			 * do not show the cache (name one in use to run it) */
			if (o->use ? o->use[i] : skv_preset_at(i)->kv.format == 0)
				st = run_models(&g, dp, b, counts[k], i, input, base, o);
		free(b);
	}
	if (st != SKV_OK) {
		if (st == SKV_ENOMEM)
			msg_set(e, "skv grade: out of memory");
		grade_ranking_free(&g);
		return st;
	}
	qsort(g.c, g.n, sizeof *g.c, cmp_cand);
	for (size_t i = 1; i < g.n; i++)
		g.c[i].tie = g.c[i].status == SKV_OK && cmp_keys(&g.c[i], &g.c[i - 1]) == 0;
	*r = g;
	return SKV_OK;
}
