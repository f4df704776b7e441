/* npy.c - strict reader and writer of NumPy .npy files (format versions 1.0 to 3.0), written from the format's specification. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/tensors.h"

/* The format, as numpy/numpy numpy/lib/_format_impl.py (commit 0084bce,
 * module docstring, "Format Version 1.0" to "3.0") and NEP 1
 * (doc/neps/nep-0001-npy-format.rst) specify it:
 *   - 6 bytes, the magic string "\x93NUMPY"; 1 byte major, 1 byte minor
 *     version: 1.0, 2.0 or 3.0;
 *   - HEADER_LEN, a little-endian unsigned int of 2 bytes (1.0) or 4 (2.0,
 *     3.0);
 *   - HEADER_LEN bytes: a Python literal dict with exactly the keys 'descr'
 *     (dtype.str), 'fortran_order' (bool) and 'shape' (tuple of int),
 *     terminated by '\n' and padded with spaces so that the data begins on a
 *     multiple of 64 (ARRAY_ALIGN = 64 in format.py; NEP 1 says 16, which
 *     older files use). Text is latin1 in 1.0/2.0, utf8 in 3.0; the dicts
 *     skv can use are ASCII in every version;
 *   - the data: count * itemsize bytes, count the product of the shape (1 for
 *     ()), in C order or, when fortran_order, first index fastest.
 * Strict where numpy is lenient: a header that is not 16-byte aligned, a
 * missing final newline, bytes after the data, duplicate keys, Python 2 'L'
 * suffixes and escapes in strings are refused (numpy's writers never produce
 * them). Structured, complex, object and string dtypes are refused. */

#define NPY_ALIGN 16 /* accepted alignment: NEP 1's, a divisor of format.py's 64 */
#define NPY_WRITE_ALIGN 64

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* numpy dtype.str kinds and sizes skv reads; bf16 and fp8 ride in 'u'/'i'. */
static const struct {
	tensor_dtype dt;
	char kind;
	unsigned size;
} types[] = {
	{TENSOR_F16, 'f', 2}, {TENSOR_F32, 'f', 4}, {TENSOR_F64, 'f', 8}, {TENSOR_I8, 'i', 1},
	{TENSOR_I16, 'i', 2}, {TENSOR_I32, 'i', 4}, {TENSOR_I64, 'i', 8}, {TENSOR_U8, 'u', 1},
	{TENSOR_U16, 'u', 2}, {TENSOR_U32, 'u', 4}, {TENSOR_U64, 'u', 8},
};
#define NTYPES (sizeof types / sizeof types[0])

/* ---------------------------------------------- the header's dict literal */

typedef struct {
	const unsigned char *s;
	size_t n, i, base; /* base: offset of s in the file, for messages */
	const char *file, *name;
	message *e;
} lit;

typedef struct {
	char descr[16];
	int fortran;
	size_t rank, shape[TENSOR_MAX_RANK];
} header;

static int lit_fail(lit *p, const char *what)
{
	return tensor_errf(p->e, SKV_EINVAL, p->file, p->name, "header byte %zu: %s",
			   p->base + p->i, what);
}

static void skip_ws(lit *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n'))
		p->i++;
}

static int eat(lit *p, char c)
{
	skip_ws(p);
	if (p->i < p->n && p->s[p->i] == c) {
		p->i++;
		return 1;
	}
	return 0;
}

/* A Python string literal, '...' or "...", printable ASCII without escapes,
 * into dst (cap bytes with the NUL). */
static int py_string(lit *p, char *dst, size_t cap)
{
	skip_ws(p);
	if (p->i >= p->n || (p->s[p->i] != '\'' && p->s[p->i] != '"'))
		return lit_fail(p, "expected a quoted string");
	const unsigned char q = p->s[p->i++];
	size_t k = 0;
	for (; p->i < p->n && p->s[p->i] != q; p->i++, k++) {
		const unsigned char c = p->s[p->i];
		if (c == '\\' || c < 0x20 || c > 0x7e)
			return lit_fail(p, c == '\\' ? "escape sequence in a string"
						     : "string byte outside printable ASCII");
		if (k + 1 >= cap)
			return lit_fail(p, "string too long for a key or a supported descr");
		dst[k] = (char)c;
	}
	if (p->i >= p->n)
		return lit_fail(p, "unterminated string");
	p->i++;
	dst[k] = 0;
	return SKV_OK;
}

