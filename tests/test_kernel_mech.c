/* test_kernel_mech.c - the split kernel's mechanisms: every formula, the reversed block order, the lanes of the exp-sum and an fp16 accumulator against an MPFR hand loop; q.k and P.V on each GPU's tensor cores against hand-built chains of skv_mma_dot_fast; interleaved tiles; the configuration's checks. */
#include "scan.h"
#include "testutil.h"
#include "ref_ops.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define LOG2E 1.4426950408889634074
#define LN2 0.69314718055994530942
#define LIT 1.44269504

/* What the referee knows of each formula, typed from skv.h's description
 * of it (not from lib/scan.c's table). */
typedef struct {
	skv_formula f;
	skv_lse_base base;
	int raw, afma, two_mul, qscale, bsum, pnorm, rcp;
	char konst; /* 's' RN(d k), 'D' RN(RN(d) k), 'F' RN(RN(d) RN(lit)), 'L' RN(d lit) */
	char lse;   /* 's' skv's, '2' fa2, '3' fa3, 't' tilelang, 'x' xformers */
} ref_formula;

static const ref_formula RF[] = {
	{SKV_FORMULA_SKV, SKV_BASE_E2, 0, 0, 0, 0, 0, 0, 0, 's', 's'},
	{SKV_FORMULA_SKV, SKV_BASE_E, 0, 0, 0, 0, 0, 0, 0, 's', 's'},
	{SKV_FORMULA_FA2, SKV_BASE_E2, 1, 0, 0, 0, 0, 0, 1, 'D', '2'},
	{SKV_FORMULA_FA3, SKV_BASE_E2, 1, 0, 0, 0, 0, 0, 1, 'D', '3'},
	{SKV_FORMULA_TILELANG, SKV_BASE_2, 1, 1, 0, 0, 1, 0, 0, 'L', 't'},
	{SKV_FORMULA_FLEX, SKV_BASE_2, 0, 0, 1, 0, 1, 0, 0, 's', 's'},
	{SKV_FORMULA_XFORMERS, SKV_BASE_E2, 0, 0, 0, 0, 1, 0, 0, 'F', 'x'},
	{SKV_FORMULA_VLLM, SKV_BASE_E, 0, 0, 0, 0, 0, 1, 0, 's', 's'},
	{SKV_FORMULA_FLASHINFER, SKV_BASE_2, 0, 0, 0, 0, 0, 0, 1, 'F', 's'},
	{SKV_FORMULA_QSCALE, SKV_BASE_E, 0, 0, 0, 1, 0, 0, 0, 's', 's'},
	{SKV_FORMULA_TRITON, SKV_BASE_E, 0, 0, 0, 0, 1, 0, 0, 's', 's'},
	{SKV_FORMULA_TRITON, SKV_BASE_E2, 0, 0, 0, 0, 1, 0, 0, 's', 's'},
};

/* The referee's state and constants for one split. */
typedef struct {
	const ref_formula *rf;
	const skv_config *cfg;
	skv_format C;
	double c, rs, off, k2;
	double maxoff;    /* fa3 on FP8 inputs: 8 */
	skv_mma_unit u;   /* cfg->gpu: the unit of (gpu, input, compute) */
	unsigned k;       /* and its instruction's k (mma_k below) */
	double m, l, lane[1024], acc[64];
} rsplit;

/* The k of the MMA instruction per GPU and input, typed from the PTX ISA's
 * shapes (mma.sync m8n8k4 on Volta; m16n8k16 for fp16/bf16, m16n8k8 for
 * tf32, m16n8k32 and wgmma k32 for FP8), not from lib/scan_mma.c. */
static unsigned mma_k(int gpu, skv_format in)
{
	if (gpu == SKV_GPU_V100)
		return 4;
	return in == SKV_TF32 ? 8 : in == SKV_FP16 || in == SKV_BF16 ? 16 : 32;
}

static int fp8(skv_format f) { return f == SKV_E4M3 || f == SKV_E4M3_SAT || f == SKV_E5M2 || f == SKV_E5M2_SAT; }

/* The tensor-core definition, by hand: c + sum_i a[i sa] b[i sb] as
 * instructions of k products from index 0, each one skv_mma_dot_fast on
 * the c the previous one left (the last one short). */
static double hand_chain(const rsplit *r, const double *a, size_t sa, const double *b, size_t sb, size_t K, double c)
{
	for (size_t t = 0; t * r->k < K; t++) {
		size_t len = K - t * r->k < r->k ? K - t * r->k : r->k;
		c = skv_mma_dot_fast(&r->u, a + t * r->k * sa, sa, b + t * r->k * sb, sb, len, c);
	}
	return c;
}

static double re(const rsplit *r, double t) { return r->cfg->base != SKV_BASE_E ? r_exp2(r->C, t) : r_exp(r->C, t); }
static double racc(const rsplit *r, double x)
{
	return r->cfg->acc ? ref_round((skv_format)(r->cfg->acc - 1), x) : x;
}

