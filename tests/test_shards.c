/* test_shards.c - shards of a suite merged are the whole run byte for byte; merge refuses missing, repeated, foreign, unfinished and damaged shards; a run killed mid-way resumes to the same bytes; bad --shard values. */
#include "shardutil.h"

static char *scratch;
static char suite[4200], slow[4200];

/* A three-line suite of the three kinds of rows (split, online, a swept merge). */
static const char suite_text[] = "# shards test\n"
				 "run merge-rule --ctx=256 --trials=6\n"
				 "run split-count --ctx=1024 --splits=1,2,4,8 --trials=4 --partial=fp16,fp32 --lse=fp32\n"
				 "run block-size --ctx=64 --trials=2 --block-size=16,64\n";

/* A suite of 10 units of about 0.1 s of one thread each: long enough to be
 * killed mid-way, short enough for make check. */
static const char slow_text[] = "run split-count --ctx=4096 --splits=1,4,16 --trials=10\n";

static char *dir(const char *name)
{
	static char buf[8][4300];
	static int next;
	char *b = buf[next++ % 8];
	return fs_path(b, sizeof buf[0], scratch, name);
}

static char *flag(const char *name, const char *value)
{
	static char buf[8][4400];
	static int next;
	char *b = buf[next++ % 8];
	snprintf(b, sizeof buf[0], "--%s=%s", name, value);
	return b;
}

/* Runs skv; checks its status and that stderr holds want (on its one
 * line, for a refusal before any work: status 2 and not `worked`). */
static char *run_expect(int status, const char *want, char *const *argv, int worked, int line)
{
	char *err = NULL;
	int st = proc_run(argv, &err, NULL);
	const int one = status == 2 && !worked;
	if (st != status || (want && (!strstr(err, want) || (one && proc_lines(err) != 1))))
		fail_msg("%s:%d: %s %s ...: status %d, stderr \"%s\"; expected %d with \"%s\"%s", __FILE__, line, argv[1],
			 argv[2] ? argv[2] : "", st, err, status, want ? want : "", one ? " on one line" : "");
	return err;
}
#define RUNW(status, worked, want, ...)                                                                            \
	do {                                                                                                       \
		char *const argv_[] = {"skv", __VA_ARGS__, NULL};                                                 \
		free(run_expect((status), (want), argv_, (worked), __LINE__));                                     \
	} while (0)
#define RUN(status, want, ...) RUNW(status, 0, want, __VA_ARGS__)

static int exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

/* Shards 1/3, 2/3, 3/3, each its own process and folder, merged in any
 * order: the whole run's CSV and .md byte for byte, its .meta but for the
 * command, date and wall time. A shard folder holds only its shard file. */
static void test_shards_merge(void **state)
{
	(void)state;
	RUN(0, "skv: block-size: seed 1", "suite", suite, flag("out", dir("whole")));
	char name[64];
	for (int k = 1; k <= 3; k++) {
		snprintf(name, sizeof name, "s%d", k);
		char kk[16], want[64];
		snprintf(kk, sizeof kk, "%d/3", k);
		snprintf(want, sizeof want, "skv: shard %d/3: ", k);
		RUN(0, want, "suite", suite, flag("out", dir(name)), flag("shard", kk));
		assert_int_equal(fs_count(dir(name), ".csv"), 0);
		snprintf(name, sizeof name, "s%d/shard-%d-of-3.journal", k, k);
		assert_true(exists(dir(name)));
		assert_false(exists(fs_path((char[4400]){0}, 4400, dir(name), "../.skv.journal")));
	}
	RUN(0, "skv: merge-rule: seed 1", "merge", dir("m1"), dir("s1"), dir("s2"), dir("s3"));
	shu_same_results(dir("m1"), dir("whole"), __LINE__);
	RUN(0, NULL, "merge", dir("m2"), dir("s3/shard-3-of-3.journal"), dir("s1"), dir("s2"));
	shu_same_results(dir("m2"), dir("whole"), __LINE__);
	/* a shard of a single skv run */
	RUN(0, NULL, "run", "merge-rule", "--ctx=64", "--trials=5", flag("out", dir("r")));
	RUN(0, NULL, "run", "merge-rule", "--ctx=64", "--trials", "5", flag("out", dir("r1")), "--shard=1/2");
	RUN(0, NULL, "run", "merge-rule", "--shard", "2/2", "--ctx=64", "--trials=5", flag("out", dir("r2")));
	RUN(0, NULL, "merge", dir("rm"), dir("r1"), dir("r2"));
	shu_same_results(dir("rm"), dir("r"), __LINE__);
}

