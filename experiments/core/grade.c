/* grade.c - a dump graded against the exact truth: every head's output and LSE, every split's partials, the merge alone, the LSE base given or told from the values. */
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "core/grade.h"
#include "core/sweep_internal.h" /* measure_floor */

/* log2(e) as a double-double and ln 2 rounded to a double (MPFR at 300
 * bits, each part rounded to nearest). */
static const skv_dd LOG2E = {0x1.71547652b82fep+0, 0x1.777d0ffda0d24p-56};
#define LN2_RN 0x1.62e42fefa39efp-1

double grade_lse_convert(double x, int from, int to)
{
	if (from == to)
		return x;
	return to == SKV_BASE_2 ? x * LOG2E.hi : x * LN2_RN;
}

/* t log2(e), the exact truth of an LSE in base 2, as a double-double: the
 * product of the leading parts is exact as p + fma(hi, hi', -p), the cross
 * terms are below 2^-52 of it, so the sum is t log2(e) to about 2^-104
 * relative. Infinities stay themselves. */
static skv_dd dd_log2e(skv_dd t)
{
	if (!isfinite(t.hi))
		return (skv_dd){t.hi * LOG2E.hi, 0.0};
	const double p = t.hi * LOG2E.hi;
	const double err = fma(t.hi, LOG2E.hi, -p) + (t.hi * LOG2E.lo + t.lo * LOG2E.hi);
	const double hi = p + err;
	return (skv_dd){hi, err - (hi - p)};
}

const char *grade_item_name(int item)
{
	static const char *const n[GI_N] = {"out", "lse", "merge_out", "merge_lse", "partial_out", "partial_lse"};
	return item >= 0 && item < GI_N ? n[item] : NULL;
}

/* The exact values the rows are graded against. */
typedef struct {
	skv_dd *out, *lse; /* [H][d], [H]: the whole context; LSEs natural */
	skv_dd *so, *sl;   /* [S][H][d], [S][H]: each split */
	skv_dd *mo, *ml;   /* [H][d], [H]: the exact merge of the given partials */
	unsigned char *mdef; /* [H]: 0 when that merge has no value */
} truths;

static void truths_free(truths *T)
{
	free(T->out);
	free(T->lse);
	free(T->so);
	free(T->sl);
	free(T->mo);
	free(T->ml);
	free(T->mdef);
	memset(T, 0, sizeof *T);
}

static int truths_alloc(truths *T, const grade_dump *dp, int splits, int merge)
{
	const size_t H = dp->H, d = dp->d, S = splits ? dp->S : 0;
	memset(T, 0, sizeof *T);
	T->out = malloc(H * d * sizeof *T->out);
	T->lse = malloc(H * sizeof *T->lse);
	T->so = S ? malloc(S * H * d * sizeof *T->so) : NULL;
	T->sl = S ? malloc(S * H * sizeof *T->sl) : NULL;
	T->mo = merge ? calloc(H * d, sizeof *T->mo) : NULL;
	T->ml = merge ? malloc(H * sizeof *T->ml) : NULL;
	T->mdef = merge ? calloc(H, 1) : NULL;
	if (!T->out || !T->lse || (S && (!T->so || !T->sl)) || (merge && (!T->mo || !T->ml || !T->mdef))) {
		truths_free(T);
		return SKV_ENOMEM;
	}
	return SKV_OK;
}

/* Task t of the truths: head t % H over the whole context (t < H) or over
 * split t / H - 1. */
static int truth_task(truths *T, const grade_dump *dp, size_t t)
{
	const size_t H = dp->H, d = dp->d, h = t % H, s = t / H;
	const skv_problem p = grade_head_problem(dp, h);
	int st;
	if (s == 0)
		st = skv_truth_range(T->out + h * d, &T->lse[h], &p, 0, 0, dp->n, SKV_TRUTH_PREC);
	else
		st = skv_truth_range(T->so + ((s - 1) * H + h) * d, &T->sl[(s - 1) * H + h], &p, 0,
				     dp->bounds[s - 1], dp->bounds[s], SKV_TRUTH_PREC);
	/* MPFR's per-thread constant caches, as measure_truth frees them */
	mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
	return st;
}

