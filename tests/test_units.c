/* test_units.c - work units: rows measured unit by unit (any order, any chunking) and gathered from their records are the sweep's bit for bit; the shard partition; journals refuse damage and drop a cut last record. */
#include "fsutil.h"

#include <fcntl.h>
#include <math.h>

#include "cli/cli.h"
#include "core/journal.h"
#include "core/units.h"

static void make_spec(run_spec *s, const char *exp, const char *flags)
{
	message e = {NULL};
	char *buf = strdup(flags), *argv[32], *save = NULL;
	int argc = 0;
	for (char *t = strtok_r(buf, " ", &save); t && argc < 32; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	int st = catalog_spec_init(s, exp, &e);
	if (st == 0)
		st = spec_args(s, argc, argv, &e);
	if (st == 0)
		st = spec_check(s, &e);
	free(buf);
	if (st != 0)
		fail_msg("%s:%d: skv run %s %s: %s", __FILE__, __LINE__, exp, flags, msg_text(&e));
}

/* Bit-for-bit equality of two rows' values, with the inputs on failure. */
static void same_row(const sweep_row *a, const sweep_row *b, size_t r, const char *what)
{
	const double x[9] = {a->err.max_abs, a->err.max_rel, a->err.norm_rel, a->err.ulp, a->lse_err,
			     a->floor.max_abs, a->floor.max_rel, a->floor.norm_rel, a->floor.ulp};
	const double y[9] = {b->err.max_abs, b->err.max_rel, b->err.norm_rel, b->err.ulp, b->lse_err,
			     b->floor.max_abs, b->floor.max_rel, b->floor.norm_rel, b->floor.ulp};
	for (int i = 0; i < 9; i++)
		if (memcmp(&x[i], &y[i], sizeof x[i]) != 0)
			fail_msg("%s:%d: %s: row %zu field %d: %a, the sweep's %a", __FILE__, __LINE__, what, r, i, x[i], y[i]);
	if (a->out_state != b->out_state || a->lse_state != b->lse_state || a->point != b->point || a->trial != b->trial)
		fail_msg("%s:%d: %s: row %zu: states %d %d point %zu trial %llu, the sweep's %d %d %zu %llu", __FILE__,
			 __LINE__, what, r, a->out_state, a->lse_state, a->point, (unsigned long long)a->trial, b->out_state,
			 b->lse_state, b->point, (unsigned long long)b->trial);
}

typedef struct {
	unit_set *c;
} gather_ctx;

/* Each finished unit goes through its record, as the journal sees it. */
static int gather(void *ctx, const unit_plan *p, size_t unit, const sweep_row *rows, double busy, message *e)
{
	gather_ctx *g = ctx;
	unsigned char *rec;
	size_t len;
	assert_int_equal(unit_record(&rec, &len, p, 3, unit, rows, busy), SKV_OK);
	assert_int_equal(journal_check(rec, len), SKV_OK);
	uint64_t line, u;
	assert_int_equal(unit_record_line(&line, &u, rec + JOURNAL_FRAME_HEAD, len - 24), SKV_OK);
	assert_true(line == 3 && u == unit);
	int st = unit_record_add(g->c, p, rec + JOURNAL_FRAME_HEAD, len - 24, e);
	free(rec);
	return st;
}

/* The rows of every unit, run forward in chunks of 3 units, backward one
 * unit at a time, odd units then even ones in chunks of 2, equal the
 * sweep's bit for bit. */
static void check_units_equal_sweep(const char *exp, const char *flags)
{
	run_spec s;
	make_spec(&s, exp, flags);
	message e = {NULL};
	sweep_result ref;
	assert_int_equal(sweep_run(&ref, &s, NULL, &e), SKV_OK);
	for (int order = 0; order < 3; order++) {
		const size_t chunk = order == 0 ? 3 : order == 1 ? 1 : 2;
			unit_plan *p;
			unit_set c;
			assert_int_equal(unit_plan_open(&p, &s, &e), SKV_OK);
			assert_int_equal(unit_set_init(&c, p), SKV_OK);
			const size_t n = unit_count(p);
			assert_int_equal(n, ref.n_instances);
			size_t *u = malloc(n * sizeof *u), k = 0, rows = 0;
			for (size_t i = 0; i < n; i++) {
				unit_info ui;
				unit_describe(&ui, p, i);
				rows += ui.nrows;
				assert_true(ui.work > 0);
			}
			assert_int_equal(rows, ref.nrows); /* every row in one unit */
			for (int pass = 0; pass < (order == 2 ? 2 : 1); pass++)
				for (size_t i = 0; i < n; i++) {
					size_t j = order == 1 ? n - 1 - i : i;
					if (order != 2 || (int)(j % 2) != pass)
						u[k++] = j;
				}
			gather_ctx g = {&c};
			assert_int_equal(unit_plan_run(p, u, n, chunk, gather, &g, &e), SKV_OK);
			assert_int_equal(c.nhave, n);
			sweep_result r;
			unit_set_result(&r, &c, p, 0.0);
			assert_int_equal(r.n_truth_calls, ref.n_truth_calls);
			assert_int_equal(r.n_kernel_runs, ref.n_kernel_runs);
			assert_int_equal(r.nrows, ref.nrows);
			for (size_t i = 0; i < r.nrows; i++)
				same_row(&r.rows[i], &ref.rows[i], i, exp);
			sweep_result_free(&r);
			unit_set_free(&c);
			unit_plan_close(p);
			free(u);
		}
	sweep_result_free(&ref);
	spec_free(&s);
}

static void test_units_are_the_sweep(void **state)
{
	(void)state;
	check_units_equal_sweep("split-count", "--ctx=512 --splits=1,3,8 --partial=fp16,fp32 --lse=bf16,fp32 "
					       "--trials=3 --threads=2");
	check_units_equal_sweep("merge-rule", "--ctx=64 --trials=5 --threads=1");
	check_units_equal_sweep("block-size", "--ctx=64 --trials=2 --block-size=16,64 --threads=2"); /* online */
	check_units_equal_sweep("systems", "--ctx=128 --trials=2 --splits=2,7 --threads=2"); /* a swept preset */
}

/* Keeps the first finished unit's record. */
static int capture(void *ctx, const unit_plan *p, size_t unit, const sweep_row *rows, double busy, message *e)
{
	(void)e;
	unsigned char **rec = ctx;
	size_t len;
	assert_int_equal(unit_record(rec, &len, p, 0, unit, rows, busy), SKV_OK);
	return SKV_OK;
}

static void expect_refused(unit_set *c, const unit_plan *p, const unsigned char *pl, size_t n, const char *why,
			   int line)
{
	message e = {NULL};
	if (unit_record_add(c, p, pl, n, &e) != SKV_EINVAL || !strstr(msg_text(&e), why))
		fail_msg("%s:%d: expected a refusal with \"%s\", got \"%s\"", __FILE__, line, why, msg_text(&e));
	msg_free(&e);
}

/* A record of another run, a changed one, or one already in is refused. */
static void test_records_refused(void **state)
{
	(void)state;
	run_spec a, b;
	make_spec(&a, "merge-rule", "--ctx=64 --trials=3");
	make_spec(&b, "merge-rule", "--ctx=64 --trials=3 --merge=onepass");
	message e = {NULL};
	unit_plan *pa, *pb;
	unit_set ca, cb;
	assert_int_equal(unit_plan_open(&pa, &a, &e), SKV_OK);
	assert_int_equal(unit_plan_open(&pb, &b, &e), SKV_OK);
	assert_int_equal(unit_set_init(&ca, pa), SKV_OK);
	assert_int_equal(unit_set_init(&cb, pb), SKV_OK);
	size_t u = 1, n;
	unsigned char *rec = NULL;
	assert_int_equal(unit_plan_run(pa, &u, 1, 0, capture, &rec, &e), SKV_OK);
	unit_rows(pa, 1, &n);
	/* the payload: a head of six words, then a row: its number, 17 doubles
	 * (5 metrics, the LSE error, 5 floor metrics, 5 metrics and the LSE
	 * error against the original K and V), two states */
	const size_t len = 48 + n * 146;
	unsigned char *pl = rec + JOURNAL_FRAME_HEAD, *copy = malloc(len);
	expect_refused(&cb, pb, pl, len, "row count differs", __LINE__);
	memcpy(copy, pl, len);
	copy[48] ^= 1; /* the first row's number */
	expect_refused(&ca, pa, copy, len, "row numbers differ", __LINE__);
	memcpy(copy, pl, len);
	copy[48 + 144] = 7; /* the first row's output state */
	expect_refused(&ca, pa, copy, len, "unknown output or LSE state", __LINE__);
	memcpy(copy, pl, len);
	copy[8] = 99; /* the unit */
	expect_refused(&ca, pa, copy, len, "no such unit", __LINE__);
	expect_refused(&ca, pa, pl, 20, "too short", __LINE__);
	assert_int_equal(ca.nhave, 0); /* nothing refused was taken */
	assert_int_equal(unit_record_add(&ca, pa, pl, len, &e), SKV_OK);
	expect_refused(&ca, pa, pl, len, "recorded twice", __LINE__);
	free(copy), free(rec);
	unit_set_free(&ca), unit_set_free(&cb);
	unit_plan_close(pa), unit_plan_close(pb);
	spec_free(&a), spec_free(&b);
	msg_free(&e);
}

/* Longest processing time first: every unit in one shard, the loads
 * within the largest unit of each other, the same answer every time, and
 * each shard's load what its units add to. */
static void test_partition(void **state)
{
	(void)state;
	uint64_t x = 0x9E3779B97F4A7C15u;
	enum { N = 500 };
	double w[N];
	unsigned sh[N], again[N];
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64, seeded */
		w[i] = (double)(x % 1000 + 1) * (i % 7 == 0 ? 50 : 1);
	}
	const unsigned counts[] = {1, 2, 3, 7, 64, 600};
	for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
		const unsigned m = counts[c];
		double load[600] = {0}, wmax = 0;
		assert_int_equal(unit_partition(sh, w, N, m), SKV_OK);
		assert_int_equal(unit_partition(again, w, N, m), SKV_OK);
		assert_memory_equal(sh, again, sizeof sh);
		for (int i = 0; i < N; i++) {
			assert_true(sh[i] < m);
			load[sh[i]] += w[i];
			wmax = w[i] > wmax ? w[i] : wmax;
		}
		double lo = INFINITY, hi = 0;
		for (unsigned k = 0; k < m; k++)
			lo = load[k] < lo ? load[k] : lo, hi = load[k] > hi ? load[k] : hi;
		if (hi - lo > wmax)
			fail_msg("%s:%d: %u shards: loads from %a to %a, more apart than the largest unit %a", __FILE__,
				 __LINE__, m, lo, hi, wmax);
	}
	/* ties: equal costs go round the shards in index order */
	double eq[6] = {1, 1, 1, 1, 1, 1};
	unsigned s6[6];
	assert_int_equal(unit_partition(s6, eq, 6, 4), SKV_OK);
	const unsigned want[6] = {0, 1, 2, 3, 0, 1};
	assert_memory_equal(s6, want, sizeof want);
}

