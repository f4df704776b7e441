/* test_outdir.c - output folders: one writer at a time, a set of files published together, no temporary left, make report staged (D3, D13-D15, D17). */
#include "procutil.h"

#include <sys/file.h>

#include "cli/cli.h"

static char *scratch;

/* A small run: merge-rule at 64 keys, one trial. */
static int run_small(const char *out, const char *seed, char **err)
{
	char o[4200], s[64];
	snprintf(o, sizeof o, "--out=%s", out);
	snprintf(s, sizeof s, "--seed=%s", seed);
	char *argv[] = {"skv", "run", "merge-rule", "--ctx=64", "--trials=1", s, o, NULL};
	return proc_run(argv, err, NULL);
}

/* D3: while another process holds the folder's lock, a run into it is
 * refused at once (status 1), the message naming the holder, and writes
 * nothing; once the lock is free the same run works. */
static void test_lock_refuses_second_writer(void **state)
{
	(void)state;
	char dir[4200], lock[4300];
	fs_path(dir, sizeof dir, scratch, "locked");
	mkdir(dir, 0777);
	fs_path(lock, sizeof lock, dir, ".skv.lock");
	int fd = open(lock, O_RDWR | O_CREAT, 0666);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	assert_true(write(fd, "pid 424242 since now: skv run the-other-one\n", 44) == 44);
	char *err = NULL;
	int st = run_small(dir, "1", &err);
	if (st != 1 || !strstr(err, "is in use by another skv (pid 424242 since now: skv run the-other-one)") ||
	    proc_lines(err) != 1 || fs_count(dir, "merge-rule"))
		fail_msg("%s:%d: status %d, stderr \"%s\", %zu merge-rule files: expected 1, a one-line refusal naming the "
			 "holder, no file",
			 __FILE__, __LINE__, st, err, fs_count(dir, "merge-rule"));
	free(err);
	close(fd); /* the kernel drops the lock */
	assert_int_equal(run_small(dir, "1", NULL), 0);
	assert_int_equal(fs_count(dir, "merge-rule."), 3);
}

/* D13: the .meta records the CSV's and .md's size and checksum; a set
 * mixed from two runs (another run's .md or CSV beside this .meta) is
 * refused by skv report, naming the file. */
static void test_mixed_set_refused(void **state)
{
	(void)state;
	char a[4200], b[4200];
	fs_path(a, sizeof a, scratch, "set-a");
	fs_path(b, sizeof b, scratch, "set-b");
	assert_int_equal(run_small(a, "1", NULL), 0);
	assert_int_equal(run_small(b, "2", NULL), 0);
	char *meta = fs_get(a, "merge-rule.meta", NULL);
	assert_non_null(meta);
	assert_non_null(strstr(meta, "\ncsv_file: merge-rule.csv, "));
	assert_non_null(strstr(meta, "\nmd_file: merge-rule.md, "));
	free(meta);
	static const char *const swap[] = {"merge-rule.md", "merge-rule.csv"};
	for (int k = 0; k < 2; k++) {
		/* a with b's file: what an interrupted set of renames could leave */
		size_t len = 0;
		char *other = fs_get(b, swap[k], &len), *mine = fs_get(a, swap[k], NULL);
		fs_put(a, swap[k], other, len);
		char *err = NULL;
		char *argv[] = {"skv", "report", a, NULL};
		int st = proc_run(argv, &err, NULL);
		if (st != 1 || !strstr(err, "does not match merge-rule.meta") || !strstr(err, swap[k]))
			fail_msg("%s:%d: report of a set with another run's %s: status %d, \"%s\"", __FILE__, __LINE__,
				 swap[k], st, err);
		fs_put(a, swap[k], mine, (size_t)-1);
		free(err), free(other), free(mine);
	}
	char *argv[] = {"skv", "report", a, NULL};
	assert_int_equal(proc_run(argv, NULL, NULL), 0);
}

/* D14: a temporary a killed run left (a SIGKILL cannot be caught) is
 * removed by the next run into the folder, which holds its lock; and a
 * caught signal removes the temporaries registered at that moment. */
static void test_temporaries_removed(void **state)
{
	(void)state;
	char dir[4200];
	fs_path(dir, sizeof dir, scratch, "stale");
	mkdir(dir, 0777);
	fs_put(dir, ".merge-rule.csv.Ab12Cd.tmp", "half a CSV", (size_t)-1);
	fs_put(dir, "keep.tmp", "not hidden: not skv's", (size_t)-1);
	assert_int_equal(run_small(dir, "1", NULL), 0);
	assert_int_equal(fs_count(dir, ".merge-rule.csv.Ab12Cd.tmp"), 0);
	assert_int_equal(fs_count(dir, "keep.tmp"), 1);

	/* In a child: create two registered temporaries, then SIGTERM. */
	char final[4200];
	fs_path(final, sizeof final, dir, "x.csv");
	pid_t pid = fork();
	if (pid == 0) {
		temp_install();
		message e = {NULL};
		char *t1, *t2;
		if (temp_create(&t1, final, &e) != SKV_OK || temp_create(&t2, final, &e) != SKV_OK)
			_exit(3);
		raise(SIGTERM);
		_exit(4);
	}
	assert_int_equal(proc_wait(pid), 128 + SIGTERM);
	assert_int_equal(fs_count(dir, ".x.csv."), 0);
}

