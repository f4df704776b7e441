/* mma_cmd.c - `skv mma`: a tensor-core unit on vectors in the published text format; d printed or checked. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/mma_cmd.h"
#include "skv.h"

/* The text formats are those of north-numerical-computing/MATLAB-tensor-
 * core's model_validation (readHexFloatFile.m, readIeeeFloatsFromFile.m),
 * read strictly: one malformed line is an error naming file and line. */

enum { OK = 0, RUNTIME = 1, USAGE = 2 };

static void msgf(char *msg, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void msgf(char *msg, size_t sz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (sz)
		vsnprintf(msg, sz, fmt, ap);
	va_end(ap);
}

static double from_fp32_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return (double)f;
}

static uint32_t fp32_bits(double x)
{
	float f = (float)x;
	uint32_t u;
	if (isnan(x))
		return UINT32_C(0x7fffffff); /* skv writes every NaN as this pattern */
	memcpy(&u, &f, sizeof u);
	return u;
}

/* ------------------------------------------------------------- parsing */

/* A growing array of doubles. */
typedef struct {
	double *v;
	size_t n, cap;
} dbuf;

static int dbuf_push(dbuf *b, double x)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		double *v = realloc(b->v, cap * sizeof *v);
		if (!v)
			return 0;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = x;
	return 1;
}

/* A value of f: NaN, or a double that f's rounding leaves unchanged. */
static int is_value(skv_format f, double x) { return isnan(x) || skv_round(f, x) == x; }

static int is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* A token as printable text for messages: at most 16 characters, other
 * bytes as '?'. */
static void token_text(char *dst, const char *s, size_t n)
{
	size_t i;
	for (i = 0; i < n && i < 16; i++)
		dst[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	dst[i] = '\0';
}

/* Parses one token of `width` digits in base 16 (4 bits a digit) or 2. */
static int parse_token(uint32_t *bits, const char *s, size_t n, int base)
{
	const size_t width = base == 16 ? 8 : 32;
	uint32_t u = 0;
	if (n != width)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int d = base == 16 ? hex_digit(s[i]) : (s[i] == '0' ? 0 : s[i] == '1' ? 1 : -1);
		if (d < 0)
			return 0;
		u = base == 16 ? (u << 4) | (uint32_t)d : (u << 1) | (uint32_t)d;
	}
	*bits = u;
	return 1;
}

/* The shared line loop: base 16 with value checks for `in`, or base 2 with
 * one token a line (in < 0). */
static int parse_lines(mma_cmd_vecs *out, const char *text, size_t len, const char *name, int in, int base, char *msg,
		       size_t msgsz)
{
	dbuf b = {NULL, 0, 0};
	size_t k = 0, line = 0, pos = 0;
	while (pos < len) {
		size_t end = pos, count = 0;
		line++;
		while (end < len && text[end] != '\n')
			end++;
		for (size_t i = pos; i < end;) {
			if (is_blank(text[i])) {
				i++;
				continue;
			}
			size_t j = i;
			while (j < end && !is_blank(text[j]))
				j++;
			uint32_t bits;
			char tok[17];
			if (!parse_token(&bits, text + i, j - i, base)) {
				token_text(tok, text + i, j - i);
				msgf(msg, msgsz, "%s:%zu: value %zu '%s%s' is not %s", name, line, count + 1, tok,
				     j - i > 16 ? "..." : "", base == 16 ? "8 hex digits" : "32 binary digits");
				goto fail;
			}
			double x = from_fp32_bits(bits);
			if (in >= 0 && !is_value((skv_format)in, x)) {
				msgf(msg, msgsz, "%s:%zu: value %zu (0x%08x) is not a %s value", name, line, count + 1,
				     (unsigned)bits, skv_format_name((skv_format)in));
				goto fail;
			}
			if (!dbuf_push(&b, x)) {
				free(b.v);
				return 2;
			}
			count++;
			i = j;
		}
		if (count == 0) {
			msgf(msg, msgsz, "%s:%zu: empty line", name, line);
			goto fail;
		}
		if (line == 1)
			k = count;
		if (count != k || (base == 2 && count != 1)) {
			msgf(msg, msgsz, "%s:%zu: %zu values, expected %zu", name, line, count,
			     base == 2 ? (size_t)1 : k);
			goto fail;
		}
		pos = end < len ? end + 1 : end;
	}
	if (line == 0) {
		msgf(msg, msgsz, "%s:1: no vectors", name);
		goto fail;
	}
	out->rows = line;
	out->k = k;
	out->v = b.v;
	return 0;
fail:
	free(b.v);
	return 1;
}

