/* gnuplot.c - finding gnuplot and skv's chart scripts, and drawing one chart with them. */
#include "gnuplot.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "skv.h"

extern char **environ;

static int is_exec(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int skv_gnuplot_find(char *buf, size_t n)
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

int skv_gnuplot_scripts(char *buf, size_t n)
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
				char d[4096 + 16];
				snprintf(d, sizeof d, "%s/scripts", exe);
				if (try_dir(buf, n, d))
					return SKV_OK;
			}
		}
	}
	return try_dir(buf, n, "scripts") ? SKV_OK : SKV_EIO;
}

int skv_gnuplot_run(const char *gnuplot, const char *script, const char *csv, const char *out, const char *term,
		    char *err, size_t errlen)
{
	if (!gnuplot || !script || !csv || !out || !term)
		return SKV_EINVAL;
	char *argv[] = {(char *)"gnuplot", (char *)"-c", (char *)script, (char *)csv, (char *)out, (char *)term, NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, gnuplot, NULL, NULL, argv, environ);
	if (rc) {
		if (err && errlen)
			snprintf(err, errlen, "cannot run %s: %s", gnuplot, strerror(rc));
		return SKV_EIO;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			if (err && errlen)
				snprintf(err, errlen, "waiting for gnuplot: %s", strerror(errno));
			return SKV_EIO;
		}
	struct stat sb;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || stat(out, &sb) != 0 || sb.st_size == 0) {
		if (err && errlen) {
			if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
				snprintf(err, errlen, "gnuplot -c %s %s failed (exit status %d)", script, csv, WEXITSTATUS(st));
			else if (WIFSIGNALED(st))
				snprintf(err, errlen, "gnuplot -c %s %s was killed by signal %d", script, csv, WTERMSIG(st));
			else
				snprintf(err, errlen, "gnuplot -c %s %s wrote nothing to %s", script, csv, out);
		}
		return SKV_EIO;
	}
	return SKV_OK;
}
