/* test_reproduce.c - every default experiment's .meta `reproduce:` line rebuilds its CSV byte for byte, presets included (D2). */
#include "procutil.h"

static char *scratch;

/* The default suite's experiment names (experiments/default.suite, found
 * from build/skv: ../experiments). */
static size_t suite_names(char names[][64], size_t cap)
{
	char path[4300];
	snprintf(path, sizeof path, "%s", proc_skv());
	*strrchr(path, '/') = '\0'; /* build */
	strcat(path, "/../experiments/default.suite");
	char *text = fs_get("/", path + 1, NULL);
	if (!text)
		fail_msg("%s:%d: cannot read %s", __FILE__, __LINE__, path);
	size_t n = 0;
	for (char *l = strtok(text, "\n"); l && n < cap; l = strtok(NULL, "\n"))
		if (sscanf(l, "run %63s", names[n]) == 1)
			n++;
	free(text);
	return n;
}

/* The value of "key: value" in a .meta text, malloc'd. */
static char *meta_value(const char *meta, const char *key)
{
	size_t k = strlen(key);
	for (const char *l = meta; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, k) == 0 && l[k] == ':' && l[k + 1] == ' ')
			return strndup(l + k + 2, strcspn(l + k + 2, "\n"));
	return NULL;
}

/* Each default experiment at one trial (its own defaults otherwise) into
 * A; then the reproduce line of A's .meta, as a user would paste it, into
 * B; the two CSVs must be the same bytes. systems and empty-splits sweep
 * presets: a reproduce line that spelled out the preset-controlled fields
 * at the table's defaults would override every preset and measure another
 * configuration. */
static void test_reproduce_lines(void **state)
{
	(void)state;
	char names[32][64];
	size_t n = suite_names(names, 32);
	assert_true(n >= 8);
	for (size_t i = 0; i < n; i++) {
		char a[4200], b[4200], oa[4300];
		snprintf(a, sizeof a, "%s/%s-a", scratch, names[i]);
		snprintf(b, sizeof b, "%s/%s-b", scratch, names[i]);
		snprintf(oa, sizeof oa, "--out=%s", a);
		/* The two slowest at one trial cut further: what matters is that
		 * the line reproduces whatever was asked. */
		char *extra = strcmp(names[i], "block-size") == 0 ? "--causal=0"
			      : strcmp(names[i], "systems") == 0 ? "--splits=1,16"
								: "--seed=1";
		char *argv[] = {"skv", "run", names[i], "--trials=1", extra, oa, NULL};
		char *err = NULL;
		if (proc_run(argv, &err, NULL) != 0)
			fail_msg("%s:%d: skv run %s --trials=1: %s", __FILE__, __LINE__, names[i], err);
		free(err);
		char file[2200];
		snprintf(file, sizeof file, "%s.meta", names[i]);
		char *meta = fs_get(a, file, NULL), *line = meta ? meta_value(meta, "reproduce") : NULL;
		/* the program as typed from here, the checkout's root: build/skv */
		const char *run = line ? strstr(line, "skv run ") : NULL;
		if (!run || strcspn(line, " ") != (size_t)(run + 3 - line))
			fail_msg("%s:%d: %s/%s has no reproduce line", __FILE__, __LINE__, a, file);
		/* the line as printed, pasted where it was made */
		char *cmd = NULL;
		if (asprintf(&cmd, "%s --out='%s' 2>/dev/null", line, b) < 0)
			fail();
		int st = system(cmd);
		snprintf(file, sizeof file, "%s.csv", names[i]);
		size_t la = 0, lb = 0;
		char *ca = fs_get(a, file, &la), *cb = fs_get(b, file, &lb);
		if (st != 0 || !ca || !cb || la != lb || memcmp(ca, cb, la) != 0)
			fail_msg("%s:%d: %s: the reproduce line (%s) gave status %d and a CSV of %zu bytes that differs from "
				 "the original's %zu",
				 __FILE__, __LINE__, names[i], line, st, lb, la);
		free(ca), free(cb), free(cmd), free(line), free(meta);
	}
}

static int setup(void **state)
{
	(void)state;
	scratch = fs_tmpdir("reproduce");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rmtree(scratch);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reproduce_lines),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
