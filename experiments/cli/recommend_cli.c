/* recommend.c - `skv recommend`: command-line parsing, validation and the entry point. */
#include "cli/cli.h"

#include <ctype.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Exit statuses, as for every command of the skv program. */
enum { EXIT_USAGE = 2, EXIT_RUNTIME = 1 };

static const char *const metric_names[REC_NMETRICS] = {"norm_rel_err", "max_abs_err", "ulp_err"};
static const char *const layout_names[REC_NLAYOUTS] = {"fa2", "even"};
static const char *const format_names[REC_NFORMATS] = {"text", "csv", "json"};

const char *rec_metric_name(rec_metric m)
{
	return (unsigned)m < REC_NMETRICS ? metric_names[m] : NULL;
}

const char *rec_layout_name(rec_layout l)
{
	return (unsigned)l < REC_NLAYOUTS ? layout_names[l] : NULL;
}

/* Upper limits of the flags. They keep every size in FA2's int range and
 * one trial's keys and values (16 ctx head_dim bytes) within 2 GiB. */
#define MAX_BATCH (1u << 20)
#define MAX_HEADS (1u << 16)
#define MAX_CTX (1u << 24)
#define MAX_ELEMS (1ull << 27) /* ctx x head_dim */
#define MAX_TRIALS 10000u
#define MAX_THREADS 1024u
#define MAX_OFFSET 1e9 /* as the skv program: fp64 still resolves a score there */
#define MAX_SCORE_SCALE 1e3

void rec_opts_default(rec_opts *o)
{
	memset(o, 0, sizeof *o);
	o->batch = 1;
	o->heads = 32;
	o->kv_heads = 0; /* = heads */
	o->ctx = 32768;
	o->head_dim = 128;
	o->sms = 132; /* H100 SXM */
	o->preset = skv_preset_find("fa2");
	if (o->preset)
		skv_preset_resolve(&o->cfg, &o->spec, o->preset, o->preset->cfg.input);
	o->dist = SKV_DIST_GAUSSIAN;
	o->score_scale = 0.5;
	o->lse_offset = 0.0;
	o->tol = 1e-3;
	o->metric = REC_NORM_REL;
	o->trials = 8;
	o->seed = 1;
	o->max_splits = SKV_FA2_MAX_SPLITS;
	o->cands = REC_CANDS_POW2;
	o->split_size = 0;
	o->layout = REC_LAYOUT_FA2;
	o->threads = 0; /* omp_get_max_threads() */
}

void rec_usage(FILE *f)
{
	fputs("usage: skv recommend [flags]\n"
	      "\n"
	      "Chooses a split-KV count for one decode shape from FA2's occupancy heuristic and the\n"
	      "error measured against the exact (MPFR) attention output.\n"
	      "\n"
	      "shape:\n"
	      "  --batch=N          sequences decoded together (1)\n"
	      "  --heads=N          query heads (32)\n"
	      "  --kv-heads=N       key/value heads, must divide --heads (= --heads)\n"
	      "  --ctx=N            keys in the context, FA2's seqlen_k (32768)\n"
	      "  --head-dim=N       head dimension, at most 256 as in FA2 (128)\n"
	      "  --sms=N            the GPU's SM count: A100 108, H100 SXM 132, L40S 142 (132)\n"
	      "precision:\n"
	      "  --preset=NAME      production kernel profile (fa2), one of:\n"
	      "                    ",
	      f);
	for (size_t i = 0; i < skv_preset_count(); i++)
		fprintf(f, " %s", skv_preset_at(i)->name);
	fputs("\n"
	      "  --input --compute --p --partial --lse --combine --output=FMT\n"
	      "                     override one stage format (",
	      f);
	for (int i = 0, k = 0; i < SKV_NFORMATS; i++)
		if (!skv_format_is_scale((skv_format)i))
			fprintf(f, "%s%s", k++ ? ", " : "", skv_format_name((skv_format)i));
	fputs(")\n"
	      "  --lse-base=e|2|e2  override the LSE base\n"
	      "  --lse-offset=X     added to every score: the expected LSE magnitude (0)\n"
	      "  --dist=gaussian|sink|ramp, --score-scale=X   the random problems (gaussian, 0.5)\n"
	      "  --metric=NAME      norm_rel_err, max_abs_err or ulp_err (ulps of the output format)\n"
	      "                     (norm_rel_err)\n"
	      "  --tol=X            a count is within tolerance when the max of the metric over the\n"
	      "                     trials is <= X, in the metric's units (1e-3)\n"
	      "  --trials=N         random problems (8); --seed=N (1): trial t uses skv_seed_mix(seed, t)\n"
	      "candidates:\n"
	      "  --splits=pow2|all|N,N,...   1, 2, 4, ... up to --max-splits; every count up to it; or\n"
	      "                     a list. FA2's pick is always added; ineligible counts (the same\n"
	      "                     blocks per split as one count fewer) are dropped (pow2)\n"
	      "  --max-splits=N     largest count considered and recommended (128)\n"
	      "  --split-size=N     keys per split of the fixed-size option (FA2's split size at batch 1)\n"
	      "  --layout=fa2|even  split boundaries: FA2's block-aligned chunks, or even (fa2)\n"
	      "output:\n"
	      "  --format=text|csv|json (text); --threads=N (all cores; results do not depend on it)\n",
	      f);
}

