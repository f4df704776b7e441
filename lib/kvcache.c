/* kvcache.c - quantized KV caches: each granularity's scales, quantisation and dequantisation as the serving kernels do them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fmt_inline.h"
#include "skv.h"

#define E4M3_MAX 448.0 /* the largest e4m3 (and ue4m3) value: nvfp4's tensor scale divides by fmax * 448 */

/* The granularities: name, elements per block along head_dim (0: the
 * scale spans whole rows or the tensor), whether a given scale applies,
 * whether the scores placement can take it (one scalar per tensor).
 * Sources:
 *   tensor  vLLM: scaled_vec_conversion (csrc/quantization/fp8/nvidia/
 *           quant_utils.cuh at vllm-project/vllm 03476e5c): store
 *           __nv_cvt_float_to_fp8(float(x) / scale, __NV_SATFINITE), load
 *           float_to_half(half_to_float(fp8) * scale) or
 *           __float2bfloat16(float(fp8) * scale); the amax-derived scale
 *           amax / fmax is the dynamic per-tensor convention (vLLM's
 *           calculate_kv_scales divides by K_SCALE_CONSTANT = 200 and
 *           V_SCALE_CONSTANT = 100 instead: give them as k_scale, v_scale).
 *   token   per-token(-and-head) dynamic scaling amax_j / fmax: skv's
 *           definition of the common scheme (assumed, not read in a kernel).
 *   mx      OCP Microscaling Formats (MX) v1.0, section 6.3: X =
 *           2^(floor(log2(max |V_i|)) - emax_elem), P_i = quantize(V_i / X)
 *           with values beyond the element's max normal clamped to it;
 *           32 elements per block (section 5).
 *   nvfp4   NVIDIA's NVFP4 (two-level scaling: an fp32 per-tensor scale and
 *           an e4m3 scale per 16 elements, "Introducing NVFP4", NVIDIA
 *           technical blog 2025; TensorRT-LLM's cvt_warp_fp16_to_fp4
 *           computes SFValue = SFScaleVal * vecMax / 6 in e4m3 and scales the
 *           elements by its reciprocal). skv divides instead of multiplying
 *           by reciprocals (assumed: the one-rounding form of the same
 *           quotient).
 *   sglang-fp4  SGLang's KVFP4QuantizeUtil (python/sglang/srt/layers/
 *           quantization/kvfp4_tensor.py at sgl-project/sglang 0e6b6cf0ac71):
 *           scale_exp = ceil(log2(clamp(block_max / E2M1_MAX, min=1e-10))),
 *           scaled = x / exp2(scale_exp), magnitude = sum(|scaled| >=
 *           E2M1_BOUNDS); dequantized E2M1_VALUES[magnitude] * exp2(scale_exp)
 *           then .to(bfloat16). The chain block_max / 6, log2, ceil is one
 *           torch.compile kernel, taken in fp32 (Inductor computes bf16
 *           pointwise chains in fp32: inferred); the ceil of log2 is exact
 *           here since amax / 6 of a bf16 amax is never within 2^-20 above
 *           a power of two without being one. */
typedef struct {
	const char *name;
	unsigned block;
	int given;
	int scores;
} kvs_row;

static const kvs_row kvs[SKV_NKVSCALES] = {
	[SKV_KVS_NONE] = {"none", 0, 0, 0},     [SKV_KVS_TENSOR] = {"tensor", 0, 1, 1},
	[SKV_KVS_HEAD] = {"head", 0, 1, 1},     [SKV_KVS_TOKEN] = {"token", 0, 0, 0},
	[SKV_KVS_MX] = {"mx", 32, 0, 0},        [SKV_KVS_NVFP4] = {"nvfp4", 16, 1, 0},
	[SKV_KVS_SGLANG] = {"sglang-fp4", 16, 0, 0},
};
static const char *const deq_names[SKV_NKVDEQS] = {"values", "scores"};

const char *skv_kv_scale_name(skv_kv_scale s) { return (unsigned)s < SKV_NKVSCALES ? kvs[s].name : NULL; }
const char *skv_kv_deq_name(skv_kv_deq d) { return (unsigned)d < SKV_NKVDEQS ? deq_names[d] : NULL; }
unsigned skv_kv_block(skv_kv_scale s) { return (unsigned)s < SKV_NKVSCALES ? kvs[s].block : 0; }

