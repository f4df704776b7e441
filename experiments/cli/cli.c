/* cli.c - the commands of the skv program: list, run, suite, report, help and version. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/grade_cmd.h"
#include "cli/mma_cmd.h"
#include "cli/shard.h"
#include "report/gnuplot.h"
#include "report/report.h"
#include "core/recommend.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: skv COMMAND [ARGS]\n"
		"\n"
		"skv %s: a precision study harness for the split-KV (flash-decoding) attention merge.\n"
		"\n"
		"commands:\n"
		"  skv list [experiments|presets|P]  every experiment with its defaults, and every\n"
		"                                    preset field with its source\n"
		"  skv run EXPERIMENT [--PARAM=V1,V2,...]... [--out=DIR]\n"
		"                                    run one experiment; a comma-separated list sweeps\n"
		"                                    a parameter, the points are the cross product\n"
		"  skv run --help                    every parameter, its default and allowed values\n"
		"  skv run EXPERIMENT --help         the experiment's defaults\n"
		"  skv suite FILE [--PARAM=V]... [--out=DIR]\n"
		"                                    run each 'run EXPERIMENT --flags' line of FILE\n"
		"                                    (# comments); flags after FILE override every line\n"
		"  skv suite FILE --shard=K/N [--out=DIR]\n"
		"                                    run shard K of N of the suite's work units into DIR\n"
		"  skv merge OUT SHARD_DIR...        check that the shards make one whole run and write\n"
		"                                    its files into OUT, as one skv suite would have\n"
		"  (run and suite take --resume: continue an interrupted run from its journal;\n"
		"   --estimate: print the work units and their estimated CPU time, run nothing)\n"
		"  skv report DIR                    redraw charts and REPORT.md from DIR's CSV files\n"
		"  skv recommend --batch=B --heads=H --kv-heads=K --ctx=N --sms=M [--preset=P] ...\n"
		"                                    pick a split count from measured error and the\n"
		"                                    system's own heuristic (skv recommend --help)\n"
		"  skv mma --gpu=NAME --input=FMT --output=FMT --a=FILE --b=FILE [--c=FILE] [--check=FILE]\n"
		"                                    a tensor-core model on recorded vectors; --check\n"
		"                                    counts the bit-for-bit matches (skv mma --help)\n"
		"  skv grade DUMP [--identify] ...   a real kernel's dumped tensors against the exact truth;\n"
		"                                    --identify ranks the presets (skv grade --help)\n"
		"  skv export --out=PATH [--preset=P,...] ...\n"
		"                                    an skv problem and presets' results as .npy/.safetensors\n"
		"  skv --version                     print the version\n"
		"\n"
		"output, per experiment, in --out (default results/, created if missing):\n"
		"  EXPERIMENT.csv   one row per point and trial: experiment, every parameter, trial,\n"
		"                   max_abs_err, max_rel_err, norm_rel_err, ulp_err (in ulps of the\n"
		"                   output format), lse_err (|merged LSE - exact LSE|, natural log),\n"
		"                   floor_err (norm_rel_err of the exact output rounded once to the\n"
		"                   output format: what no kernel can beat),\n"
		"                   out_state (finite, nan, inf), lse_state (finite, -inf, +inf, nan)\n"
		"  EXPERIMENT.md    median and max over the trials of each point\n"
		"  EXPERIMENT.meta  command, seed, versions, git commit, date and wall time\n"
		"The CSV is the same byte for byte for any --threads, and on any machine except\n"
		"for fp64 exp and log, which are the C library's (every other operation is skv's own).\n"
		"\n"
		"exit status: 0 success, 1 runtime failure (I/O, memory), 2 bad usage.\n",
		skv_version());
}

/* Prints text word-wrapped to `width` columns, every line after the first
 * indented by `indent` spaces (the first starts at column `col`). */
