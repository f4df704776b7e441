/* config.c - precision configurations: the uniform one, the check, and the LSE bases' names. */
#include <string.h>
#include "skv.h"

skv_config skv_config_uniform(skv_format f)
{
	skv_config c = {f, f, f, f, f, f, f, SKV_BASE_E, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0,
			SKV_GPU_IEEE};
	return c;
}

/* Two formats hold the same values (e4m3 and e4m3-sat): the same operands. */
static int same_values(skv_format a, skv_format b)
{
	return a == b || (skv_format_precision(a) == skv_format_precision(b) && skv_format_emin(a) == skv_format_emin(b) &&
			  skv_format_emax(a) == skv_format_emax(b));
}

/* The tensor-core path's requirements (skv.h, skv_config.gpu). */
static int gpu_ok(const skv_config *c)
{
	if (c->gpu == SKV_GPU_IEEE)
		return 1;
	skv_mma_unit u;
	unsigned k;
	if ((unsigned)c->gpu >= SKV_NGPUS || skv_mma_unit_init(&u, (skv_gpu)c->gpu, c->input, c->compute) != SKV_OK ||
	    skv_mma_tile(&k, NULL, (skv_gpu)c->gpu, c->input) != SKV_OK)
		return 0;
	return same_values(c->p, c->input) && c->acc == 0 && c->formula != SKV_FORMULA_QSCALE &&
	       c->formula != SKV_FORMULA_VLLM;
}

int skv_config_check(const skv_config *c)
{
	if (!c)
		return SKV_EINVAL;
	const skv_format fs[] = {c->input, c->partial, c->compute, c->p, c->lse, c->combine, c->output};
	for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
		if ((unsigned)fs[i] >= SKV_NFORMATS || skv_format_is_scale(fs[i]))
			return SKV_EINVAL; /* a scale format (e8m0, ue4m3) holds no signed value */
	if ((unsigned)c->base >= SKV_NBASES || (unsigned)c->blocks >= SKV_NBLOCKS ||
	    (unsigned)c->formula >= SKV_NFORMULAS || (unsigned)c->math >= SKV_NMATHS)
		return SKV_EINVAL;
	if (c->acc && (c->acc < 0 || c->acc > SKV_NFORMATS || skv_format_is_scale((skv_format)(c->acc - 1))))
		return SKV_EINVAL;
	if (c->lanes > 1024 || (c->lanes & (c->lanes - 1)) != 0 || c->lane_keys > 1024)
		return SKV_EINVAL;
	int b = skv_formula_base(c->formula);
	if (b >= 0 && b != (int)c->base)
		return SKV_EINVAL;
	return gpu_ok(c) ? SKV_OK : SKV_EINVAL;
}

static const char *const blocks_names[SKV_NBLOCKS] = {"forward", "reverse"};

const char *skv_blocks_name(skv_blocks b) { return (unsigned)b < SKV_NBLOCKS ? blocks_names[b] : NULL; }

int skv_blocks_parse(skv_blocks *b, const char *name)
{
	for (unsigned i = 0; b && name && i < SKV_NBLOCKS; i++)
		if (strcmp(blocks_names[i], name) == 0) {
			*b = (skv_blocks)i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

/* One name per base, indexed by value, so names and parsing cannot drift. */
static const char *const base_names[SKV_NBASES] = {"e", "2", "e2"};

const char *skv_lse_base_name(skv_lse_base b) { return (unsigned)b < SKV_NBASES ? base_names[b] : NULL; }

int skv_lse_base_parse(skv_lse_base *b, const char *name)
{
	for (unsigned i = 0; b && name && i < SKV_NBASES; i++)
		if (strcmp(base_names[i], name) == 0) {
			*b = (skv_lse_base)i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}
