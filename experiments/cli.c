/* cli.c - the commands of the skv program: list, run, suite, report, help and version. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "app.h"
#include "report.h"
#include "recommend.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: skv COMMAND [ARGS]\n"
		"\n"
		"skv %s: a precision study harness for the split-KV (flash-decoding) attention merge.\n"
		"\n"
		"commands:\n"
		"  skv list                          every experiment, its description and defaults\n"
		"  skv run EXPERIMENT [--PARAM=V1,V2,...]... [--out=DIR]\n"
		"                                    run one experiment; a comma-separated list sweeps\n"
		"                                    a parameter, the points are the cross product\n"
		"  skv run --help                    every parameter, its default and allowed values\n"
		"  skv run EXPERIMENT --help         the experiment's defaults\n"
		"  skv suite FILE [--PARAM=V]... [--out=DIR]\n"
		"                                    run each 'run EXPERIMENT --flags' line of FILE\n"
		"                                    (# comments); flags after FILE override every line\n"
		"  skv report DIR                    redraw charts and REPORT.md from DIR's CSV files\n"
		"  skv recommend --batch=B --heads=H --kv-heads=K --ctx=N --sms=M [--preset=P] ...\n"
		"                                    pick a split count from measured error and FA2's\n"
		"                                    occupancy heuristic (skv recommend --help)\n"
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

/* Prints text word-wrapped to 78 columns, every line after the first
 * indented by `indent` spaces (the first starts at column `col`). */
