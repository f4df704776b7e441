/* spec.c - run specs: defaults, command-line flags, value lists, cross-parameter checks and the point order. */
#include <omp.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "app.h"

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

static int nomem(skv_app_error *e)
{
	skv_app_errorf(e, "skv: out of memory");
	return SKV_APP_EXIT_RUNTIME;
}

void skv_app_spec_free(skv_app_spec *s)
{
	if (!s)
		return;
	for (int i = 0; i < SKV_APP_NPARAMS; i++)
		free(s->list[i].v);
	free(s->out);
	free(s->shown_out);
	memset(s, 0, sizeof *s);
}

int skv_app_spec_applies(const skv_app_spec *s, int id)
{
	return (skv_app_params[id].kinds & s->exp->kind) != 0;
}

/* A sorted copy of a list, to find a value that appears twice. Reals
 * compare as numbers (0.5 and .5 are one value; so are 0 and -0, which would
 * give two rows of the same computation). */
static int cmp_value(const void *a, const void *b)
{
	const skv_app_value *x = a, *y = b;
	if (x->u != y->u)
		return x->u < y->u ? -1 : 1;
	return (x->r > y->r) - (x->r < y->r);
}

/* Whether value list v[0..n) of parameter id holds a value twice; the
 * message names the flag, the list and the value. O(n log n). */
static int repeated_value(skv_app_error *e, int id, const skv_app_value *v, size_t n, const char *list)
{
	if (n < 2)
		return 0;
	skv_app_value *t = malloc(n * sizeof *t);
	if (!t)
		return 0; /* the repeat then shows as duplicate rows: not worth failing on */
	memcpy(t, v, n * sizeof *t);
	qsort(t, n, sizeof *t, cmp_value);
	size_t i = 1;
	while (i < n && cmp_value(&t[i - 1], &t[i]) != 0)
		i++;
	if (i < n) {
		char val[64];
		skv_app_value_format(val, sizeof val, id, t[i]);
		skv_app_errorf(e, "skv: --%s=%s lists the value %s twice (each point would run twice)",
			       skv_app_params[id].flag, list, val);
	}
	free(t);
	return i < n;
}

int skv_app_spec_set(skv_app_spec *s, const char *flag, const char *value, int given, skv_app_error *e)
{
	int id = skv_app_param_find(flag);
	if (id < 0) {
		skv_app_errorf(e, "skv: unknown parameter '--%s' (see skv run --help)", flag);
		return SKV_APP_EXIT_USAGE;
	}
	const skv_app_param *p = &skv_app_params[id];
	if (!skv_app_spec_applies(s, id)) {
		skv_app_errorf(e, "skv: --%s does not apply to experiment %s", flag, s->exp->name);
		return SKV_APP_EXIT_USAGE;
	}
	size_t n = 1;
	for (const char *c = value; *c; c++)
		n += *c == ',';
	if (p->single && n > 1) {
		skv_app_errorf(e, "skv: --%s takes one value, not a list ('%s')", flag, value);
		return SKV_APP_EXIT_USAGE;
	}
	skv_app_value *v = malloc(n * sizeof *v);
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
		int st = SKV_APP_EXIT_OK;
		if (!*tok) {
			skv_app_errorf(e, "skv: empty value in --%s=%s", flag, value);
			st = SKV_APP_EXIT_USAGE;
		} else {
			st = skv_app_value_parse(&v[i], id, tok, e);
		}
		if (st != SKV_APP_EXIT_OK) {
			free(v);
			free(buf);
			return st;
		}
		tok = comma ? comma + 1 : tok + strlen(tok);
	}
	free(buf);
	if (repeated_value(e, id, v, n, value)) {
		free(v);
		return SKV_APP_EXIT_USAGE;
	}
	free(s->list[id].v);
	s->list[id].v = v;
	s->list[id].n = n;
	s->given[id] = given ? 1 : 0;
	return SKV_APP_EXIT_OK;
}

static int set_out(skv_app_spec *s, const char *dir, skv_app_error *e)
{
	if (!*dir) {
		skv_app_errorf(e, "skv: --out needs a folder name");
		return SKV_APP_EXIT_USAGE;
	}
	if (strpbrk(dir, "\n\r")) {
		skv_app_errorf(e, "skv: --out='%s' holds a line break (the .meta and REPORT.md name the folder on one line)",
			       dir);
		return SKV_APP_EXIT_USAGE;
	}
	char *d = dup_str(dir);
	if (!d)
		return nomem(e);
	free(s->out);
	s->out = d;
	return SKV_APP_EXIT_OK;
}

