/* skv.h - the one public header of skv, a precision study harness for the split-KV attention merge. */
#ifndef SKV_H
#define SKV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SKV_VERSION "0.1.0"

/* ------------------------------------------------------------------ status */

/* Every fallible public function returns one of these. On any error the
 * function has written nothing to its output arguments. */
typedef enum {
	SKV_OK = 0,
	SKV_EINVAL = 1, /* an argument is out of its documented domain */
	SKV_ENOMEM = 2, /* an allocation failed */
	SKV_EIO = 3,    /* a file could not be read or written */
	SKV_ERANGE = 4  /* a value overflowed what the requested format can hold */
} skv_status;

const char *skv_strerror(int status);
const char *skv_version(void);

/* ----------------------------------------------------------------- threads
 *
 * The library holds no mutable global state: every function is reentrant
 * and may run on several threads at once, each with its own output
 * arguments (inputs are only read and may be shared). Two places use MPFR:
 * skv_truth_range's fallback (when the certified double-double path
 * declines) and the hard cases of the fp32 elementary functions (skv_exp
 * and the others in SKV_FP32, reached by the kernels and merges in fp32).
 * MPFR keeps its constant caches and flags per thread only when it was
 * built thread-safe; skv_mpfr_thread_safe() says whether it was
 * (mpfr_buildopt_tls_p). With a build that is not, call the library from
 * one thread at a time. A thread that used those paths should call
 * mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE) before it exits (MPFR's rule for
 * its per-thread caches). */
int skv_mpfr_thread_safe(void);

/* ----------------------------------------------------------------- formats */

/* The emulated number formats. Values of every format are carried in a
 * double; a double "is in" format f when skv_round(f, x) == x bit for bit.
 * p is the precision with the implicit bit, emin the exponent of the
 * smallest normal, emax that of the largest binade (lib/fmt_inline.h holds
 * the one table of them, with the sources). */
typedef enum {
	SKV_FP16 = 0,     /* IEEE binary16: p = 11, emin = -14, emax = 15 */
	SKV_BF16 = 1,     /* bfloat16:      p = 8,  emin = -126, emax = 127 */
	SKV_FP32 = 2,     /* IEEE binary32: p = 24, emin = -126, emax = 127 */
	SKV_FP64 = 3,     /* IEEE binary64: p = 53, emin = -1022, emax = 1023 */
	SKV_TF32 = 4,     /* NVIDIA TensorFloat-32: p = 11, fp32's range */
	SKV_E4M3 = 5,     /* OCP FP8 E4M3 ("fn"): p = 4, emin = -6, emax = 8, max 448, no
	                   * infinity; overflow (and +-inf) to NaN, as a plain OCP conversion */
	SKV_E4M3_SAT = 6, /* the same values, saturating to +-448 (PTX .satfinite) */
	SKV_E5M2 = 7,     /* OCP FP8 E5M2: p = 3, emin = -14, emax = 15, max 57344, IEEE infinities */
	SKV_E5M2_SAT = 8, /* the same values, saturating to +-57344 */
	SKV_E2M1 = 9,     /* OCP MX FP4: p = 2, emin = 0, emax = 2: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and
	                   * their negatives; no inf or NaN encoding, saturating to +-6 */
	SKV_E8M0 = 10,    /* OCP MX scale: the powers of two 2^-127 .. 2^127 (p = 1), no sign,
	                   * no zero, saturating; scale-only */
	SKV_UE4M3 = 11    /* NVFP4's block scale: e4m3's non-negative values, saturating;
	                   * scale-only */
} skv_format;
#define SKV_NFORMATS 12

/* What rounding does with a result beyond the largest finite value (after
 * rounding to nearest even as if the exponent were unbounded, so e4m3's
 * 464, the midpoint of 448 and 480, ties to 448 and is no overflow). */
typedef enum {
	SKV_OVERFLOW_INF = 0, /* IEEE 754: +-inf (so does an infinite input) */
	SKV_OVERFLOW_NAN = 1, /* NaN (a format without infinities: +-inf input too) */
	SKV_OVERFLOW_SAT = 2  /* +-largest finite value (so does +-inf) */
} skv_overflow;

/* "fp16", "bf16", "fp32", "fp64", "tf32", "e4m3", "e4m3-sat", "e5m2",
 * "e5m2-sat", "e2m1", "e8m0", "ue4m3"; NULL for an unknown value. */
const char *skv_format_name(skv_format f);
/* Parses the names above. SKV_EINVAL for anything else (f untouched). */
int skv_format_parse(skv_format *f, const char *name);
/* Precision in bits, implicit bit included (11, 8, 24, 53, ...); 0 if unknown. */
int skv_format_precision(skv_format f);
/* Bits of f's encoding in memory: 16, 16, 32, 64, 32 (tf32 is held in a
 * 32-bit word), 8 for the 8-bit formats and scales (ue4m3: 7 bits in a
 * byte whose sign bit is 0), 4 for e2m1; 0 for an unknown f. */
int skv_format_bits(skv_format f);
/* Exponent of the smallest normal (-14, -126, -126, -1022, ...); INT_MIN if
 * unknown (e2m1's is 0). */
int skv_format_emin(skv_format f);
/* Exponent of the largest binade (15, 127, 127, 1023, ...); INT_MIN if unknown. */
int skv_format_emax(skv_format f);
/* The overflow policy of f (an skv_overflow); -1 for an unknown value. */
int skv_format_overflow(skv_format f);
/* 1 if f has negative values, 0 if not (e8m0, ue4m3); -1 for an unknown value. */
int skv_format_is_signed(skv_format f);
/* 1 if f is a scale-only format (e8m0, ue4m3: block scales, not the values
 * of a stage; a program refuses them there), 0 for a value format; -1 for
 * an unknown value. */
int skv_format_is_scale(skv_format f);
/* Largest finite value of the format (65504, ..., 448 for e4m3, 6 for e2m1). */
double skv_format_max(skv_format f);
/* Unit roundoff u = 2^-p (1/2 for e8m0: x / 1.5 <= RN(x) <= 1.5 x). */
double skv_format_unit_roundoff(skv_format f);
/* Spacing of format f at |x|: 2^(max(e, emin) - p + 1) where 2^e <= |x| <
 * 2^(e+1); for x == 0 the smallest subnormal (e8m0: 2^-127, its smallest
 * value). For |x| above the largest finite value the spacing at the largest
 * binade (e4m3: 32). NaN for NaN. */
double skv_ulp(skv_format f, double x);

/* Rounds x to the nearest value of f, ties to even, directly (one rounding,
 * never double -> float -> half), with gradual underflow in every format
 * (bf16 subnormals are kept, unlike chop and CPFloat). The result is rounded
 * as if the exponent range were unbounded above, then one beyond the
 * largest finite value (and an infinite x) follows the format's overflow
 * policy: +-inf, NaN or +-max. NaN stays NaN in every format (e2m1 has no
 * NaN encoding, but a NaN upstream must stay visible) and signed zeros are
 * kept. In e8m0 (p = 1, every significand 1) a tie 1.5 * 2^k goes up to
 * 2^(k+1), as MPFR rounds at precision 1, and a positive x below 2^-127
 * gives 2^-127; rounding to e8m0 is to the nearest power of two, not a
 * scale rule (OCP MX's 2^(floor(log2 amax) - emax_elem) is the quantiser's
 * choice, and its power of two rounds to itself). Unsigned formats (e8m0,
 * ue4m3): a negative x gives NaN, -0 gives +0 in ue4m3; e8m0 has no zero,
 * so +-0 gives NaN. Costs a few cycles for fp32 and fp64.
 * An out-of-range f gives NaN (the one failure signal of these primitives;
 * every entry point that takes a configuration validates it first). */
double skv_round(skv_format f, double x);

/* Emulated arithmetic: each call returns the exact result of the operation
 * on its (already representable) arguments rounded once to f, as skv_round
 * rounds (overflow policy, sign and zero rules included).
 *
 * Correctly rounded (round to nearest even) in every format:
 *   add, sub, mul, div, sqrt (exact double result or Roux's q >= 2p+2
 *   theorem, double rounding is innocuous: 53 >= 2p + 2 for every p <= 24),
 *   and fma (exact product in double, sum rounded to odd in double, then
 *   rounded to f: 53 >= p + 2; for fp64 the C library's fma, which is
 *   correctly rounded).
 * Correctly rounded in every format but fp64: exp, exp2, log, log2, log1p,
 * expm1. The libm double result y is trusted to 64 double ulps: when y's
 * interval of that width holds a midpoint of the format (about one fp32
 * call in 2^22), the value is recomputed with MPFR. Proven on every input
 * of fp16, bf16 and the 8- and 4-bit formats, and in fp32 and tf32 on
 * seeded random inputs and on inputs built next to their midpoints, against
 * MPFR (tests/test_arith.c), also with a libm simulated 48 ulps off; so the
 * results do not depend on the platform's libm.
 * Faithful (error below one ulp; one of the two fp64 values around the
 * exact one) in fp64, as the C library gives them, checked on seeded random
 * inputs against MPFR: exp, exp2, log, log2, log1p, expm1.
 */
double skv_add(skv_format f, double a, double b);
double skv_sub(skv_format f, double a, double b);
double skv_mul(skv_format f, double a, double b);
double skv_div(skv_format f, double a, double b);
double skv_fma(skv_format f, double a, double b, double c);
double skv_sqrt(skv_format f, double a);
double skv_exp(skv_format f, double a);
double skv_exp2(skv_format f, double a);
double skv_log(skv_format f, double a);
double skv_log2(skv_format f, double a);
double skv_log1p(skv_format f, double a);
double skv_expm1(skv_format f, double a);

/* -------------------------------------------------------- random numbers */

/* xoshiro256** (Blackman and Vigna, 2018) seeded through splitmix64. The
 * stream depends only on the seed: the same bits on every machine. */
typedef struct {
	uint64_t s[4];
} skv_rng;

void skv_rng_seed(skv_rng *r, uint64_t seed);
uint64_t skv_rng_next(skv_rng *r);
/* Uniform on [0, 1) with 53 random bits: (next >> 11) * 2^-53. */
double skv_rng_uniform(skv_rng *r);
/* Standard normal by Marsaglia's polar method, with the logarithm computed
 * by skv's own series in basic IEEE operations (no libm), so the bits are
 * platform-independent. Each call returns the first value of an accepted
 * pair and discards the second (the state stays the four words above). */
double skv_rng_normal(skv_rng *r);
/* out[0..n) = the next n values of skv_rng_normal(r), bit for bit, with r
 * left where those n calls leave it; several times faster (the polar
 * method's arithmetic on vector lanes, lib/rng.c). SKV_EINVAL for a NULL r,
 * or a NULL out with n > 0 (r untouched). */
int skv_rng_normals(double *out, size_t n, skv_rng *r);
/* Uniform integer in [0, n) by rejection (no modulo bias); 0 if n == 0. */
uint64_t skv_rng_below(skv_rng *r, uint64_t n);
/* Mixes several 64-bit words into one seed (splitmix64 chain). */
uint64_t skv_seed_mix(uint64_t a, uint64_t b);
/* Natural logarithm in basic IEEE operations only (no libm), error below one
 * ulp (faithful; tests/test_rng.c checks it against MPFR), so every value skv
 * derives from it (normal draws, the sink key) has the same bits everywhere.
 * log(+-0) = -inf, log(+inf) = +inf, NaN for x < 0 or NaN. */
double skv_rng_log(double x);

/* -------------------------------------------------------- random problems */

