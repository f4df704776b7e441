/* grade_cli.c - `skv grade` and `skv export`: their flags, usage texts and entry points. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/grade_cmd.h"

void grade_usage(FILE *f)
{
	fputs("usage: skv grade [DUMP] [--prefix=P] [--manifest=FILE] [--NAME=FILE[:TENSOR]]... [--raw=FMT]\n"
	      "                 [--lse-base=e|2|auto] [--scale=X] [--format=text|csv|json]\n"
	      "                 [--identify [--presets=P,P,...] [--split-counts=N,N,...] [--layout=even|fa2]\n"
	      "                             [--block-size=B] [--math=exact|preset] [--math-seed=N] [--top=K]\n"
	      "                             [--gpus=all|GPU,GPU,...]]\n"
	      "\n"
	      "Grades one decode step of a real kernel against the exact attention of its own inputs as stored\n"
	      "(skv_truth_range, certified to 2^-100): the merged output and LSE (every error metric, with the\n"
	      "floor of its format: the exact values rounded once to it), each split's partial output and LSE\n"
	      "against that split's exact attention, and the merge alone (the given partials merged exactly,\n"
	      "against the given output and LSE), with the NaN and infinity counts.\n"
	      "\n"
	      "The tensors, by their conventional names (with one head the head axis may be left out):\n"
	      "  q [H, d]  k, v [Hkv, n, d] (H a multiple of Hkv; head h reads KV head h / (H / Hkv))\n"
	      "  partial_out [S, H, d]  partial_lse [S, H]  out [H, d]  lse [H]  splits [S + 1] (integers)\n"
	      "DUMP is a folder of NAME.npy files or one .safetensors file holding the names; --prefix=P reads the\n"
	      "outputs as P.NAME (what skv export writes). --manifest=FILE reads lines NAME = FILE[:TENSOR] and\n"
	      "raw, lse-base, scale (relative to its folder); --NAME=FILE[:TENSOR] names one tensor (TENSOR only\n"
	      "after a .safetensors FILE). Later sources override earlier ones: DUMP, the manifest, the flags.\n"
	      "--raw=bf16|f16|e4m3|e5m2: integer .npy elements of that width hold its bit patterns (numpy has no\n"
	      "bf16 or fp8). --lse-base: the LSEs' base; auto tells it from the values (base e when every LSE is\n"
	      "within a quarter of the bases' separation of the natural truth, base 2 likewise, refused\n"
	      "otherwise). --scale: the softmax scale (default 1/sqrt(d)).\n"
	      "\n"
	      "--identify runs every preset (or --presets) on the same inputs and split boundaries (without\n"
	      "splits in the dump: each count of --split-counts, cut by --layout, 1 by default) and ranks them by\n"
	      "agreement with the dump: bit-identical elements, then the median, 90th percentile and largest\n"
	      "ulp distance, then the normwise distance of out. The top is the emulation to sweep. Presets run\n"
	      "with correctly rounded math (--math=preset: their approximate-math bound model, seeded by\n"
	      "--math-seed), blocks of --block-size keys (128; llama.cpp CPU one key), q.k and P.V in IEEE fp32;\n"
	      "--gpus=all (or a list of v100, a100, ada, h100, b200) also runs each preset on tensor cores with\n"
	      "each GPU's model whose unit takes the input, ranked as PRESET@GPU. With --format=csv the\n"
	      "ranking is printed instead of the graded rows.\n"
	      "\n"
	      "exit status: 0 the report was printed, 1 a runtime failure, 2 bad usage or a bad file (one\n"
	      "line naming the file, the tensor and the problem).\n",
	      f);
}

void export_usage(FILE *f)
{
	fputs("usage: skv export --out=FILE.safetensors|DIR [--preset=P,P,...|all] [--ctx=N] [--head-dim=D]\n"
	      "                  [--heads=H] [--kv-heads=K] [--dist=D] [--score-scale=X] [--input=FMT] [--seed=S]\n"
	      "                  [--trial=T] [--splits=S] [--layout=L] [--block-size=B] [--split-size=N]\n"
	      "                  [--math=exact|preset] [--math-seed=N]\n"
	      "\n"
	      "Writes one skv problem, drawn as `skv run` draws trial T of seed S (the same flags and defaults;\n"
	      "with --heads=H --kv-heads=K each KV head draws its H/K query rows, KV head 0 from run's seed),\n"
	      "its split boundaries (--splits by --layout: even, random, skewed, holes, last-empty, fa2, fixed)\n"
	      "and, for each preset, the stored partials, their LSEs, the merged output and LSE, all as the\n"
	      "preset computes them (correctly rounded math unless --math=preset). FILE.safetensors gets every\n"
	      "tensor (q, k, v, splits, P.partial_out, P.partial_lse, P.out, P.lse) with the problem in its\n"
	      "metadata; DIR (new, or empty) gets NAME.npy files and P.manifest for skv grade --manifest.\n"
	      "skv grade FILE.safetensors --prefix=P grades preset P's tensors; scripts/device/ runs real\n"
	      "kernels on the same inputs.\n"
	      "\n"
	      "exit status: 0 written, 1 a runtime failure, 2 bad usage.\n",
	      f);
}

/* "skv: ..." from the parameter table becomes "skv CMD: ...". */
static int reprefix(message *e, const char *cmd, int st)
{
	const char *m = msg_text(e);
	if (strncmp(m, "skv: ", 5) != 0)
		return st;
	char *t = strdup(m + 5);
	if (t)
		msg_set(e, "skv %s: %s", cmd, t);
	free(t);
	return st;
}

