/* expect.h - test support: the tests' own random generator and bit-for-bit checks that print hex floats with file:line. */
#ifndef SKV_EXPECT_H
#define SKV_EXPECT_H

/* Include after cmocka.h (print_error) and ref_mpfr.h (ref_same). */

#include <stdint.h>
#include <string.h>

#include "skv.h"

/* Failures print at most this many lines per test, then the count. */
enum { MAX_REPORTS = 10 };

/* Splitmix64 (Steele, Lea, Flood 2014), local so the tests do not depend on
 * the library's generator. */
static inline uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline double from_bits(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* Records one mismatch: prints it (with the caller's file:line) while few. */
static inline void mismatch(long *nfail, const char *file, int line, const char *what, skv_format f, double x,
			    double got, double want)
{
	if (++*nfail <= MAX_REPORTS)
		print_error("%s:%d: %s %s: x = %a: got %a, want %a\n", file, line, what, skv_format_name(f), x,
			    got, want);
}
#define EXPECT(nfail, what, f, x, got, want)                                                        \
	do {                                                                                        \
		double got_ = (got), want_ = (want);                                                \
		if (!ref_same(got_, want_))                                                         \
			mismatch(&(nfail), __FILE__, __LINE__, (what), (f), (x), got_, want_);      \
	} while (0)

#endif
