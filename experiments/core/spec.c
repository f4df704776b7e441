/* spec.c - run specs: defaults, command-line flags, value lists, cross-parameter checks and the point order. */
#include <omp.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "core/core.h"

/* Upper bound on points x trials: the engine keeps a few dozen bytes per row
 * and a key per row for its sharing, so a million rows stay well under a
 * gigabyte; a larger sweep is almost certainly a typo. */
static const size_t max_rows = 1000000;

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

static int nomem(message *e)
{
	msg_set(e, "skv: out of memory");
	return SKV_EIO;
}

void spec_free(run_spec *s)
{
	if (!s)
		return;
	for (int i = 0; i < NPARAMS; i++)
		free(s->list[i].v);
	free(s->out);
	free(s->shown_out);
	memset(s, 0, sizeof *s);
}

int spec_applies(const run_spec *s, int id)
{
	return (params[id].kinds & s->exp->kind) != 0;
}

/* A sorted copy of a list, to find a value that appears twice. Reals
 * compare as numbers (0.5 and .5 are one value; so are 0 and -0, which would
 * give two rows of the same computation). */
static int cmp_value(const void *a, const void *b)
{
	const param_value *x = a, *y = b;
	if (x->u != y->u)
		return x->u < y->u ? -1 : 1;
	return (x->r > y->r) - (x->r < y->r);
}

/* Whether value list v[0..n) of parameter id holds a value twice; the
 * message names the flag, the list and the value. O(n log n). */
static int repeated_value(message *e, int id, const param_value *v, size_t n, const char *list)
{
	if (n < 2)
		return 0;
	param_value *t = malloc(n * sizeof *t);
	if (!t)
		return 0; /* the repeat then shows as duplicate rows: not worth failing on */
	memcpy(t, v, n * sizeof *t);
	qsort(t, n, sizeof *t, cmp_value);
	size_t i = 1;
	while (i < n && cmp_value(&t[i - 1], &t[i]) != 0)
		i++;
	if (i < n) {
		char val[64];
		param_format(val, sizeof val, id, t[i]);
		msg_set(e, "skv: --%s=%s lists the value %s twice (each point would run twice)",
			       params[id].flag, list, val);
	}
	free(t);
	return i < n;
}

int spec_set(run_spec *s, const char *flag, const char *value, int given, message *e)
{
	int id = param_find(flag);
	if (id < 0) {
		msg_set(e, "skv: unknown parameter '--%s' (see skv run --help)", flag);
		return SKV_EINVAL;
	}
	const param_def *p = &params[id];
	if (!spec_applies(s, id)) {
		msg_set(e, "skv: --%s does not apply to experiment %s", flag, s->exp->name);
		return SKV_EINVAL;
	}
	size_t n = 1;
	for (const char *c = value; *c; c++)
		n += *c == ',';
	if (p->single && n > 1) {
		msg_set(e, "skv: --%s takes one value, not a list ('%s')", flag, value);
		return SKV_EINVAL;
	}
	param_value *v = malloc(n * sizeof *v);
	char *buf = dup_str(value);
	if (!v || !buf) {
		free(v);
		free(buf);
		return nomem(e);
	}
	char *tok = buf;
	for (size_t i = 0; i < n; i++) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		int st = SKV_OK;
		if (!*tok) {
			msg_set(e, "skv: empty value in --%s=%s", flag, value);
			st = SKV_EINVAL;
		} else {
			st = param_parse(&v[i], id, tok, e);
		}
		if (st != SKV_OK) {
			free(v);
			free(buf);
			return st;
		}
		tok = comma ? comma + 1 : tok + strlen(tok);
	}
	free(buf);
	if (repeated_value(e, id, v, n, value)) {
		free(v);
		return SKV_EINVAL;
	}
	free(s->list[id].v);
	s->list[id].v = v;
	s->list[id].n = n;
	s->given[id] = given ? 1 : 0;
	return SKV_OK;
}

int spec_set_values(run_spec *s, int id, const param_value *v, size_t n, message *e)
{
	param_value *c = n ? malloc(n * sizeof *c) : NULL;
	if (!c)
		return n ? nomem(e) : SKV_EINVAL;
	memcpy(c, v, n * sizeof *c);
	free(s->list[id].v);
	s->list[id].v = c;
	s->list[id].n = n;
	return SKV_OK;
}

