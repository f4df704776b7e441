/* registry.c - the experiments in their order: each defined in its own file (catalog/NAME.c); lookup by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"

extern const experiment exp_split_count, exp_lse_magnitude, exp_lse_grid, exp_reduction_order, exp_merge_rule,
	exp_uneven_splits, exp_block_size, exp_systems, exp_approx_math, exp_empty_splits, exp_kv_cache,
	exp_tensor_cores, exp_tensor_cores_fp8;

/* A new experiment is one file and one line here. */
const experiment *const experiments[] = {
	&exp_split_count, &exp_lse_magnitude, &exp_lse_grid, &exp_reduction_order, &exp_merge_rule,
	&exp_uneven_splits, &exp_block_size, &exp_systems, &exp_approx_math, &exp_empty_splits, &exp_kv_cache,
	&exp_tensor_cores, &exp_tensor_cores_fp8,
};
const size_t nexperiments = sizeof experiments / sizeof experiments[0];

const experiment exp_generic = {
	{"generic", KIND_SPLIT, "an experiment this version of skv report has no chart or findings of its own for", "", ""},
	NULL,
	{"generic", CHART_BARS, NULL, NULL, "norm_rel_err", "median error at each parameter point", NULL},
	narr_generic,
};

size_t experiment_rank(const char *name)
{
	for (size_t i = 0; name && i < nexperiments; i++)
		if (strcmp(experiments[i]->def.name, name) == 0)
			return i;
	return nexperiments;
}

const experiment *experiment_find(const char *name)
{
	size_t i = experiment_rank(name);
	return i < nexperiments ? experiments[i] : NULL;
}

int catalog_spec_init(run_spec *s, const char *name, message *e)
{
	const experiment *x = experiment_find(name);
	if (x)
		return spec_init(s, &x->def, e);
	char *names = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&names, &len);
	for (size_t i = 0; f && i < nexperiments; i++)
		fprintf(f, "%s%s", i ? ", " : "", experiments[i]->def.name);
	if (f)
		fclose(f);
	msg_set(e, "skv: unknown experiment '%s' (expected %s)", name, names ? names : "");
	free(names);
	return SKV_EINVAL;
}

int catalog_narrate(FILE *f, const results *r, message *e)
{
	if (!f || !r)
		return SKV_EINVAL;
	msg_free(e);
	const experiment *x = experiment_find(r->name);
	narrator write = x ? x->narrate : narr_generic;
	int rc = write(f, r, e);
	/* A known experiment whose CSV lacks what its findings need (a systems
	 * table without presets) still gets the generic findings. */
	if (rc == SKV_EINVAL && write != narr_generic && !*msg_text(e))
		rc = narr_generic(f, r, e);
	if (!rc)
		fputc('\n', f);
	return rc ? rc : ferror(f) ? SKV_EIO : SKV_OK;
}
