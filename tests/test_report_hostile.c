/* test_report_hostile.c - skv report on folders it did not write: cut, renamed and mixed files, bad metrics, huge inputs, gnuplot's messages (D6, D9, D12, D24, D26). */
#include "procutil.h"

#include <sys/mount.h>
#include <sys/statvfs.h>
#include <time.h>

#include "report/gnuplot.h"

static char *scratch;

/* Runs skv report on dir: its status and stderr. */
static int report(const char *dir, char **err)
{
	char *argv[] = {"skv", "report", (char *)dir, NULL};
	return proc_run(argv, err, NULL);
}

#define EXPECT_REFUSED(dir, part)                                                                      \
	do {                                                                                           \
		char *err_ = NULL;                                                                     \
		int st_ = report((dir), &err_);                                                        \
		if (st_ != 1 || !strstr(err_, (part)) || proc_lines(err_) != 1)                       \
			fail_msg("%s:%d: skv report %s: status %d, \"%s\": expected 1 and one line with \"%s\"", \
				 __FILE__, __LINE__, (dir), st_, err_, (part));                       \
		free(err_);                                                                    \
	} while (0)

/* A fresh run of split-count (small) in scratch/NAME. */
static void small_run(char *dir, size_t n, const char *name, const char *exp)
{
	fs_path(dir, n, scratch, name);
	char o[4300];
	snprintf(o, sizeof o, "--out=%s", dir);
	char *argv[] = {"skv", "run", (char *)exp, "--ctx=256", "--splits=1,4", "--partial=fp16,fp32", "--lse=fp32",
			"--trials=2", "--merge=onepass,pairwise", o, NULL};
	assert_int_equal(proc_run(argv, NULL, NULL), 0);
}

/* D6: a CSV cut at a line boundary (fewer rows than its .meta), a CSV of
 * another experiment renamed (its experiment column), a .meta of another
 * experiment, and metric values no run writes are refused, naming the file. */
static void test_mismatched_files(void **state)
{
	(void)state;
	char d[4200];
	small_run(d, sizeof d, "cut", "split-count");
	size_t len = 0;
	char *csv = fs_get(d, "split-count.csv", &len);
	char *cut = strrchr(csv, '\n');
	*cut = '\0';
	cut = strrchr(csv, '\n'); /* drop the last row, keep the line structure */
	fs_put(d, "split-count.csv", csv, (size_t)(cut - csv) + 1);
	EXPECT_REFUSED(d, "split-count.csv does not match split-count.meta: 15 rows, the .meta says 16");
	fs_put(d, "split-count.csv", csv, len);
	csv[strlen(csv)] = '\n';
	fs_put(d, "split-count.csv", csv, len);
	char *err = NULL;
	assert_int_equal(report(d, &err), 0);
	free(err);
	/* renamed: the experiment column says split-count */
	char p1[4300], p2[4300];
	fs_path(p1, sizeof p1, d, "split-count.csv");
	fs_path(p2, sizeof p2, d, "block-size.csv");
	assert_int_equal(rename(p1, p2), 0);
	EXPECT_REFUSED(d, "block-size.csv:2: the row is of experiment 'split-count', not block-size");
	assert_int_equal(rename(p2, p1), 0);
	/* a .meta of another experiment */
	char *meta = fs_get(d, "split-count.meta", NULL);
	char *m2 = NULL;
	assert_true(asprintf(&m2, "experiment: systems\n%s", strchr(meta, '\n') + 1) > 0);
	fs_put(d, "split-count.meta", m2, (size_t)-1);
	EXPECT_REFUSED(d, "the .meta is of experiment 'systems'");
	fs_put(d, "split-count.meta", meta, (size_t)-1);
	free(meta), free(m2);
	/* metric values: negative, beyond the double range, spelled otherwise */
	static const char *const bad[] = {"-1", "1e999", "infinity", "0x1p-3", "-inf"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *c = NULL;
		assert_true(asprintf(&c, "experiment,x,trial,norm_rel_err\nodd,a,0,0.1\nodd,b,0,%s\n", bad[i]) > 0);
		char sub[64];
		snprintf(sub, sizeof sub, "metric-%zu", i);
		char dir[4300];
		fs_path(dir, sizeof dir, scratch, sub);
		mkdir(dir, 0777);
		fs_put(dir, "odd.csv", c, (size_t)-1);
		char want[128];
		snprintf(want, sizeof want, "odd.csv:3: column 'norm_rel_err': '%s' is not an error value", bad[i]);
		EXPECT_REFUSED(dir, want);
		free(c);
	}
	free(csv);
}

