/* merge_cmd.c - `skv merge OUT SHARD_DIR...`: the finished shards of one run checked to belong together and to hold every unit once, then written as the whole run's files. */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/cli.h"
#include "cli/shard.h"

typedef struct {
	char *path;
	journal_file f;
	shard_header h;
} shard_in;

typedef struct {
	shard_in *in;
	size_t n;
} shard_set;

static void set_free(shard_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->in[i].path);
		journal_file_free(&s->in[i].f);
		shard_header_free(&s->in[i].h);
	}
	free(s->in);
	memset(s, 0, sizeof *s);
}

/* Reads one finished shard file (strictly: a shard file is whole). */
static int add_file(shard_set *s, const char *path, message *e)
{
	shard_in *g = realloc(s->in, (s->n + 1) * sizeof *g);
	if (!g) {
		msg_set(e, "skv merge: out of memory");
		return SKV_ENOMEM;
	}
	s->in = g;
	shard_in *x = &s->in[s->n];
	memset(x, 0, sizeof *x);
	if (!(x->path = strdup(path))) {
		msg_set(e, "skv merge: out of memory");
		return SKV_ENOMEM;
	}
	s->n++;
	int st = journal_read(&x->f, path, 1, e);
	if (st == SKV_OK && shard_header_parse(&x->h, x->f.rec[0].data, x->f.rec[0].len) != SKV_OK) {
		msg_set(e, "skv merge: '%s' has a malformed header: not a shard of skv's", path);
		st = SKV_EINVAL;
	}
	if (st == SKV_OK && x->h.n == 0) {
		msg_set(e, "skv merge: '%s' is a whole run's journal, not a shard's", path);
		st = SKV_EINVAL;
	}
	return st;
}

/* Whether name is a finished shard's file name, shard-K-of-N.journal. */
static int is_shard_name(const char *name)
{
	unsigned k, n;
	char back[96];
	if (sscanf(name, "shard-%u-of-%u.journal", &k, &n) != 2)
		return 0;
	snprintf(back, sizeof back, "shard-%u-of-%u.journal", k, n);
	return strcmp(back, name) == 0;
}

/* A shard file, or every shard file in a folder (sorted by name, so the
 * messages do not depend on the folder's order). */
static int add_arg(shard_set *s, const char *arg, message *e)
{
	struct stat sb;
	if (stat(arg, &sb) != 0 || (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode))) {
		msg_set(e, "skv merge: no shard folder or file '%s'", arg);
		return SKV_EINVAL;
	}
	if (S_ISREG(sb.st_mode))
		return add_file(s, arg, e);
	struct dirent **names = NULL;
	int n = scandir(arg, &names, NULL, alphasort), found = 0, st = SKV_OK;
	for (int i = 0; i < n; i++) {
		if (st == SKV_OK && is_shard_name(names[i]->d_name)) {
			char *p = NULL;
			st = asprintf(&p, "%s/%s", arg, names[i]->d_name) < 0 ? SKV_ENOMEM : add_file(s, p, e);
			found++;
			free(p);
		}
		free(names[i]);
	}
	free(names);
	if (st == SKV_OK && !found) {
		msg_set(e, "skv merge: no finished shard in '%s' (a shard-K-of-N.journal file); a shard still running or "
			   "interrupted has only %s there: rerun it with --resume",
			arg, SHARD_JOURNAL);
		st = SKV_EINVAL;
	}
	return st;
}

/* Every shard of one run, each once: the same identity (suite, flags,
 * version, shard count), shards 1..N all present. */
static int check_set(const shard_set *s, message *e)
{
	const shard_header *h0 = &s->in[0].h;
	/* at[k]: 1 + the first input that is shard k (the identity holds the
	 * shard count, so every k of a matching header is in 1..h0->n) */
	size_t *at = calloc((size_t)h0->n + 1, sizeof *at);
	if (!at) {
		msg_set(e, "skv merge: out of memory");
		return SKV_ENOMEM;
	}
	int st = SKV_OK;
	at[h0->k] = 1;
	for (size_t i = 1; i < s->n && st == SKV_OK; i++) {
		const shard_header *h = &s->in[i].h;
		char why[256];
		if (shard_foreign(why, sizeof why, h, h0->identity, h0->identity_len)) {
			msg_set(e, "skv merge: '%s' is a shard of another run than '%s' (%s)", s->in[i].path, s->in[0].path, why);
			st = SKV_EINVAL;
		} else if (at[h->k]) {
			msg_set(e, "skv merge: shard %u/%u is given twice: '%s' and '%s'", h->k, h->n, s->in[at[h->k] - 1].path,
				s->in[i].path);
			st = SKV_EINVAL;
		} else {
			at[h->k] = i + 1;
		}
	}
	for (unsigned k = 1; k <= h0->n && st == SKV_OK; k++)
		if (!at[k]) {
			msg_set(e, "skv merge: shard %u/%u is missing (%zu of the %u shards given)", k, h0->n, s->n, h0->n);
			st = SKV_EINVAL;
		}
	free(at);
	return st;
}