/* Tokens are --flag=VALUE or --flag VALUE; --out is the output folder. A
 * flag given twice in one set of tokens is refused (which one wins would be
 * a guess); a later set (the suite's command line over a line of its file)
 * overrides an earlier one. */
static int apply_args(skv_app_spec *s, int argc, char **argv, int given, skv_app_error *e)
{
	const char *seen[SKV_APP_NPARAMS + 1] = {NULL}; /* the value each flag had, [NPARAMS]: --out */
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--", 2) != 0 || !a[2]) {
			skv_app_errorf(e, "skv: unexpected argument '%s' (flags are --name=value)", a);
			return SKV_APP_EXIT_USAGE;
		}
		char *name = dup_str(a + 2);
		if (!name)
			return nomem(e);
		char *eq = strchr(name, '=');
		const char *value;
		if (eq) {
			*eq = '\0';
			value = a + 2 + (eq - name) + 1; /* in argv, which outlives this loop */
		} else if (strcmp(name, "out") != 0 && skv_app_param_find(name) < 0) {
			value = ""; /* reported as an unknown parameter below */
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			skv_app_errorf(e, "skv: --%s needs a value (--%s=VALUE)", name, name);
			free(name);
			return SKV_APP_EXIT_USAGE;
		}
		const int id = strcmp(name, "out") == 0 ? SKV_APP_NPARAMS : skv_app_param_find(name);
		if (id >= 0 && seen[id]) {
			skv_app_errorf(e, "skv: --%s is given twice (--%s=%s and --%s=%s); give one list instead", name,
				       name, seen[id], name, value);
			free(name);
			return SKV_APP_EXIT_USAGE;
		}
		if (id >= 0)
			seen[id] = value;
		int st = id == SKV_APP_NPARAMS ? set_out(s, value, e) : skv_app_spec_set(s, name, value, given, e);
		free(name);
		if (st != SKV_APP_EXIT_OK)
			return st;
	}
	return SKV_APP_EXIT_OK;
}

/* The parameters a preset fixes (skv_app_spec_values). */
static const int preset_fields[] = {
	SKV_APP_P_INPUT,  SKV_APP_P_COMPUTE, SKV_APP_P_P,     SKV_APP_P_LSE_BASE,      SKV_APP_P_PARTIAL,
	SKV_APP_P_LSE,    SKV_APP_P_COMBINE, SKV_APP_P_OUTPUT, SKV_APP_P_MERGE,         SKV_APP_P_ORDER,
	SKV_APP_P_EMPTY,  SKV_APP_P_MERGE_THREADS, SKV_APP_P_ROUND_STATES,
};

/* When a preset is swept, a field it fixes that the user did not give is
 * the preset's: its list (an experiment's default sweep) would only repeat
 * the same rows, so it shrinks to one value. */
static void presets_collapse(skv_app_spec *s)
{
	const skv_app_list *pl = &s->list[SKV_APP_P_PRESET];
	int any = 0;
	for (size_t i = 0; i < pl->n; i++)
		any |= pl->v[i].u != 0;
	if (!any)
		return;
	for (size_t k = 0; k < sizeof preset_fields / sizeof preset_fields[0]; k++)
		if (!s->given[preset_fields[k]])
			s->list[preset_fields[k]].n = 1;
}

int skv_app_spec_args(skv_app_spec *s, int argc, char **argv, skv_app_error *e)
{
	int st = apply_args(s, argc, argv, 1, e);
	if (st == SKV_APP_EXIT_OK)
		presets_collapse(s);
	return st;
}

/* Splits a defaults string on blanks and applies it as not-given flags. */
static int apply_defaults(skv_app_spec *s, const char *flags, skv_app_error *e)
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

