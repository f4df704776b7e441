/* spec_check.c - a run spec's cross-parameter checks, before any work: presets, layouts, merges, configurations, size, threads and memory. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/sweep_internal.h"

/* Upper bound on points x trials: the engine keeps a few dozen bytes per row
 * and a key per row for its sharing, so a million rows stay well under a
 * gigabyte; a larger sweep is almost certainly a typo. */
static const size_t max_rows = 1000000;

static int nomem(message *e)
{
	msg_set(e, "skv: out of memory");
	return SKV_EIO;
}

/* Whether every preset of the spec resolves on every head dimension (and
 * given input format) it is swept with: FlashInfer's merge dispatches
 * head_dim 64, 128, 256, 512 only. The message names the first that does not. */
static int presets_resolve(const run_spec *s, message *e)
{
	const param_list *pl = &s->list[P_PRESET], *hd = &s->list[P_HEAD_DIM], *il = &s->list[P_INPUT];
	for (size_t i = 0; i < pl->n; i++) {
		const skv_preset *p = pl->v[i].u ? skv_preset_at(pl->v[i].u - 1) : NULL;
		for (size_t j = 0; p && j < hd->n; j++)
			for (size_t k = 0; k < (s->given[P_INPUT] ? il->n : 1); k++) {
				skv_config c;
				skv_merge_spec m;
				skv_format in = s->given[P_INPUT] ? (skv_format)il->v[k].u : p->cfg.input;
				if (skv_preset_resolve_full(&c, &m, p, in, (unsigned)hd->v[j].u) != SKV_OK) {
					msg_set(e, "skv: --preset=%s does not take --head-dim=%llu with input %s (its "
						   "kernels are not built for it)",
						p->name, (unsigned long long)hd->v[j].u, skv_format_name(in));
					return 0;
				}
			}
	}
	return 1;
}

/* Threads and memory, before any work: --threads at most 4 a core (64 at
 * least), and a run whose estimated peak memory exceeds the machine's
 * physical memory refused, with the estimate (and its CPU time) in the
 * message, as recommend refuses what cannot fit. */
static int check_resources(const run_spec *s, message *e)
{
	const int procs = omp_get_num_procs();
	const uint64_t cap = procs * 4 > 64 ? (uint64_t)procs * 4 : 64;
	const uint64_t th = s->list[P_THREADS].v[0].u;
	if (th > cap) {
		msg_set(e, "skv: --threads=%llu is more than 4 per core (this machine has %d core%s: at most %llu)",
			       (unsigned long long)th, procs, procs == 1 ? "" : "s", (unsigned long long)cap);
		return SKV_EINVAL;
	}
	double bytes, cpu;
	if (sweep_estimate(&bytes, &cpu, s, spec_threads(s)) != SKV_OK)
		return nomem(e);
	const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	const double ram = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
	if (ram > 0 && bytes > ram) {
		msg_set(e, "skv: %s needs about %.3g GiB of memory at its largest point, more than this machine's %.3g "
				  "GiB (and about %.3g CPU hours); lower --ctx, --head-dim or --splits",
			       s->exp->name, bytes / 1073741824.0, ram / 1073741824.0, cpu / 3600);
		return SKV_EINVAL;
	}
	return SKV_OK;
}

/* Layout fixed needs the split size (recommend's) and a count that fits it:
 * S = ceil(ctx / size) for every ctx. */
static int fixed_mismatch(const run_spec *s, uint64_t S, message *e)
{
	const uint64_t size = s->list[P_SPLIT_SIZE].v[0].u;
	if (!spec_applies(s, P_SPLIT_SIZE) || size == 0) {
		msg_set(e, "skv: --layout=fixed needs --split-size (the fixed-size option of skv recommend)");
		return 1;
	}
	const param_list *ctx = &s->list[P_CTX];
	for (size_t i = 0; i < ctx->n; i++) {
		const uint64_t want = ctx->v[i].u / size + (ctx->v[i].u % size != 0);
		if (S != want) {
			msg_set(e, "skv: --layout=fixed with --split-size=%llu and --ctx=%llu takes --splits=%llu, not %llu",
				(unsigned long long)size, (unsigned long long)ctx->v[i].u, (unsigned long long)want,
				(unsigned long long)S);
			return 1;
		}
	}
	return 0;
}

/* Why the library refuses c's tensor-core path (skv.h, skv_config.gpu),
 * when that is the reason: 1 with the message, 0 when c without its GPU
 * is refused too. */