/* Where merge writes each line: into OUT when the lines share a folder
 * (as skv suite FILE --out=OUT would), else each line into OUT/ITS_FOLDER
 * (as skv suite FILE run in OUT would), which must then be relative. */
static int place_specs(run_spec *specs, size_t n, const char *out, message *e)
{
	int one = 1;
	for (size_t k = 1; k < n; k++)
		one = one && strcmp(specs[k].out, specs[0].out) == 0;
	for (size_t k = 0; k < n; k++) {
		if (!one && specs[k].out[0] == '/') {
			msg_set(e, "skv merge: line %zu writes into '%s', an absolute folder: merge writes each line's folder "
				   "under OUT, so the suite's own folders must be relative",
				k + 1, specs[k].out);
			return SKV_EINVAL;
		}
		char *o = NULL;
		if (asprintf(&o, "--out=%s%s%s", out, one ? "" : "/", one ? "" : specs[k].out) < 0) {
			msg_set(e, "skv merge: out of memory");
			return SKV_ENOMEM;
		}
		int st = spec_args(&specs[k], 1, &o, e);
		free(o);
		if (st != SKV_OK)
			return st;
	}
	return SKV_OK;
}

/* The run's specs read back from the first shard's suite source, placed
 * under OUT; their units must be the shards' (same identity). */
static int load_specs(run_spec **specs, size_t *n, suite_units *u, const shard_set *s, const char *out, message *e)
{
	const shard_header *h = &s->in[0].h;
	char *text = strndup(h->source, h->source_len);
	int st = text ? SKV_OK : SKV_ENOMEM;
	if (st == SKV_OK) {
		message why = {NULL};
		st = suite_load(specs, n, NULL, NULL, h->source_name, text, h->source_len, h->nargs, h->args, &why);
		if (st != SKV_OK)
			msg_set(e, "skv merge: the suite kept in '%s' does not read back here: %s", s->in[0].path, msg_text(&why));
		msg_free(&why);
	} else
		msg_set(e, "skv merge: out of memory");
	free(text);
	if (st == SKV_OK)
		st = place_specs(*specs, *n, out, e);
	if (st == SKV_OK && (st = suite_units_plan(u, *specs, *n, h->n, e)) == SKV_OK) {
		char why[256];
		if (shard_foreign(why, sizeof why, h, u->identity, strlen(u->identity))) {
			msg_set(e, "skv merge: the shards' run is not the one this skv plans from their suite (%s)", why);
			st = SKV_EINVAL;
		}
	}
	return st;
}

/* Every unit in exactly one record, in the shard the partition gives it. */
static int check_units(const shard_set *s, const suite_units *u, const unsigned *shard, message *e)
{
	unsigned char *seen = calloc(u->nunits + 1, 1);
	int st = seen ? SKV_OK : SKV_ENOMEM;
	for (size_t i = 0; st == SKV_OK && i < s->n; i++)
		for (size_t r = 1; st == SKV_OK && r < s->in[i].f.nrec; r++) {
			const journal_rec *rec = &s->in[i].f.rec[r];
			uint64_t line, unit;
			size_t g = 0;
			if (rec->type != JOURNAL_UNIT || unit_record_line(&line, &unit, rec->data, rec->len) != SKV_OK ||
			    line >= u->nspecs || unit >= u->unit0[line + 1] - u->unit0[line])
				msg_set(e, "skv merge: '%s': record %zu names no unit of this run", s->in[i].path, r), st = SKV_EINVAL;
			else if (shard[g = u->unit0[line] + unit] != s->in[i].h.k - 1)
				msg_set(e, "skv merge: '%s' holds unit %llu of line %llu, which is shard %u/%u's, not %u/%u's",
					s->in[i].path, (unsigned long long)unit, (unsigned long long)line + 1, shard[g] + 1,
					s->in[i].h.n, s->in[i].h.k, s->in[i].h.n), st = SKV_EINVAL;
			else if (seen[g]++)
				msg_set(e, "skv merge: '%s' holds unit %llu of line %llu twice", s->in[i].path,
					(unsigned long long)unit, (unsigned long long)line + 1), st = SKV_EINVAL;
		}
	for (size_t g = 0; st == SKV_OK && g < u->nunits; g++)
		if (!seen[g]) {
			size_t i = 0;
			while (s->in[i].h.k != shard[g] + 1)
				i++;
			msg_set(e, "skv merge: shard %u/%u ('%s') lacks some of its units: it is not a finished shard",
				shard[g] + 1, s->in[i].h.n, s->in[i].path);
			st = SKV_EINVAL;
		}
	if (st == SKV_ENOMEM)
		msg_set(e, "skv merge: out of memory");
	free(seen);
	return st;
}

