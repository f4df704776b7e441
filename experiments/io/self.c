/* self.c - how a command names this program and its chart scripts so that a reader can type it: build/skv in a checkout, skv once installed. */
#include "io/self.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SELF_PATH = 4096 };

/* Cuts the last component of p ("/a/b" -> "/a"); 0 when there is none. */
static int up(char *p)
{
	char *s = strrchr(p, '/');
	if (!s || s == p)
		return 0;
	*s = '\0';
	return 1;
}

static int exists(const char *dir, const char *name)
{
	char p[SELF_PATH + 32];
	struct stat st;
	int w = snprintf(p, sizeof p, "%s/%s", dir, name);
	return w > 0 && (size_t)w < sizeof p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The build folder of a checkout that holds exe (ROOT/DIR/skv, its sibling
 * ROOT/DIR/skv-mpi, or ROOT/DIR/tests/NAME, with ROOT/Makefile and
 * ROOT/lib/skv.h) into build; 0 when exe is not in one. */
static int checkout_build(char *build, const char *exe)
{
	char d[SELF_PATH];
	snprintf(d, sizeof d, "%s", exe);
	const char *base = strrchr(exe, '/');
	int is_skv = base && (strcmp(base + 1, "skv") == 0 || strcmp(base + 1, "skv-mpi") == 0);
	if (!up(d) || (!is_skv && !up(d)))
		return 0;
	char root[SELF_PATH];
	snprintf(root, sizeof root, "%s", d);
	if (!up(root) || !exists(root, "Makefile") || !exists(root, "lib/skv.h"))
		return 0;
	snprintf(build, SELF_PATH, "%s", d);
	return 1;
}

/* Whether PATH's first program named skv is the file at path. */
static int on_path(const char *path)
{
	const char *env = getenv("PATH");
	struct stat want, st;
	if (!env || stat(path, &want) != 0)
		return 0;
	for (const char *p = env;; p++) {
		size_t k = strcspn(p, ":");
		char cand[SELF_PATH + 8];
		/* an empty entry is the current folder, as for execvp */
		int w = k ? snprintf(cand, sizeof cand, "%.*s/skv", (int)k, p) : snprintf(cand, sizeof cand, "./skv");
		if (w > 0 && (size_t)w < sizeof cand && stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(cand, X_OK) == 0)
			return st.st_dev == want.st_dev && st.st_ino == want.st_ino;
		p += k;
		if (!*p)
			return 0;
	}
}

char *self_shown_path(char *buf, size_t n, const char *path)
{
	char cwd[SELF_PATH];
	size_t k = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
	if (k > 1 && strncmp(path, cwd, k) == 0 && path[k] == '/' && path[k + 1])
		path += k + 1;
	snprintf(buf, n, "%s", path);
	return buf;
}

char *self_program(char *buf, size_t n)
{
	char exe[SELF_PATH], build[SELF_PATH], prog[SELF_PATH + 8];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	snprintf(buf, n, "skv");
	if (k <= 0)
		return buf;
	exe[k] = '\0';
	if (checkout_build(build, exe)) {
		snprintf(prog, sizeof prog, "%s/skv", build);
		return self_shown_path(buf, n, prog);
	}
	const char *base = strrchr(exe, '/');
	if (!base || strcmp(base + 1, "skv") != 0) /* a test or a tool: not skv itself */
		return buf;
	if (!on_path(exe))
		snprintf(buf, n, "%s", exe);
	return buf;
}
