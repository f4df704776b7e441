/* tensors.c - element formats decoded and encoded exactly, tensors, the one-line errors and whole-file I/O the readers share. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/tensors.h"

/* ------------------------------------------------------------- formats */

enum { K_IEEE, K_FN, K_SINT, K_UINT };

/* Layouts. IEEE 754-2019 section 3.4 for binary16/32/64 (binary16: 5
 * exponent bits, 10 fraction bits; binary32: 8, 23; binary64: 11, 52).
 * bfloat16 is the top half of binary32: 8 exponent bits, 7 fraction bits.
 * FP8: OCP 8-bit Floating Point Specification (OFP8) rev. 1.0 (2023), table 1
 * and 2 (also arXiv:2209.05433): E5M2 follows IEEE rules (S.11111.00 infinity,
 * S.11111.{01,10,11} NaN); E4M3 has no infinity, its only NaNs are S.1111.111
 * and S.1111.{000..110} are normal numbers (max 1.75 * 2^8 = 448). The bias
 * is 2^(ebits-1) - 1 for all. These are safetensors' F8_E5M2 and F8_E4M3
 * (torch.float8_e5m2, torch.float8_e4m3fn). */
typedef struct {
	const char *name, *st;
	unsigned size, ebits, mbits, kind;
} fmt_info;

static const fmt_info fmts[TENSOR_NDTYPES] = {
	[TENSOR_F16] = {"f16", "F16", 2, 5, 10, K_IEEE},
	[TENSOR_BF16] = {"bf16", "BF16", 2, 8, 7, K_IEEE},
	[TENSOR_F32] = {"f32", "F32", 4, 8, 23, K_IEEE},
	[TENSOR_F64] = {"f64", "F64", 8, 11, 52, K_IEEE},
	[TENSOR_E4M3] = {"e4m3", "F8_E4M3", 1, 4, 3, K_FN},
	[TENSOR_E5M2] = {"e5m2", "F8_E5M2", 1, 5, 2, K_IEEE},
	[TENSOR_I8] = {"i8", "I8", 1, 0, 0, K_SINT},
	[TENSOR_I16] = {"i16", "I16", 2, 0, 0, K_SINT},
	[TENSOR_I32] = {"i32", "I32", 4, 0, 0, K_SINT},
	[TENSOR_I64] = {"i64", "I64", 8, 0, 0, K_SINT},
	[TENSOR_U8] = {"u8", "U8", 1, 0, 0, K_UINT},
	[TENSOR_U16] = {"u16", "U16", 2, 0, 0, K_UINT},
	[TENSOR_U32] = {"u32", "U32", 4, 0, 0, K_UINT},
	[TENSOR_U64] = {"u64", "U64", 8, 0, 0, K_UINT},
};

/* Integers beyond 2^53 in magnitude are refused, not rounded: up to there
 * every integer is a double. */
#define INT_EXACT 9007199254740992.0 /* 2^53 */

static const fmt_info *info(tensor_dtype dt)
{
	return dt >= 0 && dt < TENSOR_NDTYPES ? &fmts[dt] : NULL;
}

const char *tensor_dtype_name(tensor_dtype dt) { return info(dt) ? info(dt)->name : NULL; }
const char *tensor_dtype_st_name(tensor_dtype dt) { return info(dt) ? info(dt)->st : NULL; }
size_t tensor_dtype_size(tensor_dtype dt) { return info(dt) ? info(dt)->size : 0; }
int tensor_dtype_is_float(tensor_dtype dt) { return info(dt) && info(dt)->kind <= K_FN; }

