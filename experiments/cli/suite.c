/* suite.c - `skv suite FILE`: every line parsed and checked before the first runs, suite-wide flags, and the staged --report. */
#define _GNU_SOURCE /* realpath's companions, asprintf */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/shard.h"
#include "report/report.h"

/* Limits of a suite file: far above any real suite, low enough that a
 * wrong file (a device, a log) is refused at once instead of filling the
 * memory. Documented in skv --help. */
#define SUITE_MAX_BYTES ((size_t)16 << 20)
#define SUITE_MAX_LINE ((size_t)1 << 20)

/* What the command line adds after FILE: flags for every line that takes
 * them, --out, --report. */
typedef struct {
	int n;
	char **tok;        /* the --PARAM tokens, as given */
	unsigned *kinds;   /* [n] the experiment kinds each applies to */
	char *out;         /* --out, or NULL */
	int report;        /* --report */
	shard_mode mode;   /* --shard=K/N, --resume, --estimate */
} extras;

/* The whole suite file, checked: a regular file (opened without blocking,
 * so a FIFO is refused rather than waited on), at most SUITE_MAX_BYTES. */
int suite_read(char **text, size_t *len, const char *file, message *e)
{
	io_slurp_info in;
	const int st = io_slurp(text, len, file, SUITE_MAX_BYTES, &in);
	if (st == SKV_OK)
		return SKV_OK;
	if (in.why == IO_READ_TOO_LARGE)
		msg_set(e, "skv: cannot read suite file '%s': %llu bytes, more than the %zu MiB a suite may have", file,
			in.size, SUITE_MAX_BYTES >> 20);
	else if (in.why == IO_READ_NOT_REGULAR)
		msg_set(e, "skv: cannot read suite file '%s': %s, not a regular file", file, io_file_kind(in.mode));
	else
		msg_set(e, "skv: cannot read suite file '%s': %s", file,
			in.why == IO_READ_NOMEM ? "out of memory" : strerror(in.err));
	return SKV_EIO;
}

/* Rewrites "skv: MSG" as "skv: WHERE: MSG". */
static void locate(message *e, const char *where)
{
	const char *t = msg_text(e);
	char *m = strdup(strncmp(t, "skv: ", 5) == 0 ? t + 5 : t);
	msg_set(e, "skv: %s: %s", where, m ? m : "out of memory");
	free(m);
}

/* The command-line flags after FILE, checked on their own before the file
 * is read, so an error in them is blamed on the command line. */
static int parse_extras(extras *x, int argc, char **argv, message *e)
{
	memset(x, 0, sizeof *x);
	x->tok = calloc((size_t)argc + 1, sizeof *x->tok);
	x->kinds = calloc((size_t)argc + 1, sizeof *x->kinds);
	if (!x->tok || !x->kinds) {
		msg_set(e, "skv: out of memory");
		return SKV_EIO;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const int mode = strcmp(a, "--report") == 0 ? (x->report = 1) : shard_mode_flag(&x->mode, argc, argv, &i, e);
		if (mode < 0)
			return SKV_EINVAL;
		if (mode)
			continue;
		if (strncmp(a, "--out=", 6) == 0 || strcmp(a, "--out") == 0) {
			const char *v = a[5] == '=' ? a + 6 : i + 1 < argc ? argv[++i] : NULL;
			if (!v || !*v) {
				msg_set(e, "skv: command line: --out needs a folder name");
				return SKV_EINVAL;
			}
			x->out = (char *)v;
			continue;
		}
		/* One parameter: its flag, and its values parsed on a spec of any
		 * experiment it applies to. */
		char *name = strncmp(a, "--", 2) == 0 ? strndup(a + 2, strcspn(a + 2, "=")) : NULL;
		int id = name ? param_find(name) : -1;
		if (id < 0) {
			if (name)
				msg_set(e, "skv: command line: unknown parameter '--%s' (see skv run --help)", name);
			else
				msg_set(e, "skv: command line: unexpected argument '%s' (flags are --name=value)", a);
			free(name);
			return SKV_EINVAL;
		}
		const char *eq = strchr(a, '=');
		if (!eq && i + 1 >= argc) {
			msg_set(e, "skv: command line: --%s needs a value (--%s=VALUE)", name, name);
			free(name);
			return SKV_EINVAL;
		}
		char *tok = NULL;
		if (asprintf(&tok, "--%s=%s", name, eq ? eq + 1 : argv[++i]) < 0) {
			free(name);
			msg_set(e, "skv: out of memory");
			return SKV_EIO;
		}
		free(name);
		x->tok[x->n] = tok;
		x->kinds[x->n++] = params[id].kinds;
	}
	/* Values, ranges and repeats: the flags applied together to a spec of
	 * each experiment (a flag given twice is refused there). */
	char **mine = malloc(((size_t)x->n + 1) * sizeof *mine);
	if (!mine) {
		msg_set(e, "skv: out of memory");
		return SKV_EIO;
	}
	int st = SKV_OK;
	for (size_t k = 0; k < nexperiments && st == SKV_OK; k++) {
		run_spec s;
		st = catalog_spec_init(&s, experiments[k]->def.name, e);
		if (st != SKV_OK)
			break;
		int nk = 0;
		for (int i = 0; i < x->n; i++)
			if (x->kinds[i] & s.exp->kind)
				mine[nk++] = x->tok[i];
		st = spec_args(&s, nk, mine, e);
		spec_free(&s);
		if (st != SKV_OK)
			locate(e, "command line");
	}
	free(mine);
	return st;
}