typedef enum {
	SKV_DIST_GAUSSIAN = 0, /* q ~ N(0, score_scale^2), K, V ~ N(0, 1) */
	SKV_DIST_SINK = 1,     /* as gaussian, but key 0 is an attention sink:
	                        * its scaled score is log(n) + 2 above zero, so
	                        * it carries about 87% of the softmax mass
	                        * (score_scale 0.5; 82% at 1) */
	SKV_DIST_RAMP = 2      /* as gaussian, plus a recency bias: key j's
	                        * score (for query row 0) rises by
	                        * SKV_RAMP_HEIGHT * j / (n - 1), so the running
	                        * max of an online softmax moves at every block,
	                        * as under ALiBi-style position biases */
} skv_dist;
#define SKV_NDISTS 3
#define SKV_RAMP_HEIGHT 8.0 /* natural-log units from the first key to the last */

const char *skv_dist_name(skv_dist d);
int skv_dist_parse(skv_dist *d, const char *name);

/* One attention problem: nq query rows of length d over n keys. Every value
 * is already rounded to the input format, so the kernels and the truth see
 * the same numbers. */
typedef struct {
	size_t nq, n, d;
	double *q;    /* [nq][d] */
	double *k;    /* [n][d] */
	double *v;    /* [n][d] */
	double scale; /* softmax scale, 1/sqrt(d) as a double */
} skv_problem;

/* Draws a problem from the seed: q first, then K, then V, row-major, one
 * skv_rng_normal each, times score_scale for q, rounded to input.
 * SKV_EINVAL for nq, n or d of 0, a non-finite or non-positive score_scale,
 * or a bad format/dist (a scale-only format included); SKV_ENOMEM;
 * SKV_ERANGE when a drawn value (or a sink or ramp key) overflows the input
 * format (in a saturating format: lies beyond its largest finite value, so
 * the problem is never silently clipped), or the sink or ramp has no
 * direction (query row 0 rounded to all zeros). The sink key is
 * k_0 = RN(q_0 * t) with t set so that scale * (q_0 . k_0) = log(n) + 2
 * before rounding; the ramp adds q_0 * t_j to key j (lib/problem.c). */
int skv_problem_init(skv_problem *p, size_t nq, size_t n, size_t d, skv_dist dist,
		     double score_scale, skv_format input, uint64_t seed);
void skv_problem_free(skv_problem *p);

/* Where a packed problem keeps K and V: the narrowest store that holds
 * every value of its input format exactly (the table in
 * lib/problem_pack.c: a format fits a store when its precision, top
 * exponent and smallest subnormal all fit), so packing and unpacking are
 * exact: fp16, e4m3, e5m2 and e2m1 as binary16 bit patterns (2 bytes), bf16
 * as bfloat16 patterns (2), tf32 and fp32 as binary32 (4), fp64 as doubles. */
typedef enum {
	SKV_STORE_F64 = 0, /* doubles */
	SKV_STORE_F32 = 1, /* IEEE binary32 (float) */
	SKV_STORE_F16 = 2, /* IEEE binary16 bit patterns (uint16_t) */
	SKV_STORE_BF16 = 3 /* bfloat16 bit patterns (uint16_t) */
} skv_store;
#define SKV_NSTORES 4

/* A problem with K and V packed: prob holds nq, n, d, q (doubles) and
 * scale as any problem does; k and v hold K and V in store's encoding, and
 * prob.k and prob.v are the same arrays when store is SKV_STORE_F64, NULL
 * otherwise (so a reader of doubles refuses a packed problem, SKV_EINVAL,
 * instead of misreading it). Readers of doubles take rows through
 * skv_packed_rows; skv_truth_range_packed, skv_scores_packed,
 * skv_split_kernel_packed and skv_attention_online_packed stream them. */
typedef struct {
	skv_problem prob;
	skv_store store;
	void *k, *v; /* [n][d] in store's encoding */
} skv_packed;

/* The problem of skv_problem_init with the same arguments, value for value,
 * with K and V in skv_store_of(input): 2 n d bytes each for the 16-bit and
 * narrower formats, against 8 n d as doubles. Never more memory at any
 * point than the packed problem plus O(d) (K and V are drawn and packed a
 * chunk at a time). Errors as skv_problem_init; nothing written on error. */
int skv_packed_init(skv_packed *p, size_t nq, size_t n, size_t d, skv_dist dist, double score_scale,
		    skv_format input, uint64_t seed);
void skv_packed_free(skv_packed *p);
/* The store a packed problem of input format f uses; -1 for an unknown or
 * scale-only format. */
int skv_store_of(skv_format f);
/* Bytes per value of a store (8, 4, 2, 2); 0 for an unknown one. */
size_t skv_store_bytes(skv_store s);
/* Keys lo .. hi-1 of p as doubles: k_j into k[(j - lo) d .. + d), v_j into
 * v[...] (k or v may be NULL: that side is not read), bit for bit the values
 * of the problem. SKV_EINVAL for a NULL p, hi < lo, hi > n, an unknown
 * store or missing arrays (nothing written). */
int skv_packed_rows(double *k, double *v, const skv_packed *p, size_t lo, size_t hi);

/* ------------------------------------------------------------ ground truth */

/* Precision argument of the ground truth, in bits: at or below it the
 * certified fast path answers (lib/truth.c), above it MPFR at that
 * precision. */
#define SKV_TRUTH_PREC 128

/* A value known to far more than fp64 precision: hi = RN64(t), lo =
 * RN64(t - hi). */
typedef struct {
	double hi, lo;
} skv_dd;

/* Exact attention of query row `row` over keys [lo, hi):
 *   s_j = scale * (q . k_j),  L = log sum_j exp(s_j),
 *   out = sum_j exp(s_j - L) v_j
 * out is [d]; lse is L in natural log units (the offset of the experiments
 * is added by the caller: it changes L, never out). An empty range gives
 * out = 0 and lse = -inf.
 * Accuracy. For 64 <= prec <= SKV_TRUTH_PREC (every prec in that range
 * gives the same result) the result is certified: ||out - exact||_2 <=
 * 2^-100 ||exact||_2 (normwise, out_i read as hi + lo) and |lse - L| <=
 * 2^-104 (1 + |L|). It is computed in error-free double arithmetic streamed
 * over the keys (memory O(d), time linear in the keys; lib/truth_fast.c
 * derives the bound and checks it on every call) and, where that cannot
 * prove the bound (cancellation in V of more than about 2^15, scores beyond
 * ~2^40, values near the overflow threshold, more than 2^32 keys), by MPFR
 * at 128 to 1024 bits; past 1024 bits (an output below about 2^-900 of
 * ||V||, V_i = max_j |v_ji|) the bound is 2^-1000 ||V||_2 instead. For prec
 * > SKV_TRUTH_PREC: MPFR at prec bits, |error of out_i| <= 2^-prec (5 + 4
 * log m) V_i to first order (lib/truth_mpfr.c).
 * Deterministic (the same bits on every machine, thread count and
 * instruction set) and reentrant: no global state, so it may be called from
 * several threads at once; the fast path never touches MPFR, the MPFR path
 * sets its exponent range for the call and restores it and the flags (both
 * per-thread in a thread-safe MPFR build).
 * SKV_EINVAL for row >= nq, lo > hi, hi > n, prec < 64 or > 65536, NULL
 * pointers, d == 0, or a non-finite scale or value (q row, keys and values of
 * the range); SKV_ERANGE when |L| exceeds the largest double; SKV_ENOMEM.
 * Nothing is written on error. */
int skv_truth_range(skv_dd *out, skv_dd *lse, const skv_problem *p, size_t row, size_t lo, size_t hi,
		    long prec);
/* skv_truth_range of a packed problem: the same contract and, since its
 * values are those of the double problem, the same bits; the fast path
 * decodes K and V a few rows at a time (memory O(d) still), the MPFR paths
 * work on the range decoded to doubles. */
int skv_truth_range_packed(skv_dd *out, skv_dd *lse, const skv_packed *p, size_t row, size_t lo, size_t hi,
			   long prec);

/* ----------------------------------------------------------------- metrics */

typedef struct {
	double max_abs;  /* max_i |c_i - t_i| */
	double max_rel;  /* max_i |c_i - t_i| / |t_i|; an element whose truth is
	                  * exactly 0 adds 0 if c_i == 0 and +inf otherwise */
	double norm_rel; /* ||c - t||_2 / ||t||_2 (+inf if t == 0 and c != 0) */
	double ulp;      /* max_i |c_i - t_i| / skv_ulp(f, t_i), elementwise:
	                  * an element near zero has a tiny ulp, so one such
	                  * element can set a count of millions */
	double norm_ulp; /* max_i |c_i - t_i| / skv_ulp(f, max_i |t_i|), normwise:
	                  * in ulps of the output's largest element (the unit a
	                  * reader of the output's scale judges by); <= ulp */
} skv_errors;

/* Errors of computed[0..n) against truth[0..n), keeping the truth's extra
 * precision (the difference is taken against hi and lo in turn). NaN in
 * computed gives NaN metrics, never a silent finite number. SKV_EINVAL for
 * n == 0, NULL pointers or a bad format. */
int skv_errors_compute(skv_errors *e, const double *computed, const skv_dd *truth, size_t n,
		       skv_format ulp_format);
/* |c - t| keeping the truth's extra precision; 0 when both are the same
 * infinity, +inf when only one is infinite, NaN for NaN. */
double skv_abs_err(double c, skv_dd t);
/* ||x||_2 of x[0..n) without overflow or underflow in the sum of squares
 * (Hammarling's scaling, the norm skv_errors_compute uses): within a few
 * fp64 ulps of the exact norm, +inf if an x_i is infinite or the norm
 * exceeds DBL_MAX, NaN if an x_i is NaN, 0 for n == 0. */
double skv_norm2(const double *x, size_t n);
/* t = hi + lo rounded once, to nearest even, to format f: the best any
 * computation in f can return, so skv_errors of these values against t is
 * the floor of a format (the error of the exact answer stored in it). */
double skv_dd_round(skv_format f, skv_dd t);

/* ------------------------------------------------------ quantized KV caches */

/* How a KV cache in a narrow format scales its values (lib/kvcache.c holds
 * the table and the sources). Every scale is an fp32 value; x is a value
 * of K or V as the input format holds it, c the cache format, fmax its
 * largest finite value, RN32 and RN_c one rounding to fp32 and to c:
 *   none    q = RN_c(x), no scale (a plain cast).
 *   tensor  one scale for K and one for V: given, or s = RN32(amax / fmax)
 *           from the tensor's largest magnitude (vLLM's convention,
 *           FP8_data = Quantize(HP / scale), Dequant(FP8) * scale => HP,
 *           csrc/quantization/fp8/nvidia/quant_utils.cuh).
 *   head    one scale per KV head: skv's problem is one head, so the
 *           same numbers as tensor (kept so a sweep can name it).
 *   token   one scale per token (and head): s_j = RN32(amax_j / fmax) of
 *           key row j.
 *   mx      OCP Microscaling: blocks of 32 consecutive elements along
 *           head_dim share X = 2^(floor(log2 amax_b) - emax_c), an e8m0
 *           value; elements x / X clamped to +-fmax, then RN_c (OCP MX v1.0,
 *           section 6.3).
 *   nvfp4   blocks of 16 along head_dim with a ue4m3 block scale s_b =
 *           RN_ue4m3(RN32(amax_b / fmax) / t) over an fp32 tensor scale t
 *           (given, or RN32(amax / (fmax 448))); element scale RN32(s_b t).
 *   sglang  SGLang's fp4 cache (--kv-cache-dtype fp4_e2m1): blocks of 16
 *           along head_dim with an e8m0 scale X = 2^ceil(log2(max(RN32(
 *           amax_b / 6), 1e-10))), so |x / X| <= 6 and nothing clamps; x / X
 *           rounded to e2m1 to nearest with ties AWAY from zero (its
 *           magnitude is the count of the bounds 0.25, 0.75, ..., 5 at or
 *           below |x / X|); dequantized q X to the input format
 *           (KVFP4QuantizeUtil.batched_quantize and batched_dequantize,
 *           python/sglang/srt/layers/quantization/kvfp4_tensor.py at
 *           sgl-project/sglang 0e6b6cf0ac71). e2m1 caches only.
 * Quantisation (every granularity but mx): q = RN_c(RN32(x / s)), the
 * cache format's overflow policy deciding |x / s| > fmax (vLLM stores with
 * __nv_cvt_float_to_fp8(float(x) / scale, __NV_SATFINITE, ...): choose
 * e4m3-sat for it). An amax of 0 gives s = 1 (mx: X = 2^-127). */
