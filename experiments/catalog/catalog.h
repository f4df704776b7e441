/* catalog.h - the named experiments: each a set of defaults over the one parameter space, found by name. */
#ifndef CATALOG_CATALOG_H
#define CATALOG_CATALOG_H

#include "core/core.h"

extern const exp_def experiments[];
extern const size_t nexperiments;
/* The experiment named `name`, NULL if none. */
const exp_def *experiment_find(const char *name);
/* spec_init for the experiment named `name`; an unknown name is a usage
 * error whose message lists the experiments. */
int catalog_spec_init(run_spec *s, const char *name, message *e);

#endif