/* The first failing status in task order, so the message does not depend
 * on the thread count. */
static int first_failure(const int *st, size_t n, size_t *at)
{
	for (size_t i = 0; i < n; i++)
		if (st[i] != SKV_OK) {
			*at = i;
			return st[i];
		}
	return SKV_OK;
}

/* The truths the items need: over the whole context only when an output
 * or LSE is there to grade against it (items_of), over each split for the
 * partials. */
static int run_truths(truths *T, const grade_dump *dp, int splits, message *e)
{
	const size_t ntask = dp->H * (1 + (splits ? dp->S : 0)), t0 = dp->out || dp->lse ? 0 : dp->H;
	int *st = malloc(ntask * sizeof *st);
	if (!st)
		return SKV_ENOMEM;
	for (size_t t = 0; t < t0; t++)
		st[t] = SKV_OK;
#pragma omp parallel for schedule(dynamic)
	for (size_t t = t0; t < ntask; t++)
		st[t] = truth_task(T, dp, t);
	size_t at = 0;
	const int rc = first_failure(st, ntask, &at);
	free(st);
	if (rc != SKV_OK)
		msg_set(e, "skv grade: the exact truth of head %zu%s failed: %s", at % dp->H,
			at < dp->H ? "" : " over a split", skv_strerror(rc));
	return rc;
}

/* The exact merge of head h's given partials: the attention whose keys are
 * the splits, each scored by its stored LSE, with values the stored partial
 * outputs. With q = (1, 0, ..., 0), key s = (L_s, 0, ..., 0) and scale 1,
 * skv_truth_range's score of split s is L_s exactly, so its output is
 * sum_s e^(L_s - L) O_s with L = log sum_s e^(L_s), certified to 2^-100.
 * Base-2 LSEs are scored with scale RN(ln 2): each weight 2^(L_s - L) is
 * then exact to a relative |L_s - L| 2^-53. Splits with LSE -inf weigh 0
 * and are left out (an unwritten row of an empty split is never read); a
 * NaN or +inf LSE, or a non-finite value in a row that weighs, leaves the
 * merge without a value. Without partial_out the values are 0 (the LSE
 * alone is graded). */
static int merge_truth(truths *T, const grade_dump *dp, size_t h, int base)
{
	const size_t H = dp->H, S = dp->S, d = dp->d;
	size_t m = 0;
	for (size_t s = 0; s < S; s++) {
		const double L = dp->pl[s * H + h];
		if (isnan(L) || L == INFINITY)
			return SKV_OK; /* mdef stays 0 */
		for (size_t i = 0; dp->po && L > -INFINITY && i < d; i++)
			if (!isfinite(dp->po[(s * H + h) * d + i]))
				return SKV_OK;
		m += L > -INFINITY;
	}
	T->mdef[h] = 1;
	if (m == 0) { /* every split empty: the empty attention, 0 with LSE -inf */
		T->ml[h] = (skv_dd){-INFINITY, 0.0};
		return SKV_OK;
	}
	double *q = calloc(d, sizeof *q), *k = calloc(m * d, sizeof *k), *v = calloc(m * d, sizeof *v);
	int st = q && k && v ? SKV_OK : SKV_ENOMEM;
	for (size_t s = 0, j = 0; st == SKV_OK && s < S; s++) {
		if (!(dp->pl[s * H + h] > -INFINITY))
			continue;
		k[j * d] = dp->pl[s * H + h];
		if (dp->po)
			memcpy(v + j * d, dp->po + (s * H + h) * d, d * sizeof *v);
		j++;
	}
	if (st == SKV_OK) {
		q[0] = 1.0;
		const skv_problem p = {.nq = 1, .n = m, .d = d, .q = q, .k = k, .v = v,
				       .scale = base == SKV_BASE_2 ? LN2_RN : 1.0};
		st = skv_truth_range(T->mo + h * d, &T->ml[h], &p, 0, 0, m, SKV_TRUTH_PREC);
		mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
	}
	free(q);
	free(k);
	free(v);
	return st;
}

