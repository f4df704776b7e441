/* fmt_inline.h - internal: inline rounding to each format and emulated arithmetic for hot loops. */
#ifndef SKV_FMT_INLINE_H
#define SKV_FMT_INLINE_H

/*
 * Every value is carried in a double. skv_round_i(f, x) rounds a double once,
 * to nearest with ties to even, to format f; the skv_OP_i functions return
 * the exact result of OP on arguments that are already values of f, rounded
 * once to f. The public functions in lib/format.c and lib/arith.c are thin
 * wrappers around these; the kernels call these directly. An out-of-range f
 * gives NaN, never a crash (callers validate configurations first).
 *
 * Requires the default floating-point environment (round to nearest, no
 * flush-to-zero) and -ffp-contract=off, which the Makefile sets.
 */

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "skv.h"

#define SKV_I_SIGN UINT64_C(0x8000000000000000)
#define SKV_I_INF UINT64_C(0x7ff0000000000000)

/* Branch hints: the normal range of a format is the common case, the
 * special values rare (the compiler lays the common path out straight). */
#define SKV_I_LIKELY(c) __builtin_expect(!!(c), 1)
#define SKV_I_UNLIKELY(c) __builtin_expect(!!(c), 0)

/* Bit pattern of 2^e for a normal double exponent e (-1022 <= e <= 1023). */
#define SKV_I_POW2_BITS(e) ((uint64_t)((e) + 1023) << 52)