/* D9: a header of 10^6 columns is refused at once by the documented limit;
 * 4,000 columns (under it) are read, a repeated name at the far end found. */
static void test_wide_header(void **state)
{
	(void)state;
	char d[4200];
	fs_path(d, sizeof d, scratch, "wide");
	mkdir(d, 0777);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fputs("trial,norm_rel_err", f);
	for (int i = 0; i < 1000000; i++)
		fprintf(f, ",c%d", i);
	fputs("\n0,0.1", f);
	for (int i = 0; i < 1000000; i++)
		fputs(",1", f);
	fputc('\n', f);
	fclose(f);
	fs_put(d, "w.csv", buf, len);
	free(buf);
	time_t t0 = time(NULL);
	EXPECT_REFUSED(d, "w.csv:1: 1000002 columns, more than the 4096 skv reads");
	assert_true(time(NULL) - t0 < 10);
	f = open_memstream(&buf, &len);
	fputs("trial,norm_rel_err", f);
	for (int i = 0; i < 4000; i++)
		fprintf(f, ",c%d", i);
	fputs(",c7\n", f);
	fclose(f);
	fs_put(d, "w.csv", buf, len);
	free(buf);
	EXPECT_REFUSED(d, "w.csv:1: column 'c7' appears twice");
}

/* D12: a 33 MB split-count CSV of 7,920 points in an order skv itself
 * never writes (the seed slowest: 45 runs concatenated) took 192 s; every
 * step is now O(n log n). 4,000 points must take seconds. */
static void test_many_points(void **state)
{
	(void)state;
	char src[4200], d[4200];
	small_run(src, sizeof src, "many-src", "split-count");
	size_t len = 0;
	char *csv = fs_get(src, "split-count.csv", &len);
	fs_path(d, sizeof d, scratch, "many");
	mkdir(d, 0777);
	/* the rows of 500 seeds: 8 points each, the seed column rewritten */
	char *hdr_end = strchr(csv, '\n');
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	fwrite(csv, 1, (size_t)(hdr_end - csv) + 1, f);
	/* seed is the 25th column (index 24) of skv's split-count CSV */
	for (int seed = 1; seed <= 500; seed++)
		for (char *l = hdr_end + 1; *l;) {
			char *e = strchr(l, '\n');
			int col = 0;
			for (char *c = l; c < e; c++) {
				if (col == 24 && *c != ',') {
					fprintf(f, "%d", seed);
					while (c < e && *c != ',')
						c++;
					if (c == e)
						break;
				}
				fputc(*c, f);
				col += *c == ',';
			}
			fputc('\n', f);
			l = e + 1;
		}
	fclose(f);
	assert_non_null(strstr(csv, ",seed,"));
	fs_put(d, "split-count.csv", out, olen);
	free(out), free(csv);
	time_t t0 = time(NULL);
	char *err = NULL;
	int st = report(d, &err);
	long took = (long)(time(NULL) - t0);
	if (st != 0 || took > 30)
		fail_msg("%s:%d: skv report of 4,000 points: status %d, %ld s (\"%s\")", __FILE__, __LINE__, st, took, err);
	free(err);
}

/* D24: a chart cut short (gnuplot can exit 0 after a short write on a full
 * disk) is not complete: a PNG must end with its IEND chunk, an SVG with
 * </svg>. And, where a small tmpfs can be mounted (root), a full disk is
 * reported as such, naming the chart, and the old report stays. */