/* A non-negative decimal int literal as Python 3 writes it (no sign, no
 * leading zero, no '_', no 'L'), overflow-checked into size_t. */
static int py_int(lit *p, size_t *v)
{
	skip_ws(p);
	const size_t start = p->i;
	size_t x = 0;
	for (; p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9'; p->i++) {
		const size_t d = (size_t)(p->s[p->i] - '0');
		if (x > (SIZE_MAX - d) / 10)
			return lit_fail(p, "shape extent overflows");
		x = x * 10 + d;
	}
	if (p->i == start)
		return lit_fail(p, p->i < p->n && p->s[p->i] == '-' ? "negative shape extent"
								    : "expected an integer");
	if (p->s[start] == '0' && p->i - start > 1)
		return lit_fail(p, "integer with a leading zero");
	if (p->i < p->n && (p->s[p->i] == 'L' || p->s[p->i] == 'l'))
		return lit_fail(p, "Python 2 long suffix 'L' (save the file again with Python 3)");
	if (p->i < p->n && (p->s[p->i] == '_' || p->s[p->i] == '.' || p->s[p->i] == 'e'))
		return lit_fail(p, "shape extent is not a plain integer");
	*v = x;
	return SKV_OK;
}

/* A tuple of ints: "()", "(3,)", "(3, 4)", "(3, 4,)"; "(3)" is an int. */
static int py_shape(lit *p, header *h)
{
	if (!eat(p, '('))
		return lit_fail(p, "shape is not a tuple");
	h->rank = 0;
	if (eat(p, ')'))
		return SKV_OK;
	for (;;) {
		if (h->rank == TENSOR_MAX_RANK)
			return lit_fail(p, "shape has more dimensions than skv's limit of 8");
		int st = py_int(p, &h->shape[h->rank++]);
		if (st)
			return st;
		const int comma = eat(p, ',');
		if (eat(p, ')'))
			return comma || h->rank > 1 ? SKV_OK : lit_fail(p, "shape (n) is not a tuple");
		if (!comma)
			return lit_fail(p, "expected ',' or ')' in the shape");
	}
}

static int py_bool(lit *p, int *v)
{
	skip_ws(p);
	const size_t left = p->n - p->i;
	if (left >= 4 && memcmp(p->s + p->i, "True", 4) == 0)
		*v = 1, p->i += 4;
	else if (left >= 5 && memcmp(p->s + p->i, "False", 5) == 0)
		*v = 0, p->i += 5;
	else
		return lit_fail(p, "fortran_order is not True or False");
	return SKV_OK;
}

/* The dict: the three keys once each, in any order, trailing comma allowed;
 * then only whitespace up to the final newline. */
static int parse_dict(lit *p, header *h)
{
	static const char *const keys[3] = {"descr", "fortran_order", "shape"};
	int seen[3] = {0, 0, 0}, st;
	if (!eat(p, '{'))
		return lit_fail(p, "header is not a dict literal");
	while (!eat(p, '}')) {
		char key[16];
		int k = 0;
		skip_ws(p);
		if (p->i < p->n && p->s[p->i] != '\'' && p->s[p->i] != '"')
			return lit_fail(p, "expected a key or '}'");
		if ((st = py_string(p, key, sizeof key)))
			return st;
		while (k < 3 && strcmp(key, keys[k]) != 0)
			k++;
		if (k == 3)
			return lit_fail(p, "unknown key (the keys are descr, fortran_order, shape)");
		if (seen[k]++)
			return lit_fail(p, "duplicate key");
		if (!eat(p, ':'))
			return lit_fail(p, "expected ':'");
		skip_ws(p);
		if (k == 0 && p->i < p->n && (p->s[p->i] == '[' || p->s[p->i] == '('))
			return lit_fail(p, "structured dtypes are not supported");
		st = k == 0 ? py_string(p, h->descr, sizeof h->descr)
		     : k == 1 ? py_bool(p, &h->fortran)
			      : py_shape(p, h);
		if (st)
			return st;
		if (!eat(p, ',')) {
			if (!eat(p, '}'))
				return lit_fail(p, "expected ',' or '}'");
			break;
		}
	}
	if (!seen[0] || !seen[1] || !seen[2])
		return lit_fail(p, !seen[0] ? "no 'descr' key" : !seen[1] ? "no 'fortran_order' key"
								      : "no 'shape' key");
	skip_ws(p);
	return p->i == p->n ? SKV_OK : lit_fail(p, "bytes other than padding after the dict");
}

