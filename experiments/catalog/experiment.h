/* experiment.h - what an experiment is: what the core runs, and how the report introduces, draws and narrates it. */
#ifndef CATALOG_EXPERIMENT_H
#define CATALOG_EXPERIMENT_H

#include <stddef.h>
#include <stdio.h>

#include "core/core.h"
#include "results/results.h"

typedef enum {
	CHART_LINES, /* median against a numeric swept column, min-max band */
	CHART_BOXES, /* quartile box and min-max whiskers per category */
	CHART_BARS   /* median bar and min-max error bar per category */
} chart_kind;

/* One chart kind applied to one experiment. The curves (series) are the
 * combinations of the varying parameters other than x and panel. */
typedef struct {
	const char *script;     /* scripts/SCRIPT.gp draws it */
	chart_kind kind;
	const char *x;          /* swept (lines) or category column; NULL: each
	                         * point is its own category */
	const char *panel;      /* one panel per value of this column when it
	                         * varies; NULL: one panel */
	const char *metric;     /* the metric drawn */
	const char *title;      /* what the chart shows, after "EXPERIMENT: " */
	const char *offscale;   /* a preset left out of the y range (exact-fp64,
	                         * 12 decades below the production kernels, whose
	                         * differences it would flatten); the chart says
	                         * where it lies. NULL: none */
} chart_spec;

/* Writes an experiment's findings for REPORT.md: two or three sentences
 * and sometimes a small table, every number computed from r. SKV_EINVAL
 * with "file:line: what" in e when a column it needs holds something
 * that is not a number; SKV_ENOMEM; SKV_EIO when writing fails. */
typedef int (*narrator)(FILE *f, const results *r, message *e);

/* Everything about one experiment, in its own file (catalog/NAME.c). */
typedef struct {
	exp_def def;       /* what the core runs: name, kind, summary, defaults, why */
	const char *about; /* REPORT.md's introduction of it */
	chart_spec chart;  /* how skv report draws it */
	narrator narrate;  /* its findings */
} experiment;

#endif
