/* recommend_cli.c - `skv recommend`: its flags through the parameter table, the usage, and the entry point. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rec_usage(FILE *f)
{
	fputs("usage: skv recommend [--PARAM=VALUE]...\n"
	      "\n"
	      "Chooses a split-KV count for one decode shape from FA2's occupancy heuristic and the\n"
	      "error measured against the exact attention output (certified to 2^-100). Every count is\n"
	      "measured as `skv run` measures a row: the same problems (trial t draws from\n"
	      "skv_seed_mix(seed, t)), kernel, storage and merge, so a candidate's errors are those of\n"
	      "`skv run split-count --splits=S --layout=fa2 --block-size=BLOCK_N` at the same flags.\n"
	      "\n"
	      "--splits=pow2|all|N,N,...: 1, 2, 4, ... up to --max-splits; every count up to it; or a\n"
	      "list (--candidates says the same). FA2's pick is always added; ineligible counts (the same\n"
	      "blocks per split as one count fewer) are dropped. --block-size is FA2's block_n.\n"
	      "\nparameters:\n",
	      f);
	message e = {NULL};
	run_spec s;
	if (spec_init(&s, &rec_exp, &e) == SKV_OK) {
		cli_param_help(f, &s);
		spec_free(&s);
	}
	msg_free(&e);
}

/* "skv: ..." from the shared parser becomes "skv recommend: ...". */
static int reprefix(message *e, int st)
{
	const char *m = msg_text(e);
	if (strncmp(m, "skv: ", 5) != 0)
		return st;
	char *t = strdup(m + 5);
	char *hint = t ? strstr(t, "(see skv run --help)") : NULL;
	if (hint)
		*hint = '\0';
	if (t)
		msg_set(e, "skv recommend: %s%s", t, hint ? "(see skv recommend --help)" : "");
	free(t);
	return st;
}

static int value_of(const char **v, int *i, int argc, char **argv, const char *a, size_t n)
{
	if (a[n] == '=') {
		*v = a + n + 1;
		return 1;
	}
	if (a[n] == '\0' && *i + 1 < argc) {
		*v = argv[++*i];
		return 1;
	}
	return 0;
}

/* The command's tokens as the parameter table reads them: --splits=pow2
 * and =all become --candidates, a list adds --candidates=list; --out has
 * no place here. tok[] gets at most 2 argc + 1 entries (owned by buf). */
static int translate(int *ntok, char **tok, char *buf, size_t buflen, int argc, char **argv, message *e)
{
	int n = 0, cand_given = 0, list_given = 0;
	size_t used = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		if (strncmp(a, "--out", 5) == 0 && (a[5] == '\0' || a[5] == '=')) {
			msg_set(e, "skv recommend: %s: recommend writes its report to stdout (--format=text|csv|json)", a);
			return SKV_EINVAL;
		}
		cand_given |= strncmp(a, "--candidates", 12) == 0 && (a[12] == '=' || a[12] == '\0');
		if (strncmp(a, "--splits", 8) == 0 && value_of(&v, &i, argc, argv, a, 8)) {
			const int named = strcmp(v, "pow2") == 0 || strcmp(v, "all") == 0;
			const size_t k = strlen(v) + 20;
			if (used + k > buflen)
				return SKV_ENOMEM;
			snprintf(buf + used, k, "--%s=%s", named ? "candidates" : "splits", v);
			tok[n++] = buf + used;
			used += k;
			cand_given |= named;
			list_given |= !named;
			continue;
		}
		tok[n++] = argv[i];
	}
	if (list_given && !cand_given)
		tok[n++] = (char *)"--candidates=list";
	*ntok = n;
	return SKV_OK;
}

int rec_parse(rec_opts *o, int *help, int argc, char **argv, message *e)
{
	*help = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			*help = 1;
			return SKV_OK;
		}
	}
	size_t buflen = 64;
	for (int i = 1; i < argc; i++)
		buflen += strlen(argv[i]) + 20;
	char **tok = malloc((2 * (size_t)argc + 1) * sizeof *tok), *buf = malloc(buflen);
	int ntok = 0, st = tok && buf ? translate(&ntok, tok, buf, buflen, argc, argv, e) : SKV_ENOMEM;
	run_spec s;
	if (st == SKV_OK && (st = spec_init(&s, &rec_exp, e)) == SKV_OK) {
		st = spec_args(&s, ntok, tok, e);
		if (st == SKV_OK)
			st = rec_opts_init(o, &s, e); /* takes s over */
		else
			spec_free(&s);
	}
	free(tok);
	free(buf);
	if (st == SKV_ENOMEM)
		msg_set(e, "skv recommend: out of memory");
	return reprefix(e, st);
}

int rec_main_io(int argc, char **argv, FILE *out, FILE *err)
{
	message e = {NULL};
	rec_opts o;
	int help;
	int st = rec_parse(&o, &help, argc, argv, &e);
	if (st != SKV_OK) {
		fprintf(err, "%s\n", msg_text(&e));
		msg_free(&e);
		return cli_exit_status(st);
	}
	if (help) {
		rec_usage(out);
		return 0;
	}
	rec_result r;
	FILE *progress = err == stderr && isatty(fileno(stderr)) ? stderr : NULL;
	st = rec_run(&r, &o, progress, &e);
	if (st != SKV_OK) {
		fprintf(err, "%s\n", msg_text(&e));
		msg_free(&e);
		rec_opts_free(&o);
		return cli_exit_status(st);
	}
	if (o.format == REC_CSV)
		rec_print_csv(out, &o, &r);
	else if (o.format == REC_JSON)
		rec_print_json(out, &o, &r);
	else
		rec_print_text(out, &o, &r);
	rec_result_free(&r);
	rec_opts_free(&o);
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(err, "skv recommend: cannot write the report\n");
		return 1;
	}
	return 0;
}

int rec_main(int argc, char **argv) { return rec_main_io(argc, argv, stdout, stderr); }