static void rinit(rsplit *r, const ref_formula *rf, const skv_config *cfg, double scale, double offset)
{
	memset(r, 0, sizeof *r);
	r->rf = rf;
	r->cfg = cfg;
	r->C = cfg->compute;
	double k = cfg->base != SKV_BASE_E ? LOG2E : 1.0;
	r->rs = ref_round(r->C, scale);
	switch (rf->konst) {
	case 'D': r->c = ref_round(r->C, r->rs * k); break;
	case 'F': r->c = r_mul(r->C, r->rs, ref_round(r->C, k == 1.0 ? 1.0 : LIT)); break;
	case 'L': r->c = ref_round(r->C, scale * LIT); break;
	default: r->c = ref_round(r->C, scale * k); break;
	}
	r->off = rf->raw ? ref_round(r->C, offset / r->rs)
		 : rf->two_mul || rf->qscale ? ref_round(r->C, offset)
					     : ref_round(r->C, offset * k);
	r->k2 = ref_round(r->C, LIT);
	r->maxoff = rf->f == SKV_FORMULA_FA3 && fp8(cfg->input) ? 8.0 : 0.0;
	if (cfg->gpu) {
		CHECK_OK(skv_mma_unit_init(&r->u, (skv_gpu)cfg->gpu, cfg->input, cfg->compute));
		r->k = mma_k(cfg->gpu, cfg->input);
	}
	r->m = -INFINITY;
}

static double rscore(const rsplit *r, const double *q, const double *kj, size_t d)
{
	double s = 0.0;
	if (r->cfg->gpu) /* from c = 0 over head_dim */
		s = hand_chain(r, q, 1, kj, 1, d, 0.0);
	for (size_t i = 0; !r->cfg->gpu && i < d; i++)
		s = r_fma(r->C, r->rf->qscale ? r_mul(r->C, q[i], r->rs) : q[i], kj[i], s);
	if (r->rf->raw || r->rf->qscale)
		return r_add(r->C, s, r->off);
	if (r->rf->two_mul)
		return r_mul(r->C, r_add(r->C, r_mul(r->C, s, r->rs), r->off), r->k2);
	return r_add(r->C, r_mul(r->C, s, r->c), r->off);
}

static double rprob(const rsplit *r, double z)
{
	if (r->rf->raw && r->maxoff != 0.0) /* max_scaled = max * scale - max_offset, one FFMA */
		return re(r, r_fma(r->C, z, r->c, -r_fma(r->C, r->m, r->c, -r->maxoff)));
	if (r->rf->raw)
		return re(r, r_fma(r->C, z, r->c, -r_mul(r->C, r->m, r->c)));
	return re(r, r_sub(r->C, z, r->m));
}

static void radd_sum(rsplit *r, double p, size_t off_in_range)
{
	unsigned L = r->cfg->lanes;
	size_t g = r->cfg->lane_keys ? r->cfg->lane_keys : 1;
	if (L > 1)
		r->lane[off_in_range / g % L] = r_add(r->C, r->lane[off_in_range / g % L], p);
	else
		r->l = r_add(r->C, r->l, p);
}

/* One block [b0, b1) of keys, lo the range start. */
static void rblock(rsplit *r, const skv_problem *p, size_t b0, size_t b1, size_t lo)
{
	const size_t d = p->d;
	double z[4096], pv[4096], bmax = -INFINITY, alpha = 1.0, bs = 0.0;
	for (size_t j = b0; j < b1; j++) {
		z[j - b0] = rscore(r, p->q, p->k + j * d, d);
		bmax = z[j - b0] > bmax ? z[j - b0] : bmax;
	}
	double mn = bmax > r->m ? bmax : r->m;
	if (mn == -INFINITY)
		return;
	if (mn != r->m) {
		if (r->rf->raw && r->rf->afma)
			alpha = re(r, r_fma(r->C, r->m, r->c, -r_mul(r->C, mn, r->c)));
		else if (r->rf->raw)
			alpha = re(r, r_mul(r->C, r_sub(r->C, r->m, mn), r->c));
		else
			alpha = re(r, r_sub(r->C, r->m, mn));
		if (!r->rf->bsum) {
			r->l = r_mul(r->C, r->l, alpha);
			for (unsigned t = 0; t < r->cfg->lanes; t++)
				r->lane[t] = r_mul(r->C, r->lane[t], alpha);
		}
		for (size_t i = 0; i < d; i++)
			r->acc[i] = racc(r, r_mul(r->C, r->acc[i], alpha));
	}
	r->m = mn;
	for (size_t j = b0; j < b1; j++) {
		double pj = rprob(r, z[j - b0]);
		if (r->rf->bsum)
			bs = r_add(r->C, bs, pj);
		else
			radd_sum(r, pj, j - lo);
		double pr = ref_round(r->cfg->p, pj);
		pv[j - b0] = pr;
		for (size_t i = 0; !r->cfg->gpu && i < d; i++)
			r->acc[i] = racc(r, r_fma(r->C, pr, p->v[j * d + i], r->acc[i]));
	}
	/* tensor cores: column i of V over the block's keys, c the running acc */
	for (size_t i = 0; r->cfg->gpu && i < d; i++)
		r->acc[i] = hand_chain(r, pv, 1, p->v + b0 * d + i, d, b1 - b0, r->acc[i]);
	if (r->rf->bsum)
		r->l = r_fma(r->C, r->l, alpha, bs);
}

