/* grade_load.c - a dump's tensors read exactly as stored and checked against each other: shapes, GQA grouping, finite inputs, integer split boundaries. */
#define _GNU_SOURCE /* asprintf */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grade.h"

/* The format of each floating dtype, and the dtype skv writes each value
 * format in: every value of the format is exactly one of the dtype (tf32 in
 * f32, the saturating fp8 variants in their plain encodings, e2m1's eight
 * magnitudes in f16); the scale-only formats are no tensor's. */
static const int dtype_format[TENSOR_NDTYPES] = {
	[TENSOR_F16] = SKV_FP16, [TENSOR_BF16] = SKV_BF16, [TENSOR_F32] = SKV_FP32, [TENSOR_F64] = SKV_FP64,
	[TENSOR_E4M3] = SKV_E4M3, [TENSOR_E5M2] = SKV_E5M2, [TENSOR_I8] = -1, [TENSOR_I16] = -1,
	[TENSOR_I32] = -1, [TENSOR_I64] = -1, [TENSOR_U8] = -1, [TENSOR_U16] = -1, [TENSOR_U32] = -1,
	[TENSOR_U64] = -1,
};
static const tensor_dtype format_dtype[SKV_NFORMATS] = {
	[SKV_FP16] = TENSOR_F16, [SKV_BF16] = TENSOR_BF16, [SKV_FP32] = TENSOR_F32, [SKV_FP64] = TENSOR_F64,
	[SKV_TF32] = TENSOR_F32, [SKV_E4M3] = TENSOR_E4M3, [SKV_E4M3_SAT] = TENSOR_E4M3,
	[SKV_E5M2] = TENSOR_E5M2, [SKV_E5M2_SAT] = TENSOR_E5M2, [SKV_E2M1] = TENSOR_F16,
	[SKV_E8M0] = TENSOR_NONE, [SKV_UE4M3] = TENSOR_NONE,
};

tensor_dtype grade_format_dtype(skv_format f) { return (unsigned)f < SKV_NFORMATS ? format_dtype[f] : TENSOR_NONE; }

int grade_dtype_format(tensor_dtype dt) { return dt >= 0 && dt < TENSOR_NDTYPES ? dtype_format[dt] : -1; }

/* Each tensor's rank, and the position of its head axis (left out with
 * one head): q [H, d], k and v [Hkv, n, d], partial_out [S, H, d],
 * partial_lse [S, H], out [H, d], lse [H], splits [S + 1] (no head axis). */
static const size_t canon_rank[GT_N] = {2, 3, 3, 3, 2, 2, 1, 1};
static const size_t head_axis[GT_N] = {0, 0, 0, 1, 1, 0, 0, SIZE_MAX};

/* The .safetensors files read so far, each once. */
typedef struct {
	char *path[GT_N];
	tensor_set set[GT_N];
	size_t n;
} st_cache;

static void cache_free(st_cache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->path[i]);
		tensor_set_free(&c->set[i]);
	}
	c->n = 0;
}

static int cache_get(const tensor_set **set, st_cache *c, const char *path, message *e)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->path[i], path) == 0) {
			*set = &c->set[i];
			return SKV_OK;
		}
	if (!(c->path[c->n] = strdup(path)))
		return SKV_ENOMEM;
	const int st = safetensors_read(&c->set[c->n], path, NULL, e);
	if (st != SKV_OK) {
		free(c->path[c->n]);
		return st;
	}
	*set = &c->set[c->n++];
	return SKV_OK;
}

/* The names a file holds, for a message about a name it lacks. */
static void names_of(char *buf, size_t n, const tensor_set *s)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < s->ntensors && at + 1 < n; i++) {
		const int w = snprintf(buf + at, n - at, "%s%s", i ? ", " : "", s->tensors[i].name);
		at = w < 0 ? n : at + (size_t)w;
	}
	if (at >= n && n > 4)
		memcpy(buf + n - 4, "...", 4);
}

/* Integer elements of raw's width read as raw's bit patterns (numpy has no
 * bf16 or fp8 dtype: such data is saved as u2/u1, or i2/i1, whose values
 * are the patterns, two's complement for the signed ones). */
