/* tensors_test.h - helpers of the tensor file tests: a temporary directory, files, exact comparisons, one-line error checks. */
#ifndef TENSORS_TEST_H
#define TENSORS_TEST_H
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "io/tensors.h"
#include "testutil.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static char dir[64] __attribute__((unused)), root[4096] __attribute__((unused));
/* The message of the last call; freed by teardown. */
static message err __attribute__((unused));

/* Makes the temporary directory; the repository is three levels above this
 * binary (B/tests/test_tensors), for the scripts of tests/data. */
static inline int setup(void **state)
{
	(void)state;
	ssize_t k = readlink("/proc/self/exe", root, sizeof root - 1);
	if (k <= 0)
		return -1;
	root[k] = 0;
	for (int up = 0; up < 3; up++) {
		char *s = strrchr(root, '/');
		if (!s)
			return -1;
		*s = 0;
	}
	snprintf(dir, sizeof dir, "/tmp/skv-tensors-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static inline int teardown(void **state)
{
	(void)state;
	char cmd[128];
	msg_free(&err);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static inline const char *in_dir(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
	return buf;
}

static inline void put_file(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* Bit-identical, or both NaN of the same sign (payloads are not kept). */
static inline int same(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b) && !signbit(a) == !signbit(b);
	return memcmp(&a, &b, sizeof a) == 0;
}

#define CHECK_SAME(what, i, got, want)                                                             \
	do {                                                                                       \
		double g_ = (got), w_ = (want);                                                    \
		if (!same(g_, w_))                                                                 \
			fail_msg("%s:%d: %s [%zu]: got %a, want %a", __FILE__, __LINE__, (what),     \
				 (size_t)(i), g_, w_);                                             \
	} while (0)

/* The status, and a message naming the file, the tensor and the problem. */
#define CHECK_ERR(st, want, file, tname, problem)                                                  \
	do {                                                                                       \
		int s_ = (st);                                                                     \
		char tn_[300] = "";                                                                \
		if (tname)                                                                         \
			snprintf(tn_, sizeof tn_, "tensor %s:", (const char *)(tname));            \
		const char *m_ = msg_text(&err);                                                   \
		if (s_ != (want) || !strstr(m_, (file)) || !strstr(m_, tn_) ||                     \
		    !strstr(m_, (problem)) || strchr(m_, '\n'))                                    \
			fail_msg("%s:%d: status %d (want %d), message \"%s\" (want %s, \"%s\", \"%s\")", \
				 __FILE__, __LINE__, s_, (want), m_, (file), tn_, (problem));       \
	} while (0)

#endif
