/* test_inputs.c - bad input to the program refused before any work with one clear line, never truncated (D10, D11, D16, D18-D23, D25). */
#include "procutil.h"

#include <sys/stat.h>

static char *scratch;

/* Runs build/skv with argv (NULL-terminated) and checks the status, that
 * stderr is one line holding every string of want[] (NULL-terminated), and
 * that the folder `untouched` (may be NULL) does not exist afterwards. */
static void expect(int status, const char *const *want, char *const *argv, const char *untouched, int line)
{
	char *err = NULL;
	int st = proc_run(argv, &err, NULL);
	int ok = st == status && proc_lines(err) == 1;
	for (size_t i = 0; ok && want[i]; i++)
		ok = strstr(err, want[i]) != NULL;
	struct stat sb;
	if (untouched && stat(untouched, &sb) == 0)
		fail_msg("%s:%d: %s was created", __FILE__, line, untouched);
	if (!ok) {
		char args[4096] = "";
		for (size_t i = 1; argv[i]; i++)
			snprintf(args + strlen(args), sizeof args - strlen(args), " %.200s", argv[i]);
		fail_msg("%s:%d: skv%s: status %d, stderr \"%s\" (%zu lines); expected %d, one line with \"%s\"...",
			 __FILE__, line, args, st, err, proc_lines(err), status, want[0]);
	}
	free(err);
}
#define EXPECT(status, argv, untouched, ...)                                                           \
	do {                                                                                           \
		const char *const want_[] = {__VA_ARGS__, NULL};                                       \
		expect((status), want_, (argv), (untouched), __LINE__);                                \
	} while (0)

static char out_flag[4300], out_dir[4200];

/* Each test starts without the output folder. */
static void clean(void)
{
	struct stat sb;
	if (stat(out_dir, &sb) == 0)
		fs_rmtree(strdup(out_dir));
}

/* D16 (a list repeating a value), D25 (a flag given twice), D18 (a layout
 * that cannot apply), D22 (memory, threads): refused at parse time, exit 2,
 * nothing written. */
static void test_refused_before_work(void **state)
{
	(void)state;
	clean();
	char *rep[] = {"skv", "run", "split-count", "--ctx=256", "--splits=4,4", out_flag, NULL};
	EXPECT(2, rep, out_dir, "skv: --splits=4,4 lists the value 4 twice");
	char *rep2[] = {"skv", "run", "split-count", "--score-scale=0.5,.5", out_flag, NULL};
	EXPECT(2, rep2, out_dir, "lists the value 0.5 twice");
	char *rep3[] = {"skv", "run", "systems", "--preset=fa2,fa2", out_flag, NULL};
	EXPECT(2, rep3, out_dir, "--preset=fa2,fa2 lists the value fa2 twice");
	char *twice[] = {"skv", "run", "merge-rule", "--ctx=128", "--ctx=64", out_flag, NULL};
	EXPECT(2, twice, out_dir, "skv: --ctx is given twice (--ctx=128 and --ctx=64); give one list instead");
	char *lay[] = {"skv", "run", "split-count", "--ctx=4096", "--splits=1,2", "--layout=even,last-empty", out_flag, NULL};
	EXPECT(2, lay, out_dir, "skv: --layout=last-empty needs at least 2 splits, not --splits=1");
	char *mem[] = {"skv", "run", "split-count", "--ctx=16777216", "--head-dim=4096", "--splits=1", "--trials=1",
		       out_flag, NULL};
	EXPECT(2, mem, out_dir, "skv: split-count needs about ", " GiB of memory at its largest point, more than this machine's",
	       "CPU hours");
	char *thr[] = {"skv", "run", "merge-rule", "--threads=4000", out_flag, NULL};
	EXPECT(2, thr, out_dir, "skv: --threads=4000 is more than 4 per core");
	char *nl[] = {"skv", "run", "merge-rule", "--out=a\nb", NULL};
	EXPECT(2, nl, NULL, "skv: --out='a\\nb' holds a line break");
}

/* D25: one number syntax: hex integers like hex reals, literals that
 * underflow read as their nearest double; inf and nan are not numbers
 * here. D19: a drawn value beyond --input names the flags, exit 2. */
