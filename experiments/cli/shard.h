/* shard.h - runs made of work units: a suite's units and their costs, shards of it, journals to resume from, merging shards, the files of a run gathered unit by unit. */
#ifndef CLI_SHARD_H
#define CLI_SHARD_H

#include <stdio.h>

#include "core/core.h"
#include "core/journal.h"
#include "core/units.h"

/* How a suite (or one skv run) is run. */
typedef struct shard_mode_s {
	unsigned k, n;   /* shard k of n (1 <= k <= n); n == 0: the whole run */
	int resume;      /* continue from the journal of an interrupted run */
	int estimate;    /* print the estimate only, run nothing */
	const char *source_name; /* the suite file's name ("skv run" for one run) */
	const char *source;      /* its text as read: the journal keeps it, merge reads it back */
	size_t source_len;
	char **args;     /* the suite-wide --PARAM=V flags given after the file */
	int nargs;
	const char *shard_dir; /* a shard's folder (its --out: each line keeps its own folder) */
} shard_mode;

/* Parses the value of --shard=K/N. SKV_EINVAL with a message naming it. */
int shard_parse(shard_mode *m, const char *value, message *e);
/* --resume, --estimate, --shard=K/N (or --shard K/N) at argv[*i] into m
 * (*i past a separate value): 1 when it was one of them, 0 when not, -1
 * for a bad --shard (the message in e). */
int shard_mode_flag(shard_mode *m, int argc, char **argv, int *i, message *e);
/* skv run's arguments argv[0..argc) (argv[0] the experiment): --shard,
 * --resume and --estimate into m, the others into rest[0..*nrest) (room
 * for argc), and the run as a suite line into *source (malloc'd; m points
 * to it), --out left out. SKV_EINVAL with a message. */
int shard_run_args(shard_mode *m, char **source, char **rest, int *nrest, int argc, char **argv, message *e);

/* The units of a suite: spec k's are g = unit0[k] .. unit0[k+1]-1, unit
 * g - unit0[k] of its plan; identity: the text that says which run a
 * journal belongs to (version, shard count, units, each spec's flags). */
typedef struct {
	size_t nspecs, nunits;
	size_t *unit0;
	double *work, *work_truth; /* [nunits]: unit_info's */
	char *identity;
} suite_units;

int suite_units_plan(suite_units *u, const run_spec *specs, size_t n, unsigned nshards, message *e);
void suite_units_free(suite_units *u);
/* The spec of suite unit g (its unit within the spec in *unit). */
size_t suite_units_spec(const suite_units *u, size_t g, size_t *unit);

/* A journal's header, parsed (pointers into the record). */
typedef struct {
	const char *identity;
	size_t identity_len;
	unsigned k, n;
	char *source_name;
	char **args;
	int nargs;
	char *source;
	size_t source_len;
} shard_header;

int shard_header_parse(shard_header *h, const unsigned char *p, size_t n);
void shard_header_free(shard_header *h);

/* Starts the journal at path: with m->resume an existing one is read and
 * continued (its records in *old: the units done), after checking that it
 * is this run's; else a new one replaces it. SKV_EINVAL with a message
 * for a foreign or corrupt journal. */
int shard_journal_start(journal *j, journal_file *old, const char *path, const suite_units *u, const shard_mode *m,
			message *e);
/* Why journal header h is not the run of identity[0..len) (a one-line
 * reason, in buf), or NULL. */
const char *shard_foreign(char *buf, size_t n, const shard_header *h, const char *identity, size_t len);

/* The estimate before a run: the units and CPU time of the suite and of
 * each shard of m->n (every one when m->n > 0). */
void shard_estimate(FILE *f, const suite_units *u, const unsigned *shard, const shard_mode *m, int threads);
/* --estimate's detail: each spec's units, their estimated seconds (those
 * of the problems and truths, one thread each, apart), its largest unit. */
void shard_estimate_lines(FILE *f, const suite_units *u, const run_spec *specs);
/* Seconds as a short text ("12.3 s", "4.2 min", "3.1 h"). */
void shard_time(char *buf, size_t n, double s);

/* A run's journals: one per output folder (a shard's: its shard folder). */
typedef struct {
	char *dir, *key, *path;
	journal j;
	journal_file old; /* what a resumed journal held */
} folder_journal;

typedef struct {
	folder_journal *fj;
	size_t nfj, nspecs;
	size_t *spec_fj; /* [nspecs] the journal of each spec */
} journal_set;

/* Starts (m->resume: continues) the journal of every spec's folder, or the
 * shard folder's, and marks done[g] for each unit a resumed one holds; a
 * record of no unit of this run (shard: of this shard, shard[] given) is
 * refused. The folders are prepared and locked by the caller. */
int jset_start(journal_set *s, const run_spec *specs, size_t n, const suite_units *u, const shard_mode *m,
	       const unsigned *shard, unsigned char *done, message *e);
journal *jset_journal(journal_set *s, size_t k);
const char *jset_path(const journal_set *s, size_t k);
/* The units of spec k that its resumed journal holds, into c. */
int jset_gather(const journal_set *s, size_t k, unit_set *c, const unit_plan *p, message *e);
/* The end of a run: closed, then removed (a whole run's), or published as
 * the shard's file (*published, malloc'd). */
int jset_finish(journal_set *s, const shard_mode *m, char **published, message *e);
void jset_free(journal_set *s);

/* Writes spec s's files from the complete set c (planned by p) and prints
 * the summary line. */
int shard_write(const run_spec *s, unit_set *c, const unit_plan *p, double wall_s, const char *command, message *e);

/* The units of specs[0..n) (checked; --out prepared and locked by the
 * caller) run as m says: the whole run journalled and written, or shard
 * k of n journalled into its folder and published as shard-K-of-N.journal. */
int shard_execute(const run_spec *specs, size_t n, const shard_mode *m, const char *command, message *e);

/* `skv merge OUT SHARD_DIR...` (argv after "merge"). */
int merge_main(int argc, char **argv, const char *command);

/* The journal of a folder, and a finished shard's file in it. */
#define SHARD_JOURNAL ".skv.journal"
int shard_file_name(char **path, const char *dir, unsigned k, unsigned n);

#endif
