/* chart.h - which chart each experiment gets, and the aggregated data file its gnuplot script reads. */
#ifndef CHART_H
#define CHART_H

#include <stddef.h>
#include <stdio.h>

#include "results/results.h"

typedef enum {
	CHART_LINES, /* median against a numeric swept column, min-max band */
	CHART_BOXES, /* quartile box and min-max whiskers per category */
	CHART_BARS   /* median bar and min-max error bar per category */
} chart_kind;

/* One chart kind applied to one experiment. The curves (series) are the
 * combinations of the varying parameters other than x and panel. */
typedef struct {
	const char *experiment; /* NULL: the generic chart of an unknown experiment */
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

/* The chart of an experiment, the generic one for an unknown name. */
const chart_spec *chart_for(const char *experiment);

/* Writes the gnuplot data file of chart c for results r: variables (title,
 * fixed parameters, panel and series names, colours, axis hints) and the
 * datablock $data, one block per (panel, series). Its first lines document
 * the format. SKV_EINVAL with "file:line: what" in err when a swept value is
 * not a number; SKV_EIO when writing fails. */
int chart_write_data(FILE *f, const results *r, const chart_spec *c, char *err, size_t errlen);

#endif