int mma_cmd_parse_hex(mma_cmd_vecs *out, const char *text, size_t len, const char *name, skv_format in, char *msg,
		      size_t msgsz)
{
	if (!out || (!text && len) || !name || skv_format_name(in) == NULL)
		return 1;
	return parse_lines(out, text, len, name, (int)in, 16, msg, msgsz);
}

int mma_cmd_parse_bin(mma_cmd_vecs *out, const char *text, size_t len, const char *name, char *msg, size_t msgsz)
{
	if (!out || (!text && len) || !name)
		return 1;
	return parse_lines(out, text, len, name, -1, 2, msg, msgsz);
}

void mma_cmd_vecs_free(mma_cmd_vecs *v)
{
	if (v) {
		free(v->v);
		memset(v, 0, sizeof *v);
	}
}

/* --------------------------------------------------------- ulp distance */

/* Position of a value on the line of representable values of `out`, +-0
 * at 0: the magnitude's bit pattern (monotone in the value for IEEE
 * formats), negated for negative values. */
static int64_t ordinal(skv_format out, double x)
{
	uint32_t u = fp32_bits(x), mag = u & UINT32_C(0x7fffffff);
	if (out == SKV_FP16) {
		/* x is an fp16 value: its magnitude pattern is (e + 15) << 10 | m,
		 * with the subnormals at e + 15 = 0 and inf at 31 << 10. */
		double a = fabs(x);
		if (isinf(a))
			mag = 0x7c00;
		else if (a < 0x1p-14)
			mag = (uint32_t)(a * 0x1p24);
		else
			mag = (uint32_t)((ilogb(a) + 15) << 10) | (uint32_t)((ldexp(a, -ilogb(a)) - 1) * 1024);
	}
	return (u >> 31) ? -(int64_t)mag : (int64_t)mag;
}

uint64_t mma_cmd_ulp_distance(skv_format out, double x, double y)
{
	if (isnan(x) || isnan(y))
		return isnan(x) && isnan(y) ? 0 : UINT64_MAX;
	int64_t a = ordinal(out, x), b = ordinal(out, y);
	return a > b ? (uint64_t)(a - b) : (uint64_t)(b - a);
}

/* ------------------------------------------------------------- options */

typedef struct {
	const char *gpu, *input, *output, *a, *b, *c, *check;
} options;

static void usage(FILE *f)
{
	fprintf(f, "usage: skv mma --gpu=NAME --input=FMT --output=FMT --a=FILE --b=FILE [--c=FILE] [--check=FILE]\n"
		   "\n"
		   "d = c + a.b for each vector, as GPU NAME's tensor cores compute it (lib/mma.c):\n"
		   "  NAME    ieee, v100, a100 (a2, a30), ada (l40s), h100 (h200), b200\n"
		   "  FMT     input fp16, bf16, tf32, e4m3, e5m2; output fp32 or fp16\n"
		   "  --a, --b  one vector a line, fp32 bit patterns as 8 hex digits (a_GPU_FMT.txt)\n"
		   "  --c     one fp32 bit pattern a line in binary (c_GPU_fp32.txt), rounded to\n"
		   "          nearest fp16 for --output=fp16 as the recording did; c = 0 without it\n"
		   "  --check compare with a recorded d_GPU_OUT.txt: prints the match count and, for\n"
		   "          the other vectors, the ulp distance (max and histogram) instead of d\n"
		   "Without --check, d is printed in the d_*.txt format (NaN as 0x7fffffff).\n"
		   "exit status: 0 success, 1 unreadable or malformed file, 2 bad usage.\n");
}

static int parse_options(options *o, int argc, char **argv, FILE *err)
{
	static const char *const keys[] = {"gpu", "input", "output", "a", "b", "c", "check"};
	const char **slots[] = {&o->gpu, &o->input, &o->output, &o->a, &o->b, &o->c, &o->check};
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '=');
		size_t j, n = eq ? (size_t)(eq - arg) : strlen(arg);
		for (j = 0; j < 7; j++)
			if (strncmp(arg, "--", 2) == 0 && n == strlen(keys[j]) + 2 &&
			    strncmp(arg + 2, keys[j], n - 2) == 0)
				break;
		if (j == 7 || !eq) {
			fprintf(err, "skv mma: unknown option '%s' (see skv mma --help)\n", arg);
			return 0;
		}
		if (eq[1] == '\0' || *slots[j]) {
			fprintf(err, "skv mma: --%s %s\n", keys[j],
				*slots[j] ? "given twice" : "needs a value (--flag=VALUE)");
			return 0;
		}
		*slots[j] = eq + 1;
	}
	for (size_t j = 0; j < 5; j++)
		if (!*slots[j]) {
			fprintf(err, "skv mma: missing --%s=%s\n", keys[j], j < 3 ? "VALUE" : "FILE");
			return 0;
		}
	return 1;
}