static void extras_free(extras *x)
{
	for (int i = 0; x->tok && i < x->n; i++)
		free(x->tok[i]);
	free(x->tok);
	free(x->kinds);
}

/* Splits a line into blank-separated tokens (in place). */
static char **tokens(char *line, size_t *argc)
{
	size_t cap = 8, n = 0;
	char **argv = malloc(cap * sizeof *argv), *save = NULL;
	for (char *t = strtok_r(line, " \t\r", &save); argv && t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n + 1 == cap) {
			char **g = realloc(argv, 2 * cap * sizeof *argv);
			if (!g) {
				free(argv);
				return NULL;
			}
			argv = g;
			cap *= 2;
		}
		argv[n++] = t;
	}
	*argc = n;
	return argv;
}

/* One line, "run EXPERIMENT [--flags]" (# starts a comment), then the
 * command line's flags that apply to it. 0: blank; 1: a spec; or minus an
 * exit status. */
static int parse_line(run_spec *s, char *line, const extras *x, message *e)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	size_t argc;
	char **argv = tokens(line, &argc);
	if (!argv) {
		msg_set(e, "skv: out of memory");
		return -SKV_EIO;
	}
	int rc = 0;
	if (argc > 0 && (strcmp(argv[0], "run") != 0 || argc < 2)) {
		msg_set(e, "skv: expected 'run EXPERIMENT [--flags]', got '%s'", argv[0]);
		rc = -SKV_EINVAL;
	} else if (argc > 0) {
		memset(s, 0, sizeof *s); /* freed below whatever step fails */
		int st = catalog_spec_init(s, argv[1], e);
		if (st == SKV_OK)
			st = spec_args(s, (int)argc - 2, argv + 2, e);
		for (int i = 0; st == SKV_OK && i < x->n; i++)
			if (x->kinds[i] & s->exp->kind)
				st = spec_args(s, 1, &x->tok[i], e);
		if (st == SKV_OK && x->out) {
			char *o = NULL;
			st = asprintf(&o, "--out=%s", x->out) < 0 ? SKV_EIO : spec_args(s, 1, &o, e);
			free(o);
		}
		if (st == SKV_OK)
			st = spec_check(s, e);
		if (st != SKV_OK)
			spec_free(s);
		rc = st == SKV_OK ? 1 : -st;
	}
	free(argv);
	return rc;
}

/* The folder as a comparable name: its real path when it exists. */
static char *folder_key(const char *out)
{
	char *r = realpath(out, NULL);
	if (r)
		return r;
	char *c = strdup(out);
	for (size_t k = c ? strlen(c) : 0; k > 1 && c[k - 1] == '/'; k--)
		c[k - 1] = '\0';
	return c;
}

typedef struct {
	run_spec *v;
	size_t *line;
	char **key;
	size_t n;
} spec_list;

static void specs_free(spec_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		spec_free(&l->v[i]);
		free(l->key[i]);
	}
	free(l->v);
	free(l->line);
	free(l->key);
}

/* Adds the spec of one line; refuses an experiment that already runs into
 * the same folder (its files would replace each other's). */
static int add_spec(spec_list *l, run_spec *s, size_t line, const char *file, message *e)
{
	char *key = folder_key(s->out);
	for (size_t i = 0; key && i < l->n; i++)
		if (strcmp(l->v[i].exp->name, s->exp->name) == 0 && strcmp(l->key[i], key) == 0) {
			msg_set(e, "skv: %s:%zu: experiment %s already runs at line %zu into '%s' (the second would "
					  "replace the first's files); give one of them another --out",
				       file, line, s->exp->name, l->line[i], s->out);
			free(key);
			spec_free(s);
			return SKV_EINVAL;
		}
	run_spec *v = realloc(l->v, (l->n + 1) * sizeof *v);
	size_t *ln = v ? realloc(l->line, (l->n + 1) * sizeof *ln) : NULL;
	char **k = ln ? realloc(l->key, (l->n + 1) * sizeof *k) : NULL;
	if (v)
		l->v = v;
	if (ln)
		l->line = ln;
	if (!key || !k) {
		free(key);
		spec_free(s);
		msg_set(e, "skv: out of memory");
		return SKV_EIO;
	}
	l->key = k;
	l->v[l->n] = *s;
	l->line[l->n] = line;
	l->key[l->n++] = key;
	return SKV_OK;
}