typedef enum {
	SKV_KVS_NONE = 0,
	SKV_KVS_TENSOR = 1,
	SKV_KVS_HEAD = 2,
	SKV_KVS_TOKEN = 3,
	SKV_KVS_MX = 4,
	SKV_KVS_NVFP4 = 5,
	SKV_KVS_SGLANG = 6
} skv_kv_scale;
#define SKV_NKVSCALES 7

/* Where the kernel applies the scales. */
typedef enum {
	SKV_KVD_VALUES = 0, /* K and V dequantized to the input format before the
	                     * dot products: x' = RN_in(RN32(q s)) (vLLM's paged
	                     * attention, scaled_convert -> scaled_vec_conversion:
	                     * float_to_half(half_to_float(fp8) * scale), bf16 alike) */
	SKV_KVD_SCORES = 1  /* the kernel reads the codes q; K's scale joins the
	                     * softmax scale on the host (sm_scale * k_scale in
	                     * double) and V's multiplies the merged output, out =
	                     * RN_out(RN32(out v_scale)) (FlashInfer decode.py,
	                     * BatchDecodeWithPagedKVCacheWrapper.run: `sm_scale *=
	                     * k_scale` before the kernel, `out *= v_scale` after);
	                     * tensor and head scales only */
} skv_kv_deq;
#define SKV_NKVDEQS 2

/* The cache of a run. format 0 is no cache (K and V as the input format
 * holds them); SKV_KV(f) stores them in value format f. k_scale, v_scale:
 * the given tensor scales (tensor, head; nvfp4's tensor scale), 0 to derive
 * them from the amax. */
#define SKV_KV(f) (1 + (int)(f))
typedef struct {
	int format;
	skv_kv_scale scale;
	skv_kv_deq deq;
	double k_scale, v_scale;
} skv_kv_cache;

/* "none", "tensor", "head", "token", "mx", "nvfp4", "sglang-fp4"; "values", "scores";
 * NULL for an unknown value. */
const char *skv_kv_scale_name(skv_kv_scale s);
const char *skv_kv_deq_name(skv_kv_deq d);
/* Parse those names. SKV_EINVAL for anything else (the output untouched). */
int skv_kv_scale_parse(skv_kv_scale *s, const char *name);
int skv_kv_deq_parse(skv_kv_deq *d, const char *name);
/* Elements per scale block along head_dim: 32 (mx), 16 (nvfp4, sglang-fp4), 0 otherwise. */
unsigned skv_kv_block(skv_kv_scale s);

/* NULL when kc is a valid cache for head dimension d, otherwise a one-line
 * reason naming the offending value (a static string): an unknown format,
 * a scale-only cache format (e8m0, ue4m3 hold no signed value), an unknown
 * granularity or placement, a block that does not divide d, a given scale
 * that is zero, negative, not finite or not above 0 once rounded to fp32,
 * a given scale where the granularity takes none (none, token, mx,
 * sglang-fp4), sglang-fp4 with a cache format other than e2m1, a
 * scale without a cache format, or scores placement with a granularity
 * other than tensor and head. */
const char *skv_kv_cache_invalid(const skv_kv_cache *kc, size_t d);

/* A problem seen through a cache. kern is what the kernel reads (q and
 * scale of the original; K and V dequantized, or the codes with the scale
 * folded, per deq); truth is the problem whose exact attention is the
 * quantized cache's truth: the original q and scale with K and V the
 * dequantized values as exact doubles (with SKV_KVD_VALUES those are
 * kern's arrays: kern and truth share them). k_scale and v_scale are the
 * tensor scales used (1 where none), v_post the factor the merged output
 * takes (v_scale with SKV_KVD_SCORES, else 1). */
typedef struct {
	skv_problem kern, truth;
	int shared; /* truth's K and V are kern's */
	double k_scale, v_scale, v_post;
} skv_kv_problem;

/* Quantizes K and V of p (values of `input`) into cache kc. With format 0
 * kern and truth are copies of p. SKV_EINVAL for NULL pointers, a bad input
 * format or skv_kv_cache_invalid(kc, p->d) != NULL; SKV_ERANGE when a
 * stored or dequantized value is NaN (an overflow of a NaN-policy cache
 * format: the cache would hold NaN); SKV_ENOMEM. Nothing is written on error. */
int skv_kv_quantize(skv_kv_problem *out, const skv_problem *p, skv_format input, const skv_kv_cache *kc);
void skv_kv_problem_free(skv_kv_problem *kp);
/* The merged output's last step under deq scores: RN_f(RN32(x v_post))
 * (torch's in-place `out *= v_scale` on a tensor of format f); x itself
 * when v_post is 1. */
double skv_kv_post(skv_format f, double x, double v_post);

/* ------------------------------------------------- precision configuration */

typedef enum {
	SKV_BASE_E = 0, /* natural LSE, exp and log throughout */
	SKV_BASE_2 = 1, /* base-2 LSE: scores pre-scaled by log2(e) in compute,
	                 * exp2 and log2 in the split and in the merge */
	SKV_BASE_E2 = 2 /* natural LSE from base-2 arithmetic (FlashAttention,
	                 * xformers): the split runs on log2(e)-scaled scores
	                 * with exp2, then writes lse = fma(m, ln 2, log l) and
	                 * its max as m ln 2; the merge is natural */
} skv_lse_base;
#define SKV_NBASES 3

/* "e", "2", "e2"; NULL for an unknown value. */
const char *skv_lse_base_name(skv_lse_base b);
/* Parses those names. SKV_EINVAL for anything else (b untouched). */
int skv_lse_base_parse(skv_lse_base *b, const char *name);

/* The order of the key blocks inside a split. Blocks are cut from the
 * split's first key (the last may be short) and the online softmax visits
 * them in this order. */
typedef enum {
	SKV_BLOCKS_FORWARD = 0, /* first to last (skv's own, TileLang, Triton kernels) */
	SKV_BLOCKS_REVERSE = 1  /* last to first: FlashAttention 2 and 3 iterate
	                         * n_block from n_block_max - 1 down
	                         * (csrc/flash_attn/src/flash_fwd_kernel.h:830,944;
	                         * hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:793,861
	                         * at Dao-AILab/flash-attention 0251105a) */
} skv_blocks;
#define SKV_NBLOCKS 2

/* The score, normalisation and LSE formulas of a split kernel, each as a
 * system writes it (lib/scan.c holds them as one table; c is the compute
 * format, RN rounds to it, k = log2 e where the base is 2 or e2, else 1,
 * m the running max, l the exp-sum, acc the P.V accumulator):
 *   skv        skv's own: s = RN(RN(q.k) RN(scale k)) + RN(offset k),
 *              p = e(RN(s - m)), alpha = e(RN(m_old - m)), l = RN(l alpha)
 *              then l = RN(l + p) key by key, o = RN(acc / l), LSE per
 *              base (e: m + log l; 2: m + log2 l; e2: fma(m, RN(ln 2), log l)).
 *   fa2        raw scores r = RN(q.k) + RN(offset / RN(scale)) with the max
 *              taken on them; c = RN(RN(scale) log2 e) (flash_api.cpp:
 *              params.scale_softmax_log2 = softmax_scale * M_LOG2E);
 *              p = exp2(fma(r, c, -RN(m c))), alpha = exp2(RN(RN(m_old - m) c))
 *              (csrc/flash_attn/src/softmax.h:76-88, 148-160: nvcc fuses
 *              x * scale - max_scaled into one FFMA); o = RN(acc RN(1/l));
 *              LSE = fma(m, RN(scale), log l), natural (softmax.h:180,
 *              row_max * softmax_scale + __logf(sum) contracted). Base e2.
 *   fa3        as fa2 with LSE = fma(m, RN(c RN(ln 2)), log l)
 *              (hopper/softmax.h:151: row_max * (softmax_scale_log2 *
 *              float(M_LN2)) + __logf(sum)). On FP8 inputs (e4m3, e5m2 and
 *              their saturating twins) FA3 lowers the scaled max by
 *              Max_offset = 8, so P fills [0, 256] before its FP8
 *              conversion: p = exp2(fma(r, c, -fma(m, c, -8))) (nvcc's
 *              FFMA of max * scale - max_offset), o = RN(acc RN(1/l)) with
 *              the unscaled l, and the LSE's log takes RN(l 2^-8), which is
 *              also the l the split writes; acc keeps P's 2^8
 *              (hopper/softmax.h:64-88,140-154; Max_offset = !Is_FP8 ? 0 : 8,
 *              hopper/flash_fwd_kernel_sm90.h:416). Base e2.
 *   tilelang   raw scores, c = RN(scale 1.44269504) (the example's
 *              `scale = (1.0 / dim) ** 0.5 * 1.44269504`), p = exp2(fma(r, c,
 *              -RN(m c))), alpha = exp2(fma(m_old, c, -RN(m c))), l = fma(l,
 *              alpha, sum of the block's p), o = RN(acc / l), LSE = fma(m, c,
 *              log2 l) (examples/flash_decoding/example_gqa_decode.py:124-152
 *              at tile-ai/tilelang a35008a4; the fused forms are nvcc's
 *              contraction of a * b - c * d and a * b + c, inferred). Base 2.
 *   flex       s = RN(RN(RN(q.k) RN(scale)) + RN(offset)) RN(1.44269504): the
 *              scale, then the score_mod (skv's offset), then RCP_LN2
 *              (torch/_inductor/kernel/flex/templates/common.py.jinja at
 *              pytorch/pytorch 05382727); l = fma(l, alpha, sum of the
 *              block's p) (Triton fuses l_i * alpha + tl.sum(p, 1)). Base 2.
 *   xformers   c = RN(RN(scale) RN(1.44269504)) (splitk_kernels.py:361-362),
 *              l = fma(l, alpha, sum of the block's p) (:527), and the LSE
 *              evaluated in the LSE storage format from the compute-format m
 *              (log2 units) and l: RN(RN(log2(l) + m) / RN_c(1.44269504))
 *              (:580-585 at facebookresearch/xformers 4c82fc33). Base e2.
 *   vllm       the split as one block (the partition's max first): p =
 *              e(RN(s - m)), l as skv sums it, then P normalised before P.V:
 *              p' = RN(p RN(1/RN(l + RN(1e-6)))) (__fdividef(1.f, exp_sum +
 *              1e-6f)), rounded to cfg->p; o = acc (csrc/attention/
 *              attention_kernels.cuh at vllm-project/vllm 04d1abd3). Base e;
 *              contiguous splits only.
 *   flashinfer c = RN(RN(scale) RN(log2 e)) (variants.cuh: sm_scale * math::log2e),
 *              o = RN(acc RN(1/l)) (the decode's o * rcp(d)). Base 2.
 *   triton     skv's scores, with each block's exp-sum formed first and
 *              folded as l = fma(l, alpha, sum of the block's p): Triton's
 *              `e_sum = e_sum * re_scale + tl.sum(p, 0)` (SGLang's
 *              decode_attention.py _fwd_kernel_stage1 and
 *              _fwd_grouped_kernel_stage1 at sgl-project/sglang 03cd2ec4) and
 *              `L = L * alpha + l_j` (vLLM's kernel_unified_attention_3d,
 *              triton_unified_attention.py at 001ceb3e); the fusion is
 *              Triton's (inferred). Any base.
 *   qscale     q pre-scaled, q'_i = RN(q_i RN(scale)), s = RN(q'.k) +
 *              RN(offset), as llama.cpp's CUDA vec kernel scales Q_reg
 *              (src/ggml-cuda/fattn-vec.cuh:240-245 at ggml-org/ggml d99724f2).
 *              Base e.
 * Dot products are fma chains in compute in every formula (a tensor core's
 * exact products; the systems' per-thread partial dots and shuffles are
 * not modelled). */