/* The one-line message of a bad flag. */
static int bad(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = snprintf(msg, len, "skv recommend: ");
	if (k >= 0 && (size_t)k < len)
		vsnprintf(msg + k, len - (size_t)k, fmt, ap);
	va_end(ap);
	return SKV_EINVAL;
}

/* A decimal integer in [lo, hi]: digits only (no sign, space or junk). */
static int parse_uint(uint64_t *v, const char *flag, const char *s, uint64_t lo, uint64_t hi, char *msg,
		      size_t len)
{
	uint64_t x = 0;
	int ok = *s != '\0';
	for (const char *c = s; ok && *c; c++) {
		if (*c < '0' || *c > '9' || x > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
			ok = 0;
		else
			x = 10 * x + (uint64_t)(*c - '0');
	}
	if (!ok || x < lo || x > hi)
		return bad(msg, len, "--%s=%s: not an integer in [%llu, %llu]", flag, s, (unsigned long long)lo,
			   (unsigned long long)hi);
	*v = x;
	return SKV_OK;
}

static int parse_u32(unsigned *v, const char *flag, const char *s, unsigned lo, unsigned hi, char *msg, size_t len)
{
	uint64_t x;
	int st = parse_uint(&x, flag, s, lo, hi, msg, len);
	if (st == SKV_OK)
		*v = (unsigned)x;
	return st;
}

/* A finite real in [lo, hi] (lo excluded when open): the whole token. */
static int parse_real(double *v, const char *flag, const char *s, double lo, double hi, int open, char *msg,
		      size_t len)
{
	char *end = NULL;
	double x = 0.0;
	if (*s != '\0' && !isspace((unsigned char)*s))
		x = strtod(s, &end);
	if (!end || end == s || *end != '\0' || !isfinite(x))
		return bad(msg, len, "--%s=%s: not a finite number", flag, s);
	if (x < lo || x > hi || (open && x == lo)) {
		if (isinf(hi))
			return bad(msg, len, "--%s=%s: must be %s %g", flag, s, open ? ">" : ">=", lo);
		return bad(msg, len, "--%s=%s: must be in %s%g, %g]", flag, s, open ? "(" : "[", lo, hi);
	}
	*v = x;
	return SKV_OK;
}

static int parse_name(unsigned *v, const char *flag, const char *s, const char *const *names, size_t n,
		      char *msg, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0) {
			*v = (unsigned)i;
			return SKV_OK;
		}
	char list[256] = "";
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(list);
		snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", names[i]);
	}
	return bad(msg, len, "--%s=%s: unknown value (one of %s)", flag, s, list);
}

static int parse_preset(const skv_preset **p, const char *s, char *msg, size_t len)
{
	const skv_preset *q = skv_preset_find(s);
	if (q) {
		*p = q;
		return SKV_OK;
	}
	char list[256] = "";
	for (size_t i = 0; i < skv_preset_count(); i++) {
		size_t k = strlen(list);
		snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", skv_preset_at(i)->name);
	}
	return bad(msg, len, "--preset=%s: unknown preset (one of %s)", s, list);
}

