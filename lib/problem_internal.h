/* problem_internal.h - internal: packing K and V exactly in a store, and a streaming reader of key rows as doubles for any store. */
#ifndef SKV_PROBLEM_INTERNAL_H
#define SKV_PROBLEM_INTERNAL_H
#include <stddef.h>

#include "skv.h"

/* dst[0..n) = x[0..n) in store s's encoding, each x a value of the store
 * (exact: lib/problem_pack.c). */
void skv_pack_encode(void *dst, skv_store s, const double *x, size_t n);
/* dst[0..n) = the doubles of src[0..n) in store s (exact). */
void skv_pack_decode(double *dst, skv_store s, const void *src, size_t n);
/* skv_pack_decode without F16C (for the tests: both give the same values). */
void skv_pack_decode_portable(double *dst, skv_store s, const void *src, size_t n);
/* K and V of a problem wherever they are, as the readers take them: a
 * double problem's arrays (store SKV_STORE_F64) or a packed one's. */
typedef struct {
	const skv_problem *p; /* nq, n, d, q, scale */
	skv_store store;
	const void *k, *v;
} skv_kv;

static inline skv_kv skv_kv_plain(const skv_problem *p) { return (skv_kv){p, SKV_STORE_F64, p->k, p->v}; }
static inline skv_kv skv_kv_packed(const skv_packed *p) { return (skv_kv){&p->prob, p->store, p->k, p->v}; }
/* Whether s has a known store and both arrays. */
int skv_kv_ok(const skv_kv *s);
/* skv_packed_rows on a valid s and range (no checks). */
void skv_kv_rows(double *k, double *v, const skv_kv *s, size_t lo, size_t hi);

/* Keys per decoded chunk of a reader: 64 rows of d doubles (64 KiB at d =
 * 128), so chunks stay in L2 and a row read back soon after is still there. */
#define SKV_ROWS_CHUNK 64

/* A reader of key rows lo .. hi-1 as doubles. A double problem's rows are
 * its own arrays (no copy); a packed problem's are decoded a chunk at a
 * time into kb and vb, so any number of keys costs O(SKV_ROWS_CHUNK d)
 * memory. A returned row stays valid until the next call for the same
 * side (K or V). */
typedef struct {
	const skv_kv *s;
	size_t lo, hi;
	size_t k0, kn, v0, vn; /* first key and count of the decoded chunks */
	double *kb, *vb;       /* NULL for doubles */
} skv_rows;

/* SKV_OK or SKV_ENOMEM; lo <= hi <= n and skv_kv_ok(s) are the caller's to
 * check; s must outlive the reader. */
int skv_rows_open(skv_rows *r, const skv_kv *s, size_t lo, size_t hi);
void skv_rows_close(skv_rows *r);
/* Decodes the chunk of side v (0: K, 1: V) that holds key lo + j. */
void skv_rows_fill(skv_rows *r, int v, size_t j);

/* Whether the rows are a double problem's own: row j + 1 then follows row
 * j in memory and every returned row stays valid. */
static inline int skv_rows_plain(const skv_rows *r) { return !r->kb; }

/* Key lo + j (j < hi - lo) of K, as d doubles. */
static inline const double *skv_rows_k(skv_rows *r, size_t j)
{
	const size_t d = r->s->p->d;
	if (!r->kb)
		return (const double *)r->s->k + (r->lo + j) * d;
	if (j - r->k0 >= r->kn)
		skv_rows_fill(r, 0, j);
	return r->kb + (j - r->k0) * d;
}

/* Key lo + j of V, as d doubles. */
static inline const double *skv_rows_v(skv_rows *r, size_t j)
{
	const size_t d = r->s->p->d;
	if (!r->vb)
		return (const double *)r->s->v + (r->lo + j) * d;
	if (j - r->v0 >= r->vn)
		skv_rows_fill(r, 1, j);
	return r->vb + (j - r->v0) * d;
}

#endif
