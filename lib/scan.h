/* scan.h - internal: the online-softmax scan of one query row, shared by the split kernel and blockwise attention. */
#ifndef SKV_SCAN_H
#define SKV_SCAN_H
#include "skv.h"
#include "problem_internal.h"

/* How the score constant c is formed (d: the double softmax scale, k:
 * log2 e where the base is 2 or e2, else 1; RN to compute). */
enum {
	SKV_K_SKV = 0, /* RN(d k), one rounding of the exact product */
	SKV_K_F32D,    /* RN(RN(d) k): an fp32 scale times a double constant (FA2, FA3) */
	SKV_K_F32,     /* RN(RN(d) RN(k)): both in compute (xformers, FlashInfer) */
	SKV_K_LIT      /* RN(d 1.44269504): the literal of TileLang's example */
};

/* How the split's LSE is formed. */
enum {
	SKV_L_SKV = 0, /* per base: m + log l, m + log2 l, fma(m, RN(ln 2), log l) */
	SKV_L_FA2,     /* fma(m_raw, RN(scale), log l) */
	SKV_L_FA3,     /* fma(m_raw, RN(c RN(ln 2)), log l) */
	SKV_L_TL,      /* fma(m_raw, c, log2 l) */
	SKV_L_XF       /* RN_lse(RN_lse(log2_lse(l) + m) / RN(1.44269504)) */
};

/* One row of the formula table (lib/scan.c; skv.h states each formula). */
typedef struct {
	const char *name;
	int base;     /* the required skv_lse_base, -1 for any */
	int konst;    /* SKV_K_* */
	int raw;      /* raw scores: p = e(fma(r, c, -RN(m c))) */
	int alpha_fma; /* raw: alpha = e(fma(m_old, c, -RN(m c))), else e(RN(RN(m_old - m) c)) */
	int two_mul;  /* Flex: s = RN(RN(RN(q.k) RN(scale)) + RN(off)) RN(1.44269504) */
	int qscale;   /* q_i pre-scaled by RN(scale) */
	int blocksum; /* l = fma(l, alpha, sum of the block's p) */
	int pnorm;    /* vLLM: p normalised by RN(1/RN(l + RN(1e-6))) before P.V, o = acc */
	int rcp;      /* o = RN(acc RN(1/l)) */
	int lse;      /* SKV_L_* */
	int fp8_offset; /* FA3: Max_offset on FP8 inputs (skv.h, fa3), else 0 */
} skv_formula_row;

const skv_formula_row *skv_formula_row_of(skv_formula f);

/* The constants a kernel folds into its scores, rounded to the compute
 * format: c (the scale, times log2 e in base 2 and e2), the raw scale, the
 * offset as the formula adds it, and Flex's second multiplier. */
typedef struct {
	double scale;  /* c */
	double rscale; /* RN(scale): the raw formulas' LSE factor and qscale's */
	double offset; /* RN(offset k); raw: RN(offset / RN(scale)); flex and qscale: RN(offset) */
	double k2;     /* flex: RN(1.44269504) */
	double maxoff; /* fa3 on FP8 inputs: Max_offset 8, else 0 */
	skv_mma_unit unit; /* gpu: the tensor-core unit of (gpu, input, compute) */
	unsigned tile_k;   /* gpu: products per MMA instruction; 0 for ieee */
} skv_scan_consts;

void skv_scan_consts_init(skv_scan_consts *sc, double scale, double lse_offset, const skv_config *cfg);
/* Its tensor-core part: the unit and tile of cfg->gpu (zeros for ieee). */
void skv_scan_mma_init(skv_scan_consts *sc, const skv_config *cfg);

/* The tensor-core products (lib/scan_mma.c; skv.h, skv_config.gpu):
 * skv_mma_chain is c + sum_{i<K} a[i sa] b[i sb] as instructions of k
 * products from index 0, each skv_mma_dot_fast on the c the previous one
 * left; skv_mma_pv adds to acc[0..d) the P.V of a block of n keys, p[j]
 * the rounded P of key j and v its rows (stride d), the keys in
 * instructions of k from the block's first, c the running acc[i]. */
double skv_mma_chain(const skv_mma_unit *u, unsigned k, const double *a, size_t sa, const double *b, size_t sb,
		     size_t K, double c);
void skv_mma_pv(double *acc, const skv_mma_unit *u, unsigned k, const double *p, const double *v, size_t n,
		size_t d);
/* The same chains for four keys at once: s[t] = skv_mma_chain(u, k, q, 1,
 * kr + t d, 1, d, 0) for t < 4, kr four rows of d, kt 4 d doubles of
 * scratch. */
