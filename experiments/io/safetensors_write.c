/* safetensors_write.c - writer of .safetensors files, laid out like the reference writer's (aligned, padded header). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/tensors.h"

/* Layout, after huggingface/safetensors safetensors/src/tensor.rs (commit
 * 45c8c2c, prepare(), which sorts by decreasing dtype alignment, then by
 * name): tensors sorted by decreasing element size, then by name, packed
 * one after the other from offset 0; the JSON header padded with spaces to a
 * multiple of 8 bytes. With element sizes powers of two, decreasing size
 * puts every tensor at a multiple of its own size. */

typedef struct {
	char *s;
	size_t n, cap;
	int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t c = b->cap ? b->cap : 256;
		while (c < b->n + n + 1 && c < SIZE_MAX / 2)
			c *= 2;
		char *g = c >= b->n + n + 1 ? realloc(b->s, c) : NULL;
		if (!g) {
			b->oom = 1;
			return;
		}
		b->s = g, b->cap = c;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
	char t[128];
	va_list ap;
	va_start(ap, fmt);
	const int n = vsnprintf(t, sizeof t, fmt, ap);
	va_end(ap);
	sb_put(b, t, n > 0 ? (size_t)n : 0);
}

/* RFC 8259 section 7: '"', '\\' and control bytes escaped; UTF-8 as is. */
static void sb_string(sbuf *b, const char *s)
{
	sb_put(b, "\"", 1);
	for (; *s; s++) {
		const unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			sb_printf(b, "\\%c", c);
		else if (c < 0x20)
			sb_printf(b, "\\u%04x", c);
		else
			sb_put(b, s, 1);
	}
	sb_put(b, "\"", 1);
}

static int by_size_name(const void *a, const void *b)
{
	const tensor *x = *(const tensor *const *)a, *y = *(const tensor *const *)b;
	const size_t sx = tensor_dtype_size(x->dtype), sy = tensor_dtype_size(y->dtype);
	return sx != sy ? (sx > sy ? -1 : 1) : strcmp(x->name, y->name);
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first name that appears twice among n, or NULL (sorts names). */
static const char *duplicate(const char **names, size_t n)
{
	if (n < 2)
		return NULL; /* and names may be NULL: not for qsort */
	qsort(names, n, sizeof *names, by_str);
	for (size_t i = 1; i < n; i++)
		if (strcmp(names[i - 1], names[i]) == 0)
			return names[i];
	return NULL;
}

static int valid_text(const char *s)
{
	return s && tensor_utf8_valid((const unsigned char *)s, strlen(s));
}

/* Names, keys, formats and shapes, before anything is laid out. */
static int check_input(const tensor *ts, size_t n, const tensor_meta *meta, size_t nm,
		       const char *label, message *e)
{
	const size_t most = n > nm ? n : nm;
	const char **names = most ? malloc(most * sizeof *names) : NULL, *dup;
	size_t count;
	if (most && !names)
		return tensor_errf(e, SKV_ENOMEM, label, NULL, "out of memory");
	int st = SKV_OK;
	for (size_t i = 0; !st && i < n; i++) {
		const tensor *t = &ts[i];
		names[i] = t->name;
		if (!valid_text(t->name) || !*t->name || strcmp(t->name, "__metadata__") == 0)
			st = tensor_errf(e, SKV_EINVAL, label, t->name ? t->name : "(null)",
					 "name is empty, not UTF-8 or reserved");
		else if (!tensor_dtype_size(t->dtype) || t->rank > TENSOR_MAX_RANK ||
			 tensor_count(&count, t->rank, t->shape) || count != t->count ||
			 count > SIZE_MAX / 8 || (count && !t->values))
			st = tensor_errf(e, SKV_EINVAL, label, t->name, "bad format, shape or values");
	}
	if (!st && (dup = duplicate(names, n)))
		st = tensor_errf(e, SKV_EINVAL, label, dup, "duplicate tensor name");
	for (size_t i = 0; !st && i < nm; i++) {
		names[i] = meta[i].key;
		if (!valid_text(meta[i].key) || !valid_text(meta[i].value))
			st = tensor_errf(e, SKV_EINVAL, label, NULL,
					 "__metadata__ entry %zu is missing or not UTF-8", i);
	}
	if (!st && (dup = duplicate(names, nm)))
		st = tensor_errf(e, SKV_EINVAL, label, NULL, "__metadata__ has the key \"%.200s\" twice",
				 dup);
	free(names);
	return st;
}

/* The header JSON for tensors in the order ord, padded to a multiple of 8;
 * *total receives the data buffer's size. */
static void header_json(sbuf *b, size_t *total, const tensor **ord, size_t n,
			const tensor_meta *meta, size_t nm)
{
	sb_put(b, "{", 1);
	if (nm) {
		sb_put(b, "\"__metadata__\":{", 16);
		for (size_t i = 0; i < nm; i++) {
			sb_put(b, ",", i ? 1 : 0);
			sb_string(b, meta[i].key);
			sb_put(b, ":", 1);
			sb_string(b, meta[i].value);
		}
		sb_put(b, "}", 1);
	}
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		const tensor *t = ord[i];
		const size_t nb = t->count * tensor_dtype_size(t->dtype);
		sb_put(b, ",", i || nm ? 1 : 0);
		sb_string(b, t->name);
		sb_printf(b, ":{\"dtype\":\"%s\",\"shape\":[", tensor_dtype_st_name(t->dtype));
		for (size_t d = 0; d < t->rank; d++)
			sb_printf(b, "%s%zu", d ? "," : "", t->shape[d]);
		sb_printf(b, "],\"data_offsets\":[%zu,%zu]}", at, at + nb);
		at = at + nb < at ? SIZE_MAX : at + nb; /* saturates; checked by the caller */
	}
	sb_put(b, "}", 1);
	while (!b->oom && b->n % 8)
		sb_put(b, " ", 1);
	*total = at;
}