int tensor_dtype_parse(tensor_dtype *dt, const char *name)
{
	for (int i = 0; name && i < TENSOR_NDTYPES; i++)
		if (strcmp(name, fmts[i].name) == 0) {
			*dt = (tensor_dtype)i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

/* A floating pattern: sign s, biased exponent e, fraction m. Subnormal
 * (e = 0): m * 2^(1 - bias - mbits); normal: (2^mbits + m) * 2^(e - bias -
 * mbits). m < 2^53 is exact in a double and ldexp of it is exact because the
 * result is a double (every value of these formats is one). */
static double decode_float(const fmt_info *f, uint64_t bits)
{
	const uint64_t mmask = (UINT64_C(1) << f->mbits) - 1, emask = (UINT64_C(1) << f->ebits) - 1;
	const int bias = (1 << (f->ebits - 1)) - 1;
	const uint64_t e = (bits >> f->mbits) & emask, m = bits & mmask;
	const int neg = (int)((bits >> (f->ebits + f->mbits)) & 1);
	double v;
	if (e == emask && f->kind == K_IEEE)
		v = m ? NAN : INFINITY;
	else if (e == emask && m == mmask) /* K_FN: S.1..1.1..1 is the only NaN */
		v = NAN;
	else if (e == 0)
		v = ldexp((double)m, 1 - bias - (int)f->mbits);
	else
		v = ldexp((double)(m | (mmask + 1)), (int)e - bias - (int)f->mbits);
	return neg ? -v : v;
}

int tensor_decode(double *x, tensor_dtype dt, uint64_t bits)
{
	const fmt_info *f = info(dt);
	if (!f)
		return SKV_EINVAL;
	const unsigned nb = 8 * f->size;
	if (nb < 64)
		bits &= (UINT64_C(1) << nb) - 1;
	if (f->kind <= K_FN) {
		*x = decode_float(f, bits);
		return SKV_OK;
	}
	if (f->kind == K_SINT && nb < 64 && (bits >> (nb - 1)))
		bits |= ~UINT64_C(0) << nb; /* sign-extend */
	/* compared as integers: (double)(2^53 + 1) would already have rounded */
	const int64_t lim = INT64_C(1) << 53, sv = (int64_t)bits;
	if (f->kind == K_SINT ? sv > lim || sv < -lim : bits > (uint64_t)lim)
		return SKV_ERANGE;
	const double v = f->kind == K_SINT ? (double)sv : (double)bits;
	*x = v;
	return SKV_OK;
}

/* The inverse of decode_float. a = |x| with 2^ex <= a < 2^(ex+1): normal when
 * ex >= emin = 1 - bias, with fraction a * 2^(mbits - ex) - 2^mbits, which
 * must be an integer; subnormal below, with fraction a * 2^(bias - 1 +
 * mbits). Both scalings are exact (powers of two, results in the normal range
 * of doubles), so an inexact x shows as a non-integer q. */
static int encode_float(uint64_t *bits, const fmt_info *f, double x)
{
	const uint64_t mmask = (UINT64_C(1) << f->mbits) - 1, emask = (UINT64_C(1) << f->ebits) - 1;
	const int bias = (1 << (f->ebits - 1)) - 1;
	const uint64_t emax = f->kind == K_FN ? emask : emask - 1; /* largest finite field */
	uint64_t e = 0, m = 0;
	if (isnan(x)) {
		e = emask;
		m = f->kind == K_FN ? mmask : (mmask + 1) >> 1; /* quiet NaN */
	} else if (isinf(x)) {
		if (f->kind == K_FN)
			return SKV_ERANGE;
		e = emask;
	} else if (x != 0) {
		const double a = fabs(x);
		const int ex = ilogb(a);
		if (ex < 1 - bias) {
			const double q = ldexp(a, bias - 1 + (int)f->mbits);
			if (q != floor(q))
				return SKV_ERANGE;
			m = (uint64_t)q;
		} else {
			if (ex + bias > (int)emax)
				return SKV_ERANGE;
			const double q = ldexp(a, (int)f->mbits - ex);
			if (q != floor(q))
				return SKV_ERANGE;
			e = (uint64_t)(ex + bias);
			m = (uint64_t)q - (mmask + 1);
			if (f->kind == K_FN && e == emask && m == mmask)
				return SKV_ERANGE; /* above 448: that pattern is NaN */
		}
	}
	*bits = (signbit(x) ? UINT64_C(1) << (f->ebits + f->mbits) : 0) | e << f->mbits | m;
	return SKV_OK;
}

int tensor_encode(uint64_t *bits, tensor_dtype dt, double x)
{
	const fmt_info *f = info(dt);
	if (!f)
		return SKV_EINVAL;
	if (f->kind <= K_FN)
		return encode_float(bits, f, x);
	const unsigned nb = 8 * f->size;
	const double lo = f->kind == K_SINT ? -ldexp(1, (int)nb - 1) : 0;
	double hi = f->kind == K_SINT ? ldexp(1, (int)nb - 1) - 1 : ldexp(1, (int)nb) - 1;
	if (hi > INT_EXACT)
		hi = INT_EXACT;
	if (!(x >= fmax(lo, -INT_EXACT) && x <= hi) || x != floor(x) || (x == 0 && signbit(x)))
		return SKV_ERANGE; /* -0 too: an integer cannot keep its sign */
	uint64_t b = x < 0 ? (uint64_t)(int64_t)x : (uint64_t)x;
	*bits = nb < 64 ? b & ((UINT64_C(1) << nb) - 1) : b;
	return SKV_OK;
}

int tensor_decode_buf(double *out, size_t *bad, const unsigned char *p, size_t count,
		      tensor_dtype dt, int big)
{
	const size_t sz = tensor_dtype_size(dt);
	for (size_t i = 0; i < count; i++, p += sz) {
		uint64_t b = 0;
		for (size_t k = 0; k < sz; k++)
			b |= (uint64_t)p[big ? k : sz - 1 - k] << (8 * (sz - 1 - k));
		if (tensor_decode(&out[i], dt, b) != SKV_OK) {
			*bad = i;
			return SKV_ERANGE;
		}
	}
	return SKV_OK;
}

int tensor_encode_buf(unsigned char *p, size_t *bad, const double *x, size_t count, tensor_dtype dt)
{
	const size_t sz = tensor_dtype_size(dt);
	for (size_t i = 0; i < count; i++, p += sz) {
		uint64_t b;
		if (tensor_encode(&b, dt, x[i]) != SKV_OK) {
			*bad = i;
			return SKV_ERANGE;
		}
		for (size_t k = 0; k < sz; k++)
			p[k] = (unsigned char)(b >> (8 * k));
	}
	return SKV_OK;
}

/* -------------------------------------------------------------- errors */

/* Writes s to f with control bytes, DEL and bytes that are not well-formed
 * UTF-8 as \xNN; a name is cut after max bytes (a character begun before
 * the cut is kept whole), and "..." says so. */
static void put_escaped(FILE *f, const char *s, size_t max)
{
	size_t k = 0;
	while (s[k] && k < max) {
		const unsigned char c = (unsigned char)s[k];
		size_t len = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
		if (len > 1 && (strnlen(s + k, len) < len ||
				!tensor_utf8_valid((const unsigned char *)s + k, len)))
			len = 0; /* not UTF-8: escape this byte */
		if (c < 0x20 || c == 0x7f || len == 0) {
			fprintf(f, "\\x%02x", c);
			k++;
		} else {
			fwrite(s + k, 1, len, f);
			k += len;
		}
	}
	if (s[k])
		fputs("...", f);
}

/* Names are cut here in messages; the problem never is. */
enum { NAME_MAX_SHOWN = 200 };

int tensor_errf(message *e, int status, const char *file, const char *name, const char *fmt, ...)
{
	if (!e)
		return status;
	va_list ap;
	va_start(ap, fmt);
	char *problem = msg_vformat(fmt, ap);
	va_end(ap);
	char *text = NULL;
	size_t len = 0;
	FILE *f = problem ? open_memstream(&text, &len) : NULL;
	if (f) {
		put_escaped(f, file ? file : "<memory>", NAME_MAX_SHOWN);
		if (name) {
			fputs(": tensor ", f);
			put_escaped(f, name, NAME_MAX_SHOWN);
		}
		fputs(": ", f);
		put_escaped(f, problem, SIZE_MAX);
		if (fclose(f) != 0) {
			free(text);
			text = NULL;
		}
	}
	/* The text holds no control byte now, so msg_set keeps it as it is. */
	if (text)
		msg_set(e, "%s", text);
	else
		msg_set(e, "%s: out of memory", file ? file : "<memory>");
	free(text);
	free(problem);
	return status;
}

/* "[i, j, k]" of element flat of a C-order tensor. */
static void index_str(char *dst, size_t n, const tensor *t, size_t flat)
{
	size_t idx[TENSOR_MAX_RANK];
	for (size_t k = t->rank; k-- > 0;) {
		idx[k] = t->shape[k] ? flat % t->shape[k] : 0;
		flat = t->shape[k] ? flat / t->shape[k] : 0;
	}
	tensor_shape_str(dst, n, t->rank, idx);
}

int tensor_value_errf(message *e, int status, const char *file, const tensor *t,
		      size_t flat, const char *problem)
{
	char at[TENSOR_MAX_RANK * 22 + 4];
	index_str(at, sizeof at, t, flat);
	return tensor_errf(e, status, file, t->name, "element %s (%a) %s", at,
			   t->values[flat], problem);
}

void tensor_shape_str(char *dst, size_t dst_len, size_t rank, const size_t *shape)
{
	size_t at = (size_t)snprintf(dst, dst_len, "[");
	for (size_t k = 0; k < rank && at < dst_len; k++) {
		const char *sep = k ? ", " : "";
		if (shape[k] == TENSOR_ANY)
			at += (size_t)snprintf(dst + at, dst_len - at, "%s*", sep);
		else
			at += (size_t)snprintf(dst + at, dst_len - at, "%s%zu", sep, shape[k]);
	}
	if (at < dst_len)
		snprintf(dst + at, dst_len - at, "]");
}

/* ------------------------------------------------------------- tensors */

int tensor_count(size_t *count, size_t rank, const size_t *shape)
{
	size_t c = 1;
	for (size_t k = 0; k < rank; k++) {
		if (shape[k] && c > SIZE_MAX / shape[k])
			return SKV_EINVAL;
		c *= shape[k];
	}
	*count = c;
	return SKV_OK;
}

int tensor_init(tensor *t, const char *name, tensor_dtype dt, size_t rank, const size_t *shape,
		const double *values, message *e)
{
	size_t count;
	if (!t || !name || !*name)
		return tensor_errf(e, SKV_EINVAL, "tensor_init", NULL, "no tensor name");
	if (!info(dt) || rank > TENSOR_MAX_RANK || (rank && !shape))
		return tensor_errf(e, SKV_EINVAL, "tensor_init", name,
				   "format %d or rank %zu out of range", (int)dt, rank);
	if (tensor_count(&count, rank, shape) != SKV_OK || count > SIZE_MAX / sizeof(double))
		return tensor_errf(e, SKV_EINVAL, "tensor_init", name,
				   "element count overflows");
	if (count && !values)
		return tensor_errf(e, SKV_EINVAL, "tensor_init", name, "no values");
	tensor n = {.dtype = dt, .rank = rank, .count = count};
	n.name = strdup(name);
	n.values = count ? malloc(count * sizeof *n.values) : NULL;
	if (!n.name || (count && !n.values)) {
		tensor_free(&n);
		return tensor_errf(e, SKV_ENOMEM, "tensor_init", name, "out of memory");
	}
	if (count)
		memcpy(n.values, values, count * sizeof *n.values);
	if (rank)
		memcpy(n.shape, shape, rank * sizeof *shape);
	snprintf(n.file_dtype, sizeof n.file_dtype, "%s", fmts[dt].name);
	*t = n;
	return SKV_OK;
}

void tensor_free(tensor *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->values);
	memset(t, 0, sizeof *t);
}

void tensor_set_free(tensor_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ntensors; i++)
		tensor_free(&s->tensors[i]);
	for (size_t i = 0; i < s->nmeta; i++) {
		free(s->meta[i].key);
		free(s->meta[i].value);
	}
	free(s->tensors);
	free(s->meta);
	memset(s, 0, sizeof *s);
}

