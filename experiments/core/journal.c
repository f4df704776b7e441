/* journal.c - journal records: framing with a checksum, reading a whole journal back, appending to one safely. */
#define _GNU_SOURCE /* fdatasync */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/core.h"
#include "core/journal.h"
#include "io/csv.h"

enum { FRAME_HEAD = JOURNAL_FRAME_HEAD, FRAME_TAIL = JOURNAL_FRAME_TAIL };
static const char magic[4] = {'S', 'K', 'V', 'J'};

void journal_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

uint64_t journal_get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int journal_frame(unsigned char **rec, size_t *len, unsigned type, const void *payload, size_t n)
{
	unsigned char *r = malloc(FRAME_HEAD + n + FRAME_TAIL);
	if (!r)
		return SKV_ENOMEM;
	memcpy(r, magic, 4);
	for (int i = 0; i < 4; i++)
		r[4 + i] = (unsigned char)(type >> (8 * i));
	journal_put64(r + 8, n);
	if (n)
		memcpy(r + FRAME_HEAD, payload, n);
	journal_put64(r + FRAME_HEAD + n, csv_fnv1a64(CSV_FNV_INIT, r + 4, FRAME_HEAD - 4 + n));
	*rec = r;
	*len = FRAME_HEAD + n + FRAME_TAIL;
	return SKV_OK;
}

/* ---------------------------------------------------------------- reading */

static int read_all(journal_file *f, const char *path, message *e)
{
	char *text = NULL;
	io_slurp_info in;
	if (io_slurp(&text, &f->size, path, SIZE_MAX - 1, &in) == SKV_OK) {
		f->buf = (unsigned char *)text;
		return SKV_OK;
	}
	msg_set(e, "skv: cannot read the journal '%s': %s", path,
		in.why == IO_READ_NOT_REGULAR ? "not a regular file"
		: in.why == IO_READ_NOMEM     ? "out of memory"
					      : strerror(in.err));
	return SKV_EIO;
}

/* Why the record at offset o is not whole and valid, or NULL if it is. */
static const char *bad_record(const journal_file *f, size_t o, uint64_t *len)
{
	const size_t left = f->size - o;
	if (left < FRAME_HEAD)
		return "cut short";
	if (memcmp(f->buf + o, magic, 4) != 0)
		return "no record starts there";
	*len = journal_get64(f->buf + o + 8);
	if (*len > left - FRAME_HEAD || left - FRAME_HEAD - *len < FRAME_TAIL)
		return "cut short";
	const uint64_t sum = csv_fnv1a64(CSV_FNV_INIT, f->buf + o + 4, FRAME_HEAD - 4 + (size_t)*len);
	if (sum != journal_get64(f->buf + o + FRAME_HEAD + *len))
		return "checksum mismatch";
	return NULL;
}

int journal_check(const unsigned char *rec, size_t n)
{
	journal_file f = {(unsigned char *)rec, n, 0, NULL, 0, 0};
	uint64_t len = 0;
	return !bad_record(&f, 0, &len) && FRAME_HEAD + len + FRAME_TAIL == n ? SKV_OK : SKV_EINVAL;
}

