/* grade_export.c - skv export: an skv problem with its split boundaries and the partials, LSEs and outputs of chosen presets, written as one .safetensors file or a folder of .npy files with a manifest per preset. */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/grade.h"

/*
 * What is written (names as in a .safetensors file; a folder holds NAME.npy):
 *   q [heads, d], k and v [kv_heads, ctx, d]  in the input format
 *   splits [S + 1]                             int64 key boundaries
 *   P.partial_out [S, heads, d]                preset P's stored partials (its partial format)
 *   P.partial_lse [S, heads]                   their LSEs (its LSE format, in its written base)
 *   P.out [heads, d]                           the merged output (its output format)
 *   P.lse [heads]                              the merged LSE in P's written base, fp64:
 *                                              skv_merge_run's natural LSE, times RN(log2 e)
 *                                              for a base-2 preset (grade_lse_convert)
 * The metadata (safetensors __metadata__; in a folder the comment lines of
 * each P.manifest) records the problem: skv's version, the command, ctx,
 * head_dim, heads, kv_heads, dist, score_scale, input, seed, trial, splits,
 * layout, block_size, the softmax scale as a C hexadecimal float, the math
 * mode, the presets (and those skipped) and each preset's LSE base.
 * A folder also gets P.manifest, the `skv grade --manifest` input of preset
 * P's tensors.
 */

typedef struct {
	tensor t[4 + 4 * SKV_NPRESETS];
	size_t n;
	tensor_meta meta[24 + SKV_NPRESETS];
	size_t nmeta;
	char *names[SKV_NPRESETS]; /* the presets written, in order */
	int base[SKV_NPRESETS];
	size_t np;
} export_set;

static void set_free(export_set *x)
{
	for (size_t i = 0; i < x->n; i++)
		tensor_free(&x->t[i]);
	for (size_t i = 0; i < x->nmeta; i++) {
		free(x->meta[i].key);
		free(x->meta[i].value);
	}
	memset(x, 0, sizeof *x);
}

static int add_tensor(export_set *x, const char *name, tensor_dtype dt, size_t rank, const size_t *shape,
		      const double *v, message *e)
{
	if (dt == TENSOR_NONE) {
		msg_set(e, "skv export: %s: no tensor format holds this format's values", name);
		return SKV_EINVAL;
	}
	const int st = tensor_init(&x->t[x->n], name, dt, rank, shape, v, e);
	x->n += st == SKV_OK;
	return st;
}