/* --splits: pow2, all, or a comma-separated list of counts. */
static int parse_splits(rec_opts *o, const char *s, char *msg, size_t len)
{
	if (strcmp(s, "pow2") == 0 || strcmp(s, "all") == 0) {
		o->cands = s[0] == 'p' ? REC_CANDS_POW2 : REC_CANDS_ALL;
		return SKV_OK;
	}
	rec_opts t = *o;
	t.nlist = 0;
	const char *p = s;
	for (;;) {
		const size_t k = strcspn(p, ",");
		char tok[32];
		if (k == 0 || k >= sizeof tok || t.nlist == REC_MAX_LIST)
			return bad(msg, len, "--splits=%s: not pow2, all or a list of at most %d counts in [1, %d]", s,
				   REC_MAX_LIST, REC_MAX_SPLITS);
		memcpy(tok, p, k);
		tok[k] = '\0';
		uint64_t v;
		if (parse_uint(&v, "splits", tok, 1, REC_MAX_SPLITS, msg, len) != SKV_OK)
			return bad(msg, len, "--splits=%s: '%s' is not a count in [1, %d]", s, tok, REC_MAX_SPLITS);
		t.list[t.nlist++] = (unsigned)v;
		if (p[k] == '\0')
			break;
		p += k + 1;
	}
	t.cands = REC_CANDS_LIST;
	*o = t;
	return SKV_OK;
}

typedef enum {
	F_BATCH, F_HEADS, F_KV_HEADS, F_CTX, F_HEAD_DIM, F_SMS, F_PRESET, F_INPUT, F_COMPUTE, F_P, F_PARTIAL,
	F_LSE, F_COMBINE, F_OUTPUT, F_LSE_BASE, F_LSE_OFFSET, F_DIST, F_SCORE_SCALE, F_METRIC, F_TOL, F_TRIALS,
	F_SEED, F_SPLITS, F_MAX_SPLITS, F_SPLIT_SIZE, F_LAYOUT, F_FORMAT, F_THREADS, F_HELP, NFLAGS
} flag_id;

static const char *const flag_names[NFLAGS] = {
	[F_BATCH] = "batch",         [F_HEADS] = "heads",       [F_KV_HEADS] = "kv-heads",
	[F_CTX] = "ctx",             [F_HEAD_DIM] = "head-dim", [F_SMS] = "sms",
	[F_PRESET] = "preset",       [F_INPUT] = "input",       [F_COMPUTE] = "compute",
	[F_P] = "p",                 [F_PARTIAL] = "partial",   [F_LSE] = "lse",
	[F_COMBINE] = "combine",     [F_OUTPUT] = "output",     [F_LSE_BASE] = "lse-base",
	[F_LSE_OFFSET] = "lse-offset", [F_DIST] = "dist",       [F_SCORE_SCALE] = "score-scale",
	[F_METRIC] = "metric",       [F_TOL] = "tol",           [F_TRIALS] = "trials",
	[F_SEED] = "seed",           [F_SPLITS] = "splits",     [F_MAX_SPLITS] = "max-splits",
	[F_SPLIT_SIZE] = "split-size", [F_LAYOUT] = "layout",   [F_FORMAT] = "format",
	[F_THREADS] = "threads",     [F_HELP] = "help",
};

/* The stage flags, in skv_config's field order. */
enum { NSTAGES = F_OUTPUT - F_INPUT + 1 };

static skv_format *stage_field(skv_config *c, int i)
{
	skv_format *const f[NSTAGES] = {&c->input, &c->compute, &c->p, &c->partial, &c->lse, &c->combine, &c->output};
	return f[i];
}

static int parse_format_flag(skv_format *f, const char *flag, const char *s, char *msg, size_t len)
{
	const char *names[SKV_NFORMATS];
	for (int i = 0; i < SKV_NFORMATS; i++)
		names[i] = skv_format_name((skv_format)i);
	unsigned v;
	int st = parse_name(&v, flag, s, names, SKV_NFORMATS, msg, len);
	if (st == SKV_OK && skv_format_parse(f, s) != SKV_OK) /* the library is the source of truth */
		return bad(msg, len, "--%s=%s: unknown format", flag, s);
	return st;
}

