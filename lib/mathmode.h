/* mathmode.h - internal: the transcendentals, divisions and reciprocals of kernels and merges, correctly rounded or by the approximate-math bound model (lib/approx.c). */
#ifndef SKV_MATHMODE_H
#define SKV_MATHMODE_H
#include "skv.h"
#include "fmt_inline.h"

/* A configuration's math: the mode and its seed. */
typedef struct {
	skv_math mode;
	uint64_t seed;
} skv_mth;

static inline skv_mth skv_mth_of(const skv_config *cfg)
{
	skv_mth m = {cfg->math, cfg->math_seed};
	return m;
}

/* The bound model of skv.h for fp32 (mode not exact); the correctly
 * rounded r moved within the bound. */
double skv_approx_i(skv_math mode, skv_math_op op, double a, double b, uint64_t seed);

/* Only fp32 operations are approximated (the instructions are .f32); the
 * exact path is the same call as before the modes existed. */
static inline int skv_mth_on(const skv_mth *m, skv_format f) { return m && m->mode != SKV_MATH_EXACT && f == SKV_FP32; }

static inline double skv_m_exp(const skv_mth *m, skv_format f, double a)
{
	return skv_mth_on(m, f) ? skv_approx_i(m->mode, SKV_MOP_EXP, a, 0.0, m->seed) : skv_exp_i(f, a);
}
static inline double skv_m_exp2(const skv_mth *m, skv_format f, double a)
{
	return skv_mth_on(m, f) ? skv_approx_i(m->mode, SKV_MOP_EXP2, a, 0.0, m->seed) : skv_exp2_i(f, a);
}
static inline double skv_m_log(const skv_mth *m, skv_format f, double a)
{
	return skv_mth_on(m, f) ? skv_approx_i(m->mode, SKV_MOP_LOG, a, 0.0, m->seed) : skv_log_i(f, a);
}
static inline double skv_m_log2(const skv_mth *m, skv_format f, double a)
{
	return skv_mth_on(m, f) ? skv_approx_i(m->mode, SKV_MOP_LOG2, a, 0.0, m->seed) : skv_log2_i(f, a);
}
static inline double skv_m_div(const skv_mth *m, skv_format f, double a, double b)
{
	return skv_mth_on(m, f) ? skv_approx_i(m->mode, SKV_MOP_DIV, a, b, m->seed) : skv_div_i(f, a, b);
}
static inline double skv_m_rcp(const skv_mth *m, skv_format f, double a)
{
	return skv_mth_on(m, f) ? skv_approx_i(m->mode, SKV_MOP_RCP, a, 0.0, m->seed) : skv_div_i(f, 1.0, a);
}
#endif
