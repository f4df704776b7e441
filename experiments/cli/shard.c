/* shard.c - a suite's work units and their costs, the identity and header of its journals, starting or resuming a journal, the estimate, the files written from gathered units. */
#define _GNU_SOURCE /* asprintf, open_memstream */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/shard.h"

/* At most this many shards: far beyond any job array, small enough that a
 * per-shard table stays cheap. */
#define SHARD_MAX 1000000u

int shard_parse(shard_mode *m, const char *value, message *e)
{
	char *end = NULL;
	errno = 0;
	unsigned long k = strtoul(value, &end, 10), n = 0;
	int ok = end != value && *end == '/' && value[0] != '-' && value[0] != '+' && errno == 0;
	if (ok) {
		const char *b = end + 1;
		n = strtoul(b, &end, 10);
		ok = end != b && *end == '\0' && b[0] != '-' && b[0] != '+' && errno == 0;
	}
	if (!ok || n < 1 || n > SHARD_MAX || k < 1 || k > n) {
		msg_set(e, "skv: --shard=%s: expected K/N with 1 <= K <= N <= %u (shard K of N)", value, SHARD_MAX);
		return SKV_EINVAL;
	}
	m->k = (unsigned)k;
	m->n = (unsigned)n;
	return SKV_OK;
}

int shard_mode_flag(shard_mode *m, int argc, char **argv, int *i, message *e)
{
	const char *a = argv[*i];
	if (strcmp(a, "--resume") == 0 || strcmp(a, "--estimate") == 0) {
		*(a[2] == 'r' ? &m->resume : &m->estimate) = 1;
		return 1;
	}
	if (strncmp(a, "--shard=", 8) != 0 && strcmp(a, "--shard") != 0)
		return 0;
	const char *v = a[7] == '=' ? a + 8 : *i + 1 < argc ? argv[++*i] : "";
	return shard_parse(m, v, e) == SKV_OK ? 1 : -1;
}

int shard_run_args(shard_mode *m, char **source, char **rest, int *nrest, int argc, char **argv, message *e)
{
	size_t len;
	FILE *f = open_memstream(source, &len);
	int st = f ? SKV_OK : SKV_ENOMEM;
	const char *odd = NULL;
	*nrest = 0;
	if (f)
		fprintf(f, "run %s", argv[0]);
	for (int i = 1; i < argc && st == SKV_OK; i++) {
		const char *a = argv[i];
		const int mode = shard_mode_flag(m, argc, argv, &i, e);
		if (mode) {
			st = mode < 0 ? SKV_EINVAL : SKV_OK;
			continue;
		}
		rest[(*nrest)++] = argv[i];
		if (strncmp(a, "--out=", 6) == 0 || strcmp(a, "--out") == 0) {
			if (a[5] != '=' && i + 1 < argc)
				rest[(*nrest)++] = argv[++i];
			continue; /* where, not what: not in the journal */
		}
		if (!odd && strpbrk(a, " \t\r\n#"))
			odd = a;
		fprintf(f, " %s", a);
	}
	/* merge reads a shard's run back as a suite line */
	if (st == SKV_OK && m->n && odd) {
		msg_set(e, "skv: run --shard: the argument '%s' holds a blank or a '#', which a suite line cannot", odd);
		st = SKV_EINVAL;
	}
	if (f) {
		fputc('\n', f);
		if (fclose(f) != 0 && st == SKV_OK)
			st = SKV_ENOMEM;
	}
	if (st == SKV_ENOMEM)
		msg_set(e, "skv: out of memory");
	m->source_name = "skv run";
	m->source = *source;
	m->source_len = *source ? strlen(*source) : 0;
	return st;
}

int shard_file_name(char **path, const char *dir, unsigned k, unsigned n)
{
	return asprintf(path, "%s/shard-%u-of-%u.journal", dir, k, n) < 0 ? (*path = NULL, SKV_ENOMEM) : SKV_OK;
}

