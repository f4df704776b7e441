/* output.c - the files of a run: EXPERIMENT.csv (one row per point and trial), .md (aggregated table), .meta. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <omp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "core/stats.h"
#include "io/csv.h"
#include "io/self.h"

extern char **environ;

/* The metrics, in CSV column order. */
typedef struct {
	const char *name;
	double (*get)(const sweep_row *r);
} metric;

static double m_abs(const sweep_row *r) { return r->err.max_abs; }
static double m_rel(const sweep_row *r) { return r->err.max_rel; }
static double m_norm(const sweep_row *r) { return r->err.norm_rel; }
static double m_ulp(const sweep_row *r) { return r->err.ulp; }
static double m_nulp(const sweep_row *r) { return r->err.norm_ulp; }
static double m_lse(const sweep_row *r) { return r->lse_err; }
static double m_floor(const sweep_row *r) { return r->floor.norm_rel; }
/* The second reference (the original K and V, before a KV cache stored
 * them): the metrics above are the error of the kernel's arithmetic and
 * merge on the stored cache; these add the cache's own. Equal to them
 * without a cache. */
static double m_abs_o(const sweep_row *r) { return r->err_orig.max_abs; }
static double m_norm_o(const sweep_row *r) { return r->err_orig.norm_rel; }
static double m_lse_o(const sweep_row *r) { return r->lse_err_orig; }

static const metric metrics[] = {
	{"max_abs_err", m_abs}, {"max_rel_err", m_rel}, {"norm_rel_err", m_norm}, {"ulp_err", m_ulp},
	{"norm_ulp_err", m_nulp}, {"lse_err", m_lse}, {"floor_err", m_floor}, {"orig_max_abs_err", m_abs_o},
	{"orig_norm_rel_err", m_norm_o}, {"orig_lse_err", m_lse_o},
};
enum { NMETRICS = sizeof metrics / sizeof metrics[0] };


int output_csv(FILE *f, const run_spec *s, const sweep_result *r)
{
	char buf[64];
	fputs("experiment", f);
	for (int i = 0; i < NPARAMS; i++)
		if (params[i].column) {
			fputc(',', f);
			csv_write_field(f, params[i].column);
		}
	fputs(",trial", f);
	for (size_t m = 0; m < NMETRICS; m++)
		fprintf(f, ",%s", metrics[m].name);
	fputs(",out_state,lse_state\n", f);
	param_value v[NPARAMS];
	for (size_t k = 0; k < r->nrows; k++) {
		const sweep_row *row = &r->rows[k];
		spec_values(s, row->point, v);
		csv_write_field(f, s->exp->name);
		for (int i = 0; i < NPARAMS; i++) {
			if (!params[i].column)
				continue;
			fputc(',', f);
			/* A parameter that does not apply to the experiment gets an
			 * empty cell: no value of it was used. */
			if (spec_applies(s, i)) {
				param_format(buf, sizeof buf, i, v[i]);
				csv_write_field(f, buf);
			}
		}
		fprintf(f, ",%llu", (unsigned long long)row->trial);
		for (size_t m = 0; m < NMETRICS; m++) {
			format_double(buf, sizeof buf, metrics[m].get(row));
			fprintf(f, ",%s", buf);
		}
		fprintf(f, ",%s,%s\n", out_state_name(row->out_state), lse_state_name(row->lse_state));
	}
	return ferror(f) ? SKV_EIO : SKV_OK;
}

/* Median and max of n values; both NaN if any value is NaN, so a NaN trial
 * is never hidden by the aggregate. */
static void med_max(double *med, double *max, double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (isnan(x[i])) {
			*med = *max = NAN;
			return;
		}
	qsort(x, n, sizeof *x, stats_cmp_double);
	*med = n % 2 ? x[n / 2] : 0.5 * x[n / 2 - 1] + 0.5 * x[n / 2];
	*max = x[n - 1];
}