/* descr "<f4": byte order, kind, item size. '|' is numpy's "not applicable"
 * for 1-byte types; '=' (native) cannot be interpreted in a file. raw turns
 * an integer of the same size into that floating format. */
static int descr_type(tensor_dtype *dt, int *big, const char *d, tensor_dtype raw, lit *p)
{
	size_t k = NTYPES;
	if (strlen(d) == 3 && (d[0] == '<' || d[0] == '>' || d[0] == '|'))
		for (k = 0; k < NTYPES; k++)
			if (types[k].kind == d[1] && d[2] - '0' == (int)types[k].size)
				break;
	if (k == NTYPES || (d[0] == '|' && types[k].size != 1))
		return tensor_errf(p->e, SKV_EINVAL, p->file, p->name,
				   "unsupported dtype '%s' (skv reads f2, f4, f8, i1..i8, u1..u8)", d);
	*dt = types[k].dt;
	*big = d[0] == '>';
	if (raw == TENSOR_NONE || tensor_dtype_is_float(*dt))
		return SKV_OK;
	if (tensor_dtype_size(raw) != tensor_dtype_size(*dt))
		return tensor_errf(p->e, SKV_EINVAL, p->file, p->name,
				   "dtype '%s' holds %zu-bit elements, %s needs %zu-bit ones", d,
				   8 * tensor_dtype_size(*dt), tensor_dtype_name(raw),
				   8 * tensor_dtype_size(raw));
	*dt = raw;
	return SKV_OK;
}

/* ------------------------------------------------------------- reading */

/* Fortran order stores the first index fastest: walk the file's order with a
 * multi-index and the running C offset c = sum idx[k] * cstride[k]. */
static void fortran_to_c(double *dst, const double *src, size_t rank, const size_t *shape,
			 size_t count)
{
	size_t idx[TENSOR_MAX_RANK] = {0}, cstride[TENSOR_MAX_RANK], c = 0;
	for (size_t k = rank, s = 1; k-- > 0; s *= shape[k])
		cstride[k] = s;
	for (size_t f = 0; f < count; f++) {
		dst[c] = src[f];
		for (size_t k = 0; k < rank; k++) {
			c += cstride[k];
			if (++idx[k] < shape[k])
				break;
			c -= shape[k] * cstride[k];
			idx[k] = 0;
		}
	}
}

/* The tensor's name: the label's last path component without ".npy". */
static char *name_of(const char *label)
{
	const char *b = label ? strrchr(label, '/') : NULL;
	b = b ? b + 1 : label ? label : "array";
	size_t n = strlen(b);
	if (n > 4 && strcmp(b + n - 4, ".npy") == 0)
		n -= 4;
	if (n == 0)
		b = "array", n = 5;
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, b, n);
		s[n] = 0;
	}
	return s;
}

/* The prefix and header: checks in the order the bytes come, then the
 * dict. On success *off is the data's offset. */