void skv_mma_dot4(double s[4], const skv_mma_unit *u, unsigned k, const double *q, const double *kr, size_t d,
		  double *kt);

/* The running state of one query row. m is the running max in the units
 * the formula keeps (scaled scores, or raw ones for the raw formulas), l
 * the exp-sum when lanes <= 1, lane[] the per-lane sums otherwise. */
typedef struct {
	double m, l;
	double *lane; /* [lanes], or NULL */
	double *acc;  /* [d] */
	const double *z; /* NULL, or the scores of every key of the problem (skv_scores), z[j] for key j */
} skv_scan_state;

/* Sets st to the empty state: m = -inf, sums and acc 0. */
void skv_scan_reset(skv_scan_state *st, size_t d, const skv_config *cfg);

/* Folds keys [lo, hi) of K and V into st for query q (already q-scaled by
 * the caller for qscale), the keys read through rd (a reader of keys
 * rd->lo .. rd->hi-1 covering [lo, hi): a double problem's own rows or a
 * packed one's decoded, the same values), in blocks of `block` keys (0: one block; forced
 * to one block by pnorm formulas), every operation in cfg->compute and P
 * rounded to cfg->p before P.V; blocks visited in cfg->blocks order. zbuf
 * holds one block of scores (pnorm: the whole range), and when cfg->gpu is
 * set SKV_SCAN_MMA_ROWS * d doubles more after it (skv_scan_zlen). */
void skv_scan(skv_scan_state *st, const double *q, skv_rows *rd, size_t d, size_t lo,
	      size_t hi, size_t block, const skv_scan_consts *sc, const skv_config *cfg, double *zbuf);
/* The most keys one MMA instruction takes (skv_mma_tile's largest k), and
 * the zbuf skv_scan needs for `scores` scores: the V rows of one
 * instruction follow them when cfg->gpu is set. */
#define SKV_SCAN_MMA_ROWS 32
static inline size_t skv_scan_zlen(size_t scores, size_t d, const skv_config *cfg)
{
	return scores + (cfg->gpu ? (size_t)SKV_SCAN_MMA_ROWS * d : 0);
}

/* z[j] for lo <= j < hi (keys read through rd as in skv_scan): the score of key j exactly as skv_scan computes
 * it (q already q-scaled by the caller): it depends on q, k_j, cfg's
 * compute format, formula and base and the constants sc, not on any block
 * or split, so scans that differ only there may share it (st->z). kt: 8 d
 * doubles of scratch for a tensor-core config (the tensor-core path scores
 * four keys at once), else unused. */
void skv_scan_scores(double *z, const double *q, skv_rows *rd, size_t d, size_t lo, size_t hi,
		     const skv_scan_consts *sc, const skv_config *cfg, double *kt);

/* Ends a scan: the lanes' butterfly, o = acc / l as the formula divides,
 * the LSE as the formula writes it (in the config's base), and the max as
 * the split writes it (*m_out, in the LSE's units: in base e2 the log2-unit
 * max times ln 2, rounded in compute). An empty state (l == 0) gives o = 0,
 * lse = -inf, *l_out = 0. */
void skv_scan_finish(double *out, double *lse, double *m_out, double *l_out, const skv_scan_state *st,
		     size_t d, const skv_scan_consts *sc, const skv_config *cfg);

/* The butterfly of T lane sums (T a power of two, at most 1024):
 * x_t = x_t + x_(t xor k) in format c for k = w/2, ..., 1 within warps of
 * w = min(T, 32) lanes, then for k = T/2, ..., w across the warps; lane
 * 0's value. lane[] is not changed. */
double skv_butterfly(const double *lane, size_t T, skv_format c);

/* q'_i = RN(q_i RN(scale)) into qs[d] for the qscale formula; else a copy. */
void skv_scan_query(double *qs, const double *q, size_t d, const skv_scan_consts *sc, const skv_config *cfg);

/* scan_hw32.c: 1 when cfg's scan may run its two fma loops in hardware
 * binary32 (compute fp32, input values binary32 values, a CPU with AVX2
 * and FMA): the same bits as the emulation (the file states why). */
int skv_hw32_on(const skv_config *cfg);
/* q . k accumulated by binary32 fma in order from 0 (q, k binary32 values). */
double skv_hw32_dot(const double *q, const double *k, size_t d);
/* acc_i = RN32(p v_i + acc_i) for i < d (all binary32 values). */
void skv_hw32_pv(double *acc, double p, const double *v, size_t d);

/* Converts an LSE in the config's base to natural log units in double
 * (exact enough: one rounding, relative 2^-53). */
double skv_lse_to_natural(double lse, skv_lse_base base);
#endif
