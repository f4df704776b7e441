/* recommend_out.c - `skv recommend`: the report as text, CSV (RFC 4180) or one JSON object. */
#include "cli/cli.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

static const char *fmt_name(skv_format f) { return skv_format_name(f); }

/* The threshold as the text names it: "0.001", or "0.00354 (2x the floor)". */
static const char *tol_text(char *buf, size_t n, const rec_opts *o, const rec_result *r)
{
	if (o->tol_multiple)
		snprintf(buf, n, "%.3g (%gx the floor)", r->tol, o->tol);
	else
		snprintf(buf, n, "%g", r->tol);
	return buf;
}

/* The MMA instruction GPU g's kernels issue for input in (skv_mma_tile). */
static const char *mma_instr(skv_gpu g, skv_format in)
{
	const char *instr = "?";
	return skv_mma_tile(NULL, &instr, g, in) == SKV_OK ? instr : "?";
}

static void describe_cfg(FILE *f, const rec_opts *o)
{
	const skv_config *c = &o->cfg;
	fprintf(f, "input %s, compute %s, p %s, partial %s, lse %s, combine %s,\n  output %s, LSE base %s; merge %s, "
		   "order %s, empty splits %s",
		fmt_name(c->input), fmt_name(c->compute), fmt_name(c->p), fmt_name(c->partial), fmt_name(c->lse),
		fmt_name(c->combine), fmt_name(c->output), skv_lse_base_name(c->base),
		skv_merge_name(o->merge.merge), skv_order_name(o->merge.order), skv_empty_name(o->merge.empty));
	/* the arithmetic of q.k and P.V, said only when it is not IEEE or when
	 * an asked GPU does not apply (spec_values: a preset on CUDA cores) */
	const param_value asked = o->spec.list[P_GPU].v[0];
	if (c->gpu != SKV_GPU_IEEE)
		fprintf(f, ";\n  q.k and P.V on %s tensor cores (%s)", skv_gpu_name((skv_gpu)c->gpu),
			mma_instr((skv_gpu)c->gpu, c->input));
	else if (asked.u != SKV_GPU_IEEE)
		fprintf(f, ";\n  q.k and P.V in IEEE fp32: %s's kernels use CUDA cores, --gpu=%s does not apply",
			rec_preset_name(o), skv_gpu_name((skv_gpu)asked.u));
	if (o->kv.format) /* the errors below are the kernel's and the merge's on the stored cache */
		fprintf(f, ";\n  KV cache %s with %s scales (%s), errors against the stored cache's exact attention",
			fmt_name((skv_format)(o->kv.format - 1)), skv_kv_scale_name(o->kv.scale), skv_kv_deq_name(o->kv.deq));
}

/* A growing paragraph, word-wrapped when printed. */
typedef struct {
	char s[4096];
	size_t n;
} para;

