/* grade_manifest.c - where a dump's tensors are: the conventional names in a folder or a .safetensors file, FILE[:NAME] values, and the manifest's "KEY = VALUE" lines. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/grade.h"

static const char *const tensor_names[GT_N] = {"q", "k", "v", "partial_out", "partial_lse", "out", "lse", "splits"};

const char *grade_tensor_name(int id) { return id >= 0 && id < GT_N ? tensor_names[id] : NULL; }

int grade_tensor_find(const char *name)
{
	for (int i = 0; name && i < GT_N; i++)
		if (strcmp(name, tensor_names[i]) == 0)
			return i;
	return -1;
}

int grade_tensor_is_output(int id) { return id >= GT_PARTIAL_OUT && id <= GT_LSE; }

void grade_sources_init(grade_sources *s)
{
	memset(s, 0, sizeof *s);
	s->raw = TENSOR_NONE;
	s->base = GRADE_BASE_AUTO;
}

void grade_sources_free(grade_sources *s)
{
	if (!s)
		return;
	for (int i = 0; i < GT_N; i++) {
		free(s->file[i]);
		free(s->name[i]);
	}
	grade_sources_init(s);
}

static int ends_with(const char *s, const char *tail)
{
	const size_t n = strlen(s), k = strlen(tail);
	return n >= k && strcmp(s + n - k, tail) == 0;
}

/* Replaces tensor id's file and name (name may be NULL); takes both. */
static void put(grade_sources *s, int id, char *file, char *name, int given)
{
	free(s->file[id]);
	free(s->name[id]);
	s->file[id] = file;
	s->name[id] = name;
	s->given[id] = (unsigned char)given;
}

static int oom(message *e)
{
	msg_set(e, "skv grade: out of memory");
	return SKV_ENOMEM;
}

int grade_sources_dump(grade_sources *s, const char *path, const char *prefix, message *e)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		msg_set(e, "skv grade: %s: cannot open: %s", path, strerror(errno));
		return SKV_EIO;
	}
	const int dir = S_ISDIR(st.st_mode);
	if (!dir && !(S_ISREG(st.st_mode) && ends_with(path, ".safetensors"))) {
		msg_set(e, "skv grade: %s: neither a folder of .npy files nor a .safetensors file (a manifest is "
			   "--manifest=FILE)", path);
		return SKV_EINVAL;
	}
	for (int id = 0; id < GT_N; id++) {
		const int pre = prefix && grade_tensor_is_output(id);
		char *file = NULL, *name = NULL;
		int n;
		if (dir) {
			n = pre ? asprintf(&file, "%s/%s.%s.npy", path, prefix, tensor_names[id])
				: asprintf(&file, "%s/%s.npy", path, tensor_names[id]);
			if (n < 0)
				file = NULL;
		} else {
			file = strdup(path);
			n = pre ? asprintf(&name, "%s.%s", prefix, tensor_names[id])
				: (name = strdup(tensor_names[id])) ? 0 : -1;
			if (n < 0)
				name = NULL;
			if (!file)
				n = -1;
		}
		if (n < 0) {
			free(file);
			free(name);
			return oom(e);
		}
		/* in a folder the optional tensors are the files that exist; q, k
		 * and v are looked for whatever, so a missing one is named */
		if (dir && id != GT_Q && id != GT_K && id != GT_V && stat(file, &st) != 0) {
			free(file);
			continue;
		}
		put(s, id, file, name, 0);
	}
	return SKV_OK;
}