/* vLLM: the whole range, P normalised before P.V. */
static void rpnorm(rsplit *r, const skv_problem *p, size_t lo, size_t hi)
{
	const size_t d = p->d;
	double z[4096];
	for (size_t j = lo; j < hi; j++) {
		z[j - lo] = rscore(r, p->q, p->k + j * d, d);
		r->m = z[j - lo] > r->m ? z[j - lo] : r->m;
	}
	for (size_t j = lo; j < hi; j++) {
		z[j - lo] = rprob(r, z[j - lo]);
		radd_sum(r, z[j - lo], j - lo);
	}
	double l = r->cfg->lanes > 1 ? ref_butterfly(r->C, r->lane, r->cfg->lanes) : r->l;
	double inv = r_div(r->C, 1.0, r_add(r->C, l, ref_round(r->C, 1e-6)));
	for (size_t j = lo; j < hi; j++) {
		double pr = ref_round(r->cfg->p, r_mul(r->C, z[j - lo], inv));
		for (size_t i = 0; i < d; i++)
			r->acc[i] = racc(r, r_fma(r->C, pr, p->v[j * d + i], r->acc[i]));
	}
}

/* The referee's split over keys [lo, hi): out[d], *lse (config base). */
static void ref_split(double *out, double *lse, const ref_formula *rf, const skv_config *cfg, const skv_problem *p,
		      size_t lo, size_t hi, size_t B, double offset, double *l_out)
{
	static rsplit r;
	rinit(&r, rf, cfg, p->scale, offset);
	const size_t d = p->d;
	if (rf->pnorm) {
		rpnorm(&r, p, lo, hi);
	} else {
		size_t nb = (hi - lo + B - 1) / B;
		for (size_t i = 0; i < nb; i++) {
			size_t bi = cfg->blocks == SKV_BLOCKS_REVERSE ? nb - 1 - i : i, b0 = lo + bi * B;
			rblock(&r, p, b0, b0 + B < hi ? b0 + B : hi, lo);
		}
	}
	double l = cfg->lanes > 1 && !rf->bsum ? ref_butterfly(r.C, r.lane, cfg->lanes) : r.l;
	double inv = r_div(r.C, 1.0, l), ms = rf->raw ? r_mul(r.C, r.m, r.c) : r.m;
	for (size_t i = 0; i < d; i++)
		out[i] = rf->pnorm ? r.acc[i] : rf->rcp ? r_mul(r.C, r.acc[i], inv) : r_div(r.C, r.acc[i], l);
	if (r.maxoff != 0.0) /* FA3 FP8: sum *= 1 / (1 << Max_offset) before the log */
		l = r_mul(r.C, l, 1.0 / 256);
	if (l_out)
		*l_out = l;
	const skv_format C = r.C;
	switch (rf->lse) {
	case '2': *lse = r_fma(C, r.m, r.rs, r_log(C, l)); break;
	case '3': *lse = r_fma(C, r.m, r_mul(C, r.c, ref_round(C, LN2)), r_log(C, l)); break;
	case 't': *lse = r_fma(C, r.m, r.c, r_log2(C, l)); break;
	case 'x': *lse = r_div(cfg->lse, r_add(cfg->lse, r_log2(cfg->lse, l), r.m), ref_round(C, LIT)); break;
	default:
		if (cfg->base == SKV_BASE_E2)
			*lse = r_fma(C, ms, ref_round(C, LN2), r_log(C, l));
		else if (cfg->base == SKV_BASE_2)
			*lse = r_add(C, ms, r_log2(C, l));
		else
			*lse = r_add(C, ms, r_log(C, l));
	}
}

static skv_config kcfg(const ref_formula *rf)
{
	skv_config c = skv_config_uniform(SKV_FP32);
	c.input = c.p = SKV_BF16;
	c.lse = SKV_FP64;
	c.base = rf->base;
	c.formula = rf->f;
	return c;
}

/* Runs the kernel on one split [0, n) and compares o and lse bit for bit. */
static void check_one(const ref_formula *rf, const skv_config *c, const tcase *t, size_t B, double offset,
		      const char *what)
{
	skv_partials sp;
	size_t b[2] = {0, t->p.n};
	CHECK_OK(skv_partials_init(&sp, 1, t->p.d));
	CHECK_OK(skv_split_kernel(&sp, &t->p, 0, b, 1, B, offset, c));
	double want[64], wl;
	ref_split(want, &wl, rf, c, &t->p, 0, t->p.n, B, offset, NULL);
	for (size_t i = 0; i < t->p.d; i++)
		if (!ref_same(sp.o[i], want[i]))
			fail_msg("%s:%d: %s formula %s base %d blocks %d lanes %u offset %g: o[%zu] %a, want %a",
				 __FILE__, __LINE__, what, skv_formula_name(rf->f), rf->base, c->blocks, c->lanes,
				 offset, i, sp.o[i], want[i]);
	if (!ref_same(sp.lse[0], wl))
		fail_msg("%s:%d: %s formula %s blocks %d lanes %u offset %g: lse %a, want %a", __FILE__, __LINE__, what,
			 skv_formula_name(rf->f), c->blocks, c->lanes, offset, sp.lse[0], wl);
	skv_partials_free(&sp);
}

/* Every formula, both block orders, with and without FA2's quad lanes,
 * against the MPFR hand loop (300 keys in blocks of 64: a ragged last
 * block; LSE offsets 0 and 50). */
