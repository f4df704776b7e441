/* csv.c - a strict RFC 4180 CSV reader whose every error names the file and line. */
#include "io/csv.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skv.h"

/* A growable array of size_t. */
typedef struct {
	size_t *v, n, cap;
} vec;

static int vec_push(vec *a, size_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		if (cap > SIZE_MAX / sizeof *a->v)
			return SKV_ENOMEM;
		size_t *v = realloc(a->v, cap * sizeof *v);
		if (!v)
			return SKV_ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return SKV_OK;
}

void csv_fail(message *e, const char *name, size_t line, const char *fmt, ...)
{
	if (!e)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *what = msg_vformat(fmt, ap);
	va_end(ap);
	msg_set(e, "%s:%zu: %s", name, line, what ? what : "out of memory");
	free(what);
}

/* The parser's state: input, output buffer and the records found so far. */
typedef struct {
	const char *s;
	size_t len, pos, line;
	char *out;   /* unquoted fields, each NUL-terminated */
	size_t nout;
	vec field;   /* offset in out of each field, record after record */
	vec rec;     /* number of fields seen before each record, then the total */
	vec recline; /* line where each record starts */
} parser;

/* Reads one field at p->pos into p->out. Returns SKV_OK and leaves p->pos on
 * the separator (',', CR, LF) or at the end; SKV_EINVAL with a message. */
static int field(parser *p, const char *name, message *e)
{
	int rc = vec_push(&p->field, p->nout);
	if (rc)
		return rc;
	if (p->pos < p->len && p->s[p->pos] == '"') {
		size_t open = p->line;
		p->pos++;
		for (;;) {
			if (p->pos >= p->len) {
				csv_fail(e, name, open, "unterminated quoted field");
				return SKV_EINVAL;
			}
			char c = p->s[p->pos];
			if (c == '"') {
				if (p->pos + 1 < p->len && p->s[p->pos + 1] == '"') {
					p->out[p->nout++] = '"';
					p->pos += 2;
					continue;
				}
				p->pos++;
				break;
			}
			if (c == '\0') {
				csv_fail(e, name, p->line, "NUL byte");
				return SKV_EINVAL;
			}
			if (c == '\n')
				p->line++;
			p->out[p->nout++] = c;
			p->pos++;
		}
		if (p->pos < p->len && p->s[p->pos] != ',' && p->s[p->pos] != '\r' && p->s[p->pos] != '\n') {
			csv_fail(e, name, p->line, "character '%c' after a closing quote", p->s[p->pos]);
			return SKV_EINVAL;
		}
	} else {
		while (p->pos < p->len) {
			char c = p->s[p->pos];
			if (c == ',' || c == '\r' || c == '\n')
				break;
			if (c == '"') {
				csv_fail(e, name, p->line, "quote inside an unquoted field");
				return SKV_EINVAL;
			}
			if (c == '\0') {
				csv_fail(e, name, p->line, "NUL byte");
				return SKV_EINVAL;
			}
			p->out[p->nout++] = c;
			p->pos++;
		}
	}
	p->out[p->nout++] = '\0';
	return SKV_OK;
}

/* Reads one record; consumes its terminator. */
static int record(parser *p, const char *name, message *e)
{
	int rc = vec_push(&p->rec, p->field.n);
	if (!rc)
		rc = vec_push(&p->recline, p->line);
	while (!rc) {
		rc = field(p, name, e);
		if (rc)
			break;
		if (p->pos >= p->len)
			break;
		char c = p->s[p->pos];
		if (c == ',') {
			p->pos++;
			continue;
		}
		if (c == '\r') {
			if (p->pos + 1 >= p->len || p->s[p->pos + 1] != '\n') {
				csv_fail(e, name, p->line, "carriage return not followed by a line feed");
				return SKV_EINVAL;
			}
			p->pos++;
		}
		p->pos++; /* the LF */
		p->line++;
		break;
	}
	return rc;
}

static void parser_free(parser *p)
{
	free(p->out);
	free(p->field.v);
	free(p->rec.v);
	free(p->recline.v);
}

