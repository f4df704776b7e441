/* list.c - `skv list [experiments | presets | PRESET]`: the experiments with their defaults, and every preset field with its source. */
#include <string.h>

#include "cli/cli.h"

static void list_experiments(FILE *f)
{
	for (size_t i = 0; i < nexperiments; i++) {
		const exp_def *x = &experiments[i]->def;
		fprintf(f, "%-16s %s\n%-16s defaults: %s\n", x->name, x->summary, "", x->defaults);
	}
}

/* The value of field k of a preset resolved on its own input at head_dim
 * 128 (the stages that follow the input derived; FlashInfer's merge
 * threads follow head_dim). */
static void field_value(char *buf, size_t n, skv_preset_field k, const skv_config *c, const skv_merge_spec *m,
			const skv_preset *p)
{
	const skv_format stage[] = {c->input, c->compute, c->p, c->partial, c->lse, c->combine, c->output};
	if (k <= SKV_PF_OUTPUT) {
		snprintf(buf, n, "%s", skv_format_name(stage[k]));
		return;
	}
	switch (k) {
	case SKV_PF_BASE: snprintf(buf, n, "%s", skv_lse_base_name(c->base)); break;
	case SKV_PF_BLOCKS: snprintf(buf, n, "%s", skv_blocks_name(c->blocks)); break;
	case SKV_PF_ACC: snprintf(buf, n, "%s", c->acc ? skv_format_name((skv_format)(c->acc - 1)) : "compute"); break;
	case SKV_PF_FORMULA: snprintf(buf, n, "%s", skv_formula_name(c->formula)); break;
	case SKV_PF_LANES: snprintf(buf, n, "%u x %u keys", c->lanes, c->lane_keys ? c->lane_keys : 1); break;
	case SKV_PF_MATH: snprintf(buf, n, "%s", skv_math_name(c->math)); break;
	case SKV_PF_MERGE: snprintf(buf, n, "%s", skv_merge_name(m->merge)); break;
	case SKV_PF_ORDER: snprintf(buf, n, "%s", skv_order_name(m->order)); break;
	case SKV_PF_THREADS: snprintf(buf, n, "%u", m->threads); break;
	case SKV_PF_EMPTY: snprintf(buf, n, "%s", skv_empty_name(m->empty)); break;
	case SKV_PF_ROUND_STATES: snprintf(buf, n, "%d", m->round_states); break;
	case SKV_PF_NORM: snprintf(buf, n, "%s", skv_norm_name(m->norm)); break;
	case SKV_PF_SYSTEM:
		snprintf(buf, n, "%s", p->system >= 0 ? skv_heur_name((skv_heur_system)p->system) : "none");
		break;
	case SKV_PF_TENSOR_CORES: snprintf(buf, n, "%s", p->tensor_cores ? "yes" : "no"); break;
	case SKV_PF_KV_CACHE:
		if (p->kv.format == 0)
			snprintf(buf, n, "none");
		else if (p->kv.k_scale > 0)
			snprintf(buf, n, "%s %s %g %s", skv_format_name((skv_format)(p->kv.format - 1)),
				 skv_kv_scale_name(p->kv.scale), p->kv.k_scale, skv_kv_deq_name(p->kv.deq));
		else
			snprintf(buf, n, "%s %s %s", skv_format_name((skv_format)(p->kv.format - 1)),
				 skv_kv_scale_name(p->kv.scale), skv_kv_deq_name(p->kv.deq));
		break;
	default: snprintf(buf, n, "?"); break;
	}
}

/* One preset: its description, then every field with its value, how it
 * was established and where. */
static void list_preset(FILE *f, const skv_preset *p)
{
	skv_config c;
	skv_merge_spec m;
	fprintf(f, "%s\n  ", p->name);
	cli_wrap(f, p->description, 2, 2, 96);
	if (skv_preset_resolve_full(&c, &m, p, p->cfg.input, 128) != SKV_OK) {
		fprintf(f, "  (does not resolve at head_dim 128)\n");
		return;
	}
	for (int k = 0; k < SKV_NPFIELDS; k++) {
		char v[64], line[1024];
		field_value(v, sizeof v, (skv_preset_field)k, &c, &m, p);
		const skv_source *s = skv_preset_source(p, (skv_preset_field)k);
		if (!s) {
			fprintf(f, "  %-13s %-16s\n", skv_preset_field_name((skv_preset_field)k), v);
			continue;
		}
		snprintf(line, sizeof line, "[%s] %s%s%s %s: %s", skv_src_status_name(s->status), s->repo,
			 *s->commit ? "@" : "", s->commit, s->where, s->note);
		fprintf(f, "  %-13s %-16s ", skv_preset_field_name((skv_preset_field)k), v);
		cli_wrap(f, line, 33, 33, 120);
	}
}

int list_main(int argc, char **argv, FILE *out, message *e)
{
	const char *what = argc > 1 ? argv[1] : NULL;
	if (argc > 2) {
		msg_set(e, "skv list: '%s': one argument at most (experiments, presets or a preset's name)", argv[2]);
		return SKV_EINVAL;
	}
	if (!what || strcmp(what, "experiments") == 0)
		list_experiments(out);
	if (!what)
		fprintf(out, "\npresets (--preset=NAME or --preset=all on any experiment; explicit flags override single "
			     "fields; [read] in the cited code, [inferred] from it and a rule, [assumed] skv's choice, "
			     "[defined] skv's own):\n\n");
	const skv_preset *one = what ? skv_preset_find(what) : NULL;
	if (what && !one && strcmp(what, "experiments") != 0 && strcmp(what, "presets") != 0) {
		msg_set(e, "skv list: '%s' is neither experiments, presets nor a preset", what);
		return SKV_EINVAL;
	}
	for (size_t i = 0; i < skv_preset_count(); i++) {
		const skv_preset *p = skv_preset_at(i);
		if (one ? p == one : !what || strcmp(what, "presets") == 0) {
			list_preset(out, p);
			fputc('\n', out);
		}
	}
	return ferror(out) ? SKV_EIO : SKV_OK;
}