static int add_meta(export_set *x, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_meta(export_set *x, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = NULL;
	const int n = vasprintf(&v, fmt, ap);
	va_end(ap);
	char *k = strdup(key);
	if (n < 0 || !k) {
		free(k);
		if (n >= 0)
			free(v);
		return SKV_ENOMEM;
	}
	x->meta[x->nmeta++] = (tensor_meta){k, v};
	return SKV_OK;
}

/* ------------------------------------------------------------ problem */

/* The problem as skv run draws trial `trial`, KV head by KV head. */
static int draw(grade_dump *dp, const export_opts *o, message *e)
{
	const size_t G = o->heads / o->kv_heads, n = o->ctx, d = o->head_dim;
	memset(dp, 0, sizeof *dp);
	*dp = (grade_dump){.H = o->heads, .Hkv = o->kv_heads, .n = n, .d = d, .S = o->splits};
	dp->q = malloc(o->heads * d * sizeof *dp->q);
	dp->k = malloc(o->kv_heads * n * d * sizeof *dp->k);
	dp->v = malloc(o->kv_heads * n * d * sizeof *dp->v);
	dp->bounds = malloc((o->splits + 1) * sizeof *dp->bounds);
	if (!dp->q || !dp->k || !dp->v || !dp->bounds)
		return SKV_ENOMEM;
	const uint64_t s0 = seed_problem(o->seed, o->trial);
	for (size_t g = 0; g < o->kv_heads; g++) {
		skv_problem p;
		const int st = skv_problem_init(&p, G, n, d, o->dist, o->score_scale, o->input,
						g == 0 ? s0 : skv_seed_mix(s0, 16 + g));
		if (st != SKV_OK) {
			msg_set(e, "skv export: KV head %zu's problem: %s%s", g, skv_strerror(st),
				st == SKV_ERANGE ? " (a drawn value overflows the input format)" : "");
			return st;
		}
		memcpy(dp->q + g * G * d, p.q, G * d * sizeof *dp->q);
		memcpy(dp->k + g * n * d, p.k, n * d * sizeof *dp->k);
		memcpy(dp->v + g * n * d, p.v, n * d * sizeof *dp->v);
		dp->scale = p.scale;
		skv_problem_free(&p);
	}
	for (int id = GT_Q; id <= GT_V; id++)
		dp->fmt[id] = o->input;
	const int st = layout_bounds(dp->bounds, n, o->splits, o->layout, seed_layout(o->seed, o->trial), o->block,
				     o->split_size);
	if (st != SKV_OK)
		msg_set(e, "skv export: %zu splits of %zu keys cannot be laid out as asked (fa2: ceil(blocks / S) "
			   "blocks of --block-size keys; fixed: S = ceil(ctx / --split-size))",
			o->splits, n);
	return st;
}

static int add_problem(export_set *x, const grade_dump *dp, const export_opts *o, message *e)
{
	const size_t sq[2] = {dp->H, dp->d}, skv[3] = {dp->Hkv, dp->n, dp->d}, sb[1] = {dp->S + 1};
	const tensor_dtype in = grade_format_dtype(o->input);
	double *b = malloc((dp->S + 1) * sizeof *b);
	if (!b)
		return SKV_ENOMEM;
	for (size_t i = 0; i <= dp->S; i++)
		b[i] = (double)dp->bounds[i];
	int st = add_tensor(x, "q", in, 2, sq, dp->q, e);
	if (st == SKV_OK)
		st = add_tensor(x, "k", in, 3, skv, dp->k, e);
	if (st == SKV_OK)
		st = add_tensor(x, "v", in, 3, skv, dp->v, e);
	if (st == SKV_OK)
		st = add_tensor(x, "splits", TENSOR_I64, 1, sb, b, e);
	free(b);
	return st;
}

/* Preset p's four tensors. */
static int add_preset(export_set *x, const grade_dump *dp, const skv_preset *p, const export_opts *o, message *e)
{
	grade_emu em;
	int st = grade_emulate(&em, dp, dp->bounds, dp->S, p, o->input, &o->emu, e);
	if (st != SKV_OK)
		return st;
	const size_t H = dp->H, d = dp->d, S = dp->S;
	const size_t spo[3] = {S, H, d}, spl[2] = {S, H}, so[2] = {H, d}, sl[1] = {H};
	char name[128];
	for (size_t h = 0; h < H; h++)
		em.lse[h] = grade_lse_convert(em.lse[h], SKV_BASE_E, em.base);
	snprintf(name, sizeof name, "%s.partial_out", p->name);
	st = add_tensor(x, name, grade_format_dtype(em.cfg.partial), 3, spo, em.po, e);
	snprintf(name, sizeof name, "%s.partial_lse", p->name);
	if (st == SKV_OK)
		st = add_tensor(x, name, grade_format_dtype(em.cfg.lse), 2, spl, em.pl, e);
	snprintf(name, sizeof name, "%s.out", p->name);
	if (st == SKV_OK)
		st = add_tensor(x, name, grade_format_dtype(em.cfg.output), 2, so, em.out, e);
	snprintf(name, sizeof name, "%s.lse", p->name);
	if (st == SKV_OK)
		st = add_tensor(x, name, TENSOR_F64, 1, sl, em.lse, e);
	x->base[x->np] = em.base;
	x->names[x->np++] = (char *)p->name;
	grade_emu_free(&em);
	return st;
}

/* The presets asked for; with --preset=all those that do not take the
 * problem (FlashInfer's merge at an undispatched head_dim) are skipped and
 * named. */
static int add_presets(export_set *x, export_summary *sum, const grade_dump *dp, const export_opts *o, message *e)
{
	for (size_t i = 0; i < skv_preset_count(); i++) {
		if (!o->use[i])
			continue;
		const skv_preset *p = skv_preset_at(i);
		message m = {NULL};
		const int st = add_preset(x, dp, p, o, &m);
		if (st == SKV_EINVAL && o->all) {
			const size_t k = strlen(sum->skipped);
			snprintf(sum->skipped + k, sizeof sum->skipped - k, "%s%s", k ? ", " : "", p->name);
			sum->nskipped++;
			msg_free(&m);
			continue;
		}
		if (st != SKV_OK) {
			msg_set(e, "skv export: %s", msg_text(&m));
			msg_free(&m);
			return st;
		}
		msg_free(&m);
	}
	sum->npresets = x->np;
	return SKV_OK;
}

static int add_metadata(export_set *x, const export_summary *sum, const grade_dump *dp, const export_opts *o)
{
	char list[SKV_NPRESETS * 24] = "";
	for (size_t i = 0; i < x->np; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "", x->names[i]);
	int st = add_meta(x, "skv_version", "%s", skv_version());
	st |= add_meta(x, "command", "%s", o->command ? o->command : "skv export");
	st |= add_meta(x, "ctx", "%zu", o->ctx);
	st |= add_meta(x, "head_dim", "%zu", o->head_dim);
	st |= add_meta(x, "heads", "%zu", o->heads);
	st |= add_meta(x, "kv_heads", "%zu", o->kv_heads);
	st |= add_meta(x, "dist", "%s", skv_dist_name(o->dist));
	st |= add_meta(x, "score_scale", "%.17g", o->score_scale);
	st |= add_meta(x, "input", "%s", skv_format_name(o->input));
	st |= add_meta(x, "seed", "%llu", (unsigned long long)o->seed);
	st |= add_meta(x, "trial", "%llu", (unsigned long long)o->trial);
	st |= add_meta(x, "splits", "%zu", o->splits);
	char layout[32];
	param_format(layout, sizeof layout, P_LAYOUT, (param_value){o->layout, 0.0});
	st |= add_meta(x, "layout", "%s", layout);
	st |= add_meta(x, "block_size", "%zu", o->block);
	st |= add_meta(x, "scale", "%a", dp->scale);
	if (o->emu.own_math)
		st |= add_meta(x, "math", "preset, seed %llu", (unsigned long long)o->emu.math_seed);
	else
		st |= add_meta(x, "math", "exact");
	st |= add_meta(x, "presets", "%s", list);
	st |= add_meta(x, "skipped", "%s", sum->skipped);
	for (size_t i = 0; i < x->np && st == SKV_OK; i++) {
		char key[64];
		snprintf(key, sizeof key, "%s.lse_base", x->names[i]);
		st = add_meta(x, key, "%s", x->base[i] == SKV_BASE_2 ? "2" : "e");
	}
	return st ? SKV_ENOMEM : SKV_OK;
}

/* -------------------------------------------------------------- writing */

/* The one raw format of the folder's integer-held tensors (bf16 in u2, fp8
 * in u1): grade reads every integer tensor of that width as it. */
static int raw_of(tensor_dtype *raw, const export_set *x, message *e)
{
	*raw = TENSOR_NONE;
	for (size_t i = 0; i < x->n; i++) {
		const tensor_dtype dt = x->t[i].dtype;
		if (dt != TENSOR_BF16 && dt != TENSOR_E4M3 && dt != TENSOR_E5M2)
			continue;
		if (*raw != TENSOR_NONE && *raw != dt) {
			msg_set(e, "skv export: a folder of .npy files holds one raw format and these tensors need %s "
				   "and %s; write a .safetensors file instead",
				tensor_dtype_name(*raw), tensor_dtype_name(dt));
			return SKV_EINVAL;
		}
		*raw = dt;
	}
	return SKV_OK;
}

static int write_manifest(const char *dir, const export_set *x, size_t k, tensor_dtype raw, message *e)
{
	char *path = NULL, *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f || asprintf(&path, "%s/%s.manifest", dir, x->names[k]) < 0) {
		if (f)
			fclose(f);
		free(text);
		return SKV_ENOMEM;
	}
	fprintf(f, "# skv grade --manifest=%s.manifest: preset %s's tensors, written by skv export\n", x->names[k],
		x->names[k]);
	for (size_t i = 0; i < x->nmeta; i++)
		fprintf(f, "# %s: %s\n", x->meta[i].key, x->meta[i].value);
	fputs("q = q.npy\nk = k.npy\nv = v.npy\nsplits = splits.npy\n", f);
	static const char *const outs[4] = {"partial_out", "partial_lse", "out", "lse"};
	for (int i = 0; i < 4; i++)
		fprintf(f, "%s = %s.%s.npy\n", outs[i], x->names[k], outs[i]);
	fprintf(f, "lse-base = %s\n", x->base[k] == SKV_BASE_2 ? "2" : "e");
	if (raw != TENSOR_NONE)
		fprintf(f, "raw = %s\n", tensor_dtype_name(raw));
	const int ok = fclose(f) == 0;
	const int st = ok ? tensor_write_file(path, (const unsigned char *)text, len, e) : SKV_ENOMEM;
	free(path);
	free(text);
	return st;
}