int journal_read(journal_file *f, const char *path, int strict, message *e)
{
	memset(f, 0, sizeof *f);
	int st = read_all(f, path, e);
	size_t cap = 0;
	for (size_t o = 0; st == SKV_OK && o < f->size;) {
		uint64_t len = 0;
		const char *why = bad_record(f, o, &len);
		/* What an interrupted append leaves: a cut record, a last record
		 * whose bytes did not all reach the disk, or zeros. */
		size_t z = o;
		while (why && z < f->size && f->buf[z] == 0)
			z++;
		const int last = why && (strcmp(why, "cut short") == 0 || z == f->size ||
					 (strcmp(why, "checksum mismatch") == 0 && o + FRAME_HEAD + len + FRAME_TAIL == f->size));
		if (why && !strict && last && f->nrec > 0) {
			f->torn = 1; /* the write a kill interrupted: its unit runs again */
			break;
		}
		if (why) {
			msg_set(e, "skv: the journal '%s' is corrupt: record %zu (byte %zu): %s; remove it to start again",
				path, f->nrec, o, why);
			st = SKV_EINVAL;
			break;
		}
		if (f->nrec == cap) {
			journal_rec *g = realloc(f->rec, (cap = cap ? 2 * cap : 64) * sizeof *g);
			if (!g) {
				msg_set(e, "skv: out of memory");
				st = SKV_ENOMEM;
				break;
			}
			f->rec = g;
		}
		f->rec[f->nrec++] = (journal_rec){get32(f->buf + o + 4), f->buf + o + FRAME_HEAD, (size_t)len, o};
		o += FRAME_HEAD + (size_t)len + FRAME_TAIL;
		f->good = o;
	}
	if (st == SKV_OK && (f->nrec == 0 || f->rec[0].type != JOURNAL_HEADER)) {
		msg_set(e, "skv: '%s' is not an skv journal (%s)", path, f->nrec ? "no header record first" : "empty");
		st = SKV_EINVAL;
	}
	if (st != SKV_OK)
		journal_file_free(f);
	return st;
}

void journal_file_free(journal_file *f)
{
	free(f->buf);
	free(f->rec);
	memset(f, 0, sizeof *f);
}

/* ---------------------------------------------------------------- writing */

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int journal_create(journal *j, const char *path, const void *header, size_t n, message *e)
{
	memset(j, 0, sizeof *j);
	j->fd = -1;
	char *tmp = NULL;
	unsigned char *rec = NULL;
	size_t len = 0;
	if (journal_frame(&rec, &len, JOURNAL_HEADER, header, n) != SKV_OK) {
		msg_set(e, "skv: out of memory");
		return SKV_ENOMEM;
	}
	int st = temp_create(&tmp, path, e);
	int fd = st == SKV_OK ? open(tmp, O_WRONLY | O_CLOEXEC) : -1;
	if (st == SKV_OK && (fd < 0 || write_all(fd, rec, len) != 0)) {
		msg_set(e, "skv: cannot write the journal '%s': %s", path, strerror(errno));
		st = SKV_EIO;
	}
	if (fd >= 0)
		close(fd);
	free(rec);
	char *fin = (char *)path;
	if (st == SKV_OK)
		st = outdir_publish(&tmp, &fin, 1, e);
	if (st != SKV_OK && tmp)
		temp_discard(tmp);
	free(tmp);
	return st == SKV_OK ? journal_continue(j, path, len, e) : st;
}

int journal_continue(journal *j, const char *path, size_t good, message *e)
{
	memset(j, 0, sizeof *j);
	j->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	j->path = strdup(path);
	if (j->fd < 0 || !j->path || ftruncate(j->fd, (off_t)good) != 0) {
		msg_set(e, "skv: cannot append to the journal '%s': %s", path, j->path ? strerror(errno) : "out of memory");
		if (j->fd >= 0)
			close(j->fd);
		free(j->path);
		memset(j, 0, sizeof *j);
		j->fd = -1;
		return SKV_EIO;
	}
	j->synced = progress_now();
	return SKV_OK;
}

int journal_append(journal *j, const void *rec, size_t n, message *e)
{
	if (write_all(j->fd, rec, n) != 0) {
		msg_set(e, "skv: cannot append to the journal '%s': %s", j->path, strerror(errno));
		return SKV_EIO;
	}
	/* A killed process loses nothing written; a machine that stops loses at
	 * most the last second's records, which then run again. */
	double t = progress_now();
	if (t - j->synced >= 1.0) {
		fdatasync(j->fd);
		j->synced = t;
	}
	return SKV_OK;
}

int journal_close(journal *j, message *e)
{
	if (!j->path)
		return SKV_OK;
	int st = fdatasync(j->fd) == 0 || errno == EINVAL ? SKV_OK : SKV_EIO;
	if (close(j->fd) != 0)
		st = SKV_EIO;
	if (st != SKV_OK)
		msg_set(e, "skv: cannot write the journal '%s': %s", j->path, strerror(errno));
	free(j->path);
	memset(j, 0, sizeof *j);
	j->fd = -1;
	return st;
}