/* Spec k's rows from every shard, then its files. */
static int write_spec(const run_spec *s, size_t k, const shard_set *set, const char *command, message *e)
{
	unit_plan *p = NULL;
	unit_set c;
	int st = unit_plan_open(&p, s, e);
	if (st != SKV_OK)
		return st;
	if (unit_set_init(&c, p) != SKV_OK) {
		unit_plan_close(p);
		msg_set(e, "skv merge: out of memory");
		return SKV_ENOMEM;
	}
	for (size_t i = 0; st == SKV_OK && i < set->n; i++)
		for (size_t r = 1; st == SKV_OK && r < set->in[i].f.nrec; r++) {
			const journal_rec *rec = &set->in[i].f.rec[r];
			uint64_t line, unit;
			unit_record_line(&line, &unit, rec->data, rec->len); /* checked by check_units */
			message why = {NULL};
			if (line == k && (st = unit_record_add(&c, p, rec->data, rec->len, &why)) != SKV_OK)
				msg_set(e, "skv merge: '%s': record %zu: %s", set->in[i].path, r, msg_text(&why));
			msg_free(&why);
		}
	/* wall_time_s of a merged run: the seconds its units took, summed */
	if (st == SKV_OK)
		st = shard_write(s, &c, p, c.busy_s, command, e);
	unit_set_free(&c);
	unit_plan_close(p);
	return st;
}

static int merge_run(const char *out, int nargs, char **args, const char *command, message *e)
{
	shard_set set = {NULL, 0};
	run_spec *specs = NULL;
	size_t n = 0;
	suite_units u = {0, 0, NULL, NULL, NULL, NULL};
	unsigned *shard = NULL;
	int st = SKV_OK;
	for (int i = 0; i < nargs && st == SKV_OK; i++)
		st = add_arg(&set, args[i], e);
	if (st == SKV_OK)
		st = check_set(&set, e);
	if (st == SKV_OK)
		st = load_specs(&specs, &n, &u, &set, out, e);
	if (st == SKV_OK && (!(shard = malloc((u.nunits + 1) * sizeof *shard)) ||
			     unit_partition(shard, u.work, u.nunits, set.in[0].h.n) != SKV_OK)) {
		msg_set(e, "skv merge: out of memory");
		st = SKV_ENOMEM;
	}
	if (st == SKV_OK)
		st = check_units(&set, &u, shard, e);
	/* Nothing is written before every check has passed. */
	for (size_t k = 0; k < n && st == SKV_OK; k++)
		if ((st = outdir_prepare(specs[k].out, e)) == SKV_OK)
			st = outdir_lock(specs[k].out, command, e);
	for (size_t k = 0; k < n && st == SKV_OK; k++)
		st = write_spec(&specs[k], k, &set, command, e);
	for (size_t k = 0; k < n; k++)
		spec_free(&specs[k]);
	free(specs), free(shard);
	suite_units_free(&u);
	set_free(&set);
	return st;
}

int merge_main(int argc, char **argv, const char *command)
{
	if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
		printf("usage: skv merge OUT SHARD_DIR...\n\n"
		       "Checks that the finished shards (each SHARD_DIR's shard-K-of-N.journal, or the files\n"
		       "themselves) are the shards 1..N of one run, every one once, written by the same skv from\n"
		       "the same suite and flags, and that together they hold every work unit exactly once;\n"
		       "then writes OUT/EXPERIMENT.csv, .md and .meta as `skv suite FILE --out=OUT` would have\n"
		       "(the CSV and the .md byte for byte; the .meta's command, date and wall time are the\n"
		       "merge's: its wall_time_s is the units' seconds, summed). When the suite's lines name\n"
		       "folders of their own, each line goes to OUT/ITS_FOLDER. Nothing is written if a check\n"
		       "fails.\n"
		       "exit status: 0 success, 1 an unreadable file or a failed write, 2 shards that do not\n"
		       "make one whole run (missing, given twice, foreign, unfinished or corrupt).\n");
		return 0;
	}
	if (argc < 2 || argv[0][0] == '-') {
		fprintf(stderr, "skv merge: %s (usage: skv merge OUT SHARD_DIR...)\n",
			argc < 1 ? "no output folder given" : argc < 2 ? "no shard folder given" : "unknown option");
		return cli_exit_status(SKV_EINVAL);
	}
	message e = {NULL};
	int st = merge_run(argv[0], argc - 1, argv + 1, command, &e);
	return st == SKV_OK ? 0 : cli_fail(&e, st);
}
