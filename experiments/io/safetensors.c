/* safetensors.c - strict reader and writer of .safetensors files, with the minimal strict JSON their header needs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/tensors.h"

/* The format, as huggingface/safetensors README.md ("Format") and its
 * reference reader safetensors/src/tensor.rs (commit 45c8c2c:
 * read_metadata, Metadata::validate) define it:
 *   - 8 bytes: N, a little-endian u64, the size of the header; N is capped at
 *     100,000,000 (MAX_HEADER_SIZE);
 *   - N bytes: a UTF-8 JSON object mapping tensor names to {"dtype": "F16",
 *     "shape": [1, 16, 256], "data_offsets": [BEGIN, END]}, offsets relative
 *     to the start of the byte buffer, END one past the last byte; a special
 *     key "__metadata__" holds a free string-to-string map; duplicate keys
 *     are disallowed; the reference writer pads the header with spaces to a
 *     multiple of 8;
 *   - the rest of the file: the byte buffer. Little-endian, C order, no
 *     strides. Sorted by offsets the tensors must tile it exactly: each
 *     begins where the previous ended, END - BEGIN = elements * dtype size
 *     (overflow-checked), and the last END is the buffer's size. Empty
 *     tensors (an extent 0) and shape [] (a scalar) are allowed.
 * The JSON accepted is RFC 8259 restricted to what that header needs: objects,
 * arrays of non-negative integers, strings (escapes, \uXXXX with surrogate
 * pairs; a lone surrogate or \u0000 is refused); no true/false/null,
 * fractions, exponents, minus signs, duplicate keys, unknown keys in a tensor
 * entry, nesting beyond the schema, or bytes after the object but spaces. */

typedef struct {
	const unsigned char *s;
	size_t n, i; /* the header and the cursor; file offset = 8 + i */
	const char *file, *name;
	message *e;
} js;

static int js_fail(js *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int js_fail(js *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tensor_errf(p->e, SKV_EINVAL, p->file, p->name, "header byte %zu: %s",
			   8 + p->i, msg);
}

static void js_ws(js *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
			       p->s[p->i] == '\r'))
		p->i++;
}

static int js_eat(js *p, char c)
{
	js_ws(p);
	if (p->i < p->n && p->s[p->i] == c) {
		p->i++;
		return 1;
	}
	return 0;
}

static int hex4(const unsigned char *s, unsigned *v)
{
	*v = 0;
	for (int k = 0; k < 4; k++) {
		const unsigned c = s[k];
		const int d = c >= '0' && c <= '9' ? (int)c - '0' : c >= 'a' && c <= 'f' ? (int)c - 'a' + 10
				  : c >= 'A' && c <= 'F'   ? (int)c - 'A' + 10
							   : -1;
		if (d < 0)
			return 0;
		*v = *v << 4 | (unsigned)d;
	}
	return 1;
}

/* One escape after '\\' at p->i; the code point's UTF-8 goes to d. RFC 8259
 * section 7: a code point above U+FFFF is a surrogate pair \uD8xx\uDCxx. */
static int js_escape(js *p, char *d, size_t *k)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e = p->i + 1 < p->n ? strchr(from, p->s[p->i + 1]) : NULL;
	if (e && *e) {
		d[(*k)++] = to[e - from];
		p->i += 2;
		return SKV_OK;
	}
	unsigned cp, lo;
	if (p->i + 6 > p->n || p->s[p->i + 1] != 'u' || !hex4(p->s + p->i + 2, &cp))
		return js_fail(p, "bad escape in a string");
	p->i += 6;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return js_fail(p, "lone low surrogate \\u%04X", cp);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (p->i + 6 > p->n || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u' ||
		    !hex4(p->s + p->i + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
			return js_fail(p, "high surrogate \\u%04X without its low half", cp);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		p->i += 6;
	}
	if (cp == 0)
		return js_fail(p, "\\u0000 in a string");
	const int len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	static const unsigned char lead[5] = {0, 0, 0xc0, 0xe0, 0xf0};
	for (int j = len - 1; j > 0; j--, cp >>= 6)
		d[*k + (size_t)j] = (char)(0x80 | (cp & 0x3f));
	d[*k] = (char)(lead[len] | cp);
	*k += (size_t)len;
	return SKV_OK;
}