typedef enum {
	SKV_FORMULA_SKV = 0,
	SKV_FORMULA_FA2 = 1,
	SKV_FORMULA_FA3 = 2,
	SKV_FORMULA_TILELANG = 3,
	SKV_FORMULA_FLEX = 4,
	SKV_FORMULA_XFORMERS = 5,
	SKV_FORMULA_VLLM = 6,
	SKV_FORMULA_FLASHINFER = 7,
	SKV_FORMULA_QSCALE = 8,
	SKV_FORMULA_TRITON = 9
} skv_formula;
#define SKV_NFORMULAS 10

/* Approximate GPU math: a bound model, NOT the hardware's bits.
 *
 * Every GPU kernel modelled here but TileLang's is built with fast math or
 * calls the approximate instructions directly, whose results are not
 * correctly rounded and whose exact bits NVIDIA does not document. A math
 * mode other than exact replaces each fp32 exp, exp2, log, log2, division
 * and reciprocal of the kernel and the merge by the correctly rounded
 * result r moved by n representable fp32 values, n drawn uniformly from the
 * n the instruction's documented maximum error allows (measured from r, as
 * the CUDA Programming Guide measures its ulp errors), deterministically
 * from (math_seed, the operation, its argument bits): the same inputs give
 * the same result on every machine, thread count and call order, and
 * different seeds give different admissible results, so a sweep over seeds
 * shows how far the approximations can move an output. It does not
 * reproduce any particular GPU. Operations in other formats stay correctly
 * rounded (the instructions are .f32). The bounds (CUDA C++ Programming
 * Guide, legacy edition for CUDA 13, chapter 17, tables 17 and 21; PTX ISA
 * 9.1, sections 9.7.3.8, 9.7.3.13, 9.7.3.20, 9.7.3.21):
 *   SKV_MATH_FAST (nvcc --use_fast_math; FlashInfer's and Triton's direct
 *   use of ex2.approx.ftz, lg2.approx.ftz, rcp.approx.ftz, div.full):
 *     exp   __expf: 2 + floor(|1.173 a|) ulp
 *     exp2  ex2.approx.ftz.f32: 2 ulp over the full range
 *     log   __logf: 2^-21.41 absolute for a in [0.5, 2], else 3 ulp
 *     log2  lg2.approx.ftz.f32: 2^-22 absolute for a in (0.5, 2), else
 *           2^-22 relative
 *     div   div.full.f32 and __fdividef: 2 ulp
 *     rcp   rcp.approx.ftz.f32: 1 ulp
 *   and flush to zero: a subnormal argument reads as a signed zero and a
 *   subnormal result becomes a signed zero (the .ftz instructions; nvcc's
 *   --use_fast_math implies -ftz=true, whose effect on the additions and
 *   multiplications is not modelled).
 *   SKV_MATH_CUDA (the CUDA math library without fast math: TileLang's
 *   default, tilelang/cuda/backend.py): expf and exp2f 2 ulp, logf and
 *   log2f 1 ulp, IEEE division and reciprocal (0 ulp), no flushing.
 * The special values of the PTX tables stay exact (NaN; exp2(-inf) = +0,
 * exp2(+-0) = 1, exp2(+inf) = +inf; log2(+-0) = -inf, log2(+inf) = +inf,
 * log2 of a negative is NaN; 1/+-0 = +-inf, 1/+-inf = +-0), and so does any
 * r that is 0, infinite or NaN; a finite r never moves to infinity. */
typedef enum {
	SKV_MATH_EXACT = 0, /* correctly rounded, skv's arithmetic */
	SKV_MATH_FAST = 1,
	SKV_MATH_CUDA = 2
} skv_math;
#define SKV_NMATHS 3

typedef enum {
	SKV_MOP_EXP = 0,
	SKV_MOP_EXP2 = 1,
	SKV_MOP_LOG = 2,
	SKV_MOP_LOG2 = 3,
	SKV_MOP_DIV = 4, /* a / b */
	SKV_MOP_RCP = 5  /* 1 / a */
} skv_math_op;
#define SKV_NMOPS 6

/* "exact", "fast", "cuda"; NULL for an unknown value. */
const char *skv_math_name(skv_math m);
/* Parses those names. SKV_EINVAL for anything else (m untouched). */
int skv_math_parse(skv_math *m, const char *name);

/* *y = op(a[, b]) in format f under mode m and seed, as the kernels and
 * merges compute it (b is read by SKV_MOP_DIV only). SKV_EINVAL for a bad
 * mode, op or format (nothing written). */
int skv_math_apply(double *y, skv_math m, skv_math_op op, skv_format f, double a, double b, uint64_t seed);

/* The documented bound of op at (a, b) in mode m for fp32 (see above):
 * *ulps, the bound in fp32 ulps (0 when it is absolute or relative), and
 * *abs_err, the bound as an absolute error (0 when it is in ulps; a
 * relative bound is given as |r| times it). Exact mode and other formats:
 * both 0. SKV_EINVAL for a bad mode, op or format. */
int skv_math_bound(double *ulps, double *abs_err, skv_math m, skv_math_op op, skv_format f, double a, double b);

/* The P.V accumulator's format in skv_config.acc: 0 keeps it in compute
 * (every system but llama.cpp CPU); SKV_ACC(f) holds it in format f, every
 * update computed in compute and rounded to f (llama.cpp CPU with f16 V:
 * ggml_vec_mad_f16 stores fp16(fma(v, p, acc)) in fp32 and ggml_vec_scale_f16
 * fp16(acc alpha) after every key, src/ggml-cpu/vec.h and
 * simd-mappings.h:596-647 at ggml-org/ggml d99724f2 on x86 with F16C and FMA). */
#define SKV_ACC(f) (1 + (int)(f))

/* The format of each stage of a decode kernel, and the kernel's
 * mechanisms. Every mechanism's 0 is skv's own kernel as it was before
 * they existed, so skv_config_uniform() and a zeroed tail give the old
 * bits. */
typedef struct {
	skv_format input;   /* q, K, V as stored */
	skv_format compute; /* scores, running max, exp, sums, P.V accumulation */
	skv_format p;       /* probabilities as fed to the P.V product */
	skv_format partial; /* storage of each split's normalized output */
	skv_format lse;     /* storage of each split's LSE */
	skv_format combine; /* arithmetic of the merge */
	skv_format output;  /* the final result */
	skv_lse_base base;
	skv_blocks blocks;   /* the order of the key blocks inside a split */
	int acc;             /* P.V accumulator format: 0 (compute) or SKV_ACC(f) */
	skv_formula formula; /* score, normalisation and LSE formulas */
	/* The exp-sum of a split strided over `lanes` lanes (0 or 1: one
	 * sequential sum; else a power of two up to 1024): key j of a range
	 * starting at lo goes to lane ((j - lo) / lane_keys) mod lanes, each
	 * lane keeps its own sum (rescaled by every alpha) and the split ends
	 * with the butterfly of SKV_ORDER_LANES; formulas that sum each block
	 * first (tilelang, flex, xformers, triton) ignore the lanes. FA2 and
	 * FA3: 4 lanes of 2 keys (each thread of a row's quad sums its columns
	 * in thread_reduce_, quad_allreduce_ adds them at the end, softmax.h:
	 * 46-60, 167; that thread t holds columns 2t, 2t + 1 of every 8 is
	 * inferred from the mma.sync C-fragment layout); vLLM: 128 lanes of 1
	 * key (exp_sum per thread, then block_sum, attention_kernels.cuh). */
	unsigned lanes, lane_keys; /* lane_keys 0 means 1 */
	skv_math math;      /* exact, or an approximate-math bound model (above) */
	uint64_t math_seed; /* its seed */
	/* The arithmetic of q.k and P.V (an skv_gpu): SKV_GPU_IEEE (0) computes
	 * them as fma chains in compute, as above; a GPU computes them with its
	 * tensor-core unit for inputs in `input` and accumulator `compute`
	 * (skv_mma_unit_init), as its kernels issue the MMA instructions:
	 *   q.k  the chain over head_dim of instructions of k products
	 *        (skv_mma_tile: k = 16 for fp16/bf16, 8 for tf32, 32 for FP8,
	 *        4 on V100), index order, from c = 0 (FA2 clears acc_s, FA3's
	 *        wgmma has zero_init), each instruction the unit's chain of
	 *        blocks of n | k products (skv_mma_dot); then the formula's
	 *        scale and offset in compute (CUDA cores);
	 *   P.V  per block of keys, after the rescale acc = RN(acc alpha) in
	 *        compute, acc_i = the chain over the block's keys in index order
	 *        of instructions of k keys, c the running acc_i (the fp32
	 *        accumulator carried in the MMA's c: FA2 gemm_rs into acc_o,
	 *        FA3 zero_init = false, Triton's acc += tl.dot(p, v)), P
	 *        rounded to p first.
	 * Steps are cut from the start of head_dim and of the block; the last
	 * is short where d or the block is not a multiple of k. The kernels
	 * pad it to k with zeros (FA2: predicated copies that clear Q, K and V
	 * out of range, csrc/flash_attn/src/flash_fwd_kernel.h:878-882 and
	 * utils.h:296; masked keys have P = 0 exactly), which the unit drops
	 * (zero products never join a block) and which leave the result as it
	 * is, so the short step is the padded one. The whole padded steps a
	 * kernel with a fixed kBlockN issues after a short split's last key
	 * are not run: a block without products returns its c bit for bit
	 * when c is a previous block's result (its bits already fit the
	 * alignment), but for a -0 c, which it returns as +0.
	 * Requires a unit for (gpu, input, compute) and a tile for (gpu,
	 * input), p holding input's values (P is the A operand of P.V, V the
	 * B), acc 0 (the accumulator is the MMA's), and a formula whose q and
	 * P are operand values: not qscale (q pre-scaled in compute) nor vllm
	 * (CUDA-core kernels both). The whole kernel is otherwise unchanged,
	 * and 0 gives its bits as before this field existed. */
	int gpu;
} skv_config;

/* "forward", "reverse"; "skv", "fa2", "fa3", "tilelang", "flex",
 * "xformers", "vllm", "flashinfer", "qscale", "triton"; NULL for an unknown
 * value. */
const char *skv_blocks_name(skv_blocks b);
const char *skv_formula_name(skv_formula f);
/* Parse those names. SKV_EINVAL for anything else (the output untouched). */
int skv_blocks_parse(skv_blocks *b, const char *name);
int skv_formula_parse(skv_formula *f, const char *name);
/* The base a formula requires (-1: any, for skv); -1 for an unknown value. */
int skv_formula_base(skv_formula f);

/* Every stage in format f, natural base, every mechanism 0. */
skv_config skv_config_uniform(skv_format f);
/* SKV_EINVAL if a field is out of range, or a stage is given a scale-only
 * format (e8m0, ue4m3: they hold no signed value), the accumulator format
 * is not a value format, lanes is not 0 or a power of two up to 1024,
 * lane_keys exceeds 1024, the formula's base is not cfg->base, or gpu is
 * not 0 and its requirements above fail. */
int skv_config_check(const skv_config *c);

/* -------------------------------------------------------------- split kernel */