/* Cross-flag checks and the preset resolution, once every flag is read. */
static int finish(rec_opts *o, const int *stage_given, const skv_format *stage, int base_given,
		  skv_lse_base base, char *msg, size_t len)
{
	if (o->kv_heads == 0)
		o->kv_heads = o->heads;
	if (o->heads % o->kv_heads != 0)
		return bad(msg, len, "--kv-heads=%u: does not divide --heads=%u", o->kv_heads, o->heads);
	if ((uint64_t)o->ctx * o->head_dim > MAX_ELEMS)
		return bad(msg, len, "--ctx=%u: ctx x head-dim = %llu exceeds 2^27 (2 GiB of keys and values per trial)",
			   o->ctx, (unsigned long long)o->ctx * o->head_dim);
	skv_fa2_decode f;
	if (skv_fa2_decode_init(&f, o->batch, o->heads, o->kv_heads, o->ctx, o->head_dim, o->sms) != SKV_OK)
		return bad(msg, len, "--batch=%u: batch x heads x m-blocks exceeds FA2's int range", o->batch);
	if (o->split_size) {
		const unsigned long long s = o->ctx / o->split_size + (o->ctx % o->split_size != 0);
		if (s > REC_MAX_SPLITS)
			return bad(msg, len, "--split-size=%u: gives %llu splits of --ctx=%u, more than %d", o->split_size,
				   s, o->ctx, REC_MAX_SPLITS);
	}
	for (size_t i = 0; o->cands == REC_CANDS_LIST && i < o->nlist; i++)
		if (o->list[i] > o->max_splits)
			return bad(msg, len, "--splits=%u: above --max-splits=%u", o->list[i], o->max_splits);
	skv_config c;
	skv_merge_spec sp;
	skv_format in = stage_given[0] ? stage[0] : o->preset->cfg.input;
	if (skv_preset_resolve(&c, &sp, o->preset, in) != SKV_OK)
		return bad(msg, len, "--preset=%s: cannot be resolved", o->preset->name);
	for (int i = 1; i < NSTAGES; i++)
		if (stage_given[i])
			*stage_field(&c, i) = stage[i];
	if (base_given)
		c.base = base;
	if (skv_config_check(&c) != SKV_OK)
		return bad(msg, len, "--preset=%s: the stage formats do not form a valid configuration", o->preset->name);
	o->cfg = c;
	o->spec = sp;
	if (o->threads == 0) {
		const int t = omp_get_max_threads();
		o->threads = t < 1 ? 1u : (unsigned)t;
	}
	return SKV_OK;
}