/* A suite whose lines name their own folders (the same experiment twice,
 * as a study split into lines is): the shards leave those folders alone
 * and merge recreates each under OUT, the files of the whole run run from
 * OUT. Absolute folders cannot be recreated: refused. */
static void test_shards_own_folders(void **state)
{
	(void)state;
	fs_put(scratch, "own.suite",
	       "run merge-rule --ctx=64 --trials=3 --out=a\n"
	       "run block-size --ctx=64 --trials=2 --block-size=16,64 --out=b\n"
	       "run merge-rule --ctx=64 --trials=2 --merge=onepass --out=c/d\n",
	       (size_t)-1);
	char own[4400], w[4300];
	snprintf(own, sizeof own, "%s", dir("own.suite"));
	snprintf(w, sizeof w, "%s", dir("ownwhole"));
	assert_int_equal(mkdir(w, 0777), 0);
	char *const whole[] = {"skv", "suite", own, NULL};
	assert_int_equal(proc_run(whole, NULL, w), 0); /* into ownwhole/a, b, c/d */
	RUN(0, NULL, "suite", own, "--shard=1/2", flag("out", dir("o1")));
	RUN(0, NULL, "suite", own, "--shard=2/2", flag("out", dir("o2")));
	assert_false(exists(dir("a")));
	assert_int_equal(fs_count(dir("o1"), ".csv"), 0);
	RUN(0, NULL, "merge", dir("om"), dir("o1"), dir("o2"));
	static const char *const sub[] = {"a", "b", "c/d"};
	for (int i = 0; i < 3; i++) {
		char g[4500], x[4500];
		snprintf(g, sizeof g, "%s/%s", dir("om"), sub[i]);
		snprintf(x, sizeof x, "%s/%s", w, sub[i]);
		shu_same_results(g, x, __LINE__);
	}
	char abs[4600];
	snprintf(abs, sizeof abs, "run merge-rule --ctx=64 --trials=2 --out=%s\nrun block-size --ctx=64 --trials=2 "
				  "--block-size=16 --out=b\n", dir("absolute"));
	fs_put(scratch, "abs.suite", abs, (size_t)-1);
	RUN(0, NULL, "suite", dir("abs.suite"), "--shard=1/1", flag("out", dir("ab1")));
	RUN(2, "writes into '", "merge", dir("abm"), dir("ab1"));
	RUN(2, "an absolute folder", "merge", dir("abm"), dir("ab1"));
	assert_false(exists(dir("abm")));
	assert_false(exists(dir("absolute")));
}

