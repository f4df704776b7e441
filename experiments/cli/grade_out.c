/* grade_out.c - skv grade's report: the graded items and splits, and identify's ranking, as text, CSV (RFC 4180) or one JSON object. */
#include <math.h>
#include <string.h>

#include "io/csv.h"
#include "cli/cli.h"
#include "cli/grade_cmd.h"
#include "core/stats.h"

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static const char *base_name(int b) { return b == SKV_BASE_2 ? "2" : "e"; }

/* --------------------------------------------------------- aggregates */

/* The rows of one item (or one item and split) taken together: each
 * metric's maximum (NaN if any row's is: never a silent finite maximum). */
typedef struct {
	skv_errors err, floor;
	size_t rows, undefined, n, nnan, npinf, nninf;
	skv_format fmt;
} agg;

static void agg_add(agg *a, const grade_row *w)
{
	skv_errors *x[2] = {&a->err, &a->floor};
	const skv_errors *y[2] = {&w->err, &w->floor};
	for (int k = 0; k < 2; k++) {
		x[k]->max_abs = a->rows ? stats_max(x[k]->max_abs, y[k]->max_abs) : y[k]->max_abs;
		x[k]->max_rel = a->rows ? stats_max(x[k]->max_rel, y[k]->max_rel) : y[k]->max_rel;
		x[k]->norm_rel = a->rows ? stats_max(x[k]->norm_rel, y[k]->norm_rel) : y[k]->norm_rel;
		x[k]->ulp = a->rows ? stats_max(x[k]->ulp, y[k]->ulp) : y[k]->ulp;
		x[k]->norm_ulp = a->rows ? stats_max(x[k]->norm_ulp, y[k]->norm_ulp) : y[k]->norm_ulp;
	}
	a->rows++;
	a->undefined += !w->defined;
	a->n += w->n;
	a->nnan += w->nnan;
	a->npinf += w->npinf;
	a->nninf += w->nninf;
	a->fmt = w->fmt;
}

static agg aggregate(const grade_result *r, int item, size_t split)
{
	agg a;
	memset(&a, 0, sizeof a);
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].item == item && (split == GRADE_NO_SPLIT || r->rows[i].split == split))
			agg_add(&a, &r->rows[i]);
	return a;
}

/* "finite", or the non-finite counts and the rows without a truth. */
static const char *states(char *b, size_t n, const agg *a)
{
	size_t at = 0;
	b[0] = '\0';
	if (a->nnan)
		at += (size_t)snprintf(b + at, n - at, "%zu nan", a->nnan);
	if (a->npinf && at < n)
		at += (size_t)snprintf(b + at, n - at, "%s%zu +inf", at ? ", " : "", a->npinf);
	if (a->nninf && at < n)
		at += (size_t)snprintf(b + at, n - at, "%s%zu -inf", at ? ", " : "", a->nninf);
	if (a->undefined && at < n)
		at += (size_t)snprintf(b + at, n - at, "%sno truth in %zu", at ? "; " : "", a->undefined);
	if (!at)
		snprintf(b, n, "finite");
	return b;
}

/* --------------------------------------------------------------- text */

static void text_head(FILE *f, const grade_report *g)
{
	const grade_dump *dp = g->dp;
	fprintf(f, "skv grade: %s: %zu query head%s over %zu KV head%s, %zu keys, head_dim %zu", g->dump, dp->H,
		dp->H == 1 ? "" : "s", dp->Hkv, dp->Hkv == 1 ? "" : "s", dp->n, dp->d);
	if (dp->bounds)
		fprintf(f, ", %zu split%s", dp->S, dp->S == 1 ? "" : "s");
	fprintf(f, "\ninputs as stored: q %s, k %s, v %s; softmax scale %.9g%s\n", skv_format_name(dp->fmt[GT_Q]),
		skv_format_name(dp->fmt[GT_K]), skv_format_name(dp->fmt[GT_V]), dp->scale,
		dp->scale == 1.0 / sqrt((double)dp->d) ? " (1/sqrt(head_dim))" : "");
	fprintf(f, "truth: the exact attention of the stored inputs, certified to 2^-100 (skv_truth_range)\n");
	const grade_result *r = g->r;
	if (!dp->lse && !dp->pl)
		return;
	char a[32], b[32], c[32];
	char line[512];
	if (r->nlse == 0)
		snprintf(line, sizeof line, "LSE base %s: no finite LSE to tell it from", base_name(r->base));
	else
		snprintf(line, sizeof line, "LSE base %s, %s: the %zu finite LSEs lie up to %s from the exact natural "
			 "LSEs and up to %s from the base-2 ones, which differ by up to %s",
			 base_name(r->base), r->detected ? "told from the values" : "as given", r->nlse,
			 cli_num3(a, sizeof a, r->dev_e), cli_num3(b, sizeof b, r->dev_2), cli_num3(c, sizeof c, r->sep));
	cli_wrap(f, line, 0, 2, 100);
}