/* ------------------------------------------------------------------ units */

/* The text naming the run: what must agree for journals and shards to
 * belong together. Each spec by its reproducing flags (every parameter
 * that applies, --threads and --out aside: they change no number). */
static int make_identity(char **out, const run_spec *specs, size_t n, size_t nunits, unsigned nshards)
{
	size_t len;
	FILE *f = open_memstream(out, &len);
	if (!f)
		return SKV_ENOMEM;
	fprintf(f, "skv-journal 1\nskv_version %s\nshards %u\nunits %zu\n", skv_version(), nshards, nunits);
	int st = SKV_OK;
	for (size_t k = 0; k < n && st == SKV_OK; k++) {
		char *flags = NULL;
		st = spec_flags(&flags, &specs[k]);
		if (st == SKV_OK)
			fprintf(f, "run %s %s\n", specs[k].exp->name, flags);
		free(flags);
	}
	fputs("end\n", f);
	if (fclose(f) != 0 || st != SKV_OK) {
		free(*out);
		*out = NULL;
		return SKV_ENOMEM;
	}
	return SKV_OK;
}

int suite_units_plan(suite_units *u, const run_spec *specs, size_t n, unsigned nshards, message *e)
{
	memset(u, 0, sizeof *u);
	u->nspecs = n;
	u->unit0 = calloc(n + 1, sizeof *u->unit0);
	int st = u->unit0 ? SKV_OK : SKV_ENOMEM;
	for (size_t k = 0; k < n && st == SKV_OK; k++) {
		unit_plan *p = NULL;
		st = unit_plan_open(&p, &specs[k], e);
		if (st != SKV_OK)
			break;
		const size_t m = unit_count(p);
		double *w = realloc(u->work, (u->nunits + m + 1) * sizeof *w);
		if (w)
			u->work = w;
		double *t = w ? realloc(u->work_truth, (u->nunits + m + 1) * sizeof *t) : NULL;
		if (t)
			u->work_truth = t;
		st = w && t ? SKV_OK : SKV_ENOMEM;
		for (size_t i = 0; st == SKV_OK && i < m; i++) {
			unit_info ui;
			unit_describe(&ui, p, i);
			u->work[u->nunits + i] = ui.work;
			u->work_truth[u->nunits + i] = ui.work_truth;
		}
		unit_plan_close(p);
		u->nunits += m;
		u->unit0[k + 1] = u->nunits;
	}
	if (st == SKV_OK)
		st = make_identity(&u->identity, specs, n, u->nunits, nshards);
	if (st != SKV_OK) {
		if (st == SKV_ENOMEM)
			msg_set(e, "skv: out of memory planning the units");
		suite_units_free(u);
	}
	return st;
}

void suite_units_free(suite_units *u)
{
	free(u->unit0);
	free(u->work);
	free(u->work_truth);
	free(u->identity);
	memset(u, 0, sizeof *u);
}

size_t suite_units_spec(const suite_units *u, size_t g, size_t *unit)
{
	size_t k = 0;
	while (g >= u->unit0[k + 1])
		k++;
	*unit = g - u->unit0[k];
	return k;
}

/* ----------------------------------------------------------------- header */

/* The header record: the identity, then what this journal is (its shard)
 * and the suite's source, so that merge reads the very same specs back. */
static int make_header(char **out, size_t *len, const suite_units *u, const shard_mode *m)
{
	FILE *f = open_memstream(out, len);
	if (!f)
		return SKV_ENOMEM;
	fputs(u->identity, f);
	fprintf(f, "shard %u\nsource ", m->n ? m->k : 0);
	for (const char *c = m->source_name; *c; c++)
		fputc(*c == '\n' ? '?' : *c, f); /* a name, for messages only */
	fprintf(f, "\nargs %d\n", m->nargs);
	for (int i = 0; i < m->nargs; i++)
		fprintf(f, "arg %s\n", m->args[i]); /* parameter flags: no line breaks (refused by their parsers) */
	fprintf(f, "text %zu\n", m->source_len);
	fwrite(m->source, 1, m->source_len, f);
	return fclose(f) == 0 ? SKV_OK : SKV_ENOMEM;
}