/* Every refusal: status 2, one line naming the culprit, OUT not created. */
static void test_merge_refusals(void **state)
{
	(void)state;
	char out[4300];
	snprintf(out, sizeof out, "%s", dir("bad"));
	RUN(2, "shard 3/3 is missing (2 of the 3 shards given)", "merge", out, dir("s1"), dir("s2"));
	RUN(2, "shard 2/3 is given twice", "merge", out, dir("s1"), dir("s2"), dir("s2"), dir("s3"));
	RUN(0, NULL, "suite", suite, flag("out", dir("seed7")), "--shard=2/3", "--seed=7");
	RUN(2, "is a shard of another run than", "merge", out, dir("s1"), dir("seed7"), dir("s3"));
	RUN(2, "--seed=7', not 'run merge-rule ... --seed=1'", "merge", out, dir("s1"), dir("seed7"), dir("s3"));
	RUN(0, NULL, "suite", suite, flag("out", dir("four")), "--shard=2/4");
	RUN(2, "(it has 'shards 4', not 'shards 3')", "merge", out, dir("s1"), dir("four"), dir("s3"));
	RUN(2, "no finished shard in", "merge", out, dir("s1"), scratch, dir("s3"));
	RUN(2, "no shard folder or file", "merge", out, dir("s1"), dir("nowhere"), dir("s3"));
	RUN(2, "no shard folder given", "merge", out);
	/* a damaged shard file: one byte of it changed */
	size_t len = 0;
	char *bytes = fs_get(dir("s2"), "shard-2-of-3.journal", &len);
	assert_true(len > 2000);
	bytes[len - 100] ^= 0x20;
	assert_int_equal(mkdir(dir("dmg"), 0777), 0);
	fs_put(dir("dmg"), "shard-2-of-3.journal", bytes, len);
	RUN(2, "is corrupt: record", "merge", out, dir("s1"), dir("dmg"), dir("s3"));
	/* a cut one (a shard file is whole: no cut record is dropped) */
	fs_put(dir("dmg"), "shard-2-of-3.journal", bytes, len - 200);
	RUN(2, "cut short", "merge", out, dir("s1"), dir("dmg"), dir("s3"));
	free(bytes);
	/* whole records moved: shard 2 without its last unit, then with one of shard 1's */
	journal_file f1, f2;
	message e = {NULL};
	char p1[4400], p2[4400];
	fs_path(p1, sizeof p1, dir("s1"), "shard-1-of-3.journal");
	fs_path(p2, sizeof p2, dir("s2"), "shard-2-of-3.journal");
	assert_int_equal(journal_read(&f1, p1, 1, &e), SKV_OK);
	assert_int_equal(journal_read(&f2, p2, 1, &e), SKV_OK);
	assert_true(f2.nrec > 2);
	const size_t cut = f2.rec[f2.nrec - 1].offset;
	fs_put(dir("dmg"), "shard-2-of-3.journal", (const char *)f2.buf, cut);
	RUN(2, "shard 2/3 ('", "merge", out, dir("s1"), dir("dmg"), dir("s3"));
	RUN(2, "lacks some of its units: it is not a finished shard", "merge", out, dir("s1"), dir("dmg"), dir("s3"));
	const journal_rec *r1 = &f1.rec[1];
	char *mixed = malloc(f2.size + 24 + r1->len);
	memcpy(mixed, f2.buf, f2.size);
	memcpy(mixed + f2.size, f1.buf + r1->offset, 24 + r1->len); /* the whole record, frame and all */
	fs_put(dir("dmg"), "shard-2-of-3.journal", mixed, f2.size + 24 + r1->len);
	RUN(2, "which is shard 1/3's, not 2/3's", "merge", out, dir("s1"), dir("dmg"), dir("s3"));
	free(mixed);
	journal_file_free(&f1), journal_file_free(&f2);
	assert_false(exists(out));
}

/* Bad --shard values and combinations: status 2, one line, nothing made. */
static void test_bad_shard_flags(void **state)
{
	(void)state;
	const char *const bad[] = {"0/3", "4/3", "1/0", "x", "1/3x", "-1/3", "3", "1/2000000"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char want[64];
		snprintf(want, sizeof want, "--shard=%s: expected K/N", bad[i]);
		RUN(2, want, "suite", suite, flag("out", dir("never")), flag("shard", bad[i]));
		RUN(2, want, "run", "merge-rule", flag("out", dir("never")), flag("shard", bad[i]));
	}
	RUN(2, "--report draws a whole suite's report, not a shard's", "suite", suite, flag("out", dir("never")),
	    "--shard=1/2", "--report");
	RUN(2, "skv: --shard=1/2 needs --out=DIR, the shard's own folder", "suite", suite, "--shard=1/2");
	RUN(2, "skv: --shard=1/2 needs --out=DIR, the shard's own folder", "suite", suite, "--shard", "1/2");
	assert_false(exists(dir("never")));
	/* --estimate: the units and each shard's estimate; nothing written */
	char *const est[] = {"skv", "suite", suite, flag("out", dir("never")), "--shard=2/3", "--estimate", NULL};
	char *err = run_expect(0, " work units, estimated", est, 0, __LINE__);
	assert_non_null(strstr(err, "skv: shard 2/3: "));
	assert_non_null(strstr(err, "every shard's: 1/3 "));
	assert_non_null(strstr(err, ", 3/3 "));
	free(err);
	assert_false(exists(dir("never")));
}