void cli_wrap(FILE *f, const char *text, int col, int indent, int width)
{
	while (*text) {
		size_t w = strcspn(text, " ");
		if (col > indent && col + 1 + (int)w > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(text, 1, w, f);
		col += (int)w;
		text += w;
		while (*text == ' ')
			text++;
	}
	fputc('\n', f);
}

void cli_param_help(FILE *f, const run_spec *s)
{
	char allowed[256], val[64];
	for (int i = 0; i < NPARAMS; i++) {
		const param_def *p = &params[i];
		if (s && !spec_applies(s, i))
			continue;
		param_allowed(allowed, sizeof allowed, i);
		fprintf(f, "  --%-14s ", p->flag);
		cli_wrap(f, p->help, 19, 19, 78);
		fprintf(f, "  %-16s default ", "");
		if (s) {
			for (size_t k = 0; k < s->list[i].n; k++) {
				param_format(val, sizeof val, i, s->list[i].v[k]);
				fprintf(f, "%s%s", k ? "," : "", val);
			}
		} else {
			fputs(p->def, f);
		}
		fprintf(f, "; %s%s\n", p->type == PT_ENUM ? "one of " : "", allowed);
		if (p->single)
			fprintf(f, "  %-16s (one value, not a list)\n", "");
	}
}

static void run_help(FILE *f)
{
	fprintf(f, "usage: skv run EXPERIMENT [--PARAM=V1,V2,...]... [--out=DIR]\n\n"
		   "experiments: ");
	for (size_t i = 0; i < nexperiments; i++)
		fprintf(f, "%s%s", i ? ", " : "", experiments[i]->def.name);
	fprintf(f, "\n\nThe points are the cross product of the lists, in the order of the parameters\n"
		   "below with the last one varying fastest; each point runs --trials trials. Trial t\n"
		   "draws its problem from skv_seed_mix(seed, t) (the random layout and order from\n"
		   "skv_seed_mix of that seed with 1 and 2), so a row is reproduced from its seed and\n"
		   "trial columns. Parameters (the experiments override some defaults; see\n"
		   "skv run EXPERIMENT --help):\n\n");
	cli_param_help(f, NULL);
	fprintf(f, "  --%-14s output folder, default results\n", "out");
}

static void experiment_help(FILE *f, const run_spec *s)
{
	const exp_def *x = s->exp;
	fprintf(f, "usage: skv run %s [--PARAM=V1,V2,...]... [--out=DIR]\n\n%s.\n\n", x->name, x->summary);
	cli_wrap(f, x->why, 0, 0, 78);
	fprintf(f, "\nparameters:\n");
	cli_param_help(f, s);
	fprintf(f, "  --%-14s output folder, default results\n", "out");
}

/* The command line as one string, each argument quoted for the shell when
 * it holds anything but plain characters. */
char *cli_join_args(int argc, char **argv)
{
	size_t n = 1;
	for (int i = 0; i < argc; i++)
		n += 4 * strlen(argv[i]) + 3;
	char *s = malloc(n), *p = s;
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@%") ==
					  strlen(a);
		if (i)
			*p++ = ' ';
		if (plain) {
			memcpy(p, a, strlen(a));
			p += strlen(a);
			continue;
		}
		*p++ = '\'';
		for (; *a; a++) {
			if (*a == '\'') {
				memcpy(p, "'\\''", 4);
				p += 4;
			} else {
				*p++ = *a;
			}
		}
		*p++ = '\'';
	}
	*p = '\0';
	return s;
}

/* `skv report DIR`: the folder locked as for a run, then the report. */
static int report_main(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: skv report DIR\n\n"
		       "Reads every DIR/EXPERIMENT.csv written by `skv run` or `skv suite` and writes, without\n"
		       "rerunning anything: DIR/EXPERIMENT.png and .svg (gnuplot charts; the aggregated numbers\n"
		       "they draw are in DIR/.plot/EXPERIMENT.gp) and DIR/REPORT.md (what was run, each chart,\n"
		       "its table and findings computed from the CSV). Redraw one chart by hand with\n"
		       "  gnuplot -c scripts/CHART.gp DIR/EXPERIMENT.csv [OUT.png|OUT.svg]\n"
		       "(the script is named in REPORT.md). Needs gnuplot: %s.\n"
		       "exit status: 0 success, 1 a missing or malformed input or a failed write, 2 bad usage.\n",
		       GNUPLOT_INSTALL);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "skv report: %s (usage: skv report DIR)\n",
			argc < 2 ? "no folder given" : argc > 2 ? "one folder only" : "unknown option");
		return 2;
	}
	/* The folder's lock, as for a run: one writer at a time. */
	char *cmd = NULL;
	message e = {NULL};
	if (asprintf(&cmd, "skv report %s", argv[1]) < 0)
		cmd = NULL;
	struct stat sb;
	int st = stat(argv[1], &sb) == 0 && S_ISDIR(sb.st_mode) ? outdir_lock(argv[1], cmd, &e) : SKV_OK;
	free(cmd);
	if (st != SKV_OK)
		return cli_fail(&e, 1);
	/* the report prints its own one-line messages; every failure of it is
	 * a bad or unwritable folder: status 1 */
	return report_run(argv[1], stderr) == SKV_OK ? 0 : 1;
}