static void test_formulas_vs_mpfr(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 300, 16, SKV_DIST_RAMP, 0.5, SKV_BF16, 1234, 0);
	static const double offsets[] = {0.0, 50.0};
	for (size_t f = 0; f < NELEM(RF); f++)
		for (int rev = 0; rev < 2; rev++)
			for (int lanes = 0; lanes < 2; lanes++)
				for (size_t o = 0; o < NELEM(offsets); o++) {
					skv_config c = kcfg(&RF[f]);
					c.blocks = rev ? SKV_BLOCKS_REVERSE : SKV_BLOCKS_FORWARD;
					if (lanes) {
						c.lanes = RF[f].pnorm ? 128 : 4;
						c.lane_keys = RF[f].pnorm ? 1 : 2;
					}
					check_one(&RF[f], &c, &t, 64, offsets[o], "formula");
				}
	tcase_free(&t);
}

/* The block order: a reversed scan of keys in blocks b_0 .. b_(n-1) equals,
 * bit for bit, a forward scan of the keys rearranged as b_(n-1) .. b_0
 * (each block's keys in their own order), and differs from the forward
 * scan of the original keys. */
static void test_reverse_is_forward_of_reversed_blocks(void **state)
{
	(void)state;
	const size_t n = 512, d = 32, B = 128, nb = n / B;
	tcase t;
	tcase_init(&t, 1, n, d, SKV_DIST_RAMP, 0.5, SKV_BF16, 99, 0);
	skv_problem r = t.p;
	r.k = malloc(n * d * sizeof *r.k);
	r.v = malloc(n * d * sizeof *r.v);
	for (size_t b = 0; b < nb; b++) {
		memcpy(r.k + b * B * d, t.p.k + (nb - 1 - b) * B * d, B * d * sizeof *r.k);
		memcpy(r.v + b * B * d, t.p.v + (nb - 1 - b) * B * d, B * d * sizeof *r.v);
	}
	static const skv_formula fs[] = {SKV_FORMULA_SKV, SKV_FORMULA_FA2, SKV_FORMULA_FA3};
	for (size_t i = 0; i < NELEM(fs); i++) {
		skv_config c = skv_config_uniform(SKV_FP32);
		c.input = c.p = SKV_BF16;
		c.base = SKV_BASE_E2;
		c.formula = fs[i];
		c.lanes = 4; /* B is a multiple of lanes x lane_keys, so every key keeps its lane */
		c.lane_keys = 2;
		size_t b[2] = {0, n};
		skv_partials a, f, g;
		CHECK_OK(skv_partials_init(&a, 1, d));
		CHECK_OK(skv_partials_init(&f, 1, d));
		CHECK_OK(skv_partials_init(&g, 1, d));
		CHECK_OK(skv_split_kernel(&g, &t.p, 0, b, 1, B, 3.0, &c));
		c.blocks = SKV_BLOCKS_REVERSE;
		CHECK_OK(skv_split_kernel(&a, &t.p, 0, b, 1, B, 3.0, &c));
		c.blocks = SKV_BLOCKS_FORWARD;
		CHECK_OK(skv_split_kernel(&f, &r, 0, b, 1, B, 3.0, &c));
		int differs = 0;
		for (size_t k = 0; k < d; k++) {
			CHECK_BITS("reverse vs forward of reversed blocks", a.o[k], f.o[k]);
			differs |= a.o[k] != g.o[k];
		}
		CHECK_BITS("reverse vs forward of reversed blocks: lse", a.lse[0], f.lse[0]);
		assert_true(differs); /* the ramp moves the max at every block */
		skv_partials_free(&a);
		skv_partials_free(&f);
		skv_partials_free(&g);
	}
	free(r.k);
	free(r.v);
	tcase_free(&t);
}

/* llama.cpp CPU's accumulator: fp16, one key per block, every update
 * fp16(fp32 fma) and every rescale fp16(fp32 product), against a hand loop
 * written for that case alone; and it differs from an fp32 accumulator. */
static void test_fp16_accumulator(void **state)
{
	(void)state;
	const size_t n = 700, d = 16;
	tcase t;
	tcase_init(&t, 1, n, d, SKV_DIST_RAMP, 0.5, SKV_FP16, 5, 0);
	skv_config c = skv_config_uniform(SKV_FP32);
	c.input = SKV_FP16;
	c.acc = SKV_ACC(SKV_FP16);
	skv_partials sp, wide;
	size_t b[2] = {0, n};
	CHECK_OK(skv_partials_init(&sp, 1, d));
	CHECK_OK(skv_partials_init(&wide, 1, d));
	CHECK_OK(skv_split_kernel(&sp, &t.p, 0, b, 1, 1, 0.0, &c));
	const skv_format C = SKV_FP32, H = SKV_FP16;
	double M = -INFINITY, S = 0.0, acc[16] = {0}, scale = ref_round(C, t.p.scale);
	for (size_t j = 0; j < n; j++) {
		double s = 0.0;
		for (size_t i = 0; i < d; i++)
			s = r_fma(C, t.p.q[i], t.p.k[j * d + i], s);
		s = r_add(C, r_mul(C, s, scale), 0.0);
		double vs = 1.0;
		if (s > M) { /* ms = expf(Mold - M); ggml_vec_scale_f16 */
			double ms = r_exp(C, r_sub(C, M, s));
			for (size_t i = 0; i < d; i++)
				acc[i] = ref_round(H, r_mul(C, acc[i], ms));
			S = r_mul(C, S, ms);
			M = s;
		} else {
			vs = r_exp(C, r_sub(C, s, M));
		}
		for (size_t i = 0; i < d; i++) /* ggml_vec_mad_f16: fp16(fma(v, vs, y)) */
			acc[i] = ref_round(H, r_fma(C, vs, t.p.v[j * d + i], acc[i]));
		S = r_add(C, S, vs);
	}
	int differs = 0;
	c.acc = 0;
	CHECK_OK(skv_split_kernel(&wide, &t.p, 0, b, 1, 1, 0.0, &c));
	for (size_t i = 0; i < d; i++) {
		CHECK_BITS("fp16 accumulator: acc", sp.acc[i], acc[i]);
		CHECK_BITS("fp16 accumulator: o", sp.o[i], r_div(C, acc[i], S));
		differs |= sp.o[i] != wide.o[i];
	}
	CHECK_BITS("fp16 accumulator: l", sp.l[0], S);
	assert_true(differs);
	skv_partials_free(&sp);
	skv_partials_free(&wide);
	tcase_free(&t);
}