int rec_parse(rec_opts *out, rec_format *fmt, int *help, int argc, char **argv, char *msg,
		  size_t len)
{
	rec_opts o;
	rec_opts_default(&o);
	if (!o.preset)
		return bad(msg, len, "the fa2 preset is missing from the library");
	rec_format form = REC_TEXT;
	int stage_given[NSTAGES] = {0}, base_given = 0;
	skv_format stage[NSTAGES] = {SKV_FP64};
	skv_lse_base base = SKV_BASE_E;
	*help = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--", 2) != 0)
			return bad(msg, len, "%s: unexpected argument (flags are --name=value)", a);
		const char *eq = strchr(a + 2, '=');
		const size_t nlen = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		int id = -1;
		for (int k = 0; k < NFLAGS; k++)
			if (strlen(flag_names[k]) == nlen && strncmp(a + 2, flag_names[k], nlen) == 0)
				id = k;
		if (id < 0)
			return bad(msg, len, "%s: unknown flag (see skv recommend --help)", a);
		if (id == F_HELP) {
			if (eq)
				return bad(msg, len, "%s: --help takes no value", a);
			*help = 1;
			return SKV_OK;
		}
		const char *v = eq ? eq + 1 : NULL;
		if (!v) {
			if (i + 1 >= argc)
				return bad(msg, len, "--%s: missing value", flag_names[id]);
			v = argv[++i];
		}
		const char *fl = flag_names[id];
		unsigned u;
		int st = SKV_OK;
		switch ((flag_id)id) {
		case F_BATCH: st = parse_u32(&o.batch, fl, v, 1, MAX_BATCH, msg, len); break;
		case F_HEADS: st = parse_u32(&o.heads, fl, v, 1, MAX_HEADS, msg, len); break;
		case F_KV_HEADS: st = parse_u32(&o.kv_heads, fl, v, 1, MAX_HEADS, msg, len); break;
		case F_CTX: st = parse_u32(&o.ctx, fl, v, 1, MAX_CTX, msg, len); break;
		case F_HEAD_DIM: st = parse_u32(&o.head_dim, fl, v, 1, SKV_FA2_MAX_HEAD_DIM, msg, len); break;
		case F_SMS: st = parse_u32(&o.sms, fl, v, 1, SKV_FA2_MAX_SMS / 2, msg, len); break;
		case F_PRESET: st = parse_preset(&o.preset, v, msg, len); break;
		case F_INPUT: case F_COMPUTE: case F_P: case F_PARTIAL: case F_LSE: case F_COMBINE: case F_OUTPUT:
			st = parse_format_flag(&stage[id - F_INPUT], fl, v, msg, len);
			stage_given[id - F_INPUT] = 1;
			break;
		case F_LSE_BASE:
			st = skv_lse_base_parse(&base, v) == SKV_OK
				     ? SKV_OK
				     : bad(msg, len, "--%s=%s: expected e, 2 or e2", fl, v);
			base_given = 1;
			break;
		case F_LSE_OFFSET: st = parse_real(&o.lse_offset, fl, v, -MAX_OFFSET, MAX_OFFSET, 0, msg, len); break;
		case F_DIST:
			st = skv_dist_parse(&o.dist, v) == SKV_OK ? SKV_OK
								 : bad(msg, len, "--dist=%s: unknown value (one of gaussian, sink, ramp)", v);
			break;
		case F_SCORE_SCALE: st = parse_real(&o.score_scale, fl, v, 0, MAX_SCORE_SCALE, 1, msg, len); break;
		case F_METRIC:
			st = parse_name(&u, fl, v, metric_names, REC_NMETRICS, msg, len);
			o.metric = (rec_metric)u;
			break;
		case F_TOL: st = parse_real(&o.tol, fl, v, 0, HUGE_VAL, 1, msg, len); break;
		case F_TRIALS: st = parse_u32(&o.trials, fl, v, 1, MAX_TRIALS, msg, len); break;
		case F_SEED: st = parse_uint(&o.seed, fl, v, 0, UINT64_MAX, msg, len); break;
		case F_SPLITS: st = parse_splits(&o, v, msg, len); break;
		case F_MAX_SPLITS: st = parse_u32(&o.max_splits, fl, v, 1, REC_MAX_SPLITS, msg, len); break;
		case F_SPLIT_SIZE: st = parse_u32(&o.split_size, fl, v, 1, MAX_CTX, msg, len); break;
		case F_LAYOUT:
			st = parse_name(&u, fl, v, layout_names, REC_NLAYOUTS, msg, len);
			o.layout = (rec_layout)u;
			break;
		case F_FORMAT:
			st = parse_name(&u, fl, v, format_names, REC_NFORMATS, msg, len);
			form = (rec_format)u;
			break;
		case F_THREADS: st = parse_u32(&o.threads, fl, v, 1, MAX_THREADS, msg, len); break;
		case F_HELP: case NFLAGS: break;
		}
		if (st != SKV_OK)
			return st;
	}
	int st = finish(&o, stage_given, stage, base_given, base, msg, len);
	if (st != SKV_OK)
		return st;
	*out = o;
	*fmt = form;
	return SKV_OK;
}

int rec_main_io(int argc, char **argv, FILE *out, FILE *err)
{
	char msg[512];
	rec_opts o;
	rec_format fmt;
	int help;
	if (rec_parse(&o, &fmt, &help, argc, argv, msg, sizeof msg) != SKV_OK) {
		fprintf(err, "%s\n", msg);
		return EXIT_USAGE;
	}
	if (help) {
		rec_usage(out);
		return 0;
	}
	rec_result r;
	if (rec_run(&r, &o, msg, sizeof msg) != SKV_OK) {
		fprintf(err, "%s\n", msg);
		return EXIT_RUNTIME;
	}
	if (fmt == REC_CSV)
		rec_print_csv(out, &o, &r);
	else if (fmt == REC_JSON)
		rec_print_json(out, &o, &r);
	else
		rec_print_text(out, &o, &r);
	rec_result_free(&r);
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(err, "skv recommend: cannot write the report\n");
		return EXIT_RUNTIME;
	}
	return 0;
}

int rec_main(int argc, char **argv) { return rec_main_io(argc, argv, stdout, stderr); }