/* ---------------------------------------------------------------- journal */

static char *scratch;

/* A journal of a header and three records of 10, 20, 30 bytes. */
static void write_journal(const char *path, size_t *ends)
{
	journal j;
	message e = {NULL};
	assert_int_equal(journal_create(&j, path, "header text", 11, &e), SKV_OK);
	size_t at = 16 + 11 + 8;
	ends[0] = at;
	for (int r = 1; r <= 3; r++) {
		unsigned char pay[30], *rec;
		size_t len;
		memset(pay, 'a' + r, sizeof pay);
		assert_int_equal(journal_frame(&rec, &len, JOURNAL_UNIT, pay, (size_t)(10 * r)), SKV_OK);
		assert_int_equal(journal_append(&j, rec, len, &e), SKV_OK);
		free(rec);
		ends[r] = at += len;
	}
	assert_int_equal(journal_close(&j, &e), SKV_OK);
}

static void flip(const char *path, size_t at, unsigned char x)
{
	int fd = open(path, O_RDWR);
	unsigned char c;
	assert_int_equal(pread(fd, &c, 1, (off_t)at), 1);
	c ^= x;
	assert_int_equal(pwrite(fd, &c, 1, (off_t)at), 1);
	close(fd);
}

static void expect_read(const char *path, int strict, int st, const char *why, size_t nrec, int torn, int line)
{
	journal_file f;
	message e = {NULL};
	int got = journal_read(&f, path, strict, &e);
	if (got != st || (why && !strstr(msg_text(&e), why)) || (got == SKV_OK && (f.nrec != nrec || f.torn != torn)))
		fail_msg("%s:%d: read (strict %d): status %d \"%s\", %zu records, torn %d; expected %d \"%s\" %zu %d",
			 __FILE__, line, strict, got, msg_text(&e), got == SKV_OK ? f.nrec : 0, got == SKV_OK ? f.torn : 0, st,
			 why ? why : "", nrec, torn);
	if (got == SKV_OK)
		journal_file_free(&f);
	msg_free(&e);
}

