/* gnuplot.c - finding gnuplot and skv's chart scripts, and drawing one chart with them. */
#include "report/gnuplot.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "skv.h"

extern char **environ;

static int is_exec(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int gnuplot_find(char *buf, size_t n)
{
	const char *path = getenv("PATH");
	if (!buf || n == 0 || !path)
		return SKV_EIO;
	for (const char *p = path;; p++) {
		size_t k = strcspn(p, ":");
		char cand[4096];
		/* An empty PATH entry is the current folder, as for execvp. */
		int w = k ? snprintf(cand, sizeof cand, "%.*s/gnuplot", (int)k, p) : snprintf(cand, sizeof cand, "./gnuplot");
		if (w > 0 && (size_t)w < sizeof cand && (size_t)w < n && is_exec(cand)) {
			memcpy(buf, cand, (size_t)w + 1);
			return SKV_OK;
		}
		p += k;
		if (!*p)
			break;
	}
	return SKV_EIO;
}

static int has_common(const char *dir)
{
	char p[4096];
	int w = snprintf(p, sizeof p, "%scommon.gp", dir);
	return w > 0 && (size_t)w < sizeof p && access(p, R_OK) == 0;
}

/* Writes dir (with a trailing '/') into buf if it holds the scripts. */
static int try_dir(char *buf, size_t n, const char *dir)
{
	char d[4096];
	size_t k = strlen(dir);
	int w = snprintf(d, sizeof d, "%s%s", dir, k && dir[k - 1] == '/' ? "" : "/");
	if (w <= 0 || (size_t)w >= sizeof d || (size_t)w >= n || !has_common(d))
		return 0;
	memcpy(buf, d, (size_t)w + 1);
	return 1;
}

int gnuplot_scripts(char *buf, size_t n)
{
	if (!buf || n == 0)
		return SKV_EIO;
	const char *env = getenv("SKV_SCRIPTS");
	if (env && *env)
		return try_dir(buf, n, env) ? SKV_OK : SKV_EIO;
	char exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (k > 0) {
		exe[k] = '\0';
		/* Strip the file name, then look one and two levels up. */
		for (int up = 0; up < 3; up++) {
			char *slash = strrchr(exe, '/');
			if (!slash)
				break;
			*slash = '\0';
			if (up > 0) {
				/* a checkout (build/skv: ../scripts) or an installed
				 * program (PREFIX/bin/skv: PREFIX/share/skv) */
				char d[4096 + 16];
				snprintf(d, sizeof d, "%s/scripts", exe);
				if (try_dir(buf, n, d))
					return SKV_OK;
				snprintf(d, sizeof d, "%s/share/skv", exe);
				if (up == 1 && try_dir(buf, n, d))
					return SKV_OK;
			}
		}
	}
	return try_dir(buf, n, "scripts") ? SKV_OK : SKV_EIO;
}

/* Whether the file at path is a whole chart: a PNG ends with its IEND
 * chunk (length 0, type IEND, CRC AE 42 60 82), an SVG with its closing
 * tag (and white space). gnuplot can exit 0 after a short write on a full
 * disk, so its status alone does not say the file is complete. */
int gnuplot_chart_complete(const char *path, const char *term)
{
	static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	unsigned char tail[64];
	size_t n = 0;
	if (fseek(f, -(long)sizeof tail, SEEK_END) != 0)
		rewind(f);
	n = fread(tail, 1, sizeof tail, f);
	fclose(f);
	if (strcmp(term, "png") == 0)
		return n >= sizeof iend && memcmp(tail + n - sizeof iend, iend, sizeof iend) == 0;
	while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == ' ' || tail[n - 1] == '\r' || tail[n - 1] == '\t'))
		n--;
	return n >= 6 && memcmp(tail + n - 6, "</svg>", 6) == 0;
}

/* The last non-blank line of text, for a one-line message: its start,
 * and its length in *n. */
static const char *last_line(const char *text, int *n)
{
	const char *end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\r'))
		end--;
	const char *start = end;
	while (start > text && start[-1] != '\n')
		start--;
	*n = (int)(end - start);
	return start;
}

/* Why the output folder of path failed: ENOSPC when the file system is full. */
static int disk_full(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	struct statvfs v;
	return statvfs(dir, &v) == 0 && v.f_bavail == 0;
}

/* Runs gnuplot with its standard error read through a pipe (to the end,
 * then waited for, so a chatty gnuplot cannot fill the pipe and stall). */
static int spawn_capture(const char *gnuplot, char *const argv[], char **text, int *status, message *e)
{
	int fd[2];
	if (pipe(fd) != 0) {
		msg_set(e, "cannot run %s: %s", gnuplot, strerror(errno));
		return SKV_EIO;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	pid_t pid;
	int rc = posix_spawn(&pid, gnuplot, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc) {
		close(fd[0]);
		msg_set(e, "cannot run %s: %s", gnuplot, strerror(rc));
		return SKV_EIO;
	}
	size_t len = 0;
	FILE *m = open_memstream(text, &len);
	char chunk[4096];
	ssize_t k;
	while ((k = read(fd[0], chunk, sizeof chunk)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		if (m && len < (1u << 20)) /* keep the first MiB of messages */
			fwrite(chunk, 1, (size_t)k, m);
	}
	close(fd[0]);
	if (m)
		fclose(m);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR) {
			msg_set(e, "waiting for gnuplot: %s", strerror(errno));
			return SKV_EIO;
		}
	return SKV_OK;
}

int gnuplot_run(const char *gnuplot, const char *script, const char *csv, const char *out, const char *term,
		    const char *shown, char **warnings, message *e)
{
	if (!gnuplot || !script || !csv || !out || !term)
		return SKV_EINVAL;
	if (!shown)
		shown = out;
	char *argv[] = {(char *)"gnuplot", (char *)"-c", (char *)script, (char *)csv, (char *)out, (char *)term, NULL};
	char *text = NULL;
	int st = 0;
	int rc = spawn_capture(gnuplot, argv, &text, &st, e);
	if (rc)
		return rc;
	int nline;
	const char *line = last_line(text ? text : "", &nline);
	struct stat sb;
	int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && stat(out, &sb) == 0 && sb.st_size > 0 &&
		 gnuplot_chart_complete(out, term);
	if (!ok) {
		if (disk_full(out))
			msg_set(e, "cannot write %s: %s", shown, strerror(ENOSPC));
		else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
			msg_set(e, "gnuplot -c %s failed drawing %s (exit status %d)%s%.*s", script, shown,
				WEXITSTATUS(st), nline ? ": " : "", nline, line);
		else if (WIFSIGNALED(st))
			msg_set(e, "gnuplot -c %s was killed by signal %d drawing %s", script, WTERMSIG(st), shown);
		else
			msg_set(e, "gnuplot -c %s left %s incomplete%s%.*s", script, shown, nline ? ": " : "",
				nline, line);
		free(text);
		return SKV_EIO;
	}
	if (warnings && text && *text)
		*warnings = text;
	else
		free(text);
	return SKV_OK;
}