/* Interleaved tiles: split s of the tiled kernel is, bit for bit, one
 * split over its tiles laid end to end (tile boundaries stay block
 * boundaries); the layout of skv_heur_splits for llama.cpp CUDA runs as it
 * comes, and the merged result is accurate. */
static void test_interleaved_tiles(void **state)
{
	(void)state;
	/* 1024 keys: full tiles, so a tile stays one block when the tiles are
	 * laid end to end in either order */
	const size_t n = 1024, d = 16, T = 128, S = 3;
	tcase t;
	tcase_init(&t, 1, n, d, SKV_DIST_GAUSSIAN, 0.5, SKV_BF16, 17, 0);
	size_t nt = (n + T - 1) / T, tiles[16];
	for (size_t i = 0; i <= nt; i++)
		tiles[i] = i * T < n ? i * T : n;
	skv_config c = skv_config_uniform(SKV_FP32);
	c.input = SKV_BF16;
	skv_partials sp;
	CHECK_OK(skv_partials_init(&sp, S, d));
	for (int rev = 0; rev < 2; rev++) {
	/* reversed: the tiles last to first (each tile one block), which is a
	 * forward scan of the tiles laid end to end in reverse */
	c.blocks = rev ? SKV_BLOCKS_REVERSE : SKV_BLOCKS_FORWARD;
	CHECK_OK(skv_split_kernel_tiled(&sp, &t.p, 0, tiles, nt, S, T, 0.0, &c));
	c.blocks = SKV_BLOCKS_FORWARD;
	for (size_t s = 0; s < S; s++) {
		skv_problem cat = t.p;
		size_t len = 0, mine[16], nm = 0;
		cat.k = malloc(n * d * sizeof *cat.k);
		cat.v = malloc(n * d * sizeof *cat.v);
		for (size_t i = s; i < nt; i += S)
			mine[nm++] = i;
		for (size_t r = 0; r < nm; r++) {
			size_t i = mine[rev ? nm - 1 - r : r], w = tiles[i + 1] - tiles[i];
			memcpy(cat.k + len * d, t.p.k + tiles[i] * d, w * d * sizeof *cat.k);
			memcpy(cat.v + len * d, t.p.v + tiles[i] * d, w * d * sizeof *cat.v);
			len += w;
		}
		cat.n = len;
		skv_partials one;
		size_t b[2] = {0, len};
		CHECK_OK(skv_partials_init(&one, 1, d));
		CHECK_OK(skv_split_kernel(&one, &cat, 0, b, 1, T, 0.0, &c));
		for (size_t i = 0; i < d; i++)
			CHECK_BITS("tile split vs tiles end to end", sp.o[s * d + i], one.o[i]);
		CHECK_BITS("tile split lse", sp.lse[s], one.lse[0]);
		skv_partials_free(&one);
		free(cat.k);
		free(cat.v);
	}
	}
	skv_partials_free(&sp);
	/* the system's own plan (head_dim 64, one of its vec cases), fed to the
	 * kernel as it comes */
	tcase_free(&t);
	tcase_init(&t, 1, 1000, 64, SKV_DIST_GAUSSIAN, 0.5, SKV_BF16, 18, 0);
	skv_heur_input in = {1, 8, 8, 1000, 64, 132, 2, 4, 0, 0, 0}; /* a short last tile */
	skv_heur_plan plan;
	size_t bounds[64];
	CHECK_OK(skv_heur_splits(&plan, bounds, NELEM(bounds), SKV_HEUR_LLAMACPP_CUDA, &in));
	assert_true(plan.tile == 128);
	assert_true(plan.splits > 1);
	CHECK_OK(skv_partials_init(&sp, plan.splits, 64));
	CHECK_OK(skv_split_kernel_tiled(&sp, &t.p, 0, bounds, plan.nbounds - 1, plan.splits, plan.tile, 0.0, &c));
	CHECK_OK(skv_partials_store(&sp, &sp, &c));
	skv_merge_spec m = skv_merge_spec_default();
	m.merge = SKV_MERGE_FLEX;
	double out[64], lse;
	CHECK_OK(skv_merge_run(out, &lse, &sp, &m, &c));
	CHECK_LE("llama.cpp CUDA layout, merged", norm_err(out, t.out, 64, SKV_FP32), 1e-5);
	skv_partials_free(&sp);
	tcase_free(&t);
}

/* ------------------------------------------------------- tensor cores */