/* Every line of the file: a leading UTF-8 byte-order mark is skipped; a
 * NUL byte or a line above SUITE_MAX_LINE is refused. */
static int parse_file(spec_list *l, const char *file, char *text, size_t len, const extras *x, message *e)
{
	char *p = text, *end = text + len;
	if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	for (size_t lineno = 1; p < end; lineno++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *stop = nl ? nl : end;
		if (memchr(p, '\0', (size_t)(stop - p))) {
			msg_set(e, "skv: %s:%zu: NUL byte in the line", file, lineno);
			return SKV_EINVAL;
		}
		if ((size_t)(stop - p) > SUITE_MAX_LINE) {
			msg_set(e, "skv: %s:%zu: line longer than %zu KiB", file, lineno, SUITE_MAX_LINE >> 10);
			return SKV_EINVAL;
		}
		*stop = '\0';
		run_spec s;
		int got = parse_line(&s, p, x, e);
		if (got < 0) {
			char *loc = NULL;
			if (asprintf(&loc, "%s:%zu", file, lineno) >= 0)
				locate(e, loc);
			free(loc);
			return -got;
		}
		if (got > 0) {
			int st = add_spec(l, &s, lineno, file, e);
			if (st != SKV_OK)
				return st;
		}
		p = stop + 1;
	}
	if (l->n == 0) {
		msg_set(e, "skv: %s: no 'run' lines", file);
		return SKV_EINVAL;
	}
	return SKV_OK;
}

/* One line on stderr for each command-line flag that some experiment of
 * the suite does not take: it runs those at their own values. */
static void note_unaffected(const extras *x, const spec_list *l)
{
	for (int i = 0; i < x->n; i++) {
		size_t shown = 0;
		for (size_t k = 0; k < l->n; k++) {
			if (x->kinds[i] & l->v[k].exp->kind)
				continue;
			int dup = 0;
			for (size_t j = 0; j < k && !dup; j++)
				dup = !(x->kinds[i] & l->v[j].exp->kind) && strcmp(l->v[j].exp->name, l->v[k].exp->name) == 0;
			if (dup)
				continue;
			fprintf(stderr, "%s%s", shown++ ? ", " : "skv: note: ", l->v[k].exp->name);
		}
		if (shown)
			fprintf(stderr, " %s not take %.*s, and run%s at %s own value\n", shown == 1 ? "does" : "do",
				(int)strcspn(x->tok[i], "="), x->tok[i], shown == 1 ? "s" : "", shown == 1 ? "its" : "their");
	}
}

/* --report: every line into one staged folder, the report drawn there, the
 * whole swapped into place at the end; any failure leaves --out as it was
 * (its journal included: --resume continues from it). */
static int run_staged(spec_list *l, const shard_mode *m, const char *command, message *e)
{
	const char *out = l->v[0].out;
	for (size_t i = 1; i < l->n; i++)
		if (strcmp(l->key[i], l->key[0]) != 0) {
			msg_set(e, "skv: --report needs every line to write into one folder; line %zu writes to '%s', "
					  "line %zu to '%s'",
				       l->line[0], out, l->line[i], l->v[i].out);
			return SKV_EINVAL;
		}
	char *stage = NULL;
	int st = outdir_prepare(out, e);
	if (st == SKV_OK)
		st = outdir_lock(out, command, e);
	if (st == SKV_OK)
		st = stage_begin(&stage, out, e);
	if (st != SKV_OK)
		return st;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].shown_out);
		l->v[i].shown_out = l->v[i].out;
		l->v[i].out = strdup(stage);
		if (!l->v[i].out) {
			stage_end();
			msg_set(e, "skv: out of memory");
			return SKV_EIO;
		}
	}
	st = shard_execute(l->v, l->n, m, command, e);
	/* skv report prints its own message: e stays empty when it fails */
	if (st == SKV_OK && report_run_as(stage, out, stderr) != 0)
		st = SKV_EIO;
	if (st == SKV_OK)
		st = stage_publish(out, e);
	else
		stage_end();
	return st;
}