static void md_number(FILE *f, double x)
{
	if (isnan(x))
		fputs(" nan |", f);
	else if (isinf(x))
		fputs(x < 0 ? " -inf |" : " inf |", f);
	else
		fprintf(f, " %.3g |", x);
}

int output_md(FILE *f, const run_spec *s, const sweep_result *r)
{
	char buf[64];
	int vary[NPARAMS];
	const size_t T = (size_t)r->trials;
	/* A column varies when the values that ran differ between points: a
	 * swept preset moves the fields it fixes even though their lists hold
	 * one value. */
	param_value v0[NPARAMS], vp[NPARAMS];
	spec_values(s, 0, v0);
	for (int i = 0; i < NPARAMS; i++)
		vary[i] = 0;
	for (size_t p = 1; p < r->npoints; p++) {
		spec_values(s, p, vp);
		for (int i = 0; i < NPARAMS; i++)
			vary[i] |= vp[i].u != v0[i].u || memcmp(&vp[i].r, &v0[i].r, sizeof vp[i].r) != 0;
	}
	for (int i = 0; i < NPARAMS; i++)
		vary[i] = vary[i] && params[i].column && spec_applies(s, i);
	fprintf(f, "# %s\n\n%s.\n\n", s->exp->name, s->exp->summary);
	fputs("Fixed:", f);
	int first = 1;
	for (int i = 0; i < NPARAMS; i++) {
		if (!params[i].column || !spec_applies(s, i) || vary[i])
			continue;
		param_format(buf, sizeof buf, i, v0[i]);
		fprintf(f, "%s %s=%s", first ? "" : ",", params[i].column, buf);
		first = 0;
	}
	if (T == 1)
		fputs(".\n\nThe one trial of each point (median and max are its value; nan if it gave nan).\n\n|", f);
	else
		fprintf(f, ".\n\nMedian and max over the %zu trials of each point (nan if any trial gave nan).\n\n|", T);
	for (int i = 0; i < NPARAMS; i++)
		if (vary[i])
			fprintf(f, " %s |", params[i].column);
	for (size_t m = 0; m < NMETRICS; m++)
		fprintf(f, " %s median | %s max |", metrics[m].name, metrics[m].name);
	fputs(" out_state | lse_state |\n|", f);
	for (int i = 0; i < NPARAMS; i++)
		if (vary[i])
			fputs(params[i].type == PT_ENUM ? "---|" : "---:|", f);
	for (size_t m = 0; m < 2 * NMETRICS; m++)
		fputs("---:|", f);
	fputs("---|---|\n", f);
	double *x = malloc(T * sizeof *x);
	if (!x)
		return SKV_ENOMEM;
	param_value v[NPARAMS];
	for (size_t p = 0; p < r->npoints; p++) {
		spec_values(s, p, v);
		fputc('|', f);
		for (int i = 0; i < NPARAMS; i++)
			if (vary[i]) {
				param_format(buf, sizeof buf, i, v[i]);
				fprintf(f, " %s |", buf);
			}
		for (size_t m = 0; m < NMETRICS; m++) {
			double med, max;
			for (size_t t = 0; t < T; t++)
				x[t] = metrics[m].get(&r->rows[p * T + t]);
			med_max(&med, &max, x, T);
			md_number(f, med);
			md_number(f, max);
		}
		/* what came back: the trials' common state, or "mixed" */
		int os = r->rows[p * T].out_state, ls = r->rows[p * T].lse_state;
		for (size_t t = 1; t < T; t++) {
			os = r->rows[p * T + t].out_state == os ? os : -1;
			ls = r->rows[p * T + t].lse_state == ls ? ls : -1;
		}
		fprintf(f, " %s | %s |\n", os < 0 ? "mixed" : out_state_name(os),
			ls < 0 ? "mixed" : lse_state_name(ls));
	}
	free(x);
	return ferror(f) ? SKV_EIO : SKV_OK;
}