/* Per-split results of the split kernel, one query row.
 * o and lse are the stored values (partial and lse formats); the fields m,
 * l, acc keep the split's running state in the compute format for merges
 * that store max, sum and an unnormalized accumulator (FlexAttention). */
typedef struct {
	size_t S, d;
	double *o;   /* [S][d] normalized output of each split */
	double *lse; /* [S] LSE of each split in the config's base; -inf empty */
	double *m;   /* [S] running max (config base units); -inf empty */
	double *l;   /* [S] exp-sum relative to m; 0 empty */
	double *acc; /* [S][d] unnormalized accumulator, sum_j p_j v_j */
} skv_partials;

int skv_partials_init(skv_partials *sp, size_t S, size_t d);
void skv_partials_free(skv_partials *sp);

/* Even boundaries: split s is keys [s*n/S, (s+1)*n/S) (integer division, so
 * sizes differ by at most one). bounds has S + 1 entries. SKV_EINVAL for
 * S == 0 or S > n. */
int skv_bounds_even(size_t *bounds, size_t n, size_t S);

/* Runs the split kernel for query row `row` of p over the S splits given by
 * bounds[0..S] (nondecreasing, bounds[0] == 0, bounds[S] == n; empty splits
 * allowed) exactly as a decode kernel does: inside each split an online
 * softmax over blocks of `block` keys (0: the whole split is one block) in
 * cfg->compute, with P rounded to cfg->p before P.V; then o = acc / l and
 * lse = m + log(l) (log2 in base 2) in compute. The mechanisms of cfg
 * (block order, accumulator format, formula, lanes) change these steps as
 * skv_config documents; with all of them 0 the kernel is the one below. The result is left in the
 * compute format (skv_partials_store rounds it for storage), so one kernel
 * run serves every storage format. Scores are
 *   s_j = RN(RN(q . k_j) * RN(scale)) + RN(lse_offset)        base e
 *   s_j = RN(RN(q . k_j) * RN(scale * log2 e)) + RN(lse_offset * log2 e)
 * with q . k_j accumulated by fma in compute. An empty split gives o = 0,
 * acc = 0, l = 0, m = lse = -inf. */
int skv_split_kernel(skv_partials *out, const skv_problem *p, size_t row, const size_t *bounds,
		     size_t S, size_t block, double lse_offset, const skv_config *cfg);

/* The split kernel over interleaved tiles (llama.cpp's CUDA vec kernel:
 * block y of gridDim.y = S takes the 128-key tiles y, y + S, y + 2S, ...,
 * src/ggml-cuda/fattn-vec.cuh:250-256 at ggml-org/ggml d99724f2). The keys
 * fall in ntiles tiles [tiles[t], tiles[t+1]) (ntiles + 1 entries,
 * nondecreasing, tiles[0] == 0, tiles[ntiles] == n), and tile t belongs to
 * split t mod S: the layout skv_heur_splits gives with plan.tile > 0
 * (pass its bounds and nbounds - 1 tiles). Each split runs one online
 * softmax over its tiles in order (last to first with SKV_BLOCKS_REVERSE),
 * in blocks of `block` keys inside each tile (0: a tile is one block). A
 * split without tiles is empty. skv_split_kernel(bounds, S) is this with S
 * tiles. SKV_EINVAL as skv_split_kernel, or ntiles == 0, or
 * SKV_FORMULA_VLLM (which needs a split's keys contiguous) with a split of
 * more than one tile. */
int skv_split_kernel_tiled(skv_partials *out, const skv_problem *p, size_t row, const size_t *tiles,
			   size_t ntiles, size_t S, size_t block, double lse_offset, const skv_config *cfg);

/* The scores of query row `row` of p as the split kernel computes them
 * under cfg and lse_offset (the formula above, the row q-scaled where the
 * formula does so), z[j] for every key j (n entries). They depend on the
 * problem, the row, the offset and cfg's compute format, formula, base and gpu
 * only, not on the splits, tiles or block size: kernels of one row whose
 * configurations skv_scores_shared accepts may share one z (the sweep of
 * the program computes it once per problem). SKV_EINVAL as the kernel
 * (nothing written); SKV_ENOMEM. skv_scores_packed: the same on a packed
 * problem (the same values, so the same scores) for keys lo <= j < hi
 * only (z[j] written for those; SKV_EINVAL unless lo <= hi <= n). */
int skv_scores(double *z, const skv_problem *p, size_t row, double lse_offset, const skv_config *cfg);
int skv_scores_packed(double *z, const skv_packed *p, size_t row, size_t lo, size_t hi, double lse_offset,
		      const skv_config *cfg);
/* 1 when configurations a and b give the same scores (equal compute
 * format, formula and base), else 0 (also for a NULL one). */
int skv_scores_shared(const skv_config *a, const skv_config *b);
/* skv_split_kernel_tiled on a packed problem (K and V decoded a chunk of
 * rows at a time: O(d) memory beyond the problem), reading key j's score
 * from z[j] when z is not NULL instead of computing it. With z from
 * skv_scores of the same problem, row and lse_offset under a configuration
 * skv_scores_shared accepts with cfg, the partials are bit for bit those of
 * skv_split_kernel_tiled on the problem as doubles (tests/test_scan_hw32.c).
 * A double problem is a packed one of store SKV_STORE_F64 with k and v its
 * own arrays. Errors as skv_split_kernel_tiled. */
int skv_split_kernel_packed(skv_partials *out, const skv_packed *p, size_t row, const double *z,
			    const size_t *tiles, size_t ntiles, size_t S, size_t block, double lse_offset,
			    const skv_config *cfg);

/* Rounds o and acc to cfg->partial and lse, m, l to cfg->lse, as the kernel
 * writes them to global memory. dst may equal src. */
int skv_partials_store(skv_partials *dst, const skv_partials *src, const skv_config *cfg);

/* ------------------------------------------------------------------ merges */

typedef enum {
	SKV_MERGE_ONEPASS = 0,  /* global max, log-sum, weighted sum (FA2/TileLang) */
	SKV_MERGE_PAIRWISE = 1, /* online state merge folded over splits (FlashInfer) */
	SKV_MERGE_MEAN = 2,     /* wrong on purpose: plain mean of the partials */
	SKV_MERGE_SUM = 3,      /* wrong on purpose: plain sum of the partials */
	SKV_MERGE_FLEX = 4,     /* max and sum kept apart, unnormalized acc (Flex) */
	SKV_MERGE_ONEPASS_NORM = 5, /* FA3: normalised weights, see below */
	SKV_MERGE_RATIO = 6,    /* xformers: sum e_s O_s / sum e_s */
	SKV_MERGE_VLLM = 7,     /* vLLM paged_attention_v2's reduce */
	SKV_MERGE_RUNNING = 8   /* llama.cpp CPU: running merge of (m, l, acc) */
} skv_merge;
#define SKV_NMERGES 9

/*
 * The rules, every operation in cfg->combine (e = exp, or exp2 in base 2;
 * M = max_s L_s over the stored LSEs, or over the split maxes m_s where
 * the rule reads them; "norm" is the spec's final normalisation, a
 * division or a multiplication by the rounded reciprocal):
 *   onepass   L = M + log sum_s e(L_s - M), out = sum_s fma(e(L_s - L), O_s)
 *             (FlashAttention 2, csrc/flash_attn/src/flash_fwd_kernel.h:1183-1264
 *             at Dao-AILab/flash-attention 0251105a; TileLang's example).
 *   pairwise  the online state merge folded over the splits, each split a
 *             state (L_s, 1, O_s): m = max, x = e(m_a - m), y = e(m_b - m),
 *             d = fma(d_a, x, d_b y), acc = fma(acc_a, x, acc_b y); out =
 *             norm(acc, d), L = m + log d (FlashInfer state.cuh:53-83, SGLang
 *             _fwd_kernel_stage2).
 *   mean, sum wrong on purpose: the plain mean and sum of the O_s (with the
 *             one-pass L).
 *   flex      M over m_s, e_s = e(m_s - M), l = sum fma(l_s, e_s), acc = sum
 *             fma(acc_s, e_s), out = norm(acc, l), L = M + log l (PyTorch
 *             flex_decoding.py's reduction; llama.cpp CUDA's
 *             flash_attn_combine_results, fattn-common.cuh:916-969 at
 *             ggml-org/ggml d99724f2, is the same formula in base e).
 *   onepass-norm  FA3 (hopper/flash_fwd_combine_kernel.h:593-621, 669-693):
 *             M' = M, or the policy's substitute when M = -inf; e_s = e(L_s -
 *             M'); sum = sum_s e_s; inv = 0 if sum is 0 or NaN, else RN(1/sum);
 *             w_s = RN(e_s inv); out = sum fma(w_s, O_s) over the splits up
 *             to the last with a finite LSE, skipping w_s not > 0; L = log(sum)
 *             + M (the unsubstituted max: -inf for an all-empty row; the
 *             policy's bad_sum LSE is not used). The total LSE never enters
 *             the weights.
 *   ratio     xformers (xformers/ops/fmha/_triton/splitk_kernels.py:986-1019
 *             at facebookresearch/xformers 4c82fc33): e_s = e(L_s - M), num =
 *             sum RN(O_s e_s), den = sum e_s, out = norm(num, den), L = M +
 *             log(den); masked to out 0, L -inf when M = -inf (unless the
 *             policy is none). In base e2 (natural LSEs from base-2
 *             arithmetic) as xformers writes it: e_s = exp2(RN(RN(L_s - M) *
 *             RN(1.44269504))) and L = M + RN(log2(den) / RN(1.44269504)),
 *             that last addition in the wider of the LSE and combine formats
 *             (Triton promotes fp32 + fp64 to fp64).
 *   vllm      vLLM paged_attention_v2_reduce_kernel (csrc/attention/
 *             attention_kernels.cuh at vllm-project/vllm 04d1abd3): M = max of
 *             -max_finite(combine) and the m_s; r_s = RN(l_s e(m_s - M)); G =
 *             sum r_s; inv = RN(1/RN(G + RN(1e-6))); out = sum fma(RN(O_s r_s),
 *             inv) in split order; one split is copied (num_partitions == 1);
 *             L = M + log G (vLLM writes no merged LSE: this is skv's). The O_s
 *             are the kernel's (l_s + 1e-6)-normalised partials (SKV_FORMULA_VLLM).
 *   running   llama.cpp CPU (ggml_flash_attn_ext_reduce_partials,
 *             src/ggml-cpu/ops.cpp:9007 at ggml-org/ggml d99724f2): the state
 *             merge above over unnormalised (m_s, l_s, acc_s) from (M, S) =
 *             (-inf, 0), in split order; a guarding policy skips splits with
 *             l_s == 0 (the source's `if (S_chunk == 0.0f) continue`); out =
 *             norm(acc, S) when S != 0, else acc; L = M + log S.
 */

typedef enum {
	SKV_ORDER_SEQ = 0,    /* splits 0, 1, ..., S-1 */
	SKV_ORDER_REV = 1,    /* S-1, ..., 0 */
	SKV_ORDER_TREE = 2,   /* pairwise tree: (0+1)+(2+3), ... */
	SKV_ORDER_RANDOM = 3, /* seeded random permutation (Fisher-Yates) */
	SKV_ORDER_ASC = 4,    /* sorted by stored LSE ascending (stable) */
	SKV_ORDER_DESC = 5,   /* sorted by stored LSE descending (stable) */
	SKV_ORDER_STRIDED = 6, /* FlashInfer: `threads` strided subsets (subset t
	                        * holds splits t, t + threads, ...), each merged
	                        * in order and sealed, then the subsets in order */
	SKV_ORDER_LANES = 7    /* GPU lanes: a sum of one value per split (the
	                        * exp-sums) is strided over `threads` lanes (a
	                        * power of two; lane t adds splits t, t + threads,
	                        * ... in order) and then reduced by a butterfly:
	                        * x_t = x_t + x_(t xor k) for k = w/2, ..., 1 within
	                        * warps of w = min(threads, 32) lanes, then the same
	                        * across the threads/32 warp sums; lane 0's value is
	                        * the result. Sums of vectors (the outputs) go in
	                        * split order. FA2's combine (flash_fwd_kernel.h:1183-1201,
	                        * utils.h:112-131: 32 lanes for head_dim 128, the
	                        * padding adds zeros), FA3's (flash_fwd_combine_kernel.h:111-114,
	                        * 593-617: 32 lanes), vLLM's block_sum over 128 threads
	                        * (attention_kernels.cuh) */
} skv_order;
#define SKV_NORDERS 8

