/* outdir.c - output folders: creation, the lock that keeps two runs apart, files published as a set, staged folders swapped in whole. */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "io/io.h"

/*
 * The rules, as git and SQLite keep theirs:
 * - One writer per folder. Every command that writes into a folder (run,
 *   suite, report) first takes an exclusive flock on FOLDER/.skv.lock and
 *   holds it until it exits; the file says who holds it, so a second
 *   command refuses at once with a message naming the holder. The kernel
 *   drops the lock when the holder dies, however it dies.
 * - Temporary names are unique (mkstemps) and hidden (".NAME.XXXXXX.tmp");
 *   holding the lock, a command removes the ones a killed predecessor left.
 * - An experiment's three files are written whole, flushed to disk (fsync),
 *   then renamed into place with signals blocked, the .meta last: the .meta
 *   is the commit record, and it holds the size and checksum of the CSV and
 *   .md it belongs to, so a set mixed by a crash between two renames is
 *   detected (skv report refuses it).
 * - A staged folder (skv suite --report) is built beside the target and
 *   exchanged with it in one rename (renameat2 RENAME_EXCHANGE), so readers
 *   see the old folder or the new one, never a mixture.
 */

int outdir_prepare(const char *dir, message *e)
{
	size_t n = strlen(dir);
	char *path = malloc(n + 64);
	if (!path) {
		msg_set(e, "skv: out of memory");
		return SKV_EIO;
	}
	memcpy(path, dir, n + 1);
	/* mkdir -p: each prefix ending before a '/', then the whole path. */
	int err = 0;
	for (size_t i = 1; i <= n && !err; i++) {
		if (i < n && path[i] != '/')
			continue;
		char c = path[i];
		path[i] = '\0';
		struct stat st;
		if (mkdir(path, 0777) != 0 && errno != EEXIST)
			err = errno;
		else if (stat(path, &st) != 0)
			err = errno;
		else if (!S_ISDIR(st.st_mode))
			err = ENOTDIR;
		path[i] = c;
	}
	if (!err) {
		/* A real file is the only reliable test (access() ignores read-only
		 * mounts for root, and ACLs). */
		snprintf(path + n, 64, "/.skv-probe-%ld.tmp", (long)getpid());
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd < 0)
			err = errno;
		else {
			close(fd);
			unlink(path);
		}
	}
	free(path);
	if (err) {
		msg_set(e, "skv: cannot write to --out '%s': %s", dir, strerror(err));
		return SKV_EIO;
	}
	return SKV_OK;
}

/* ------------------------------------------------------------------ locks */

/* The folders this process holds, by device and inode (a folder named two
 * ways is one folder). The descriptors stay open until exit. */
typedef struct {
	dev_t dev;
	ino_t ino;
	int fd;
} held;

static held *locks;
static size_t nlocks;

/* Whether name is a temporary of skv's: hidden, ending in .tmp. */
static int is_temp_name(const char *name)
{
	size_t k = strlen(name);
	return name[0] == '.' && k > 5 && strcmp(name + k - 4, ".tmp") == 0;
}

/* Removes the temporaries a killed run left in dir (and dir/.plot). Only
 * called with dir's lock held: no live skv writes there. */
static void remove_stale(const char *dir)
{
	for (int sub = 0; sub < 2; sub++) {
		char *d = NULL;
		if (asprintf(&d, "%s%s", dir, sub ? "/.plot" : "") < 0)
			return;
		DIR *h = opendir(d);
		struct dirent *ent;
		while (h && (ent = readdir(h))) {
			if (!is_temp_name(ent->d_name))
				continue;
			char *p = NULL;
			if (asprintf(&p, "%s/%s", d, ent->d_name) >= 0) {
				struct stat st;
				if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
					unlink(p);
				free(p);
			}
		}
		if (h)
			closedir(h);
		free(d);
	}
}

/* The holder's note, one line, for the refusal message. */
static void holder_note(char *buf, size_t n, int fd)
{
	ssize_t k = pread(fd, buf, n - 1, 0);
	buf[k > 0 ? k : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!*buf)
		snprintf(buf, n, "its note is empty");
}

int outdir_lock(const char *dir, const char *command, message *e)
{
	struct stat st;
	if (stat(dir, &st) != 0) {
		msg_set(e, "skv: cannot lock the folder '%s': %s", dir, strerror(errno));
		return SKV_EIO;
	}
	for (size_t i = 0; i < nlocks; i++)
		if (locks[i].dev == st.st_dev && locks[i].ino == st.st_ino)
			return SKV_OK;
	char *path = NULL;
	if (asprintf(&path, "%s/.skv.lock", dir) < 0) {
		msg_set(e, "skv: out of memory");
		return SKV_EIO;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		msg_set(e, "skv: cannot lock the folder '%s': %s: %s", dir, path, strerror(errno));
		free(path);
		return SKV_EIO;
	}
	free(path);
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int err = errno;
		char note[1024];
		holder_note(note, sizeof note, fd);
		close(fd);
		if (err == EWOULDBLOCK)
			msg_set(e, "skv: the folder '%s' is in use by another skv (%s); wait for it to finish or "
					  "choose another folder",
				       dir, note);
		else
			msg_set(e, "skv: cannot lock the folder '%s': %s", dir, strerror(err));
		return SKV_EIO;
	}
	held *g = realloc(locks, (nlocks + 1) * sizeof *g);
	if (!g) {
		close(fd);
		msg_set(e, "skv: out of memory");
		return SKV_EIO;
	}
	locks = g;
	locks[nlocks++] = (held){st.st_dev, st.st_ino, fd};
	/* Who holds it, for whoever is refused. */
	char date[32] = "?";
	time_t now = time(NULL);
	struct tm tm;
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (ftruncate(fd, 0) == 0)
		dprintf(fd, "pid %ld since %s: %s\n", (long)getpid(), date, command ? command : "skv");
	remove_stale(dir);
	return SKV_OK;
}