static void test_numbers_and_ranges(void **state)
{
	(void)state;
	clean();
	char *hex[] = {"skv", "run", "merge-rule", "--ctx=0x40", "--trials=0x1", "--lse-offset=0x1p3", "--score-scale=4e-320",
		       out_flag, NULL};
	char *err = NULL;
	assert_int_equal(proc_run(hex, &err, NULL), 0);
	free(err);
	char *csv = fs_get(out_dir, "merge-rule.csv", NULL);
	assert_non_null(csv);
	/* ctx, head-dim, dist, score-scale, input, the KV cache's four, lse-offset */
	assert_non_null(strstr(csv, ",64,8,gaussian,4e-320,fp64,none,none,values,0,8,"));
	free(csv);
	fs_rmtree(strdup(out_dir));
	char *under[] = {"skv", "run", "merge-rule", "--score-scale=1e-400", out_flag, NULL};
	EXPECT(2, under, out_dir, "skv: --score-scale=1e-400 is out of range (expected a number in (0, 1000000])");
	char *inf[] = {"skv", "run", "merge-rule", "--lse-offset=inf", out_flag, NULL};
	EXPECT(2, inf, out_dir, "skv: malformed number 'inf' for --lse-offset");
	char *range[] = {"skv", "run", "split-count", "--ctx=256", "--splits=1", "--trials=1", "--input=fp16",
			 "--score-scale=1e6", "--partial=fp32", "--lse=fp32", out_flag, NULL};
	EXPECT(2, range, NULL, "skv: split-count: --score-scale=1000000 with --dist=gaussian draws a value that --input=fp16",
	       "lower --score-scale or widen --input");
	fs_rmtree(strdup(out_dir));
}

/* D11, D20, D21: suite files. A device or FIFO is refused at once, a NUL
 * byte is an error, a byte-order mark is fine, and an error in the flags
 * after the file is the command line's, not line 1's. */
static void test_suite_files(void **state)
{
	(void)state;
	clean();
	char *zero[] = {"skv", "suite", "/dev/zero", out_flag, NULL};
	EXPECT(1, zero, out_dir, "skv: cannot read suite file '/dev/zero': a character device, not a regular file");
	char fifo[4200];
	fs_path(fifo, sizeof fifo, scratch, "fifo.suite");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	char *ff[] = {"skv", "suite", fifo, out_flag, NULL};
	EXPECT(1, ff, out_dir, "a FIFO, not a regular file");
	char path[4200];
	fs_path(path, sizeof path, scratch, "nul.suite");
	fs_put(scratch, "nul.suite", "run merge-rule --ctx=2\0 56 --trials=1\n", 38);
	char *nul[] = {"skv", "suite", path, out_flag, NULL};
	EXPECT(2, nul, out_dir, ":1: NUL byte in the line");
	char *big = malloc(((size_t)1 << 20) + 64);
	memset(big, ' ', ((size_t)1 << 20) + 10);
	memcpy(big, "run merge-rule", 14);
	big[((size_t)1 << 20) + 10] = '\n';
	fs_put(scratch, "long.suite", big, ((size_t)1 << 20) + 11);
	free(big);
	fs_path(path, sizeof path, scratch, "long.suite");
	char *lng[] = {"skv", "suite", path, out_flag, NULL};
	EXPECT(2, lng, out_dir, ":1: line longer than 1024 KiB");
	fs_put(scratch, "bom.suite", "\xEF\xBB\xBFrun merge-rule --ctx=64 --trials=1\n", (size_t)-1);
	fs_path(path, sizeof path, scratch, "bom.suite");
	char *bom[] = {"skv", "suite", path, out_flag, NULL};
	assert_int_equal(proc_run(bom, NULL, NULL), 0);
	fs_rmtree(strdup(out_dir));
	fs_put(scratch, "unknown.suite", "run merge-rule\nrun no-such-experiment --ctx=4\n", (size_t)-1);
	char unk[4200];
	fs_path(unk, sizeof unk, scratch, "unknown.suite");
	char *un[] = {"skv", "suite", unk, out_flag, NULL};
	EXPECT(2, un, out_dir, "unknown.suite:2: unknown experiment 'no-such-experiment'");
	char *cl[] = {"skv", "suite", path, "--ctx=abc", out_flag, NULL};
	EXPECT(2, cl, out_dir, "skv: command line: malformed number 'abc' for --ctx");
	char *ex[] = {"skv", "suite", path, "extra", out_flag, NULL};
	EXPECT(2, ex, out_dir, "skv: command line: unexpected argument 'extra'");
	/* a suite-wide flag some experiment does not take: noted, not refused */
	char *note[] = {"skv", "suite", path, "--causal=1", out_flag, NULL};
	char *err = NULL;
	assert_int_equal(proc_run(note, &err, NULL), 0);
	assert_non_null(strstr(err, "skv: note: merge-rule does not take --causal, and runs at its own value\n"));
	free(err);
	fs_rmtree(strdup(out_dir));
}

/* D23: nothing is cut. A 100 KB bad name still ends with what was
 * expected; a long seed list appears whole in the summary line, the .meta
 * and REPORT.md; terminal escapes in a bad value are escaped. */