static void text_items(FILE *f, const grade_report *g)
{
	char v[8][32], s[96];
	fprintf(f, "\n%-12s %-6s %11s %11s %12s %9s %11s %9s  %s\n", "item", "format", "max_abs_err", "max_rel_err",
		"norm_rel_err", "ulp_err", "floor_norm", "floor_ulp", "states");
	for (int it = 0; it < GI_N; it++) {
		const agg a = aggregate(g->r, it, GRADE_NO_SPLIT);
		if (!a.rows)
			continue;
		fprintf(f, "%-12s %-6s %11s %11s %12s %9s %11s %9s  %s\n", grade_item_name(it), skv_format_name(a.fmt),
			cli_num3(v[0], 32, a.err.max_abs), cli_num3(v[1], 32, a.err.max_rel), cli_num3(v[2], 32, a.err.norm_rel),
			cli_num3(v[3], 32, a.err.ulp), cli_num3(v[4], 32, a.floor.norm_rel), cli_num3(v[5], 32, a.floor.ulp),
			states(s, sizeof s, &a));
	}
	const grade_dump *dp = g->dp;
	char line[256];
	snprintf(line, sizeof line, "(the largest over %zu head%s%s; floor: the exact values rounded once to the "
		 "format%s)",
		 dp->H, dp->H == 1 ? "" : "s", dp->po || dp->pl ? " and the splits" : "",
		 dp->pl ? "; merge: the given partials merged exactly, against the given out and lse" : "");
	cli_wrap(f, line, 0, 1, 100);
}

static void text_splits(FILE *f, const grade_report *g)
{
	const grade_dump *dp = g->dp;
	if (!dp->po && !dp->pl)
		return;
	char v[6][32], s[96], keys[48];
	fprintf(f, "\n%5s  %-17s %12s %10s %10s  %12s %10s  %s\n", "split", "keys", "partial_out", "ulp_err",
		"floor_ulp", "partial_lse", "ulp_err", "states");
	fprintf(f, "%5s  %-17s %12s %10s %10s  %12s\n", "", "", "norm_rel_err", "", "", "abs_err");
	for (size_t sp = 0; sp < dp->S; sp++) {
		const agg o = aggregate(g->r, GI_PARTIAL_OUT, sp), l = aggregate(g->r, GI_PARTIAL_LSE, sp);
		agg both = o;
		both.nnan += l.nnan, both.npinf += l.npinf, both.nninf += l.nninf;
		snprintf(keys, sizeof keys, "[%zu, %zu)", dp->bounds[sp], dp->bounds[sp + 1]);
		fprintf(f, "%5zu  %-17s %12s %10s %10s  %12s %10s  %s\n", sp, keys,
			o.rows ? cli_num3(v[0], 32, o.err.norm_rel) : "-", o.rows ? cli_num3(v[1], 32, o.err.ulp) : "-",
			o.rows ? cli_num3(v[2], 32, o.floor.ulp) : "-", l.rows ? cli_num3(v[3], 32, l.err.max_abs) : "-",
			l.rows ? cli_num3(v[4], 32, l.err.ulp) : "-", states(s, sizeof s, &both));
	}
	fprintf(f, "(each split against its own exact attention; the largest over the heads)\n");
}

/* A candidate's name: its preset, and @GPU when its tensor cores ran a GPU
 * model (fa2@h100). */
static const char *cand_name(char buf[48], const grade_cand *c)
{
	const char *p = skv_preset_at(c->preset)->name;
	if (c->gpu == SKV_GPU_IEEE)
		return p;
	snprintf(buf, 48, "%s@%s", p, skv_gpu_name((skv_gpu)c->gpu));
	return buf;
}

