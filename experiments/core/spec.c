/* spec.c - run specs: defaults, command-line flags, value lists, presets resolved into values, and the point order. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

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

/* "v1,v2,...": every named value of an enumeration but the ones that
 * stand for another or for nothing ("none": no preset; "own": the preset's
 * math mode), for --X=all. */
static char *enum_all(const param_enum *en)
{
	size_t len = 1;
	for (unsigned v = 0; v < en->count; v++)
		len += en->name(v) ? strlen(en->name(v)) + 1 : 0;
	char *b = malloc(len), *w = b;
	if (!b)
		return NULL;
	*w = '\0';
	for (unsigned v = 0; v < en->count; v++) {
		const char *nm = en->name(v);
		if (!nm || strcmp(nm, "none") == 0 || strcmp(nm, "own") == 0)
			continue;
		w += sprintf(w, "%s%s", w == b ? "" : ",", nm);
	}
	return b;
}

/* Parses the comma-separated list `value` of parameter id into s. */
static int set_list(run_spec *s, int id, const char *value, int given, message *e)
{
	const char *flag = params[id].flag;
	size_t n = 1;
	for (const char *c = value; *c; c++)
		n += *c == ',';
	if (params[id].single && n > 1) {
		msg_set(e, "skv: --%s takes one value, not a list ('%s')", flag, value);
		return SKV_EINVAL;
	}
	param_value *v = malloc(n * sizeof *v);
	char *buf = dup_str(value);
	int st = v && buf ? SKV_OK : nomem(e);
	char *tok = buf;
	for (size_t i = 0; i < n && st == SKV_OK; i++) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		if (!*tok) {
			msg_set(e, "skv: empty value in --%s=%s", flag, value);
			st = SKV_EINVAL;
		} else {
			st = param_parse(&v[i], id, tok, e);
		}
		tok = comma ? comma + 1 : tok + strlen(tok);
	}
	free(buf);
	if (st == SKV_OK && repeated_value(e, id, v, n, value))
		st = SKV_EINVAL;
	if (st != SKV_OK) {
		free(v);
		return st;
	}
	free(s->list[id].v);
	s->list[id].v = v;
	s->list[id].n = n;
	s->given[id] = given ? 1 : 0;
	return SKV_OK;
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
	/* --X=all: every value of an enumeration that has none named "all" */
	unsigned u;
	if (strcmp(value, "all") == 0 && p->type == PT_ENUM && !p->single && p->en->parse(&u, "all") != SKV_OK) {
		char *every = enum_all(p->en);
		if (!every)
			return nomem(e);
		int st = set_list(s, id, every, given, e);
		free(every);
		return st;
	}
	return set_list(s, id, value, given, e);
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
	P_INPUT, P_COMPUTE, P_P,	 P_LSE_BASE, P_PARTIAL, P_LSE,		 P_COMBINE,	 P_OUTPUT,
	P_BLOCKS, P_ACC,    P_FORMULA, P_LANES,	     P_LANE_KEYS, P_MERGE,	 P_ORDER,
	P_EMPTY, P_MERGE_THREADS, P_ROUND_STATES, P_NORM, P_KV_CACHE, P_KV_SCALE, P_KV_DEQ, P_KV_SCALE_VALUE,
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

static int is_preset_field(int id);

/* An experiment whose defaults name presets and also set a field the
 * presets fix means that field over the presets' (tensor-cores-fp8: FA3
 * with e4m3 inputs and a bf16 output), as a user's flag would: it counts
 * as given, so spec_values keeps it and the reproduce command writes it.
 * The other experiments set such fields only without presets. */
static void defaults_over_presets(run_spec *s, int argc, char **argv)
{
	int presets = 0;
	for (int i = 0; i < argc; i++)
		presets |= strncmp(argv[i], "--preset=", 9) == 0 && strcmp(argv[i], "--preset=none") != 0;
	for (int i = 0; presets && i < argc; i++) {
		char name[64];
		const size_t n = strcspn(argv[i] + 2, "=");
		if (n >= sizeof name)
			continue;
		memcpy(name, argv[i] + 2, n);
		name[n] = '\0';
		const int id = param_find(name);
		if (id >= 0 && is_preset_field(id))
			s->given[id] = 1;
	}
}

/* Splits a defaults string on blanks and applies it as not-given flags
 * (defaults_over_presets says when a field counts as given). */
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
	if (st == SKV_OK)
		defaults_over_presets(s, argc, argv);
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

int spec_threads(const run_spec *s)
{
	const uint64_t th = s->list[P_THREADS].v[0].u;
	return th ? (int)th : omp_get_max_threads();
}

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
	/* --math=own (the default) is the preset's mode, exact without one; an
	 * explicit mode always holds, so an experiment can sweep exact against
	 * own over presets */
	const int own_math = vals[P_MATH].u == MATH_OWN;
	if (own_math)
		vals[P_MATH].u = SKV_MATH_EXACT;
	if (!p)
		return;
	skv_format in = s->given[P_INPUT] ? (skv_format)vals[P_INPUT].u : p->cfg.input;
	skv_config c;
	skv_merge_spec m;
	if (skv_preset_resolve_full(&c, &m, p, in, (unsigned)vals[P_HEAD_DIM].u) != SKV_OK)
		return; /* spec_check refuses it (presets_resolve) */
	const uint64_t fixed[NPARAMS] = {
		[P_INPUT] = c.input,	       [P_COMPUTE] = c.compute,	      [P_P] = c.p,
		[P_LSE_BASE] = c.base,	       [P_PARTIAL] = c.partial,	      [P_LSE] = c.lse,
		[P_COMBINE] = c.combine,       [P_OUTPUT] = c.output,	      [P_BLOCKS] = c.blocks,
		[P_ACC] = (uint64_t)c.acc,     [P_FORMULA] = c.formula,	      [P_LANES] = c.lanes,
		[P_LANE_KEYS] = c.lane_keys,   [P_MERGE] = m.merge,
		[P_ORDER] = m.order,	       [P_EMPTY] = m.empty,	      [P_MERGE_THREADS] = m.threads,
		[P_ROUND_STATES] = (uint64_t)m.round_states, [P_NORM] = m.norm,
		[P_KV_CACHE] = (uint64_t)p->kv.format, [P_KV_SCALE] = p->kv.scale, [P_KV_DEQ] = p->kv.deq,
	};
	for (size_t k = 0; k < sizeof preset_fields / sizeof preset_fields[0]; k++)
		if (!s->given[preset_fields[k]])
			vals[preset_fields[k]].u = fixed[preset_fields[k]];
	if (!s->given[P_KV_SCALE_VALUE]) /* the one real field: K's and V's given scale are one value */
		vals[P_KV_SCALE_VALUE].r = p->kv.k_scale;
	if (own_math)
		vals[P_MATH].u = c.math;
	/* a kernel on CUDA cores (or the CPU) computes IEEE fp32 on any GPU:
	 * --gpu leaves it as it is, and the row says what ran */
	if (!p->tensor_cores)
		vals[P_GPU].u = SKV_GPU_IEEE;
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
