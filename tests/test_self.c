/* test_self.c - the program a rerun command names: build/skv from a checkout's root, its absolute path elsewhere, skv when PATH finds this copy. */
#include "procutil.h"

#include "io/self.h"

/* This binary's build folder (ROOT/B for ROOT/B/tests/test_self) and ROOT. */
static char build[4096], root[4096];

static void find_dirs(void)
{
	ssize_t k = readlink("/proc/self/exe", build, sizeof build - 1);
	assert_true(k > 0);
	build[k] = '\0';
	for (int i = 0; i < 2; i++)
		*strrchr(build, '/') = '\0';
	snprintf(root, sizeof root, "%s", build);
	*strrchr(root, '/') = '\0';
}

/* In the checkout: ROOT/B/skv, relative from ROOT ("build/skv" for make
 * check, "build-san/skv" for make sanitize), absolute from elsewhere. */
static void test_checkout(void **state)
{
	(void)state;
	char here[4096], got[4096], want[4200];
	assert_non_null(getcwd(here, sizeof here));
	assert_int_equal(chdir(root), 0);
	snprintf(want, sizeof want, "%s/skv", strrchr(build, '/') + 1);
	assert_string_equal(self_program(got, sizeof got), want);
	/* elsewhere: a fresh folder, never above the checkout (which may itself
	 * lie under /tmp, as a CI clone can) */
	char away[] = "/tmp/skv-self-XXXXXX";
	assert_non_null(mkdtemp(away));
	assert_int_equal(chdir(away), 0);
	snprintf(want, sizeof want, "%s/skv", build);
	assert_string_equal(self_program(got, sizeof got), want);
	assert_int_equal(chdir(here), 0);
	assert_int_equal(rmdir(away), 0);
}

static void test_shown_path(void **state)
{
	(void)state;
	char here[4096], got[4096];
	assert_non_null(getcwd(here, sizeof here));
	assert_int_equal(chdir(root), 0);
	char p[4200];
	snprintf(p, sizeof p, "%s/scripts/", root);
	assert_string_equal(self_shown_path(got, sizeof got, p), "scripts/");
	/* a sibling whose name starts like the folder is not under it */
	snprintf(p, sizeof p, "%sx/scripts/", root);
	assert_string_equal(self_shown_path(got, sizeof got, p), p);
	assert_string_equal(self_shown_path(got, sizeof got, "/usr/local/share/skv/"), "/usr/local/share/skv/");
	/* the folder itself stays as it is */
	assert_string_equal(self_shown_path(got, sizeof got, root), root);
	assert_int_equal(chdir(here), 0);
}

/* The reproduce line of DIR/merge-rule.meta after running skv at `prog`
 * with PATH set to `path`, from folder cwd. */
static char *reproduce_of(const char *prog, const char *path, const char *cwd, const char *dir)
{
	char cmd[16384];
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && PATH='%s' '%s' run merge-rule --ctx=64 --head-dim=4 --splits=2 --trials=1 --out='%s' "
		 ">/dev/null 2>&1",
		 cwd, path, prog, dir);
	if (system(cmd) != 0)
		fail_msg("%s:%d: `%s` failed", __FILE__, __LINE__, cmd);
	char *meta = fs_get(dir, "merge-rule.meta", NULL);
	assert_non_null(meta);
	char *line = strstr(meta, "\nreproduce: ");
	assert_non_null(line);
	line += strlen("\nreproduce: ");
	line[strcspn(line, " ")] = '\0';
	char *r = strdup(line);
	free(meta);
	return r;
}

/* A copy of skv outside any checkout: "skv" when PATH finds that copy,
 * its absolute path when PATH finds none or another one. */
static void test_installed_copy(void **state)
{
	(void)state;
	char *d = fs_tmpdir("self");
	char bin[4200], prog[4300], out[4300], cmd[16384], path[8800];
	snprintf(bin, sizeof bin, "%s/bin", d);
	snprintf(prog, sizeof prog, "%s/skv", bin);
	snprintf(out, sizeof out, "%s/r", d);
	snprintf(cmd, sizeof cmd, "mkdir '%s' && cp '%s' '%s'", bin, proc_skv(), prog);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof path, "%s:/usr/bin:/bin", bin);
	char *r = reproduce_of(prog, path, "/tmp", out);
	assert_string_equal(r, "skv");
	free(r);
	r = reproduce_of(prog, "/usr/bin:/bin", "/tmp", out);
	assert_string_equal(r, prog);
	free(r);
	/* PATH's first skv is the checkout's, not this copy */
	snprintf(path, sizeof path, "%s:%s", build, bin);
	r = reproduce_of(prog, path, "/tmp", out);
	assert_string_equal(r, prog);
	free(r);
	/* the checkout's own skv from its root: build/skv, whatever PATH says */
	snprintf(path, sizeof path, "%s:/usr/bin:/bin", build);
	r = reproduce_of(proc_skv(), path, root, out);
	char want[4200];
	snprintf(want, sizeof want, "%s/skv", strrchr(build, '/') + 1);
	assert_string_equal(r, want);
	free(r);
	fs_rmtree(d);
}

int main(void)
{
	find_dirs();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkout),
		cmocka_unit_test(test_shown_path),
		cmocka_unit_test(test_installed_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