/* The final normalisation out = acc / l of the rules that end with one
 * (pairwise, also its per-subset seal; flex; ratio; running). */
typedef enum {
	SKV_NORM_DIV = 0, /* RN(acc / l) */
	SKV_NORM_RCP = 1  /* RN(acc RN(1 / l)): FlashInfer since PR 4401
	                   * (state.cuh normalize: o * __fdividef(1, d)),
	                   * llama.cpp CPU (S_inv = 1.0f/S, ggml_vec_scale_f32) */
} skv_norm;
#define SKV_NNORMS 2

/* What a merge does with empty splits (stored LSE -inf). Each policy is one
 * row of a table in lib/merge.c (what an empty row reads as, the substitute
 * for a max of -inf, the LSE of a zero or NaN sum, whether it guards),
 * which every rule reads in the same way. */
typedef enum {
	SKV_EMPTY_GUARD = 0, /* skv's own: empty splits weigh 0, an all-empty
	                      * row gives out = 0, lse = -inf, never NaN */
	SKV_EMPTY_FA2 = 1,   /* max == -inf uses 0; sum == 0 or NaN gives +inf */
	SKV_EMPTY_FA3 = 2,   /* empty rows unwritten (NaN); splits skipped, stop
	                      * at the last finite LSE; all-empty lse -inf */
	SKV_EMPTY_NONE = 3   /* no guard: the formula as written (may give NaN) */
} skv_empty;
#define SKV_NEMPTY 4

typedef struct {
	skv_merge merge;
	skv_order order;
	uint64_t seed;     /* for SKV_ORDER_RANDOM */
	/* The number of strided subsets of SKV_ORDER_STRIDED (>= 1; ignored by
	 * the other orders). Named for FlashInfer's merge, where each subset
	 * is one thread row (bdy) of the thread block: the name the program's
	 * --merge-threads and CSV column use, kept so they stay in step. */
	unsigned threads;
	skv_empty empty;
	int round_states;  /* round each strided subset's sealed output to cfg->partial,
	                    * the type of FlashInfer's shared memory (cascade.cuh:129-131,
	                    * DTypeIn* v_smem is the partials' type) */
	skv_norm norm;     /* the final normalisation (0, SKV_NORM_DIV: as before) */
} skv_merge_spec;

const char *skv_merge_name(skv_merge m);
int skv_merge_parse(skv_merge *m, const char *name);
const char *skv_order_name(skv_order o);
int skv_order_parse(skv_order *o, const char *name);
const char *skv_empty_name(skv_empty e);
int skv_empty_parse(skv_empty *e, const char *name);
/* "div", "rcp"; NULL for an unknown value. */
const char *skv_norm_name(skv_norm n);
/* Parses those names. SKV_EINVAL for anything else (n untouched). */
int skv_norm_parse(skv_norm *n, const char *name);
/* onepass, seq, seed 0, threads 1, guard, no state rounding, div. */
skv_merge_spec skv_merge_spec_default(void);

/* Merges stored partials (sp, as written by skv_partials_store) into out[d]
 * (in cfg->output) and the merged LSE (*lse, natural log units whatever the
 * base, converted in double). All arithmetic in cfg->combine. The controls
 * (mean, sum) return the correctly merged LSE. SKV_EINVAL for a bad spec or
 * config (SKV_ORDER_LANES with `threads` not a power of two, a rule that
 * reads m, l, acc on partials without them); SKV_ENOMEM. */
int skv_merge_run(double *out, double *lse, const skv_partials *sp, const skv_merge_spec *spec,
		  const skv_config *cfg);

/* ----------------------------------------------------------------- presets */

/* The precision profile of a production decode kernel: every stage format,
 * the LSE base, the kernel's mechanisms and math mode, the merge with its
 * order and its empty-split behaviour, the system whose split-count
 * heuristic (skv_heur_*) chooses its splits, and the source behind every
 * field. Stages marked as following the input (P fed to P.V, the output,
 * and for some systems the partials) are derived from the input format, so
 * `fa2` with input fp16 is FlashAttention 2 on fp16 tensors. lib/preset.c
 * holds the profiles, lib/preset_sources.c their sources (repository,
 * commit, file:line, read or inferred or assumed, for each field). */

/* The fields a preset sets, for skv_preset_source. */
typedef enum {
	SKV_PF_INPUT = 0,
	SKV_PF_COMPUTE,
	SKV_PF_P,
	SKV_PF_PARTIAL,
	SKV_PF_LSE,
	SKV_PF_COMBINE,
	SKV_PF_OUTPUT,
	SKV_PF_BASE,
	SKV_PF_BLOCKS,
	SKV_PF_ACC,
	SKV_PF_FORMULA,
	SKV_PF_LANES,   /* lanes and lane_keys */
	SKV_PF_MATH,
	SKV_PF_MERGE,
	SKV_PF_ORDER,
	SKV_PF_THREADS,
	SKV_PF_EMPTY,
	SKV_PF_ROUND_STATES,
	SKV_PF_NORM,
	SKV_PF_SYSTEM,  /* the split-count heuristic */
	SKV_PF_TENSOR_CORES, /* whether q.k and P.V run on tensor cores */
	SKV_PF_KV_CACHE      /* the quantized KV cache (format, scales, placement) */
} skv_preset_field;
#define SKV_NPFIELDS 22

/* How a field's value was established. */
typedef enum {
	SKV_SRC_READ = 0,     /* read in the cited code at the cited commit */
	SKV_SRC_INFERRED = 1, /* follows from the cited code and a rule not read
	                       * line by line there (a compiler's contraction, a
	                       * language's type promotion, a layout) */
	SKV_SRC_ASSUMED = 2,  /* not settled by the source; skv's choice, said why */
	SKV_SRC_DEFINED = 3   /* the field's meaning is skv's own (a control) */
} skv_src_status;
#define SKV_NSRCS 4

typedef struct {
	const char *repo;   /* "owner/name"; "skv" for skv's own definitions */
	const char *commit; /* the commit read (12 hex digits), "" for skv */
	const char *where;  /* file:line or function */
	skv_src_status status;
	const char *note;   /* one line: what the code does, or why assumed */
} skv_source;

typedef struct {
	const char *name;
	const char *description; /* one line, with the assumptions made */
	skv_config cfg;          /* with the default input format */
	skv_merge_spec merge;
	unsigned follows;        /* SKV_FOLLOW_* bits */
	int system;              /* the skv_heur_system of its split count, or -1 */
	int tensor_cores;        /* 1: its kernels compute q.k and P.V with MMA
	                          * instructions (mma.sync, wgmma, tl.dot,
	                          * T.gemm), so skv_config.gpu models them; 0:
	                          * on CUDA cores or a CPU, IEEE fp32 on any GPU */
	const skv_source *sources; /* [SKV_NPFIELDS], by skv_preset_field (the
	                            * kv-cache entry is kv_source's) */
	skv_kv_cache kv;           /* the KV cache (format 0: K and V as the input holds them) */
	const skv_source *kv_source;
} skv_preset;

#define SKV_FOLLOW_P 1u       /* p = input */
#define SKV_FOLLOW_OUTPUT 2u  /* output = input */
#define SKV_FOLLOW_PARTIAL 4u /* partial = output */
#define SKV_FOLLOW_THREADS 8u /* threads = FlashInfer's bdy for the head_dim
                               * and the partial's width (skv_flashinfer_merge_layout) */

#define SKV_NPRESETS 19 /* skv_preset_count(), as a constant for tables */
size_t skv_preset_count(void);
/* The i-th preset (NULL past the end), in a fixed order. */
const skv_preset *skv_preset_at(size_t i);
/* By name; NULL if unknown. */
const skv_preset *skv_preset_find(const char *name);
/* The whole preset on tensors stored in `input` for head dimension
 * head_dim: every field, with the stages that follow the input derived from
 * it, and with SKV_FOLLOW_THREADS the strided subsets FlashInfer's merge
 * uses for head_dim (64, 128, 256, 512) and the partial format's width (2
 * bytes for 16-bit and narrower formats, 4 otherwise: FlashInfer has no
 * wider partial). SKV_EINVAL for NULL, a bad format, a head_dim
 * FlashInfer's merge does not dispatch when the preset follows it, or a
 * 16- or 32-bit input for a preset of an 8-bit path (fa3-fp8: FA3 takes
 * that path only for FP8 tensors, and on others it is fa3). */
int skv_preset_resolve_full(skv_config *cfg, skv_merge_spec *spec, const skv_preset *p, skv_format input,
			    unsigned head_dim);
/* The part of preset p that the program's parameters carry today: the
 * stage formats and base (the input's followers derived), and the merge
 * rule, order, threads (the preset's own), empty policy and state rounding;
 * every kernel mechanism, the math mode and the normalisation at 0 (skv's
 * kernel, as skv_config_uniform gives them), so a program that maps only
 * those fields gives the same bits as before they existed. The program
 * takes the rest through skv_preset_resolve_full once it carries them.
 * SKV_EINVAL for NULL or a bad format. */
int skv_preset_resolve(skv_config *cfg, skv_merge_spec *spec, const skv_preset *p, skv_format input);
/* The source of field f of preset p; NULL for NULL p or a bad field. */
const skv_source *skv_preset_source(const skv_preset *p, skv_preset_field f);
/* "input", "compute", "p", "partial", "lse", "combine", "output", "base",
 * "blocks", "acc", "formula", "lanes", "math", "merge", "order", "threads",
 * "empty", "round-states", "norm", "system", "tensor-cores", "kv-cache"; NULL
 * for a bad field. */
const char *skv_preset_field_name(skv_preset_field f);
/* "read", "inferred", "assumed", "defined"; NULL for a bad value. */
const char *skv_src_status_name(skv_src_status s);

/* ------------------------------------------------ online softmax attention */

/* Blockwise (online softmax) attention over all nq rows of p: each row scans
 * the keys in blocks of `block` (0: one block) keeping a running max, sum and
 * output, never forming the score matrix; with causal (requires nq == n) row
 * i sees keys 0..i. out is [nq][d] in cfg->output; lse (may be NULL) is [nq]
 * in natural log units. Scores as in skv_split_kernel. */
int skv_attention_online(double *out, double *lse, const skv_problem *p, size_t block, int causal,
			 double lse_offset, const skv_config *cfg);
/* skv_attention_online on a packed problem (K and V decoded a chunk of rows
 * at a time): the same values, so the same bits. z: NULL, or the scores,
 * z[r n + j] = skv_scores_packed's z[j] for row r under a configuration
 * skv_scores_shared accepts with cfg and the same lse_offset (j <= r where
 * causal): read instead of computed, the same bits again. */
int skv_attention_online_packed(double *out, double *lse, const skv_packed *p, const double *z, size_t block,
				int causal, double lse_offset, const skv_config *cfg);

/* --------------------------------------------------------------- occupancy */