const tensor *tensor_set_find(const tensor_set *s, const char *name)
{
	for (size_t i = 0; s && name && i < s->ntensors; i++)
		if (strcmp(s->tensors[i].name, name) == 0)
			return &s->tensors[i];
	return NULL;
}

int tensor_check_finite(const tensor *t, const char *file, message *e)
{
	for (size_t i = 0; i < t->count; i++)
		if (!isfinite(t->values[i]))
			return tensor_value_errf(e, SKV_EINVAL, file, t, i,
						 "is not finite (finite inputs are required)");
	return SKV_OK;
}

int tensor_check_shape(const tensor *t, const char *file, size_t rank, const size_t *shape,
		       message *e)
{
	int ok = t->rank == rank;
	for (size_t k = 0; ok && k < rank; k++)
		ok = shape[k] == TENSOR_ANY || shape[k] == t->shape[k];
	if (ok)
		return SKV_OK;
	char got[TENSOR_MAX_RANK * 22 + 4], want[TENSOR_MAX_RANK * 22 + 4];
	tensor_shape_str(got, sizeof got, t->rank, t->shape);
	tensor_shape_str(want, sizeof want, rank <= TENSOR_MAX_RANK ? rank : 0, shape);
	return tensor_errf(e, SKV_EINVAL, file, t->name, "shape %s where %s is expected", got,
			   want);
}