/* A decimal or 0x hexadecimal integer, nothing else (no sign, no blank). */
static int parse_u64(uint64_t *v, const char *s)
{
	const int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *d = hex ? s + 2 : s;
	if (!*d || strspn(d, hex ? "0123456789abcdefABCDEF" : "0123456789") != strlen(d))
		return SKV_EINVAL;
	errno = 0;
	const unsigned long long u = strtoull(s, NULL, hex ? 16 : 10);
	if (errno == ERANGE)
		return SKV_EINVAL;
	*v = (uint64_t)u;
	return SKV_OK;
}

/* The KEY of "--KEY=VALUE" (eq points at the '='), cut at 63 bytes: longer
 * than any flag, so a cut key is still unknown. */
static void flag_key(char key[64], const char *s, const char *eq)
{
	const size_t n = (size_t)(eq - s - 2);
	snprintf(key, 64, "%.*s", (int)(n < 63 ? n : 63), s + 2);
}

static int bad_value(message *e, const char *cmd, const char *flag, const char *v, const char *want)
{
	msg_set(e, "skv %s: --%s=%s: expected %s", cmd, flag, v, want);
	return SKV_EINVAL;
}

/* --presets / --preset: names, comma-separated, or all. */
static int parse_presets(unsigned char *use, int *all, const char *cmd, const char *flag, const char *v, message *e)
{
	memset(use, 0, SKV_NPRESETS);
	*all = strcmp(v, "all") == 0;
	if (*all) { /* every preset without a KV cache: a cache preset's kernel is its base's (grade_identify) */
		for (size_t i = 0; i < skv_preset_count(); i++)
			use[i] = skv_preset_at(i)->kv.format == 0;
		return SKV_OK;
	}
	char *copy = strdup(v), *save = NULL;
	if (!copy)
		return SKV_ENOMEM;
	int st = SKV_OK, any = 0;
	for (char *t = strtok_r(copy, ",", &save); t && st == SKV_OK; t = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		while (i < skv_preset_count() && strcmp(skv_preset_at(i)->name, t) != 0)
			i++;
		if (i == skv_preset_count()) {
			msg_set(e, "skv %s: --%s: unknown preset '%s' (skv list shows them; or all)", cmd, flag, t);
			st = SKV_EINVAL;
		} else {
			use[i] = 1;
			any = 1;
		}
	}
	free(copy);
	if (st == SKV_OK && !any)
		return bad_value(e, cmd, flag, v, "preset names or all");
	return st;
}