/* FlashAttention 2's choice of the split count for decode
 * (num_splits_heuristic and set_params_splitkv, Dao-AILab/flash-attention
 * 0251105a2fb1 csrc/flash_attn/flash_api.cpp:281-347), transcribed with its float arithmetic
 * (lib/occupancy.c says which operation is float and which double). */
#define SKV_FA2_MAX_SPLITS 128     /* FA2's max_splits argument and cap */
#define SKV_FA2_MAX_HEAD_DIM 256   /* FA2's forward rejects larger heads */
#define SKV_FA2_MAX_SMS 32768u     /* largest num_sms accepted: keeps FA2's int
                                    * product batch_nheads_mblocks * splits
                                    * (< 0.8 num_sms^2 where FA2 forms it) in int */

/* FA2's heuristic(batch_nheads_mblocks, num_sms, num_n_blocks, max_splits):
 * 1 if batch_nheads_mblocks >= 0.8f * num_sms (float); otherwise, over the
 * eligible s in 1..min(max_splits, num_sms, num_n_blocks) (s == 1 or
 * ceil(num_n_blocks / s) != ceil(num_n_blocks / (s - 1))), the wave
 * efficiency eff(s) = n / ceil(n) with n = float(batch_nheads_mblocks * s) /
 * num_sms in float, and the smallest s with eff(s) >= 0.85 * max eff
 * (in double, as FA2's double literal makes it). num_sms is the argument as
 * FA2 passes it, twice the SM count. SKV_EINVAL for NULL, a zero argument,
 * batch_nheads_mblocks, num_n_blocks or max_splits above INT_MAX (FA2's int),
 * num_sms above SKV_FA2_MAX_SMS. */
int skv_fa2_num_splits(unsigned *splits, unsigned batch_nheads_mblocks, unsigned num_sms, unsigned num_n_blocks,
		       unsigned max_splits);

/* The per-candidate table behind the heuristic, for s = 1..n:
 * efficiency[s-1] = eff(s) as above (computed for every s, also the
 * ineligible ones, which FA2 records as 0, and past FA2's own limits),
 * eligible[s-1] = 1 or 0 by FA2's rule. Ineligible s are exactly the counts
 * whose FA2 layout (skv_fa2_bounds) leaves a split empty. SKV_EINVAL as for
 * skv_fa2_num_splits, or n == 0 or n > INT_MAX. */
int skv_fa2_split_table(float *efficiency, unsigned char *eligible, unsigned n, unsigned batch_nheads_mblocks,
			unsigned num_sms, unsigned num_n_blocks);

/* The heuristic's inputs as FA2 derives them for one decode step
 * (seqlen_q = 1) of batch x heads query heads over kv_heads key/value heads
 * and ctx keys (FA2's seqlen_k: for flash_attn_with_kvcache the cache's
 * allocated length). */
typedef struct {
	unsigned block_n;              /* keys per block: 256 if head_dim <= 64, 128 if <= 128, else 64 */
	unsigned num_n_blocks;         /* ceil(ctx / block_n) */
	int gqa_folded;                /* heads > kv_heads and head_dim % 8 == 0: each group's
	                                * query heads folded into the query-length axis */
	unsigned seqlen_q;             /* heads / kv_heads if folded, else 1 */
	unsigned num_heads;            /* kv_heads if folded, else heads */
	unsigned num_m_blocks;         /* ceil(seqlen_q / 64) */
	unsigned batch_nheads_mblocks; /* batch * num_heads * num_m_blocks */
	unsigned num_sms;              /* 2 * sm_count, as FA2 passes it */
} skv_fa2_decode;

/* SKV_EINVAL for a zero argument, heads not a multiple of kv_heads, ctx
 * above INT_MAX, head_dim above SKV_FA2_MAX_HEAD_DIM, 2 * sm_count above
 * SKV_FA2_MAX_SMS, or batch * num_heads * num_m_blocks above INT_MAX. The
 * heuristic is then skv_fa2_num_splits(&s, f.batch_nheads_mblocks,
 * f.num_sms, f.num_n_blocks, SKV_FA2_MAX_SPLITS). */
int skv_fa2_decode_init(skv_fa2_decode *f, unsigned batch, unsigned heads, unsigned kv_heads, unsigned ctx,
			unsigned head_dim, unsigned sm_count);

/* FA2's split boundaries (flash_fwd_kernel.h): with nb = ceil(n / block_n)
 * blocks and per = ceil(nb / S) blocks per split, split s is keys
 * [s per block_n, (s + 1) per block_n) clamped to n; trailing splits of an
 * ineligible S are empty. bounds has S + 1 entries. SKV_EINVAL for NULL or
 * a zero size. */
int skv_fa2_bounds(size_t *bounds, size_t n, size_t block_n, size_t S);

/* ------------------------------------------------ reference entry points
 *
 * Three functions with the contracts of skv's original problem statements
 * (an fp64 merge of [S][H][d] partials that any split order reproduces bit
 * for bit, the merge of two online-softmax states, blockwise attention in
 * fp32): the plain answers a caller checks a kernel against, apart from
 * the configurable emulation above. */

/* outs [S][H][d], lses [S][H] natural-log LSEs (-inf for an empty split whose
 * row is zero), out [H][d]: the exact attention output over the whole context
 * to within 1e-10 absolute, independent of the order of the splits (bit for
 * bit). The rows of empty splits are never read. SKV_EINVAL: S, H or d of
 * 0, NULL, a NaN or +inf LSE, a head whose splits are all empty, a NaN or
 * infinite value in the row of a non-empty split. */
int skv_merge_partials(double *out, const double *outs, const double *lses, size_t S, size_t H,
		       size_t d);

/* Merges two online-softmax blocks (max m_i, exp-sum l_i, unnormalized
 * accumulator acc[i][D]): m = max(m1, m2), a_i = exp(m_i - m),
 * l = a1 l1 + a2 l2, out = (a1 acc_1 + a2 acc_2) / l; a block with max -inf
 * weighs 0. When l is 0 the output is 0, never 0/0: two empty blocks give
 * m = -inf, l = 0, out = 0. SKV_EINVAL: non-finite or negative sums, NaN or
 * +inf maxes, D == 0, NULL pointers. */
int skv_merge_states(double *merged_max, double *merged_sum, double *merged_out, const double max[2],
		     const double sum[2], const double *acc, size_t D);

/* softmax(q k^T / sqrt(d) + M) v in float32 arithmetic, online over blocks of
 * block_size keys; q [Tq][d], k, v [Tk][d], out [Tq][d]. An instance of
 * skv_attention_online with every stage fp32. SKV_EINVAL: a zero size,
 * block_size not dividing Tk, causal with Tq != Tk, NULL, a NaN or infinite
 * input (it would come out as a silent NaN). */
int skv_attention_blockwise_f32(float *out, const float *q, const float *k, const float *v, size_t Tq,
				size_t Tk, size_t d, size_t block_size, int causal);

/* ------------------------------ split-count heuristics of production systems */

/* How each system chooses the number of splits of one decode step and cuts a
 * context into them, transcribed from its source in its own arithmetic (int,
 * float or double, as lib/heuristics.c says operation by operation, with the
 * repository, commit and file:line of every rule). The step decodes one query
 * token per sequence for batch sequences of ctx keys each (a uniform batch).
 * Runtime facts the systems query (SM count, the occupancy API's answer,
 * configuration flags) are inputs. */
typedef enum {
	SKV_HEUR_FA2 = 0,          /* FlashAttention 2: skv_fa2_decode_init + skv_fa2_num_splits */
	SKV_HEUR_FA3 = 1,          /* FlashAttention 3 (hopper/) on sm90, dense KV, static split */
	SKV_HEUR_FLASHINFER = 2,   /* FlashInfer BatchDecodeWithPagedKVCache (CUDA cores) */
	SKV_HEUR_VLLM_V2 = 3,      /* vLLM paged_attention_v2 */
	SKV_HEUR_XFORMERS = 4,     /* xformers triton split-K, CUDA path */
	SKV_HEUR_SGLANG = 5,       /* SGLang triton decode backend */
	SKV_HEUR_FLEX = 6,         /* PyTorch FlexAttention decode (flex_decoding) */
	SKV_HEUR_LLAMACPP_CUDA = 7 /* llama.cpp CUDA vec kernel (flash_attn_ext_vec) */
} skv_heur_system;
#define SKV_HEUR_NSYSTEMS 8

/* "fa2", "fa3", "flashinfer", "vllm-v2", "xformers", "sglang", "flex",
 * "llamacpp-cuda"; NULL for an unknown value. */
const char *skv_heur_name(skv_heur_system s);
/* Parses the names above. SKV_EINVAL for anything else (s untouched). */
int skv_heur_parse(skv_heur_system *s, const char *name);

/* The inputs. batch, heads, kv_heads, ctx, head_dim and sm_count must be
 * positive for every system (not every rule uses each); the other fields
 * are read only where noted and ignored elsewhere. */
typedef struct {
	unsigned batch;         /* sequences, one query token each */
	unsigned heads;         /* query heads; a multiple of kv_heads */
	unsigned kv_heads;      /* key/value heads */
	unsigned ctx;           /* keys of every sequence: the n the bounds cut */
	unsigned head_dim;      /* d of queries, keys and values */
	unsigned sm_count;      /* multiprocessors as the system reads them (fa3: minus its sm_margin) */
	unsigned elem_bytes;    /* fa3: bytes per K/V element, 2 (fp16/bf16) or 1 (e4m3) */
	unsigned blocks_per_sm; /* flashinfer, llamacpp-cuda: cudaOccupancyMaxActiveBlocksPerMultiprocessor
	                         * of the split kernel, as the system asks it at run time */
	unsigned page_size;     /* flashinfer: tokens per KV-cache page */
	unsigned max_splits;    /* sglang: --triton-attention-num-kv-splits (0: its default, 8) */
	int deterministic;      /* sglang: --enable-deterministic-inference (fixed 256-key tiles) */
} skv_heur_input;

/* A split plan. Contiguous layouts (tile == 0): split s holds keys
 * [bounds[s], bounds[s+1]), nbounds = splits + 1, bounds[0] = 0,
 * bounds[splits] = ctx; splits past the keys are empty (bounds equal to ctx)
 * where the system launches them so. Interleaved layouts (tile > 0, only
 * llamacpp-cuda): the keys fall in tiles [bounds[t], bounds[t+1]) of tile keys
 * (the last may be short), nbounds = ceil(ctx / tile) + 1, and tile t belongs
 * to split t mod splits; splits past the tiles are empty. */
typedef struct {
	unsigned splits; /* S: thread blocks (partials) per sequence and head */
	unsigned tile;   /* 0, or the keys per interleaved tile */
	size_t span;     /* keys of every split but the last non-empty one (contiguous), or tile */
	size_t nbounds;  /* entries the bounds take */
} skv_heur_plan;

/* NULL when `in` is in the domain of system s, otherwise a one-line reason
 * naming the offending field and the rule it breaks (a static string). The
 * domain is the range the source handles without overflowing its own
 * integers (lib/heuristics.c gives each limit). */
const char *skv_heur_invalid(skv_heur_system s, const skv_heur_input *in);

/* The plan system s makes for `in`; with bounds non-NULL also the nbounds
 * boundaries (see skv_heur_plan) in bounds[0..cap-1]. bounds NULL (cap
 * ignored) asks for the plan alone, e.g. to size bounds. SKV_EINVAL for NULL
 * plan or in, an unknown system or skv_heur_invalid(s, in) != NULL;
 * SKV_ERANGE when cap < the plan's nbounds. Nothing is written on error. */
int skv_heur_splits(skv_heur_plan *plan, size_t *bounds, size_t cap, skv_heur_system s,
		    const skv_heur_input *in);