static int write_folder(const char *dir, const export_set *x, message *e)
{
	tensor_dtype raw;
	int st = raw_of(&raw, x, e);
	for (size_t i = 0; i < x->n && st == SKV_OK; i++) {
		char *path = NULL;
		if (asprintf(&path, "%s/%s.npy", dir, x->t[i].name) < 0)
			return SKV_ENOMEM;
		st = npy_write(path, &x->t[i], e);
		free(path);
	}
	for (size_t k = 0; k < x->np && st == SKV_OK; k++)
		st = write_manifest(dir, x, k, raw, e);
	return st;
}

/* A folder is written whole: staged beside the target, then renamed into
 * place. An existing target must be an empty folder (never replaced with
 * what it held). */
static int publish_folder(const char *out, const export_set *x, message *e)
{
	struct stat st;
	if (stat(out, &st) == 0) {
		DIR *d = S_ISDIR(st.st_mode) ? opendir(out) : NULL;
		int empty = d != NULL;
		for (struct dirent *de; d && (de = readdir(d));)
			empty &= strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
		if (d)
			closedir(d);
		if (!empty) {
			msg_set(e, "skv export: %s exists and is not an empty folder; skv export writes a new one (or a "
				   "FILE.safetensors)", out);
			return SKV_EINVAL;
		}
	}
	char *stage = NULL;
	int rc = stage_begin(&stage, out, e);
	if (rc != SKV_OK)
		return rc;
	rc = write_folder(stage, x, e);
	if (rc == SKV_OK)
		rc = stage_publish(out, e);
	else
		stage_end();
	return rc;
}