/* RFC 3629 section 4: lead byte ranges and the second byte's narrowed range
 * for E0 (no overlong), ED (no surrogate), F0 (no overlong), F4 (<= U+10FFFF). */
int tensor_utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		const unsigned c = s[i];
		size_t len;
		unsigned lo = 0x80, hi = 0xbf;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		else
			return 0;
		if (n - i < len || s[i + 1] < lo || s[i + 1] > hi)
			return 0;
		for (size_t k = 2; k < len; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xbf)
				return 0;
		i += len;
	}
	return 1;
}

/* ----------------------------------------------------------- file I/O */

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a plain file";
}

/* stat first, so a FIFO or device is refused without being opened (opening
 * may block or have effects); O_NONBLOCK and the fstat comparison close the
 * window where the path is swapped between the two. */
int tensor_read_file(unsigned char **buf, size_t *len, const char *path, message *e)
{
	struct stat st, fst;
	if (stat(path, &st) != 0)
		return tensor_errf(e, SKV_EIO, path, NULL, "cannot open: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return tensor_errf(e, SKV_EIO, path, NULL,
				   "is %s, not a regular file; refused unread", kind_of(st.st_mode));
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return tensor_errf(e, SKV_EIO, path, NULL, "cannot open: %s", strerror(errno));
	if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode) || fst.st_ino != st.st_ino ||
	    fst.st_dev != st.st_dev) {
		close(fd);
		return tensor_errf(e, SKV_EIO, path, NULL, "changed while being opened");
	}
	if ((uintmax_t)fst.st_size >= SIZE_MAX) {
		close(fd);
		return tensor_errf(e, SKV_ENOMEM, path, NULL, "too large to hold in memory");
	}
	const size_t want = (size_t)fst.st_size;
	unsigned char *b = malloc(want + 1), probe;
	if (!b) {
		close(fd);
		return tensor_errf(e, SKV_ENOMEM, path, NULL, "cannot hold %zu bytes", want);
	}
	size_t got = 0;
	int rerr = 0; /* errno of a failed read; 0 when the file just ended */
	while (got < want) {
		const ssize_t r = read(fd, b + got, want - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rerr = errno;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	const int more = !rerr && got == want && read(fd, &probe, 1) > 0;
	close(fd);
	if (got != want || more) {
		free(b);
		return tensor_errf(e, SKV_EIO, path, NULL, "%s while being read",
				   more ? "grew" : rerr ? strerror(rerr) : "shrank");
	}
	if (want == 0) {
		free(b);
		b = NULL;
	}
	*buf = b;
	*len = want;
	return SKV_OK;
}

int tensor_write_file(const char *path, const unsigned char *buf, size_t len, message *e)
{
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return tensor_errf(e, SKV_EIO, path, NULL, "is %s; not replaced",
				   kind_of(st.st_mode));
	const size_t n = strlen(path) + 16;
	char *tmp = malloc(n);
	if (!tmp)
		return tensor_errf(e, SKV_ENOMEM, path, NULL, "out of memory");
	snprintf(tmp, n, "%s.tmp-XXXXXX", path);
	const int fd = mkstemp(tmp);
	if (fd < 0) {
		const int why = errno;
		free(tmp);
		return tensor_errf(e, SKV_EIO, path, NULL, "cannot create: %s", strerror(why));
	}
	size_t done = 0;
	int why = 0;
	while (done < len && !why) {
		const ssize_t w = write(fd, buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			why = w < 0 ? errno : EIO;
		else
			done += (size_t)w;
	}
	if (!why && fchmod(fd, 0644) != 0)
		why = errno;
	if (close(fd) != 0 && !why)
		why = errno;
	if (!why && rename(tmp, path) != 0)
		why = errno;
	if (why)
		unlink(tmp);
	free(tmp);
	if (why)
		return tensor_errf(e, SKV_EIO, path, NULL, "cannot write: %s", strerror(why));
	return SKV_OK;
}