int spec_copy(run_spec *d, const run_spec *s, message *e)
{
	run_spec t;
	memset(&t, 0, sizeof t);
	t.exp = s->exp;
	memcpy(t.given, s->given, sizeof t.given);
	int st = SKV_OK;
	for (int i = 0; i < NPARAMS && st == SKV_OK; i++)
		st = spec_set_values(&t, i, s->list[i].v, s->list[i].n, e);
	if (st == SKV_OK && ((s->out && !(t.out = dup_str(s->out))) || (s->shown_out && !(t.shown_out = dup_str(s->shown_out)))))
		st = nomem(e);
	if (st != SKV_OK) {
		spec_free(&t);
		return st;
	}
	*d = t;
	return SKV_OK;
}

static int set_out(run_spec *s, const char *dir, message *e)
{
	if (!*dir) {
		msg_set(e, "skv: --out needs a folder name");
		return SKV_EINVAL;
	}
	if (strpbrk(dir, "\n\r")) {
		msg_set(e, "skv: --out='%s' holds a line break (the .meta and REPORT.md name the folder on one line)",
			       dir);
		return SKV_EINVAL;
	}
	char *d = dup_str(dir);
	if (!d)
		return nomem(e);
	free(s->out);
	s->out = d;
	return SKV_OK;
}

/* Tokens are --flag=VALUE or --flag VALUE; --out is the output folder. A
 * flag given twice in one set of tokens is refused (which one wins would be
 * a guess); a later set (the suite's command line over a line of its file)
 * overrides an earlier one. */
static int apply_args(run_spec *s, int argc, char **argv, int given, message *e)
{
	const char *seen[NPARAMS + 1] = {NULL}; /* the value each flag had, [NPARAMS]: --out */
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--", 2) != 0 || !a[2]) {
			msg_set(e, "skv: unexpected argument '%s' (flags are --name=value)", a);
			return SKV_EINVAL;
		}
		char *name = dup_str(a + 2);
		if (!name)
			return nomem(e);
		char *eq = strchr(name, '=');
		const char *value;
		if (eq) {
			*eq = '\0';
			value = a + 2 + (eq - name) + 1; /* in argv, which outlives this loop */
		} else if (strcmp(name, "out") != 0 && param_find(name) < 0) {
			value = ""; /* reported as an unknown parameter below */
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			msg_set(e, "skv: --%s needs a value (--%s=VALUE)", name, name);
			free(name);
			return SKV_EINVAL;
		}
		const int id = strcmp(name, "out") == 0 ? NPARAMS : param_find(name);
		if (id >= 0 && seen[id]) {
			msg_set(e, "skv: --%s is given twice (--%s=%s and --%s=%s); give one list instead", name,
				       name, seen[id], name, value);
			free(name);
			return SKV_EINVAL;
		}
		if (id >= 0)
			seen[id] = value;
		int st = id == NPARAMS ? set_out(s, value, e) : spec_set(s, name, value, given, e);
		free(name);
		if (st != SKV_OK)
			return st;
	}
	return SKV_OK;
}

/* The parameters a preset fixes (spec_values). */
static const int preset_fields[] = {
	P_INPUT,  P_COMPUTE, P_P,     P_LSE_BASE,      P_PARTIAL,
	P_LSE,    P_COMBINE, P_OUTPUT, P_MERGE,         P_ORDER,
	P_EMPTY,  P_MERGE_THREADS, P_ROUND_STATES,
};

/* When a preset is swept, a field it fixes that the user did not give is
 * the preset's: its list (an experiment's default sweep) would only repeat
 * the same rows, so it shrinks to one value. */
static void presets_collapse(run_spec *s)
{
	const param_list *pl = &s->list[P_PRESET];
	int any = 0;
	for (size_t i = 0; i < pl->n; i++)
		any |= pl->v[i].u != 0;
	if (!any)
		return;
	for (size_t k = 0; k < sizeof preset_fields / sizeof preset_fields[0]; k++)
		if (!s->given[preset_fields[k]])
			s->list[preset_fields[k]].n = 1;
}

int spec_args(run_spec *s, int argc, char **argv, message *e)
{
	int st = apply_args(s, argc, argv, 1, e);
	if (st == SKV_OK)
		presets_collapse(s);
	return st;
}

