/* mma.c - bit-accurate models of NVIDIA tensor-core block FMAs and the dot products they chain. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "mma_internal.h"

/*
 * The model (Generic_BFMA_TC.m and GEMM.m of north-numerical-computing/
 * MATLAB-tensor-core at b12b5a7; this is skv's own formulation of it).
 *
 * An input x != 0 of precision p has exponent e_x = max(floor(log2 |x|),
 * emin_in) ("a_exp = max(a_exp - 1, emin_input)"), so a subnormal keeps
 * e_x = emin_in with a significand below 1. A product P = a b is exact in
 * double (p <= 11, so at most 22 significant bits) and carries the
 * "denormalised" exponent e_P = e_a + e_b: its significand P 2^-e_P lies in
 * (0, 4). Zero products are dropped. The block exponent E is the largest e_P
 * and, when c != 0 joins, e_c = max(floor(log2 |c|), -126) (c is read as an
 * fp32 pattern), raised to min_exp_limit. Each addend x is then aligned by
 * AlignSignficand: its significand scaled to 2^23, shifted by neab, shifted
 * right by E - e_x, every shift a floor of a nonnegative integer. Nested
 * floors by powers of two compose, so the aligned addend is
 *     T(x) = sign(x) floor(|x| / g),  g = 2^(E - 23 - neab),
 * for either sign of neab, and T(x) = trunc(x / g) is what C's conversion to
 * int64_t computes (it truncates toward zero). |x| < 2^(E+2) bounds T below
 * 2^(25+neab) <= 2^32, so 65 addends sum exactly in int64_t. The sum S is
 * normalised once (norm_helper keeps every bit of S) and rounded once: the
 * value S g is exact in double (|S| < 2^53, g a normal power of two), so
 * rounding it to the output precision with gradual underflow at emin_out
 * is the model's subnormalsignificand + ieeeround (rz: the truncation of
 * bin2dec(dbits(3:NoManBitsOut+2))). A result whose exponent reaches the
 * output's all-ones field is +-inf, for rz too ("if dexp == 2^NoExpBitsOut -
 * 1, d = Inf"). A zero sum is +0 ("signOut = sum < 0").
 *
 * GEMM.m chains blocks of n in index order over the zero-padded vector with
 * c = d of the previous block, and decides NaN and infinities once, from the
 * products and c, before any block.
 *
 * Per GPU (models/GPUTC.m) and what the recorded vectors decided where the
 * files and the data disagree: see unit_table below.
 *
 * Which products share a block in the kernels skv studies (Dao-AILab/
 * flash-attention at 0251105a; PTX ISA syntax as quoted by the ptx-90-parser
 * crate on docs.rs, mma.rs and wgmma_mma_async.rs):
 * - FA2 (csrc/flash_attn/src/kernel_traits.h:32-33, 77: MMA_Atom
 *   SM80_16x8x16_F32{F16F16,BF16BF16}F32_TN in a TiledMMA with Tile<16 *
 *   kNWarps, 16, 16>) runs mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16
 *   .f32 (and .f16): A 16x16, B 16x8, k = 16. Its gemm (csrc/flash_attn/
 *   src/utils.h, the loop over size<2>(tCrA)) issues one instruction per
 *   16-wide k slice in increasing k into the fp32 fragment: q.k from
 *   clear(acc_s) (flash_fwd_kernel.h:311) over head_dim; P.V (gemm_rs,
 *   :374) over the kBlockN keys of a key block into acc_o, cleared once
 *   (:290) and rescaled between key blocks on CUDA cores.
 * - FA3 (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:90-110, TiledMmaQK and
 *   TiledMmaPV from GMMA::ss_op_selector / rs_op_selector) runs
 *   wgmma.mma_async with shapes .m64nNk16 for .f16/.bf16 and .m64nNk32 for
 *   .e4m3/.e5m2 (PTX ISA). hopper/utils.h:288 issues the k slices in
 *   increasing order; q.k has zero_init = true (ScaleOut::Zero, c = 0;
 *   mainloop :1141), P.V accumulates into tOrO (:1182).
 * So for head_dim 128, q.k is the chain of 8 instructions over products
 * [16t, 16t + 16) (4 over [32t, 32t + 32) for FP8) from c = 0, and P.V over
 * a key block is one instruction per 16 consecutive keys (32 for FP8), c
 * the running output. One instruction is one block FMA where n equals its k
 * (H100 and B200: n = 16, FP8 n = 32), two chained blocks of 8 in index
 * order where n = 8 (A100, Ada; the model's chaining, the vectors hold one
 * block only). skv_mma_dot over the head_dim or the key range is that chain.
 */

