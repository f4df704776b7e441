/* grade_cmd.h - the commands skv grade and skv export: their parsing, their reports as text, CSV and JSON. */
#ifndef CLI_GRADE_CMD_H
#define CLI_GRADE_CMD_H

#include <stdio.h>

#include "core/grade.h"

/* `skv grade ...` (argv[0] == "grade"): the report on out, one-line errors
 * on err. Exit status 0 when the report was printed, 2 for bad usage or a
 * bad file (one line naming the file, the tensor and the problem; nothing
 * on out), 1 for a runtime failure. */
int grade_main_io(int argc, char **argv, FILE *out, FILE *err);
int grade_main(int argc, char **argv);
/* `skv export ...` (argv[0] == "export"): the files, and one summary line
 * on err. Exit statuses as grade's. */
int export_main_io(int argc, char **argv, FILE *out, FILE *err);
int export_main(int argc, char **argv);
void grade_usage(FILE *f);
void export_usage(FILE *f);

/* What a grade report prints. */
typedef struct {
	const char *dump;           /* the dump as the command line named it */
	const grade_dump *dp;
	const grade_result *r;
	const grade_ranking *id;    /* NULL without --identify */
	const grade_id_opts *io;    /* how identify ran */
	size_t top;                 /* rows of the ranking the text shows (0: all) */
} grade_report;

enum { GRADE_TEXT, GRADE_CSV, GRADE_JSON };

void grade_print_text(FILE *f, const grade_report *g);
/* CSV (RFC 4180): one row per graded item, head and split; with --identify
 * the ranking instead, one row per candidate. */
void grade_print_csv(FILE *f, const grade_report *g);
void grade_print_json(FILE *f, const grade_report *g);

#endif