/* The next line of [*p, end) without its '\n' (NULL when there is none). */
static const char *next_line(const char **p, const char *end, size_t *n)
{
	const char *s = *p, *nl = s < end ? memchr(s, '\n', (size_t)(end - s)) : NULL;
	if (!nl)
		return NULL;
	*n = (size_t)(nl - s);
	*p = nl + 1;
	return s;
}

/* A line "WORD NUMBER": the number, or -1. */
static long long field_num(const char *line, size_t n, const char *word)
{
	size_t w = strlen(word);
	if (n <= w + 1 || strncmp(line, word, w) != 0 || line[w] != ' ' || n - w - 1 > 18)
		return -1;
	long long v = 0;
	for (size_t i = w + 1; i < n; i++) {
		if (line[i] < '0' || line[i] > '9')
			return -1;
		v = 10 * v + (line[i] - '0');
	}
	return v;
}

static char *dup_field(const char *line, size_t n, size_t skip) { return strndup(line + skip, n - skip); }

int shard_header_parse(shard_header *h, const unsigned char *data, size_t len)
{
	memset(h, 0, sizeof *h);
	const char *p = (const char *)data, *end = p + len, *l;
	size_t n;
	long long v = -1, k = -1, a = -1, t = -1;
	if (!(l = next_line(&p, end, &n)) || n != 13 || memcmp(l, "skv-journal 1", 13) != 0)
		return SKV_EINVAL;
	while ((l = next_line(&p, end, &n)) && !(n == 3 && memcmp(l, "end", 3) == 0))
		if (field_num(l, n, "shards") >= 0)
			v = field_num(l, n, "shards");
	h->identity = (const char *)data;
	h->identity_len = (size_t)(p - (const char *)data);
	if (!l || v < 0 || v > SHARD_MAX || !(l = next_line(&p, end, &n)) || (k = field_num(l, n, "shard")) < 0 ||
	    k > v || (v > 0 && k == 0))
		return SKV_EINVAL;
	h->n = (unsigned)v, h->k = (unsigned)k;
	if (!(l = next_line(&p, end, &n)) || n < 7 || strncmp(l, "source ", 7) != 0 || !(h->source_name = dup_field(l, n, 7)) ||
	    !(l = next_line(&p, end, &n)) || (a = field_num(l, n, "args")) < 0 || a > 4096 ||
	    !(h->args = calloc((size_t)a + 1, sizeof *h->args)))
		goto bad;
	for (h->nargs = 0; h->nargs < a; h->nargs++)
		if (!(l = next_line(&p, end, &n)) || n < 4 || strncmp(l, "arg ", 4) != 0 ||
		    !(h->args[h->nargs] = dup_field(l, n, 4)))
			goto bad;
	if (!(l = next_line(&p, end, &n)) || (t = field_num(l, n, "text")) < 0 || (size_t)(end - p) != (size_t)t ||
	    !(h->source = malloc((size_t)t + 1)))
		goto bad;
	memcpy(h->source, p, (size_t)t);
	h->source[t] = '\0';
	h->source_len = (size_t)t;
	return SKV_OK;
bad:
	shard_header_free(h);
	return SKV_EINVAL;
}

void shard_header_free(shard_header *h)
{
	for (int i = 0; h->args && i < h->nargs; i++)
		free(h->args[i]);
	free(h->args);
	free(h->source_name);
	free(h->source);
	memset(h, 0, sizeof *h);
}

/* A line quoted around byte c: its first two words, then from the start
 * of the word holding c, at most 60 bytes. */
