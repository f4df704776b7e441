/* grade_test.h - helpers of skv grade's and export's tests: graded dumps, the commands run in process, the data scripts. */
#ifndef GRADE_TEST_H
#define GRADE_TEST_H
#include <sys/wait.h>

#include "tensors_test.h"
#include "cli/grade_cmd.h"
#include "core/grade.h"

/* The call succeeds; otherwise its status and message. */
#define G_OK(call)                                                                                         \
	do {                                                                                               \
		int st_ = (call);                                                                          \
		if (st_ != SKV_OK)                                                                         \
			fail_msg("%s:%d: %s returned %d: %s", __FILE__, __LINE__, #call, st_, msg_text(&err)); \
	} while (0)

/* A dump read, graded and (optionally) identified. */
typedef struct {
	grade_sources s;
	grade_dump dp;
	grade_result r;
	grade_ranking id;
} graded;

static const grade_emu_opts exact_emu = {0, 0, 128, SKV_GPU_IEEE};

/* Grades dump (a folder or .safetensors file, outputs under prefix) or a
 * manifest, integer .npy elements read as raw's patterns; identify over
 * every preset when asked. */
static inline void grade_raw(graded *g, const char *dump, const char *prefix, const char *manifest, int identify,
			     tensor_dtype raw)
{
	memset(g, 0, sizeof *g);
	grade_sources_init(&g->s);
	g->s.raw = raw;
	if (dump)
		G_OK(grade_sources_dump(&g->s, dump, prefix, &err));
	if (manifest)
		G_OK(grade_manifest_read(&g->s, manifest, &err));
	G_OK(grade_load(&g->dp, &g->s, &err));
	G_OK(grade_run(&g->r, &g->dp, &err));
	if (identify) {
		const grade_id_opts io = {&exact_emu, NULL, 0, LAYOUT_EVEN, NULL, 0};
		G_OK(grade_identify(&g->id, &g->dp, g->r.base, &io, &err));
	}
}

static inline void grade_it(graded *g, const char *dump, const char *prefix, const char *manifest, int identify)
{
	grade_raw(g, dump, prefix, manifest, identify, TENSOR_NONE);
}

static inline void graded_free(graded *g)
{
	grade_ranking_free(&g->id);
	grade_result_free(&g->r);
	grade_dump_free(&g->dp);
	grade_sources_free(&g->s);
}

/* The row of item, head and split (GRADE_NO_SPLIT for the merged items). */
static inline const grade_row *row_of(const graded *g, int item, size_t head, size_t split)
{
	for (size_t i = 0; i < g->r.nrows; i++) {
		const grade_row *w = &g->r.rows[i];
		if (w->item == item && w->head == head && w->split == split)
			return w;
	}
	fail_msg("no row %s head %zu split %zu", grade_item_name(item), head, split);
	return NULL;
}

/* skv export's options as skv run's defaults give them, one head, every
 * preset, exact math. */
static inline export_opts export_defaults_for_test(const char *out)
{
	export_opts o;
	memset(&o, 0, sizeof o);
	o.ctx = 4096, o.head_dim = 128, o.heads = 1, o.kv_heads = 1, o.dist = SKV_DIST_GAUSSIAN;
	o.score_scale = 0.5, o.input = SKV_FP32, o.seed = 1, o.trial = 0, o.splits = 1, o.block = 128;
	o.layout = LAYOUT_EVEN, o.emu = exact_emu, o.out = out, o.command = "test";
	for (size_t i = 0; i < skv_preset_count(); i++) /* --preset=all: the presets without a KV cache */
		o.use[i] = skv_preset_at(i)->kv.format == 0;
	o.all = 1;
	return o;
}

/* The presets without a KV cache, which grade and export take for all (a
 * cache preset's kernel is its base preset's). */
static inline size_t no_kv_presets(void)
{
	size_t n = 0;
	for (size_t i = 0; i < skv_preset_count(); i++)
		n += skv_preset_at(i)->kv.format == 0;
	return n;
}

/* Of those, the ones that run on 16- and 32-bit tensors: not an 8-bit path
 * (fa3-fp8 takes e4m3 tensors only; export skips it by name there). */
static inline int exported_preset(const skv_preset *p)
{
	return p->kv.format == 0 && skv_format_bits(p->cfg.input) != 8;
}

static inline size_t exported_presets(void)
{
	size_t n = 0;
	for (size_t i = 0; i < skv_preset_count(); i++)
		n += exported_preset(skv_preset_at(i));
	return n;
}

/* Runs skv grade or skv export in this process: the exit status, with what
 * it printed on stdout and stderr (malloc'd, NUL-terminated). */
static inline int run_cmd(char **out, char **errtext, int export, char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	size_t no = 0, ne = 0;
	FILE *fo = open_memstream(out, &no), *fe = open_memstream(errtext, &ne);
	assert_non_null(fo);
	assert_non_null(fe);
	const int rc = export ? export_main_io(argc, argv, fo, fe) : grade_main_io(argc, argv, fo, fe);
	assert_int_equal(fclose(fo), 0);
	assert_int_equal(fclose(fe), 0);
	return rc;
}

/* Runs /usr/bin/python3 on a script of tests/data; skips the test when
 * python3 or numpy is missing (status 3). */
static inline void data_script(const char *name, const char *args)
{
	char cmd[16384];
	if (access("/usr/bin/python3", X_OK) != 0) {
		print_message("skipped: /usr/bin/python3 is missing\n");
		skip();
	}
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 -B '%s/tests/data/%s' %s", root, name, args);
	const int rc = system(cmd);
	if (WIFEXITED(rc) && WEXITSTATUS(rc) == 3) {
		print_message("skipped: numpy is missing (Debian: apt-get install python3-numpy)\n");
		skip();
	}
	assert_int_equal(rc, 0);
}

#endif
