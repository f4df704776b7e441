/* report_internal.h - internal to the report layer: the job of `skv report DIR`, its files written aside and renamed together, its reading, charts and page. */
#ifndef REPORT_REPORT_INTERNAL_H
#define REPORT_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "catalog/catalog.h"
#include "io/io.h"
#include "results/results.h"

/* One experiment of the folder. */
typedef struct {
	char *name;           /* EXPERIMENT */
	char *csv;            /* DIR/EXPERIMENT.csv */
	results r;
	const experiment *exp; /* its catalog entry (exp_generic when unknown) */
	const chart_spec *chart;
	char *md, *meta;      /* DIR/EXPERIMENT.md and .meta, NULL when absent */
	char *findings;       /* Markdown from the experiment's narrator */
	size_t findings_len;
} section;

/* A file written under a temporary name, renamed when everything worked. */
typedef struct {
	char *tmp, *final;
} pending;

typedef struct {
	const char *dir;  /* where the files are */
	const char *name; /* the folder as the report and its messages name it */
	FILE *msg;
	section *s;       /* in the registry's order (report_list_csv) */
	size_t n;
	pending *p;
	size_t np;
	char gnuplot[4096], scripts[4096];
} job;

/* "dir/nameext" (no doubled slash), malloc'd; NULL when out of memory. */
char *report_path(const char *dir, const char *name, const char *ext);

/* ------------------------------------- report_files.c: written aside */

/* Creates an empty temporary next to final (hidden, unique, registered for
 * removal on a signal) and records it for the final rename; its name in
 * *tmp. SKV_EIO (said on j->msg), SKV_ENOMEM. */
int report_pending_new(job *j, const char *final, char **tmp);
/* Writes len bytes to a new pending file for `final`. */
int report_pending_write(job *j, const char *final, const char *data, size_t len);
/* Renames the pending files first..np into place together (on disk, with
 * no signal between the renames), or, when !ok, removes them. */
int report_pending_commit(job *j, size_t first, int ok);

/* ------------------------------------- report_read.c: reading, checks */

/* Finds the CSV files of DIR (regular, not hidden) in suite order. */
int report_list_csv(job *j);
/* Reads and checks every CSV with its .md and .meta, and computes every
 * finding, before anything is written: a malformed file stops the report
 * with its file and line. */
int report_read_all(job *j);
/* The value of "key: value" in a .meta file: a view into the text (its
 * length in *n; it ends at the line's end), NULL if absent. A view, not a
 * copy: a value is never cut, however long (a seed list, a command). */
const char *report_meta_view(const char *meta, const char *key, size_t *n);
/* Says what failed (e's text, else the status's) on j->msg, frees e and
 * returns rc. */
int report_fail(job *j, int rc, message *e);

/* ------------------------------------- report_summary.c: first screen */

/* REPORT.md's summary: the key conclusions (each computed from the CSVs of
 * the experiments that back it, left out when one is absent) and the
 * decision table per system preset. Nothing when none of them ran. */
int report_write_summary(FILE *f, const job *j);

/* ------------------------------------- report_page.c: REPORT.md */

/* Writes REPORT.md (pending): the summary, one section per experiment,
 * then what was run and how to rerun it. */
int report_write_page(job *j);

#endif
