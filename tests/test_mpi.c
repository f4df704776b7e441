/* test_mpi.c - skv-mpi under mpirun (3 ranks, oversubscribed): the same bytes as skv suite; a rank killed mid-run ends the job cleanly, no final file written, and --resume completes it; a failing unit and bad usage. Skipped, saying why, without Open MPI. */
#include "shardutil.h"

#include <ctype.h>

static char *scratch;
static char suite[4200], slow[4200], skv_mpi[4200], why_skip[4400];

static const char suite_text[] = "run merge-rule --ctx=256 --trials=6\n"
				 "run split-count --ctx=1024 --splits=1,2,4,8 --trials=4 --partial=fp16,fp32 --lse=fp32\n"
				 "run block-size --ctx=64 --trials=2 --block-size=16,64\n";
/* 24 units (one per trial) of a few tens of ms each: long enough that a rank
 * is killed with units still to run on a loaded machine (65536 keys: at
 * 16384 the shared scores and binary32 loops finished every unit first) */
enum { SLOW_UNITS = 24 };
static const char slow_text[] = "run split-count --ctx=65536 --splits=1,4,16 --trials=24\n";

static char *dir(const char *name)
{
	static char buf[8][4300];
	static int next;
	char *b = buf[next++ % 8];
	return fs_path(b, sizeof buf[0], scratch, name);
}

static char *out_flag(const char *name)
{
	static char buf[4][4400];
	static int next;
	char *b = buf[next++ % 4];
	snprintf(b, sizeof buf[0], "--out=%s", dir(name));
	return b;
}

