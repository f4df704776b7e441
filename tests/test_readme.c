/* test_readme.c - the README's examples run as shown: the C program's output, skv recommend's table, and make install with pkg-config. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static char build[4096], root[4096];

/* build/ is two levels above this binary (build/tests/test_readme), the
 * repository one above build/. */
static int find_dirs(void)
{
	ssize_t k = readlink("/proc/self/exe", build, sizeof build - 1);
	if (k <= 0)
		return 0;
	build[k] = '\0';
	for (int up = 0; up < 2; up++) {
		char *s = strrchr(build, '/');
		if (!s)
			return 0;
		*s = '\0';
	}
	strcpy(root, build);
	char *s = strrchr(root, '/');
	if (!s)
		return 0;
	*s = '\0';
	return 1;
}

/* Everything left in f, NUL-terminated; NULL when out of memory. */
static char *read_all(FILE *f)
{
	size_t cap = 1 << 16, n = 0, r;
	char *b = malloc(cap);
	while (b && (r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	if (b)
		b[n] = '\0';
	return b;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *b = read_all(f);
	fclose(f);
	return b;
}

/* The text between the first line "```TAG" after `after` and the next "```". */
static char *block_after(const char *doc, const char *after, const char *tag)
{
	const char *p = strstr(doc, after);
	if (!p)
		return NULL;
	char fence[32];
	snprintf(fence, sizeof fence, "\n```%s\n", tag);
	p = strstr(p, fence);
	if (!p)
		return NULL;
	p += strlen(fence);
	const char *e = strstr(p, "```");
	if (!e)
		return NULL;
	char *b = malloc((size_t)(e - p) + 1);
	memcpy(b, p, (size_t)(e - p));
	b[e - p] = '\0';
	return b;
}

static char *run(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	if (!f)
		return NULL;
	char *b = read_all(f);
	int st = pclose(f);
	if (st != 0) {
		print_error("%s:%d: `%s` exited with %d\n", __FILE__, __LINE__, cmd, st);
		free(b);
		return NULL;
	}
	return b;
}

static void test_merge_example(void **state)
{
	(void)state;
	char path[8192], cmd[65536], dir[] = "/tmp/skv-readme-XXXXXX";
	snprintf(path, sizeof path, "%s/README.md", root);
	char *doc = slurp(path);
	assert_non_null(doc);
	char *code = block_after(doc, "### Example: merging split partials", "c");
	const char *ex = strstr(doc, "### Example: merging split partials");
	assert_non_null(ex);
	char *want = block_after(ex, "\nprints\n", "");
	assert_non_null(code);
	assert_non_null(want);
	assert_non_null(strstr(code, "skv_merge_partials("));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/example.c", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(code, f);
	fclose(f);
	/* link the way the library was built (with the sanitizers under make sanitize) */
#if defined(__SANITIZE_ADDRESS__)
	const char *san = "-fsanitize=address,undefined";
#else
	const char *san = "";
#endif
	snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror %s -I'%s/lib' -o '%s/example' '%s' '%s/libskv.a' "
		 "-lmpfr -lgmp -lm -fopenmp && '%s/example'",
		 san, root, dir, path, build, dir);
	char *got = run(cmd);
	assert_non_null(got);
	if (strcmp(got, want) != 0)
		fail_msg("%s:%d: README example printed\n%s\nbut the README shows\n%s", __FILE__, __LINE__, got, want);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(got);
	free(code);
	free(want);
	free(doc);
}

/* The recommend example: the same command prints the same table. */
static void test_recommend_example(void **state)
{
	(void)state;
	char path[8192], cmd[65536];
	snprintf(path, sizeof path, "%s/README.md", root);
	char *doc = slurp(path);
	assert_non_null(doc);
	char *block = block_after(doc, "### Choosing a split count", "");
	assert_non_null(block);
	const char *prefix = "$ build/skv recommend ";
	assert_true(strncmp(block, prefix, strlen(prefix)) == 0);
	char *nl = strchr(block, '\n');
	assert_non_null(nl);
	*nl = '\0';
	snprintf(cmd, sizeof cmd, "'%s/skv' recommend %s", build, block + strlen(prefix));
	char *got = run(cmd);
	assert_non_null(got);
	if (strcmp(got, nl + 1) != 0)
		fail_msg("%s:%d: `%s` printed\n%s\nbut the README shows\n%s", __FILE__, __LINE__, cmd, got, nl + 1);
	free(got);
	free(block);
	free(doc);
}

/*
 * make install into a temporary prefix: the README's C example builds with
 * `pkg-config --cflags --libs skv` against the shared library (its soname
 * libskv.so.0) and against the static one, and prints what the README
 * shows; the installed program runs, finds its chart scripts in
 * PREFIX/share/skv and draws a chart; the man page renders; make uninstall
 * leaves no file behind. Not under the sanitizers: the installed library is
 * the plain build's.
 */
static void test_install(void **state)
{
	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	skip();
#else
	char path[8192], cmd[65536], dir[] = "/tmp/skv-install-XXXXXX";
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof cmd, "make -s --no-print-directory -C '%s' install B='%s' PREFIX='%s/p' >/dev/null", root,
		 build, dir);
	char *got = run(cmd);
	assert_non_null(got);
	free(got);
	snprintf(path, sizeof path, "%s/README.md", root);
	char *doc = slurp(path);
	assert_non_null(doc);
	const char *ex = strstr(doc, "### Example: merging split partials");
	assert_non_null(ex);
	char *code = block_after(doc, "### Example: merging split partials", "c"), *want = block_after(ex, "\nprints\n", "");
	assert_non_null(code);
	assert_non_null(want);
	snprintf(path, sizeof path, "%s/example.c", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(code, f);
	fclose(f);
	const char *link[2] = {
		"$(pkg-config --cflags --libs skv)",
		"$(pkg-config --cflags skv) \"$P/lib/libskv.a\" $(pkg-config --libs-only-l mpfr gmp) -lm -fopenmp"};
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof cmd,
			 "P='%s/p'; export PKG_CONFIG_PATH=\"$P/lib/pkgconfig\"; "
			 "cc -std=c11 -Wall -Wextra -Werror -o '%s/ex%d' '%s' %s && "
			 "LD_LIBRARY_PATH=\"$P/lib\" '%s/ex%d'",
			 dir, dir, k, path, link[k], dir, k);
		got = run(cmd);
		assert_non_null(got);
		if (strcmp(got, want) != 0)
			fail_msg("%s:%d: installed example (%s) printed\n%s", __FILE__, __LINE__, k ? "static" : "shared", got);
		free(got);
	}
	snprintf(cmd, sizeof cmd, "readelf -d '%s/ex0' | grep -c 'NEEDED.*libskv.so.0'", dir);
	got = run(cmd);
	assert_non_null(got);
	assert_string_equal(got, "1\n");
	free(got);
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && p/bin/skv --version && groff -man -Tutf8 -ww -z p/share/man/man1/skv.1 && "
		 "p/bin/skv run merge-rule --ctx=64 --head-dim=4 --splits=2 --trials=1 --out=r >/dev/null 2>&1 && "
		 "(! command -v gnuplot >/dev/null || (p/bin/skv report r >/dev/null 2>&1 && test -s r/merge-rule.png))",
		 dir);
	got = run(cmd);
	assert_non_null(got);
	assert_non_null(strstr(got, "skv "));
	free(got);
	snprintf(cmd, sizeof cmd,
		 "make -s --no-print-directory -C '%s' uninstall B='%s' PREFIX='%s/p' >/dev/null && "
		 "find '%s/p' -type f -o -type l | wc -l",
		 root, build, dir, dir);
	got = run(cmd);
	assert_non_null(got);
	assert_string_equal(got, "0\n");
	free(got);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(code);
	free(want);
	free(doc);
#endif
}

int main(void)
{
	if (!find_dirs()) {
		fprintf(stderr, "test_readme: cannot locate the build folder\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_example),
		cmocka_unit_test(test_recommend_example),
		cmocka_unit_test(test_install),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