/* One split [0, n) with cfg->gpu against the referee's hand chains: o,
 * lse and l bit for bit; returns 1 when some o differs from the same
 * configuration's IEEE kernel (so the path is not a no-op). */
static int check_mma(const ref_formula *rf, const skv_config *c, const tcase *t, size_t B, const char *what)
{
	skv_partials sp, ie;
	size_t b[2] = {0, t->p.n};
	skv_config ieee = *c;
	ieee.gpu = SKV_GPU_IEEE;
	CHECK_OK(skv_partials_init(&sp, 1, t->p.d));
	CHECK_OK(skv_partials_init(&ie, 1, t->p.d));
	CHECK_OK(skv_split_kernel(&sp, &t->p, 0, b, 1, B, 0.0, c));
	CHECK_OK(skv_split_kernel(&ie, &t->p, 0, b, 1, B, 0.0, &ieee));
	double want[64], wl, wsum;
	ref_split(want, &wl, rf, c, &t->p, 0, t->p.n, B, 0.0, &wsum);
	int differs = 0;
	for (size_t i = 0; i < t->p.d; i++) {
		if (!ref_same(sp.o[i], want[i]))
			fail_msg("%s:%d: %s gpu %s input %s formula %s block %zu lanes %u: o[%zu] %a, want %a", __FILE__,
				 __LINE__, what, skv_gpu_name((skv_gpu)c->gpu), skv_format_name(c->input),
				 skv_formula_name(rf->f), B, c->lanes, i, sp.o[i], want[i]);
		differs |= sp.o[i] != ie.o[i];
	}
	if (!ref_same(sp.lse[0], wl) || !ref_same(sp.l[0], wsum))
		fail_msg("%s:%d: %s gpu %s input %s formula %s block %zu: lse %a l %a, want %a %a", __FILE__, __LINE__,
			 what, skv_gpu_name((skv_gpu)c->gpu), skv_format_name(c->input), skv_formula_name(rf->f), B,
			 sp.lse[0], sp.l[0], wl, wsum);
	skv_partials_free(&sp);
	skv_partials_free(&ie);
	return differs;
}

/* q.k and P.V on every GPU's tensor cores, for every formula the tensor-core
 * path takes (not qscale nor vllm), against hand-built chains of
 * skv_mma_dot_fast with k typed from the PTX shapes: 300 keys, head_dim 40
 * (a short last instruction for k = 16 and 32), blocks of 64 (a ragged last
 * block of 44) and of 100 (not a multiple of any k), FA2's quad lanes where
 * its formulas use them; and the GPU changes o on every unit. */
static void test_mma_kernel_vs_chain(void **state)
{
	(void)state;
	static const struct {
		skv_gpu g;
		skv_format in;
	} U[] = {
		{SKV_GPU_V100, SKV_FP16}, {SKV_GPU_A100, SKV_BF16}, {SKV_GPU_A100, SKV_FP16}, {SKV_GPU_A100, SKV_TF32},
		{SKV_GPU_ADA, SKV_E4M3},  {SKV_GPU_H100, SKV_BF16}, {SKV_GPU_H100, SKV_E4M3}, {SKV_GPU_H100, SKV_E5M2},
		{SKV_GPU_B200, SKV_BF16}, {SKV_GPU_B200, SKV_E4M3},
	};
	static const size_t blocks[] = {64, 100};
	for (size_t u = 0; u < NELEM(U); u++) {
		tcase t;
		tcase_init(&t, 1, 300, 40, SKV_DIST_RAMP, 0.5, U[u].in, 4000 + u, 0);
		int differs = 0;
		for (size_t f = 0; f < NELEM(RF); f++) {
			if (RF[f].qscale || RF[f].pnorm)
				continue;
			for (size_t b = 0; b < NELEM(blocks); b++) {
				skv_config c = kcfg(&RF[f]);
				c.input = c.p = U[u].in;
				c.gpu = U[u].g;
				if (RF[f].f == SKV_FORMULA_FA2 || RF[f].f == SKV_FORMULA_FA3) {
					c.lanes = 4;
					c.lane_keys = 2;
				}
				differs |= check_mma(&RF[f], &c, &t, blocks[b], "tensor cores");
			}
		}
		if (!differs)
			fail_msg("%s:%d: gpu %s input %s: o never differs from the IEEE kernel", __FILE__, __LINE__,
				 skv_gpu_name(U[u].g), skv_format_name(U[u].in));
		tcase_free(&t);
	}
}

/* FA3 on FP8 inputs lowers the max by 8 (IEEE arithmetic here): the
 * referee's formula, at two LSE offsets; fa2's formula, the same but for
 * the offset and the LSE factor, gives other P and so another o. */