int grade_sources_set(grade_sources *s, int id, const char *value, const char *dir, message *e)
{
	const char *colon = strrchr(value, ':');
	size_t flen = strlen(value);
	/* FILE:NAME only after a .safetensors file, so colons elsewhere in a
	 * path stay part of it */
	if (colon && (size_t)(colon - value) >= 12 && strncmp(colon - 12, ".safetensors", 12) == 0)
		flen = (size_t)(colon - value);
	if (flen == 0 || (flen < strlen(value) && !colon[1])) {
		msg_set(e, "skv grade: --%s=%s: expected FILE or FILE.safetensors:NAME", tensor_names[id], value);
		return SKV_EINVAL;
	}
	char *file = NULL, *name = flen < strlen(value) ? strdup(colon + 1) : NULL;
	const int rel = dir && *dir && value[0] != '/';
	if (asprintf(&file, "%s%s%.*s", rel ? dir : "", rel ? "/" : "", (int)flen, value) < 0)
		file = NULL;
	if (!file || (flen < strlen(value) && !name)) {
		free(file);
		free(name);
		return oom(e);
	}
	put(s, id, file, name, 1);
	return SKV_OK;
}

/* ------------------------------------------------------------ manifest */

enum { MK_RAW = GT_N, MK_BASE, MK_SCALE, MK_N };
static const char *const extra_keys[] = {"raw", "lse-base", "scale"};
#define MANIFEST_LINE_MAX 4096
#define MANIFEST_FILE_MAX (1u << 20)

static int key_id(const char *k)
{
	const int t = grade_tensor_find(k);
	if (t >= 0)
		return t;
	for (int i = 0; i < MK_N - GT_N; i++)
		if (strcmp(k, extra_keys[i]) == 0)
			return GT_N + i;
	return -1;
}

/* The raw formats: numpy has no bf16 or fp8 dtype (f16 for the files
 * whose f2 data was saved as u2). */
static int parse_raw(tensor_dtype *dt, const char *v)
{
	tensor_dtype x;
	if (tensor_dtype_parse(&x, v) != SKV_OK || !tensor_dtype_is_float(x) || tensor_dtype_size(x) > 2)
		return SKV_EINVAL;
	*dt = x;
	return SKV_OK;
}

static int parse_base(int *b, const char *v)
{
	const int x = strcmp(v, "e") == 0 ? SKV_BASE_E : strcmp(v, "2") == 0 ? SKV_BASE_2
						   : strcmp(v, "auto") == 0 ? GRADE_BASE_AUTO : -2;
	if (x == -2)
		return SKV_EINVAL;
	*b = x;
	return SKV_OK;
}

/* A positive finite number, decimal or C hexadecimal, nothing around it. */
static int parse_scale(double *x, const char *v)
{
	char *end;
	if (!*v || strpbrk(v, "nNiI \t"))
		return SKV_EINVAL; /* no inf, nan or blanks */
	errno = 0;
	const double r = strtod(v, &end);
	if (end == v || *end || !isfinite(r) || !(r > 0))
		return SKV_EINVAL;
	*x = r;
	return SKV_OK;
}

/* The value of an option key (MK_RAW, MK_BASE, MK_SCALE) into s. */
static int option_set(grade_sources *s, int id, const char *v)
{
	return id == MK_RAW ? parse_raw(&s->raw, v) : id == MK_BASE ? parse_base(&s->base, v)
		: id == MK_SCALE ? parse_scale(&s->scale, v) : SKV_EINVAL;
}

int grade_sources_option(grade_sources *s, const char *key, const char *value)
{
	const size_t b = strspn(value, " \t");
	size_t n = strlen(value + b);
	while (n > 0 && (value[b + n - 1] == ' ' || value[b + n - 1] == '\t'))
		n--;
	char *v = strndup(value + b, n);
	if (!v)
		return SKV_ENOMEM;
	const int id = key_id(key), st = id >= GT_N ? option_set(s, id, v) : SKV_EINVAL;
	free(v);
	return st;
}

static int line_err(message *e, const char *label, size_t line, const char *what, const char *v)
{
	msg_set(e, "skv grade: %s:%zu: %s%s%s%s", label, line, what, v ? " '" : "", v ? v : "", v ? "'" : "");
	return SKV_EINVAL;
}

