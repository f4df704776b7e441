/* report_summary.c - REPORT.md's first screen: the key conclusions, each a sentence whose numbers come from the CSVs, and the decision table per system preset. */
#include "report/report_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/narrate.h"
#include "core/stats.h"
#include "results/labels.h"
#include "skv.h"

/* The results of experiment `name` in the folder, NULL when absent. */
static const results *find(const job *j, const char *name)
{
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->s[i].name, name) == 0)
			return &j->s[i].r;
	return NULL;
}

/* The median of metric `name` at point p; NaN when the CSV lacks it. */
static double med(const results *r, size_t p, const char *name)
{
	size_t m;
	return results_metric(r, name, &m) == SKV_OK ? results_stat(r, p, m)->median : NAN;
}

static double num(const results *r, size_t p, const char *col)
{
	double x;
	return results_number(&x, r, p, col, NULL) == SKV_OK ? x : NAN;
}

/* Whether the value of col at p is v (a missing column is never). */
static int is(const results *r, size_t p, const char *col, const char *v)
{
	const char *x = results_get(r, p, col);
	return x && strcmp(x, v) == 0;
}

/* ------------------------------------------------------ LSE storage */

/* The worst median normwise error over split counts >= 2 of LSE format
 * fmt at offset off (every offset when off is NaN); *at gets its point. */
static double worst(size_t *at, const results *r, const char *fmt, double off)
{
	double w = -INFINITY;
	*at = NO_GROUP;
	for (size_t p = 0; p < r->npoints; p++) {
		const double y = med(r, p, "norm_rel_err");
		if (!is(r, p, "lse", fmt) || !(num(r, p, "splits") >= 2) || (!isnan(off) && num(r, p, "lse_offset") != off))
			continue;
		if (isnan(y) || y > w)
			w = y, *at = p;
		if (isnan(y))
			break;
	}
	return w;
}

static void lse_storage(FILE *f, const results *r)
{
	const char *fmt[8];
	size_t nf = narr_values(fmt, 8, r, "lse"), at, top = NO_GROUP;
	double lo = INFINITY, hi = -INFINITY, w = -INFINITY;
	for (size_t p = 0; p < r->npoints; p++)
		lo = fmin(lo, num(r, p, "lse_offset")), hi = fmax(hi, num(r, p, "lse_offset"));
	if (!nf || !(lo < hi))
		return;
	char a[NARR_NUM], b[NARR_NUM], c[NARR_NUM];
	fputs("- **LSE storage** ([lse-magnitude](#lse-magnitude)). With every other stage in fp64, the LSE's "
	      "format alone sets the error: the worst median normwise error over the split counts from 2 is ", f);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < nf; i++) {
			const double v = worst(&at, r, fmt[i], k ? hi : lo);
			fprintf(f, "%s%s%s%s%s", narr_sep(i, nf), narr_num(a, v), k ? "" : " (", k ? "" : fmt[i], k ? "" : ")");
		}
		fprintf(f, " at LSE offset %s%s", narr_val(a, k ? hi : lo), k ? "" : ", and ");
	}
	for (size_t i = 0; i < nf; i++) {
		const double v = worst(&at, r, fmt[i], NAN);
		if (at != NO_GROUP && (top == NO_GROUP || v > w || isnan(v)))
			w = v, top = at;
	}
	if (top != NO_GROUP)
		fprintf(f, "; the worst anywhere is %s (%s, LSE offset %s, S = %s)", narr_num(a, w),
			results_get(r, top, "lse"), narr_val(b, num(r, top, "lse_offset")), narr_val(c, num(r, top, "splits")));
	fputs(".\n", f);
}

/* ------------------------------------------------------ structure */

/* The erratic part and why: the largest jump between neighbouring split
 * counts, the format's spacing at those LSEs, and (on a grid of offsets)
 * what one spacing more of every score does. */