/* A string into a malloc'd NUL-terminated *out. First pass: find the closing
 * quote, so the buffer is the raw length (decoding never lengthens). */
static int js_string(js *p, char **out)
{
	js_ws(p);
	if (p->i >= p->n || p->s[p->i] != '"')
		return js_fail(p, "expected a string");
	size_t end = ++p->i;
	while (end < p->n && p->s[end] != '"')
		end += p->s[end] == '\\' ? 2 : 1;
	if (end >= p->n)
		return js_fail(p, "unterminated string");
	char *d = malloc(end - p->i + 1);
	size_t k = 0;
	if (!d)
		return tensor_errf(p->e, SKV_ENOMEM, p->file, p->name, "out of memory");
	while (p->i < end) {
		const unsigned char c = p->s[p->i];
		size_t len = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
		int st = SKV_OK;
		if (c < 0x20)
			st = js_fail(p, "control byte 0x%02x in a string", c);
		else if (c == '\\')
			st = js_escape(p, d, &k);
		else if (len > end - p->i || !tensor_utf8_valid(p->s + p->i, len))
			st = js_fail(p, "invalid UTF-8 in a string");
		else {
			memcpy(d + k, p->s + p->i, len);
			k += len, p->i += len;
		}
		if (st) {
			free(d);
			return st;
		}
	}
	p->i = end + 1;
	d[k] = 0;
	*out = d;
	return SKV_OK;
}

/* A JSON number that must be a non-negative integer of at most 64 bits. */
static int js_uint(js *p, uint64_t *v, const char *what)
{
	js_ws(p);
	const size_t start = p->i;
	uint64_t x = 0;
	if (p->i < p->n && p->s[p->i] == '-')
		return js_fail(p, "%s is negative", what);
	for (; p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9'; p->i++) {
		const unsigned d = p->s[p->i] - '0';
		if (x > (UINT64_MAX - d) / 10)
			return js_fail(p, "%s overflows 64 bits", what);
		x = x * 10 + d;
	}
	if (p->i == start)
		return js_fail(p, "%s is not an integer", what);
	if (p->s[start] == '0' && p->i - start > 1)
		return js_fail(p, "%s has a leading zero", what);
	if (p->i < p->n && (p->s[p->i] == '.' || p->s[p->i] == 'e' || p->s[p->i] == 'E'))
		return js_fail(p, "%s is not an integer", what);
	*v = x;
	return SKV_OK;
}

/* [n, n, ...] with at most max entries. */
static int js_uints(js *p, uint64_t *v, size_t max, size_t *n, const char *what)
{
	int st;
	*n = 0;
	if (!js_eat(p, '['))
		return js_fail(p, "%s is not an array", what);
	if (js_eat(p, ']'))
		return SKV_OK;
	do {
		if (*n == max)
			return js_fail(p, "%s has more than %zu entries", what, max);
		if ((st = js_uint(p, &v[(*n)++], what)))
			return st;
	} while (js_eat(p, ','));
	return js_eat(p, ']') ? SKV_OK : js_fail(p, "expected ',' or ']' in %s", what);
}

/* ------------------------------------------------------------ the schema */

typedef struct {
	char *name;
	tensor_dtype dt;
	char file_dtype[16];
	size_t rank, shape[TENSOR_MAX_RANK];
	uint64_t begin, end;
} entry;

typedef struct {
	entry *e;
	size_t n, cap;
	tensor_meta *m;
	size_t nm, capm;
	int has_meta;
} parsed;

static void parsed_free(parsed *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->e[i].name);
	for (size_t i = 0; i < h->nm; i++)
		free(h->m[i].key), free(h->m[i].value);
	free(h->e);
	free(h->m);
}

/* Grows *v (elements of sz bytes) so that n + 1 fit. */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return 1;
	const size_t c = *cap ? 2 * *cap : 8;
	void *g = c < SIZE_MAX / sz ? realloc(*v, c * sz) : NULL;
	if (!g)
		return 0;
	*v = g;
	*cap = c;
	return 1;
}

static int parse_dtype(js *p, entry *e)
{
	char *s;
	int st = js_string(p, &s), k = 0;
	if (st)
		return st;
	while (k < TENSOR_NDTYPES && strcmp(s, tensor_dtype_st_name((tensor_dtype)k)) != 0)
		k++;
	if (k == TENSOR_NDTYPES)
		st = js_fail(p, "unsupported dtype \"%.40s\" (skv reads F16, BF16, F32, F64, F8_E4M3, "
				"F8_E5M2, I8..I64, U8..U64)", s);
	else {
		e->dt = (tensor_dtype)k;
		snprintf(e->file_dtype, sizeof e->file_dtype, "%s", s);
	}
	free(s);
	return st;
}

