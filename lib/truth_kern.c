/* truth_kern.c - the fast truth's vector loops, built for AVX2 + FMA and for any CPU, chosen at run time. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "truth_internal.h"

/*
 * The loops of lib/truth_kern.h are compiled twice: once with the target
 * attribute "avx2,fma" (fma is then the vfmadd instruction, and GCC keeps
 * the four-lane vectors in ymm registers) and once for the baseline ISA,
 * where fma() is the C library's, correctly rounded as C11 F.10.10.1 and
 * glibc require (the audit found glibc picks __fma_fma3 through an ifunc
 * where the CPU has FMA, so that path is slow only on old CPUs). The two
 * give identical bits: the same operations in the same order, each
 * correctly rounded (-ffp-contract=off keeps the compiler from fusing a
 * multiply and an add anywhere). The AVX2 set is used only when
 * __builtin_cpu_supports reports both AVX2 and FMA.
 */

typedef double v4 __attribute__((vector_size(32)));
typedef uint64_t v4u __attribute__((vector_size(32)));
#define V4ABS(x) ((v4)((v4u)(x) & (v4u){~(UINT64_C(1) << 63), ~(UINT64_C(1) << 63), ~(UINT64_C(1) << 63), \
					  ~(UINT64_C(1) << 63)}))

/* 32-byte vectors passed between functions built without AVX change the
 * ABI; only static functions of this file see them, so the note is moot. */
#pragma GCC diagnostic ignored "-Wpsabi"

#define KERN(name) name##_generic
#define KERN_ATTR
#define VFMA(a, b, c)                                                                                   \
	((v4){fma((a)[0], (b)[0], (c)[0]), fma((a)[1], (b)[1], (c)[1]), fma((a)[2], (b)[2], (c)[2]),   \
	      fma((a)[3], (b)[3], (c)[3])})
#include "truth_kern.h"
#undef KERN
#undef KERN_ATTR
#undef VFMA

static const skv_truth_kernels kern_generic = {scan_generic, dot3_generic, accum_generic};

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KERN(name) name##_avx2
#define KERN_ATTR __attribute__((target("avx2,fma")))
#define VFMA(a, b, c) ((v4)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
#include "truth_kern.h"
#undef KERN
#undef KERN_ATTR
#undef VFMA

static const skv_truth_kernels kern_avx2 = {scan_avx2, dot3_avx2, accum_avx2};

static int has_avx2_fma(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#endif

const skv_truth_kernels *skv_truth_kernels_get(skv_truth_isa isa)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (isa != SKV_TRUTH_ISA_GENERIC && has_avx2_fma())
		return &kern_avx2;
#endif
	return isa == SKV_TRUTH_ISA_FMA ? NULL : &kern_generic;
}