int suite_parse(size_t *nspecs, const char *file, char *text, size_t len, int argc, char **argv,
			message *e)
{
	extras x;
	spec_list l = {NULL, NULL, NULL, 0};
	int st = parse_extras(&x, argc, argv, e);
	if (st == SKV_OK)
		st = parse_file(&l, file, text, len, &x, e);
	*nspecs = l.n;
	extras_free(&x);
	specs_free(&l);
	return st;
}

int suite_load(run_spec **specs, size_t *n, struct shard_mode_s *mode, int *report, const char *file, char *text, size_t len,
	       int argc, char **argv, message *e)
{
	extras x;
	spec_list l = {NULL, NULL, NULL, 0};
	int st = parse_extras(&x, argc, argv, e);
	if (st == SKV_OK)
		st = parse_file(&l, file, text, len, &x, e);
	if (mode)
		*mode = x.mode;
	if (report)
		*report = x.report;
	extras_free(&x);
	if (st != SKV_OK) {
		specs_free(&l);
		return st;
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.key[i]);
	free(l.line), free(l.key);
	*specs = l.v;
	*n = l.n;
	return SKV_OK;
}

/* Prepares and locks the folder of every line (its --out), or, for a
 * shard, only the shard's own folder: nothing is written elsewhere. */
static int lock_folders(spec_list *l, const shard_mode *m, const char *command, message *e)
{
	int st = SKV_OK;
	for (size_t n = 0; st == SKV_OK && n < (m->n ? 1 : l->n); n++) {
		const char *d = m->n ? m->shard_dir : l->v[n].out;
		st = outdir_prepare(d, e);
		if (st == SKV_OK)
			st = outdir_lock(d, command, e);
	}
	return st;
}

/* Runs the parsed suite as the command line says: estimated only, staged
 * with its report, or into its folders (prepared and locked before the
 * first unit runs), whole or one shard. */
static int run_suite(spec_list *l, extras *x, const char *command, message *e)
{
	if (x->mode.estimate)
		return shard_execute(l->v, l->n, &x->mode, command, e);
	if (x->report && x->mode.n) {
		msg_set(e, "skv: --report draws a whole suite's report, not a shard's: run the shards, merge them "
			   "(skv merge OUT DIR...), then skv report OUT");
		return SKV_EINVAL;
	}
	if (x->report)
		return run_staged(l, &x->mode, command, e);
	int st = lock_folders(l, &x->mode, command, e);
	return st == SKV_OK ? shard_execute(l->v, l->n, &x->mode, command, e) : st;
}

/* A shard's --out is its own folder (for its shard file) and leaves each
 * line its folder, which skv merge recreates. */
static int shard_folder(extras *x, message *e)
{
	if (!x->mode.n)
		return SKV_OK;
	if (!x->out && !x->mode.estimate) {
		msg_set(e, "skv: --shard=%u/%u needs --out=DIR, the shard's own folder (one per shard)", x->mode.k, x->mode.n);
		return SKV_EINVAL;
	}
	x->mode.shard_dir = x->out;
	x->out = NULL;
	return SKV_OK;
}

int suite_main(int argc, char **argv, const char *command)
{
	message e = {NULL};
	if (argc < 1 || strncmp(argv[0], "--", 2) == 0) {
		fprintf(stderr, "skv: suite needs a file name (skv suite FILE [--flags] [--out=DIR] [--report] "
				"[--shard=K/N] [--resume] [--estimate])\n");
		return cli_exit_status(SKV_EINVAL);
	}
	const char *file = argv[0];
	extras x;
	spec_list l = {NULL, NULL, NULL, 0};
	char *text = NULL, *source = NULL;
	size_t len = 0;
	int st = parse_extras(&x, argc - 1, argv + 1, &e);
	if (st == SKV_OK)
		st = shard_folder(&x, &e);
	if (st == SKV_OK)
		st = suite_read(&text, &len, file, &e);
	/* the text as read, for the journal (parsing cuts the lines) */
	if (st == SKV_OK && !(source = malloc(len + 1))) {
		msg_set(&e, "skv: out of memory");
		st = SKV_EIO;
	}
	if (st == SKV_OK) {
		memcpy(source, text, len + 1);
		st = parse_file(&l, file, text, len, &x, &e);
	}
	free(text);
	if (st == SKV_OK)
		note_unaffected(&x, &l);
	x.mode.source_name = file;
	x.mode.source = source;
	x.mode.source_len = len;
	x.mode.args = x.tok;
	x.mode.nargs = x.n;
	if (st == SKV_OK)
		st = run_suite(&l, &x, command, &e);
	if (st != SKV_OK && e.msg)
		cli_fail(&e, st);
	msg_free(&e);
	free(source);
	extras_free(&x);
	specs_free(&l);
	return cli_exit_status(st);
}