/* Header names: none empty, none twice. The column numbers are sorted by
 * name, so the check is O(c log c) in the column count and the sorted
 * order serves csv_find's binary search. qsort has no context
 * argument: the names are reached through a static, set just before the
 * sort (the reader runs on one thread). */
static const char *sort_out;
static const size_t *sort_off;
static int cmp_name(const void *a, const void *b)
{
	return strcmp(sort_out + sort_off[*(const size_t *)a], sort_out + sort_off[*(const size_t *)b]);
}

static int check_header(size_t **sorted, const parser *p, size_t ncols, const char *name, message *e)
{
	for (size_t c = 0; c < ncols; c++)
		if (!p->out[p->field.v[c]]) {
			csv_fail(e, name, 1, "column %zu has an empty name", c + 1);
			return SKV_EINVAL;
		}
	size_t *idx = malloc((ncols ? ncols : 1) * sizeof *idx);
	if (!idx) {
		csv_fail(e, name, 1, "out of memory");
		return SKV_ENOMEM;
	}
	for (size_t c = 0; c < ncols; c++)
		idx[c] = c;
	sort_out = p->out;
	sort_off = p->field.v;
	qsort(idx, ncols, sizeof *idx, cmp_name);
	for (size_t c = 1; c < ncols; c++)
		if (cmp_name(&idx[c - 1], &idx[c]) == 0) {
			csv_fail(e, name, 1, "column '%s' appears twice", p->out + p->field.v[idx[c]]);
			free(idx);
			return SKV_EINVAL;
		}
	*sorted = idx;
	return SKV_OK;
}

/* Reads every record, checking each as it comes so the first error in the
 * file is the one reported: the header's width (*ncols) against the limit,
 * every later record's against the header's. Closes the record list with
 * the total field count. */
static int records(parser *p, size_t *ncols, const char *name, message *e)
{
	int rc = SKV_OK;
	while (!rc && p->pos < p->len) {
		rc = record(p, name, e);
		if (rc)
			break;
		size_t r = p->rec.n - 1, n = p->field.n - p->rec.v[r];
		if (r == 0) {
			*ncols = n;
			if (n > CSV_MAX_COLS) {
				csv_fail(e, name, 1, "%zu columns, more than the %d skv reads", n, CSV_MAX_COLS);
				rc = SKV_EINVAL;
			}
		} else if (n != *ncols) {
			csv_fail(e, name, p->recline.v[r], "%zu fields, the header has %zu", n, *ncols);
			rc = SKV_EINVAL;
		}
	}
	if (!rc)
		rc = vec_push(&p->rec, p->field.n);
	if (rc == SKV_ENOMEM)
		csv_fail(e, name, p->line, "out of memory");
	return rc;
}

/* Moves what the parser found into t: the field pointers, the record
 * lines, the text, the sorted header. The parser is spent either way. */
static int table_take(csv_table *t, parser *p, size_t ncols, size_t *sorted, const char *name, message *e)
{
	char **field = malloc(p->field.n * sizeof *field);
	char *nm = strdup(name);
	if (!field || !nm) {
		free(field);
		free(nm);
		free(sorted);
		parser_free(p);
		csv_fail(e, name, 0, "out of memory");
		return SKV_ENOMEM;
	}
	for (size_t i = 0; i < p->field.n; i++)
		field[i] = p->out + p->field.v[i];
	t->ncols = ncols;
	t->nrows = p->rec.n - 2; /* records, less the header and the closing total */
	t->field = field;
	t->line = p->recline.v;
	t->name = nm;
	t->text = p->out;
	t->sorted = sorted;
	free(p->field.v);
	free(p->rec.v);
	return SKV_OK;
}