/* A suite of two lines: the second (mode 1) draws a value fp16 cannot
 * hold, which fails at run time after the first line ran, or (mode 2)
 * runs for seconds, long enough to be interrupted; mode 0 is quick. */
static void write_suite(const char *path, int mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "run merge-rule --ctx=64 --trials=1\n");
	if (mode == 2)
		fprintf(f, "run block-size --trials=2\n");
	else
		fprintf(f, "run split-count --ctx=256 --splits=1,2 --trials=1 --partial=fp32 --lse=fp32%s\n",
			mode ? " --input=fp16 --score-scale=1e6" : "");
	fclose(f);
}

/* D15: skv suite --report (what make report runs) replaces the folder only
 * when everything worked: a run that fails or is interrupted leaves the
 * old folder exactly as it was, and no staging folder behind. */
static void test_staged_report(void **state)
{
	(void)state;
	char out[4200], suite[4200], o[4300];
	fs_path(out, sizeof out, scratch, "staged");
	fs_path(suite, sizeof suite, scratch, "staged.suite");
	snprintf(o, sizeof o, "--out=%s", out);
	mkdir(out, 0777);
	fs_put(out, "REPORT.md", "the committed report\n", (size_t)-1);
	char *argv[] = {"skv", "suite", suite, o, "--report", NULL};
	write_suite(suite, 1);
	char *err = NULL;
	int st = proc_run(argv, &err, NULL);
	char *kept = fs_get(out, "REPORT.md", NULL);
	if (st != 2 || !kept || strcmp(kept, "the committed report\n") != 0 || fs_count(out, "merge-rule") ||
	    fs_count(scratch, ".staged.staging"))
		fail_msg("%s:%d: a failing staged suite: status %d (\"%s\"), REPORT.md \"%s\", %zu merge-rule files, %zu "
			 "staging folders: expected 2, the old report, none, none",
			 __FILE__, __LINE__, st, err, kept ? kept : "(none)", fs_count(out, "merge-rule"),
			 fs_count(scratch, ".staged.staging"));
	free(err), free(kept);
	/* Interrupted (SIGINT, as ^C in make report) while its second line
	 * runs: the first line's files in the staging folder go with it. */
	write_suite(suite, 2);
	char errpath[4300];
	fs_path(errpath, sizeof errpath, scratch, "staged.err");
	pid_t pid = proc_start(argv, errpath, NULL);
	proc_sleep(0.6);
	kill(pid, SIGINT);
	st = proc_wait(pid);
	kept = fs_get(out, "REPORT.md", NULL);
	if (st != 128 + SIGINT || !kept || strcmp(kept, "the committed report\n") != 0 ||
	    fs_count(scratch, ".staged.staging"))
		fail_msg("%s:%d: an interrupted staged suite: status %d, REPORT.md \"%s\", %zu staging folders", __FILE__,
			 __LINE__, st, kept ? kept : "(none)", fs_count(scratch, ".staged.staging"));
	free(kept);
	/* And when it works, the folder is the new one, whole. */
	write_suite(suite, 0);
	assert_int_equal(proc_run(argv, NULL, NULL), 0);
	kept = fs_get(out, "REPORT.md", NULL);
	assert_non_null(kept);
	assert_non_null(strstr(kept, "# skv report"));
	assert_int_equal(fs_count(out, "merge-rule."), 5); /* csv md meta png svg */
	assert_int_equal(fs_count(scratch, ".staged.staging"), 0);
	free(kept);
}

/* D17: the same experiment twice into one folder is refused before
 * anything runs (the second would replace the first's files). */
static void test_suite_same_experiment_twice(void **state)
{
	(void)state;
	char out[4200], suite[4200], o[4300];
	fs_path(out, sizeof out, scratch, "twice");
	fs_path(suite, sizeof suite, scratch, "twice.suite");
	snprintf(o, sizeof o, "--out=%s", out);
	fs_put(scratch, "twice.suite", "run merge-rule --ctx=64 --trials=1 --splits=1\n# x\nrun merge-rule --ctx=64 --trials=1 --splits=2\n",
	       (size_t)-1);
	char *argv[] = {"skv", "suite", suite, o, NULL};
	char *err = NULL;
	int st = proc_run(argv, &err, NULL);
	char want[8500];
	snprintf(want, sizeof want, "skv: %s:3: experiment merge-rule already runs at line 1 into '%s'", suite, out);
	struct stat sb;
	if (st != 2 || strncmp(err, want, strlen(want)) != 0 || stat(out, &sb) == 0)
		fail_msg("%s:%d: status %d, \"%s\": expected 2, \"%s...\" and no folder", __FILE__, __LINE__, st, err, want);
	free(err);
}

static int setup(void **state)
{
	(void)state;
	scratch = fs_tmpdir("outdir");
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
		cmocka_unit_test(test_lock_refuses_second_writer),
		cmocka_unit_test(test_mixed_set_refused),
		cmocka_unit_test(test_temporaries_removed),
		cmocka_unit_test(test_staged_report),
		cmocka_unit_test(test_suite_same_experiment_twice),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