static int parse_math(int *own, const char *cmd, const char *v, message *e)
{
	if (strcmp(v, "exact") != 0 && strcmp(v, "preset") != 0)
		return bad_value(e, cmd, "math", v, "exact or preset");
	*own = strcmp(v, "preset") == 0;
	return SKV_OK;
}

/* --------------------------------------------------------------- grade */

typedef struct {
	const char *dump, *prefix, *manifest, *tensor[GT_N], *raw, *base, *scale;
	int format, identify, help, id_only; /* id_only: an identify flag was given */
	uint64_t top;
	grade_emu_opts emu;
	size_t counts[64], ncounts;
	layout_id layout;
	unsigned char use[SKV_NPRESETS];
	int use_given;
	unsigned gpus; /* bit g: GPU model g tried on the tensor-core presets */
} grade_args;

/* --gpus: all, or GPU names, comma-separated (ieee is always run). */
static int grade_gpus(unsigned *gpus, const char *v, message *e)
{
	*gpus = 0;
	if (strcmp(v, "all") == 0) {
		*gpus = ((1u << SKV_NGPUS) - 1) & ~1u;
		return SKV_OK;
	}
	char *copy = strdup(v), *save = NULL;
	if (!copy)
		return SKV_ENOMEM;
	int st = SKV_OK;
	for (char *t = strtok_r(copy, ",", &save); t && st == SKV_OK; t = strtok_r(NULL, ",", &save)) {
		skv_gpu g;
		if (skv_gpu_parse(&g, t) != SKV_OK)
			st = bad_value(e, "grade", "gpus", v, "all or GPU names (v100, a100, ada, h100, b200), comma-separated");
		else
			*gpus |= g == SKV_GPU_IEEE ? 0 : 1u << g;
	}
	free(copy);
	return st;
}

static int grade_splits(grade_args *a, const char *v, message *e)
{
	char *copy = strdup(v), *save = NULL;
	if (!copy)
		return SKV_ENOMEM;
	int st = SKV_OK;
	a->ncounts = 0;
	for (char *t = strtok_r(copy, ",", &save); t && st == SKV_OK; t = strtok_r(NULL, ",", &save)) {
		uint64_t u;
		if (parse_u64(&u, t) != SKV_OK || u == 0 || u > (1u << 20) || a->ncounts == 64)
			st = bad_value(e, "grade", "split-counts", v, "at most 64 counts in [1, 1048576], comma-separated");
		else
			a->counts[a->ncounts++] = (size_t)u;
	}
	free(copy);
	if (st == SKV_OK && a->ncounts == 0)
		st = bad_value(e, "grade", "split-counts", v, "split counts, comma-separated");
	return st;
}

/* One --KEY=VALUE of grade's. */
static int grade_flag(grade_args *a, const char *k, const char *v, message *e)
{
	const int t = grade_tensor_find(k);
	param_value pv;
	if (t >= 0)
		a->tensor[t] = v;
	else if (strcmp(k, "prefix") == 0)
		a->prefix = v;
	else if (strcmp(k, "manifest") == 0)
		a->manifest = v;
	else if (strcmp(k, "raw") == 0)
		a->raw = v;
	else if (strcmp(k, "lse-base") == 0)
		a->base = v;
	else if (strcmp(k, "scale") == 0)
		a->scale = v;
	else if (strcmp(k, "format") == 0) {
		if (param_parse(&pv, P_FORMAT, v, e) != SKV_OK)
			return reprefix(e, "grade", SKV_EINVAL);
		a->format = (int)pv.u;
	} else if (strcmp(k, "split-counts") == 0) {
		a->id_only = 1;
		return grade_splits(a, v, e);
	} else if (strcmp(k, "presets") == 0) {
		int all;
		a->id_only = a->use_given = 1;
		return parse_presets(a->use, &all, "grade", k, v, e);
	} else if (strcmp(k, "layout") == 0) {
		a->id_only = 1;
		if (strcmp(v, "even") != 0 && strcmp(v, "fa2") != 0)
			return bad_value(e, "grade", k, v, "even or fa2");
		a->layout = strcmp(v, "fa2") == 0 ? LAYOUT_FA2 : LAYOUT_EVEN;
	} else if (strcmp(k, "block-size") == 0) {
		a->id_only = 1;
		if (param_parse(&pv, P_BLOCK_SIZE, v, e) != SKV_OK)
			return reprefix(e, "grade", SKV_EINVAL);
		a->emu.block = (size_t)pv.u;
	} else if (strcmp(k, "math") == 0) {
		a->id_only = 1;
		return parse_math(&a->emu.own_math, "grade", v, e);
	} else if (strcmp(k, "gpus") == 0) {
		a->id_only = 1;
		return grade_gpus(&a->gpus, v, e);
	} else if (strcmp(k, "math-seed") == 0 || strcmp(k, "top") == 0) {
		a->id_only = 1;
		if (parse_u64(k[0] == 't' ? &a->top : &a->emu.math_seed, v) != SKV_OK)
			return bad_value(e, "grade", k, v, "an unsigned integer");
	} else {
		msg_set(e, "skv grade: unknown option --%s (see skv grade --help)", k);
		return SKV_EINVAL;
	}
	return SKV_OK;
}