static int read_header(header *h, size_t *off, const unsigned char *buf, size_t len, lit *p)
{
	const char *f = p->file, *nm = p->name;
	message *e = p->e;
	if (len < 10)
		return tensor_errf(e, SKV_EINVAL, f, nm, "truncated: %zu bytes, less than a .npy prefix",
				   len);
	if (memcmp(buf, magic, sizeof magic) != 0)
		return tensor_errf(e, SKV_EINVAL, f, nm, "not a .npy file (no \\x93NUMPY magic)");
	if (buf[6] < 1 || buf[6] > 3 || buf[7] != 0)
		return tensor_errf(e, SKV_EINVAL, f, nm, "format version %u.%u is not 1.0, 2.0 or 3.0",
				   buf[6], buf[7]);
	const size_t lf = buf[6] == 1 ? 2 : 4, pre = 8 + lf;
	if (len < pre)
		return tensor_errf(e, SKV_EINVAL, f, nm, "truncated in the header length");
	size_t hlen = 0;
	for (size_t k = lf; k-- > 0;)
		hlen = hlen << 8 | buf[8 + k];
	if (hlen > NPY_MAX_HEADER)
		return tensor_errf(e, SKV_EINVAL, f, nm,
				   "header of %zu bytes exceeds the cap of %d (numpy's default)", hlen,
				   NPY_MAX_HEADER);
	if (hlen > len - pre)
		return tensor_errf(e, SKV_EINVAL, f, nm,
				   "truncated: the header claims %zu bytes, %zu follow the prefix", hlen,
				   len - pre);
	if ((pre + hlen) % NPY_ALIGN)
		return tensor_errf(e, SKV_EINVAL, f, nm,
				   "header ends at byte %zu, not on the format's 16-byte boundary",
				   pre + hlen);
	if (hlen == 0 || buf[pre + hlen - 1] != '\n')
		return tensor_errf(e, SKV_EINVAL, f, nm, "header does not end in a newline");
	p->s = buf + pre;
	p->n = hlen;
	p->i = 0;
	p->base = pre;
	*off = pre + hlen;
	return parse_dict(p, h);
}

int npy_read_mem(tensor *out, const char *label, const unsigned char *buf, size_t len,
		 const tensor_read_opts *opts, message *e)
{
	const tensor_read_opts o = opts ? *opts : (tensor_read_opts){TENSOR_NONE, 0};
	tensor t = {0};
	header h = {0};
	size_t off = 0, count, bad;
	int big = 0, st;
	char shp[TENSOR_MAX_RANK * 22 + 4];
	if (!(t.name = name_of(label)))
		return tensor_errf(e, SKV_ENOMEM, label, NULL, "out of memory");
	lit p = {.file = label, .name = t.name, .e = e};
	if (o.raw != TENSOR_NONE && !tensor_dtype_is_float(o.raw)) {
		st = tensor_errf(e, SKV_EINVAL, label, t.name, "raw format %d is not floating",
				 (int)o.raw);
		goto fail;
	}
	if ((st = read_header(&h, &off, buf, len, &p)) ||
	    (st = descr_type(&t.dtype, &big, h.descr, o.raw, &p)))
		goto fail;
	const size_t sz = tensor_dtype_size(t.dtype);
	tensor_shape_str(shp, sizeof shp, h.rank, h.shape);
	if (tensor_count(&count, h.rank, h.shape) || count > SIZE_MAX / sizeof(double)) {
		st = tensor_errf(e, SKV_EINVAL, label, t.name, "shape %s: element count overflows",
				 shp);
		goto fail;
	}
	if (count > (len - off) / sz || count * sz != len - off) {
		st = tensor_errf(e, SKV_EINVAL, label, t.name,
				 "%s: shape %s of '%s' is %zu elements of %zu bytes, %zu data bytes follow the header",
				 count > (len - off) / sz ? "truncated" : "bytes after the data", shp, h.descr,
				 count, sz, len - off);
		goto fail;
	}
	t.rank = h.rank;
	memcpy(t.shape, h.shape, sizeof h.shape);
	t.count = count;
	snprintf(t.file_dtype, sizeof t.file_dtype, "%s", h.descr);
	double *v = count ? malloc(count * sizeof *v) : NULL;
	t.values = count && h.fortran && h.rank > 1 ? malloc(count * sizeof *t.values) : v;
	if (count && (!v || !t.values)) {
		if (v != t.values)
			free(v);
		st = tensor_errf(e, SKV_ENOMEM, label, t.name, "cannot hold %zu values", count);
		goto fail;
	}
	st = tensor_decode_buf(v, &bad, buf + off, count, t.dtype, big);
	if (v != t.values) {
		if (!st)
			fortran_to_c(t.values, v, t.rank, t.shape, count);
		free(v);
	}
	if (st) {
		st = tensor_errf(e, SKV_ERANGE, label, t.name,
				 "element %zu in file order: an integer beyond 2^53, not exact in a double", bad);
		goto fail;
	}
	if (o.finite && (st = tensor_check_finite(&t, label, e)))
		goto fail;
	*out = t;
	return SKV_OK;
fail:
	tensor_free(&t);
	return st;
}