static int parse_shape(js *p, entry *e)
{
	uint64_t v[TENSOR_MAX_RANK];
	size_t n;
	int st = js_uints(p, v, TENSOR_MAX_RANK, &n, "shape");
	for (size_t d = 0; !st && d < n; d++) {
		if (v[d] > SIZE_MAX)
			return js_fail(p, "shape extent %llu too large", (unsigned long long)v[d]);
		e->shape[d] = (size_t)v[d];
	}
	e->rank = n;
	return st;
}

static int parse_offsets(js *p, entry *e)
{
	uint64_t v[2];
	size_t n;
	int st = js_uints(p, v, 2, &n, "data_offsets");
	if (!st && n != 2)
		return js_fail(p, "data_offsets has %zu entries, not 2", n);
	e->begin = v[0];
	e->end = v[1];
	return st;
}

/* {"dtype": ..., "shape": [...], "data_offsets": [b, e]}, each key once. */
static int parse_entry(js *p, entry *e)
{
	static const char *const keys[3] = {"dtype", "shape", "data_offsets"};
	int seen[3] = {0, 0, 0}, st;
	if (!js_eat(p, '{'))
		return js_fail(p, "a tensor entry is not an object");
	if (js_eat(p, '}'))
		return js_fail(p, "empty tensor entry");
	do {
		char *key;
		int k = 0;
		if ((st = js_string(p, &key)))
			return st;
		while (k < 3 && strcmp(key, keys[k]) != 0)
			k++;
		free(key);
		if (k == 3)
			return js_fail(p, "unknown key in a tensor entry (the keys are dtype, shape, data_offsets)");
		if (seen[k]++)
			return js_fail(p, "duplicate key \"%s\"", keys[k]);
		if (!js_eat(p, ':'))
			return js_fail(p, "expected ':'");
		st = k == 0 ? parse_dtype(p, e) : k == 1 ? parse_shape(p, e) : parse_offsets(p, e);
		if (st)
			return st;
	} while (js_eat(p, ','));
	if (!js_eat(p, '}'))
		return js_fail(p, "expected ',' or '}' in a tensor entry");
	if (!seen[0] || !seen[1] || !seen[2])
		return js_fail(p, "tensor entry has no \"%s\"", keys[!seen[0] ? 0 : !seen[1] ? 1 : 2]);
	return SKV_OK;
}

/* "__metadata__": {"key": "value", ...}; values must be strings. */
static int parse_meta(js *p, parsed *h)
{
	int st;
	if (!js_eat(p, '{'))
		return js_fail(p, "__metadata__ is not an object");
	if (js_eat(p, '}'))
		return SKV_OK;
	do {
		if (!grow((void **)&h->m, &h->capm, h->nm, sizeof *h->m))
			return tensor_errf(p->e, SKV_ENOMEM, p->file, NULL, "out of memory");
		tensor_meta *m = &h->m[h->nm];
		m->key = m->value = NULL;
		h->nm++;
		if ((st = js_string(p, &m->key)))
			return st;
		if (!js_eat(p, ':'))
			return js_fail(p, "expected ':'");
		js_ws(p);
		if (p->i < p->n && p->s[p->i] != '"')
			return js_fail(p, "__metadata__ value is not a string");
		if ((st = js_string(p, &m->value)))
			return st;
	} while (js_eat(p, ','));
	return js_eat(p, '}') ? SKV_OK : js_fail(p, "expected ',' or '}' in __metadata__");
}

