/* chart.h - the aggregated data file a chart's gnuplot script reads, written from an experiment's results. */
#ifndef REPORT_CHART_H
#define REPORT_CHART_H

#include <stddef.h>
#include <stdio.h>

#include "catalog/experiment.h"
#include "results/results.h"

/* Writes the gnuplot data file of chart c for results r: variables (title,
 * fixed parameters, panel and series names, colours, axis hints) and the
 * datablock $data, one block per (panel, series). Its first lines document
 * the format. SKV_EINVAL with "file:line: what" in e when a swept value is
 * not a number; SKV_EIO when writing fails. */
int chart_write_data(FILE *f, const results *r, const chart_spec *c, message *e);

#endif