static void test_nothing_truncated(void **state)
{
	(void)state;
	clean();
	char *name = malloc(100001);
	memset(name, 'x', 100000);
	name[100000] = '\0';
	char *bad[] = {"skv", "run", name, out_flag, NULL};
	char *err = NULL;
	assert_int_equal(proc_run(bad, &err, NULL), 2);
	assert_true(strlen(err) > 100000);
	assert_non_null(strstr(err, "(expected split-count, lse-magnitude,"));
	free(err), free(name);
	char *esc[] = {"skv", "run", "merge-rule", "--dist=\x1b[31mred", out_flag, NULL};
	EXPECT(2, esc, out_dir, "unknown distribution '\\x1b[31mred'");
	/* 1500 seeds: the list is about 7 KB */
	char *seeds = malloc(16 * 1500), *p = seeds;
	p += sprintf(p, "--seed=");
	for (int i = 1; i <= 1500; i++)
		p += sprintf(p, "%s%d", i > 1 ? "," : "", i);
	char *many[] = {"skv", "run", "merge-rule", "--ctx=16", "--head-dim=2", "--splits=2", "--merge=onepass", "--trials=1",
			seeds, out_flag, NULL};
	assert_int_equal(proc_run(many, &err, NULL), 0);
	assert_non_null(strstr(err, seeds + 7)); /* the summary line */
	free(err);
	char *rep[] = {"skv", "report", out_dir, NULL};
	assert_int_equal(proc_run(rep, NULL, NULL), 0);
	char *meta = fs_get(out_dir, "merge-rule.meta", NULL), *md = fs_get(out_dir, "REPORT.md", NULL);
	assert_non_null(meta);
	assert_non_null(md);
	char want[16 * 1500 + 32];
	snprintf(want, sizeof want, "\nseed: %s\n", seeds + 7);
	assert_non_null(strstr(meta, want));
	assert_non_null(strstr(meta, seeds)); /* the reproduce line */
	snprintf(want, sizeof want, "| %s |", seeds + 7);
	assert_non_null(strstr(md, want));       /* REPORT.md's seed column */
	assert_non_null(strstr(md, seeds));      /* and its rerun command */
	free(meta), free(md), free(seeds);
	fs_rmtree(strdup(out_dir));
}

/* D10: a .md or .meta that is a FIFO or a device is refused at once (a
 * FIFO would block a reader forever, /dev/zero fill the memory). Run in a
 * child with an alarm, so a hang fails instead of stalling make check. */
static void test_report_sidecars(void **state)
{
	(void)state;
	clean();
	char *argv[] = {"skv", "run", "merge-rule", "--ctx=64", "--trials=1", out_flag, NULL};
	assert_int_equal(proc_run(argv, NULL, NULL), 0);
	static const char *const which[] = {"merge-rule.md", "merge-rule.meta"};
	for (int k = 0; k < 2; k++)
		for (int kind = 0; kind < 2; kind++) {
			char p[4300];
			fs_path(p, sizeof p, out_dir, which[k]);
			unlink(p);
			assert_int_equal(kind ? symlink("/dev/zero", p) : mkfifo(p, 0600), 0);
			char *rep[] = {"skv", "report", out_dir, NULL};
			char errpath[4300];
			fs_path(errpath, sizeof errpath, scratch, "side.err");
			pid_t pid = proc_start(rep, errpath, NULL);
			int st = -1;
			for (int t = 0; t < 100 && st < 0; t++) { /* 10 s at most */
				int ws;
				if (waitpid(pid, &ws, WNOHANG) == pid)
					st = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
				else
					proc_sleep(0.1);
			}
			if (st < 0) {
				kill(pid, SIGKILL);
				proc_wait(pid);
			}
			char *err = fs_get(scratch, "side.err", NULL);
			if (st != 1 || !err || !strstr(err, "not a regular file"))
				fail_msg("%s:%d: %s as a %s: status %d (-1: still running after 10 s), \"%s\"", __FILE__, __LINE__,
					 which[k], kind ? "link to /dev/zero" : "FIFO", st, err ? err : "");
			free(err);
			unlink(p);
		}
	fs_rmtree(strdup(out_dir));
}

static int setup(void **state)
{
	(void)state;
	scratch = fs_tmpdir("inputs");
	fs_path(out_dir, sizeof out_dir, scratch, "out");
	snprintf(out_flag, sizeof out_flag, "--out=%s", out_dir);
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
		cmocka_unit_test(test_refused_before_work), cmocka_unit_test(test_numbers_and_ranges),
		cmocka_unit_test(test_suite_files),	    cmocka_unit_test(test_nothing_truncated),
		cmocka_unit_test(test_report_sidecars),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