/* Splits a defaults string on blanks and applies it as not-given flags. */
static int apply_defaults(run_spec *s, const char *flags, message *e)
{
	char *buf = dup_str(flags);
	if (!buf)
		return nomem(e);
	size_t n = 0;
	for (char *c = buf; *c; c++)
		n += *c != ' ' && (c == buf || c[-1] == ' ');
	char **argv = malloc((n ? n : 1) * sizeof *argv);
	if (!argv) {
		free(buf);
		return nomem(e);
	}
	int argc = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	int st = apply_args(s, argc, argv, 0, e);
	free(argv);
	free(buf);
	return st;
}

int spec_init(run_spec *s, const exp_def *x, message *e)
{
	run_spec t;
	memset(&t, 0, sizeof t);
	t.exp = x;
	if (!x) {
		msg_set(e, "skv: no experiment");
		return SKV_EINVAL;
	}
	/* The table's defaults fill every list, also for parameters that do not
	 * apply (they are then never read), so every point is complete. */
	for (int i = 0; i < NPARAMS; i++) {
		param_value v;
		int st = param_parse(&v, i, params[i].def, e);
		t.list[i].v = st == SKV_OK ? malloc(sizeof v) : NULL;
		if (!t.list[i].v) {
			spec_free(&t);
			return st == SKV_OK ? nomem(e) : st;
		}
		t.list[i].v[0] = v;
		t.list[i].n = 1;
	}
	int st = set_out(&t, "results", e);
	if (st == SKV_OK)
		st = apply_defaults(&t, t.exp->defaults, e);
	if (st == SKV_OK)
		presets_collapse(&t);
	if (st != SKV_OK) {
		spec_free(&t);
		return st;
	}
	*s = t;
	return SKV_OK;
}

size_t spec_npoints(const run_spec *s)
{
	size_t n = 1;
	for (int i = 0; i < NPARAMS; i++) {
		size_t k = s->list[i].n;
		if (k == 0 || n > SIZE_MAX / k)
			return 0;
		n *= k;
	}
	return n;
}

uint64_t spec_trials(const run_spec *s) { return s->list[P_TRIALS].v[0].u; }

void spec_seed_list(FILE *f, const run_spec *s)
{
	const param_list *l = &s->list[P_SEED];
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)l->v[i].u);
}

void spec_point(const run_spec *s, size_t pt, param_value vals[NPARAMS])
{
	for (int i = NPARAMS - 1; i >= 0; i--) {
		size_t k = s->list[i].n;
		vals[i] = s->list[i].v[pt % k];
		pt /= k;
	}
}

void spec_values(const run_spec *s, size_t pt, param_value vals[NPARAMS])
{
	spec_point(s, pt, vals);
	/* Presets resolve here, into parameter values: the preset's field for
	 * every parameter the user did not give (s->given), so the engine, its
	 * sharing keys and the CSV all see what ran. An input format given by
	 * the user is the preset's input (fa2 on fp16 tensors), and the stages
	 * that follow the input follow it. */
	const skv_preset *p = vals[P_PRESET].u ? skv_preset_at(vals[P_PRESET].u - 1) : NULL;
	if (!p)
		return;
	skv_format in = s->given[P_INPUT] ? (skv_format)vals[P_INPUT].u : p->cfg.input;
	skv_config c;
	skv_merge_spec m;
	if (skv_preset_resolve(&c, &m, p, in) != SKV_OK)
		return;
	const uint64_t fixed[NPARAMS] = {
		[P_INPUT] = c.input,	       [P_COMPUTE] = c.compute, [P_P] = c.p,
		[P_LSE_BASE] = c.base,	       [P_PARTIAL] = c.partial, [P_LSE] = c.lse,
		[P_COMBINE] = c.combine,       [P_OUTPUT] = c.output,   [P_MERGE] = m.merge,
		[P_ORDER] = m.order,	       [P_EMPTY] = m.empty,
		[P_MERGE_THREADS] = m.threads, [P_ROUND_STATES] = (uint64_t)m.round_states,
	};
	for (size_t k = 0; k < sizeof preset_fields / sizeof preset_fields[0]; k++)
		if (!s->given[preset_fields[k]])
			vals[preset_fields[k]].u = fixed[preset_fields[k]];
}

