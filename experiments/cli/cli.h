/* cli.h - the command line: the commands, the files of a run, and skv recommend's parsing and printing. */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stdio.h>

#include "catalog/catalog.h"
#include "core/core.h"
#include "core/recommend.h"
#include "io/io.h"

/* ----------------------------------------------------------------- output */

/* Size and FNV-1a 64 checksum of a file (csv_fnv1a64), as the .meta
 * records them. */
typedef struct {
	size_t bytes;
	uint64_t fnv;
} file_sum;

int output_csv(FILE *f, const run_spec *s, const sweep_result *r);
int output_md(FILE *f, const run_spec *s, const sweep_result *r);
/* sums: the CSV's and the .md's (NULL: not recorded). */
int output_meta(FILE *f, const run_spec *s, const sweep_result *r, const char *command,
		       const file_sum *sums);
/* The run's seeds, the whole list, comma-separated. */
void spec_seed_list(FILE *f, const run_spec *s);
/* Writes DIR/EXPERIMENT.{csv,md,meta} through temporary names and renames
 * them into place only once all three are complete. */
int output_write(const run_spec *s, const sweep_result *r, const char *command,
			  message *e);

/* --------------------------------------------------------------- commands */

/* `skv list` (argv[0] == "list"): the experiments, the presets or one
 * preset, on out. SKV_EINVAL with a message for a bad argument. */
int list_main(int argc, char **argv, FILE *out, message *e);

/* The whole program: argv as main receives it. Returns the exit status. */
int cli_main(int argc, char **argv);
/* `skv suite FILE [--flags] [--out=DIR] [--report]` (argv after "suite"). */
int suite_main(int argc, char **argv, const char *command);
/* Parses and checks a suite's text (modified in place: lines are cut at
 * their ends) with the command-line flags argv[0..argc) that follow the
 * file, running nothing; *nspecs gets the number of runs. An exit status
 * with a message in e. */
int suite_parse(size_t *nspecs, const char *file, char *text, size_t len, int argc, char **argv,
			message *e);
/* The same, keeping the checked specs: *specs[0..*n) (spec_free each, then
 * free the array); the flags --shard, --resume and --estimate go to *mode
 * and --report to *report (either may be NULL). */
struct shard_mode_s;
int suite_load(run_spec **specs, size_t *n, struct shard_mode_s *mode, int *report, const char *file, char *text,
	       size_t len, int argc, char **argv, message *e);
/* A suite file's text: a regular file of at most 16 MiB, read whole;
 * *text malloc'd and NUL-terminated. SKV_EIO with a message. */
int suite_read(char **text, size_t *len, const char *file, message *e);
/* The exit status of a command whose work returned `status`: 0 for SKV_OK,
 * 2 for a request that is itself wrong (SKV_EINVAL, SKV_ERANGE: a flag, a
 * value, a file that cannot be what was asked), 1 when running it failed
 * (SKV_EIO, SKV_ENOMEM). The one place statuses become exit statuses:
 * below the command line every function returns a status and a message. */
int cli_exit_status(int status);
/* Prints e's message on stderr, frees it, returns cli_exit_status(st). */
int cli_fail(message *e, int st);
/* The program computes on several threads and so needs an MPFR built with
 * thread-local storage: SKV_OK when thread_safe (skv_mpfr_thread_safe()),
 * else SKV_EIO with a message naming the MPFR version and the fix. cli_main
 * refuses to start without it. */
int cli_mpfr_check(int thread_safe, message *e);

/* The command line as one string (malloc'd; NULL when out of memory), each
 * argument quoted for the shell when it holds anything but plain characters. */
char *cli_join_args(int argc, char **argv);
/* Prints text word-wrapped to `width` columns, every line after the first
 * indented by `indent` spaces (the first starts at column `col`). */
void cli_wrap(FILE *f, const char *text, int col, int indent, int width);
/* Numbers as the commands print them (cli/numfmt.c): %.3g for text, %.17g
 * for CSV (reads back to the same double), null in JSON for what it cannot
 * hold; non-finite values as nan, inf, -inf. cli_num3 returns buf. */
const char *cli_num3(char *buf, size_t n, double x);
void cli_csv_num(FILE *f, double x);
void cli_json_num(FILE *f, double x);
/* Every parameter of s's experiment (s NULL: all) with its help, default
 * (s's value) and allowed values. */
void cli_param_help(FILE *f, const run_spec *s);

/* ----------------------------------------------------------- recommend */

/* The command, argv[0] == "recommend". Exit status 0 when the report was
 * printed, also when no count is within tolerance (the report says so, and
 * JSON has "recommended_splits": null); 2 for bad usage (one line on stderr
 * naming the flag and value, nothing on stdout); 1 for a runtime failure
 * (one line on stderr). --help prints the usage on stdout, status 0. */
int rec_main(int argc, char **argv);
/* The same, writing the report to out and messages to err. */
int rec_main_io(int argc, char **argv, FILE *out, FILE *err);

/* Parses the command line (argv[0] is "recommend") through the parameter
 * table into a request (rec_opts_free it). --splits=pow2|all is
 * --candidates=pow2|all, --splits=N,N,... implies --candidates=list.
 * SKV_OK; SKV_EINVAL with a one-line message ("skv recommend: ...") naming
 * the flag and value. *help is set when --help was given (nothing else is
 * then read, o is untouched). */
int rec_parse(rec_opts *o, int *help, int argc, char **argv, message *e);

/* The report. */
void rec_print_text(FILE *f, const rec_opts *o, const rec_result *r);
void rec_print_csv(FILE *f, const rec_opts *o, const rec_result *r);
void rec_print_json(FILE *f, const rec_opts *o, const rec_result *r);
void rec_usage(FILE *f);

#endif