static void test_fa3_fp8_offset(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 300, 40, SKV_DIST_RAMP, 0.5, SKV_E4M3, 77, 0);
	const ref_formula *fa3 = NULL;
	for (size_t f = 0; f < NELEM(RF); f++)
		fa3 = RF[f].f == SKV_FORMULA_FA3 ? &RF[f] : fa3;
	skv_config c = kcfg(fa3);
	c.input = c.p = SKV_E4M3;
	c.lanes = 4;
	c.lane_keys = 2;
	check_one(fa3, &c, &t, 64, 0.0, "fa3 fp8");
	check_one(fa3, &c, &t, 64, 50.0, "fa3 fp8");
	skv_config e2 = c;
	e2.formula = SKV_FORMULA_FA2;
	size_t b[2] = {0, 300};
	skv_partials a, z;
	CHECK_OK(skv_partials_init(&a, 1, 40));
	CHECK_OK(skv_partials_init(&z, 1, 40));
	CHECK_OK(skv_split_kernel(&a, &t.p, 0, b, 1, 64, 0.0, &c));
	CHECK_OK(skv_split_kernel(&z, &t.p, 0, b, 1, 64, 0.0, &e2));
	int differs = 0;
	for (size_t i = 0; i < 40; i++)
		differs |= a.o[i] != z.o[i];
	assert_true(differs);
	skv_partials_free(&a);
	skv_partials_free(&z);
	tcase_free(&t);
}

/* Blockwise attention takes the same tensor-core path: each row of
 * skv_attention_online is the split kernel's one-split result. */
static void test_mma_online(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 3, 200, 40, SKV_DIST_GAUSSIAN, 0.5, SKV_BF16, 91, 0);
	skv_config c = skv_config_uniform(SKV_FP32);
	c.input = c.p = SKV_BF16;
	c.gpu = SKV_GPU_A100;
	double out[3 * 40], lse[3];
	CHECK_OK(skv_attention_online(out, lse, &t.p, 48, 0, 0.0, &c));
	skv_partials sp;
	size_t b[2] = {0, 200};
	CHECK_OK(skv_partials_init(&sp, 1, 40));
	for (size_t r = 0; r < 3; r++) {
		CHECK_OK(skv_split_kernel(&sp, &t.p, r, b, 1, 48, 0.0, &c));
		for (size_t i = 0; i < 40; i++)
			CHECK_BITS("online vs split kernel, tensor cores", out[r * 40 + i], sp.o[i]);
		CHECK_BITS("online vs split kernel, tensor cores: lse", lse[r], sp.lse[0]);
	}
	skv_partials_free(&sp);
	tcase_free(&t);
}

/* The tile table: every unit's GPU and input has an instruction whose k is
 * the PTX shape's and a multiple of the unit's block n (so the chain of
 * instructions is skv_mma_dot over the whole reduction); none for ieee or
 * an input the tensor cores do not take. A block of zero products (a
 * kernel's whole padded step) returns a previous block's result bit for
 * bit, and +0 for -0. */
static void test_mma_tiles(void **state)
{
	(void)state;
	static const skv_format ins[] = {SKV_FP16, SKV_BF16, SKV_TF32, SKV_E4M3, SKV_E4M3_SAT, SKV_E5M2, SKV_E5M2_SAT};
	static const skv_format outs[] = {SKV_FP32, SKV_FP16};
	const double zeros[32] = {0};
	skv_rng rng;
	skv_rng_seed(&rng, 12);
	size_t units = 0;
	for (int g = 1; g < SKV_NGPUS; g++)
		for (size_t i = 0; i < NELEM(ins); i++)
			for (size_t o = 0; o < NELEM(outs); o++) {
				skv_mma_unit u;
				unsigned k = 0;
				const char *instr = NULL;
				if (skv_mma_unit_init(&u, (skv_gpu)g, ins[i], outs[o]) != SKV_OK)
					continue;
				units++;
				CHECK_OK(skv_mma_tile(&k, &instr, (skv_gpu)g, ins[i]));
				assert_non_null(instr);
				/* the scan copies V rows SKV_SCAN_MMA_ROWS at a time as whole
				 * instructions (lib/scan.c, pv_mma) */
				if (k != mma_k(g, ins[i]) || k % u.par.n != 0 || SKV_SCAN_MMA_ROWS % k != 0)
					fail_msg("%s:%d: %s %s: k %u, want %u, a multiple of n %u dividing %d", __FILE__,
						 __LINE__, skv_gpu_name((skv_gpu)g), skv_format_name(ins[i]), k,
						 mma_k(g, ins[i]), u.par.n, SKV_SCAN_MMA_ROWS);
				for (int rep = 0; rep < 50; rep++) {
					double a[64], b[64];
					for (size_t j = 0; j < 64; j++) {
						a[j] = skv_round(ins[i], ldexp(skv_rng_uniform(&rng) - 0.5, (int)(j % 7)));
						b[j] = skv_round(ins[i], skv_rng_uniform(&rng) * 4 - 2);
					}
					double c = skv_mma_dot_fast(&u, a, 1, b, 1, 64, 0.0);
					CHECK_BITS("a zero block keeps a block's result",
						   skv_mma_dot_fast(&u, zeros, 1, zeros, 1, k, c), c);
				}
				CHECK_BITS("a zero block on -0", skv_mma_dot_fast(&u, zeros, 1, zeros, 1, k, -0.0), 0.0);
			}
	assert_true(units >= 20);
	unsigned k = 7;
	assert_int_equal(skv_mma_tile(&k, NULL, SKV_GPU_IEEE, SKV_BF16), SKV_EINVAL);
	assert_int_equal(skv_mma_tile(&k, NULL, SKV_GPU_H100, SKV_FP32), SKV_EINVAL);
	assert_int_equal(skv_mma_tile(&k, NULL, SKV_GPU_V100, SKV_BF16), SKV_EINVAL);
	assert_int_equal(skv_mma_tile(&k, NULL, SKV_GPU_A100, SKV_E4M3), SKV_EINVAL);
	assert_int_equal(skv_mma_tile(&k, NULL, (skv_gpu)SKV_NGPUS, SKV_BF16), SKV_EINVAL);
	assert_int_equal(k, 7);
}