/* ------------------------------------------------------- input formats */

/* The unit and tile tables name the base formats; the saturating variants
 * have the same values (lib/fmt_inline.h), so they are the same inputs.
 * -1: none. */
int skv_mma_input_base(skv_format f)
{
	switch (f) {
	case SKV_FP16:
	case SKV_BF16:
	case SKV_TF32:
	case SKV_E4M3:
	case SKV_E5M2: return (int)f;
	case SKV_E4M3_SAT: return SKV_E4M3;
	case SKV_E5M2_SAT: return SKV_E5M2;
	default: return -1;
	}
}

static int is_value(skv_format f, double x) { return isnan(x) || skv_round_i(f, x) == x; }

/* ----------------------------------------------------------------- GPUs */

static const struct {
	const char *name;
	skv_gpu g;
} gpu_names[] = {
	{"ieee", SKV_GPU_IEEE}, {"v100", SKV_GPU_V100}, {"a100", SKV_GPU_A100}, {"ada", SKV_GPU_ADA},
	{"h100", SKV_GPU_H100}, {"b200", SKV_GPU_B200}, {"a2", SKV_GPU_A100},   {"a30", SKV_GPU_A100},
	{"l40s", SKV_GPU_ADA},  {"h200", SKV_GPU_H100},
};

const char *skv_gpu_name(skv_gpu g) { return (unsigned)g < SKV_NGPUS ? gpu_names[g].name : NULL; }

