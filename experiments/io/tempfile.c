/* tempfile.c - temporary files and folders removed on failure, on exit and on SIGINT, SIGTERM, SIGHUP or SIGPIPE. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io/io.h"

/*
 * Every temporary path the program creates is registered here until it is
 * renamed into place or removed. A fatal signal runs the handler, which
 * removes what is registered (files first, then folders) with
 * unlink and rmdir alone, both async-signal-safe, then lets the signal kill
 * the process as it would have (so the exit status still says "killed by
 * SIGINT"), as git's tempfile.c does. SIGKILL cannot be caught: what it
 * leaves is removed by the next run into the same folder, which holds the
 * folder's lock and so knows that no one else is writing there (out.c).
 *
 * The handler may run on any thread. The registry is an array of atomic
 * pointers to strings that are never changed once published and never
 * freed while a signal could still read them (a removed entry's string is
 * kept in `retired` until exit), so the handler sees either a whole path or
 * none. A path unlinked after its rename to the final name no longer exists
 * under the temporary name: the unlink fails harmlessly.
 */
enum { SLOTS = 4096 };

typedef struct {
	char *path;
	int dir;
} entry;

static entry *_Atomic slot[SLOTS];
static entry *retired[SLOTS];
static size_t nretired;
static atomic_int installed;

/* Files, then folders twice: a folder (.plot) inside another registered
 * one is empty of files after the first pass and gone after the second,
 * whatever the order of their slots. Only unlink and rmdir: safe in a
 * signal handler. */
static void remove_all(void)
{
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = SLOTS; i-- > 0;) {
			entry *e = atomic_load(&slot[i]);
			if (e && (e->dir != 0) == (pass > 0))
				pass ? rmdir(e->path) : unlink(e->path);
		}
}

static void handler(int sig)
{
	remove_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Whatever a failure path left registered goes at a normal exit too. */
static void at_exit(void)
{
	remove_all();
	for (size_t i = 0; i < SLOTS; i++) {
		entry *e = atomic_exchange(&slot[i], NULL);
		if (e) {
			free(e->path);
			free(e);
		}
	}
	for (size_t i = 0; i < nretired; i++) {
		free(retired[i]->path);
		free(retired[i]);
	}
	nretired = 0;
}

void temp_install(void)
{
	if (atomic_exchange(&installed, 1))
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction old;
		/* a signal the caller ignores (nohup) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
	atexit(at_exit);
}

int temp_add(const char *path, int dir)
{
	entry *e = malloc(sizeof *e);
	char *p = strdup(path);
	if (!e || !p) {
		free(e);
		free(p);
		return SKV_ENOMEM;
	}
	e->path = p;
	e->dir = dir;
	for (size_t i = 0; i < SLOTS; i++) {
		entry *none = NULL;
		if (atomic_compare_exchange_strong(&slot[i], &none, e))
			return SKV_OK;
	}
	free(p);
	free(e);
	return SKV_ENOMEM;
}

void temp_forget(const char *path)
{
	for (size_t i = 0; i < SLOTS; i++) {
		entry *e = atomic_load(&slot[i]);
		if (e && strcmp(e->path, path) == 0 && atomic_compare_exchange_strong(&slot[i], &e, NULL)) {
			if (nretired < SLOTS)
				retired[nretired++] = e;
			return; /* else kept unfreed: a few bytes, never read again */
		}
	}
}

void temp_forget_under(const char *dir)
{
	const size_t k = strlen(dir);
	for (size_t i = 0; i < SLOTS; i++) {
		entry *e = atomic_load(&slot[i]);
		if (e && strncmp(e->path, dir, k) == 0 && (e->path[k] == '/' || e->path[k] == '\0') &&
		    atomic_compare_exchange_strong(&slot[i], &e, NULL) && nretired < SLOTS)
			retired[nretired++] = e;
	}
}

int temp_create(char **path, const char *final, message *e)
{
	size_t n = strlen(final) + 16;
	char *t = malloc(n);
	if (!t) {
		msg_set(e, "skv: out of memory");
		return SKV_ENOMEM;
	}
	/* Hidden, next to the final name (the same file system, so the rename
	 * is atomic), unique (mkstemps): two runs never share a temporary. */
	const char *slash = strrchr(final, '/');
	size_t dirlen = slash ? (size_t)(slash - final) + 1 : 0;
	snprintf(t, n, "%.*s.%s.XXXXXX.tmp", (int)dirlen, final, final + dirlen);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* created and registered as one step */
	int fd = mkstemps(t, 4);
	int saved = errno;
	int rc = fd >= 0 ? temp_add(t, 0) : SKV_EIO;
	if (fd >= 0 && rc != SKV_OK)
		unlink(t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0 || rc != SKV_OK) {
		msg_set(e, "skv: cannot create a file next to '%s': %s", final,
			       fd < 0 ? strerror(saved) : "out of memory");
		if (fd >= 0)
			close(fd);
		free(t);
		return fd < 0 ? SKV_EIO : SKV_ENOMEM;
	}
	/* mkstemps gives mode 0600; results are for reading: 0666 less the umask. */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		saved = errno;
		close(fd);
		temp_discard(t);
		msg_set(e, "skv: cannot set the mode of '%s': %s", t, strerror(saved));
		free(t);
		return SKV_EIO;
	}
	close(fd);
	*path = t;
	return SKV_OK;
}

void temp_discard(const char *path)
{
	unlink(path);
	temp_forget(path);
}