int npy_read(tensor *out, const char *path, const tensor_read_opts *opts, message *e)
{
	unsigned char *buf;
	size_t len;
	int st = tensor_read_file(&buf, &len, path, e);
	if (st)
		return st;
	st = npy_read_mem(out, path, buf, len, opts, e);
	free(buf);
	return st;
}

/* ------------------------------------------------------------- writing */

int npy_write_mem(unsigned char **buf, size_t *len, const tensor *t, const char *label, message *e)
{
	/* bf16 and fp8 go out as their bits, in unsigned ints of their size */
	const size_t sz = tensor_dtype_size(t->dtype);
	size_t k = 0, bad, nbytes, count;
	while (k < NTYPES && types[k].dt != t->dtype)
		k++;
	for (size_t j = 0; k == NTYPES && j < NTYPES; j++)
		if (tensor_dtype_is_float(t->dtype) && types[j].kind == 'u' && types[j].size == sz)
			k = j;
	if (k == NTYPES || t->rank > TENSOR_MAX_RANK || tensor_count(&count, t->rank, t->shape) ||
	    count != t->count || count > SIZE_MAX / 8 || (count && !t->values))
		return tensor_errf(e, SKV_EINVAL, label, t->name, "bad format, shape or values");
	nbytes = count * sz;
	char head[NPY_WRITE_ALIGN * 4], shp[TENSOR_MAX_RANK * 22 + 4] = "";
	size_t at = 0;
	for (size_t d = 0; d < t->rank; d++)
		at += (size_t)snprintf(shp + at, sizeof shp - at, "%zu%s", t->shape[d],
				       t->rank == 1 ? "," : d + 1 < t->rank ? ", " : "");
	int h = snprintf(head, sizeof head, "{'descr': '%c%c%u', 'fortran_order': False, 'shape': (%s), }",
			 sz == 1 ? '|' : '<', types[k].kind, types[k].size, shp);
	/* pad with spaces, then '\n', so 10 + HEADER_LEN is a multiple of 64 */
	size_t hlen = (size_t)h + 1;
	hlen += (NPY_WRITE_ALIGN - (10 + hlen) % NPY_WRITE_ALIGN) % NPY_WRITE_ALIGN;
	if (nbytes > SIZE_MAX - 10 - hlen)
		return tensor_errf(e, SKV_EINVAL, label, t->name, "too large");
	unsigned char *b = malloc(10 + hlen + nbytes + 1);
	if (!b)
		return tensor_errf(e, SKV_ENOMEM, label, t->name, "out of memory");
	memcpy(b, magic, 6);
	b[6] = 1, b[7] = 0, b[8] = (unsigned char)(hlen & 0xff), b[9] = (unsigned char)(hlen >> 8);
	memcpy(b + 10, head, (size_t)h);
	memset(b + 10 + h, ' ', hlen - 1 - (size_t)h);
	b[10 + hlen - 1] = '\n';
	if (tensor_encode_buf(b + 10 + hlen, &bad, t->values, count, t->dtype)) {
		free(b);
		return tensor_value_errf(e, SKV_ERANGE, label, t, bad, "is not exactly representable");
	}
	*buf = b;
	*len = 10 + hlen + nbytes;
	return SKV_OK;
}

int npy_write(const char *path, const tensor *t, message *e)
{
	unsigned char *buf;
	size_t len;
	int st = npy_write_mem(&buf, &len, t, path, e);
	if (st)
		return st;
	st = tensor_write_file(path, buf, len, e);
	free(buf);
	return st;
}