static int reinterpret_raw(tensor *t, tensor_dtype raw)
{
	const size_t w = tensor_dtype_size(raw);
	if (raw == TENSOR_NONE || tensor_dtype_is_float(t->dtype) || tensor_dtype_size(t->dtype) != w)
		return SKV_OK;
	const uint64_t mask = (UINT64_C(1) << (8 * w)) - 1;
	for (size_t i = 0; i < t->count; i++) {
		const uint64_t bits = (uint64_t)(int64_t)t->values[i] & mask;
		if (tensor_decode(&t->values[i], raw, bits) != SKV_OK)
			return SKV_EINVAL;
	}
	t->dtype = raw;
	return SKV_OK;
}

/* A reader's one line with the tensor's role when the file does not name
 * it so (a .npy file is named after itself, a file-level problem names no
 * tensor). */
static int read_failed(message *e, int st, const char *name, int id)
{
	char want[300];
	snprintf(want, sizeof want, "tensor %s:", name);
	char *m = strdup(msg_text(e));
	if (!m)
		return st;
	if (!strstr(m, want))
		msg_set(e, "%s (reading the dump's %s)", m, grade_tensor_name(id));
	free(m);
	return st;
}

/* Reads tensor id from its source into t; *found 0 when the dump has no
 * such optional tensor. *where gets "FILE" or "FILE:NAME". */
static int read_one(tensor *t, int *found, char **where, const grade_sources *s, int id, st_cache *c,
		    message *e)
{
	const char *file = s->file[id], *name = s->name[id] ? s->name[id] : grade_tensor_name(id);
	const int need = s->given[id] || id == GT_Q || id == GT_K || id == GT_V;
	*found = 0;
	if (!file) {
		if (!need)
			return SKV_OK;
		msg_set(e, "skv grade: no tensor %s given (the dump's %s, or --%s=FILE)", name, name, name);
		return SKV_EINVAL;
	}
	const size_t fl = strlen(file);
	int st;
	if (fl >= 12 && strcmp(file + fl - 12, ".safetensors") == 0) {
		const tensor_set *set;
		if ((st = cache_get(&set, c, file, e)) != SKV_OK)
			return st;
		const tensor *x = tensor_set_find(set, name);
		if (!x && !need)
			return SKV_OK;
		if (!x) {
			char have[400];
			names_of(have, sizeof have, set);
			return tensor_errf(e, SKV_EINVAL, file, name, "not in the file (it holds: %s)", have);
		}
		st = tensor_init(t, x->name, x->dtype, x->rank, x->shape, x->values, e);
		if (asprintf(where, "%s:%s", file, name) < 0)
			*where = NULL;
	} else {
		st = npy_read(t, file, NULL, e);
		*where = strdup(file);
	}
	if (st == SKV_OK && !*where)
		st = SKV_ENOMEM;
	if (st == SKV_OK && id != GT_SPLITS && reinterpret_raw(t, s->raw) != SKV_OK)
		st = tensor_errf(e, SKV_EINVAL, file, name, "cannot read its integers as %s patterns",
				 tensor_dtype_name(s->raw));
	if (st != SKV_OK) {
		tensor_free(t);
		free(*where);
		*where = NULL;
		return st == SKV_ENOMEM ? (msg_set(e, "skv grade: out of memory"), st) : read_failed(e, st, name, id);
	}
	*found = 1;
	return SKV_OK;
}

/* The expected shape of tensor id in t's own rank: canonical, or with the
 * head axis left out when the head count is 1 and t has one axis fewer. */
static int check_shape(const tensor *t, int id, const char *file, const size_t *canon, message *e)
{
	size_t want[TENSOR_MAX_RANK], r = canon_rank[id];
	memcpy(want, canon, r * sizeof *want);
	if (head_axis[id] != SIZE_MAX && t->rank + 1 == r && canon[head_axis[id]] == 1) {
		memmove(want + head_axis[id], want + head_axis[id] + 1, (r - head_axis[id] - 1) * sizeof *want);
		r--;
	}
	return tensor_check_shape(t, file, r, want, e);
}