/* The plan system s makes when it runs `splits` splits on `in` instead of
 * its own count: the same layout rule with the count forced (fa2, fa3:
 * ceil(blocks / S) blocks of the system's block_n keys; sglang: the split
 * length rounded up to 32; flex: to 64; xformers: ceil(ctx / S); llamacpp-
 * cuda: 128-key tiles round-robin over S blocks). FlashInfer and vLLM size
 * a chunk, not a count: chunks of ceil(pages / S) pages, partitions of
 * ceil(ctx / S) keys rounded up to 16, as many as cover the keys, so
 * plan->splits can be below `splits`. For the other systems the layout at
 * the count skv_heur_splits chooses is skv_heur_splits' plan. Errors as
 * skv_heur_splits, and SKV_EINVAL for splits 0 or above ctx. */
int skv_heur_layout(skv_heur_plan *plan, size_t *bounds, size_t cap, skv_heur_system s,
		    const skv_heur_input *in, unsigned splits);

/* FlashInfer's merge kernel thread layout (VariableLengthMergeStates,
 * include/flashinfer/attention/cascade.cuh:704-707 at fb28d7242b35):
 * vec = max(16 / partial_bytes, head_dim / 32), bdx = head_dim / vec,
 * bdy = 128 / bdx; thread ty merges the splits ty, ty + bdy, ... in order.
 * SKV_EINVAL for NULL, head_dim not in {64, 128, 256, 512} (its dispatch) or
 * partial_bytes not in {2, 4}. */
int skv_flashinfer_merge_layout(unsigned *vec, unsigned *bdx, unsigned *bdy, unsigned head_dim,
				unsigned partial_bytes);

/* --------------------------------------------------- tensor-core arithmetic */

/*
 * Bit-accurate models of NVIDIA tensor-core dot products (lib/mma.c), after
 * Khattak and Mikaitis, "Accurate Models of NVIDIA Tensor Cores" (ACM TACO;
 * arXiv 2512.07004) and their MATLAB models (north-numerical-computing/
 * MATLAB-tensor-core at b12b5a7, models/tools/Generic_BFMA_TC.m, GEMM.m,
 * models/GPUTC.m), validated against the vectors recorded on the GPUs
 * (../shared/data/tensor-core-vectors, tests/test_mma.c).
 *
 * One tensor-core step is a block FMA d = c + sum_{i<n} a_i b_i: the exact
 * products (zero products dropped) and c are aligned to the largest exponent
 * among them, each truncated to 23 + neab fraction bits below it, added
 * exactly, normalised once and rounded once to the output format. A dot
 * product of length K chains blocks of n products in index order, the result
 * of one block being the c of the next (GEMM.m), the last block zero-padded.
 *
 * Which products share a block in an attention kernel (sources in
 * lib/mma.c): FA2 issues mma.sync m16n8k16 (k = 16 products per instruction)
 * along head_dim for q.k and along the key index for P.V, in index order,
 * accumulating into the fp32 score or output registers; FA3 issues wgmma
 * with k = 16 for fp16/bf16 and k = 32 for FP8. So for head_dim 128, q.k is
 * 8 instructions over products [16t, 16t + 16) (4 of 32 for FP8), starting
 * from c = 0, and P.V over a key block is one instruction per 16 keys (32
 * for FP8) with c the running output accumulator. A unit with n < k (A100,
 * Ada: n = 8) splits each instruction into blocks of n in index order; this
 * is exactly skv_mma_dot over the head_dim or key range.
 *
 * What the recorded vectors cover: for FP8, H100 with fp32 output is wgmma
 * with c = 0 (how a nonzero c joins is the model file's assumption), H100
 * with fp16 output and B200 are mma.sync; B200 kernels issue tcgen05.mma,
 * for which no vectors were recorded.
 */

/* A unit's inputs are fp16, bf16, tf32, e4m3 or e5m2 (SKV_E4M3_SAT and
 * SKV_E5M2_SAT hold the same values and are taken as the same inputs); its
 * output, and c, fp32 or fp16. */

/* The modelled units. SKV_GPU_IEEE is not a GPU: a sequential chain of IEEE
 * fused multiply-adds in the output format, d = fma(a_i, b_i, d) for
 * i = 0 .. K-1, skv's arithmetic before these models. */
typedef enum {
	SKV_GPU_IEEE = 0,
	SKV_GPU_V100 = 1, /* Volta */
	SKV_GPU_A100 = 2, /* Ampere: A100, A2, A30 */
	SKV_GPU_ADA = 3,  /* Ada Lovelace: L40S (and RTX 1000 Ada) */
	SKV_GPU_H100 = 4, /* Hopper: H100, H200 */
	SKV_GPU_B200 = 5  /* Blackwell B200 */
} skv_gpu;
#define SKV_NGPUS 6

/* "ieee", "v100", "a100", "ada", "h100", "b200"; NULL for an unknown value. */
const char *skv_gpu_name(skv_gpu g);
/* Parses those names and the aliases "a2", "a30", "l40s", "h200".
 * SKV_EINVAL for anything else (g untouched). */
int skv_gpu_parse(skv_gpu *g, const char *name);

typedef enum {
	SKV_MMA_RZ = 0,  /* toward zero (truncation) */
	SKV_MMA_RNE = 1, /* to nearest, ties to even */
	SKV_MMA_RD = 2,  /* toward -inf */
	SKV_MMA_RU = 3   /* toward +inf */
} skv_mma_round;

/* When the accumulator c joins a block. */
typedef enum {
	SKV_MMA_C_ALIGNED = 0, /* c is one more addend of the alignment (every
	                        * NVIDIA model file) */
	SKV_MMA_C_LATE = 1,    /* late_partial_sum: the products are summed
	                        * unnormalised, then c is added by a two-term
	                        * alignment rounded with align_round (the
	                        * product sum gets 7 more bits when c is larger) */
	SKV_MMA_C_AFTER = 2    /* the block is computed and rounded without c,
	                        * then c is added by one IEEE addition rounded to
	                        * nearest in the output format (FP8 mma.sync:
	                        * B200, and H100 with fp16 output, as the
	                        * recorded vectors show) */
} skv_mma_cjoin;

/* The parameters of Generic_BFMA_TC.m that NVIDIA's models use, one field
 * per model flag (named there in brackets). */
typedef struct {
	unsigned n;                /* products per block [fma], 1..64 */
	int halves;                /* 1: a block is two chained half-blocks, first
	                            * the products with i mod 4 < 2, then the
	                            * rest (the interleaved pattern of the
	                            * repository's first GEMM.m); n % 4 == 0 */
	int neab;                  /* extra alignment bits, -20..7 [neab]: the
	                            * aligned significands keep 23 + neab bits
	                            * below the block's exponent */
	int sticky;                /* 1: each aligned addend gets a sticky bit
	                            * [stkbitenabled] */
	skv_mma_round final_round; /* rounding of the normalised sum [frmode] */
	skv_mma_round align_round; /* rounding of the late two-term alignment
	                            * [armode]; used by SKV_MMA_C_LATE only */
	int out_frac;              /* fraction bits kept by the final rounding:
	                            * 23 (fp32), 10 (fp16), 13 (FP8 on Ada and
	                            * H100: 23 + neab) */
	int min_exp;               /* the alignment exponent is at least this
	                            * [min_exp_limit] */
	int c_min_exp;             /* 1: in SKV_MMA_C_LATE a zero c aligns at
	                            * -126 [c_min_exp_limit] */
	int in_subnormals;         /* 0: subnormal inputs are flushed to zero */
	int out_subnormals;        /* 0: a subnormal c and results are flushed */
	int denorm_products;       /* 1: products keep significands in [1, 4)
	                            * with exponent e_a + e_b [denorm_prd] */
	int product_limit;         /* 1: a product of magnitude >= 2^(emax + 1)
	                            * of the output gives +-inf [prd_limit] */
	skv_mma_cjoin cjoin;       /* [late_partial_sum], and SKV_MMA_C_AFTER */
} skv_mma_params;

/* A unit: a GPU's arithmetic for one input and one output format. Fill it
 * with skv_mma_unit_init or skv_mma_unit_custom and treat it as read-only. */
typedef struct {
	int gpu;               /* skv_gpu, or -1 for a custom unit */
	skv_format input;      /* fp16, bf16, tf32, e4m3(-sat), e5m2(-sat) */
	skv_format output;     /* SKV_FP32 or SKV_FP16 */
	skv_mma_params par;    /* unused for SKV_GPU_IEEE */
	const char *source;    /* where the parameters come from and how they
	                        * were validated (one line) */
	int emin_in, emin_out, emax_out; /* derived by init */
	int fast;              /* derived: takes the fast path of lib/mma.c */
} skv_mma_unit;

/* The unit of GPU g for inputs in `in` and outputs (and c) in `out`.
 * SKV_EINVAL for an unknown value, a format that is no unit input, or a
 * combination the GPU lacks (V100: fp16 only; bf16 and tf32 accumulate in
 * fp32 only; FP8 from Ada on); u untouched then. ieee takes every input
 * with fp32 or fp16 output. */
int skv_mma_unit_init(skv_mma_unit *u, skv_gpu g, skv_format in, skv_format out);

/* A unit from explicit parameters, for studies of the model itself.
 * SKV_EINVAL for a field out of its range above, out_frac above the output
 * format's fraction bits, or SKV_MMA_C_LATE with sticky or halves (the
 * published model does not define them); u untouched then. */
int skv_mma_unit_custom(skv_mma_unit *u, const skv_mma_params *par, skv_format in, skv_format out);

/* d = c + sum_{i<K} a[i*sa] b[i*sb] as unit u computes it: blocks of u->par.n
 * products in index order (the last one short: its padding products are
 * zero and dropped), chained through c. c is a value of the output format.
 * NaN and infinities as GEMM.m decides them over the whole vector: NaN if a
 * NaN, 0 * inf or both +inf and -inf appear among the products and c, else
 * the infinity that appears. A block result at or beyond 2^(emax+1) of the
 * output is +-inf, also when rounding toward zero (Generic_BFMA_TC.m); an
 * infinite accumulator then stays (skv's rule: the model is silent). An
 * exact zero sum is +0 (the model's "signOut = sum < 0"); a nonzero sum
 * that rounds to zero keeps its sign. K == 0 gives c. The ieee unit follows
 * IEEE 754 instead (fma's signed zeros and infinities).
 * Returns SKV_EINVAL, leaving *d untouched, for NULL pointers, a unit not
 * made by the functions above, a zero stride with K > 1, an a or b element
 * that is not a value of u->input (NaN, or skv_round(u->input, x) == x) or
 * a c that is not a value of u->output. No allocation, no MPFR. */
int skv_mma_dot(double *d, const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb,
		size_t K, double c);

/* skv_mma_dot without the checks, for kernels whose operands are values of
 * the formats by construction; its result for other operands is
 * unspecified. */
double skv_mma_dot_fast(const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb, size_t K,
			double c);

/* The MMA instruction attention kernels issue on GPU g for inputs in
 * `in`: *k, the products one instruction sums along the reduction (its K:
 * the head_dim for q.k, the keys for P.V), and *instr, its PTX shape (one
 * line). Only k decides which products share a block FMA: a tile's M and
 * N give each output element its own chain, and the instructions of one
 * GPU and format that different kernels pick (FA2's mma.sync, FA3's
 * wgmma) have the same k. For every unit, n divides k (tests/
 * test_kernel_mech.c checks it), so the chain of instructions is exactly
 * skv_mma_dot over the whole reduction (lib/scan_mma.c has the table and
 * its sources). Either output may be NULL. SKV_EINVAL for SKV_GPU_IEEE, an
 * unknown value, or a format g's tensor cores do not take (V100: fp16
 * only; FP8 from Ada on); nothing written then. */
int skv_mma_tile(unsigned *k, const char **instr, skv_gpu g, skv_format in);

#ifdef __cplusplus
}
#endif
#endif
