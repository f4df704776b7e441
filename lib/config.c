/* config.c - precision configurations and the names of merges, orders and empty-split policies. */
#include <string.h>
#include "skv.h"

skv_config skv_config_uniform(skv_format f)
{
	skv_config c = {f, f, f, f, f, f, f, SKV_BASE_E};
	return c;
}

int skv_config_check(const skv_config *c)
{
	if (!c)
		return SKV_EINVAL;
	const skv_format fs[] = {c->input, c->partial, c->compute, c->p, c->lse, c->combine, c->output};
	for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
		if ((unsigned)fs[i] >= SKV_NFORMATS || skv_format_is_scale(fs[i]))
			return SKV_EINVAL; /* a scale format (e8m0, ue4m3) holds no signed value */
	if ((unsigned)c->base >= SKV_NBASES)
		return SKV_EINVAL;
	return SKV_OK;
}

/* One table per enum, indexed by value, so names and parsing cannot drift. */
static const char *const merge_names[SKV_NMERGES] = {"onepass", "pairwise", "mean", "sum", "flex"};
static const char *const order_names[SKV_NORDERS] = {"seq", "rev", "tree", "random", "asc", "desc", "strided"};
static const char *const empty_names[SKV_NEMPTY] = {"guard", "fa2", "fa3", "none"};
static const char *const base_names[SKV_NBASES] = {"e", "2", "e2"};

static const char *name_of(const char *const *tab, unsigned n, unsigned v) { return v < n ? tab[v] : NULL; }

static int parse_in(unsigned *v, const char *const *tab, unsigned n, const char *name)
{
	if (!name)
		return SKV_EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (strcmp(tab[i], name) == 0) {
			*v = i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

const char *skv_merge_name(skv_merge m) { return name_of(merge_names, SKV_NMERGES, (unsigned)m); }
const char *skv_order_name(skv_order o) { return name_of(order_names, SKV_NORDERS, (unsigned)o); }
const char *skv_empty_name(skv_empty e) { return name_of(empty_names, SKV_NEMPTY, (unsigned)e); }
const char *skv_lse_base_name(skv_lse_base b) { return name_of(base_names, SKV_NBASES, (unsigned)b); }

int skv_lse_base_parse(skv_lse_base *b, const char *name)
{
	unsigned v;
	int st = parse_in(&v, base_names, SKV_NBASES, name);
	if (st == SKV_OK && b)
		*b = (skv_lse_base)v;
	return b ? st : SKV_EINVAL;
}

int skv_merge_parse(skv_merge *m, const char *name)
{
	unsigned v;
	int st = parse_in(&v, merge_names, SKV_NMERGES, name);
	if (st == SKV_OK && m)
		*m = (skv_merge)v;
	return m ? st : SKV_EINVAL;
}

int skv_order_parse(skv_order *o, const char *name)
{
	unsigned v;
	int st = parse_in(&v, order_names, SKV_NORDERS, name);
	if (st == SKV_OK && o)
		*o = (skv_order)v;
	return o ? st : SKV_EINVAL;
}

int skv_empty_parse(skv_empty *e, const char *name)
{
	unsigned v;
	int st = parse_in(&v, empty_names, SKV_NEMPTY, name);
	if (st == SKV_OK && e)
		*e = (skv_empty)v;
	return e ? st : SKV_EINVAL;
}

skv_merge_spec skv_merge_spec_default(void)
{
	skv_merge_spec s = {SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 0, 1, SKV_EMPTY_GUARD, 0};
	return s;
}