int safetensors_write_mem(unsigned char **buf, size_t *len, const tensor *ts, size_t n,
			  const tensor_meta *meta, size_t nmeta, const char *label, message *e)
{
	int st = check_input(ts, n, meta, nmeta, label, e);
	if (st)
		return st;
	const tensor **ord = n ? malloc(n * sizeof *ord) : NULL;
	sbuf h = {0};
	size_t total = 0, bad;
	unsigned char *b = NULL;
	if (n && !ord)
		return tensor_errf(e, SKV_ENOMEM, label, NULL, "out of memory");
	for (size_t i = 0; i < n; i++)
		ord[i] = &ts[i];
	if (n)
		qsort(ord, n, sizeof *ord, by_size_name);
	header_json(&h, &total, ord, n, meta, nmeta);
	if (h.oom || total > SIZE_MAX - 8 - h.n || !(b = malloc(8 + h.n + total + 1)))
		st = tensor_errf(e, SKV_ENOMEM, label, NULL, "cannot lay out %zu data bytes",
				 total);
	for (int k = 0; !st && k < 8; k++)
		b[k] = (unsigned char)((uint64_t)h.n >> (8 * k));
	if (!st)
		memcpy(b + 8, h.s, h.n);
	for (size_t i = 0, at = 8 + h.n; !st && i < n; i++) {
		const tensor *t = ord[i];
		if (tensor_encode_buf(b + at, &bad, t->values, t->count, t->dtype))
			st = tensor_value_errf(e, SKV_ERANGE, label, t, bad,
					       "is not exactly representable");
		at += t->count * tensor_dtype_size(t->dtype);
	}
	if (!st) {
		*buf = b;
		*len = 8 + h.n + total;
	} else
		free(b);
	free(h.s);
	free(ord);
	return st;
}

int safetensors_write(const char *path, const tensor *ts, size_t n, const tensor_meta *meta,
		      size_t nmeta, message *e)
{
	unsigned char *buf;
	size_t len;
	int st = safetensors_write_mem(&buf, &len, ts, n, meta, nmeta, path, e);
	if (st)
		return st;
	st = tensor_write_file(path, buf, len, e);
	free(buf);
	return st;
}