static int structure(FILE *f, const results *r, const char *name)
{
	narr_jump jp;
	int rc = narr_jumps(NULL, r, narr_metric(r, "norm_rel_err"), "lse", &jp, NULL);
	const char *fmt = rc || isnan(jp.ratio) ? NULL : results_get(r, jp.point, "lse");
	double off, lse;
	int have_ctx;
	const double h = fmt ? narr_jump_spacing(r, &jp, &off, &lse, &have_ctx) : NAN;
	if (isnan(h))
		return rc;
	char q[NARR_NUM], o[NARR_NUM], ya[NARR_NUM], sa[NARR_NUM], yb[NARR_NUM], sb[NARR_NUM], hh[NARR_NUM], eh[NARR_NUM];
	char a[NARR_NUM];
	fprintf(f, "- **Not a smooth curve** ([%s](#%s)). Neighbouring split counts can differ by a factor of %s "
		   "(LSE %s at offset %s: %s at S = %s, %s at S = %s): a split's LSE, near the offset + ln(ctx/S), is "
		   "stored on %s's grid of values %s apart there, and splits rounded across a boundary get weights "
		   "e^%s = %s times off",
		name, name, narr_num(q, jp.ratio), fmt, narr_val(o, off), narr_num(ya, jp.y_a), narr_val(sa, jp.s_a),
		narr_num(yb, jp.y_b), narr_val(sb, jp.s_b), fmt, narr_num(hh, h), hh, narr_num(eh, exp(h)));
	/* on a grid of offsets one spacing apart: the error is a function of
	 * where the LSEs sit on the grid */
	const char *ex[] = {"lse_offset"};
	narr_curves cv;
	find_factor one = {NAN, NAN, 0};
	if (results_varies(r, "lse_offset") && (rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, 1)) == SKV_OK) {
		unsigned char *keep = cv.per;
		for (size_t i = 0; i < cv.g.n; i++)
			keep[i] = is(r, cv.g.first[i], "lse", fmt);
		rc = find_shift_factor(&one, r, &cv.g, keep, "lse_offset", h, narr_metric(r, "norm_rel_err"), NULL);
		narr_curves_free(&cv);
	}
	if (!rc && one.pairs && one.max == 1.0)
		fprintf(f, "; raising every score by %s leaves every error as it was", narr_num(a, h));
	else if (!rc && one.pairs)
		fprintf(f, "; raising every score by %s moves each error by at most %.3g%%", narr_num(a, h),
			100 * (one.max - 1));
	fputs(".\n", f);
	return rc;
}

/* ------------------------------------------------------ partials */

static void partials(FILE *f, const results *r)
{
	const char *fmt[8];
	size_t nf = narr_values(fmt, 8, r, "partial");
	if (!nf || !narr_has_value(r, "lse", "fp64") || !results_varies(r, "splits"))
		return;
	char a[NARR_NUM], b[NARR_NUM];
	fputs("- **Partials** ([split-count](#split-count)). With the LSE in fp64, the stored partial outputs give a "
	      "median normwise error over the split counts of ", f);
	double best = INFINITY, fl = NAN;
	for (size_t i = 0; i < nf; i++) {
		double lo = INFINITY, hi = -INFINITY;
		for (size_t p = 0; p < r->npoints; p++)
			if (is(r, p, "partial", fmt[i]) && is(r, p, "lse", "fp64")) {
				const double y = med(r, p, "norm_rel_err");
				lo = fmin(lo, y), hi = fmax(hi, y);
				if (y < best)
					best = y, fl = med(r, p, "floor_err");
			}
		fprintf(f, "%s%s to %s (%s)", narr_sep(i, nf), narr_num(a, lo), narr_num(b, hi), fmt[i]);
	}
	const char *out = results_varies(r, "output") ? NULL : results_get(r, 0, "output");
	if (out && fl > 0)
		fprintf(f, "; the best is %s times the %s floor (the exact output rounded once), the kernel's own rounding",
			narr_num(a, best / fl), out);
	fputs(".\n", f);
}

/* ------------------------------------------------------ presets */

/* The two ends of the preset range, references rather than systems. */
static int reference(const char *preset)
{
	return !strcmp(preset, "exact-fp64") || !strcmp(preset, "naive-fp16") || !strcmp(preset, "none");
}

/* Preset p's largest ratio of median error to median floor over its
 * points at LSE offset off (every offset when NaN) and split count s
 * (every count when NaN); *at gets the point. NaN when a median is NaN. */
static double ratio(size_t *at, const results *r, const char *preset, double off, double s)
{
	double w = -INFINITY;
	*at = NO_GROUP;
	for (size_t p = 0; p < r->npoints; p++) {
		if (!is(r, p, "preset", preset) || (!isnan(off) && num(r, p, "lse_offset") != off) ||
		    (!isnan(s) && num(r, p, "splits") != s))
			continue;
		const double q = med(r, p, "norm_rel_err") / med(r, p, "floor_err");
		if (isnan(q))
			return *at = p, NAN;
		if (q > w)
			w = q, *at = p;
	}
	return *at == NO_GROUP ? NAN : w;
}