/* The number before `what` in text (-1 if absent). */
static long number_before(const char *text, const char *what)
{
	const char *p = strstr(text, what);
	if (!p)
		return -1;
	while (p > text && p[-1] == ' ')
		p--;
	while (p > text && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtol(p, NULL, 10);
}

/* SIGKILL once the journal holds finished units (it cannot be caught: no
 * handler runs), the last record cut as a write stopped mid-way would
 * leave it, then --resume: the same bytes as a run never stopped, with
 * the journalled units not run again. */
static void test_kill_and_resume(void **state)
{
	(void)state;
	RUN(0, NULL, "suite", slow, flag("out", dir("ref")), "--threads=2");
	char *const argv[] = {"skv", "suite", slow, flag("out", dir("k")), "--threads=1", NULL}; /* 4 units a chunk */
	char errpath[4400], jpath[4400];
	fs_path(errpath, sizeof errpath, scratch, "k.err");
	fs_path(jpath, sizeof jpath, dir("k"), ".skv.journal");
	pid_t pid = proc_start(argv, errpath, NULL);
	double t = 0;
	while (shu_journalled(jpath) == 0 && t < 30 && shu_wait_for(pid, 0) < 0)
		proc_sleep(0.005), t += 0.005;
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(proc_wait(pid), 128 + SIGKILL);
	assert_false(exists(fs_path((char[4400]){0}, 4400, dir("k"), "split-count.csv")));
	const off_t size = shu_size(jpath);
	assert_true(shu_journalled(jpath) > 0);
	assert_int_equal(truncate(jpath, size - 3), 0); /* a cut last record */
	char *const again[] = {"skv", "suite", slow, flag("out", dir("k")), "--threads=2", "--resume", NULL};
	char *err = run_expect(0, "were in the journal", again, 1, __LINE__);
	assert_non_null(strstr(err, "ended in a cut record"));
	const long had = number_before(err, "of the 10 units were in the journal");
	if (had < 1 || had > 9)
		fail_msg("%s:%d: resumed with %ld of 10 units journalled: \"%s\"", __FILE__, __LINE__, had, err);
	free(err);
	shu_same_results(dir("k"), dir("ref"), __LINE__);
	assert_int_equal(fs_count(dir("k"), ".skv.journal"), 0); /* done: the journal is gone */
	assert_int_equal(fs_count(dir("k"), ".tmp"), 0);
}

/* A run that fails keeps its journal and says so; the journal of another
 * run, or a damaged one, is refused by --resume; without --resume a new
 * journal replaces it. */
static void test_journal_refusals(void **state)
{
	(void)state;
	fs_put(scratch, "fails.suite",
	       "run merge-rule --ctx=64 --trials=4\n"
	       "run split-count --ctx=256 --splits=1 --trials=1 --input=fp16 --score-scale=1e6 --partial=fp32 --lse=fp32\n",
	       (size_t)-1);
	char f[4300];
	snprintf(f, sizeof f, "%s", dir("fails.suite"));
	RUNW(2, 1, "(the 4 finished units are kept in '", "suite", f, flag("out", dir("j")));
	size_t len;
	char *journal = fs_get(dir("j"), ".skv.journal", &len);
	assert_non_null(journal);
	RUN(2, "belongs to another run (it has 'run merge-rule ... --seed=1', not 'run merge-rule ... --seed=2')", "suite",
	    f, flag("out", dir("j")), "--resume", "--seed=2");
	RUN(2, "belongs to another run", "run", "merge-rule", "--ctx=64", "--trials=4", flag("out", dir("j")), "--resume");
	journal[len / 2] ^= 1;
	fs_put(dir("j"), ".skv.journal", journal, len);
	RUN(2, "is corrupt: record", "suite", f, flag("out", dir("j")), "--resume");
	journal[len / 2] ^= 1;
	fs_put(dir("j"), ".skv.journal", journal, len);
	char *const res[] = {"skv", "suite", f, flag("out", dir("j")), "--resume", NULL};
	char *err = run_expect(2, NULL, res, 1, __LINE__);
	assert_non_null(strstr(err, "skv: --resume: 4 of the 5 units were in the journal; 1 to run"));
	free(err);
	RUNW(2, 1, "(the 4 finished units are kept in '", "suite", f, flag("out", dir("j"))); /* a new journal */
	free(journal);
}

static int setup(void **state)
{
	(void)state;
	scratch = fs_tmpdir("shards");
	fs_put(scratch, "t.suite", suite_text, (size_t)-1);
	fs_put(scratch, "slow.suite", slow_text, (size_t)-1);
	fs_path(suite, sizeof suite, scratch, "t.suite");
	fs_path(slow, sizeof slow, scratch, "slow.suite");
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
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shards_merge),     cmocka_unit_test(test_shards_own_folders),
		cmocka_unit_test(test_merge_refusals),
		cmocka_unit_test(test_bad_shard_flags),  cmocka_unit_test(test_kill_and_resume),
		cmocka_unit_test(test_journal_refusals),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