/* One "KEY = VALUE" line (already cut and trimmed at its ends). */
static int manifest_line(grade_sources *s, unsigned char *seen, char *text, const char *label, size_t line,
			 const char *dir, message *e)
{
	char *eq = strchr(text, '=');
	if (!eq)
		return line_err(e, label, line, "expected KEY = VALUE, found", text);
	char *k = text, *v = eq + 1, *ke = eq;
	while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
		ke--;
	*ke = '\0';
	v += strspn(v, " \t");
	const int id = key_id(k);
	if (id < 0)
		return line_err(e, label, line, "unknown key (q, k, v, partial_out, partial_lse, out, lse, splits, "
					      "raw, lse-base, scale):", k);
	if (seen[id])
		return line_err(e, label, line, "repeated key", k);
	seen[id] = 1;
	if (!*v)
		return line_err(e, label, line, "no value for", k);
	if (id < GT_N) {
		const int st = grade_sources_set(s, id, v, dir, e);
		if (st == SKV_EINVAL)
			return line_err(e, label, line, "expected FILE or FILE.safetensors:NAME, found", v);
		return st;
	}
	static const char *const why[] = {"raw is one of bf16, f16, e4m3, e5m2, not",
					  "lse-base is one of e, 2, auto, not", "scale is a positive finite number, not"};
	return option_set(s, id, v) == SKV_OK ? SKV_OK : line_err(e, label, line, why[id - GT_N], v);
}

static int sources_copy(grade_sources *d, const grade_sources *s)
{
	*d = *s;
	for (int i = 0; i < GT_N; i++) {
		d->file[i] = s->file[i] ? strdup(s->file[i]) : NULL;
		d->name[i] = s->name[i] ? strdup(s->name[i]) : NULL;
		if ((s->file[i] && !d->file[i]) || (s->name[i] && !d->name[i])) {
			grade_sources_free(d);
			return SKV_ENOMEM;
		}
	}
	return SKV_OK;
}

/* The lines of text[0..len) into c; each cut, trimmed and handed over. */
static int manifest_lines(grade_sources *c, const char *text, size_t len, const char *label, const char *dir,
			  message *e)
{
	unsigned char seen[MK_N] = {0};
	char buf[MANIFEST_LINE_MAX + 2];
	size_t line = 0;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		const size_t end = nl ? (size_t)(nl - text) : len, n = end - at;
		line++;
		if (n > MANIFEST_LINE_MAX)
			return line_err(e, label, line, "line longer than 4096 bytes", NULL);
		if (memchr(text + at, '\0', n))
			return line_err(e, label, line, "a NUL byte in the line", NULL);
		memcpy(buf, text + at, n);
		buf[n] = '\0';
		at = end + 1;
		size_t k = n;
		while (k > 0 && (buf[k - 1] == ' ' || buf[k - 1] == '\t' || buf[k - 1] == '\r'))
			buf[--k] = '\0';
		char *t = buf + strspn(buf, " \t");
		if (!*t || *t == '#')
			continue;
		const int st = manifest_line(c, seen, t, label, line, dir, e);
		if (st != SKV_OK)
			return st;
	}
	return SKV_OK;
}

int grade_manifest_parse(grade_sources *s, const char *text, size_t len, const char *label, const char *dir,
			 message *e)
{
	grade_sources c;
	if (sources_copy(&c, s) != SKV_OK)
		return oom(e);
	const int st = manifest_lines(&c, text, len, label ? label : "<manifest>", dir, e);
	if (st != SKV_OK) {
		grade_sources_free(&c);
		return st;
	}
	grade_sources_free(s);
	*s = c;
	return SKV_OK;
}

int grade_manifest_read(grade_sources *s, const char *path, message *e)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int st = tensor_read_file(&buf, &len, path, e);
	if (st != SKV_OK)
		return st;
	if (len > MANIFEST_FILE_MAX) {
		free(buf);
		msg_set(e, "skv grade: %s: a manifest of %zu bytes (at most %u)", path, len, MANIFEST_FILE_MAX);
		return SKV_EINVAL;
	}
	/* relative paths are the manifest's folder's */
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : NULL;
	if (slash && !dir) {
		free(buf);
		return oom(e);
	}
	st = grade_manifest_parse(s, (const char *)buf, len, path, dir, e);
	free(dir);
	free(buf);
	return st;
}
