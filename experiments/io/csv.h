/* csv.h - a strict RFC 4180 CSV reader whose every error names the file and line. */
#ifndef CSV_H
#define CSV_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "io/io.h" /* message */

/* A parsed CSV file: a header record and nrows data records of ncols fields
 * each. Fields are unquoted, NUL-terminated strings owned by the table. */
typedef struct {
	size_t ncols;
	size_t nrows;   /* data records, header excluded */
	char **field;   /* [(nrows + 1) * ncols]; record 0 is the header */
	size_t *line;   /* [nrows + 1] physical line (1-based) where each record starts */
	char *name;     /* the file name used in messages */
	char *text;     /* storage of every field */
	size_t *sorted; /* [ncols] the columns in name order (for lookups) */
	size_t bytes;   /* size of the file read (csv_read), 0 otherwise */
	uint64_t fnv;   /* its FNV-1a 64 checksum (csv_fnv1a64 of its bytes) */
} csv_table;

/* Limits, far above what skv writes (a million rows of about 40 columns is
 * under 400 MB): a file beyond them is refused with a message. */
#define CSV_MAX_COLS 4096
#define CSV_MAX_BYTES ((uint64_t)2 << 30)

/* Parses text[0..len) as RFC 4180 CSV: records end in CRLF or LF (the last
 * may have no terminator), fields are separated by commas, a field may be
 * quoted with '"' and then hold commas, line breaks and '""' for a quote.
 * Strict: a quote inside an unquoted field, anything but a separator after a
 * closing quote, an unterminated quote, a bare CR, a NUL byte, a record
 * whose field count differs from the header's, an empty header field or a
 * duplicated header name is an error. A leading UTF-8 byte order mark is
 * skipped. `name` is only used in messages.
 * On error returns SKV_EINVAL (SKV_ENOMEM), sets e (io.h; may be NULL) to
 * "name:line: what" and leaves *t untouched. */
int csv_parse(csv_table *t, const char *text, size_t len, const char *name, message *e);

/* Reads and parses the file at path; SKV_EIO (with "path: reason") when it
 * cannot be read, is not a regular file (refused without blocking on a
 * FIFO) or is larger than CSV_MAX_BYTES. The _as form names the file
 * `name` in messages. Records the file's size and checksum in t. */
int csv_read(csv_table *t, const char *path, message *e);
int csv_read_as(csv_table *t, const char *path, const char *name, message *e);

/* FNV-1a, 64 bits (Fowler, Noll, Vo), continuing from h: the checksum a
 * .meta records for its CSV and .md (it ties a set of files together
 * against a mixed or cut write; it is no defence against forgery). */
#define CSV_FNV_INIT UINT64_C(0xcbf29ce484222325)
uint64_t csv_fnv1a64(uint64_t h, const void *data, size_t n);

void csv_free(csv_table *t);
/* Writes s as one CSV field (RFC 4180): quoted when it holds a comma, a
 * quote or a line break, quotes doubled. */
void csv_write_field(FILE *f, const char *s);

/* Field `col` of data record `row` (0-based, header excluded); NULL when out
 * of range. */
const char *csv_get(const csv_table *t, size_t row, size_t col);
/* Name of column col; NULL when out of range. */
const char *csv_colname(const csv_table *t, size_t col);
/* Index of the column named `name` in *col: SKV_OK, or SKV_EINVAL when
 * there is no such column (*col untouched). */
int csv_find(const csv_table *t, const char *name, size_t *col);
/* Line where data record `row` starts (0 when out of range). */
size_t csv_line(const csv_table *t, size_t row);

/* Parses a whole field as a number as printf("%.17g") writes it, including
 * inf, -inf and nan: SKV_OK, or SKV_EINVAL for an empty field, leading
 * blanks or trailing characters (*x untouched). */
int csv_number(double *x, const char *s);
/* Sets e to "name:line: " and the message: the one shape of every error
 * about a CSV file. */
void csv_fail(message *e, const char *name, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