static void wrap(FILE *f, const char *text, int col, int indent)
{
	const int width = 78;
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

static void param_help(FILE *f, const skv_app_spec *s)
{
	char allowed[256], val[64];
	for (int i = 0; i < SKV_APP_NPARAMS; i++) {
		const skv_app_param *p = &skv_app_params[i];
		if (s && !skv_app_spec_applies(s, i))
			continue;
		skv_app_param_allowed(allowed, sizeof allowed, i);
		fprintf(f, "  --%-14s ", p->flag);
		wrap(f, p->help, 19, 19);
		fprintf(f, "  %-16s default ", "");
		if (s) {
			for (size_t k = 0; k < s->list[i].n; k++) {
				skv_app_value_format(val, sizeof val, i, s->list[i].v[k]);
				fprintf(f, "%s%s", k ? "," : "", val);
			}
		} else {
			fputs(p->def, f);
		}
		fprintf(f, "; %s%s\n", p->type == SKV_APP_ENUM ? "one of " : "", allowed);
		if (p->single)
			fprintf(f, "  %-16s (one value, not a list)\n", "");
	}
}

static void run_help(FILE *f)
{
	fprintf(f, "usage: skv run EXPERIMENT [--PARAM=V1,V2,...]... [--out=DIR]\n\n"
		   "experiments: ");
	for (size_t i = 0; i < skv_app_nexperiments; i++)
		fprintf(f, "%s%s", i ? ", " : "", skv_app_experiments[i].name);
	fprintf(f, "\n\nThe points are the cross product of the lists, in the order of the parameters\n"
		   "below with the last one varying fastest; each point runs --trials trials. Trial t\n"
		   "draws its problem from skv_seed_mix(seed, t) (the random layout and order from\n"
		   "skv_seed_mix of that seed with 1 and 2), so a row is reproduced from its seed and\n"
		   "trial columns. Parameters (the experiments override some defaults; see\n"
		   "skv run EXPERIMENT --help):\n\n");
	param_help(f, NULL);
	fprintf(f, "  --%-14s output folder, default results\n", "out");
}

static void experiment_help(FILE *f, const skv_app_spec *s)
{
	const skv_app_experiment *x = s->exp;
	fprintf(f, "usage: skv run %s [--PARAM=V1,V2,...]... [--out=DIR]\n\n%s.\n\n", x->name, x->summary);
	wrap(f, x->why, 0, 0);
	fprintf(f, "\nparameters:\n");
	param_help(f, s);
	fprintf(f, "  --%-14s output folder, default results\n", "out");
}

static void list(FILE *f)
{
	for (size_t i = 0; i < skv_app_nexperiments; i++) {
		const skv_app_experiment *x = &skv_app_experiments[i];
		fprintf(f, "%-16s %s\n%-16s defaults: %s\n", x->name, x->summary, "", x->defaults);
	}
	fprintf(f, "\npresets (--preset=NAME on any experiment; explicit flags override single fields):\n");
	for (size_t i = 0; i < skv_preset_count(); i++) {
		const skv_preset *p = skv_preset_at(i);
		const skv_config *c = &p->cfg;
		fprintf(f, "%-16s input=%s compute=%s p=%s%s partial=%s%s lse=%s combine=%s output=%s%s lse-base=%s\n",
			p->name, skv_format_name(c->input), skv_format_name(c->compute), skv_format_name(c->p),
			p->follows & SKV_FOLLOW_P ? "(=input)" : "", skv_format_name(c->partial),
			p->follows & SKV_FOLLOW_PARTIAL ? "(=output)" : "", skv_format_name(c->lse),
			skv_format_name(c->combine), skv_format_name(c->output),
			p->follows & SKV_FOLLOW_OUTPUT ? "(=input)" : "", skv_lse_base_name(c->base));
		fprintf(f, "%-16s merge=%s order=%s merge-threads=%u empty=%s round-states=%d\n", "",
			skv_merge_name(p->merge.merge), skv_order_name(p->merge.order), p->merge.threads,
			skv_empty_name(p->merge.empty), p->merge.round_states);
		fprintf(f, "%-16s ", "");
		wrap(f, p->description, 17, 17);
	}
}

/* The command line as one string, each argument quoted for the shell when
 * it holds anything but plain characters. */
static char *join_args(int argc, char **argv)
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

int skv_app_fail(skv_app_error *e, int st)
{
	fprintf(stderr, "%s\n", skv_app_error_text(e));
	skv_app_error_free(e);
	return st;
}

int skv_app_execute(const skv_app_spec *s, const char *command, skv_app_error *e)
{
	skv_app_result r;
	memset(&r, 0, sizeof r);
	FILE *progress = isatty(fileno(stderr)) ? stderr : NULL;
	int st = skv_app_engine_run(&r, s, progress, e);
	if (st == SKV_APP_EXIT_OK)
		st = skv_app_write_outputs(s, &r, command, e);
	if (st != SKV_APP_EXIT_OK) {
		skv_app_result_free(&r);
		return st;
	}
	fputs("skv: ", stderr);
	fputs(s->exp->name, stderr);
	fputs(": seed ", stderr);
	skv_app_seed_list(stderr, s);
	fprintf(stderr, ", %zu point%s x %llu trial%s, %.1f s -> %s/%s.csv\n", r.npoints, r.npoints == 1 ? "" : "s",
		(unsigned long long)r.trials, r.trials == 1 ? "" : "s", r.wall_s, s->shown_out ? s->shown_out : s->out,
		s->exp->name);
	skv_app_result_free(&r);
	return SKV_APP_EXIT_OK;
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
	skv_app_error e = {NULL};
	if (argc < 1) {
		fprintf(stderr, "skv: run needs an experiment name (see skv list)\n");
		return SKV_APP_EXIT_USAGE;
	}
	if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
		run_help(stdout);
		return SKV_APP_EXIT_OK;
	}
	skv_app_spec s;
	int st = skv_app_spec_init(&s, argv[0], &e);
	if (st != SKV_APP_EXIT_OK)
		return skv_app_fail(&e, st);
	if (has_help(argc - 1, argv + 1)) {
		experiment_help(stdout, &s);
		skv_app_spec_free(&s);
		return SKV_APP_EXIT_OK;
	}
	st = skv_app_spec_args(&s, argc - 1, argv + 1, &e);
	if (st == SKV_APP_EXIT_OK)
		st = skv_app_spec_check(&s, &e);
	if (st == SKV_APP_EXIT_OK)
		st = skv_app_out_prepare(s.out, &e);
	if (st == SKV_APP_EXIT_OK)
		st = skv_app_out_lock(s.out, command, &e);
	if (st != SKV_APP_EXIT_OK) {
		skv_app_spec_free(&s);
		return skv_app_fail(&e, st);
	}
	st = skv_app_execute(&s, command, &e);
	skv_app_spec_free(&s);
	return st == SKV_APP_EXIT_OK ? st : skv_app_fail(&e, st);
}

int skv_app_main(int argc, char **argv)
{
	skv_app_temp_install();
	if (argc < 2) {
		usage(stderr);
		return SKV_APP_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return SKV_APP_EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("skv %s\n", skv_version());
		return SKV_APP_EXIT_OK;
	}
	if (strcmp(cmd, "list") == 0) {
		list(stdout);
		return SKV_APP_EXIT_OK;
	}
	if (strcmp(cmd, "report") == 0)
		return skv_app_report(argc - 1, argv + 1);
	if (strcmp(cmd, "recommend") == 0)
		return skv_app_recommend(argc - 1, argv + 1);
	if (strcmp(cmd, "run") != 0 && strcmp(cmd, "suite") != 0) {
		fprintf(stderr, "skv: unknown command '%s' (expected list, run, suite, report, recommend; see skv --help)\n", cmd);
		return SKV_APP_EXIT_USAGE;
	}
	char *command = join_args(argc, argv);
	if (!command) {
		fprintf(stderr, "skv: out of memory\n");
		return SKV_APP_EXIT_RUNTIME;
	}
	int st = strcmp(cmd, "run") == 0 ? cmd_run(argc - 2, argv + 2, command)
					 : skv_app_suite(argc - 2, argv + 2, command);
	free(command);
	return st;
}