/* Whether an executable `name` is on PATH. */
static int on_path(const char *name)
{
	const char *path = getenv("PATH");
	char buf[4400];
	for (const char *p = path; p && *p;) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, name);
		if (access(buf, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

#define NEED_MPI()                                                                                                 \
	do {                                                                                                       \
		if (*why_skip) {                                                                                   \
			print_message("# SKIP: %s\n", why_skip);                                                   \
			skip();                                                                                    \
		}                                                                                                  \
	} while (0)

/* mpirun -np N skv-mpi suite FILE ARGS...: its status and stderr. The
 * sanitizers' leak check is off in the ranks: Open MPI keeps its own
 * allocations to the end by design. */
static pid_t start_mpi(int np, const char *file, char *const *args, const char *errpath)
{
	char npb[16];
	snprintf(npb, sizeof npb, "%d", np);
	char *argv[32] = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "ASAN_OPTIONS=detect_leaks=0", "-np",
			  npb, skv_mpi, "suite", (char *)file};
	int n = 10;
	for (int i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return shu_spawn(argv, errpath);
}

static int run_mpi(int np, const char *file, char *const *args, char **err)
{
	char errpath[4400];
	fs_path(errpath, sizeof errpath, scratch, "mpi.err");
	int st = proc_wait(start_mpi(np, file, args, errpath));
	*err = fs_get(scratch, "mpi.err", NULL);
	return st;
}

/* 3 ranks (more than this machine's cores: each rank's OpenMP threads
 * share them) give the bytes of one skv suite. */
static void test_mpi_same_bytes(void **state)
{
	(void)state;
	NEED_MPI();
	char *const one[] = {"skv", "suite", suite, out_flag("whole"), NULL};
	assert_int_equal(proc_run(one, NULL, NULL), 0);
	char *err;
	char *const args[] = {out_flag("m3"), "--threads=2", NULL};
	int st = run_mpi(3, suite, args, &err);
	if (st != 0 || !strstr(err, "skv-mpi: 3 ranks x "))
		fail_msg("%s:%d: mpirun -np 3 skv-mpi: status %d, \"%s\"", __FILE__, __LINE__, st, err);
	free(err);
	shu_same_results(dir("m3"), dir("whole"), __LINE__);
	assert_int_equal(fs_count(dir("m3"), ".skv.journal"), 0);
	/* lines in folders of their own (one experiment twice): each gets its files */
	char text[9000];
	for (int k = 0; k < 2; k++) {
		snprintf(text, sizeof text, "run merge-rule --ctx=64 --trials=3 --out=%s/x%d\n"
					    "run merge-rule --ctx=64 --trials=2 --merge=onepass --out=%s/y%d\n",
			 scratch, k, scratch, k);
		fs_put(scratch, k ? "own1.suite" : "own0.suite", text, (size_t)-1);
	}
	char own0[4400], own1[4400];
	snprintf(own0, sizeof own0, "%s", dir("own0.suite"));
	snprintf(own1, sizeof own1, "%s", dir("own1.suite"));
	char *const single[] = {"skv", "suite", own0, NULL};
	assert_int_equal(proc_run(single, NULL, NULL), 0);
	char *const none[] = {NULL};
	st = run_mpi(2, own1, none, &err);
	if (st != 0)
		fail_msg("%s:%d: mpirun -np 2 skv-mpi, two folders: status %d, \"%s\"", __FILE__, __LINE__, st, err);
	free(err);
	shu_same_results(dir("x1"), dir("x0"), __LINE__);
	shu_same_results(dir("y1"), dir("y0"), __LINE__);
}

/* The pid of rank `rank` of the skv-mpi whose command line names `tag`,
 * or -1: found by its command line and Open MPI's environment variable. */
static pid_t find_rank(const char *tag, int rank)
{
	char want[64], path[320], buf[65536];
	snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", rank);
	DIR *d = opendir("/proc");
	struct dirent *ent;
	pid_t found = -1;
	while (d && found < 0 && (ent = readdir(d))) {
		if (!isdigit((unsigned char)ent->d_name[0]))
			continue;
		for (int which = 0; which < 2; which++) {
			snprintf(path, sizeof path, "/proc/%s/%s", ent->d_name, which ? "environ" : "cmdline");
			FILE *f = fopen(path, "rb");
			size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
			if (f)
				fclose(f);
			for (size_t i = 0; i < n; i++)
				buf[i] = buf[i] ? buf[i] : '\n';
			buf[n] = '\0';
			int ok = which ? strstr(buf, want) != NULL : strstr(buf, "skv-mpi") && strstr(buf, tag);
			if (!ok)
				break;
			if (which)
				found = (pid_t)atoi(ent->d_name);
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* Rank 1 killed (SIGKILL) once units are journalled: the job ends with
 * an error, no final file and no temporary; --resume on 2 ranks gives the
 * bytes of one skv suite, running only what was left. */
static void test_mpi_rank_killed(void **state)
{
	(void)state;
	NEED_MPI();
	char *const one[] = {"skv", "suite", slow, out_flag("ref"), NULL};
	assert_int_equal(proc_run(one, NULL, NULL), 0);
	char errpath[4400], jpath[4400];
	fs_path(errpath, sizeof errpath, scratch, "kill.err");
	fs_path(jpath, sizeof jpath, dir("k"), ".skv.journal");
	char *const args[] = {out_flag("k"), "--threads=1", NULL};
	pid_t job = start_mpi(3, slow, args, errpath);
	pid_t victim = -1;
	for (double t = 0; t < 60 && shu_wait_for(job, 0) < 0; t += 0.01) {
		if (shu_journalled(jpath) > 0 && (victim = find_rank(dir("k"), 1)) > 0)
			break;
		proc_sleep(0.01);
	}
	if (victim <= 0)
		fail_msg("%s:%d: no rank 1 to kill while the job ran (journal %lld bytes)", __FILE__, __LINE__,
			 (long long)shu_size(jpath));
	assert_int_equal(kill(victim, SIGKILL), 0);
	int st = shu_wait_for(job, 60);
	char *err = fs_get(scratch, "kill.err", NULL);
	if (st <= 0 || (!strstr(err, "skv-mpi: stopped by a signal") && !strstr(err, "exited on signal 9")))
		fail_msg("%s:%d: mpirun after rank 1 was killed: status %d, \"%s\"", __FILE__, __LINE__, st, err);
	free(err);
	assert_int_equal(fs_count(dir("k"), ".csv") + fs_count(dir("k"), ".md") + fs_count(dir("k"), ".meta"), 0);
	assert_int_equal(fs_count(dir("k"), ".tmp"), 0);
	char *const again[] = {out_flag("k"), "--threads=1", "--resume", NULL};
	st = run_mpi(2, slow, again, &err);
	const char *from = strstr(err, " from the journal)");
	const char *p = from;
	while (p && p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	const long had = p ? strtol(p, NULL, 10) : -1;
	if (st != 0 || had < 1 || had >= SLOW_UNITS)
		fail_msg("%s:%d: --resume on 2 ranks: status %d, %ld units from the journal, \"%s\"", __FILE__, __LINE__, st,
			 had, err);
	free(err);
	shu_same_results(dir("k"), dir("ref"), __LINE__);
}

/* A unit that fails ends the job with its message and no final file;
 * --shard and --report are refused with one line. */
static void test_mpi_failures(void **state)
{
	(void)state;
	NEED_MPI();
	fs_put(scratch, "fails.suite",
	       "run merge-rule --ctx=64 --trials=4\n"
	       "run split-count --ctx=256 --splits=1 --trials=1 --input=fp16 --score-scale=1e6 --partial=fp32 --lse=fp32\n",
	       (size_t)-1);
	char fails[4400];
	snprintf(fails, sizeof fails, "%s", dir("fails.suite"));
	char *err;
	char *const args[] = {out_flag("f"), NULL};
	int st = run_mpi(2, fails, args, &err);
	if (st == 0 || !strstr(err, "draws a value that --input=fp16 cannot hold"))
		fail_msg("%s:%d: a failing unit under skv-mpi: status %d, \"%s\"", __FILE__, __LINE__, st, err);
	free(err);
	assert_int_equal(fs_count(dir("f"), ".csv") + fs_count(dir("f"), ".meta"), 0);
	char *const shard[] = {out_flag("g"), "--shard=1/2", NULL};
	st = run_mpi(1, suite, shard, &err);
	/* our one line first; mpirun adds its own note of the exit status */
	if (st != 2 || strncmp(err, "skv-mpi: --shard is for job arrays", 34) != 0 || strchr(err, '\n') - err > 200 ||
	    strstr(strchr(err, '\n'), "skv-mpi"))
		fail_msg("%s:%d: skv-mpi --shard: status %d, \"%s\"", __FILE__, __LINE__, st, err);
	free(err);
}

static int setup(void **state)
{
	(void)state;
	scratch = fs_tmpdir("mpi");
	fs_put(scratch, "t.suite", suite_text, (size_t)-1);
	fs_put(scratch, "slow.suite", slow_text, (size_t)-1);
	fs_path(suite, sizeof suite, scratch, "t.suite");
	fs_path(slow, sizeof slow, scratch, "slow.suite");
	snprintf(skv_mpi, sizeof skv_mpi, "%s-mpi", proc_skv());
	if (access(skv_mpi, X_OK) != 0)
		snprintf(why_skip, sizeof why_skip, "%s not built (no Open MPI mpicc when make ran: scripts/deps.sh)",
			 skv_mpi);
	else if (!on_path("mpirun"))
		snprintf(why_skip, sizeof why_skip, "no mpirun on PATH (Open MPI's openmpi-bin)");
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
		cmocka_unit_test(test_mpi_same_bytes),
		cmocka_unit_test(test_mpi_rank_killed),
		cmocka_unit_test(test_mpi_failures),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