/* The unit named by the options, or a usage message naming the flag. */
static int make_unit(skv_mma_unit *u, const options *o, FILE *err)
{
	skv_gpu g;
	skv_format in;
	skv_format out;
	if (skv_gpu_parse(&g, o->gpu) != SKV_OK) {
		fprintf(err,
			"skv mma: --gpu=%s: unknown GPU (expected ieee, v100, a100, ada, h100, b200, a2, a30, "
			"l40s, h200)\n",
			o->gpu);
		return 0;
	}
	if (skv_format_parse(&in, o->input) != SKV_OK || skv_mma_unit_init(u, SKV_GPU_IEEE, in, SKV_FP32) != SKV_OK) {
		fprintf(err,
			"skv mma: --input=%s: not an input format of the tensor cores (fp16, bf16, tf32, e4m3, "
			"e5m2)\n",
			o->input);
		return 0;
	}
	if (skv_format_parse(&out, o->output) != SKV_OK || (out != SKV_FP32 && out != SKV_FP16)) {
		fprintf(err, "skv mma: --output=%s: the output format is fp32 or fp16\n", o->output);
		return 0;
	}
	if (skv_mma_unit_init(u, g, in, out) != SKV_OK) {
		fprintf(err, "skv mma: --gpu=%s has no unit for --input=%s --output=%s\n", o->gpu, o->input, o->output);
		return 0;
	}
	return 1;
}

/* ---------------------------------------------------------------- files */