static void test_journal_damage(void **state)
{
	(void)state;
	char path[600];
	size_t ends[4];
	snprintf(path, sizeof path, "%s/j", scratch);
	write_journal(path, ends);
	journal_file f;
	message e = {NULL};
	assert_int_equal(journal_read(&f, path, 1, &e), SKV_OK);
	assert_int_equal(f.nrec, 4);
	assert_int_equal(f.rec[0].type, JOURNAL_HEADER);
	assert_memory_equal(f.rec[0].data, "header text", 11);
	assert_int_equal(f.rec[2].len, 20);
	assert_int_equal(f.rec[2].data[19], 'c');
	assert_int_equal(f.good, ends[3]);
	journal_file_free(&f);
	/* a byte of record 2 changed: corrupt, strict or not */
	flip(path, ends[1] + 20, 0x10);
	expect_read(path, 0, SKV_EINVAL, "record 2 (byte", 0, 0, __LINE__);
	flip(path, ends[1] + 20, 0x10);
	/* the last record cut: dropped unless strict; continuing truncates it */
	assert_int_equal(truncate(path, (off_t)(ends[3] - 5)), 0);
	expect_read(path, 1, SKV_EINVAL, "cut short", 0, 0, __LINE__);
	expect_read(path, 0, SKV_OK, NULL, 3, 1, __LINE__);
	journal j;
	assert_int_equal(journal_continue(&j, path, ends[2], &e), SKV_OK);
	assert_int_equal(journal_close(&j, &e), SKV_OK);
	expect_read(path, 1, SKV_OK, NULL, 3, 0, __LINE__);
	/* a last record whose checksum is off, or zeros where it should be */
	write_journal(path, ends);
	flip(path, ends[3] - 9, 1);
	expect_read(path, 0, SKV_OK, NULL, 3, 1, __LINE__);
	expect_read(path, 1, SKV_EINVAL, "checksum mismatch", 0, 0, __LINE__);
	write_journal(path, ends);
	FILE *z = fopen(path, "ab");
	for (int i = 0; i < 100; i++)
		fputc(0, z);
	fclose(z);
	expect_read(path, 0, SKV_OK, NULL, 4, 1, __LINE__);
	/* not a journal; the header damaged */
	fs_put(scratch, "j", "run merge-rule --ctx=64\n", (size_t)-1);
	expect_read(path, 0, SKV_EINVAL, "no record starts there", 0, 0, __LINE__);
	write_journal(path, ends);
	flip(path, 18, 4);
	expect_read(path, 0, SKV_EINVAL, "record 0 (byte 0): checksum mismatch", 0, 0, __LINE__);
}

static int setup(void **state)
{
	(void)state;
	scratch = fs_tmpdir("units");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rmtree(scratch);
	return 0;
}

int main(void)
{
	temp_install();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_are_the_sweep),
		cmocka_unit_test(test_records_refused),
		cmocka_unit_test(test_partition),
		cmocka_unit_test(test_journal_damage),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