static void test_incomplete_charts(void **state)
{
	(void)state;
	char d[4200];
	small_run(d, sizeof d, "charts", "split-count");
	char *err = NULL;
	assert_int_equal(report(d, &err), 0);
	free(err);
	static const char *const ext[] = {"png", "svg"};
	for (int k = 0; k < 2; k++) {
		char name[32], path[4300];
		snprintf(name, sizeof name, "split-count.%s", ext[k]);
		fs_path(path, sizeof path, d, name);
		assert_true(gnuplot_chart_complete(path, ext[k]));
		size_t len = 0;
		char *whole = fs_get(d, name, &len);
		fs_put(d, "cut.tmp-chart", whole, len - 20);
		fs_path(path, sizeof path, d, "cut.tmp-chart");
		assert_false(gnuplot_chart_complete(path, ext[k]));
		unlink(path);
		free(whole);
	}
	char mnt[4200];
	fs_path(mnt, sizeof mnt, scratch, "full");
	mkdir(mnt, 0777);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=300k") != 0) {
		print_message("# skipped the full-disk case: cannot mount a tmpfs here (%s)\n", strerror(errno));
		return;
	}
	char o[4300];
	snprintf(o, sizeof o, "--out=%s", mnt);
	char *argv[] = {"skv", "run", "split-count", "--ctx=256", "--splits=1,2,4,8,16,32,64,128,256",
			"--partial=fp16,bf16,fp32,fp64", "--lse=fp32", "--trials=4", o, NULL};
	assert_int_equal(proc_run(argv, NULL, NULL), 0);
	fs_put(mnt, "REPORT.md", "old\n", (size_t)-1);
	/* leave 16 KiB free: the chart data fits, a chart does not */
	struct statvfs v;
	assert_int_equal(statvfs(mnt, &v), 0);
	size_t fill = (size_t)v.f_bavail * v.f_frsize - 16384;
	char *zeros = calloc(1, fill);
	fs_put(mnt, "filler", zeros, fill);
	free(zeros);
	int st = report(mnt, &err);
	char *old = fs_get(mnt, "REPORT.md", NULL);
	int ok = st == 1 && strstr(err, "No space left on device") && proc_lines(err) == 1 && old && !strcmp(old, "old\n");
	umount(mnt);
	if (!ok)
		fail_msg("%s:%d: report on a full disk: status %d, \"%s\", REPORT.md \"%s\"", __FILE__, __LINE__, st, err,
			 old ? old : "(none)");
	free(err), free(old);
}

/* D26: inputs skv report skips are named (a FIFO, a folder, a dangling
 * link named *.csv), and gnuplot's own messages do not reach the terminal:
 * stderr holds skv's lines only. */
static void test_skipped_named(void **state)
{
	(void)state;
	char d[4200];
	small_run(d, sizeof d, "skip", "split-count");
	char p[4300];
	fs_path(p, sizeof p, d, "fifo.csv");
	assert_int_equal(mkfifo(p, 0600), 0);
	fs_path(p, sizeof p, d, "folder.csv");
	assert_int_equal(mkdir(p, 0777), 0);
	fs_path(p, sizeof p, d, "dangling.csv");
	assert_int_equal(symlink("/nonexistent/x.csv", p), 0);
	/* a label gnuplot cannot encode (a lone byte 0xff): it warns */
	fs_put(d, "odd.csv", "x,trial,norm_rel_err\na\xff,0,0.1\nb,0,0.2\n", (size_t)-1);
	char *err = NULL;
	assert_int_equal(report(d, &err), 0);
	static const char *const want[] = {"skipped", "fifo.csv: not a regular file", "folder.csv: a folder, not a file",
					   "dangling.csv: ", "note: gnuplot warned while drawing odd; its messages are in"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!strstr(err, want[i]))
			fail_msg("%s:%d: stderr does not name '%s': \"%s\"", __FILE__, __LINE__, want[i], err);
	for (const char *l = err; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		if (strncmp(l, "skv report: ", 12) != 0)
			fail_msg("%s:%d: a line on stderr that is not skv's: \"%.*s\"", __FILE__, __LINE__, (int)strcspn(l, "\n"),
				 l);
	free(err);
}

static int setup(void **state)
{
	(void)state;
	scratch = fs_tmpdir("hostile");
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
		cmocka_unit_test(test_mismatched_files), cmocka_unit_test(test_wide_header),
		cmocka_unit_test(test_many_points),	 cmocka_unit_test(test_incomplete_charts),
		cmocka_unit_test(test_skipped_named),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