static void text_identify(FILE *f, const grade_report *g)
{
	const grade_ranking *id = g->id;
	const grade_dump *dp = g->dp;
	const grade_emu_opts *em = g->io->emu;
	char v[5][32];
	char line[400];
	int at = snprintf(line, sizeof line, "identify: each preset on the dump's %s inputs and ",
			  skv_format_name(id->input));
	if (dp->bounds)
		at += snprintf(line + at, sizeof line - (size_t)at, "its %zu split%s", dp->S, dp->S == 1 ? "" : "s");
	else
		at += snprintf(line + at, sizeof line - (size_t)at, "%s splits of the counts asked",
			       g->io->layout == LAYOUT_FA2 ? "FA2's" : "even");
	snprintf(line + at, sizeof line - (size_t)at, ", %s math, blocks of %zu keys",
		 em->own_math ? "the presets' own approximate" : "correctly rounded", em->block);
	fputc('\n', f);
	cli_wrap(f, line, 0, 2, 100);
	size_t ok = 0;
	for (size_t i = 0; i < id->n; i++)
		ok += id->c[i].status == SKV_OK;
	if (ok) {
		const grade_cand *c0 = &id->c[0];
		fprintf(f, "  compared:");
		for (int t = GT_PARTIAL_OUT, k = 0; t <= GT_LSE; t++)
			if (c0->total[t])
				fprintf(f, "%s %s %zu", k++ ? "," : "", grade_tensor_name(t), c0->total[t]);
		fprintf(f, " elements (LSEs in base %s)\n", base_name(id->base));
	}
	fprintf(f, "%4s  %-18s %6s %20s %8s %8s %8s %9s %9s\n", "rank", "preset", "splits", "bit-identical", "ulp p50",
		"p90", "p99", "max", "normwise");
	size_t shown = 0;
	for (size_t i = 0; i < id->n; i++) {
		const grade_cand *c = &id->c[i];
		if (c->status != SKV_OK || (g->top && shown >= g->top))
			continue;
		char same[48];
		snprintf(same, sizeof same, "%zu/%zu %5.1f%%", c->same_all, c->total_all,
			 c->total_all ? 100.0 * (double)c->same_all / (double)c->total_all : 0.0);
		char nm[48];
		fprintf(f, "%4zu  %-18s %6zu %20s %8s %8s %8s %9s %9s%s\n", i + 1, cand_name(nm, c), c->S,
			same, cli_num3(v[0], 32, c->ulp[0]), cli_num3(v[1], 32, c->ulp[1]), cli_num3(v[2], 32, c->ulp[2]),
			cli_num3(v[3], 32, c->ulp[3]), cli_num3(v[4], 32, c->normwise), c->tie ? "  (tie)" : "");
		shown++;
	}
	if (shown < ok)
		fprintf(f, "(%zu more: --top=0 shows them all)\n", ok - shown);
	for (size_t i = 0; i < id->n; i++) {
		size_t j = 0; /* each reason once (it repeats over the split counts) */
		while (j < i && (id->c[j].status == SKV_OK || strcmp(id->c[j].why, id->c[i].why) != 0))
			j++;
		if (id->c[i].status != SKV_OK && j == i) {
			snprintf(line, sizeof line, "not run: %s", id->c[i].why);
			cli_wrap(f, line, 0, 2, 100);
		}
	}
	if (!ok)
		return;
	const grade_cand *c0 = &id->c[0];
	char nm[48];
	if (c0->same_all == c0->total_all)
		fprintf(f, "top: %s reproduces the dump bit for bit%s\n", cand_name(nm, c0),
			id->n > 1 && id->c[1].tie ? " (and so do the tied presets below it)" : "");
	else
		fprintf(f, "top: %s, %.1f%% of the elements bit-identical, median distance %s ulp\n",
			cand_name(nm, c0), 100.0 * (double)c0->same_all / (double)c0->total_all,
			cli_num3(v[0], 32, c0->ulp[0]));
}

void grade_print_text(FILE *f, const grade_report *g)
{
	text_head(f, g);
	text_items(f, g);
	text_splits(f, g);
	if (g->id)
		text_identify(f, g);
}

/* ---------------------------------------------------------------- CSV */

static void csv_errors(FILE *f, const skv_errors *e)
{
	const double x[5] = {e->max_abs, e->max_rel, e->norm_rel, e->ulp, e->norm_ulp};
	for (int k = 0; k < 5; k++) {
		fputc(',', f);
		cli_csv_num(f, x[k]);
	}
}