int skv_gpu_parse(skv_gpu *g, const char *name)
{
	if (!g || !name)
		return SKV_EINVAL;
	for (size_t i = 0; i < sizeof gpu_names / sizeof gpu_names[0]; i++)
		if (strcmp(name, gpu_names[i].name) == 0) {
			*g = gpu_names[i].g;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

/* ------------------------------------------------------------ the units */

/* Parameters in the order of skv_mma_params: n, halves, neab, sticky,
 * final, align, out_frac, min_exp, c_min_exp, in_sub, out_sub, denorm,
 * product_limit, cjoin. Every NVIDIA model has no sticky bit, rz alignment,
 * subnormals in and out, denormalised products and no product limit. */
#define P_(n, halves, neab, fin, frac, minexp, cj) \
	{(n), (halves), (neab), 0, (fin), SKV_MMA_RZ, (frac), (minexp), 0, 1, 1, 1, 0, (cj)}
#define ALIGNED_(n, neab, fin, frac, minexp) P_(n, 0, neab, fin, frac, minexp, SKV_MMA_C_ALIGNED)
#define A32_(n, neab, minexp) ALIGNED_(n, neab, SKV_MMA_RZ, 23, minexp)  /* fp32 out: frmode 'rz' */
#define A16_(n, neab, minexp) ALIGNED_(n, neab, SKV_MMA_RNE, 10, minexp) /* fp16 out: frmode 'rne' */

/* The validation counts are those of tests/test_mma.c on
 * ../shared/data/tensor-core-vectors (5000 vectors a file); "Ada repo"
 * names the repository's model_validation/Ada (RTX 1000 Ada) vectors,
 * checked with `skv mma --check` but not in the shared folder. */
static const struct {
	skv_gpu g;
	skv_format in;
	skv_format out;
	skv_mma_params par;
	const char *source;
} unit_table[] = {
	{SKV_GPU_V100, SKV_FP16, SKV_FP32, A32_(4, 0, -1024),
	 "V100TC.m: n 4, neab 0, rz; V100 fp16 -> fp32 5000/5000"},
	{SKV_GPU_V100, SKV_FP16, SKV_FP16, A16_(4, 0, -19),
	 "V100TC.m fp16 out: rne, min_exp_limit -19; V100 fp16 -> fp16 5000/5000"},
#define AMPERE_(G, what)                                                                                  \
	{G, SKV_FP16, SKV_FP32, A32_(8, 1, -132), what " n 8, neab 1, rz; fp16 -> fp32 5000/5000"}, \
	{G, SKV_FP16, SKV_FP16, A16_(8, 1, -20), what " fp16 out: rne, -20; 5000/5000"},            \
	{G, SKV_BF16, SKV_FP32, A32_(8, 1, -132), what " bf16: as fp16; 5000/5000"},               \
	{G, SKV_TF32, SKV_FP32, A32_(4, 1, -132), what " tf32: n 4; 5000/5000"}
	AMPERE_(SKV_GPU_A100, "A100TC.m (A2TC.m, A30TC.m call it):"),
	AMPERE_(SKV_GPU_ADA, "L40STC.m, AdaTC.m:"),
	/* FP8 on Ada: neab -10 and, for fp32 out, NoManBitsOut + neab = 13
	 * fraction bits (GEMM.m); fp16 out keeps 10 bits (GEMM.m v0.1, 109e412,
	 * applied the reduction to fp32 only; AdaTC.m's 0 bits fit nothing). */
	{SKV_GPU_ADA, SKV_E4M3, SKV_FP32, ALIGNED_(16, -10, SKV_MMA_RZ, 13, -132),
	 "AdaTC.m fp8: n 16, neab -10, 13 bits, rz; L40S 5000/5000, Ada repo 5000/5000"},
	{SKV_GPU_ADA, SKV_E5M2, SKV_FP32, ALIGNED_(16, -10, SKV_MMA_RZ, 13, -132),
	 "AdaTC.m fp8: n 16, neab -10, 13 bits, rz; L40S 5000/5000, Ada repo 5000/5000"},
	{SKV_GPU_ADA, SKV_E4M3, SKV_FP16, A16_(16, -10, -132),
	 "AdaTC.m fp8, fp16 out with 10 bits; Ada repo 5000/5000 (no L40S vectors)"},
	{SKV_GPU_ADA, SKV_E5M2, SKV_FP16, A16_(16, -10, -132),
	 "AdaTC.m fp8, fp16 out with 10 bits; Ada repo 5000/5000 (no L40S vectors)"},
#define HOPPER_(G, what)                                                                                    \
	{G, SKV_FP16, SKV_FP32, A32_(16, 2, -133), what " n 16, neab 2, rz; fp16 -> fp32 5000/5000"}, \
	{G, SKV_FP16, SKV_FP16, A16_(16, 2, -21), what " fp16 out: rne, -21; 5000/5000"},             \
	{G, SKV_BF16, SKV_FP32, A32_(16, 2, -133), what " bf16: as fp16; 5000/5000"},                \
	{G, SKV_TF32, SKV_FP32, A32_(8, 2, -133), what " tf32: n 8; 5000/5000 (K = 4)"}
	HOPPER_(SKV_GPU_H100, "H100TC.m (H200TC.m calls it):"),
	HOPPER_(SKV_GPU_B200, "B200TC.m:"),
	/* H100 FP8 -> fp32 as recorded: wgmma with c = 0 (Validate_TC_models.m);
	 * how a nonzero c joins is the model file's assumption. */
	{SKV_GPU_H100, SKV_E4M3, SKV_FP32, ALIGNED_(32, -10, SKV_MMA_RZ, 13, -133),
	 "H100TC.m fp8 (wgmma): n 32, neab -10, 13 bits, rz; 5000/5000 with c = 0"},
	{SKV_GPU_H100, SKV_E5M2, SKV_FP32, ALIGNED_(32, -10, SKV_MMA_RZ, 13, -133),
	 "H100TC.m fp8 (wgmma): n 32, neab -10, 13 bits, rz; 5000/5000 with c = 0"},
	/* FP8 mma.sync (model_validation/CUDA/mma_fp8_output_fp16.cu, and
	 * _fp32.cu on B200): the first GEMM.m's interleaved pattern, two
	 * half-blocks of 16 then c added with rne ("cOutRoundMode = 'rne'",
	 * 109e412), neab 2. The current files' one block with c aligned fits
	 * 3207/3236 (B200 e4m3/e5m2 -> fp32) and, given 10 fraction bits,
	 * 3113/3340 (H100 -> fp16) of 5000 (test_mma.c, test_fp8_model_files). */
	{SKV_GPU_H100, SKV_E4M3, SKV_FP16, P_(32, 1, 2, SKV_MMA_RNE, 10, -133, SKV_MMA_C_AFTER),
	 "H100 fp8 mma.sync, fp16 out: halves of 16, neab 2, rne, c added rne; 5000/5000"},
	{SKV_GPU_H100, SKV_E5M2, SKV_FP16, P_(32, 1, 2, SKV_MMA_RNE, 10, -133, SKV_MMA_C_AFTER),
	 "H100 fp8 mma.sync, fp16 out: halves of 16, neab 2, rne, c added rne; 5000/5000"},
	{SKV_GPU_B200, SKV_E4M3, SKV_FP32, P_(32, 1, 2, SKV_MMA_RZ, 23, -133, SKV_MMA_C_AFTER),
	 "B200 fp8 mma.sync: halves of 16, neab 2, rz, c added rne; 5000/5000"},
	{SKV_GPU_B200, SKV_E5M2, SKV_FP32, P_(32, 1, 2, SKV_MMA_RZ, 23, -133, SKV_MMA_C_AFTER),
	 "B200 fp8 mma.sync: halves of 16, neab 2, rz, c added rne; 5000/5000"},
	{SKV_GPU_B200, SKV_E4M3, SKV_FP16, P_(32, 1, 2, SKV_MMA_RNE, 10, -133, SKV_MMA_C_AFTER),
	 "B200 fp8 mma.sync, fp16 out: halves of 16, neab 2, rne, c added rne; 5000/5000"},
	{SKV_GPU_B200, SKV_E5M2, SKV_FP16, P_(32, 1, 2, SKV_MMA_RNE, 10, -133, SKV_MMA_C_AFTER),
	 "B200 fp8 mma.sync, fp16 out: halves of 16, neab 2, rne, c added rne; 5000/5000"},
};

enum { NEAB_MIN = -20, NEAB_MAX = 7, MIN_EXP_FLOOR = -400 };

static int out_ok(skv_format f) { return f == SKV_FP32 || f == SKV_FP16; }

/* The ranges that keep every step exact: 25 + neab <= 32 bits per aligned
 * addend (the model's uint32), 2^(E - 23 - neab) a normal double. */
static int params_ok(const skv_mma_params *p, skv_format out)
{
	if (!p || !out_ok(out) || p->n < 1 || p->n > NMAX)
		return 0;
	if ((p->halves != 0 && p->halves != 1) || (p->halves && p->n % 4 != 0))
		return 0;
	if (p->neab < NEAB_MIN || p->neab > NEAB_MAX || (p->sticky != 0 && p->sticky != 1))
		return 0;
	if ((unsigned)p->final_round > SKV_MMA_RU || (unsigned)p->align_round > SKV_MMA_RU)
		return 0;
	if (p->out_frac < 1 || p->out_frac > skv_format_precision(out) - 1)
		return 0;
	if (p->min_exp < -1100 || p->min_exp > 200 || (unsigned)p->cjoin > SKV_MMA_C_AFTER)
		return 0;
	if ((unsigned)p->c_min_exp > 1 || (unsigned)p->in_subnormals > 1 || (unsigned)p->out_subnormals > 1 ||
	    (unsigned)p->denorm_products > 1 || (unsigned)p->product_limit > 1)
		return 0;
	return !(p->cjoin == SKV_MMA_C_LATE && (p->sticky || p->halves));
}

static void unit_fill(skv_mma_unit *u, int gpu, const skv_mma_params *par, skv_format in, skv_format out,
		      const char *source)
{
	skv_mma_unit t;
	memset(&t, 0, sizeof t);
	t.gpu = gpu;
	t.input = in;
	t.output = out;
	if (par) {
		t.par = *par;
		if (t.par.min_exp < MIN_EXP_FLOOR) /* below every operand exponent: no limit */
			t.par.min_exp = MIN_EXP_FLOOR;
	}
	t.source = source;
	t.emin_in = skv_format_emin(in);
	t.emin_out = skv_format_emin(out);
	t.emax_out = skv_format_emax(out);
	t.fast = par && !par->sticky && par->cjoin != SKV_MMA_C_LATE && par->in_subnormals &&
		 par->denorm_products && !par->product_limit;
	*u = t;
}

int skv_mma_unit_init(skv_mma_unit *u, skv_gpu g, skv_format in, skv_format out)
{
	if (!u || (unsigned)g >= SKV_NGPUS || skv_mma_input_base(in) < 0 || !out_ok(out))
		return SKV_EINVAL;
	if (g == SKV_GPU_IEEE) {
		unit_fill(u, g, NULL, in, out, "sequential IEEE fma in the output format");
		return SKV_OK;
	}
	for (size_t i = 0; i < sizeof unit_table / sizeof unit_table[0]; i++)
		if (unit_table[i].g == g && (int)unit_table[i].in == skv_mma_input_base(in) && unit_table[i].out == out) {
			unit_fill(u, g, &unit_table[i].par, in, out, unit_table[i].source);
			return SKV_OK;
		}
	return SKV_EINVAL;
}

int skv_mma_unit_custom(skv_mma_unit *u, const skv_mma_params *par, skv_format in, skv_format out)
{
	if (!u || skv_mma_input_base(in) < 0 || !params_ok(par, out))
		return SKV_EINVAL;
	unit_fill(u, -1, par, in, out, "custom parameters");
	return SKV_OK;
}

/* A unit is well formed when init or custom could have made it. */
static int unit_ok(const skv_mma_unit *u)
{
	if (!u || skv_mma_input_base(u->input) < 0 || !out_ok(u->output))
		return 0;
	if (u->gpu == SKV_GPU_IEEE)
		return 1;
	return u->gpu >= -1 && u->gpu < SKV_NGPUS && params_ok(&u->par, u->output) &&
	       u->par.min_exp >= MIN_EXP_FLOOR;
}

/* ------------------------------------------------------ exact helpers */

/*
 * v (exact, nonzero or zero) rounded to out_frac fraction bits with gradual
 * underflow at emin_out, in mode m. t = v 2^-q is exact (a power-of-two
 * scaling inside the double range) and |t| < 2^(out_frac + 1) <= 2^24, so
 * r = trunc(t) and f = t - r are exact and the mode needs only r, f and
 * the sign. A result of 2^(emax+1) or more is +-inf (see the top comment).
 */
double skv_mma_round_out(const skv_mma_unit *u, double v, skv_mma_round m)
{
	double r0;
	if (skv_mma_round_bits(&r0, u, v, m))
		return r0;
	if (v == 0)
		return 0.0;
	int e = expo(v);
	if (e < u->emin_out)
		e = u->emin_out;
	const int q = e - u->par.out_frac;
	double t = v * pow2i(-q), r = trunc(t), f = t - r;
	switch (m) {
	case SKV_MMA_RNE:
		if (fabs(f) > 0.5 || (fabs(f) == 0.5 && ((int64_t)r & 1)))
			r += (f > 0) ? 1.0 : -1.0;
		break;
	case SKV_MMA_RD: if (f < 0) r -= 1.0; break;
	case SKV_MMA_RU: if (f > 0) r += 1.0; break;
	default: break;
	}
	r *= pow2i(q);
	if (fabs(r) >= pow2i(u->emax_out + 1))
		return copysign(INFINITY, v);
	if (!u->par.out_subnormals && fabs(r) < pow2i(u->emin_out))
		return 0.0;
	return r;
}

/* The block exponent E of products with exponents pe[0..m) and, when c != 0,
 * of c (an fp32 exponent, subnormals at -126), raised to min_exp. */
static int block_exp(const skv_mma_unit *u, const int *pe, unsigned m, double c)
{
	int E = INT_MIN;
	for (unsigned j = 0; j < m; j++)
		E = pe[j] > E ? pe[j] : E;
	if (c != 0) {
		int ec = expo(c) < -126 ? -126 : expo(c);
		E = ec > E ? ec : E;
	}
	return E < u->par.min_exp ? u->par.min_exp : E;
}

/* -------------------------------------------------------- block sums */

/* One global-alignment block without sticky bit: S = sum trunc(x / g). */
static double aligned_sum(const skv_mma_unit *u, const double *P, const int *pe, unsigned m, double c)
{
	if (m == 0 && c == 0)
		return 0.0;
	const int G = block_exp(u, pe, m, c) - 23 - u->par.neab;
	const double scale = pow2i(-G);
	int64_t S = (int64_t)(c * scale);
	for (unsigned j = 0; j < m; j++)
		S += (int64_t)(P[j] * scale);
	return skv_mma_round_out(u, (double)S * pow2i(G), u->par.final_round);
}

/* AlignSignficand with stkbitenabled: x's significand X = floor(|x| 2^(23 +
 * neab - e_x)) (an integer < 2^32), shifted right by s = E - e_x, doubled,
 * plus 1 when any of its low min(s, 24 + neab) bits is set (the model's
 * lostMask, which stops at bitlen = 24 + neab). Units of g / 2. */
static int64_t sticky_addend(double x, int ex, int E, int neab)
{
	uint64_t X = (uint64_t)(fabs(x) * pow2i(23 + neab - ex));
	int s = E - ex, k = s < 24 + neab ? s : 24 + neab;
	uint64_t T = s < 64 ? X >> s : 0, lost = (X & ((UINT64_C(1) << k) - 1)) != 0;
	int64_t a = (int64_t)(2 * T + lost);
	return x < 0 ? -a : a;
}

static double sticky_sum(const skv_mma_unit *u, const double *P, const int *pe, unsigned m, double c)
{
	if (m == 0 && c == 0)
		return 0.0;
	const int E = block_exp(u, pe, m, c), neab = u->par.neab;
	int64_t S = 0;
	if (c != 0)
		S += sticky_addend(c, expo(c) < -126 ? -126 : expo(c), E, neab);
	for (unsigned j = 0; j < m; j++)
		S += sticky_addend(P[j], pe[j], E, neab);
	return skv_mma_round_out(u, (double)S * pow2i(E - 24 - neab), u->par.final_round);
}

/* x >> s rounded in mode m (AddTwoNonNormSums' ulpAdjustment; its rz branch
 * leaves the adjustment undefined in the model, truncation is its intent). */
static uint64_t shift_round(uint64_t x, int s, skv_mma_round m, int neg)
{
	if (s == 0)
		return x;
	uint64_t t = s < 64 ? x >> s : 0, rem = s < 64 ? x - (t << s) : x;
	switch (m) {
	case SKV_MMA_RD: return t + (rem > 0 && neg);
	case SKV_MMA_RU: return t + (rem > 0 && !neg);
	case SKV_MMA_RNE:
		if (s > 64)
			return t;
		return t + (rem > (UINT64_C(1) << (s - 1)) || (rem == (UINT64_C(1) << (s - 1)) && (t & 1)));
	default: return t;
	}
}

/* late_partial_sum: products aligned among themselves (exponent E1, sum S1
 * in units 2^(E1 - 23 - neab); E1 = min_exp without products), c as the
 * integer round(|c| 2^(23 + neab - e_c)) (MATLAB's uint32 rounds half away),
 * then AddTwoNonNormSums with eab 7 for the products and 0 for c. */
static double late_sum(const skv_mma_unit *u, const double *P, const int *pe, unsigned m, double c)
{
	int neab = u->par.neab, E1 = block_exp(u, pe, m, 0.0), E2;
	const double scale = pow2i(23 + neab - E1);
	int64_t S1 = 0;
	for (unsigned j = 0; j < m; j++)
		S1 += (int64_t)(P[j] * scale);
	uint64_t s1 = (uint64_t)(S1 < 0 ? -S1 : S1), s2 = 0;
	if (c != 0) {
		E2 = expo(c) < -126 ? -126 : expo(c);
		s2 = (uint64_t)floor(fabs(c) * pow2i(23 + neab - E2) + 0.5);
	} else {
		E2 = u->par.c_min_exp ? -126 : -1024;
	}
	const int E = E1 > E2 ? E1 : E2;
	if (E1 < E) {
		neab += 7;
		s1 = shift_round(s1 << 7, E - E1, u->par.align_round, S1 < 0);
		s2 <<= 7;
	} else if (E2 < E) {
		s2 = shift_round(s2, E - E2, u->par.align_round, c < 0);
	}
	int64_t R = (S1 < 0 ? -(int64_t)s1 : (int64_t)s1) + (c < 0 ? -(int64_t)s2 : (int64_t)s2);
	return skv_mma_round_out(u, (double)R * pow2i(E - 23 - neab), u->par.final_round);
}

/* --------------------------------------------------------------- blocks */

typedef struct {
	double P[2][NMAX];
	int pe[2][NMAX];
	unsigned m[2];
	int bad; /* a NaN or infinite product, or a limited one */
} products;

/* Exact nonzero products of a block of len <= n, with their exponents, in
 * one list or (halves) two: i mod 4 < 2 and the rest. */
static void gather(products *pr, const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb,
		   unsigned len)
{
	const int emin = u->emin_in, split = u->par.halves;
	const double tiny = pow2i(emin), limit = pow2i(u->emax_out + 1);
	pr->m[0] = pr->m[1] = 0;
	for (unsigned i = 0; i < len; i++) {
		double x = a[i * sa], y = b[i * sb];
		if (!u->fast && !u->par.in_subnormals) {
			x = fabs(x) < tiny ? 0.0 : x;
			y = fabs(y) < tiny ? 0.0 : y;
		}
		double p = x * y;
		if (!isfinite(p) || (u->par.product_limit && fabs(p) >= limit))
			pr->bad = 1;
		if (p == 0 || pr->bad)
			continue;
		int ex = expo(x) < emin ? emin : expo(x), ey = expo(y) < emin ? emin : expo(y);
		int e = ex + ey, l = split && (i & 2);
		if (!u->par.denorm_products && fabs(p) >= pow2i(e + 1))
			e++;
		pr->P[l][pr->m[l]] = p;
		pr->pe[l][pr->m[l]++] = e;
	}
}

typedef double (*sum_fn)(const skv_mma_unit *, const double *, const int *, unsigned, double);

/* One block FMA of len products on accumulator c (finite). */
static double block(const skv_mma_unit *u, products *pr, double c)
{
	sum_fn sum = u->par.sticky ? sticky_sum : u->par.cjoin == SKV_MMA_C_LATE ? late_sum : aligned_sum;
	double c0 = u->par.cjoin == SKV_MMA_C_AFTER ? 0.0 : c;
	double r = sum(u, pr->P[0], pr->pe[0], pr->m[0], c0);
	if (u->par.halves && isfinite(r)) /* the second half-block takes the first as its c */
		r = sum(u, pr->P[1], pr->pe[1], pr->m[1], r);
	if (u->par.cjoin == SKV_MMA_C_AFTER) {
		r = skv_add_i(u->output, c, r);
		if (!u->par.out_subnormals && fabs(r) < pow2i(u->emin_out))
			r = 0.0;
	}
	return r;
}

/* GEMM.m's rule for NaN and infinities among the products and c; the
 * limited products of prd_limit count as infinities of their sign. */
double skv_mma_special(const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb, size_t K,
		       double c)
{
	int pos = c == INFINITY, neg = c == -INFINITY, nan = isnan(c);
	const double limit = pow2i(u->emax_out + 1);
	for (size_t i = 0; i < K; i++) {
		double p = a[i * sa] * b[i * sb];
		nan |= isnan(p);
		if (u->gpu != SKV_GPU_IEEE && u->par.product_limit && isfinite(p) && fabs(p) >= limit)
			p = copysign(INFINITY, p);
		pos |= p == INFINITY;
		neg |= p == -INFINITY;
	}
	if (nan || (pos && neg))
		return NAN;
	return pos ? INFINITY : neg ? -INFINITY : 0.0;
}

static double ieee_dot(const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb, size_t K,
		       double d)
{
	for (size_t i = 0; i < K; i++)
		d = skv_fma_i(u->output, a[i * sa], b[i * sb], d);
	return d;
}

double skv_mma_dot_fast(const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb, size_t K,
			double c)
{
	if (u->gpu == SKV_GPU_IEEE)
		return ieee_dot(u, a, sa, b, sb, K, c);
	if (!isfinite(c))
		return skv_mma_special(u, a, sa, b, sb, K, c);
	if (!u->par.out_subnormals && fabs(c) < pow2i(u->emin_out))
		c = 0.0;
	double d = c;
	if (u->fast && !u->par.halves && u->par.cjoin == SKV_MMA_C_ALIGNED)
		return skv_mma_fast_dot(u, a, sa, b, sb, K, c);
	products pr;
	pr.bad = 0;
	for (size_t k0 = 0; k0 < K; k0 += u->par.n) {
		unsigned len = K - k0 < u->par.n ? (unsigned)(K - k0) : u->par.n;
		gather(&pr, u, a + k0 * sa, sa, b + k0 * sb, sb, len);
		if (pr.bad)
			return skv_mma_special(u, a, sa, b, sb, K, c);
		if (isfinite(d)) /* an overflowed accumulator stays infinite */
			d = block(u, &pr, d);
	}
	return d;
}

int skv_mma_dot(double *d, const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb,
		size_t K, double c)
{
	if (!d || !unit_ok(u) || (K > 0 && (!a || !b)) || (K > 1 && (sa == 0 || sb == 0)))
		return SKV_EINVAL;
	if (!is_value(u->output, c))
		return SKV_EINVAL;
	for (size_t i = 0; i < K; i++)
		if (!is_value(u->input, a[i * sa]) || !is_value(u->input, b[i * sb]))
			return SKV_EINVAL;
	*d = skv_mma_dot_fast(u, a, sa, b, sb, K, c);
	return SKV_OK;
}
