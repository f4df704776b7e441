/* self.h - how a command names this program and its chart scripts so that a reader can type it: build/skv in a checkout, skv once installed. */
#ifndef IO_SELF_H
#define IO_SELF_H

#include <stddef.h>

/* The skv program a rerun command should start with, into buf[0..n):
 * - in a checkout (the executable is ROOT/DIR/skv, or a test in
 *   ROOT/DIR/tests/, and ROOT holds Makefile and lib/skv.h): ROOT/DIR/skv
 *   relative to the current folder when it lies under it ("build/skv" from
 *   the checkout's root, where `make report` runs), else its absolute path;
 * - else, when PATH finds a program named skv that is this executable
 *   (the same file): "skv" (an installed skv);
 * - else the executable's absolute path (a copy that PATH does not find).
 * The same bytes for the same tree, folder and PATH: a committed report
 * says build/skv whoever draws it. Falls back to "skv" when the
 * executable cannot be found (no /proc). Returns buf. */
char *self_program(char *buf, size_t n);

/* path as a reader should type it: relative to the current folder when it
 * lies under it ("scripts/" for ROOT/scripts/ from ROOT), else unchanged.
 * Into buf[0..n); returns buf. */
char *self_shown_path(char *buf, size_t n, const char *path);

#endif