static void quote_at(char *buf, size_t n, const char *l, size_t len, size_t c)
{
	size_t w = 0, head = 0, spaces = 0;
	while (head < len && (l[head] != ' ' || ++spaces < 2))
		head++;
	for (w = c < len ? c : len; w > 0 && l[w - 1] != ' ';)
		w--;
	size_t tail = len - w > 60 ? 60 : len - w;
	if (w <= head)
		snprintf(buf, n, "%.*s%s", (int)(len > 80 ? 80 : len), l, len > 80 ? "..." : "");
	else
		snprintf(buf, n, "%.*s ...%s%.*s%s", (int)head, l, w > head + 1 ? " " : "", (int)tail, l + w,
			 w + tail < len ? "..." : "");
}

/* The first line where two texts differ, quoted in both around where. */
static void first_difference(char *buf, size_t n, const char *a, size_t la, const char *b, size_t lb)
{
	const char *pa = a, *pb = b, *ea = a + la, *eb = b + lb, *x, *y;
	size_t nx = 0, ny = 0, c = 0;
	do {
		x = next_line(&pa, ea, &nx);
		y = next_line(&pb, eb, &ny);
	} while (x && y && nx == ny && memcmp(x, y, nx) == 0);
	while (x && y && c < nx && c < ny && x[c] == y[c])
		c++;
	char qa[160] = "", qb[160] = "";
	if (x)
		quote_at(qa, sizeof qa, x, nx, c);
	if (y)
		quote_at(qb, sizeof qb, y, ny, c);
	snprintf(buf, n, "it has '%s', not '%s'", qa, qb);
}

const char *shard_foreign(char *buf, size_t n, const shard_header *h, const char *identity, size_t len)
{
	if (h->identity_len == len && memcmp(h->identity, identity, len) == 0)
		return NULL;
	first_difference(buf, n, h->identity, h->identity_len, identity, len);
	return buf;
}

int shard_journal_start(journal *j, journal_file *old, const char *path, const suite_units *u, const shard_mode *m,
			message *e)
{
	memset(old, 0, sizeof *old);
	if (m->resume && access(path, F_OK) == 0) {
		int st = journal_read(old, path, 0, e);
		if (st != SKV_OK)
			return st;
		shard_header h;
		char why[256];
		const char *w = NULL;
		if (shard_header_parse(&h, old->rec[0].data, old->rec[0].len) != SKV_OK)
			w = "its header is malformed";
		else if (!(w = shard_foreign(why, sizeof why, &h, u->identity, strlen(u->identity))) && h.k != (m->n ? m->k : 0)) {
			char a[40] = "a whole run's", b[40] = "a whole run";
			if (h.k)
				snprintf(a, sizeof a, "shard %u/%u's", h.k, h.n);
			if (m->n)
				snprintf(b, sizeof b, "shard %u/%u", m->k, m->n);
			snprintf(why, sizeof why, "it is %s, this is %s", a, b);
			w = why;
		}
		shard_header_free(&h);
		if (w) {
			msg_set(e, "skv: the journal '%s' belongs to another run (%s); remove it, or run without --resume", path, w);
			journal_file_free(old);
			return SKV_EINVAL;
		}
		if (old->torn)
			fprintf(stderr, "skv: note: the journal '%s' ended in a cut record (an interrupted write); its unit "
					"runs again\n", path);
		return journal_continue(j, path, old->good, e);
	}
	if (m->resume)
		fprintf(stderr, "skv: note: no journal '%s' to resume from: the run starts from the beginning\n", path);
	char *hdr = NULL;
	size_t len = 0;
	if (make_header(&hdr, &len, u, m) != SKV_OK) {
		msg_set(e, "skv: out of memory");
		return SKV_ENOMEM;
	}
	int st = journal_create(j, path, hdr, len, e);
	free(hdr);
	return st;
}

/* --------------------------------------------------------------- estimate */