static void csv_rows(FILE *f, const grade_report *g)
{
	const grade_dump *dp = g->dp;
	fputs("item,head,kv_head,split,lo,hi,format,elements,max_abs_err,max_rel_err,norm_rel_err,ulp_err,"
	      "norm_ulp_err,floor_max_abs_err,floor_max_rel_err,floor_norm_rel_err,floor_ulp_err,floor_norm_ulp_err,defined,nan,pos_inf,neg_inf,"
	      "lse_base\n",
	      f);
	for (size_t i = 0; i < g->r->nrows; i++) {
		const grade_row *w = &g->r->rows[i];
		fprintf(f, "%s,%zu,%zu,", grade_item_name(w->item), w->head, w->head / (dp->H / dp->Hkv));
		if (w->split != GRADE_NO_SPLIT)
			fprintf(f, "%zu", w->split);
		fprintf(f, ",%zu,%zu,%s,%zu", w->lo, w->hi, skv_format_name(w->fmt), w->n);
		csv_errors(f, &w->err);
		csv_errors(f, &w->floor);
		fprintf(f, ",%d,%zu,%zu,%zu,%s\n", w->defined, w->nnan, w->npinf, w->nninf, base_name(g->r->base));
	}
}

static void csv_ranking(FILE *f, const grade_report *g)
{
	fputs("rank,preset,splits,status,bit_identical,elements,out_identical,out_elements,lse_identical,"
	      "lse_elements,partial_out_identical,partial_out_elements,partial_lse_identical,partial_lse_elements,"
	      "ulp_p50,ulp_p90,ulp_p99,ulp_max,normwise,tie,why\n",
	      f);
	for (size_t i = 0; i < g->id->n; i++) {
		const grade_cand *c = &g->id->c[i];
		char nm[48];
		fprintf(f, "%zu,%s,%zu,%s,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu", i + 1, cand_name(nm, c),
			c->S, c->status == SKV_OK ? "ok" : "not-run", c->same_all, c->total_all, c->same[GT_OUT],
			c->total[GT_OUT], c->same[GT_LSE], c->total[GT_LSE], c->same[GT_PARTIAL_OUT],
			c->total[GT_PARTIAL_OUT], c->same[GT_PARTIAL_LSE], c->total[GT_PARTIAL_LSE]);
		for (int k = 0; k < GRADE_NQ; k++) {
			fputc(',', f);
			if (c->status == SKV_OK)
				cli_csv_num(f, c->ulp[k]);
		}
		fputc(',', f);
		if (c->status == SKV_OK)
			cli_csv_num(f, c->normwise);
		fprintf(f, ",%d,", c->tie);
		csv_write_field(f, c->why);
		fputc('\n', f);
	}
}

void grade_print_csv(FILE *f, const grade_report *g)
{
	if (g->id)
		csv_ranking(f, g);
	else
		csv_rows(f, g);
}

/* --------------------------------------------------------------- JSON */

static void json_errors(FILE *f, const char *key, const skv_errors *e)
{
	fprintf(f, "\"%s\": {\"max_abs_err\": ", key);
	cli_json_num(f, e->max_abs);
	fputs(", \"max_rel_err\": ", f);
	cli_json_num(f, e->max_rel);
	fputs(", \"norm_rel_err\": ", f);
	cli_json_num(f, e->norm_rel);
	fputs(", \"ulp_err\": ", f);
	cli_json_num(f, e->ulp);
	fputs(", \"norm_ulp_err\": ", f);
	cli_json_num(f, e->norm_ulp);
	fputc('}', f);
}

