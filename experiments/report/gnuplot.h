/* gnuplot.h - finding gnuplot and skv's chart scripts, and drawing one chart with them. */
#ifndef SKV_GNUPLOT_H
#define SKV_GNUPLOT_H

#include <stddef.h>

#include "io/io.h" /* message */

/* The command that installs gnuplot, for the message when it is missing. */
#define GNUPLOT_INSTALL "apt-get install gnuplot-nox (or: sh scripts/deps.sh)"

/* Finds the gnuplot executable on PATH: its path in buf, SKV_OK; SKV_EIO
 * when there is none (buf untouched). */
int gnuplot_find(char *buf, size_t n);

/* Finds the folder of skv's chart scripts (the one holding common.gp):
 * $SKV_SCRIPTS if set, else scripts/ one or two levels above the running
 * executable (build/skv, build/tests/test_x), else ./scripts. Its path,
 * ending in '/', in buf; SKV_EIO when none holds common.gp. */
int gnuplot_scripts(char *buf, size_t n);

/* Runs `gnuplot -c SCRIPT CSV OUT TERM` and waits for it, its standard
 * error captured (never passed to the terminal). SKV_OK when it exits with
 * status 0 and OUT is a complete chart (a PNG ending in its IEND chunk, an
 * SVG ending in </svg>); then *warnings (when not NULL) gets gnuplot's
 * messages, if it wrote any (malloc'd; NULL otherwise). Else SKV_EIO with a
 * one-line reason in e naming the chart as `shown` (NULL: OUT): ENOSPC
 * when the disk is full, gnuplot's last message when it failed. */
int gnuplot_run(const char *gnuplot, const char *script, const char *csv, const char *out, const char *term,
		    const char *shown, char **warnings, message *e);

/* Whether the file at path is a whole chart of terminal term ("png" or
 * "svg"): a PNG ends with its IEND chunk, an SVG with </svg>. */
int gnuplot_chart_complete(const char *path, const char *term);

#endif