static int parse_header(js *p, parsed *h)
{
	int st;
	if (p->n == 0 || p->s[0] != '{')
		return js_fail(p, "header does not begin with '{'");
	p->i = 1;
	if (!js_eat(p, '}')) {
		do {
			char *key;
			p->name = NULL;
			if ((st = js_string(p, &key)))
				return st;
			if (strcmp(key, "__metadata__") == 0) {
				free(key);
				if (h->has_meta++)
					return js_fail(p, "duplicate key \"__metadata__\"");
				st = js_eat(p, ':') ? parse_meta(p, h) : js_fail(p, "expected ':'");
			} else if (!grow((void **)&h->e, &h->cap, h->n, sizeof *h->e)) {
				free(key);
				return tensor_errf(p->e, SKV_ENOMEM, p->file, NULL, "out of memory");
			} else {
				entry *e = &h->e[h->n++];
				memset(e, 0, sizeof *e);
				e->name = key;
				p->name = key;
				st = js_eat(p, ':') ? parse_entry(p, e) : js_fail(p, "expected ':'");
			}
			if (st)
				return st;
		} while (js_eat(p, ','));
		p->name = NULL;
		if (!js_eat(p, '}'))
			return js_fail(p, "expected ',' or '}'");
	}
	js_ws(p);
	return p->i == p->n ? SKV_OK : js_fail(p, "bytes after the header's object");
}

/* ------------------------------------------------------------- reading */

static int by_name(const void *a, const void *b)
{
	return strcmp((*(entry *const *)a)->name, (*(entry *const *)b)->name);
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const tensor_meta *)a)->key, ((const tensor_meta *)b)->key);
}

/* By offsets, ties in header order (the entries share one array). */
static int by_offsets(const void *a, const void *b)
{
	const entry *x = *(entry *const *)a, *y = *(entry *const *)b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Each entry's byte count against its shape and dtype (overflow-checked:
 * count <= SIZE_MAX / 8 so count * size fits), then names and keys unique,
 * then the tiling of the buffer in offset order. */
static int validate(entry **ord, parsed *h, size_t buflen, const char *file, message *msg)
{
	char shp[TENSOR_MAX_RANK * 22 + 4];
	for (size_t i = 0; i < h->n; i++) {
		entry *e = ord[i] = &h->e[i];
		size_t count;
		const unsigned long long b = e->begin, x = e->end;
		tensor_shape_str(shp, sizeof shp, e->rank, e->shape);
		if (tensor_count(&count, e->rank, e->shape) || count > SIZE_MAX / 8)
			return tensor_errf(msg, SKV_EINVAL, file, e->name,
					   "shape %s: element count overflows", shp);
		const uint64_t need = (uint64_t)count * tensor_dtype_size(e->dt);
		if (x < b)
			return tensor_errf(msg, SKV_EINVAL, file, e->name,
					   "data_offsets [%llu, %llu) end before they begin", b, x);
		if (x - b != need)
			return tensor_errf(msg, SKV_EINVAL, file, e->name,
					   "data_offsets [%llu, %llu) hold %llu bytes, shape %s of %s needs %llu",
					   b, x, x - b, shp, e->file_dtype, (unsigned long long)need);
		if (x > buflen)
			return tensor_errf(msg, SKV_EINVAL, file, e->name,
					   "data_offsets [%llu, %llu) run past the end of the %zu-byte data buffer",
					   b, x, buflen);
	}
	if (h->n) /* qsort's base may not be NULL, even for 0 elements */
		qsort(ord, h->n, sizeof *ord, by_name);
	for (size_t i = 1; i < h->n; i++)
		if (strcmp(ord[i - 1]->name, ord[i]->name) == 0)
			return tensor_errf(msg, SKV_EINVAL, file, ord[i]->name, "duplicate tensor name");
	if (h->nm)
		qsort(h->m, h->nm, sizeof *h->m, by_key);
	for (size_t i = 1; i < h->nm; i++)
		if (strcmp(h->m[i - 1].key, h->m[i].key) == 0)
			return tensor_errf(msg, SKV_EINVAL, file, NULL,
					   "__metadata__ has the key \"%.200s\" twice", h->m[i].key);
	if (h->n)
		qsort(ord, h->n, sizeof *ord, by_offsets);
	uint64_t at = 0;
	for (size_t i = 0; i < h->n; i++) {
		const entry *e = ord[i], *q = i ? ord[i - 1] : NULL;
		if (e->begin < at)
			return tensor_errf(msg, SKV_EINVAL, file, e->name,
					   "data_offsets [%llu, %llu) overlap those of tensor \"%.200s\" [%llu, %llu)",
					   (unsigned long long)e->begin, (unsigned long long)e->end, q->name,
					   (unsigned long long)q->begin, (unsigned long long)q->end);
		if (e->begin > at)
			return tensor_errf(msg, SKV_EINVAL, file, e->name,
					   "data_offsets begin at %llu, leaving bytes [%llu, %llu) of the buffer "
					   "unused (the data must be contiguous)",
					   (unsigned long long)e->begin, (unsigned long long)at,
					   (unsigned long long)e->begin);
		at = e->end;
	}
	if (at != buflen)
		return tensor_errf(msg, SKV_EINVAL, file, NULL,
				   "the data buffer has %zu bytes, the tensors cover %llu: %zu bytes unaccounted for",
				   buflen, (unsigned long long)at, buflen - (size_t)at);
	return SKV_OK;
}