static int grade_parse(grade_args *a, int argc, char **argv, message *e)
{
	memset(a, 0, sizeof *a);
	a->emu.block = 128;
	a->layout = LAYOUT_EVEN;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
			a->help = 1;
			return SKV_OK;
		}
		if (strcmp(s, "--identify") == 0) {
			a->identify = 1;
			continue;
		}
		if (strncmp(s, "--", 2) != 0) {
			if (a->dump) {
				msg_set(e, "skv grade: one dump only ('%s' and '%s')", a->dump, s);
				return SKV_EINVAL;
			}
			a->dump = s;
			continue;
		}
		const char *eq = strchr(s, '=');
		if (!eq) {
			msg_set(e, "skv grade: %s needs a value (%s=...; see skv grade --help)", s, s);
			return SKV_EINVAL;
		}
		char key[64];
		flag_key(key, s, eq);
		const int st = grade_flag(a, key, eq + 1, e);
		if (st != SKV_OK)
			return st;
	}
	if (a->id_only && !a->identify) {
		msg_set(e, "skv grade: --presets, --split-counts, --layout, --block-size, --math, --math-seed and --top "
			   "are --identify's");
		return SKV_EINVAL;
	}
	return SKV_OK;
}

/* The sources in order: the dump, the manifest, the flags. */
static int grade_sources_of(grade_sources *s, const grade_args *a, message *e)
{
	int st = SKV_OK, any = 0;
	for (int id = 0; id < GT_N; id++)
		any |= a->tensor[id] != NULL;
	if (!a->dump && !a->manifest && !any) {
		msg_set(e, "skv grade: no dump given (a folder, a .safetensors file, --manifest=FILE or --q=FILE ...; "
			   "see skv grade --help)");
		return SKV_EINVAL;
	}
	if (a->prefix && !a->dump) {
		msg_set(e, "skv grade: --prefix=%s names the outputs of a DUMP, and none is given", a->prefix);
		return SKV_EINVAL;
	}
	if (a->dump)
		st = grade_sources_dump(s, a->dump, a->prefix, e);
	if (st == SKV_OK && a->manifest)
		st = grade_manifest_read(s, a->manifest, e);
	for (int id = 0; id < GT_N && st == SKV_OK; id++)
		if (a->tensor[id])
			st = grade_sources_set(s, id, a->tensor[id], NULL, e);
	/* raw, lse-base and scale as the manifest reads them */
	const char *keys[3] = {"raw", "lse-base", "scale"}, *vals[3] = {a->raw, a->base, a->scale};
	for (int k = 0; k < 3 && st == SKV_OK; k++) {
		if (!vals[k])
			continue;
		if ((st = grade_sources_option(s, keys[k], vals[k])) != SKV_OK)
			msg_set(e, "skv grade: --%s=%s: expected %s", keys[k], vals[k],
				k == 0 ? "bf16, f16, e4m3 or e5m2" : k == 1 ? "e, 2 or auto" : "a positive finite number");
	}
	return st;
}