int cli_exit_status(int status)
{
	switch (status) {
	case SKV_OK: return 0;
	case SKV_EINVAL:
	case SKV_ERANGE: return 2; /* the request itself is wrong */
	default: return 1;         /* running it failed: I/O, memory */
	}
}

int cli_fail(message *e, int st)
{
	fprintf(stderr, "%s\n", msg_text(e));
	msg_free(e);
	return cli_exit_status(st);
}

static int has_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

static int cmd_run(int argc, char **argv, const char *command)
{
	message e = {NULL};
	if (argc < 1) {
		fprintf(stderr, "skv: run needs an experiment name (see skv list)\n");
		return cli_exit_status(SKV_EINVAL);
	}
	if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
		run_help(stdout);
		return 0;
	}
	run_spec s;
	int st = catalog_spec_init(&s, argv[0], &e);
	if (st != SKV_OK)
		return cli_fail(&e, st);
	if (has_help(argc - 1, argv + 1)) {
		experiment_help(stdout, &s);
		spec_free(&s);
		return 0;
	}
	shard_mode m;
	memset(&m, 0, sizeof m);
	char *source = NULL, **rest = malloc((size_t)argc * sizeof *rest);
	int nrest = 0;
	st = rest ? shard_run_args(&m, &source, rest, &nrest, argc, argv, &e) : SKV_ENOMEM;
	if (!rest)
		msg_set(&e, "skv: out of memory");
	if (st == SKV_OK)
		st = spec_args(&s, nrest, rest, &e);
	if (st == SKV_OK)
		st = spec_check(&s, &e);
	if (st == SKV_OK && !m.estimate)
		st = outdir_prepare(s.out, &e);
	if (st == SKV_OK && !m.estimate)
		st = outdir_lock(s.out, command, &e);
	m.shard_dir = s.out; /* a shard's folder: the run's files are merge's to write */
	if (st == SKV_OK)
		st = shard_execute(&s, 1, &m, command, &e);
	spec_free(&s);
	free(rest);
	free(source);
	return st == SKV_OK ? 0 : cli_fail(&e, st);
}

int cli_mpfr_check(int thread_safe, message *e)
{
	if (thread_safe)
		return SKV_OK;
	msg_set(e, "skv: this MPFR (%s) was built without thread-local storage, and skv computes its truths on "
		   "several threads; install a thread-safe MPFR (Debian's libmpfr6 is; --enable-thread-safe when "
		   "building it)", mpfr_get_version());
	return SKV_EIO;
}

int cli_main(int argc, char **argv)
{
	temp_install();
	message e = {NULL};
	const int tls = cli_mpfr_check(skv_mpfr_thread_safe(), &e);
	if (tls != SKV_OK)
		return cli_fail(&e, tls);
	if (argc < 2) {
		usage(stderr);
		return cli_exit_status(SKV_EINVAL);
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("skv %s\n", skv_version());
		return 0;
	}
	if (strcmp(cmd, "list") == 0) {
		const int st = list_main(argc - 1, argv + 1, stdout, &e);
		return st == SKV_OK ? 0 : cli_fail(&e, st);
	}
	if (strcmp(cmd, "report") == 0)
		return report_main(argc - 1, argv + 1);
	if (strcmp(cmd, "recommend") == 0)
		return rec_main(argc - 1, argv + 1);
	if (strcmp(cmd, "mma") == 0)
		return mma_cmd_main(argc - 1, argv + 1, stdout, stderr);
	if (strcmp(cmd, "grade") == 0)
		return grade_main(argc - 1, argv + 1);
	if (strcmp(cmd, "export") == 0)
		return export_main(argc - 1, argv + 1);
	if (strcmp(cmd, "run") != 0 && strcmp(cmd, "suite") != 0 && strcmp(cmd, "merge") != 0) {
		fprintf(stderr, "skv: unknown command '%s' (expected list, run, suite, merge, report, recommend, mma, grade, export; see skv --help)\n", cmd);
		return cli_exit_status(SKV_EINVAL);
	}
	char *command = cli_join_args(argc, argv);
	if (!command) {
		fprintf(stderr, "skv: out of memory\n");
		return cli_exit_status(SKV_ENOMEM);
	}
	int st = strcmp(cmd, "run") == 0     ? cmd_run(argc - 2, argv + 2, command)
		 : strcmp(cmd, "merge") == 0 ? merge_main(argc - 2, argv + 2, command)
					     : suite_main(argc - 2, argv + 2, command);
	free(command);
	return st;
}