static void add(para *p, const char *fmt, ...)
{
	if (p->n >= sizeof p->s)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(p->s + p->n, sizeof p->s - p->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		p->n = p->n + (size_t)k < sizeof p->s ? p->n + (size_t)k : sizeof p->s - 1;
}

static void table_row(FILE *f, const rec_row *w, const char *note)
{
	char a[32], b[32];
	const int more = w->nan_trials || *note; /* pad the last column only when something follows */
	fprintf(f, more ? "%7u %11zu %11.4f %11s %11s  %-3s" : "%7u %11zu %11.4f %11s %11s  %s", w->splits,
		w->span, (double)w->efficiency, cli_num3(a, sizeof a, w->err_median),
		cli_num3(b, sizeof b, w->err_max), w->within_tol ? "yes" : "no");
	if (w->nan_trials)
		fprintf(f, "  (NaN in %zu trial%s)", w->nan_trials, w->nan_trials == 1 ? "" : "s");
	if (*note)
		fprintf(f, "  %s", note);
	fputc('\n', f);
}

/* The system's own pick: a count's row, or measured apart. */
static const rec_row *pick_of(const rec_result *r)
{
	return r->pick_row < r->nrows ? &r->rows[r->pick_row] : &r->own;
}

/* "fa2", "flashinfer", ...: whose heuristic. */
static const char *sys_name(const rec_opts *o) { return skv_heur_name(o->system); }

/* How the system chose: FA2's search in its own words, or the others' rule. */
static void why_pick(para *p, const rec_opts *o, const rec_result *r)
{
	const skv_fa2_decode *f = &r->fa2;
	if (o->system != SKV_HEUR_FA2) {
		add(p, "%s's rule (lib/heuristics.c, transcribed from its source) gives %u split%s of %zu keys%s. ",
		    sys_name(o), r->plan.splits, r->plan.splits == 1 ? "" : "s", r->plan.span,
		    r->plan.tile ? " (tiles dealt round-robin to the splits)" : "");
		if (o->system_default)
			add(p, "The %s preset has no split heuristic of its own, so FA2's stands in. ", rec_preset_name(o));
		return;
	}
	if (r->fa2_early) {
		add(p, "FA2 uses 1 split because its %u thread blocks already reach 0.8 x %u = %.1f slots (its early "
		       "return). ",
		    f->batch_nheads_mblocks, f->num_sms, (double)(0.8f * (float)f->num_sms));
	} else {
		unsigned m = SKV_FA2_MAX_SPLITS < f->num_sms ? SKV_FA2_MAX_SPLITS : f->num_sms;
		m = m < f->num_n_blocks ? m : f->num_n_blocks;
		add(p, "FA2 searched the eligible counts up to %u for the best wave efficiency (%.4f at %u splits) and "
		       "took the smallest count within 85%% of it: %u splits (%.4f). ",
		    m, (double)r->fa2_best_eff, r->fa2_best_splits, r->fa2_splits, (double)pick_of(r)->efficiency);
	}
	if (o->system_default)
		add(p, "(The %s preset has no split heuristic of its own: FA2's stands in.) ", rec_preset_name(o));
}

/* The reasons, from the numbers of the report. */
static void reasons(para *p, const rec_opts *o, const rec_result *r)
{
	char a[32], b[32];
	const char *mname = rec_metric_name(o->metric), *out = fmt_name(o->cfg.output);
	why_pick(p, o, r);
	const rec_row *first = &r->rows[0], *last = &r->rows[r->nrows - 1];
	if (r->nrows > 1)
		add(p, "The %s max over %u trials goes from %s at %u split%s to %s at %u splits. ", mname, o->trials,
		    cli_num3(a, sizeof a, first->err_max), first->splits, first->splits == 1 ? "" : "s",
		    cli_num3(b, sizeof b, last->err_max), last->splits);
	size_t nin = 0, nout = 0;
	for (size_t i = 0; i < r->nrows; i++)
		r->rows[i].within_tol ? nin++ : nout++;
	char t[64];
	add(p, "%zu of %zu count%s %s within the tolerance %s", nin, r->nrows, r->nrows == 1 ? "" : "s",
	    nin == 1 ? "is" : "are", tol_text(t, sizeof t, o, r));
	if (nout) {
		add(p, "; beyond it:");
		size_t shown = 0;
		for (size_t i = 0; i < r->nrows && shown < 12; i++)
			if (!r->rows[i].within_tol) {
				add(p, "%s %u (%s)", shown ? "," : "", r->rows[i].splits, cli_num3(a, sizeof a, r->rows[i].err_max));
				shown++;
			}
		if (shown < nout)
			add(p, " and %zu more", nout - shown);
	}
	add(p, ". ");
	if (r->recommended < r->nrows) {
		const rec_row *w = &r->rows[r->recommended];
		size_t ties = 0;
		for (size_t i = r->recommended + 1; i < r->nrows; i++)
			ties += r->rows[i].within_tol && r->rows[i].allowed && r->rows[i].efficiency == w->efficiency;
		add(p, "The most efficient of those is %u split%s (%.4f)", w->splits, w->splits == 1 ? "" : "s",
		    (double)w->efficiency);
		if (ties)
			add(p, "; %zu larger count%s reach%s the same efficiency and the smaller count wins, since every extra "
			       "split adds a partial write and merge work",
			    ties, ties == 1 ? "" : "s", ties == 1 ? "es" : "");
		add(p, ". ");
	} else {
		size_t lo = 0;
		for (size_t i = 1; i < r->nrows; i++)
			if (r->rows[i].err_max < r->rows[lo].err_max)
				lo = i;
		add(p, "No count is within the tolerance: the smallest %s max is %s at %u split%s. ", mname,
		    cli_num3(a, sizeof a, r->rows[lo].err_max), r->rows[lo].splits, r->rows[lo].splits == 1 ? "" : "s");
		if (!(r->floor_max <= r->tol))
			add(p, "Rounding the exact output to %s alone already gives up to %s, above the tolerance, so no "
			       "split count can meet it: raise --tol or use a wider --output format. ",
			    out, cli_num3(a, sizeof a, r->floor_max));
	}
	const rec_row *fw = pick_of(r);
	add(p, "%s's choice of %u split%s is %s tolerance (%s max %s). ", sys_name(o), fw->splits, fw->splits == 1 ? "" : "s",
	    fw->within_tol ? "within" : "beyond", mname, cli_num3(a, sizeof a, fw->err_max));
	add(p, "A batch change that moves the count among these candidates moves the output by up to %s normwise "
	       "(%s ulps of %s at the worst element); a fixed split size of %u keys (%u split%s at this context",
	    cli_num3(b, sizeof b, r->spread_norm_rel), cli_num3(a, sizeof a, r->spread_ulps), out, r->split_size,
	    r->fixed.splits, r->fixed.splits == 1 ? "" : "s");
	if (r->split_size_batch1)
		add(p, ", %s's split size at batch 1", sys_name(o));
	add(p, ") keeps the reduction order, and so the result, the same for every batch: here efficiency %.4f, %s "
	       "max %s, %s tolerance.",
	    (double)r->fixed.efficiency, mname, cli_num3(b, sizeof b, r->fixed.err_max),
	    r->fixed.within_tol ? "within" : "beyond");
}

/* What the system decides, before the table: FA2's occupancy in its own
 * terms (its model gives every efficiency), then the system's plan. */
static void print_heuristic(FILE *f, const rec_opts *o, const rec_result *r)
{
	const skv_fa2_decode *d = &r->fa2;
	fprintf(f, "FA2's occupancy: ");
	if (d->gqa_folded)
		fprintf(f, "GQA decode folds the %u query heads of each KV head into seqlen_q;\n  ", d->seqlen_q);
	fprintf(f, "batch x heads x m_blocks = %u x %u x %u = %u thread blocks on 2 x %u = %u slots;\n", o->batch,
		d->num_heads, d->num_m_blocks, d->batch_nheads_mblocks, o->sms, d->num_sms);
	fprintf(f, "  %u blocks of %u keys: FA2 picks %u split%s%s\n", d->num_n_blocks, d->block_n, r->fa2_splits,
		r->fa2_splits == 1 ? "" : "s", r->fa2_early ? " (early return: thread blocks >= 0.8 x slots)" : "");
	if (o->system != SKV_HEUR_FA2)
		fprintf(f, "%s's heuristic: %u split%s of %zu keys%s\n", sys_name(o), r->plan.splits,
			r->plan.splits == 1 ? "" : "s", r->plan.span,
			r->plan.tile ? " (interleaved tiles, round-robin)" : "");
	else if (o->system_default)
		fprintf(f, "(the %s preset has no split heuristic of its own: FA2's stands in)\n", rec_preset_name(o));
	fputc('\n', f);
}

static void print_table(FILE *f, const rec_opts *o, const rec_result *r)
{
	char note[96];
	fprintf(f, "%7s %11s %11s %11s %11s  %s\n", "splits", "keys/split", "efficiency", "err median", "err max",
		"within tol");
	for (size_t i = 0; i < r->nrows; i++) {
		const rec_row *w = &r->rows[i];
		snprintf(note, sizeof note, "%s%s%s%s", i == r->recommended ? "<- recommended" : "",
			 w->pick ? (i == r->recommended ? ", " : "<- ") : "", w->pick ? sys_name(o) : "",
			 w->pick && !w->allowed ? " (above --max-splits)" : "");
		table_row(f, w, note);
	}
	if (r->pick_row == r->nrows) {
		fprintf(f, "%s's own plan (chunks of %zu keys):\n", sys_name(o), r->own.span);
		snprintf(note, sizeof note, "<- %s", sys_name(o));
		table_row(f, &r->own, note);
	}
	fprintf(f, "fixed split size of %u keys:\n", r->split_size);
	table_row(f, &r->fixed, "(batch-invariant)");
	if (r->nskipped && o->cands != REC_CANDS_ALL) {
		fprintf(f, "skipped as ineligible (%s):",
			o->layout == REC_LAYOUT_SYSTEM ? "the same layout as one split fewer, or not a count the layout makes"
						       : "the same blocks per split as one split fewer");
		for (size_t i = 0; i < r->nskipped; i++)
			fprintf(f, "%s %u", i ? "," : "", r->skipped[i]);
		fputc('\n', f);
	}
	fputc('\n', f);
}

void rec_print_text(FILE *f, const rec_opts *o, const rec_result *r)
{
	char a[32], b[32], t[64];
	const char *out = fmt_name(o->cfg.output);
	fprintf(f, "skv recommend: batch %u, %u query heads over %u KV heads, ctx %u, head_dim %u, %u SMs\n", o->batch,
		o->heads, o->kv_heads, o->ctx, o->head_dim, o->sms);
	fprintf(f, "precision: preset %s: ", rec_preset_name(o));
	describe_cfg(f, o);
	fprintf(f, "\ntrials: %u %s problems (score-scale %g, lse-offset %g), seed %llu; %s's split layout%s, "
		   "blocks of %u keys\n",
		o->trials, skv_dist_name(o->dist), o->score_scale, o->lse_offset, (unsigned long long)o->seed,
		o->layout == REC_LAYOUT_SYSTEM ? sys_name(o) : rec_layout_name(o->layout),
		o->layout == REC_LAYOUT_EVEN ? " (even)" : "", r->fa2.block_n);
	fprintf(f, "metric: %s of the %s output; within tolerance when its max over the trials is <= %s\n\n",
		rec_metric_name(o->metric), out, tol_text(t, sizeof t, o, r));
	print_heuristic(f, o, r);
	print_table(f, o, r);
	if (r->recommended < r->nrows)
		fprintf(f, "recommended: %u split%s\n", r->rows[r->recommended].splits,
			r->rows[r->recommended].splits == 1 ? "" : "s");
	else
		fprintf(f, "recommended: none - no count is within the tolerance %s\n", tol_text(t, sizeof t, o, r));
	fprintf(f, "%s's choice: %u split%s, %s tolerance\n", sys_name(o), pick_of(r)->splits,
		pick_of(r)->splits == 1 ? "" : "s", pick_of(r)->within_tol ? "within" : "beyond");
	fprintf(f, "spread between the candidate counts (max over trials and pairs): %s ulps of %s at the truth,\n"
		   "  %s normwise relative\n",
		cli_num3(a, sizeof a, r->spread_ulps), out, cli_num3(b, sizeof b, r->spread_norm_rel));
	fprintf(f, "floor: the exact output rounded to %s has %s median %s, max %s\n\n", out,
		rec_metric_name(o->metric), cli_num3(a, sizeof a, r->floor_median), cli_num3(b, sizeof b, r->floor_max));
	para p = {.n = 0};
	p.s[0] = '\0';
	add(&p, "Why: ");
	reasons(&p, o, r);
	cli_wrap(f, p.s, 0, 0, 96);
}

/* The KV cache's format as skv run's kv_cache column writes it (the
 * parameter's own names). */
static const char *kv_name(const rec_opts *o) { return params[P_KV_CACHE].en->name((unsigned)o->kv.format); }

/* The request's columns, the same on every row (as skv run's CSV repeats
 * its parameters), so a row read alone says what it measured. */
static void csv_request(FILE *f, const rec_opts *o, const rec_result *r)
{
	const skv_config *c = &o->cfg;
	fprintf(f, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,", rec_preset_name(o), fmt_name(c->input),
		fmt_name(c->compute), fmt_name(c->p), fmt_name(c->partial), fmt_name(c->lse), fmt_name(c->combine),
		fmt_name(c->output), skv_lse_base_name(c->base), skv_merge_name(o->merge.merge),
		skv_order_name(o->merge.order), skv_empty_name(o->merge.empty), rec_metric_name(o->metric));
	fprintf(f, "%s,%s,%s,%s,", skv_gpu_name((skv_gpu)c->gpu), kv_name(o), skv_kv_scale_name(o->kv.scale),
		skv_kv_deq_name(o->kv.deq));
	cli_csv_num(f, o->spec.list[P_KV_SCALE_VALUE].v[0].r);
	fputc(',', f);
	cli_csv_num(f, r->tol);
	fputc(',', f);
	if (o->tol_multiple)
		cli_csv_num(f, o->tol);
	fputc(',', f);
	cli_csv_num(f, r->floor_median);
	fputc(',', f);
	cli_csv_num(f, r->floor_max);
	fprintf(f, ",%u,%llu,%u,%u,%u,%u,%u,%u,%s,", o->trials, (unsigned long long)o->seed, o->batch, o->heads,
		o->kv_heads, o->ctx, o->head_dim, o->sms, skv_dist_name(o->dist));
	cli_csv_num(f, o->score_scale);
	fputc(',', f);
	cli_csv_num(f, o->lse_offset);
	fprintf(f, ",%s,%s,", rec_layout_name(o->layout), sys_name(o));
}

static void csv_row(FILE *f, const rec_opts *o, const rec_result *r, const char *option, unsigned size,
		    const rec_row *w, int rec)
{
	csv_request(f, o, r);
	fprintf(f, "%s,", option);
	if (size)
		fprintf(f, "%u", size);
	fprintf(f, ",%u,%zu,", w->splits, w->span);
	cli_csv_num(f, (double)w->efficiency);
	fputc(',', f);
	cli_csv_num(f, w->err_median);
	fputc(',', f);
	cli_csv_num(f, w->err_max);
	fprintf(f, ",%zu,%d,%d,%d\n", w->nan_trials, w->within_tol, w->pick, rec);
}

void rec_print_csv(FILE *f, const rec_opts *o, const rec_result *r)
{
	fputs("preset,input,compute,p,partial,lse,combine,output,lse_base,merge,order,empty,metric,gpu,kv_cache,"
	      "kv_scale,kv_deq,kv_scale_value,tol,"
	      "tol_floor_multiple,floor_median,floor_max,trials,seed,batch,heads,kv_heads,ctx,head_dim,sms,dist,"
	      "score_scale,lse_offset,layout,system,option,split_size,splits,keys_per_split,efficiency,err_median,"
	      "err_max,nan_trials,within_tol,system_pick,recommended\n",
	      f);
	for (size_t i = 0; i < r->nrows; i++)
		csv_row(f, o, r, "count", 0, &r->rows[i], i == r->recommended);
	if (r->pick_row == r->nrows)
		csv_row(f, o, r, "system_plan", (unsigned)r->own.span, &r->own, 0);
	csv_row(f, o, r, "fixed_size", r->split_size, &r->fixed, 0);
}

static void json_row(FILE *f, const rec_row *w)
{
	fprintf(f, "{\"splits\": %u, \"keys_per_split\": %zu, \"efficiency\": ", w->splits, w->span);
	cli_json_num(f, (double)w->efficiency);
	fputs(", \"err_median\": ", f);
	cli_json_num(f, w->err_median);
	fputs(", \"err_max\": ", f);
	cli_json_num(f, w->err_max);
	fprintf(f, ", \"nan_trials\": %zu, \"within_tol\": %s, \"system_pick\": %s}", w->nan_trials,
		w->within_tol ? "true" : "false", w->pick ? "true" : "false");
}

void rec_print_json(FILE *f, const rec_opts *o, const rec_result *r)
{
	const skv_fa2_decode *d = &r->fa2;
	const skv_config *c = &o->cfg;
	fputs("{\"command\": \"recommend\", ", f);
	fprintf(f, "\"shape\": {\"batch\": %u, \"heads\": %u, \"kv_heads\": %u, \"ctx\": %u, \"head_dim\": %u, \"sms\": %u}, ",
		o->batch, o->heads, o->kv_heads, o->ctx, o->head_dim, o->sms);
	fprintf(f, "\"preset\": \"%s\", ", rec_preset_name(o));
	fprintf(f, "\"config\": {\"input\": \"%s\", \"compute\": \"%s\", \"p\": \"%s\", \"partial\": \"%s\", \"lse\": "
		   "\"%s\", \"combine\": \"%s\", \"output\": \"%s\", \"lse_base\": \"%s\", \"merge\": \"%s\", \"order\": "
		   "\"%s\", \"empty\": \"%s\", \"gpu\": \"%s\"}, ",
		fmt_name(c->input), fmt_name(c->compute), fmt_name(c->p), fmt_name(c->partial), fmt_name(c->lse),
		fmt_name(c->combine), fmt_name(c->output), skv_lse_base_name(c->base),
		skv_merge_name(o->merge.merge), skv_order_name(o->merge.order), skv_empty_name(o->merge.empty),
		skv_gpu_name((skv_gpu)c->gpu));
	fprintf(f, "\"kv_cache\": {\"format\": \"%s\", \"scale\": \"%s\", \"deq\": \"%s\", \"scale_value\": ",
		kv_name(o), skv_kv_scale_name(o->kv.scale), skv_kv_deq_name(o->kv.deq));
	cli_json_num(f, o->spec.list[P_KV_SCALE_VALUE].v[0].r);
	fputs("}, ", f);
	fprintf(f, "\"metric\": \"%s\", \"tol\": ", rec_metric_name(o->metric));
	cli_json_num(f, r->tol);
	fputs(", \"tol_floor_multiple\": ", f);
	if (o->tol_multiple)
		cli_json_num(f, o->tol);
	else
		fputs("null", f);
	fprintf(f, ", \"trials\": %u, \"seed\": %llu, \"dist\": \"%s\", \"score_scale\": ", o->trials,
		(unsigned long long)o->seed, skv_dist_name(o->dist));
	cli_json_num(f, o->score_scale);
	fputs(", \"lse_offset\": ", f);
	cli_json_num(f, o->lse_offset);
	fprintf(f, ", \"layout\": \"%s\", \"max_splits\": %u, ", rec_layout_name(o->layout), o->max_splits);
	fprintf(f, "\"fa2_heuristic\": {\"block_n\": %u, \"num_n_blocks\": %u, \"gqa_folded\": %s, \"seqlen_q\": %u, "
		   "\"num_heads\": %u, \"num_m_blocks\": %u, \"batch_nheads_mblocks\": %u, \"num_sms\": %u, "
		   "\"early_return\": %s, \"best_efficiency\": ",
		d->block_n, d->num_n_blocks, d->gqa_folded ? "true" : "false", d->seqlen_q, d->num_heads, d->num_m_blocks,
		d->batch_nheads_mblocks, d->num_sms, r->fa2_early ? "true" : "false");
	cli_json_num(f, (double)r->fa2_best_eff);
	fprintf(f, ", \"best_efficiency_splits\": %u}, ", r->fa2_best_splits);
	if (r->recommended < r->nrows)
		fprintf(f, "\"recommended_splits\": %u, ", r->rows[r->recommended].splits);
	else
		fputs("\"recommended_splits\": null, ", f);
	fprintf(f, "\"system\": \"%s\", \"fa2_stands_in\": %s, \"system_splits\": %u, \"system_keys_per_split\": %zu, "
		   "\"system_within_tol\": %s, \"fa2_splits\": %u, \"candidates\": [",
		sys_name(o), o->system_default ? "true" : "false", r->plan.splits, r->plan.span,
		pick_of(r)->within_tol ? "true" : "false", r->fa2_splits);
	for (size_t i = 0; i < r->nrows; i++) {
		fputs(i ? ", " : "", f);
		json_row(f, &r->rows[i]);
	}
	fputs("], \"skipped_ineligible\": [", f);
	for (size_t i = 0; i < r->nskipped; i++)
		fprintf(f, "%s%u", i ? ", " : "", r->skipped[i]);
	fprintf(f, "], \"fixed_size\": {\"split_size\": %u, \"from_system_batch1\": %s, \"row\": ", r->split_size,
		r->split_size_batch1 ? "true" : "false");
	json_row(f, &r->fixed);
	fputs("}, \"system_plan\": ", f);
	if (r->pick_row == r->nrows)
		json_row(f, &r->own);
	else
		fputs("null", f);
	fputs(", \"spread_ulps\": ", f);
	cli_json_num(f, r->spread_ulps);
	fputs(", \"spread_norm_rel\": ", f);
	cli_json_num(f, r->spread_norm_rel);
	fputs(", \"floor_median\": ", f);
	cli_json_num(f, r->floor_median);
	fputs(", \"floor_max\": ", f);
	cli_json_num(f, r->floor_max);
	fputs("}\n", f);
}