static int grade_do(FILE *out, const grade_args *a, message *e)
{
	grade_sources s;
	grade_sources_init(&s);
	grade_dump dp = {0};
	grade_result r = {0};
	grade_ranking id = {0};
	const grade_id_opts io = {&a->emu, a->ncounts ? a->counts : NULL, a->ncounts, a->layout,
				  a->use_given ? a->use : NULL, a->gpus};
	int st = grade_sources_of(&s, a, e);
	if (st == SKV_OK)
		st = grade_load(&dp, &s, e);
	if (st == SKV_OK && a->identify && dp.bounds && a->ncounts) {
		msg_set(e, "skv grade: --split-counts=%zu...: the dump has its own splits (%zu); counts are for dumps without",
			a->counts[0], dp.S);
		st = SKV_EINVAL;
	}
	if (st == SKV_OK)
		st = grade_run(&r, &dp, e);
	if (st == SKV_OK && a->identify)
		st = grade_identify(&id, &dp, r.base, &io, e);
	if (st == SKV_OK) {
		const grade_report g = {a->dump ? a->dump : a->manifest ? a->manifest : "the tensors given", &dp, &r,
					a->identify ? &id : NULL, &io, (size_t)a->top};
		if (a->format == GRADE_CSV)
			grade_print_csv(out, &g);
		else if (a->format == GRADE_JSON)
			grade_print_json(out, &g);
		else
			grade_print_text(out, &g);
	}
	grade_ranking_free(&id);
	grade_result_free(&r);
	grade_dump_free(&dp);
	grade_sources_free(&s);
	return st;
}

int grade_main_io(int argc, char **argv, FILE *out, FILE *err)
{
	message e = {NULL};
	grade_args a;
	int st = grade_parse(&a, argc, argv, &e);
	if (st == SKV_OK && a.help) {
		grade_usage(out);
		return 0;
	}
	if (st == SKV_OK)
		st = grade_do(out, &a, &e);
	if (st != SKV_OK) {
		fprintf(err, "%s\n", msg_text(&e));
		msg_free(&e);
		return cli_exit_status(st);
	}
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(err, "skv grade: cannot write the report\n");
		return 1;
	}
	return 0;
}

int grade_main(int argc, char **argv) { return grade_main_io(argc, argv, stdout, stderr); }

/* -------------------------------------------------------------- export */

/* The flags export shares with skv run, by their parameters. */
static const int export_params[] = {P_CTX,    P_HEAD_DIM, P_DIST,       P_SCORE_SCALE, P_INPUT, P_SEED,
				    P_SPLITS, P_LAYOUT,   P_BLOCK_SIZE, P_SPLIT_SIZE,  P_HEADS, P_KV_HEADS};
#define NEXPORT_PARAMS (sizeof export_params / sizeof export_params[0])

static void export_set_param(export_opts *o, int id, param_value v)
{
	switch (id) {
	case P_CTX: o->ctx = (size_t)v.u; break;
	case P_HEAD_DIM: o->head_dim = (size_t)v.u; break;
	case P_DIST: o->dist = (skv_dist)v.u; break;
	case P_SCORE_SCALE: o->score_scale = v.r; break;
	case P_INPUT: o->input = (skv_format)v.u; break;
	case P_SEED: o->seed = v.u; break;
	case P_SPLITS: o->splits = (size_t)v.u; break;
	case P_LAYOUT: o->layout = (layout_id)v.u; break;
	case P_BLOCK_SIZE: o->block = (size_t)v.u; break;
	case P_SPLIT_SIZE: o->split_size = (size_t)v.u; break;
	case P_HEADS: o->heads = (size_t)v.u; break;
	default: o->kv_heads = (size_t)v.u; break;
	}
}