static inline uint64_t skv_bits_i(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static inline double skv_from_bits_i(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* How a format's one rounding is carried out. */
typedef enum {
	SKV_RND_ID = 0,   /* fp64: the double itself */
	SKV_RND_HW32 = 1, /* fp32: the hardware's double -> float conversion */
	SKV_RND_BITS = 2  /* every narrower format: skv_round_bits_i */
} skv_rnd_kind_i;

/* One row per format: the single source of every format parameter (the
 * public queries in lib/format.c read it too). ovfval and the columns after
 * `kind` are derived from the others by SKV_I_ROW, for the bit-level
 * rounding below. */
typedef struct {
	const char *name;
	int p;                /* precision in bits, implicit bit included */
	int emin, emax;       /* exponents of the smallest normal and of the largest binade */
	double max;           /* largest finite value */
	skv_overflow ovf;     /* what a result beyond max becomes */
	double ovfval;        /* that result for a positive one: inf, NaN or max */
	unsigned char sgn;    /* 1 if the format has negative values */
	unsigned char scale;  /* 1 for a scale-only format */
	unsigned char zero;   /* 1 if the format has a zero */
	unsigned char kind;   /* skv_rnd_kind_i */
	unsigned char bits;   /* width of its encoding in memory (tf32: the 32-bit word it is held in) */
	unsigned sh;          /* 53 - p: low pattern bits dropped */
	uint64_t keep;        /* ~((1 << sh) - 1): the kept pattern bits */
	uint64_t half;        /* added before the drop: see skv_round_bits_i */
	uint64_t lsb;         /* mask of the kept last bit in the pattern shifted by sh */
	uint64_t minbits;     /* pattern of 2^emin */
	uint64_t subc;        /* pattern of 2^(emin - p + 53), the subnormal rounding constant */
	uint64_t sign;        /* the sign bit for a signed format, 0 for an unsigned one */
} skv_fmt_i;

/* sh for p <= 52 (the rows that round on bits); 1 for the others, whose
 * derived columns are unused. */
#define SKV_I_SH(p) ((p) <= 52 ? 53 - (p) : 1)
#define SKV_I_ROW(nm, p_, emin_, emax_, max_, ovf_, sgn_, scale_, zero_, kind_, bits_)                       \
	{                                                                                                     \
		.name = (nm), .p = (p_), .emin = (emin_), .emax = (emax_), .max = (max_), .ovf = (ovf_),       \
		.ovfval = (ovf_) == SKV_OVERFLOW_INF ? INFINITY : (ovf_) == SKV_OVERFLOW_NAN ? NAN : (max_),   \
		.sgn = (sgn_), .scale = (scale_), .zero = (zero_), .kind = (kind_), .bits = (bits_),            \
		.sh = SKV_I_SH(p_),                                                                            \
		.keep = ~((UINT64_C(1) << SKV_I_SH(p_)) - 1),                                                  \
		.half = (UINT64_C(1) << (SKV_I_SH(p_) - 1)) - ((p_) == 1 ? 0 : 1), .lsb = (p_) == 1 ? 0 : 1,   \
		.minbits = SKV_I_POW2_BITS(emin_), .subc = SKV_I_POW2_BITS((emin_) - (p_) + 53),              \
		.sign = (sgn_) ? SKV_I_SIGN : 0                                                                \
	}

/*
 * The formats, one X(id, name, p, emin, emax, max, overflow policy, signed,
 * scale-only, has zero, rounding kind, bits in memory) row each: the table skv_fmts_i and
 * the dispatch of skv_round_i are both generated from this list, so a new
 * format is an enum value in skv.h, a row here, and its tests.
 * Sources for each row's parameters (the OCP PDFs as transcribed in the
 * OFP8 conformance tests of the microfloat crate, tests/ocp_e4m3.rs and
 * ocp_e5m2.rs, and in microsoft/microxcaling mx/formats.py, the OCP MX
 * reference code; NVIDIA's as in the CUDA Math API and PTX ISA cvt pages):
 * fp16, fp32, fp64: IEEE 754-2019 table 3.5 (binary16, binary32, binary64).
 * bf16: the upper half of binary32 (p = 8, fp32's exponent range), with
 *   subnormals kept (numerics.md).
 * tf32: binary32's sign and 8-bit exponent with a 10-bit fraction, held in
 *   32 bits whose low 13 are zero (PTX ISA, cvt: ".tf32 ... operand d has
 *   .b32 type"; the A100 tensor-core input format); subnormals kept, as in
 *   fp32. skv rounds to nearest even as everywhere; PTX offers
 *   cvt.rna.tf32.f32 (ties away) and cvt.rn/.rz (PTX ISA 7.8+), and the
 *   tensor cores of some GPUs take fp32 operands and drop the low bits
 *   (truncation), which a kernel model must say it uses.
 * e4m3, e4m3-sat: OCP 8-bit Floating Point Specification (OFP8) rev 1.0,
 *   tables 1 and 2: bias 7, so emin = 1 - 7 = -6 and subnormals down to
 *   2^-9; no infinity, and only S.1111.111 is NaN, so the top binade 2^8
 *   keeps S.1111.000-110 and max = 1.75 * 2^8 = 448 (E4M3's max is not the
 *   binade's last p-bit value: 480 = 1.875 * 2^8 would be S.1111.111). A
 *   result is rounded as if the exponent were unbounded, so 464, the
 *   midpoint of 448 and 480, ties to the even 448 = 1.110b * 2^8, and only
 *   a result that rounds to 480 or more overflows. e4m3 overflows to NaN
 *   (an infinite input too), as OFP8 section 5 specifies a conversion with
 *   saturation off. e4m3-sat saturates to +-448 (and +-inf goes to +-448),
 *   as PTX's cvt.rn.satfinite.e4m3x2.f32 does ("if the absolute value of
 *   input is greater than MAX_NORM ... the result is sign-preserved
 *   MAX_NORM"; NaN stays NaN) and as vLLM clamps before converting
 *   (csrc/quantization/fp8/common.cuh, scaled_fp8_conversion, commit
 *   0a9a96f: fmax(-448, fmin(x, 448)); note that fmin/fmax return the other
 *   operand for a NaN, so vLLM turns a NaN into +448, where skv and
 *   .satfinite keep it NaN).
 * e5m2, e5m2-sat: OFP8 rev 1.0 tables 1 and 2: bias 15 (emin = -14,
 *   subnormals down to 2^-16), IEEE infinities and NaNs, max S.11110.11 =
 *   1.75 * 2^15 = 57344: fp16's exponent with 2 fraction bits. e5m2
 *   overflows to +-inf (the midpoint 61440 ties to the even 2^16, as in
 *   fp16); e5m2-sat saturates to +-57344 and takes +-inf there, as
 *   cvt.rn.satfinite.e5m2x2.f32 does (same PTX text as above).
 * e2m1: OCP Microscaling Formats (MX) v1.0, FP4 E2M1: bias 1 (emin = 0,
 *   the one subnormal 0.5), emax 2, no infinity and no NaN, so the values
 *   are 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives. It saturates to +-6
 *   (+-inf too): PTX converts to it only with .satfinite
 *   (cvt.rn.satfinite{.relu}.e2m1x2.f32). A NaN input stays NaN in the
 *   double that carries the value, although e2m1 has no NaN encoding: a
 *   NaN upstream is a bug that the program must see, not a 6.
 * e8m0: OCP MX v1.0, the scale data type E8M0: an unsigned power of two
 *   2^(E - 127), E = 0 .. 254, so 2^-127 .. 2^127; E = 0xFF is NaN; no
 *   zero, no sign, no subnormal (CUDA's __nv_fp8_e8m0: "Bias equals to
 *   127, so numbers 0 through 254 represent 2^-127 through 2^127. Number
 *   0xFF = 255 is reserved for NaN"). As a p = 1 format its one
 *   significand is 1, so round-to-nearest-even has no even candidate at a
 *   tie 1.5 * 2^k; skv rounds it up, to 2^(k+1), whose significand at the
 *   smaller candidate's exponent is 10b (even) - the rule MPFR applies at
 *   precision 1. A value past 2^127 saturates there (so does +inf), as
 *   CUDA's e8m0 conversions do with __NV_SATFINITE; a positive value below
 *   2^-127 goes to 2^-127, its nearest value; zero (either sign), a negative
 *   value and NaN give NaN. This is the format's rounding, not a scale
 *   rule: a quantiser picks the scale itself, e.g. OCP MX's
 *   2^(floor(log2 amax) - emax_elem), or PTX's cvt.rz/.rp.satfinite.ue8m0x2
 *   (toward zero or up, the only modes PTX offers), and skv_round leaves
 *   that power of two unchanged.
 * ue4m3: NVFP4's block scale (per 16 values, with an fp32 tensor scale):
 *   e4m3's encoding with the sign bit 0 (PTX's .ue4m3 scale type of
 *   mma...block_scale; NaN 0x7F), so e4m3's non-negative values, max 448.
 *   It saturates to 448, as the kernels convert it with __NV_SATFINITE. -0
 *   gives +0; a negative value gives NaN.
 * The scale-only formats (is_scale) hold block scales; a program refuses
 *   them as stage formats (skv_format_is_scale).
 */
#define SKV_I_FORMATS(X)                                                                                      \
	X(SKV_FP16, "fp16", 11, -14, 15, 65504.0, SKV_OVERFLOW_INF, 1, 0, 1, SKV_RND_BITS, 16)                     \
	X(SKV_BF16, "bf16", 8, -126, 127, 0x1.fep127, SKV_OVERFLOW_INF, 1, 0, 1, SKV_RND_BITS, 16)                 \
	X(SKV_FP32, "fp32", 24, -126, 127, 0x1.fffffep127, SKV_OVERFLOW_INF, 1, 0, 1, SKV_RND_HW32, 32)            \
	X(SKV_FP64, "fp64", 53, -1022, 1023, 0x1.fffffffffffffp1023, SKV_OVERFLOW_INF, 1, 0, 1, SKV_RND_ID, 64)    \
	X(SKV_TF32, "tf32", 11, -126, 127, 0x1.ffcp127, SKV_OVERFLOW_INF, 1, 0, 1, SKV_RND_BITS, 32)               \
	X(SKV_E4M3, "e4m3", 4, -6, 8, 448.0, SKV_OVERFLOW_NAN, 1, 0, 1, SKV_RND_BITS, 8)                          \
	X(SKV_E4M3_SAT, "e4m3-sat", 4, -6, 8, 448.0, SKV_OVERFLOW_SAT, 1, 0, 1, SKV_RND_BITS, 8)                  \
	X(SKV_E5M2, "e5m2", 3, -14, 15, 57344.0, SKV_OVERFLOW_INF, 1, 0, 1, SKV_RND_BITS, 8)                      \
	X(SKV_E5M2_SAT, "e5m2-sat", 3, -14, 15, 57344.0, SKV_OVERFLOW_SAT, 1, 0, 1, SKV_RND_BITS, 8)              \
	X(SKV_E2M1, "e2m1", 2, 0, 2, 6.0, SKV_OVERFLOW_SAT, 1, 0, 1, SKV_RND_BITS, 4)                             \
	X(SKV_E8M0, "e8m0", 1, -127, 127, 0x1p127, SKV_OVERFLOW_SAT, 0, 1, 0, SKV_RND_BITS, 8)                    \
	X(SKV_UE4M3, "ue4m3", 4, -6, 8, 448.0, SKV_OVERFLOW_SAT, 0, 1, 1, SKV_RND_BITS, 8)

#define SKV_I_ENTRY(id, ...) [id] = SKV_I_ROW(__VA_ARGS__),
static const skv_fmt_i skv_fmts_i[] = {SKV_I_FORMATS(SKV_I_ENTRY)};
_Static_assert(sizeof skv_fmts_i / sizeof skv_fmts_i[0] == SKV_NFORMATS, "one row per format");

/* The row of f, or NULL for an unknown f. */
static inline const skv_fmt_i *skv_fmt_i_of(skv_format f)
{
	return (unsigned)f < SKV_NFORMATS ? &skv_fmts_i[f] : NULL;
}

/*
 * Rounds x to the format of row r (p <= 52), ties to even. The result is
 * first rounded as if the exponent range were unbounded above, then a
 * result beyond the largest finite value is an overflow: it becomes the
 * row's ovfval (inf, NaN or max, by its policy) with the input's sign, as
 * an infinite input does. A NaN stays NaN (quieted).
 *
 * Normal range of the format (|x| >= 2^emin): x is a normal double there
 * (2^emin >= 2^-126 > 2^-1022), so dropping the low 53 - p bits of its
 * pattern with round-half-even on the integer is the rounding: adding
 * half - 1 + lsb carries into the kept bits exactly when the dropped part is
 * above half, or equal to half with the kept part odd; a carry out of the
 * significand increments the exponent field, which is the right result (the
 * next binade's smallest value). A result above max is an overflow: by the
 * IEEE rule (round as if the exponent were unbounded, then overflow) that
 * includes the midpoint between max and 2^(emax+1) when max is the
 * binade's last value, since the tie goes to the even candidate 2^(emax+1).
 *
 * Subnormal range (|x| < 2^emin): the result is a multiple of the smallest
 * subnormal s = 2^(emin-p+1). With C = 2^52 * s, the sum |x| + C lies in
 * [C, 2C) where the double spacing is exactly s, so the hardware's one
 * rounding of the sum is round-to-nearest-even of |x| onto the grid sZ
 * (C is an even multiple of s, so the parity of the multiple is unchanged);
 * subtracting C is exact (Sterbenz). This covers doubles below s/2, which go
 * to zero, and the tie s/2, which goes to the even 0. The sign is put back
 * afterwards, so -0 and negative tiny values give -0.
 */
static inline double skv_round_bits_i(const skv_fmt_i *r, double x)
{
	const uint64_t u = skv_bits_i(x);
	const uint64_t sign = u & r->sign;
	uint64_t a = u ^ sign;

	if (SKV_I_LIKELY(a >= r->minbits)) {
		if (SKV_I_UNLIKELY(a >= SKV_I_INF)) { /* NaN, infinity, or a negative x of an unsigned format */
			if (x != x)
				return x + x;
			if (!r->sgn && (u & SKV_I_SIGN)) /* unsigned: -0 is +0 where there is a zero */
				return (u == SKV_I_SIGN && r->zero) ? 0.0 : NAN;
			return skv_from_bits_i(skv_bits_i(r->ovfval) | sign);
		}
		a += r->half + ((a >> r->sh) & r->lsb);
		a &= r->keep;
		if (SKV_I_UNLIKELY(a > skv_bits_i(r->max)))
			a = skv_bits_i(r->ovfval);
		return skv_from_bits_i(a | sign);
	}
	if (SKV_I_UNLIKELY(!r->zero)) /* e8m0: 0 is no value; a positive x goes to 2^emin */
		return a == 0 ? NAN : skv_from_bits_i(r->minbits);
	{
		const double c = skv_from_bits_i(r->subc);
		double y = (skv_from_bits_i(a) + c) - c;
		return skv_from_bits_i(skv_bits_i(y) | sign);
	}
}

/* The rounding of row r. fp32: the hardware's double -> float conversion
 * is one correct rounding (RNE, subnormals, overflow to inf) and float ->
 * double is exact. fp64: identity. */
static inline double skv_round_row_i(const skv_fmt_i *r, double x)
{
	if (r->kind == SKV_RND_HW32)
		return (double)(float)x;
	if (r->kind == SKV_RND_BITS)
		return skv_round_bits_i(r, x);
	return x;
}

/* The format's one rounding. The switch, generated from the table's rows,
 * gives each format its own copy of skv_round_row_i with the row's
 * parameters as constants (in registers across a loop), so a format known
 * only at run time costs a jump, not a table read per parameter. */
#define SKV_I_CASE(id, ...)                                                                                 \
	case id: return skv_round_row_i(&skv_fmts_i[id], x);
static inline double skv_round_i(skv_format f, double x)
{
	switch (f) {
		SKV_I_FORMATS(SKV_I_CASE)
	default: return NAN;
	}
}

/*
 * +, -, *, /, sqrt: the double result is the exact result rounded once to
 * 53 bits (exact for + and * of the narrow formats' values often; always
 * for * up to p = 26). Rounding it again to p bits gives the correctly
 * rounded p-bit result because 53 >= 2p + 2 for p <= 24, so for every
 * format here (p = 1 .. 24; Roux 2014; Figueroa 1995): the first rounding
 * can never move a non-midpoint onto a p-bit midpoint. The theorem is for
 * an unbounded exponent range, and that is what holds: every operand is at
 * most 2^128 and at least 2^-149 in magnitude (fp32's range covers every
 * format but fp64), so no double result overflows or underflows (the
 * extremes are 2^256 and 2^-298, and a sum's exact value is a multiple of
 * the smaller operand's quantum), and the subnormal range, the overflow
 * policy, and the sign and zero rules are applied by the final rounding
 * alone, to the correctly rounded unbounded result, as the format defines
 * them.
 */
static inline double skv_add_i(skv_format f, double a, double b) { return skv_round_i(f, a + b); }
static inline double skv_sub_i(skv_format f, double a, double b) { return skv_round_i(f, a - b); }
static inline double skv_mul_i(skv_format f, double a, double b) { return skv_round_i(f, a * b); }
static inline double skv_div_i(skv_format f, double a, double b) { return skv_round_i(f, a / b); }
static inline double skv_sqrt_i(skv_format f, double a) { return skv_round_i(f, sqrt(a)); }

/*
 * a + b rounded to odd in double: the truncation of the exact sum with the
 * last significand bit forced to 1 when the sum is inexact. s = RN(a + b)
 * and e = a + b - s exactly (Knuth's TwoSum, valid without overflow). If
 * e == 0, s is exact. Otherwise the exact sum lies strictly between two
 * consecutive doubles, one of them odd; s is one of the two, and if s is
 * even the odd one is its neighbour on the side of e. Stepping one ulp in
 * magnitude is +-1 on the pattern (also across a binade boundary). s != 0
 * when e != 0 here because the callers' sums are multiples of 2^-298, far
 * above the double underflow threshold.
 */
static inline double skv_add_odd_i(double a, double b)
{
	double s = a + b;
	double bb = s - a;
	double e = (a - (s - bb)) + (b - bb);
	uint64_t u;

	if (e == 0 || !isfinite(s))
		return s;
	u = skv_bits_i(s);
	if ((u & 1) == 0)
		u = ((e > 0) == (s > 0)) ? u + 1 : u - 1;
	return skv_from_bits_i(u);
}

/*
 * fp64 fma, a b + c rounded once: the CPU's vfmadd231sd where it has FMA,
 * else the C library's fma. Both are correctly rounded (the instruction by
 * the Intel SDM's definition of VFMADD231SD, "computes ... with infinite
 * precision, then rounds"; fma() by C11 F.10.10.1, which glibc follows), so
 * they give the same bits on every input, NaN payloads aside (tests/
 * test_fma64.c compares them on seeded random and edge inputs). Built
 * without -mfma, fma() is a call through the PLT (the audit measured 4% of
 * the fp64 anchor's time there, plus the spills a call forces); the inline
 * instruction behind a run-time check avoids it without a build flag and
 * without a silent change on a CPU without FMA. __builtin_cpu_supports
 * reads libgcc's CPU model, set by its constructor before main; it reports
 * FMA only when the OS saves the AVX state too (libgcc's cpuinfo). With
 * -mfma (__FMA__) the compiler inlines fma() itself.
 */
static inline double skv_fma64_libm_i(double a, double b, double c) { return fma(a, b, c); }

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__FMA__)
#define SKV_I_FMA64_ASM 1
/* The instruction itself: only where skv_fma64_hw_ok_i() is true. */
static inline double skv_fma64_hw_i(double a, double b, double c)
{
	__asm__("vfmadd231sd %2, %1, %0" : "+x"(c) : "x"(a), "x"(b));
	return c;
}
static inline int skv_fma64_hw_ok_i(void) { return __builtin_cpu_supports("fma"); }
static inline double skv_fma64_i(double a, double b, double c)
{
	if (SKV_I_LIKELY(skv_fma64_hw_ok_i()))
		return skv_fma64_hw_i(a, b, c);
	return skv_fma64_libm_i(a, b, c);
}
#else
static inline double skv_fma64_i(double a, double b, double c) { return fma(a, b, c); }
#endif

/*
 * fma: for p <= 26 the product of two p-bit values has at most 2p <= 52
 * significant bits and, for exponents within fp32's range (every format
 * but fp64), lies far inside the double range (2^-298 .. 2^256), so a * b
 * is exact in double. The sum is rounded to odd in double and then to
 * nearest in f; rounding to odd at precision 53 >= p + 2 (true for p <= 51,
 * so for every format here) followed by round to nearest gives the
 * correctly rounded result (Boldo and Melquiond, IEEE TC 57(4), 2008); the
 * odd rounding is exact in double since a nonzero exact sum is at least
 * 2^-298, far above the double subnormals. The final rounding applies f's
 * subnormals, overflow policy and sign rules as above. fp64: skv_fma64_i
 * above, correctly rounded.
 */
static inline double skv_fma_i(skv_format f, double a, double b, double c)
{
	if ((unsigned)f < SKV_NFORMATS && skv_fmts_i[f].kind == SKV_RND_ID)
		return skv_fma64_i(a, b, c);
	return skv_round_i(f, skv_add_odd_i(a * b, c));
}

/* The elementary functions, for the slow path below. */
typedef enum {
	SKV_FN_EXP = 0,
	SKV_FN_EXP2 = 1,
	SKV_FN_LOG = 2,
	SKV_FN_LOG2 = 3,
	SKV_FN_LOG1P = 4,
	SKV_FN_EXPM1 = 5
} skv_fn;
#define SKV_NFNS 6

/* Slow path (lib/arith.c): fn(x) evaluated with MPFR at 128 bits, rounded
 * to odd in double, then rounded to f (every format but fp64: round to odd
 * at 53 bits then to p <= 51 bits is one correct rounding). NaN for fp64, an
 * unknown f or fn. */
double skv_fn_hard(skv_format f, skv_fn fn, double x);

/* Relative half-width of the uncertainty interval around a libm result y.
 * glibc's exp, exp2, log, log2 are within 0.52 double ulp and log1p, expm1
 * within about 1 ulp (glibc manual, "Errors in Math Functions"); the
 * interval y (1 +- 2^-46) has half-width at least 64 double ulps of y, far
 * beyond either bound. */
#define SKV_FN_MARGIN 0x1p-46

/*
 * y = libm fn(x) in double, rounded to f.
 * fp64: y itself (faithful). Every other format: correctly rounded. The exact value lies in
 * I = [y - d, y + d], d = |y| 2^-46 (see SKV_FN_MARGIN). Rounding is
 * monotone, so if both ends of I round to the same value r, every point of I
 * does, and r is the correctly rounded result (both ends NaN count as the
 * same: past the NaN-policy threshold on one side, or a domain error).
 * Otherwise a format midpoint (or the overflow threshold) lies in I (a hard
 * case: for 16-bit formats a few inputs at most, typically none, since the
 * exact value of a transcendental function is never a midpoint except at
 * the exact cases; for fp32 about one call in 2^22), and the value is
 * recomputed with MPFR. Infinite and NaN y are final
 * (overflow, poles, domain errors). Correct rounding also makes the result
 * independent of the platform's libm, as long as it is within 64 ulps.
 */
static inline double skv_fn_finish_i(skv_format f, skv_fn fn, double x, double y)
{
	double d, lo, hi;

	if ((unsigned)f >= SKV_NFORMATS)
		return NAN;
	if (skv_fmts_i[f].kind == SKV_RND_ID)
		return y;
	d = fabs(y) * SKV_FN_MARGIN;
	lo = skv_round_i(f, y - d);
	hi = skv_round_i(f, y + d);
	/* Both ends NaN: an overflow to NaN (or a domain error) at both, and the
	 * interval, which never straddles 0, lies wholly past the threshold. */
	if (lo == hi || (lo != lo && hi != hi))
		return lo; /* also right for y = +-0: d = 0 and y - 0 keeps the sign */
	if (!isfinite(y))
		return skv_round_i(f, y);
	return skv_fn_hard(f, fn, x);
}

static inline double skv_exp_i(skv_format f, double a) { return skv_fn_finish_i(f, SKV_FN_EXP, a, exp(a)); }
static inline double skv_exp2_i(skv_format f, double a) { return skv_fn_finish_i(f, SKV_FN_EXP2, a, exp2(a)); }
static inline double skv_log_i(skv_format f, double a) { return skv_fn_finish_i(f, SKV_FN_LOG, a, log(a)); }
static inline double skv_log2_i(skv_format f, double a) { return skv_fn_finish_i(f, SKV_FN_LOG2, a, log2(a)); }
static inline double skv_log1p_i(skv_format f, double a)
{
	return skv_fn_finish_i(f, SKV_FN_LOG1P, a, log1p(a));
}
static inline double skv_expm1_i(skv_format f, double a)
{
	return skv_fn_finish_i(f, SKV_FN_EXPM1, a, expm1(a));
}

#endif