int skv_kv_scale_parse(skv_kv_scale *s, const char *name)
{
	for (unsigned i = 0; s && name && i < SKV_NKVSCALES; i++)
		if (strcmp(kvs[i].name, name) == 0) {
			*s = (skv_kv_scale)i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

int skv_kv_deq_parse(skv_kv_deq *d, const char *name)
{
	for (unsigned i = 0; d && name && i < SKV_NKVDEQS; i++)
		if (strcmp(deq_names[i], name) == 0) {
			*d = (skv_kv_deq)i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

/* A given scale: 0 (derive it), or finite, positive and positive in fp32. */
static int given_ok(double s) { return s == 0.0 || (isfinite(s) && s > 0 && skv_round_i(SKV_FP32, s) > 0); }

const char *skv_kv_cache_invalid(const skv_kv_cache *kc, size_t d)
{
	if (!kc)
		return "no cache given";
	if ((unsigned)kc->scale >= SKV_NKVSCALES)
		return "unknown scale granularity";
	if ((unsigned)kc->deq >= SKV_NKVDEQS)
		return "unknown dequantisation placement";
	if (kc->format < 0 || kc->format > SKV_NFORMATS)
		return "unknown cache format";
	if (kc->format > 0 && skv_format_is_scale((skv_format)(kc->format - 1)))
		return "the cache format is a scale-only format (e8m0, ue4m3): it holds no signed value";
	if (!given_ok(kc->k_scale) || !given_ok(kc->v_scale))
		return "a given KV scale must be finite and positive (and not 0 in fp32)";
	if (kc->format == 0 && (kc->scale != SKV_KVS_NONE || kc->deq != SKV_KVD_VALUES || kc->k_scale || kc->v_scale))
		return "a scale granularity, placement or given scale needs a cache format";
	if (!kvs[kc->scale].given && (kc->k_scale || kc->v_scale))
		return "this scale granularity takes no given scale (only tensor, head and nvfp4 do)";
	if (kc->scale == SKV_KVS_SGLANG && kc->format != SKV_KV(SKV_E2M1))
		return "sglang-fp4 scales hold e2m1 values only";
	if (kvs[kc->scale].block && (d == 0 || d % kvs[kc->scale].block))
		return kc->scale == SKV_KVS_MX ? "mx blocks of 32 do not divide the head dimension"
					       : "blocks of 16 (nvfp4, sglang-fp4) do not divide the head dimension";
	if (kc->deq == SKV_KVD_SCORES && !kvs[kc->scale].scores)
		return "scores placement needs one scale per tensor (tensor or head granularity)";
	return NULL;
}

/* Largest magnitude of x[0..n). */
static double amax(const double *x, size_t n)
{
	double m = 0.0;
	for (size_t i = 0; i < n; i++)
		m = fabs(x[i]) > m ? fabs(x[i]) : m;
	return m;
}

/* The scale RN32(a / den), 1 for an amax of 0 (an all-zero tensor or row
 * stores zeros whatever the scale) or a quotient below fp32's range. */
static double amax_scale(double a, double den)
{
	double s = skv_div_i(SKV_FP32, a, den);
	return s > 0 ? s : 1.0;
}

/* One element: q = RN_c(RN32(x / s)), optionally clamped to +-fmax first
 * (mx); its dequantized value RN_in(RN32(q s)) into *deq, or the code
 * itself with *exact = q s exactly (4 to 11 significant bits times fp32's
 * 24: exact in double). */
typedef struct {
	skv_format c, in;
	double fmax;
	int clamp, values, away;
} elem_ctx;

/* e2m1 to nearest with ties away from zero: SGLang's count of the bounds
 * at or below |y| (a saturating table: |y| >= 5 gives 6). */
static double e2m1_away(double y)
{
	static const double bound[7] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5}, value[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
	int m = 0;
	while (m < 7 && fabs(y) >= bound[m])
		m++;
	return signbit(y) ? -value[m] : value[m];
}

static void elem(double *kern, double *exact, double x, double s, const elem_ctx *e)
{
	double y = skv_div_i(SKV_FP32, x, s);
	if (e->clamp)
		y = y > e->fmax ? e->fmax : y < -e->fmax ? -e->fmax : y;
	const double q = e->away ? e2m1_away(y) : skv_round_i(e->c, y);
	*exact = e->values ? skv_round_i(e->in, skv_mul_i(SKV_FP32, q, s)) : q * s;
	*kern = e->values ? *exact : q;
}

/* MX's shared scale of a block with largest magnitude a: 2^(floor(log2 a)
 * - emax_elem), within e8m0's 2^-127 .. 2^127; 2^-127 for a block of zeros. */
static double mx_scale(double a, skv_format c)
{
	if (a == 0)
		return ldexp(1.0, -127);
	int e = ilogb(a) - skv_format_emax(c);
	e = e < -127 ? -127 : e > 127 ? 127 : e;
	return ldexp(1.0, e);
}

/* SGLang's block scale 2^ceil(log2(max(RN32(a / 6), 1e-10))): the
 * exponent of the smallest power of two at or above the quotient. */
static double sglang_scale(double a)
{
	double t = skv_div_i(SKV_FP32, a, 6.0);
	t = t > 1e-10 ? t : skv_round_i(SKV_FP32, 1e-10);
	int e;
	const double m = frexp(t, &e); /* t = m 2^e, m in [0.5, 1) */
	return ldexp(1.0, m == 0.5 ? e - 1 : e);
}

/* Quantizes one tensor x[n][d] (K or V) into kern and exact, with given
 * tensor scale g (0: from the amax); *ts the tensor scale used. */
static void tensor(double *kern, double *exact, double *ts, const double *x, size_t n, size_t d, double g,
		   const skv_kv_cache *kc, skv_format input)
{
	const skv_format c = (skv_format)(kc->format - 1);
	const elem_ctx e = {c, input, skv_format_max(c), kc->scale == SKV_KVS_MX, kc->deq == SKV_KVD_VALUES,
			    kc->scale == SKV_KVS_SGLANG};
	const unsigned blk = kvs[kc->scale].block;
	double t = 1.0;
	if (kc->scale == SKV_KVS_TENSOR || kc->scale == SKV_KVS_HEAD)
		t = g ? skv_round_i(SKV_FP32, g) : amax_scale(amax(x, n * d), e.fmax);
	else if (kc->scale == SKV_KVS_NVFP4)
		t = g ? skv_round_i(SKV_FP32, g) : amax_scale(amax(x, n * d), skv_mul_i(SKV_FP32, e.fmax, E4M3_MAX));
	*ts = t;
	for (size_t j = 0; j < n; j++) {
		const double *r = x + j * d;
		double s = kc->scale == SKV_KVS_TOKEN ? amax_scale(amax(r, d), e.fmax) : t;
		for (size_t i = 0; i < d; i++) {
			if (blk && i % blk == 0) {
				const double a = amax(r + i, blk);
				if (kc->scale == SKV_KVS_MX) {
					s = mx_scale(a, c);
				} else if (kc->scale == SKV_KVS_SGLANG) {
					s = sglang_scale(a);
				} else { /* nvfp4: the ue4m3 block scale over t; a zero block scale stores zeros */
					const double sb = skv_round_i(SKV_UE4M3, skv_div_i(SKV_FP32, skv_div_i(SKV_FP32, a, e.fmax), t));
					s = sb > 0 ? skv_mul_i(SKV_FP32, sb, t) : 1.0;
				}
			}
			elem(kern + j * d + i, exact + j * d + i, r[i], s, &e);
		}
	}
}

static int all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

static int copy_problem(skv_problem *dst, const skv_problem *p)
{
	const size_t qb = p->nq * p->d * sizeof(double), kb = p->n * p->d * sizeof(double);
	*dst = *p;
	dst->q = malloc(qb);
	dst->k = malloc(kb);
	dst->v = malloc(kb);
	if (!dst->q || !dst->k || !dst->v) {
		skv_problem_free(dst);
		return SKV_ENOMEM;
	}
	memcpy(dst->q, p->q, qb);
	memcpy(dst->k, p->k, kb);
	memcpy(dst->v, p->v, kb);
	return SKV_OK;
}

void skv_kv_problem_free(skv_kv_problem *kp)
{
	if (!kp)
		return;
	if (!kp->shared)
		skv_problem_free(&kp->truth);
	skv_problem_free(&kp->kern);
	*kp = (skv_kv_problem){.shared = 0};
}

double skv_kv_post(skv_format f, double x, double v_post)
{
	return v_post == 1.0 ? x : skv_round_i(f, skv_mul_i(SKV_FP32, x, v_post));
}

int skv_kv_quantize(skv_kv_problem *out, const skv_problem *p, skv_format input, const skv_kv_cache *kc)
{
	if (!out || !p || !p->q || !p->k || !p->v || !skv_fmt_i_of(input) || skv_format_is_scale(input) ||
	    skv_kv_cache_invalid(kc, p->d))
		return SKV_EINVAL;
	skv_kv_problem r = {.k_scale = 1.0, .v_scale = 1.0, .v_post = 1.0};
	int st = copy_problem(&r.kern, p);
	if (st != SKV_OK)
		return st;
	const size_t m = p->n * p->d;
	if (kc->format == 0 || kc->deq == SKV_KVD_VALUES) {
		r.truth = r.kern; /* the kernel reads the truth's values */
		r.shared = 1;
	} else if ((st = copy_problem(&r.truth, p)) != SKV_OK) {
		skv_problem_free(&r.kern);
		return st;
	}
	if (kc->format > 0) {
		tensor(r.kern.k, r.truth.k, &r.k_scale, p->k, p->n, p->d, kc->k_scale, kc, input);
		tensor(r.kern.v, r.truth.v, &r.v_scale, p->v, p->n, p->d, kc->v_scale, kc, input);
		if (kc->deq == SKV_KVD_SCORES) {
			r.kern.scale = p->scale * r.k_scale; /* in double, as FlashInfer's Python multiplies */
			r.v_post = r.v_scale;
		}
	}
	if (!all_finite(r.kern.k, m) || !all_finite(r.kern.v, m) || !all_finite(r.truth.k, m) ||
	    !all_finite(r.truth.v, m) || !isfinite(r.kern.scale)) {
		skv_kv_problem_free(&r);
		return SKV_ERANGE;
	}
	*out = r;
	return SKV_OK;
}