static int float_format(skv_format *f, const tensor *t, const char *file, message *e)
{
	const int x = grade_dtype_format(t->dtype);
	if (x < 0)
		return tensor_errf(e, SKV_EINVAL, file, t->name,
				   "dtype %s holds integers where values are expected (for bf16 or fp8 bit patterns "
				   "saved as integers: --raw=bf16|f16|e4m3|e5m2)",
				   t->file_dtype);
	*f = (skv_format)x;
	return SKV_OK;
}

/* q and k fix H, d, Hkv and n. */
static int shapes_qk(grade_dump *dp, const tensor *q, const tensor *k, const grade_sources *s, message *e)
{
	const size_t any2[2] = {TENSOR_ANY, TENSOR_ANY};
	if (q->rank == 2 || q->rank == 1) {
		dp->H = q->rank == 2 ? q->shape[0] : 1;
		dp->d = q->shape[q->rank - 1];
	} else {
		return tensor_check_shape(q, s->file[GT_Q], 2, any2, e);
	}
	const size_t want[3] = {TENSOR_ANY, TENSOR_ANY, dp->d};
	const int st = k->rank == 2 || k->rank == 3 ? tensor_check_shape(k, s->file[GT_K], k->rank, want + 3 - k->rank, e)
						    : tensor_check_shape(k, s->file[GT_K], 3, want, e);
	if (st != SKV_OK)
		return read_failed(e, st, "k", GT_K);
	dp->Hkv = k->rank == 3 ? k->shape[0] : 1;
	dp->n = k->shape[k->rank - 2];
	if (dp->H == 0 || dp->d == 0 || dp->Hkv == 0 || dp->n == 0)
		return tensor_errf(e, SKV_EINVAL, s->file[dp->n && dp->Hkv ? GT_Q : GT_K],
				   dp->n && dp->Hkv ? q->name : k->name, "is empty (no heads, keys or head dimension)");
	if (dp->H % dp->Hkv)
		return tensor_errf(e, SKV_EINVAL, s->file[GT_K], k->name,
				   "%zu KV heads do not divide q's %zu query heads (GQA needs a multiple)", dp->Hkv,
				   dp->H);
	return SKV_OK;
}

/* The split boundaries: integers 0 = b_0 <= ... <= b_S = n. */
static int take_bounds(grade_dump *dp, const tensor *t, const char *file, message *e)
{
	if (tensor_dtype_is_float(t->dtype))
		return tensor_errf(e, SKV_EINVAL, file, t->name, "dtype %s where integer key boundaries are expected",
				   t->file_dtype);
	if (t->rank != 1 || t->shape[0] < 2)
		return tensor_errf(e, SKV_EINVAL, file, t->name,
				   "%zu dimensions, %zu entries: expected [S + 1] boundaries, S >= 1", t->rank,
				   t->rank ? t->shape[0] : 1);
	for (size_t i = 0; i < t->count; i++) {
		const double b = t->values[i];
		const char *why = i == 0 && b != 0 ? "is not 0 (the first boundary)"
				  : i + 1 == t->count && b != (double)dp->n ? "is not the key count (the last boundary)"
				  : b < 0 || b > (double)dp->n ? "lies outside the keys"
				  : i && b < t->values[i - 1] ? "is below the boundary before it"
							      : NULL;
		if (why) {
			char msg[96];
			snprintf(msg, sizeof msg, "%s; k has %zu keys", why, dp->n);
			return tensor_value_errf(e, SKV_EINVAL, file, t, i, msg);
		}
	}
	dp->S = t->count - 1;
	if (!(dp->bounds = malloc(t->count * sizeof *dp->bounds)))
		return SKV_ENOMEM;
	for (size_t i = 0; i < t->count; i++)
		dp->bounds[i] = (size_t)t->values[i];
	return SKV_OK;
}

/* The canonical shape each tensor must have once q, k and the splits are known. */
static void canon_shape(size_t *sh, int id, const grade_dump *dp)
{
	const size_t H = dp->H, d = dp->d, S = dp->S;
	const size_t shapes[GT_N][3] = {
		{H, d, 0}, {dp->Hkv, dp->n, d}, {dp->Hkv, dp->n, d}, {S, H, d}, {S, H, 0}, {H, d, 0}, {H, 0, 0}, {0},
	};
	memcpy(sh, shapes[id], sizeof shapes[id]);
}