int export_run(export_summary *sum, const export_opts *o, message *e)
{
	memset(sum, 0, sizeof *sum);
	if (o->heads == 0 || o->kv_heads == 0 || o->heads % o->kv_heads) {
		msg_set(e, "skv export: --kv-heads=%zu does not divide --heads=%zu", o->kv_heads, o->heads);
		return SKV_EINVAL;
	}
	if (o->splits > o->ctx || o->layout == LAYOUT_ALL_EMPTY || o->layout == LAYOUT_SYSTEM) {
		msg_set(e, "skv export: %s", o->splits > o->ctx ? "--splits exceeds --ctx"
					   : "--layout=all-empty and --layout=system are not exported (a dump's splits "
					     "cover its keys)");
		return SKV_EINVAL;
	}
	grade_dump dp = {0};
	export_set *x = calloc(1, sizeof *x);
	int st = x ? draw(&dp, o, e) : SKV_ENOMEM;
	if (st == SKV_OK)
		st = add_problem(x, &dp, o, e);
	if (st == SKV_OK)
		st = add_presets(x, sum, &dp, o, e);
	if (st == SKV_OK)
		st = add_metadata(x, sum, &dp, o);
	const size_t len = strlen(o->out);
	if (st == SKV_OK && len > 12 && strcmp(o->out + len - 12, ".safetensors") == 0)
		st = safetensors_write(o->out, x->t, x->n, x->meta, x->nmeta, e);
	else if (st == SKV_OK)
		st = publish_folder(o->out, x, e);
	if (st == SKV_ENOMEM)
		msg_set(e, "skv export: out of memory");
	if (x) {
		sum->ntensors = x->n;
		set_free(x);
	}
	free(x);
	grade_dump_free(&dp);
	return st;
}