/* The tensors in offset order; names move from the entries. */
static int decode_all(tensor_set *s, entry **ord, size_t n, const unsigned char *data,
		      const tensor_read_opts *o, const char *file, message *msg)
{
	size_t bad;
	if (n && !(s->tensors = calloc(n, sizeof *s->tensors)))
		return tensor_errf(msg, SKV_ENOMEM, file, NULL, "out of memory");
	for (size_t i = 0; i < n; i++) {
		entry *e = ord[i];
		tensor *t = &s->tensors[i];
		t->name = e->name; /* owned by s from here, freed with it on error */
		e->name = NULL;
		s->ntensors = i + 1;
		t->dtype = e->dt;
		memcpy(t->file_dtype, e->file_dtype, sizeof t->file_dtype);
		t->rank = e->rank;
		memcpy(t->shape, e->shape, sizeof t->shape);
		tensor_count(&t->count, t->rank, t->shape); /* cannot fail: validated */
		if (t->count && !(t->values = malloc(t->count * sizeof *t->values)))
			return tensor_errf(msg, SKV_ENOMEM, file, t->name, "cannot hold %zu values",
					   t->count);
		if (tensor_decode_buf(t->values, &bad, data + e->begin, t->count, t->dtype, 0))
			return tensor_errf(msg, SKV_ERANGE, file, t->name,
					   "element %zu: an integer beyond 2^53, not exact in a double", bad);
		int st = o->finite ? tensor_check_finite(t, file, msg) : SKV_OK;
		if (st)
			return st;
	}
	return SKV_OK;
}

int safetensors_read_mem(tensor_set *out, const char *label, const unsigned char *buf, size_t len,
			 const tensor_read_opts *opts, message *e)
{
	const tensor_read_opts o = opts ? *opts : (tensor_read_opts){TENSOR_NONE, 0};
	if (len < 8)
		return tensor_errf(e, SKV_EINVAL, label, NULL,
				   "truncated: %zu bytes, less than the 8-byte header size", len);
	uint64_t n = 0;
	for (int k = 8; k-- > 0;)
		n = n << 8 | buf[k];
	if (n > SAFETENSORS_MAX_HEADER)
		return tensor_errf(e, SKV_EINVAL, label, NULL,
				   "header size %llu exceeds the cap of %u bytes (the reference reader's)",
				   (unsigned long long)n, SAFETENSORS_MAX_HEADER);
	if (n > len - 8)
		return tensor_errf(e, SKV_EINVAL, label, NULL,
				   "truncated: the header size says %llu bytes, %zu follow",
				   (unsigned long long)n, len - 8);
	js p = {.s = buf + 8, .n = (size_t)n, .file = label, .e = e};
	parsed h = {0};
	tensor_set s = {0};
	entry **ord = NULL;
	int st = parse_header(&p, &h);
	if (!st && h.n && !(ord = malloc(h.n * sizeof *ord)))
		st = tensor_errf(e, SKV_ENOMEM, label, NULL, "out of memory");
	if (!st)
		st = validate(ord, &h, len - 8 - (size_t)n, label, e);
	if (!st)
		st = decode_all(&s, ord, h.n, buf + 8 + n, &o, label, e);
	if (!st) {
		s.meta = h.m, s.nmeta = h.nm;
		h.m = NULL, h.nm = 0;
		*out = s;
	} else
		tensor_set_free(&s);
	free(ord);
	parsed_free(&h);
	return st;
}

int safetensors_read(tensor_set *out, const char *path, const tensor_read_opts *opts, message *e)
{
	unsigned char *buf;
	size_t len;
	int st = tensor_read_file(&buf, &len, path, e);
	if (st)
		return st;
	st = safetensors_read_mem(out, path, buf, len, opts, e);
	free(buf);
	return st;
}
