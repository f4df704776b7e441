/* heuristics_internal.h - the per-system split rules shared by heuristics.c and heuristics_sched.c. */
#ifndef SKV_HEURISTICS_INTERNAL_H
#define SKV_HEURISTICS_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

#include "skv.h"

/* What a system decides: S splits; contiguous (tile == 0) split s is
 * [s span, (s + 1) span) clamped to the n keys; interleaved (tile > 0) the
 * tiles of `tile` keys go round-robin to the S splits. */
typedef struct {
	unsigned splits;
	unsigned tile;
	size_t span;
} heur_cut;

/* Each system's domain check (NULL or the reason) and its rule; the rule is
 * only called on an input its check accepted, and cannot fail then. */
const char *heur_flashinfer_invalid(const skv_heur_input *in);
void heur_flashinfer_cut(heur_cut *c, const skv_heur_input *in);
const char *heur_sglang_invalid(const skv_heur_input *in);
void heur_sglang_cut(heur_cut *c, const skv_heur_input *in);
const char *heur_llamacpp_invalid(const skv_heur_input *in);
void heur_llamacpp_cut(heur_cut *c, const skv_heur_input *in);
/* The cut each system makes when it runs S splits (skv_heur_layout). */
void heur_flashinfer_at(heur_cut *c, const skv_heur_input *in, unsigned S);
void heur_sglang_at(heur_cut *c, const skv_heur_input *in, unsigned S);
void heur_llamacpp_at(heur_cut *c, const skv_heur_input *in, unsigned S);

/* ceil(a / b) for b > 0, without the overflow of a + b - 1. */
static inline uint64_t heur_ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

#endif