int skv_app_spec_init(skv_app_spec *s, const char *experiment, skv_app_error *e)
{
	skv_app_spec t;
	memset(&t, 0, sizeof t);
	t.exp = skv_app_experiment_find(experiment);
	if (!t.exp) {
		char names[512];
		size_t len = 0;
		names[0] = '\0';
		for (size_t i = 0; i < skv_app_nexperiments && len < sizeof names; i++) {
			int w = snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
					 skv_app_experiments[i].name);
			len += w > 0 ? (size_t)w : 0;
		}
		skv_app_errorf(e, "skv: unknown experiment '%s' (expected %s)", experiment, names);
		return SKV_APP_EXIT_USAGE;
	}
	/* The table's defaults fill every list, also for parameters that do not
	 * apply (they are then never read), so every point is complete. */
	for (int i = 0; i < SKV_APP_NPARAMS; i++) {
		skv_app_value v;
		int st = skv_app_value_parse(&v, i, skv_app_params[i].def, e);
		t.list[i].v = st == SKV_APP_EXIT_OK ? malloc(sizeof v) : NULL;
		if (!t.list[i].v) {
			skv_app_spec_free(&t);
			return st == SKV_APP_EXIT_OK ? nomem(e) : st;
		}
		t.list[i].v[0] = v;
		t.list[i].n = 1;
	}
	int st = set_out(&t, "results", e);
	if (st == SKV_APP_EXIT_OK)
		st = apply_defaults(&t, t.exp->defaults, e);
	if (st == SKV_APP_EXIT_OK)
		presets_collapse(&t);
	if (st != SKV_APP_EXIT_OK) {
		skv_app_spec_free(&t);
		return st;
	}
	*s = t;
	return SKV_APP_EXIT_OK;
}

size_t skv_app_spec_npoints(const skv_app_spec *s)
{
	size_t n = 1;
	for (int i = 0; i < SKV_APP_NPARAMS; i++) {
		size_t k = s->list[i].n;
		if (k == 0 || n > SIZE_MAX / k)
			return 0;
		n *= k;
	}
	return n;
}

uint64_t skv_app_spec_trials(const skv_app_spec *s) { return s->list[SKV_APP_P_TRIALS].v[0].u; }

void skv_app_seed_list(FILE *f, const skv_app_spec *s)
{
	const skv_app_list *l = &s->list[SKV_APP_P_SEED];
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)l->v[i].u);
}

void skv_app_spec_point(const skv_app_spec *s, size_t pt, skv_app_value vals[SKV_APP_NPARAMS])
{
	for (int i = SKV_APP_NPARAMS - 1; i >= 0; i--) {
		size_t k = s->list[i].n;
		vals[i] = s->list[i].v[pt % k];
		pt /= k;
	}
}