/* Whether the library's merge accepts this (merge, order, empty, threads):
 * a dry run on two one-element splits, so an option the library does not
 * implement yet is refused before any computing. */
static int merge_supported(skv_merge m, skv_order o, skv_empty em, uint64_t threads)
{
	skv_partials sp;
	if (skv_partials_init(&sp, 2, 1) != SKV_OK)
		return -1;
	for (size_t i = 0; i < 2; i++) {
		sp.o[i] = sp.acc[i] = (double)(i + 1);
		sp.lse[i] = sp.m[i] = 0.0;
		sp.l[i] = 1.0;
	}
	skv_merge_spec ms = skv_merge_spec_default();
	ms.merge = m;
	ms.order = o;
	ms.empty = em;
	ms.threads = (unsigned)threads;
	skv_config cfg = skv_config_uniform(SKV_FP64);
	double out, lse;
	int st = skv_merge_run(&out, &lse, &sp, &ms, &cfg);
	skv_partials_free(&sp);
	return st == SKV_OK ? 1 : st == SKV_ENOMEM ? -1 : 0;
}

/* Threads and memory, before any work: --threads at most 4 a core (64 at
 * least), and a run whose estimated peak memory exceeds the machine's
 * physical memory refused, with the estimate (and its CPU time) in the
 * message, as recommend refuses what cannot fit. */
static int check_resources(const run_spec *s, message *e)
{
	const int procs = omp_get_num_procs();
	const uint64_t cap = procs * 4 > 64 ? (uint64_t)procs * 4 : 64;
	const uint64_t th = s->list[P_THREADS].v[0].u;
	if (th > cap) {
		msg_set(e, "skv: --threads=%llu is more than 4 per core (this machine has %d core%s: at most %llu)",
			       (unsigned long long)th, procs, procs == 1 ? "" : "s", (unsigned long long)cap);
		return SKV_EINVAL;
	}
	double bytes, cpu;
	if (sweep_estimate(&bytes, &cpu, s, th ? (int)th : omp_get_max_threads()) != SKV_OK)
		return nomem(e);
	const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	const double ram = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
	if (ram > 0 && bytes > ram) {
		msg_set(e, "skv: %s needs about %.3g GiB of memory at its largest point, more than this machine's %.3g "
				  "GiB (and about %.3g CPU hours); lower --ctx, --head-dim or --splits",
			       s->exp->name, bytes / 1073741824.0, ram / 1073741824.0, cpu / 3600);
		return SKV_EINVAL;
	}
	return SKV_OK;
}

/* Layout fixed needs the split size (recommend's) and a count that fits it:
 * S = ceil(ctx / size) for every ctx. */
static int fixed_mismatch(const run_spec *s, uint64_t S, message *e)
{
	const uint64_t size = s->list[P_SPLIT_SIZE].v[0].u;
	if (!spec_applies(s, P_SPLIT_SIZE) || size == 0) {
		msg_set(e, "skv: --layout=fixed needs --split-size (the fixed-size option of skv recommend)");
		return 1;
	}
	const param_list *ctx = &s->list[P_CTX];
	for (size_t i = 0; i < ctx->n; i++) {
		const uint64_t want = ctx->v[i].u / size + (ctx->v[i].u % size != 0);
		if (S != want) {
			msg_set(e, "skv: --layout=fixed with --split-size=%llu and --ctx=%llu takes --splits=%llu, not %llu",
				(unsigned long long)size, (unsigned long long)ctx->v[i].u, (unsigned long long)want,
				(unsigned long long)S);
			return 1;
		}
	}
	return 0;
}

