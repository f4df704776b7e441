/* online.c - blockwise (online softmax) attention over every query row, causal or not. */
#include <math.h>
#include <stdlib.h>
#include "scan.h"
#include "fmt_inline.h"
#include "problem_internal.h"

/* Every row over K and V read through s (any store). */
static int online_kv(double *out, double *lse, const skv_kv *s, const double *z, size_t block, int causal,
		     double lse_offset, const skv_config *cfg)
{
	const skv_problem *p = s->p;
	if (!out || !p || !p->q || !skv_kv_ok(s) || p->nq == 0 || p->n == 0 || p->d == 0 ||
	    p->n > SIZE_MAX / p->d / sizeof(double) || p->nq > SIZE_MAX / p->d / sizeof(double) ||
	    skv_config_check(cfg) != SKV_OK || isnan(lse_offset) || isinf(lse_offset) ||
	    (causal && p->nq != p->n))
		return SKV_EINVAL;
	const size_t d = p->d;
	/* A block beyond the context is one block: the buffer holds at most n
	 * scores, whatever `block` asks (a pnorm formula scores a row at once). */
	size_t zlen = block && block < p->n && !skv_formula_row_of(cfg->formula)->pnorm ? block : p->n;
	double *zbuf = malloc(zlen * sizeof *zbuf), *acc = malloc(d * sizeof *acc);
	double *row_out = malloc(d * sizeof *row_out), *qs = malloc(d * sizeof *qs);
	double *lane = cfg->lanes > 1 ? malloc(cfg->lanes * sizeof *lane) : NULL;
	skv_rows rd;
	int st = zbuf && acc && row_out && qs && (cfg->lanes <= 1 || lane) ? skv_rows_open(&rd, s, 0, p->n) : SKV_ENOMEM;
	const int opened = st == SKV_OK;
	skv_scan_consts sc;
	skv_scan_consts_init(&sc, p->scale, lse_offset, cfg);
	for (size_t r = 0; st == SKV_OK && r < p->nq; r++) {
		/* The causal mask -inf for keys beyond the row is a shorter scan: a
		 * masked score contributes exp(-inf) = 0 exactly, so skipping it is
		 * the same arithmetic without the wasted work. */
		size_t hi = causal ? r + 1 : p->n;
		double row_lse, m_out, l_out;
		skv_scan_state ss = {0.0, 0.0, lane, acc, z ? z + r * p->n : NULL};
		skv_scan_reset(&ss, d, cfg);
		skv_scan_query(qs, p->q + r * d, d, &sc, cfg);
		skv_scan(&ss, qs, &rd, d, 0, hi, block, &sc, cfg, zbuf);
		skv_scan_finish(row_out, &row_lse, &m_out, &l_out, &ss, d, &sc, cfg);
		for (size_t i = 0; i < d; i++)
			out[r * d + i] = skv_round_i(cfg->output, row_out[i]);
		if (lse)
			lse[r] = skv_lse_to_natural(row_lse, cfg->base);
	}
	if (opened)
		skv_rows_close(&rd);
	free(zbuf);
	free(acc);
	free(row_out);
	free(qs);
	free(lane);
	return st;
}

int skv_attention_online(double *out, double *lse, const skv_problem *p, size_t block, int causal,
			 double lse_offset, const skv_config *cfg)
{
	if (!p)
		return SKV_EINVAL;
	const skv_kv s = skv_kv_plain(p);
	return online_kv(out, lse, &s, NULL, block, causal, lse_offset, cfg);
}

int skv_attention_online_packed(double *out, double *lse, const skv_packed *p, const double *z, size_t block,
				int causal, double lse_offset, const skv_config *cfg)
{
	if (!p)
		return SKV_EINVAL;
	const skv_kv s = skv_kv_packed(p);
	return online_kv(out, lse, &s, z, block, causal, lse_offset, cfg);
}