void skv_app_spec_values(const skv_app_spec *s, size_t pt, skv_app_value vals[SKV_APP_NPARAMS])
{
	skv_app_spec_point(s, pt, vals);
	/* Presets resolve here, into parameter values: the preset's field for
	 * every parameter the user did not give (s->given), so the engine, its
	 * sharing keys and the CSV all see what ran. An input format given by
	 * the user is the preset's input (fa2 on fp16 tensors), and the stages
	 * that follow the input follow it. */
	const skv_preset *p = vals[SKV_APP_P_PRESET].u ? skv_preset_at(vals[SKV_APP_P_PRESET].u - 1) : NULL;
	if (!p)
		return;
	skv_format in = s->given[SKV_APP_P_INPUT] ? (skv_format)vals[SKV_APP_P_INPUT].u : p->cfg.input;
	skv_config c;
	skv_merge_spec m;
	if (skv_preset_resolve(&c, &m, p, in) != SKV_OK)
		return;
	const uint64_t fixed[SKV_APP_NPARAMS] = {
		[SKV_APP_P_INPUT] = c.input,	       [SKV_APP_P_COMPUTE] = c.compute, [SKV_APP_P_P] = c.p,
		[SKV_APP_P_LSE_BASE] = c.base,	       [SKV_APP_P_PARTIAL] = c.partial, [SKV_APP_P_LSE] = c.lse,
		[SKV_APP_P_COMBINE] = c.combine,       [SKV_APP_P_OUTPUT] = c.output,   [SKV_APP_P_MERGE] = m.merge,
		[SKV_APP_P_ORDER] = m.order,	       [SKV_APP_P_EMPTY] = m.empty,
		[SKV_APP_P_MERGE_THREADS] = m.threads, [SKV_APP_P_ROUND_STATES] = (uint64_t)m.round_states,
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
static int check_resources(const skv_app_spec *s, skv_app_error *e)
{
	const int procs = omp_get_num_procs();
	const uint64_t cap = procs * 4 > 64 ? (uint64_t)procs * 4 : 64;
	const uint64_t th = s->list[SKV_APP_P_THREADS].v[0].u;
	if (th > cap) {
		skv_app_errorf(e, "skv: --threads=%llu is more than 4 per core (this machine has %d core%s: at most %llu)",
			       (unsigned long long)th, procs, procs == 1 ? "" : "s", (unsigned long long)cap);
		return SKV_APP_EXIT_USAGE;
	}
	double bytes, cpu;
	if (skv_app_engine_estimate(&bytes, &cpu, s, th ? (int)th : omp_get_max_threads()) != SKV_OK)
		return nomem(e);
	const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	const double ram = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
	if (ram > 0 && bytes > ram) {
		skv_app_errorf(e, "skv: %s needs about %.3g GiB of memory at its largest point, more than this machine's %.3g "
				  "GiB (and about %.3g CPU hours); lower --ctx, --head-dim or --splits",
			       s->exp->name, bytes / 1073741824.0, ram / 1073741824.0, cpu / 3600);
		return SKV_APP_EXIT_USAGE;
	}
	return SKV_APP_EXIT_OK;
}

int skv_app_spec_check(const skv_app_spec *s, skv_app_error *e)
{
	const skv_app_list *ctx = &s->list[SKV_APP_P_CTX], *sp = &s->list[SKV_APP_P_SPLITS];
	if (s->exp->kind == SKV_APP_KIND_SPLIT) {
		for (size_t i = 0; i < sp->n; i++)
			for (size_t j = 0; j < ctx->n; j++)
				if (sp->v[i].u > ctx->v[j].u) {
					skv_app_errorf(e, "skv: --splits=%llu is greater than --ctx=%llu",
						 (unsigned long long)sp->v[i].u, (unsigned long long)ctx->v[j].u);
					return SKV_APP_EXIT_USAGE;
				}
		const skv_app_list *ll = &s->list[SKV_APP_P_LAYOUT];
		for (size_t i = 0; i < ll->n; i++)
			for (size_t j = 0; j < sp->n; j++) {
				skv_app_layout lay = (skv_app_layout)ll->v[i].u;
				if (sp->v[j].u < skv_app_layout_min_splits(lay)) {
					char name[32];
					skv_app_value_format(name, sizeof name, SKV_APP_P_LAYOUT, ll->v[i]);
					skv_app_errorf(e, "skv: --layout=%s needs at least %zu splits, not --splits=%llu", name,
						       skv_app_layout_min_splits(lay), (unsigned long long)sp->v[j].u);
					return SKV_APP_EXIT_USAGE;
				}
			}
		const skv_app_list *lm = &s->list[SKV_APP_P_MERGE], *lo = &s->list[SKV_APP_P_ORDER];
		const skv_app_list *le = &s->list[SKV_APP_P_EMPTY], *lt = &s->list[SKV_APP_P_MERGE_THREADS];
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
							skv_app_errorf(e, "skv: --merge=%s --order=%s --empty=%s is not supported "
								 "by this build of the library",
								 skv_merge_name(m), skv_order_name(o), skv_empty_name(em));
							return SKV_APP_EXIT_USAGE;
						}
					}
	}
	size_t np = skv_app_spec_npoints(s);
	uint64_t tr = skv_app_spec_trials(s);
	if (np == 0 || tr > max_rows || np > max_rows / tr) {
		skv_app_errorf(e, "skv: the sweep is too large (points x trials above %zu rows); shorten a list", max_rows);
		return SKV_APP_EXIT_USAGE;
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
static int preset_swept(const skv_app_spec *s)
{
	const skv_app_list *pl = &s->list[SKV_APP_P_PRESET];
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
int skv_app_spec_flags(char **out, const skv_app_spec *s)
{
	char *buf = NULL, val[64];
	size_t len = 0, cap = 0;
	int ok = append(&buf, &len, &cap, "");
	const int presets = preset_swept(s);
	for (int i = 0; ok && i < SKV_APP_NPARAMS; i++) {
		if (!skv_app_spec_applies(s, i) || !skv_app_params[i].column)
			continue;
		if (presets && is_preset_field(i) && !s->given[i])
			continue;
		ok = append(&buf, &len, &cap, len ? " --" : "--") && append(&buf, &len, &cap, skv_app_params[i].flag) &&
		     append(&buf, &len, &cap, "=");
		for (size_t k = 0; ok && k < s->list[i].n; k++) {
			skv_app_value_format(val, sizeof val, i, s->list[i].v[k]);
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