/* Bad configurations and arguments: one status each, nothing written. */
static void test_checks(void **state)
{
	(void)state;
	skv_config c = skv_config_uniform(SKV_FP32);
	CHECK_OK(skv_config_check(&c));
	c.lanes = 3;
	assert_int_equal(skv_config_check(&c), SKV_EINVAL);
	c.lanes = 2048;
	assert_int_equal(skv_config_check(&c), SKV_EINVAL);
	c.lanes = 0;
	c.formula = SKV_FORMULA_FA2; /* base e2 only */
	assert_int_equal(skv_config_check(&c), SKV_EINVAL);
	c.base = SKV_BASE_E2;
	CHECK_OK(skv_config_check(&c));
	c.acc = SKV_ACC(SKV_E8M0);
	assert_int_equal(skv_config_check(&c), SKV_EINVAL);
	c.acc = SKV_NFORMATS + 1;
	assert_int_equal(skv_config_check(&c), SKV_EINVAL);
	c.acc = 0;
	c.blocks = (skv_blocks)SKV_NBLOCKS;
	assert_int_equal(skv_config_check(&c), SKV_EINVAL);
	c.blocks = SKV_BLOCKS_FORWARD;
	c.formula = (skv_formula)SKV_NFORMULAS;
	assert_int_equal(skv_config_check(&c), SKV_EINVAL);
	/* vLLM's formula on a split of two tiles */
	tcase t;
	tcase_init(&t, 1, 64, 8, SKV_DIST_GAUSSIAN, 0.5, SKV_FP32, 3, 0);
	skv_config v = skv_config_uniform(SKV_FP32);
	v.formula = SKV_FORMULA_VLLM;
	size_t tiles[5] = {0, 16, 32, 48, 64};
	skv_partials sp;
	CHECK_OK(skv_partials_init(&sp, 2, 8));
	sp.lse[0] = 7.0;
	assert_int_equal(skv_split_kernel_tiled(&sp, &t.p, 0, tiles, 4, 2, 16, 0.0, &v), SKV_EINVAL);
	assert_true(sp.lse[0] == 7.0);
	assert_int_equal(skv_split_kernel_tiled(&sp, &t.p, 0, tiles, 0, 2, 16, 0.0, &v), SKV_EINVAL);
	skv_partials_free(&sp);
	tcase_free(&t);
	/* names */
	skv_formula f;
	skv_blocks b;
	for (unsigned i = 0; i < SKV_NFORMULAS; i++) {
		CHECK_OK(skv_formula_parse(&f, skv_formula_name((skv_formula)i)));
		assert_int_equal(f, i);
	}
	CHECK_OK(skv_blocks_parse(&b, "reverse"));
	assert_int_equal(b, SKV_BLOCKS_REVERSE);
	assert_int_equal(skv_formula_parse(&f, "fa4"), SKV_EINVAL);
	assert_null(skv_blocks_name((skv_blocks)2));
	assert_int_equal(skv_formula_base(SKV_FORMULA_TILELANG), SKV_BASE_2);
	/* the tensor-core path's requirements */
	skv_config g = skv_config_uniform(SKV_FP32);
	g.input = g.p = SKV_BF16;
	g.gpu = SKV_GPU_H100;
	CHECK_OK(skv_config_check(&g));
	g.gpu = SKV_NGPUS;
	assert_int_equal(skv_config_check(&g), SKV_EINVAL);
	g.gpu = SKV_GPU_V100; /* fp16 only */
	assert_int_equal(skv_config_check(&g), SKV_EINVAL);
	g.gpu = SKV_GPU_H100;
	g.p = SKV_FP32; /* P is an operand */
	assert_int_equal(skv_config_check(&g), SKV_EINVAL);
	g.input = g.p = SKV_FP32; /* no fp32 operand */
	assert_int_equal(skv_config_check(&g), SKV_EINVAL);
	g.input = SKV_E4M3;
	g.p = SKV_E4M3_SAT; /* the same values */
	CHECK_OK(skv_config_check(&g));
	g.compute = SKV_FP64; /* the accumulator is fp32 or fp16 */
	assert_int_equal(skv_config_check(&g), SKV_EINVAL);
	g.compute = SKV_FP32;
	g.acc = SKV_ACC(SKV_FP16);
	assert_int_equal(skv_config_check(&g), SKV_EINVAL);
	g.acc = 0;
	g.formula = SKV_FORMULA_QSCALE;
	assert_int_equal(skv_config_check(&g), SKV_EINVAL);
	g.formula = SKV_FORMULA_VLLM;
	assert_int_equal(skv_config_check(&g), SKV_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formulas_vs_mpfr),
		cmocka_unit_test(test_reverse_is_forward_of_reversed_blocks),
		cmocka_unit_test(test_fp16_accumulator),
		cmocka_unit_test(test_interleaved_tiles),
		cmocka_unit_test(test_mma_kernel_vs_chain),
		cmocka_unit_test(test_fa3_fp8_offset),
		cmocka_unit_test(test_mma_online),
		cmocka_unit_test(test_mma_tiles),
		cmocka_unit_test(test_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