/* The table's defaults, but one head (skv run's problem). */
static void export_defaults(export_opts *o)
{
	memset(o, 0, sizeof *o);
	for (size_t i = 0; i < NEXPORT_PARAMS; i++) {
		param_value v;
		if (param_parse(&v, export_params[i], params[export_params[i]].def, NULL) == SKV_OK)
			export_set_param(o, export_params[i], v);
	}
	o->heads = 1;
	o->kv_heads = 0;
}

static int export_flag(export_opts *o, const char *k, const char *v, message *e)
{
	const int id = param_find(k);
	for (size_t i = 0; id >= 0 && i < NEXPORT_PARAMS; i++)
		if (export_params[i] == id) {
			param_value pv;
			if (param_parse(&pv, id, v, e) != SKV_OK)
				return reprefix(e, "export", SKV_EINVAL);
			export_set_param(o, id, pv);
			return SKV_OK;
		}
	if (strcmp(k, "out") == 0)
		o->out = v;
	else if (strcmp(k, "trial") == 0 || strcmp(k, "math-seed") == 0) {
		if (parse_u64(k[0] == 't' ? &o->trial : &o->emu.math_seed, v) != SKV_OK)
			return bad_value(e, "export", k, v, "an unsigned integer");
	} else if (strcmp(k, "preset") == 0)
		return parse_presets(o->use, &o->all, "export", k, v, e);
	else if (strcmp(k, "math") == 0)
		return parse_math(&o->emu.own_math, "export", v, e);
	else {
		msg_set(e, "skv export: unknown option --%s (see skv export --help)", k);
		return SKV_EINVAL;
	}
	return SKV_OK;
}

static int export_parse(export_opts *o, int *help, int argc, char **argv, message *e)
{
	export_defaults(o);
	*help = 0;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *eq = strchr(s, '=');
		if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
			*help = 1;
			return SKV_OK;
		}
		if (strncmp(s, "--", 2) != 0 || !eq) {
			msg_set(e, "skv export: '%s': expected --FLAG=VALUE (see skv export --help)", s);
			return SKV_EINVAL;
		}
		char key[64];
		flag_key(key, s, eq);
		const int st = export_flag(o, key, eq + 1, e);
		if (st != SKV_OK)
			return st;
	}
	if (!o->out) {
		msg_set(e, "skv export: no --out=FILE.safetensors or --out=DIR given");
		return SKV_EINVAL;
	}
	if (o->kv_heads == 0)
		o->kv_heads = o->heads;
	return SKV_OK;
}

int export_main_io(int argc, char **argv, FILE *out, FILE *err)
{
	message e = {NULL};
	export_opts o;
	int help;
	int st = export_parse(&o, &help, argc, argv, &e);
	if (st == SKV_OK && help) {
		export_usage(out);
		return 0;
	}
	char *cmd = NULL;
	size_t len = 4;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (st == SKV_OK && !(cmd = malloc(len)))
		st = SKV_ENOMEM;
	if (cmd) {
		strcpy(cmd, "skv");
		for (int i = 0; i < argc; i++)
			strcat(strcat(cmd, " "), argv[i]);
	}
	o.command = cmd;
	export_summary sum;
	if (st == SKV_OK)
		st = export_run(&sum, &o, &e);
	free(cmd);
	if (st != SKV_OK) {
		fprintf(err, "%s\n", msg_text(&e));
		msg_free(&e);
		return cli_exit_status(st);
	}
	fprintf(err, "skv export: ctx %zu, head_dim %zu, %zu head%s over %zu KV head%s, %zu split%s, %zu preset%s: "
		     "%zu tensors -> %s%s%s\n",
		o.ctx, o.head_dim, o.heads, o.heads == 1 ? "" : "s", o.kv_heads, o.kv_heads == 1 ? "" : "s", o.splits,
		o.splits == 1 ? "" : "s", sum.npresets, sum.npresets == 1 ? "" : "s", sum.ntensors, o.out,
		sum.nskipped ? "; skipped (they do not take this problem): " : "", sum.skipped);
	return 0;
}

int export_main(int argc, char **argv) { return export_main_io(argc, argv, stdout, stderr); }
