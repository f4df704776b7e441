/* io.h - the program's bottom layer: one-line messages, temporary files removed on signals, output folders locked and published whole. */
#ifndef IO_IO_H
#define IO_IO_H

#include <stdarg.h>
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
/* fmt and ap formatted into a malloc'd string of its full length; NULL
 * when out of memory. For the helpers that build a message in parts. */
char *msg_vformat(const char *fmt, va_list ap);
/* The message, or "" when there is none. */
const char *msg_text(const message *e);
void msg_free(message *e);

/* ------------------------------------------------------------- reading */

/* Why io_slurp failed, with what a caller needs to say so. */
typedef enum {
	IO_READ_OK = 0,
	IO_READ_MISSING,     /* no such file */
	IO_READ_ERRNO,       /* open, fstat or read failed: err */
	IO_READ_NOT_REGULAR, /* a folder, FIFO, device, socket: mode */
	IO_READ_TOO_LARGE,   /* a regular file above max: size */
	IO_READ_NOMEM
} io_read_why;

typedef struct {
	io_read_why why;
	int err;                 /* errno, for IO_READ_ERRNO */
	unsigned mode;           /* st_mode, for IO_READ_NOT_REGULAR */
	unsigned long long size; /* bytes, for IO_READ_TOO_LARGE */
} io_slurp_info;

/* The whole of a regular file of at most max bytes, NUL-terminated
 * (*text malloc'd, *len its length). SKV_EIO or SKV_ENOMEM with the reason
 * in *info and nothing allocated; the caller words the message. */
int io_slurp(char **text, size_t *len, const char *path, size_t max, io_slurp_info *info);
/* "a folder", "a FIFO", "a character device", ... for a st_mode. */
const char *io_file_kind(unsigned mode);

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
