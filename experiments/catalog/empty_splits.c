/* empty_splits.c - the empty-splits experiment: what each preset's merge returns with empty splits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

/* The outcome columns (out_state, lse_state) of point p over its trials:
 * "nan" when every trial agrees, "finite 1, nan 1" otherwise. */
static void states(char *buf, size_t n, const results *r, size_t p, const char *col)
{
	size_t c;
	buf[0] = '\0';
	if (csv_find(&r->csv, col, &c) != SKV_OK)
		return;
	size_t len = 0;
	const size_t s = r->point_start[p], e = r->point_start[p + 1];
	for (size_t i = s; i < e; i++) {
		const char *v = csv_get(&r->csv, r->point_rows[i], c);
		int seen = 0;
		for (size_t j = s; j < i && !seen; j++)
			seen = strcmp(v, csv_get(&r->csv, r->point_rows[j], c)) == 0;
		if (seen)
			continue;
		size_t count = 0;
		for (size_t j = i; j < e; j++)
			count += strcmp(v, csv_get(&r->csv, r->point_rows[j], c)) == 0;
		int k = count == e - s ? snprintf(buf + len, n - len, "%s", v)
				       : snprintf(buf + len, n - len, "%s%s %zu", len ? ", " : "", v, count);
		if (k < 0 || (size_t)k >= n - len)
			return;
		len += (size_t)k;
	}
}

static int empty_splits(FILE *f, const results *r, message *e)
{
	size_t lc, pc;
	if (csv_find(&r->csv, "preset", &pc) != SKV_OK || csv_find(&r->csv, "layout", &lc) != SKV_OK ||
	    csv_find(&r->csv, "out_state", &lc) != SKV_OK)
		return narr_generic(f, r, e);
	size_t m = narr_metric(r, "norm_rel_err");
	const char *pk = "preset", *lk = "layout";
	groups pre, lay;
	int rc = groups_make(&pre, r, &pk, 1, NULL, NULL);
	if (rc)
		return rc;
	if ((rc = groups_make(&lay, r, &lk, 1, NULL, NULL))) {
		groups_free(&pre);
		return rc;
	}
	/* Which presets return NaN, and for which layouts. */
	size_t bad = 0;
	for (size_t i = 0; i < pre.n; i++) {
		int any = 0;
		for (size_t p = 0; p < r->npoints; p++) {
			char st[128];
			states(st, sizeof st, r, p, "out_state");
			if (pre.of_point[p] != i || !strstr(st, "nan"))
				continue;
			fprintf(f, "%s%s%s", any ? ", " : bad ? "; " : "Merged output NaN: ", any ? "" : groups_value(&pre, r, i, 0),
				any ? "" : " (");
			fputs(results_get(r, p, "layout"), f);
			any = 1;
		}
		if (any) {
			fputc(')', f);
			bad++;
		}
	}
	fprintf(f, bad ? ". %zu of %zu presets return NaN for at least one layout; the table gives every outcome "
			 "(output state, merged LSE state) over the trials."
		       : "No preset returns a NaN output for any layout (%zu of %zu); the table gives every outcome "
			 "(output state, merged LSE state) over the trials.",
		bad, pre.n);
	fputs("\n\n| preset |", f);
	for (size_t j = 0; j < lay.n; j++)
		fprintf(f, " %s |", groups_value(&lay, r, j, 0));
	fputs("\n|---|", f);
	for (size_t j = 0; j < lay.n; j++)
		fputs("---|", f);
	fputc('\n', f);
	for (size_t i = 0; i < pre.n; i++) {
		fprintf(f, "| %s |", groups_value(&pre, r, i, 0));
		for (size_t j = 0; j < lay.n; j++) {
			size_t p;
			for (p = 0; p < r->npoints; p++)
				if (pre.of_point[p] == i && lay.of_point[p] == j)
					break;
			if (p == r->npoints) {
				fputs(" |", f);
				continue;
			}
			char o[128], l[128], a[NARR_NUM];
			states(o, sizeof o, r, p, "out_state");
			states(l, sizeof l, r, p, "lse_state");
			fprintf(f, " %s, LSE %s", o, *l ? l : "?");
			double med = results_stat(r, p, m)->median;
			if (!isnan(med))
				fprintf(f, " (%s)", narr_num(a, med));
			fputs(" |", f);
		}
		fputc('\n', f);
	}
	fputs("\nEach cell: output state, merged LSE state, and in parentheses the median normwise error when it is a "
	      "number.\n", f);
	groups_free(&pre);
	groups_free(&lay);
	return SKV_OK;
}

const experiment exp_empty_splits = {
	{"empty-splits", KIND_SPLIT,
	 "what each preset's merge returns with one, several and all splits empty",
	 "--preset=" NO_KV_PRESETS " --math=exact --ctx=1024 --head-dim=64 --splits=8 --layout=even,last-empty,holes,all-empty --trials=4",
	 "The systems disagree on empty splits: FA2 returns LSE +inf for an all-empty row, FA3 leaves "
	 "empty rows unwritten (NaN here) and skips them, FlashInfer without a guard gives NaN when two "
	 "empty states meet. out_state and lse_state record what came back; all-empty is a row whose "
	 "keys are all masked, exact output 0 with LSE -inf."},
	"What each preset's merge returns when one, several or all splits are empty.",
	{"merge-rule", CHART_BARS, "preset", NULL, "norm_rel_err",
	 "each preset's merge with empty splits (bars a log axis cannot draw are labelled)", NULL},
	empty_splits,
};
