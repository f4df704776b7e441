/* mpi_run.h - skv-mpi's parts: the scheduler of work units (largest first, one spec's batch per request), a rank's worker, the messages between ranks. */
#ifndef MPI_MPI_RUN_H
#define MPI_MPI_RUN_H

#include <pthread.h>
#include <stddef.h>

#include "cli/shard.h"

/*
 * Rank 0 holds the schedule, the journal and the gathered rows; it also
 * computes, on a thread of its own, while its main thread (the only one
 * that calls MPI) serves the others. A worker asks (TAG_REQ, its thread
 * count), gets a batch (TAG_WORK: suite unit numbers, none meaning stop),
 * sends one record per finished unit (TAG_REC: the journal record's very
 * bytes) and asks again; a failure is sent as its message (TAG_FAIL).
 */
enum { TAG_REQ = 1, TAG_WORK = 2, TAG_REC = 3, TAG_FAIL = 4 };

/* The units left, per spec largest first (ties: lower number first). */
typedef struct {
	pthread_mutex_t mu;
	const suite_units *u;
	size_t **list, *len, *pos; /* [nspecs] */
	size_t left;
	int nranks;
} mpi_sched;

/* Every unit of u not marked in done. SKV_ENOMEM. */
int sched_init(mpi_sched *s, const suite_units *u, const unsigned char *done, int nranks);
/* The next batch into out (room for `threads`): units of one spec, the spec
 * whose next unit is the largest left; `threads` of them while plenty are
 * left, fewer near the end (guided: left / ranks), so the last units
 * spread over the ranks. 0 when none is left. Thread-safe. */
size_t sched_next(mpi_sched *s, size_t *out, size_t threads);
void sched_free(mpi_sched *s);

/* A finished unit's record for the rank's sink (which takes rec). */
typedef int (*rec_sink)(void *ctx, unsigned char *rec, size_t len, message *e);

/* A rank's computation: plans opened as needed (rank 0: all at once, before
 * its threads start), busy seconds counted. */
typedef struct {
	const run_spec *specs;
	const suite_units *u;
	unit_plan **plans; /* [nspecs] */
	double busy_s;
	rec_sink sink;
	void *ctx;
} mpi_worker;

int worker_init(mpi_worker *w, const run_spec *specs, const suite_units *u, rec_sink sink, void *ctx, message *e);
/* Opens spec k's plan if it is not open. */
int worker_plan(mpi_worker *w, size_t k, message *e);
/* Measures suite units g[0..n) (one spec's), each record to the sink. */
int worker_batch(mpi_worker *w, const size_t *g, size_t n, message *e);
void worker_free(mpi_worker *w);

#endif
