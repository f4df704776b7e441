/* catalog.h - the registry of experiments: their order (the suite's and REPORT.md's), lookup by name, findings. */
#ifndef CATALOG_CATALOG_H
#define CATALOG_CATALOG_H

#include "catalog/experiment.h"
#include "core/core.h"

/* Every experiment, in the order of experiments/default.suite and of the
 * sections of REPORT.md (a test checks the suite against it). */
extern const experiment *const experiments[];
extern const size_t nexperiments;
/* The experiment named `name`, NULL if none. */
const experiment *experiment_find(const char *name);
/* What an experiment the catalog does not know gets in a report: the
 * generic chart and findings (no introduction). */
extern const experiment exp_generic;
/* The experiment's place in the registry (nexperiments for an unknown one). */
size_t experiment_rank(const char *name);
/* spec_init for the experiment named `name`; an unknown name is a usage
 * error whose message lists the experiments. */
int catalog_spec_init(run_spec *s, const char *name, message *e);
/* The findings of the experiment that r is (by its name), the generic ones
 * for an unknown experiment. */
int catalog_narrate(FILE *f, const results *r, message *e);

/* Every preset without a quantized KV cache, in the library's order: the
 * systems and empty-splits experiments compare the kernels' merges on one
 * cache, the input format; the presets that store K and V in a narrow
 * format (vllm-fp8kv, flashinfer-fp8kv, sglang-fp4kv) are the kv-cache
 * experiment's. A test checks the list against the library's presets. */
#define NO_KV_PRESETS                                                                                      \
	"fa2,fa3,flashinfer,tilelang,xformers,sglang,flex,exact-fp64,naive-fp16,vllm-v2,vllm-unified,"    \
	"llamacpp-cpu,llamacpp-cuda,sglang-gqa,flashinfer-pre4401,fa3-fp8"

#endif