/* --------------------------------------------------------------- publish */

static int fsync_path(const char *path, int dir)
{
	int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	/* Some file systems refuse fsync on a folder: that is not a failure. */
	if (rc != 0 && dir && (errno == EINVAL || errno == EBADF))
		rc = 0;
	close(fd);
	return rc;
}

/* The folder of path, in buf ("." when it has none). */
static void dir_of(char *buf, size_t n, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(buf, n, ".");
	else
		snprintf(buf, n, "%.*s", (int)(slash == path ? 1 : slash - path), path);
}

int outdir_publish(char *const *tmp, char *const *final, size_t n, message *e)
{
	for (size_t i = 0; i < n; i++)
		if (fsync_path(tmp[i], 0) != 0) {
			msg_set(e, "skv: cannot write '%s': %s", final[i], strerror(errno));
			return SKV_EIO;
		}
	/* No signal between the renames: an interruption leaves the old set or
	 * the new one. Only SIGKILL or a crash can split it; the .meta, renamed
	 * last, then belongs to the old set and its checksums tell. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = SKV_OK;
	for (size_t i = 0; i < n && rc == SKV_OK; i++) {
		if (rename(tmp[i], final[i]) != 0) {
			msg_set(e, "skv: cannot rename '%s' to '%s': %s", tmp[i], final[i], strerror(errno));
			rc = SKV_EIO;
			break;
		}
		temp_forget(tmp[i]);
		stage_track(final[i], 0);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	char d[4096];
	dir_of(d, sizeof d, final[0]);
	if (rc == SKV_OK && fsync_path(d, 1) != 0) {
		msg_set(e, "skv: cannot write the folder '%s': %s", d, strerror(errno));
		rc = SKV_EIO;
	}
	return rc;
}

/* --------------------------------------------------------------- staging */

/* The staged folder in progress: what is written into it stays registered
 * as temporary until it is swapped into place. */
static char *stage;

void stage_track(const char *path, int dir)
{
	size_t k = stage ? strlen(stage) : 0;
	if (stage && strncmp(path, stage, k) == 0 && path[k] == '/')
		temp_add(path, dir);
}

int stage_begin(char **out, const char *dir, message *e)
{
	char *copy = strdup(dir), *t = NULL;
	if (!copy) {
		msg_set(e, "skv: out of memory");
		return SKV_EIO;
	}
	size_t k = strlen(copy);
	while (k > 1 && copy[k - 1] == '/')
		copy[--k] = '\0';
	char *slash = strrchr(copy, '/');
	const char *base = slash ? slash + 1 : copy;
	if (asprintf(&t, "%.*s.%s.staging-XXXXXX", (int)(slash ? slash - copy + 1 : 0), copy, base) < 0 ||
	    !mkdtemp(t)) {
		msg_set(e, "skv: cannot create a staging folder next to '%s': %s", dir,
			       t ? strerror(errno) : "out of memory");
		free(copy);
		free(t);
		return SKV_EIO;
	}
	free(copy);
	/* mkdtemp makes the folder 0700; it becomes the results folder: give it
	 * the mode mkdir would (0777 less the umask). */
	mode_t mask = umask(0);
	umask(mask);
	chmod(t, 0777 & ~mask);
	temp_add(t, 1);
	stage = t;
	*out = t;
	return SKV_OK;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

int stage_publish(const char *dir, message *e)
{
	struct stat st;
	int rc = SKV_OK;
	if (fsync_path(stage, 1) != 0)
		rc = SKV_EIO;
	else if (stat(dir, &st) != 0) {
		if (rename(stage, dir) != 0)
			rc = SKV_EIO;
	} else if (renameat2(AT_FDCWD, stage, AT_FDCWD, dir, RENAME_EXCHANGE) != 0) {
		/* A file system without the exchange: move the old folder aside
		 * and the new one in, with no signal between the two renames. */
		char *aside = NULL;
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (asprintf(&aside, "%s.old", stage) < 0 || rename(dir, aside) != 0 || rename(stage, dir) != 0 ||
		    rename(aside, stage) != 0)
			rc = SKV_EIO;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		free(aside);
	}
	if (rc != SKV_OK) {
		msg_set(e, "skv: cannot move the staged results into '%s': %s", dir, strerror(errno));
		return rc;
	}
	/* The stage path now holds the old folder (or nothing): remove it. */
	nftw(stage, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	stage_end();
	return SKV_OK;
}

void stage_end(void)
{
	if (!stage)
		return;
	/* Forget every file registered under the stage; a failed run's are
	 * removed here (the stage is gone after a publish). */
	nftw(stage, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	temp_forget_under(stage);
	free(stage);
	stage = NULL;
}