static int run_merges(truths *T, const grade_dump *dp, int base, message *e)
{
	int *st = malloc(dp->H * sizeof *st);
	if (!st)
		return SKV_ENOMEM;
#pragma omp parallel for schedule(dynamic)
	for (size_t h = 0; h < dp->H; h++)
		st[h] = merge_truth(T, dp, h, base);
	size_t at = 0;
	const int rc = first_failure(st, dp->H, &at);
	free(st);
	if (rc != SKV_OK)
		msg_set(e, "skv grade: the exact merge of head %zu's partials failed: %s", at, skv_strerror(rc));
	return rc;
}

/* The LSE base. Each finite stored LSE x with a finite exact natural LSE t
 * is at |x - t| from base e's value and |x - t log2 e| from base 2's; the
 * two values are sep = |t| (log2 e - 1) apart. With D_e, D_2 the largest
 * distances and SEP the largest separation, base e is told when D_e <=
 * SEP / 4, base 2 when D_2 <= SEP / 4 (at most one can hold: at the LSE
 * with the largest separation the other distance is at least 3 SEP / 4);
 * otherwise, or with SEP = 0 (every LSE 0: the bases agree), the dump is
 * ambiguous and refused. A base given is taken as it is (the distances are
 * still reported). */
static void base_pair(grade_result *r, double x, skv_dd t)
{
	if (!isfinite(x) || !isfinite(t.hi))
		return;
	const double t2 = dd_log2e(t).hi;
	r->dev_e = fmax(r->dev_e, fabs(x - t.hi));
	r->dev_2 = fmax(r->dev_2, fabs(x - t2));
	r->sep = fmax(r->sep, fabs(t2 - t.hi));
	r->nlse++;
}

static int tell_base(grade_result *r, const grade_dump *dp, const truths *T, message *e)
{
	for (size_t i = 0; dp->pl && i < dp->S * dp->H; i++)
		base_pair(r, dp->pl[i], T->sl[i]);
	for (size_t h = 0; dp->lse && h < dp->H; h++)
		base_pair(r, dp->lse[h], T->lse[h]);
	r->base = dp->base == GRADE_BASE_AUTO ? SKV_BASE_E : dp->base;
	if (dp->base != GRADE_BASE_AUTO || r->nlse == 0)
		return SKV_OK;
	r->detected = 1;
	if (r->sep > 0 && r->dev_e <= r->sep / 4)
		return SKV_OK;
	if (r->sep > 0 && r->dev_2 <= r->sep / 4) {
		r->base = SKV_BASE_2;
		return SKV_OK;
	}
	msg_set(e, "skv grade: cannot tell the LSE base: the dump's %zu finite LSEs lie up to %.3g from the exact "
		   "natural LSEs and up to %.3g from the base-2 ones, where the two bases differ by at most %.3g (a "
		   "base is told when its distance is below a quarter of that); give --lse-base=e or --lse-base=2",
		r->nlse, r->dev_e, r->dev_2, r->sep);
	return SKV_EINVAL;
}

/* One row: the errors of c[0..n) (format f) against t, its floor, states. */
static int fill_row(grade_row *w, const double *c, const skv_dd *t, size_t n, int defined)
{
	w->n = n;
	w->defined = defined;
	for (size_t i = 0; i < n; i++) {
		w->nnan += isnan(c[i]) != 0;
		w->npinf += c[i] == INFINITY;
		w->nninf += c[i] == -INFINITY;
	}
	if (!defined) {
		w->err = w->floor = (skv_errors){NAN, NAN, NAN, NAN, NAN};
		return SKV_OK;
	}
	const int st = skv_errors_compute(&w->err, c, t, n, w->fmt);
	return st == SKV_OK ? measure_floor(&w->floor, t, n, w->fmt) : st;
}

