/* procutil.h - shared test helpers that run build/skv as a separate process, its stderr captured, its status returned. */
#ifndef SKV_PROCUTIL_H
#define SKV_PROCUTIL_H
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

/* build/skv, found from this binary (build/tests/test_x); make check builds
 * it before running the tests. */
static inline const char *proc_skv(void)
{
	static char path[4200];
	if (*path)
		return path;
	char exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (k <= 0)
		fail_msg("%s:%d: readlink /proc/self/exe failed", __FILE__, __LINE__);
	exe[k] = '\0';
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
	}
	snprintf(path, sizeof path, "%s/skv", exe);
	if (access(path, X_OK) != 0)
		fail_msg("%s:%d: %s is missing (make builds it)", __FILE__, __LINE__, path);
	return path;
}

/* Starts build/skv with argv[1..] (argv[0] is ignored; NULL-terminated),
 * its stderr into the file errpath, stdin and stdout on /dev/null, in
 * folder cwd (NULL: this one). Returns the pid. */
static inline pid_t proc_start(char *const argv[], const char *errpath, const char *cwd)
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **av = calloc(n + 1, sizeof *av);
	av[0] = (char *)proc_skv();
	for (size_t i = 1; i < n; i++)
		av[i] = argv[i];
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char here[4096];
	if (cwd && (!getcwd(here, sizeof here) || chdir(cwd) != 0))
		fail_msg("%s:%d: chdir %s: %s", __FILE__, __LINE__, cwd, strerror(errno));
	pid_t pid;
	int rc = posix_spawn(&pid, av[0], &fa, NULL, av, environ);
	if (cwd && chdir(here) != 0)
		fail_msg("%s:%d: chdir back: %s", __FILE__, __LINE__, strerror(errno));
	posix_spawn_file_actions_destroy(&fa);
	free(av);
	if (rc != 0)
		fail_msg("%s:%d: cannot run %s: %s", __FILE__, __LINE__, proc_skv(), strerror(rc));
	return pid;
}

/* Waits for pid: its exit status, or 128 + the signal that killed it. */
static inline int proc_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			fail_msg("%s:%d: waitpid: %s", __FILE__, __LINE__, strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs build/skv to the end: its status; *err (when not NULL) gets its
 * stderr, malloc'd. */
static inline int proc_run(char *const argv[], char **err, const char *cwd)
{
	char errpath[] = "/tmp/skv-test-stderr-XXXXXX";
	int fd = mkstemp(errpath);
	if (fd < 0)
		fail_msg("%s:%d: mkstemp: %s", __FILE__, __LINE__, strerror(errno));
	close(fd);
	int st = proc_wait(proc_start(argv, errpath, cwd));
	if (err) {
		FILE *f = fopen(errpath, "rb");
		char *buf = NULL;
		size_t n = 0;
		FILE *m = open_memstream(&buf, &n);
		int c;
		while (f && (c = fgetc(f)) != EOF)
			fputc(c, m);
		if (f)
			fclose(f);
		fclose(m);
		*err = buf;
	}
	unlink(errpath);
	return st;
}

/* Sleeps for s seconds (fractions allowed). */
static inline void proc_sleep(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Number of lines of text (a last line without '\n' counts). */
static inline size_t proc_lines(const char *text)
{
	size_t n = 0;
	for (const char *s = text; s && *s; s++)
		n += *s == '\n' || !s[1];
	return n;
}

#endif
