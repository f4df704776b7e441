/* report.h - the `skv report DIR` command: charts and REPORT.md from the CSV files of a run. */
#ifndef SKV_REPORT_H
#define SKV_REPORT_H

#include <stdio.h>


/* The work of `skv report DIR`, its messages (one line per error, naming the
 * file and line) written to msg. Reads every DIR/EXPERIMENT.csv (with its .md
 * and .meta when present), then writes DIR/.plot/EXPERIMENT.gp (the chart
 * data), DIR/EXPERIMENT.png and .svg (drawn by scripts/EXPERIMENT's chart
 * script) and DIR/REPORT.md. Everything is checked and drawn under temporary
 * names first and renamed into place only when all of it succeeded, so a
 * failure leaves the previous report whole. Returns the exit status. */
int report_run(const char *dir, FILE *msg);
/* The same on the files in dir, naming the folder `shown` in the report
 * and its messages (a staging folder that becomes `shown`). */
int report_run_as(const char *dir, const char *shown, FILE *msg);

#endif
