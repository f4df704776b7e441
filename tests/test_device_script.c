/* test_device_script.c - scripts/device/run_kernels.py as far as a CPU allows: its file handling end to end through its python backend (graded by skv grade: out's error is its floor), its dry run, its argument and input checks, and the GPU backends refusing to run without PyTorch or CUDA. */
#include "fsutil.h"
#include "grade_test.h"

/* Runs the script with args; its status, stdout and stderr (malloc'd). */
static int script_run(char **out, char **errtext, const char *args)
{
	char cmd[8192], o[160], e[160];
	if (access("/usr/bin/python3", X_OK) != 0) {
		print_message("skipped: /usr/bin/python3 is missing\n");
		skip();
	}
	snprintf(o, sizeof o, "%s/script.out", dir);
	snprintf(e, sizeof e, "%s/script.err", dir);
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 -B '%s/scripts/device/run_kernels.py' %s >'%s' 2>'%s'", root, args,
		 o, e);
	const int rc = system(cmd);
	*out = fs_get(dir, "script.out", NULL);
	*errtext = fs_get(dir, "script.err", NULL);
	assert_non_null(*out);
	assert_non_null(*errtext);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static void export_problem(char *path, size_t n)
{
	export_opts o = export_defaults_for_test(in_dir(path, n, "p.safetensors"));
	o.ctx = 40, o.head_dim = 16, o.heads = 4, o.kv_heads = 2, o.splits = 2, o.input = SKV_BF16;
	memset(o.use, 0, sizeof o.use), o.all = 0;
	export_summary sum;
	G_OK(export_run(&sum, &o, &err));
}

/* The python backend writes what skv grade reads: the same q, k, v bits,
 * out the exact attention rounded once (error equal to its floor), lse to
 * float32, and metadata naming the backend and the source. */
static void test_python_backend(void **state)
{
	(void)state;
	char in[128], args[512], res[192], *out, *e;
	export_problem(in, sizeof in);
	snprintf(args, sizeof args, "'%s' '--out=%s/dev' --backends=python", in, dir);
	assert_int_equal(script_run(&out, &e, args), 0);
	snprintf(res, sizeof res, "%s/dev/p.python.safetensors\n", dir);
	assert_string_equal(out, res);
	free(out), free(e);
	res[strlen(res) - 1] = '\0';
	graded a;
	tensor_set x;
	grade_it(&a, res, NULL, NULL, 0);
	G_OK(safetensors_read(&x, in, NULL, &err));
	for (size_t i = 0; i < 4 * 16; i++)
		CHECK_SAME("q", i, a.dp.q[i], tensor_set_find(&x, "q")->values[i]);
	for (size_t i = 0; i < 2 * 40 * 16; i++)
		CHECK_SAME("v", i, a.dp.v[i], tensor_set_find(&x, "v")->values[i]);
	tensor_set_free(&x);
	assert_int_equal(a.dp.fmt[GT_OUT], SKV_BF16);
	assert_int_equal(a.dp.fmt[GT_LSE], SKV_FP32);
	for (size_t h = 0; h < 4; h++) {
		const grade_row *w = row_of(&a, GI_OUT, h, GRADE_NO_SPLIT);
		CHECK_SAME("out error = floor", h, w->err.max_abs, w->floor.max_abs);
		w = row_of(&a, GI_LSE, h, GRADE_NO_SPLIT);
		CHECK_SAME("lse error = floor", h, w->err.max_abs, w->floor.max_abs);
	}
	graded_free(&a);
	tensor_set s;
	G_OK(safetensors_read(&s, res, NULL, &err));
	size_t found = 0;
	for (size_t i = 0; i < s.nmeta; i++) {
		found += strcmp(s.meta[i].key, "backend") == 0 && strcmp(s.meta[i].value, "python") == 0;
		found += strcmp(s.meta[i].key, "source") == 0 && strcmp(s.meta[i].value, "p.safetensors") == 0;
		found += strcmp(s.meta[i].key, "date_utc") == 0;
	}
	assert_int_equal(found, 3);
	tensor_set_free(&s);
}

/* --dry-run reads and checks, prints the plan, writes nothing. */
static void test_dry_run(void **state)
{
	(void)state;
	char in[128], args[512], plan[400], *out, *e;
	export_problem(in, sizeof in);
	snprintf(args, sizeof args, "'%s' --dry-run '--out=%s/none'", in, dir);
	assert_int_equal(script_run(&out, &e, args), 0);
	snprintf(plan, sizeof plan, "%s: 4 query heads over 2 KV heads, 40 keys, head_dim 16, BF16, scale 0.25: would "
				    "run flash, efficient, flex\n", in);
	assert_string_equal(out, plan);
	struct stat st;
	snprintf(plan, sizeof plan, "%s/none", dir);
	assert_int_not_equal(stat(plan, &st), 0);
	free(out), free(e);
}

/* Bad arguments and inputs: status 2 and one line naming the problem; a
 * GPU backend where PyTorch or CUDA is missing: status 3, said so. */
static void test_refusals(void **state)
{
	(void)state;
	char in[128], txt[128], args[512], *out, *e;
	export_problem(in, sizeof in);
	put_file(in_dir(txt, sizeof txt, "notes.safetensors"), "hello", 5);
	tensor t;
	const size_t sh[2] = {2, 2};
	char onlyq[128];
	CHECK_OK(tensor_init(&t, "q", TENSOR_F32, 2, sh, (double[]){1, 2, 3, 4}, &err));
	CHECK_OK(safetensors_write(in_dir(onlyq, sizeof onlyq, "onlyq.safetensors"), &t, 1, NULL, 0, &err));
	tensor_free(&t);
	const struct {
		const char *fmt, *want;
	} cases[] = {
		{"'%s' --out=x --backends=flash,bogus", "--backends=flash,bogus: expected some of"},
		{"--out=x", "no input"},
		{"'%s'", "no --out=DIR given"},
		{"'%s' --out=x --frobnicate", "unknown option --frobnicate"},
		{"'/nonexistent/p.safetensors' --out=x", "cannot read"},
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		snprintf(args, sizeof args, cases[i].fmt, in);
		const int rc = script_run(&out, &e, args);
		if (rc != 2 || !strstr(e, cases[i].want) || strchr(e, '\n') != e + strlen(e) - 1)
			fail_msg("case %zu: status %d, stderr \"%s\" (want \"%s\")", i, rc, e, cases[i].want);
		free(out), free(e);
	}
	const char *files[2] = {txt, onlyq}, *wants[2] = {"truncated", "tensor k: missing"};
	for (int i = 0; i < 2; i++) {
		snprintf(args, sizeof args, "'%s' --out=x --dry-run", files[i]);
		assert_int_equal(script_run(&out, &e, args), 2);
		assert_non_null(strstr(e, wants[i]));
		free(out), free(e);
	}
	snprintf(args, sizeof args, "'%s' '--out=%s/gpu' --backends=flash", in, dir);
	const int rc = script_run(&out, &e, args);
	if (rc == 0) { /* a machine with PyTorch and CUDA: the kernel ran; skv grade reads it */
		char res[192];
		graded g;
		snprintf(res, sizeof res, "%s/gpu/p.flash.safetensors", dir);
		grade_it(&g, res, NULL, NULL, 0);
		graded_free(&g);
	} else if (rc != 3 || (!strstr(e, "PyTorch is not importable") && !strstr(e, "CUDA is not available"))) {
		fail_msg("the flash backend: status %d, \"%s\"", rc, e);
	}
	free(out), free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_backend),
		cmocka_unit_test(test_dry_run),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