int spec_check(const run_spec *s, message *e)
{
	const param_list *ctx = &s->list[P_CTX], *sp = &s->list[P_SPLITS];
	if (s->exp->kind != KIND_ONLINE) { /* split rows: run experiments and recommend */
		for (size_t i = 0; i < sp->n; i++)
			for (size_t j = 0; j < ctx->n; j++)
				if (sp->v[i].u > ctx->v[j].u) {
					msg_set(e, "skv: --splits=%llu is greater than --ctx=%llu",
						 (unsigned long long)sp->v[i].u, (unsigned long long)ctx->v[j].u);
					return SKV_EINVAL;
				}
		const param_list *ll = &s->list[P_LAYOUT];
		for (size_t i = 0; i < ll->n; i++)
			for (size_t j = 0; j < sp->n; j++) {
				layout_id lay = (layout_id)ll->v[i].u;
				if (lay == LAYOUT_FIXED && fixed_mismatch(s, sp->v[j].u, e))
					return SKV_EINVAL;
				if (lay == LAYOUT_SYSTEM && !spec_applies(s, P_SYSTEM)) {
					msg_set(e, "skv: --layout=system is skv recommend's (it cuts the context as "
						   "--system does)");
					return SKV_EINVAL;
				}
				if (sp->v[j].u < layout_min_splits(lay)) {
					char name[32];
					param_format(name, sizeof name, P_LAYOUT, ll->v[i]);
					msg_set(e, "skv: --layout=%s needs at least %zu splits, not --splits=%llu", name,
						       layout_min_splits(lay), (unsigned long long)sp->v[j].u);
					return SKV_EINVAL;
				}
			}
		const param_list *lm = &s->list[P_MERGE], *lo = &s->list[P_ORDER];
		const param_list *le = &s->list[P_EMPTY], *lt = &s->list[P_MERGE_THREADS];
		for (size_t a = 0; a < lm->n; a++)
			for (size_t b = 0; b < lo->n; b++)
				for (size_t c = 0; c < le->n; c++)
					for (size_t d = 0; d < lt->n; d++) {
						skv_merge m = (skv_merge)lm->v[a].u;
						skv_order o = (skv_order)lo->v[b].u;
						skv_empty em = (skv_empty)le->v[c].u;
						int ok = merge_supported(m, o, em, lt->v[d].u);
						if (ok < 0)
							return nomem(e);
						if (!ok) {
							msg_set(e, "skv: --merge=%s --order=%s --empty=%s is not supported "
								 "by this build of the library",
								 skv_merge_name(m), skv_order_name(o), skv_empty_name(em));
							return SKV_EINVAL;
						}
					}
	}
	size_t np = spec_npoints(s);
	uint64_t tr = spec_trials(s);
	if (np == 0 || tr > max_rows || np > max_rows / tr) {
		msg_set(e, "skv: the sweep is too large (points x trials above %zu rows); shorten a list", max_rows);
		return SKV_EINVAL;
	}
	return check_resources(s, e);
}

/* Appends to a growing string; returns 0 when out of memory. */
static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);
	if (*len + n + 1 > *cap) {
		size_t c = (*cap ? *cap : 64);
		while (c < *len + n + 1)
			c *= 2;
		char *b = realloc(*buf, c);
		if (!b)
			return 0;
		*buf = b;
		*cap = c;
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return 1;
}

/* Whether some point of the spec runs a preset. */
static int preset_swept(const run_spec *s)
{
	const param_list *pl = &s->list[P_PRESET];
	for (size_t i = 0; i < pl->n; i++)
		if (pl->v[i].u != 0)
			return 1;
	return 0;
}

static int is_preset_field(int id)
{
	for (size_t k = 0; k < sizeof preset_fields / sizeof preset_fields[0]; k++)
		if (preset_fields[k] == id)
			return 1;
	return 0;
}

/* Every applicable parameter with its list, so the command reproduces the
 * run even if an experiment's defaults change later, except a field a
 * swept preset fixes that the user did not set: written out, it would
 * become the user's and override the preset (the rerun would measure
 * another configuration). Those come back from the preset itself. */
int spec_flags(char **out, const run_spec *s)
{
	char *buf = NULL, val[64];
	size_t len = 0, cap = 0;
	int ok = append(&buf, &len, &cap, "");
	const int presets = preset_swept(s);
	for (int i = 0; ok && i < NPARAMS; i++) {
		if (!spec_applies(s, i) || !params[i].column)
			continue;
		if (presets && is_preset_field(i) && !s->given[i])
			continue;
		ok = append(&buf, &len, &cap, len ? " --" : "--") && append(&buf, &len, &cap, params[i].flag) &&
		     append(&buf, &len, &cap, "=");
		for (size_t k = 0; ok && k < s->list[i].n; k++) {
			param_format(val, sizeof val, i, s->list[i].v[k]);
			ok = (k == 0 || append(&buf, &len, &cap, ",")) && append(&buf, &len, &cap, val);
		}
	}
	if (!ok) {
		free(buf);
		return SKV_ENOMEM;
	}
	*out = buf;
	return SKV_OK;
}