/* The rows of one item for head h (every split for the partial items). */
static int item_rows(grade_result *r, const grade_dump *dp, const truths *T, int item, size_t h)
{
	const size_t H = dp->H, d = dp->d, S = dp->S;
	const int split = item == GI_PARTIAL_OUT || item == GI_PARTIAL_LSE;
	for (size_t s = 0; s < (split ? S : 1); s++) {
		grade_row *w = &r->rows[r->nrows++];
		*w = (grade_row){.item = item, .head = h, .split = split ? s : GRADE_NO_SPLIT,
				 .lo = split ? dp->bounds[s] : 0, .hi = split ? dp->bounds[s + 1] : dp->n};
		const size_t at = s * H + h;
		skv_dd tl;
		int st = SKV_OK;
		switch (item) {
		case GI_OUT:
			w->fmt = dp->fmt[GT_OUT];
			st = fill_row(w, dp->out + h * d, T->out + h * d, d, 1);
			break;
		case GI_LSE:
			w->fmt = dp->fmt[GT_LSE];
			tl = r->base == SKV_BASE_2 ? dd_log2e(T->lse[h]) : T->lse[h];
			st = fill_row(w, dp->lse + h, &tl, 1, 1);
			break;
		case GI_MERGE_OUT:
			w->fmt = dp->fmt[GT_OUT];
			st = fill_row(w, dp->out + h * d, T->mo + h * d, d, T->mdef[h]);
			break;
		case GI_MERGE_LSE:
			w->fmt = dp->fmt[GT_LSE];
			tl = T->mdef[h] && r->base == SKV_BASE_2 ? dd_log2e(T->ml[h]) : T->ml[h];
			st = fill_row(w, dp->lse + h, &tl, 1, T->mdef[h]);
			break;
		case GI_PARTIAL_OUT:
			w->fmt = dp->fmt[GT_PARTIAL_OUT];
			st = fill_row(w, dp->po + at * d, T->so + at * d, d, 1);
			break;
		default:
			w->fmt = dp->fmt[GT_PARTIAL_LSE];
			tl = r->base == SKV_BASE_2 ? dd_log2e(T->sl[at]) : T->sl[at];
			st = fill_row(w, dp->pl + at, &tl, 1, 1);
			break;
		}
		if (st != SKV_OK)
			return st;
	}
	return SKV_OK;
}

/* Which items the dump has: the merge needs the partial LSEs and what it
 * is compared with. */
static void items_of(int *has, const grade_dump *dp)
{
	has[GI_OUT] = dp->out != NULL;
	has[GI_LSE] = dp->lse != NULL;
	has[GI_MERGE_OUT] = dp->out && dp->po && dp->pl;
	has[GI_MERGE_LSE] = dp->lse && dp->pl;
	has[GI_PARTIAL_OUT] = dp->po != NULL;
	has[GI_PARTIAL_LSE] = dp->pl != NULL;
}

static int make_rows(grade_result *r, const grade_dump *dp, const truths *T)
{
	int has[GI_N];
	items_of(has, dp);
	size_t per_head = 0;
	for (int it = 0; it < GI_N; it++)
		per_head += has[it] ? (it >= GI_PARTIAL_OUT ? dp->S : 1) : 0;
	if (!(r->rows = calloc(dp->H * per_head, sizeof *r->rows)))
		return SKV_ENOMEM;
	for (size_t h = 0; h < dp->H; h++)
		for (int it = 0; it < GI_N; it++) {
			const int st = has[it] ? item_rows(r, dp, T, it, h) : SKV_OK;
			if (st != SKV_OK)
				return st;
		}
	return SKV_OK;
}

int grade_run(grade_result *r, const grade_dump *dp, message *e)
{
	grade_result g;
	memset(&g, 0, sizeof g);
	truths T = {0};
	/* the merge's truth is graded only against a given output or LSE */
	const int splits = dp->po || dp->pl, merge = dp->pl && (dp->out || dp->lse);
	int st = truths_alloc(&T, dp, splits, merge);
	if (st == SKV_OK)
		st = run_truths(&T, dp, splits, e);
	if (st == SKV_OK)
		st = tell_base(&g, dp, &T, e);
	if (st == SKV_OK && merge)
		st = run_merges(&T, dp, g.base, e);
	if (st == SKV_OK)
		st = make_rows(&g, dp, &T);
	truths_free(&T);
	if (st != SKV_OK) {
		if (st == SKV_ENOMEM)
			msg_set(e, "skv grade: out of memory");
		grade_result_free(&g);
		return st;
	}
	*r = g;
	return SKV_OK;
}

void grade_result_free(grade_result *r)
{
	if (!r)
		return;
	free(r->rows);
	memset(r, 0, sizeof *r);
}
