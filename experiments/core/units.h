/* units.h - work units: a run's instances (one problem, its exact truth and every row measured on it) with their costs and rows; shards; rows gathered unit by unit; journal records. */
#ifndef CORE_UNITS_H
#define CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/*
 * A work unit is one instance of a spec's sweep (sweep.c): the rows equal
 * in every PROBLEM parameter and in their trial, which share one problem
 * and its exact truth, with every kernel run and row measured on it. No
 * unit reads another's work, so any set of units computed anywhere, in any
 * order, gives the rows a whole run gives, bit for bit. Units are numbered
 * by the sweep's instance numbering (key order): the numbering depends on
 * the spec alone, never on the worker count or on timing.
 */

/* A spec's sweep, planned (rows numbered, sharing built) and not yet run. */
typedef struct unit_plan unit_plan;

typedef struct {
	double work;        /* estimated cost in work units (progress.c); unit_seconds converts */
	double work_truth;  /* of it, drawing the problem and its exact truth (one thread's, per query row) */
	size_t nrows;       /* rows measured on it */
	size_t truth_calls; /* skv_truth_range calls it makes */
	size_t kernel_runs; /* skv_split_kernel calls it makes */
} unit_info;

/* Plans checked spec s (kept by pointer: it must outlive the plan). SKV_ENOMEM with a message. */
int unit_plan_open(unit_plan **p, const run_spec *s, message *e);
void unit_plan_close(unit_plan *p);
size_t unit_count(const unit_plan *p);
/* The OpenMP threads the plan runs on (--threads, or the OpenMP default). */
int unit_plan_threads(const unit_plan *p);
void unit_describe(unit_info *u, const unit_plan *p, size_t unit);
/* The rows of a unit: *n row numbers, increasing. */
const size_t *unit_rows(const unit_plan *p, size_t unit, size_t *n);

/* Called once per finished unit, in the order given to unit_plan_run:
 * rows is the plan's row array (by row number), busy_s the seconds its
 * items took (summed over threads). Another status than SKV_OK stops the run. */
typedef int (*unit_done_fn)(void *ctx, const unit_plan *p, size_t unit, const sweep_row *rows, double busy_s,
			    message *e);
/* Measures units[0..n) (distinct, each < unit_count) in chunks of at most
 * chunk_max units (0: the memory bound alone). A failure's status with its message. */
int unit_plan_run(unit_plan *p, const size_t *units, size_t n, size_t chunk_max, unit_done_fn done, void *ctx,
		  message *e);

/* Seconds of one thread that `work` units take (the estimate's constant). */
double unit_seconds(double work);

/* shard[i] in 0..nshards-1 for units i of n with costs work[i]: the
 * longest-processing-time rule (largest first, each to the least loaded
 * shard, ties to the lower index), so every shard holds about a 1/nshards
 * share of the cost (within the largest unit). Depends on the costs and
 * nshards only. SKV_ENOMEM. */
int unit_partition(unsigned *shard, const double *work, size_t n, unsigned nshards);
/* idx[0..n) (indices into work) ordered by work, largest first, ties to
 * the lower index: the order the shards and skv-mpi's schedule take units
 * in. SKV_ENOMEM, idx unchanged. */
int unit_by_work(size_t *idx, size_t n, const double *work);

/* ------------------------------------------------------------ gathering */

/* A spec's rows gathered unit by unit (computed here, read from a journal
 * or a shard, received from a rank); complete when every unit is in. */
typedef struct {
	sweep_row *rows; /* [nrows]: spec, point and trial set; values as gathered */
	size_t nrows;
	unsigned char *have; /* [nunits] */
	size_t nunits, nhave;
	size_t truth_calls, kernel_runs;
	double busy_s;
} unit_set;

int unit_set_init(unit_set *c, const unit_plan *p);
void unit_set_free(unit_set *c);
/* The result of a complete set, as sweep_run gives it (wall_s, threads:
 * the caller's); the rows move into r. */
void unit_set_result(sweep_result *r, unit_set *c, const unit_plan *p, double wall_s);

/* --------------------------------------------------------------- records */

/* A unit's record (framed, journal.h): suite line `line`, the unit, its
 * rows' exact values; *rec malloc'd. SKV_ENOMEM. */
int unit_record(unsigned char **rec, size_t *len, const unit_plan *p, uint64_t line, size_t unit,
		const sweep_row *rows, double busy_s);
/* The suite line and unit a unit record's payload names. SKV_EINVAL when too short. */
int unit_record_line(uint64_t *line, uint64_t *unit, const unsigned char *payload, size_t n);
/* Adds the rows of a unit record's payload to c, after checking them
 * against p (the unit exists, its row numbers and counts are p's, the
 * states are known). SKV_EINVAL with a message ("unit U: ...") for a record
 * that is not p's or a unit already in c. */
int unit_record_add(unit_set *c, const unit_plan *p, const unsigned char *payload, size_t n, message *e);

#endif