static double **slot(grade_dump *dp, int id)
{
	double **s[GT_N] = {&dp->q, &dp->k, &dp->v, &dp->po, &dp->pl, &dp->out, &dp->lse, NULL};
	return s[id];
}

/* Checks tensor id against the dump so far and keeps its values. */
static int take(grade_dump *dp, tensor *t, int id, const grade_sources *s, message *e)
{
	const char *file = s->file[id];
	if (id == GT_SPLITS)
		return take_bounds(dp, t, file, e);
	if ((id == GT_PARTIAL_OUT || id == GT_PARTIAL_LSE) && !dp->bounds)
		return tensor_errf(e, SKV_EINVAL, file, t->name,
				   "partials need their split boundaries: a tensor splits of S + 1 key indices");
	size_t sh[3];
	canon_shape(sh, id, dp);
	int st = check_shape(t, id, file, sh, e);
	if (st == SKV_OK)
		st = float_format(&dp->fmt[id], t, file, e);
	if (st == SKV_OK && id <= GT_V)
		st = tensor_check_finite(t, file, e);
	if (st != SKV_OK)
		return st;
	*slot(dp, id) = t->values; /* C order is the canonical layout */
	t->values = NULL;
	return SKV_OK;
}

static void prefix_grade(message *e)
{
	char *m = strdup(msg_text(e));
	if (m)
		msg_set(e, "skv grade: %s", m);
	free(m);
}

/* The order of the checks: q and k fix the shape, the splits the partials'. */
static const int take_order[GT_N] = {GT_Q, GT_K, GT_V, GT_SPLITS, GT_PARTIAL_OUT, GT_PARTIAL_LSE, GT_OUT, GT_LSE};

int grade_load(grade_dump *dp, const grade_sources *s, message *e)
{
	grade_dump d = {.base = s->base};
	tensor t[GT_N];
	memset(t, 0, sizeof t);
	st_cache c = {.n = 0};
	int st = SKV_OK, found[GT_N] = {0};
	for (int id = 0; id < GT_N && st == SKV_OK; id++)
		st = read_one(&t[id], &found[id], &d.where[id], s, id, &c, e);
	cache_free(&c);
	if (st == SKV_OK)
		st = shapes_qk(&d, &t[GT_Q], &t[GT_K], s, e);
	for (int k = 0; k < GT_N && st == SKV_OK; k++) {
		const int id = take_order[k];
		if (found[id] && (st = take(&d, &t[id], id, s, e)) != SKV_OK && st != SKV_ENOMEM)
			read_failed(e, st, grade_tensor_name(id), id);
	}
	for (int id = 0; id < GT_N; id++)
		tensor_free(&t[id]);
	if (st == SKV_OK && !found[GT_PARTIAL_OUT] && !found[GT_PARTIAL_LSE] && !found[GT_OUT] && !found[GT_LSE])
		st = (msg_set(e, "skv grade: nothing to grade: the dump has none of partial_out, partial_lse, out, lse"),
		      SKV_EINVAL);
	if (st != SKV_OK) {
		if (st == SKV_ENOMEM)
			msg_set(e, "skv grade: out of memory");
		else if (strncmp(msg_text(e), "skv ", 4) != 0) /* the readers' and checks' "FILE: ..." */
			prefix_grade(e);
		grade_dump_free(&d);
		return st;
	}
	d.scale = s->scale > 0 ? s->scale : 1.0 / sqrt((double)d.d);
	*dp = d;
	return SKV_OK;
}

void grade_dump_free(grade_dump *dp)
{
	if (!dp)
		return;
	free(dp->q);
	free(dp->k);
	free(dp->v);
	free(dp->po);
	free(dp->pl);
	free(dp->out);
	free(dp->lse);
	free(dp->bounds);
	for (int i = 0; i < GT_N; i++)
		free(dp->where[i]);
	memset(dp, 0, sizeof *dp);
}

skv_problem grade_head_problem(const grade_dump *dp, size_t h)
{
	const size_t g = h / (dp->H / dp->Hkv), kv = g * dp->n * dp->d;
	return (skv_problem){.nq = 1, .n = dp->n, .d = dp->d, .q = dp->q + h * dp->d, .k = dp->k + kv,
			     .v = dp->v + kv, .scale = dp->scale};
}