static int gpu_refused(const skv_config *c, message *e)
{
	skv_config t = *c;
	t.gpu = SKV_GPU_IEEE;
	if (c->gpu == SKV_GPU_IEEE || skv_config_check(&t) != SKV_OK)
		return 0;
	const char *g = skv_gpu_name((skv_gpu)c->gpu);
	skv_mma_unit u;
	if (skv_mma_unit_init(&u, (skv_gpu)c->gpu, c->input, c->compute) != SKV_OK ||
	    skv_mma_tile(NULL, NULL, (skv_gpu)c->gpu, c->input) != SKV_OK)
		msg_set(e, "skv: --gpu=%s has no tensor cores for input %s with accumulator %s (fp16, bf16, tf32 and "
			   "FP8 inputs as each GPU takes them; the accumulator fp32, or fp16)",
			g, skv_format_name(c->input), skv_format_name(c->compute));
	else if (c->acc)
		msg_set(e, "skv: --gpu=%s needs --acc=compute (the accumulator is the MMA's)", g);
	else if (c->formula == SKV_FORMULA_QSCALE || c->formula == SKV_FORMULA_VLLM)
		msg_set(e, "skv: --gpu=%s does not take --formula=%s (its q or P are not MMA operands: a CUDA-core kernel)",
			g, skv_formula_name(c->formula));
	else
		msg_set(e, "skv: --gpu=%s needs P in the input format (P is an MMA operand): --p=%s with --input=%s", g,
			skv_format_name(c->p), skv_format_name(c->input));
	return 1;
}

/* Every point's kernel configuration and KV cache are ones the library
 * takes (a formula needs its base: fa2's formula with --lse-base=e is
 * refused here, before any work; mx blocks need a head_dim that 32
 * divides). The message names the point's values. */
static int configs_valid(const run_spec *s, size_t np, message *e)
{
	for (size_t pt = 0; pt < np; pt++) {
		param_value v[NPARAMS];
		spec_values(s, pt, v);
		const skv_config c = sweep_config(v, 0);
		const skv_kv_cache kc = sweep_kv_cache(v);
		const char *why = spec_applies(s, P_KV_CACHE) ? skv_kv_cache_invalid(&kc, (size_t)v[P_HEAD_DIM].u) : NULL;
		if (why) {
			char a[32], b[32], d[32], g[32];
			param_format(a, sizeof a, P_KV_CACHE, v[P_KV_CACHE]);
			param_format(b, sizeof b, P_KV_SCALE, v[P_KV_SCALE]);
			param_format(d, sizeof d, P_KV_DEQ, v[P_KV_DEQ]);
			param_format(g, sizeof g, P_KV_SCALE_VALUE, v[P_KV_SCALE_VALUE]);
			msg_set(e, "skv: --kv-cache=%s --kv-scale=%s --kv-deq=%s --kv-scale-value=%s --head-dim=%llu: %s", a, b,
				d, g, (unsigned long long)v[P_HEAD_DIM].u, why);
			return 0;
		}
		if (skv_config_check(&c) != SKV_OK) {
			const int fb = skv_formula_base(c.formula);
			if (gpu_refused(&c, e))
				return 0;
			if (fb >= 0 && (skv_lse_base)fb != c.base)
				msg_set(e, "skv: --formula=%s needs --lse-base=%s, not %s", skv_formula_name(c.formula),
					skv_lse_base_name((skv_lse_base)fb), skv_lse_base_name(c.base));
			else
				msg_set(e, "skv: --lanes=%u --lane-keys=%u --acc=%s: not a configuration the kernel takes "
					   "(lanes: 0 or a power of two up to 1024; lane-keys at most 1024)",
					c.lanes, c.lane_keys, c.acc ? skv_format_name((skv_format)(c.acc - 1)) : "compute");
			return 0;
		}
	}
	return 1;
}

int spec_check(const run_spec *s, message *e)
{
	const param_list *ctx = &s->list[P_CTX], *sp = &s->list[P_SPLITS];
	if (!presets_resolve(s, e))
		return SKV_EINVAL;
	if (s->exp->kind != KIND_ONLINE) { /* split rows: run experiments and recommend */
		for (size_t i = 0; i < sp->n; i++)
			for (size_t j = 0; j < ctx->n; j++)
				if (sp->v[i].u > ctx->v[j].u) {
					msg_set(e, "skv: --splits=%llu is greater than --ctx=%llu",
						 (unsigned long long)sp->v[i].u, (unsigned long long)ctx->v[j].u);
					return SKV_EINVAL;
				}
		const param_list *ll = &s->list[P_LAYOUT];
		for (size_t i = 0; i < ll->n; i++)
			for (size_t j = 0; j < sp->n; j++) {
				layout_id lay = (layout_id)ll->v[i].u;
				if (lay == LAYOUT_FIXED && fixed_mismatch(s, sp->v[j].u, e))
					return SKV_EINVAL;
				if (lay == LAYOUT_SYSTEM && !spec_applies(s, P_SYSTEM)) {
					msg_set(e, "skv: --layout=system is skv recommend's (it cuts the context as "
						   "--system does)");
					return SKV_EINVAL;
				}
				if (sp->v[j].u < layout_min_splits(lay)) {
					char name[32];
					param_format(name, sizeof name, P_LAYOUT, ll->v[i]);
					msg_set(e, "skv: --layout=%s needs at least %zu splits, not --splits=%llu", name,
						       layout_min_splits(lay), (unsigned long long)sp->v[j].u);
					return SKV_EINVAL;
				}
			}
	}
	size_t np = spec_npoints(s);
	uint64_t tr = spec_trials(s);
	if (np == 0 || tr > max_rows || np > max_rows / tr) {
		msg_set(e, "skv: the sweep is too large (points x trials above %zu rows); shorten a list", max_rows);
		return SKV_EINVAL;
	}
	if (!configs_valid(s, np, e))
		return SKV_EINVAL;
	return check_resources(s, e);
}

