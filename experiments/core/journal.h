/* journal.h - append-only journals of finished work units: checksummed records, written as units finish, read back to resume or merge. */
#ifndef CORE_JOURNAL_H
#define CORE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "io/io.h"

/*
 * A journal is a sequence of records, each
 *   "SKVJ" | type (u32) | length L (u64) | L payload bytes | FNV-1a 64 of type, length and payload (u64)
 * integers little-endian. Record 0 is the header (JOURNAL_HEADER: what run
 * the journal belongs to, as text); every other record is one finished
 * unit (JOURNAL_UNIT, units.h). Records are only ever appended, one write
 * each, so a process killed at any point leaves whole records and at most a
 * cut last one; the checksum catches a record damaged otherwise.
 */
enum { JOURNAL_HEADER = 1, JOURNAL_UNIT = 2 };
/* Bytes of a record before and after its payload. */
enum { JOURNAL_FRAME_HEAD = 16, JOURNAL_FRAME_TAIL = 8 };

/* Little-endian fields, for the payloads. */
void journal_put64(unsigned char *p, uint64_t v);
uint64_t journal_get64(const unsigned char *p);

/* One framed record of `type` around payload[0..n); *rec malloc'd. SKV_ENOMEM. */
int journal_frame(unsigned char **rec, size_t *len, unsigned type, const void *payload, size_t n);

/* SKV_OK when rec[0..n) is exactly one whole record with a right checksum, else SKV_EINVAL. */
int journal_check(const unsigned char *rec, size_t n);

typedef struct {
	unsigned type;
	const unsigned char *data; /* the payload, inside the file's buffer */
	size_t len;
	size_t offset; /* of the record in the file */
} journal_rec;

typedef struct {
	unsigned char *buf;
	size_t size;   /* bytes read */
	size_t good;   /* bytes of whole, valid records */
	journal_rec *rec;
	size_t nrec;
	int torn;      /* a cut or damaged last record was dropped (not strict) */
} journal_file;

/* Reads and checks a whole journal: record 0 a header, every checksum
 * right. strict: any damage is refused (a finished shard); else a cut or
 * damaged last record is dropped (torn set: the unit it held runs again).
 * SKV_EIO when unreadable, SKV_EINVAL with a message naming the path and
 * the record for a corrupt file. */
int journal_read(journal_file *f, const char *path, int strict, message *e);
void journal_file_free(journal_file *f);

/* A journal open for appending. */
typedef struct {
	int fd;
	char *path;
	double synced; /* when it was last flushed to disk */
} journal;

/* A new journal at path holding only the header record: written beside it,
 * flushed, renamed over whatever was there. SKV_EIO with a message. */
int journal_create(journal *j, const char *path, const void *header, size_t n, message *e);
/* Continues the journal at path after its first `good` bytes (journal_read's), dropping the rest. */
int journal_continue(journal *j, const char *path, size_t good, message *e);
/* Appends one framed record in one write; flushed to disk at most once a second. */
int journal_append(journal *j, const void *rec, size_t n, message *e);
/* Flushes and closes (a journal never opened or closed already: no-op). */
int journal_close(journal *j, message *e);

#endif