/* Runs argv[0] (looked up on PATH) with the arguments argv[1..], no shell
 * in between, stdin and stderr on /dev/null, and reads up to n - 1 bytes
 * of its standard output into buf. Returns its exit status, or -1 when it
 * could not run. */
static int run_capture(char *const argv[], char *buf, size_t n)
{
	int fd[2];
	buf[0] = '\0';
	if (pipe(fd) != 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc != 0) {
		close(fd[0]);
		return -1;
	}
	size_t len = 0;
	ssize_t k;
	char sink[256];
	while ((k = read(fd[0], len + 1 < n ? buf + len : sink, len + 1 < n ? n - 1 - len : sizeof sink)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		if (len + 1 < n)
			len += (size_t)k;
	}
	buf[len] = '\0';
	close(fd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The commit of the source tree the program runs from: `git rev-parse HEAD`
 * in the folder of the executable (Linux /proc/self/exe), else the current
 * folder; "unknown" when git or a commit is missing. Metadata only. git is
 * run directly with its arguments, never through a shell, so no path can
 * become a command. */
static void git_commit(char *buf, size_t n)
{
	char exe[4096];
	snprintf(buf, n, "unknown");
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len <= 0)
		snprintf(exe, sizeof exe, ".");
	else {
		exe[len] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
	}
	char line[128];
	char *rev[] = {"git", "-C", exe, "rev-parse", "HEAD", NULL};
	if (run_capture(rev, line, sizeof line) != 0)
		return;
	line[strcspn(line, "\r\n")] = '\0';
	if (strlen(line) < 7 || strspn(line, "0123456789abcdef") != strlen(line))
		return;
	/* "dirty" when the sources differ from the commit (a report's own
	 * tables may be rewritten meanwhile: only the code counts). */
	char out[8];
	char *diff[] = {"git", "-C", exe, "diff", "--quiet", "HEAD", "--", ":/lib", ":/experiments", ":/scripts",
			":/Makefile", NULL};
	int dirty = run_capture(diff, out, sizeof out) == 1;
	const char *note = dirty ? " (with uncommitted changes to the sources)" : "";
	if (strlen(line) + strlen(note) < n)
		memcpy(buf, line, strlen(line) + 1), strcat(buf, note);
}

int output_meta(FILE *f, const run_spec *s, const sweep_result *r, const char *command,
		       const file_sum *sums)
{
	char commit[128], date[64], *flags = NULL;
	time_t now = time(NULL);
	struct tm tm;
	git_commit(commit, sizeof commit);
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	else
		snprintf(date, sizeof date, "unknown");
	if (spec_flags(&flags, s) != SKV_OK)
		return SKV_ENOMEM;
	fprintf(f, "experiment: %s\n", s->exp->name);
	fprintf(f, "command: %s\n", command ? command : "(library call)");
	/* The program as a reader types it where this run was made: build/skv
	 * in a checkout, skv when installed on PATH (io/self.c). */
	char prog[4096];
	fprintf(f, "reproduce: %s run %s %s\n", self_program(prog, sizeof prog), s->exp->name, flags);
	fputs("seed: ", f);
	spec_seed_list(f, s);
	fprintf(f, "\nseed_derivation: trial t draws its problem from skv_seed_mix(seed, t)\n");
	fprintf(f, "points: %zu\ntrials: %llu\nrows: %zu\n", r->npoints, (unsigned long long)r->trials, r->nrows);
	if (sums) /* the commit record: the set this .meta belongs to */
		for (int i = 0; i < 2; i++)
			fprintf(f, "%s: %s.%s, %zu bytes, fnv1a64 %016llx\n", i ? "md_file" : "csv_file", s->exp->name,
				i ? "md" : "csv", sums[i].bytes, (unsigned long long)sums[i].fnv);
	fprintf(f, "threads: %d\n", r->threads);
	fprintf(f, "instances: %zu\ntruth_calls: %zu\nkernel_runs: %zu\n", r->n_instances, r->n_truth_calls,
		r->n_kernel_runs);
	fprintf(f, "skv_version: %s\n", skv_version());
	fprintf(f, "git_commit: %s\n", commit);
#if defined(__clang__)
	fprintf(f, "compiler: clang %s\n", __VERSION__);
#elif defined(__GNUC__)
	fprintf(f, "compiler: gcc %s\n", __VERSION__);
#else
	fprintf(f, "compiler: %s\n", __VERSION__);
#endif
	fprintf(f, "mpfr_version: %s\n", mpfr_get_version());
	struct utsname u;
	if (uname(&u) == 0) /* metadata: where the run happened, never a seed */
		fprintf(f, "machine: %s %s %s, %d cores\n", u.sysname, u.release, u.machine, omp_get_num_procs());
	fprintf(f, "date_utc: %s\n", date);
	fprintf(f, "wall_time_s: %.3f\n", r->wall_s);
	free(flags);
	return ferror(f) ? SKV_EIO : SKV_OK;
}

/* Size and checksum of a written file. */
static int sum_file(file_sum *fs, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return SKV_EIO;
	char buf[65536];
	size_t k;
	fs->bytes = 0;
	fs->fnv = CSV_FNV_INIT;
	while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
		fs->bytes += k;
		fs->fnv = csv_fnv1a64(fs->fnv, buf, k);
	}
	int bad = ferror(f);
	fclose(f);
	return bad ? SKV_EIO : SKV_OK;
}

/* Writes one file of the set to a new temporary next to `final`. */
static int write_one(char **tmp, const char *final, const run_spec *s, const sweep_result *r,
		     const char *command, const file_sum *sums, int which, message *e)
{
	if (temp_create(tmp, final, e) != SKV_OK)
		return SKV_EIO;
	FILE *f = fopen(*tmp, "w");
	int st = !f ? SKV_EIO
		 : which == 0 ? output_csv(f, s, r)
		 : which == 1 ? output_md(f, s, r)
			      : output_meta(f, s, r, command, sums);
	int saved = errno;
	if (f && fclose(f) != 0 && st == SKV_OK) {
		st = SKV_EIO;
		saved = errno;
	}
	if (st != SKV_OK) {
		msg_set(e, "skv: cannot write '%s': %s", final, st == SKV_ENOMEM ? "out of memory" : strerror(saved));
		return SKV_EIO;
	}
	return SKV_OK;
}

int output_write(const run_spec *s, const sweep_result *r, const char *command, message *e)
{
	static const char *const ext[] = {"csv", "md", "meta"};
	enum { NFILES = sizeof ext / sizeof ext[0] };
	char *tmp[NFILES] = {NULL}, *fin[NFILES] = {NULL};
	file_sum sums[2];
	int rc = SKV_OK;
	for (size_t i = 0; i < NFILES && rc == SKV_OK; i++) {
		if (asprintf(&fin[i], "%s/%s.%s", s->out, s->exp->name, ext[i]) < 0) {
			fin[i] = NULL;
			msg_set(e, "skv: out of memory");
			rc = SKV_EIO;
			break;
		}
		rc = write_one(&tmp[i], fin[i], s, r, command, sums, (int)i, e);
		if (rc == SKV_OK && i < 2 && sum_file(&sums[i], tmp[i]) != SKV_OK) {
			msg_set(e, "skv: cannot read back '%s': %s", tmp[i], strerror(errno));
			rc = SKV_EIO;
		}
	}
	/* Every file is complete and on disk before any is renamed into place. */
	if (rc == SKV_OK)
		rc = outdir_publish(tmp, fin, NFILES, e);
	for (size_t i = 0; i < NFILES; i++) {
		if (rc != SKV_OK && tmp[i])
			temp_discard(tmp[i]);
		free(tmp[i]);
		free(fin[i]);
	}
	return rc;
}