static void presets(FILE *f, const results *r)
{
	const char *pre[64];
	size_t np = narr_values(pre, 64, r, "preset"), prod = 0, within = 0, wi = NO_GROUP, at, wat = NO_GROUP;
	double worst = -INFINITY;
	for (size_t i = 0; i < np; i++) {
		if (reference(pre[i]))
			continue;
		const double q = ratio(&at, r, pre[i], NAN, NAN);
		prod++;
		within += q <= 2;
		if (wi == NO_GROUP || q > worst || isnan(q))
			wi = i, worst = q, wat = at;
	}
	if (!prod || wat == NO_GROUP || isnan(med(r, 0, "floor_err")))
		return;
	char a[NARR_NUM], b[NARR_NUM], c[NARR_NUM];
	fprintf(f, "- **Presets** ([systems](#systems)). Against the floor of its own output format (the exact output "
		   "rounded once to it), %zu of the %zu production presets stay%s within 2x at every split count and LSE "
		   "offset tested; the worst, %s, reaches %s times its %s floor (LSE offset %s, S = %s)",
		within, prod, within == 1 ? "s" : "", pre[wi], narr_num(a, worst), results_get(r, wat, "output"), narr_val(b, num(r, wat, "lse_offset")),
		narr_val(c, num(r, wat, "splits")));
	const char *lse = results_get(r, wat, "lse");
	if (lse && (!strcmp(lse, "fp16") || !strcmp(lse, "bf16")))
		fprintf(f, ", with its LSE stored in %s", lse);
	fputs(".\n", f);
}

/* ------------------------------------------------------ empty splits */

/* What preset's merge gets wrong with empty splits, for the table and the
 * sentence: a NaN or infinite output, a NaN or +inf merged LSE, a -inf LSE
 * where some split has keys (all-empty's exact LSE is -inf). "" for none;
 * NULL when the preset was not run. */