/* The whole file in a malloc'd buffer; NULL with a message on failure. */
static char *read_file(const char *path, size_t *len, FILE *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	if (!f) {
		fprintf(err, "skv mma: cannot read %s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			char *t = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (!t) {
				fprintf(err, "skv mma: out of memory reading %s\n", path);
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = t;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(err, "skv mma: cannot read %s: %s\n", path, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* Reads and parses one file (in >= 0: hex vectors of that format; -1:
 * binary). 1 on success, else a message and 0. */
static int load(mma_cmd_vecs *v, const char *path, int in, FILE *err)
{
	size_t len = 0;
	char msg[256];
	char *text = read_file(path, &len, err);
	if (!text)
		return 0;
	int rc = in >= 0 ? mma_cmd_parse_hex(v, text, len, path, (skv_format)in, msg, sizeof msg)
			 : mma_cmd_parse_bin(v, text, len, path, msg, sizeof msg);
	free(text);
	if (rc == 2)
		fprintf(err, "skv mma: out of memory parsing %s\n", path);
	else if (rc)
		fprintf(err, "%s\n", msg);
	return rc == 0;
}

/* ----------------------------------------------------------- the check */

/* Histogram buckets of distances: 1, 2, 3-4, 5-8, ..., (2^30, 2^31], beyond. */
enum { NBUCKETS = 33 };

static int bucket(uint64_t dist)
{
	int k = 0;
	while (k < NBUCKETS - 1 && (UINT64_C(1) << k) < dist)
		k++;
	return k;
}

static void print_histogram(FILE *out, const size_t *hist)
{
	for (int k = 0; k < NBUCKETS; k++) {
		unsigned long long lo = k == 0 ? 1 : (1ULL << (k - 1)) + 1, hi = 1ULL << k;
		if (!hist[k])
			continue;
		if (k == NBUCKETS - 1)
			fprintf(out, "  ulp > %llu: %zu\n", lo - 1, hist[k]);
		else if (lo == hi)
			fprintf(out, "  ulp %llu: %zu\n", hi, hist[k]);
		else
			fprintf(out, "  ulp %llu-%llu: %zu\n", lo, hi, hist[k]);
	}
}

static void print_check(FILE *out, const skv_mma_unit *u, const options *o, const double *d, const mma_cmd_vecs *want,
			size_t rows)
{
	size_t match = 0, nan_mismatch = 0, zero_sign = 0, hist[NBUCKETS] = {0};
	uint64_t max = 0;
	for (size_t i = 0; i < rows; i++) {
		uint64_t dist = mma_cmd_ulp_distance(u->output, d[i], want->v[i]);
		if (isnan(d[i]) ? isnan(want->v[i]) : fp32_bits(d[i]) == fp32_bits(want->v[i]))
			match++;
		else if (dist == UINT64_MAX)
			nan_mismatch++;
		else if (dist == 0)
			zero_sign++; /* +0 against -0 */
		else {
			hist[bucket(dist)]++;
			max = dist > max ? dist : max;
		}
	}
	fprintf(out, "%s %s -> %s: %zu vectors, %zu match %s bit for bit\n", o->gpu, o->input, o->output, rows, match,
		o->check);
	fprintf(out, "unit: %s\n", u->source);
	if (match == rows)
		return;
	fprintf(out, "differ: %zu, max %llu ulp of %s; NaN against a number: %zu; +0 against -0: %zu\n",
		rows - match - nan_mismatch - zero_sign, (unsigned long long)max, o->output, nan_mismatch, zero_sign);
	print_histogram(out, hist);
}

static void print_d(FILE *out, const double *d, size_t rows)
{
	char line[34];
	line[32] = '\n';
	line[33] = '\0';
	for (size_t i = 0; i < rows; i++) {
		uint32_t u = fp32_bits(d[i]);
		for (int b = 0; b < 32; b++)
			line[b] = (char)('0' + ((u >> (31 - b)) & 1));
		fputs(line, out);
	}
}

/* Every vector's d; the files' sizes have been matched. */
static int compute(double *d, const skv_mma_unit *u, const mma_cmd_vecs *a, const mma_cmd_vecs *b,
		   const mma_cmd_vecs *c)
{
	for (size_t i = 0; i < a->rows; i++) {
		double ci = c->v ? skv_round(u->output, c->v[i]) : 0.0;
		if (skv_mma_dot(d + i, u, a->v + i * a->k, 1, b->v + i * a->k, 1, a->k, ci) != SKV_OK)
			return 0;
	}
	return 1;
}

/* Sizes of b, c and check against a's. */
static int sizes_match(const options *o, const mma_cmd_vecs *a, const mma_cmd_vecs *b, const mma_cmd_vecs *c,
		       const mma_cmd_vecs *want, FILE *err)
{
	if (b->k != a->k) {
		fprintf(err, "%s:1: %zu values a vector, %s has %zu\n", o->b, b->k, o->a, a->k);
		return 0;
	}
	const struct {
		const mma_cmd_vecs *v;
		const char *path;
	} f[] = {{b, o->b}, {c, o->c}, {want, o->check}};
	for (size_t i = 0; i < 3; i++)
		if (f[i].v->v && f[i].v->rows != a->rows) {
			fprintf(err, "%s:%zu: %zu lines, %s has %zu vectors\n", f[i].path,
				(f[i].v->rows < a->rows ? f[i].v->rows : a->rows) + 1, f[i].v->rows, o->a, a->rows);
			return 0;
		}
	return 1;
}

/* The recorded d of an fp16 output must hold fp16 values. */
static int check_values_ok(const skv_mma_unit *u, const options *o, const mma_cmd_vecs *want, FILE *err)
{
	for (size_t i = 0; i < want->rows; i++)
		if (!isnan(want->v[i]) && skv_round(u->output, want->v[i]) != want->v[i]) {
			fprintf(err, "%s:%zu: 0x%08x is not an %s value\n", o->check, i + 1,
				(unsigned)fp32_bits(want->v[i]), o->output);
			return 0;
		}
	return 1;
}

int mma_cmd_main(int argc, char **argv, FILE *out, FILE *err)
{
	options o;
	skv_mma_unit u;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(out);
			return OK;
		}
	if (!parse_options(&o, argc, argv, err) || !make_unit(&u, &o, err))
		return USAGE;
	mma_cmd_vecs a = {0}, b = {0}, c = {0}, want = {0};
	double *d = NULL;
	int rc = RUNTIME;
	if (!load(&a, o.a, (int)u.input, err) || !load(&b, o.b, (int)u.input, err) ||
	    (o.c && !load(&c, o.c, -1, err)) || (o.check && !load(&want, o.check, -1, err)) ||
	    !sizes_match(&o, &a, &b, &c, &want, err))
		goto done;
	if (o.check && !check_values_ok(&u, &o, &want, err))
		goto done;
	if (!(d = malloc(a.rows * sizeof *d))) {
		fprintf(err, "skv mma: out of memory\n");
		goto done;
	}
	if (!compute(d, &u, &a, &b, &c)) {
		fprintf(err, "skv mma: internal error: the unit refused a parsed vector\n");
		goto done;
	}
	if (o.check)
		print_check(out, &u, &o, d, &want, a.rows);
	else
		print_d(out, d, a.rows);
	rc = ferror(out) ? RUNTIME : OK;
	if (rc != OK)
		fprintf(err, "skv mma: write error\n");
done:
	free(d);
	mma_cmd_vecs_free(&a);
	mma_cmd_vecs_free(&b);
	mma_cmd_vecs_free(&c);
	mma_cmd_vecs_free(&want);
	return rc;
}