static void json_head(FILE *f, const grade_report *g)
{
	const grade_dump *dp = g->dp;
	const grade_result *r = g->r;
	fputs("{\"command\": \"grade\", \"dump\": ", f);
	json_str(f, g->dump);
	fprintf(f, ", \"shape\": {\"heads\": %zu, \"kv_heads\": %zu, \"keys\": %zu, \"head_dim\": %zu, \"splits\": ",
		dp->H, dp->Hkv, dp->n, dp->d);
	if (dp->bounds)
		fprintf(f, "%zu}", dp->S);
	else
		fputs("null}", f);
	fputs(", \"tensors\": {", f);
	for (int id = 0, k = 0; id < GT_N; id++) {
		if (!dp->where[id])
			continue;
		fprintf(f, "%s\"%s\": {\"source\": ", k++ ? ", " : "", grade_tensor_name(id));
		json_str(f, dp->where[id]);
		fprintf(f, ", \"format\": ");
		if (id == GT_SPLITS)
			fputs("null}", f);
		else
			fprintf(f, "\"%s\"}", skv_format_name(dp->fmt[id]));
	}
	fputs("}, \"scale\": ", f);
	cli_json_num(f, dp->scale);
	fprintf(f, ", \"lse_base\": {\"base\": \"%s\", \"detected\": %s, \"finite_lses\": %zu, \"dev_e\": ",
		base_name(r->base), r->detected ? "true" : "false", r->nlse);
	cli_json_num(f, r->dev_e);
	fputs(", \"dev_2\": ", f);
	cli_json_num(f, r->dev_2);
	fputs(", \"separation\": ", f);
	cli_json_num(f, r->sep);
	fputs("}", f);
}

static void json_rows(FILE *f, const grade_report *g)
{
	fputs(", \"rows\": [", f);
	for (size_t i = 0; i < g->r->nrows; i++) {
		const grade_row *w = &g->r->rows[i];
		fprintf(f, "%s{\"item\": \"%s\", \"head\": %zu, \"split\": ", i ? ", " : "", grade_item_name(w->item),
			w->head);
		if (w->split == GRADE_NO_SPLIT)
			fputs("null", f);
		else
			fprintf(f, "%zu", w->split);
		fprintf(f, ", \"keys\": [%zu, %zu], \"format\": \"%s\", \"elements\": %zu, \"defined\": %s, ", w->lo,
			w->hi, skv_format_name(w->fmt), w->n, w->defined ? "true" : "false");
		json_errors(f, "errors", &w->err);
		fputs(", ", f);
		json_errors(f, "floor", &w->floor);
		fprintf(f, ", \"nan\": %zu, \"pos_inf\": %zu, \"neg_inf\": %zu}", w->nnan, w->npinf, w->nninf);
	}
	fputs("]", f);
}

static void json_ranking(FILE *f, const grade_report *g)
{
	fprintf(f, ", \"identify\": {\"input\": \"%s\", \"lse_base\": \"%s\", \"math\": \"%s\", \"block_size\": %zu, "
		   "\"ranking\": [",
		skv_format_name(g->id->input), base_name(g->id->base), g->io->emu->own_math ? "preset" : "exact",
		g->io->emu->block);
	for (size_t i = 0; i < g->id->n; i++) {
		const grade_cand *c = &g->id->c[i];
		char nm[48];
		fprintf(f, "%s{\"rank\": %zu, \"preset\": \"%s\", \"splits\": %zu, \"ran\": %s", i ? ", " : "", i + 1,
			cand_name(nm, c), c->S, c->status == SKV_OK ? "true" : "false");
		if (c->status != SKV_OK) {
			fputs(", \"why\": ", f);
			json_str(f, c->why);
			fputc('}', f);
			continue;
		}
		fprintf(f, ", \"bit_identical\": %zu, \"elements\": %zu, \"per_tensor\": {", c->same_all, c->total_all);
		for (int t = GT_PARTIAL_OUT, k = 0; t <= GT_LSE; t++)
			if (c->total[t])
				fprintf(f, "%s\"%s\": [%zu, %zu]", k++ ? ", " : "", grade_tensor_name(t), c->same[t],
					c->total[t]);
		fputs("}, \"ulp\": {\"p50\": ", f);
		cli_json_num(f, c->ulp[0]);
		fputs(", \"p90\": ", f);
		cli_json_num(f, c->ulp[1]);
		fputs(", \"p99\": ", f);
		cli_json_num(f, c->ulp[2]);
		fputs(", \"max\": ", f);
		cli_json_num(f, c->ulp[3]);
		fputs("}, \"normwise\": ", f);
		cli_json_num(f, c->normwise);
		fprintf(f, ", \"tie\": %s}", c->tie ? "true" : "false");
	}
	fputs("]}", f);
}

void grade_print_json(FILE *f, const grade_report *g)
{
	json_head(f, g);
	json_rows(f, g);
	if (g->id)
		json_ranking(f, g);
	else
		fputs(", \"identify\": null", f);
	fputs("}\n", f);
}
