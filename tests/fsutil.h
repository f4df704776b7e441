/* fsutil.h - shared test helpers for files and folders: temporary folders, whole-file reads and writes, leftovers. */
#ifndef SKV_FSUTIL_H
#define SKV_FSUTIL_H
/* nftw, asprintf: include this header first. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A new empty folder under /tmp; the caller removes it with fs_rmtree. */
static inline char *fs_tmpdir(const char *tag)
{
	char t[256];
	snprintf(t, sizeof t, "/tmp/skv-%s-XXXXXX", tag);
	char *d = strdup(t);
	if (!d || !mkdtemp(d))
		fail_msg("%s:%d: mkdtemp failed", __FILE__, __LINE__);
	return d;
}

static inline int fs_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Removes the folder and everything in it (never follows links), then
 * frees the name. */
static inline void fs_rmtree(char *dir)
{
	if (dir && nftw(dir, fs_rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		print_message("could not remove %s\n", dir);
	free(dir);
}

/* dir/name, in a buffer owned by the caller (at least 4096 bytes). */
static inline char *fs_path(char *buf, size_t n, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, n, "%s/%s", dir, name) >= n)
		fail_msg("%s:%d: path too long: %s/%s", __FILE__, __LINE__, dir, name);
	return buf;
}

/* Writes len bytes to dir/name (len == (size_t)-1: a C string). */
static inline void fs_put(const char *dir, const char *name, const char *text, size_t len)
{
	char p[4096];
	fs_path(p, sizeof p, dir, name);
	if (len == (size_t)-1)
		len = strlen(text);
	FILE *f = fopen(p, "wb");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
		fail_msg("%s:%d: cannot write %s", __FILE__, __LINE__, p);
}

/* The whole file dir/name as a NUL-terminated string, or NULL; *len its size. */
static inline char *fs_get(const char *dir, const char *name, size_t *len)
{
	char p[4096];
	fs_path(p, sizeof p, dir, name);
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	char chunk[65536];
	size_t k;
	while (m && (k = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, k, m);
	fclose(f);
	if (m)
		fclose(m);
	if (len)
		*len = n;
	return buf;
}

/* How many entries of dir (not . and ..) have a name containing `part`
 * (every entry when part is ""). */
static inline size_t fs_count(const char *dir, const char *part)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strstr(e->d_name, part))
			n++;
	if (d)
		closedir(d);
	return n;
}

#endif
