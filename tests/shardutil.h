/* shardutil.h - shared helpers of the shard, resume and MPI tests: a run's files compared with another's, a run killed once its journal holds units. */
#ifndef SKV_SHARDUTIL_H
#define SKV_SHARDUTIL_H
#include "procutil.h"

#include <sys/stat.h>

#include "core/journal.h"

/* The .meta lines that are a run's own: which command, on how many
 * threads and where (the cores it may use; never a number's input), when,
 * how long. */
static inline int shu_own_line(const char *line)
{
	static const char *const own[] = {"command: ", "threads: ", "machine: ", "date_utc: ", "wall_time_s: "};
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (strncmp(line, own[i], strlen(own[i])) == 0)
			return 1;
	return 0;
}

/* The .meta text without its own lines (malloc'd). */
static inline char *shu_meta_common(const char *meta)
{
	char *out = malloc(strlen(meta) + 1), *o = out;
	for (const char *l = meta; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
		/* the reproduce line's program is named as typed from the current
		 * folder (io/self.c: build/skv from a checkout's root, a path
		 * elsewhere): compared from its " run " on */
		const char *run = strstr(l, " run ");
		if (strncmp(l, "reproduce: ", 11) == 0 && run && run < l + n) {
			memcpy(o, "reproduce:", 10), o += 10;
			memcpy(o, run, n - (size_t)(run - l)), o += n - (size_t)(run - l);
		} else if (!shu_own_line(l))
			memcpy(o, l, n), o += n;
		l += n;
	}
	*o = '\0';
	return out;
}

/* Every EXPERIMENT.csv and .md of `want` is in `got` byte for byte, and
 * each .meta equal but for its own lines; got has no other result file. */
static inline void shu_same_results(const char *got, const char *want, int line)
{
	DIR *d = opendir(want);
	struct dirent *ent;
	size_t files = 0;
	while (d && (ent = readdir(d))) {
		const char *n = ent->d_name, *dot = strrchr(n, '.');
		if (n[0] == '.' || !dot || (strcmp(dot, ".csv") && strcmp(dot, ".md") && strcmp(dot, ".meta")))
			continue;
		size_t la, lb;
		char *a = fs_get(want, n, &la), *b = fs_get(got, n, &lb);
		if (!b)
			fail_msg("%s:%d: %s/%s is missing (%s has it)", __FILE__, line, got, n, want);
		if (strcmp(dot, ".meta") == 0) {
			char *ca = shu_meta_common(a), *cb = shu_meta_common(b);
			if (strcmp(ca, cb) != 0)
				fail_msg("%s:%d: %s/%s differs from %s's beyond command, threads, machine, date and wall time:\n%s\n---\n%s",
					 __FILE__, line, got, n, want, cb, ca);
			free(ca), free(cb);
		} else if (la != lb || memcmp(a, b, la) != 0)
			fail_msg("%s:%d: %s/%s (%zu bytes) is not %s's (%zu bytes) byte for byte", __FILE__, line, got, n, lb,
				 want, la);
		free(a), free(b);
		files++;
	}
	if (d)
		closedir(d);
	size_t theirs = fs_count(got, ".csv") + fs_count(got, ".md") + fs_count(got, ".meta");
	if (files == 0 || theirs != files)
		fail_msg("%s:%d: %s holds %zu result files, %s %zu", __FILE__, line, got, theirs, want, files);
}

/* Finished units in the journal at path (its records less the header;
 * 0 while it is missing or holds none). */
static inline size_t shu_journalled(const char *path)
{
	journal_file f;
	message e = {NULL};
	if (journal_read(&f, path, 0, &e) != SKV_OK) {
		msg_free(&e);
		return 0;
	}
	size_t n = f.nrec - 1;
	journal_file_free(&f);
	return n;
}

/* The size of a file, 0 if missing. */
static inline off_t shu_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? sb.st_size : 0;
}

/* Waits (at most `limit` seconds) for pid to exit on its own: its status
 * (as proc_wait), or -1 while it still runs. */
static inline int shu_wait_for(pid_t pid, double limit)
{
	for (double t = 0; t < limit; t += 0.01) {
		int ws;
		if (waitpid(pid, &ws, WNOHANG) == pid)
			return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		proc_sleep(0.01);
	}
	return -1;
}

/* Starts argv[0] (looked up on PATH) with its arguments, stderr into
 * errpath, stdin and stdout on /dev/null. Returns the pid. */
static inline pid_t shu_spawn(char *const argv[], const char *errpath)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		fail_msg("%s:%d: cannot run %s: %s", __FILE__, __LINE__, argv[0], strerror(rc));
	return pid;
}

#endif
