/* report_files.c - the files of a report written under temporary names, and renamed into place together once all of it worked. */
#include "report/report_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "skv.h"

char *report_path(const char *dir, const char *name, const char *ext)
{
	size_t k = strlen(dir);
	const char *slash = k && dir[k - 1] == '/' ? "" : "/";
	size_t n = k + strlen(slash) + strlen(name) + strlen(ext) + 1;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s%s%s%s", dir, slash, name, ext);
	return p;
}

int report_pending_new(job *j, const char *final, char **tmp)
{
	char *fin = strdup(final), *t = NULL;
	pending *p = realloc(j->p, (j->np + 1) * sizeof *p);
	if (p)
		j->p = p;
	if (!fin || !p) {
		free(fin);
		return SKV_ENOMEM;
	}
	message e = {NULL};
	if (temp_create(&t, final, &e) != SKV_OK) {
		fprintf(j->msg, "skv report: %s\n", msg_text(&e) + 5);
		msg_free(&e);
		free(fin);
		return SKV_EIO;
	}
	j->p[j->np++] = (pending){t, fin};
	*tmp = t;
	return SKV_OK;
}

/* Why writing into dir failed: ENOSPC when the file system is full, else
 * the error itself. */
static const char *write_error(const char *dir, int err)
{
	struct statvfs v;
	if (statvfs(dir, &v) == 0 && v.f_bavail == 0)
		return strerror(ENOSPC);
	return strerror(err);
}

int report_pending_write(job *j, const char *final, const char *data, size_t len)
{
	char *tmp;
	int rc = report_pending_new(j, final, &tmp);
	if (rc)
		return rc;
	FILE *f = fopen(tmp, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		fprintf(j->msg, "skv report: cannot write %s: %s\n", final, write_error(j->dir, errno));
		return SKV_EIO;
	}
	return SKV_OK;
}

int report_pending_commit(job *j, size_t first, int ok)
{
	int rc = SKV_OK;
	if (ok && j->np > first) {
		char **tmp = malloc((j->np - first) * sizeof *tmp), **fin = malloc((j->np - first) * sizeof *fin);
		message e = {NULL};
		for (size_t i = first; tmp && fin && i < j->np; i++) {
			tmp[i - first] = j->p[i].tmp;
			fin[i - first] = j->p[i].final;
		}
		if (!tmp || !fin)
			rc = SKV_ENOMEM;
		else if (outdir_publish(tmp, fin, j->np - first, &e) != SKV_OK) {
			fprintf(j->msg, "skv report: %s\n", msg_text(&e) + 5);
			rc = SKV_EIO;
		}
		msg_free(&e);
		free(tmp);
		free(fin);
	}
	for (size_t i = first; i < j->np; i++) {
		if (!ok || rc)
			temp_discard(j->p[i].tmp);
		free(j->p[i].tmp);
		free(j->p[i].final);
	}
	j->np = first;
	return rc;
}
