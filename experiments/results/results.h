/* results.h - an experiment's CSV read by column name into parameter points with per-trial metrics. */
#ifndef SKV_RESULTS_H
#define SKV_RESULTS_H

#include <stddef.h>

#include "io/csv.h"
#include "core/stats.h"

/* The rows of one EXPERIMENT.csv grouped into points. A metric column is one
 * whose name ends in "_err" (max_abs_err, norm_rel_err, ulp_err, ...); an
 * outcome column one whose name ends in "_state" (out_state: finite, nan);
 * the column "trial" numbers the trials; every other column is a parameter.
 * Rows with the same parameters are the trials of one point. Points are
 * numbered in the order of their first row, which is the order of the sweep. */
typedef struct {
	char *name;            /* the experiment: the CSV file name without .csv */
	csv_table csv;
	size_t nmetric;
	size_t *metric_col;    /* [nmetric] CSV column of each metric */
	double *value;         /* [nrows][nmetric] */
	size_t trial_col;
	unsigned char *param;  /* [ncols] 1 for a parameter column */
	unsigned char *varies; /* [ncols] 1 when the column holds two different values */
	size_t npoints;
	size_t *point_row;     /* [npoints] first row of each point */
	size_t *row_point;     /* [nrows] point of each row */
	size_t *point_start;   /* [npoints + 1] the rows of point p are */
	size_t *point_rows;    /* point_rows[point_start[p] .. point_start[p+1]), by trial */
	stat_summary *stat;        /* [npoints][nmetric] */
} results;

/* Builds the results from a parsed CSV, which it takes over (also on
 * failure, when it frees it). The CSV needs the columns "trial" (a
 * nonnegative integer) and "norm_rel_err", plus every column named in
 * required[0..nrequired), and at least one data row; every metric field must
 * be an error value as skv writes it (a decimal number >= 0, inf or nan). On error: SKV_EINVAL with "file:line:
 * what" in e (line 1 for a missing column), or SKV_ENOMEM; *r untouched. */
int results_from_csv(results *r, csv_table *csv, const char *name, const char *const *required,
			 size_t nrequired, message *e);

/* Reads the file at path (EXPERIMENT.csv) and builds its results; messages
 * name it `shown` (NULL: path). Metrics must be errors as skv writes them:
 * numbers >= 0, inf or nan. */
int results_load(results *r, const char *path, const char *shown, const char *const *required,
		     size_t nrequired, message *e);

void results_free(results *r);

/* Index of the metric named `name`: SKV_OK or SKV_EINVAL. */
int results_metric(const results *r, const char *name, size_t *m);
/* Summary of metric m over the trials of point p; NULL when out of range. */
const stat_summary *results_stat(const results *r, size_t p, size_t m);
/* Value of column `col` at point p (from its first row); NULL when there is
 * no such column or point. */
const char *results_get(const results *r, size_t p, const char *col);
/* Whether column `col` exists and takes more than one value. */
int results_varies(const results *r, const char *col);
/* Column `col` of point p as a number: SKV_OK, or SKV_EINVAL with "file:line:
 * column 'col': 'text' is not a number" in e. */
int results_number(double *x, const results *r, size_t p, const char *col, message *e);

#endif