static const char *hazards(char *buf, size_t n, const results *e, const char *preset)
{
	size_t oc, lc, len = 0, seen = 0;
	buf[0] = '\0';
	if (!e || csv_find(&e->csv, "out_state", &oc) != SKV_OK || csv_find(&e->csv, "lse_state", &lc) != SKV_OK)
		return NULL;
	for (size_t p = 0; p < e->npoints; p++) {
		if (!is(e, p, "preset", preset))
			continue;
		seen = 1;
		const char *what = NULL;
		for (size_t i = e->point_start[p]; i < e->point_start[p + 1] && !what; i++) {
			const char *o = csv_get(&e->csv, e->point_rows[i], oc), *l = csv_get(&e->csv, e->point_rows[i], lc);
			what = strcmp(o, "finite") ? (strcmp(o, "nan") ? "inf output" : "NaN output")
			       : !strcmp(l, "nan") ? "NaN LSE" : !strcmp(l, "+inf") ? "LSE +inf"
			       : !strcmp(l, "-inf") && !is(e, p, "layout", "all-empty") ? "LSE -inf" : NULL;
		}
		if (what && len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s with %s", len ? ", " : "", what, results_get(e, p, "layout"));
	}
	return seen ? buf : NULL;
}

static void empty(FILE *f, const results *e)
{
	const char *pre[64];
	size_t np = narr_values(pre, 64, e, "preset"), bad = 0;
	char h[256];
	for (size_t i = 0; i < np; i++)
		bad += hazards(h, sizeof h, e, pre[i]) && *h;
	if (!np || !hazards(h, sizeof h, e, pre[0]))
		return;
	fprintf(f, "- **Empty splits** ([empty-splits](#empty-splits)). %zu of the %zu presets return%s a finite output "
		   "and a proper merged LSE for every layout tried (one, several and all splits empty)",
		np - bad, np, np - bad == 1 ? "s" : "");
	for (size_t i = 0, k = 0; i < np; i++)
		if (hazards(h, sizeof h, e, pre[i]) && *h)
			fprintf(f, "%s%s (%s)", k++ ? ", " : "; the others: ", pre[i], h);
	fputs(".\n", f);
}

/* The tensor-core experiments: how far the GPUs' arithmetic of q.k and
 * P.V moves the median error from IEEE's (narr_ratios_to), with 16-bit
 * operands and on FA3's FP8 path. */
static void tensor_cores(FILE *f, const results *t16, const results *t8)
{
	narr_ratios a = {0}, b = {0};
	size_t m;
	if (t16 && (results_metric(t16, "norm_rel_err", &m) != SKV_OK || !results_varies(t16, "gpu") ||
		    narr_ratios_to(&a, t16, "gpu", "ieee", NULL, m) != SKV_OK))
		a.n = 0;
	if (t8 && (results_metric(t8, "norm_rel_err", &m) != SKV_OK || !results_varies(t8, "gpu") ||
		   narr_ratios_to(&b, t8, "gpu", "ieee", NULL, m) != SKV_OK))
		b.n = 0;
	if (!a.n && !b.n)
		return;
	char x[NARR_NUM], y[NARR_NUM], lab[NARR_LABEL];
	fprintf(f, "- **Tensor cores** (%s%s%s). Computing q.k and P.V as the GPUs' tensor cores do (bit-accurate "
		   "models) instead of in IEEE fp32",
		a.n ? "[tensor-cores](#tensor-cores)" : "", a.n && b.n ? ", " : "",
		b.n ? "[tensor-cores-fp8](#tensor-cores-fp8)" : "");
	if (a.n)
		fprintf(f, " moves the tensor-core presets' median normwise error by %s to %s", narr_pct(x, a.rlo),
			narr_pct(y, a.rhi));
	if (b.n) {
		const char *keys[NARR_KEYS];
		const size_t nk = narr_keys_except(t8, keys, NULL, 0);
		fprintf(f, "%s FA3's FP8 path's by %s to %s, the most at %s", a.n ? ";" : " moves", narr_pct(x, b.rlo),
			narr_pct(y, b.rhi), narr_point_label(lab, t8, b.hi, keys, nk));
	}
	fputs(".\n", f);
}

/* The kv-cache experiment: the error against the original K and V per
 * cache format (its range over granularities, split counts and offsets),
 * and the largest ratio of the error against the stored cache (the
 * kernel's and the merge's) to it. */
static void kv_caches(FILE *f, const results *r)
{
	const char *fm[16];
	const size_t nf = narr_values(fm, 16, r, "kv_cache");
	if (!nf || isnan(med(r, 0, "orig_norm_rel_err")) || isnan(med(r, 0, "norm_rel_err")))
		return;
	char a[NARR_NUM], b[NARR_NUM];
	double share = 0;
	fputs("- **KV caches** ([kv-cache](#kv-cache)). Against the original K and V the median normwise error is ", f);
	for (size_t i = 0; i < nf; i++) {
		double lo = INFINITY, hi = 0;
		for (size_t p = 0; p < r->npoints; p++) {
			if (!is(r, p, "kv_cache", fm[i]))
				continue;
			const double o = med(r, p, "orig_norm_rel_err"), k = med(r, p, "norm_rel_err");
			lo = fmin(lo, o), hi = fmax(hi, o);
			if (o > 0)
				share = fmax(share, k / o);
		}
		fprintf(f, "%s%s to %s (%s cache)", i == 0 ? "" : i + 1 == nf ? " and " : ", ", narr_num(a, lo),
			narr_num(b, hi), fm[i]);
	}
	fprintf(f, " over every scale granularity, split count and LSE offset swept; against the stored cache (the "
		   "kernel's arithmetic and the merge) it is at most %s times that: the cache's format, not the split "
		   "count, sets the error.\n",
		narr_num(a, share));
}

/* ------------------------------------------------------ decision table */

/* "all (1 to 256)", "1, 4", "none": the split counts at which every
 * offset stays within 2x of the floor. */
static void within_2x(FILE *f, const results *r, const char *preset)
{
	double sv[64];
	size_t ns = 0, ok = 0, at;
	for (size_t p = 0; p < r->npoints && ns < 64; p++) {
		const double s = num(r, p, "splits");
		size_t k = 0;
		while (k < ns && sv[k] != s)
			k++;
		if (k == ns && is(r, p, "preset", preset))
			sv[ns++] = s;
	}
	qsort(sv, ns, sizeof *sv, stats_cmp_double);
	char a[NARR_NUM], b[NARR_NUM];
	for (size_t k = 0; k < ns; k++)
		ok += ratio(&at, r, preset, NAN, sv[k]) <= 2;
	if (ns && ok == ns) {
		fprintf(f, "all (%s to %s)", narr_val(a, sv[0]), narr_val(b, sv[ns - 1]));
		return;
	}
	for (size_t k = 0, i = 0; k < ns; k++)
		if (ratio(&at, r, preset, NAN, sv[k]) <= 2)
			fprintf(f, "%s%s", i++ ? ", " : "", narr_val(a, sv[k]));
	if (!ok)
		fputs("none", f);
}

static void decision_table(FILE *f, const results *r, const results *e)
{
	const char *pre[64];
	double off[64];
	size_t np = narr_values(pre, 64, r, "preset"), no = 0, at;
	for (size_t p = 0; p < r->npoints && no < 64; p++) {
		const double o = num(r, p, "lse_offset");
		size_t k = 0;
		while (k < no && off[k] != o)
			k++;
		if (k == no)
			off[no++] = o;
	}
	qsort(off, no, sizeof *off, stats_cmp_double);
	/* every offset when a few, else the smallest and the largest */
	const size_t shown = no <= 4 ? no : 2;
	char a[NARR_NUM], h[256];
	fputs("\n| preset | output | floor |", f);
	for (size_t k = 0; k < shown; k++)
		fprintf(f, " error / floor, LSE offset %s |", narr_val(a, off[no <= 4 ? k : k * (no - 1)]));
	fprintf(f, " split counts within 2x the floor |%s\n|---|---|---:|", e ? " empty splits |" : "");
	for (size_t k = 0; k < shown; k++)
		fputs("---:|", f);
	fprintf(f, "---|%s\n", e ? "---|" : "");
	for (size_t i = 0; i < np; i++) {
		size_t p0 = NO_GROUP;
		for (size_t p = 0; p < r->npoints && p0 == NO_GROUP; p++)
			p0 = is(r, p, "preset", pre[i]) ? p : NO_GROUP;
		const char *out = results_get(r, p0, "output");
		fprintf(f, "| %s%s | %s | %s |", pre[i], reference(pre[i]) ? " (reference)" : "", out ? out : "?",
			narr_num(a, med(r, p0, "floor_err")));
		for (size_t k = 0; k < shown; k++)
			fprintf(f, " %s |", narr_num(a, ratio(&at, r, pre[i], off[no <= 4 ? k : k * (no - 1)], NAN)));
		fputc(' ', f);
		within_2x(f, r, pre[i]);
		fputs(" |", f);
		if (e) {
			const char *z = hazards(h, sizeof h, e, pre[i]);
			fprintf(f, " %s |", !z ? "not run" : *z ? z : "none");
		}
		fputc('\n', f);
	}
	fputs("\nError / floor: the largest, over the split counts, of the median normwise error over the median "
	      "floor (the exact output rounded once to the preset's output format, which no kernel beats): 1 is the "
	      "best a kernel can do, 2 doubles the output's own rounding.", f);
	if (e)
		fputs(" Empty splits: what the merge returns wrong with one, several or all splits empty (an all-empty "
		      "row's exact LSE is -inf and its output 0).", f);
	fputs("\n\n", f);
}

int report_write_summary(FILE *f, const job *j)
{
	const results *lm = find(j, "lse-magnitude"), *lg = find(j, "lse-grid"), *sc = find(j, "split-count"),
		      *sy = find(j, "systems"), *es = find(j, "empty-splits"), *t16 = find(j, "tensor-cores"),
		      *t8 = find(j, "tensor-cores-fp8"), *kv = find(j, "kv-cache");
	int rc = SKV_OK;
	if (!lm && !lg && !sc && !sy && !es && !t16 && !t8 && !kv)
		return SKV_OK;
	fputs("## Summary\n\n", f);
	if (lm && results_metric(lm, "norm_rel_err", &(size_t){0}) == SKV_OK)
		lse_storage(f, lm);
	if (lg || lm)
		rc = structure(f, lg ? lg : lm, lg ? "lse-grid" : "lse-magnitude");
	if (!rc && sc)
		partials(f, sc);
	if (!rc && sy && results_varies(sy, "preset"))
		presets(f, sy);
	if (!rc && es && results_varies(es, "preset"))
		empty(f, es);
	if (!rc)
		tensor_cores(f, t16, t8);
	if (!rc && kv && results_varies(kv, "kv_cache"))
		kv_caches(f, kv);
	if (!rc && sy && results_varies(sy, "preset") && !isnan(med(sy, 0, "floor_err"))) {
		fputs("\nPer preset ([systems](#systems) and [empty-splits](#empty-splits)):\n", f);
		decision_table(f, sy, es && results_varies(es, "preset") ? es : NULL);
	}
	fputc('\n', f);
	return rc;
}
