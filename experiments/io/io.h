/* io.h - the program's bottom layer: one-line messages, temporary files removed on signals, output folders locked and published whole. */
#ifndef IO_IO_H
#define IO_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "skv.h" /* skv_status: what every function below returns */

/* A one-line error message ("skv: ..." without the newline), written by the
 * function that detected the problem and printed by the command. The text
 * is allocated to its full length (never cut), and control characters of
 * the values it quotes (a line break, a terminal escape) are written as
 * \n, \t, \xHH, so it stays one printable line. Start with {NULL}; free
 * with msg_free. A function that takes a `message *e` may be given NULL
 * when the caller wants the status alone: msg_set then keeps nothing. */
typedef struct {
	char *msg;
} message;

/* Replaces the message of e (an out-of-memory note if formatting fails). */
void msg_set(message *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message, or "" when there is none. */
const char *msg_text(const message *e);
void msg_free(message *e);

/* ---------------------------------------------------------- output folders */

/* Creates the folder (and its parents) if missing and checks that a file can
 * be created in it. RUNTIME with a message otherwise. */
int outdir_prepare(const char *dir, message *e);
/* Takes the folder's lock (DIR/.skv.lock, flock) for the rest of the
 * process, noting `command` as the holder, and removes the temporaries a
 * killed run left there; a folder locked by another process is refused
 * (RUNTIME, the message names the holder). Taking a held lock again is a
 * no-op. outdir.c states the rules. */
int outdir_lock(const char *dir, const char *command, message *e);
/* Flushes tmp[0..n) to disk and renames each to final[i], in order, with
 * signals blocked, then flushes the folder. RUNTIME with a message. */
int outdir_publish(char *const *tmp, char *const *final, size_t n, message *e);
/* A staged folder: created beside dir (.NAME.staging-XXXXXX), filled like
 * any output folder, then exchanged with dir in one rename; the old folder
 * is removed. Until then everything in it is temporary (removed on a
 * signal or on failure, by stage_end). */
int stage_begin(char **stage, const char *dir, message *e);
int stage_publish(const char *dir, message *e);
void stage_end(void);
/* Keeps path (dir: a folder) registered as temporary when it lies in the
 * staged folder. */
void stage_track(const char *path, int dir);

/* ------------------------------------------------------------ temporaries */

/* Installs the handler that removes registered temporaries on SIGINT,
 * SIGTERM, SIGHUP and SIGPIPE (and at exit); tempfile.c explains it. */
void temp_install(void);
/* Creates an empty hidden file next to final (".NAME.XXXXXX.tmp", mode
 * 0666 less the umask) and registers it; *path is malloc'd. */
int temp_create(char **path, const char *final, message *e);
/* Registers a path (dir: a folder) for removal; forgets one; forgets
 * every path under a folder; removes a file and forgets it. */
int temp_add(const char *path, int dir);
void temp_forget(const char *path);
void temp_forget_under(const char *dir);
void temp_discard(const char *path);
#endif