int csv_parse(csv_table *t, const char *text, size_t len, const char *name, message *e)
{
	if (!name)
		name = "(csv)";
	if (!t || (!text && len)) {
		csv_fail(e, name, 0, "invalid argument");
		return SKV_EINVAL;
	}
	/* Each input byte yields at most one output byte and each field one NUL;
	 * there are at most len + 1 fields, so 2 len + 2 bytes always suffice. */
	if (len > (SIZE_MAX - 2) / 2) {
		csv_fail(e, name, 0, "file too large");
		return SKV_ENOMEM;
	}
	parser p = {.s = text, .len = len, .line = 1};
	static const char bom[] = "\xEF\xBB\xBF";
	if (len >= sizeof bom - 1 && memcmp(text, bom, sizeof bom - 1) == 0)
		p.pos = sizeof bom - 1;
	if (p.pos >= len) {
		csv_fail(e, name, 1, "empty file: no header row");
		return SKV_EINVAL;
	}
	p.out = malloc(2 * len + 2);
	if (!p.out) {
		csv_fail(e, name, 0, "out of memory");
		return SKV_ENOMEM;
	}
	size_t ncols = 0, *sorted = NULL;
	int rc = records(&p, &ncols, name, e);
	if (!rc)
		rc = check_header(&sorted, &p, ncols, name, e);
	if (rc) {
		parser_free(&p);
		return rc;
	}
	return table_take(t, &p, ncols, sorted, name, e);
}

int csv_read(csv_table *t, const char *path, message *e)
{
	return csv_read_as(t, path, path, e);
}

int csv_read_as(csv_table *t, const char *path, const char *name, message *e)
{
	if (!t || !path) {
		csv_fail(e, path ? path : "(null)", 0, "invalid argument");
		return SKV_EINVAL;
	}
	if (!name)
		name = path;
	/* Without blocking, so a FIFO is refused instead of waited on. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	int rc = SKV_OK;
	const char *why = NULL;
	if (fd < 0 || fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if ((uint64_t)st.st_size > CSV_MAX_BYTES)
		why = "larger than the 2 GiB skv reads";
	char *buf = why ? NULL : malloc((size_t)st.st_size + 1);
	if (!why && !buf)
		why = "out of memory";
	size_t n = 0;
	ssize_t k = 0;
	while (!why && n < (size_t)st.st_size && (k = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)k;
	if (!why && k < 0)
		why = strerror(errno);
	if (fd >= 0)
		close(fd);
	if (why) {
		msg_set(e, "%s: %s", name, why);
		free(buf);
		return SKV_EIO;
	}
	rc = csv_parse(t, buf, n, name, e);
	if (rc == SKV_OK) {
		t->bytes = n;
		t->fnv = csv_fnv1a64(CSV_FNV_INIT, buf, n);
	}
	free(buf);
	return rc;
}

uint64_t csv_fnv1a64(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

void csv_free(csv_table *t)
{
	if (!t)
		return;
	free(t->field);
	free(t->line);
	free(t->name);
	free(t->text);
	free(t->sorted);
	memset(t, 0, sizeof *t);
}

const char *csv_get(const csv_table *t, size_t row, size_t col)
{
	if (!t || row >= t->nrows || col >= t->ncols)
		return NULL;
	return t->field[(row + 1) * t->ncols + col];
}

const char *csv_colname(const csv_table *t, size_t col)
{
	if (!t || col >= t->ncols)
		return NULL;
	return t->field[col];
}

int csv_find(const csv_table *t, const char *name, size_t *col)
{
	if (!t || !name || !col)
		return SKV_EINVAL;
	/* binary search of the names in sorted order: O(log c) a lookup */
	size_t lo = 0, hi = t->ncols;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(t->field[t->sorted[mid]], name);
		if (d == 0) {
			*col = t->sorted[mid];
			return SKV_OK;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SKV_EINVAL;
}

size_t csv_line(const csv_table *t, size_t row)
{
	if (!t || row >= t->nrows)
		return 0;
	return t->line[row + 1];
}

int csv_number(double *x, const char *s)
{
	if (!x || !s || !*s || *s == ' ' || *s == '\t')
		return SKV_EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end)
		return SKV_EINVAL;
	/* ERANGE only flags a subnormal or overflowing literal; the value strtod
	 * returns is still the correctly rounded one, so it is kept. */
	*x = v;
	return SKV_OK;
}

void csv_write_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}
