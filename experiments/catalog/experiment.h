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
	CHART_BARS,  /* median bar and min-max error bar per category */
	CHART_HEATMAP /* the median as a colour: x across, one row per curve
	               * (the combination of the other varying parameters) */
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

/* Every split count from 1 to 64, then the larger powers of two to 1024:
 * the error with a 16-bit LSE jumps between neighbouring counts (where the
 * split LSEs fall on the format's grid moves with ln(ctx / S)), so the
 * sweeps that show it leave no count out. */
#define CATALOG_DENSE_SPLITS \
	"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32," \
	"33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64," \
	"128,256,512,1024"

/* Everything about one experiment, in its own file (catalog/NAME.c). */
typedef struct {
	exp_def def;       /* what the core runs: name, kind, summary, defaults, why */
	const char *about; /* REPORT.md's introduction of it */
	chart_spec chart;  /* how skv report draws it */
	narrator narrate;  /* its findings */
} experiment;

#endif