void shard_time(char *buf, size_t n, double s)
{
	if (s < 120)
		snprintf(buf, n, "%.1f s", s);
	else if (s < 7200)
		snprintf(buf, n, "%.1f min", s / 60);
	else
		snprintf(buf, n, "%.1f h", s / 3600);
}

void shard_estimate(FILE *f, const suite_units *u, const unsigned *shard, const shard_mode *m, int threads)
{
	char a[32], b[32];
	double total = 0;
	for (size_t g = 0; g < u->nunits; g++)
		total += unit_seconds(u->work[g]);
	shard_time(a, sizeof a, total);
	shard_time(b, sizeof b, total / (threads > 0 ? threads : 1));
	fprintf(f, "skv: %zu work unit%s, estimated %s of CPU time (%s on %d thread%s)\n", u->nunits,
		u->nunits == 1 ? "" : "s", a, b, threads, threads == 1 ? "" : "s");
	if (!m->n || !shard)
		return;
	double *load = calloc(m->n, sizeof *load), lo = HUGE_VAL, hi = 0;
	size_t *cnt = calloc(m->n, sizeof *cnt);
	for (size_t g = 0; load && cnt && g < u->nunits; g++)
		load[shard[g]] += unit_seconds(u->work[g]), cnt[shard[g]]++;
	for (unsigned k = 0; load && cnt && k < m->n; k++)
		lo = load[k] < lo ? load[k] : lo, hi = load[k] > hi ? load[k] : hi;
	if (load && cnt) {
		shard_time(a, sizeof a, load[m->k - 1]);
		fprintf(f, "skv: shard %u/%u: %zu unit%s, estimated %s of CPU time; every shard's:", m->k, m->n, cnt[m->k - 1],
			cnt[m->k - 1] == 1 ? "" : "s", a);
		for (unsigned k = 0; k < m->n && k < 32; k++) {
			shard_time(a, sizeof a, load[k]);
			fprintf(f, "%s %u/%u %s", k ? "," : "", k + 1, m->n, a);
		}
		shard_time(a, sizeof a, lo);
		shard_time(b, sizeof b, hi);
		if (m->n > 32)
			fprintf(f, ", ... (from %s to %s)", a, b);
		fputc('\n', f);
	}
	free(load);
	free(cnt);
}

void shard_estimate_lines(FILE *f, const suite_units *u, const run_spec *specs)
{
	for (size_t k = 0; k < u->nspecs; k++) {
		double all = 0, truth = 0, big = 0;
		for (size_t g = u->unit0[k]; g < u->unit0[k + 1]; g++) {
			all += unit_seconds(u->work[g]), truth += unit_seconds(u->work_truth[g]);
			big = unit_seconds(u->work[g]) > big ? unit_seconds(u->work[g]) : big;
		}
		fprintf(f, "skv: line %zu (%s): %zu units, estimated %.4g s: problems and truths %.4g s, kernel runs and "
			   "rows %.4g s; the largest unit %.4g s\n",
			k + 1, specs[k].exp->name, u->unit0[k + 1] - u->unit0[k], all, truth, all - truth, big);
	}
}

/* ----------------------------------------------------------------- output */

int shard_write(const run_spec *s, unit_set *c, const unit_plan *p, double wall_s, const char *command, message *e)
{
	sweep_result r;
	unit_set_result(&r, c, p, wall_s);
	int st = output_write(s, &r, command, e);
	if (st == SKV_OK) {
		fputs("skv: ", stderr);
		fputs(s->exp->name, stderr);
		fputs(": seed ", stderr);
		spec_seed_list(stderr, s);
		fprintf(stderr, ", %zu point%s x %llu trial%s, %.1f s -> %s/%s.csv\n", r.npoints, r.npoints == 1 ? "" : "s",
			(unsigned long long)r.trials, r.trials == 1 ? "" : "s", r.wall_s,
			s->shown_out ? s->shown_out : s->out, s->exp->name);
	}
	sweep_result_free(&r);
	return st;
}
