/* rng_internal.h - internal: the batched normal generator with its instruction set chosen by the caller (for the tests). */
#ifndef SKV_RNG_INTERNAL_H
#define SKV_RNG_INTERNAL_H
#include <stddef.h>

#include "skv.h"

/* skv_rng_normals with the portable loops when generic is nonzero, else
 * the AVX2 loops where the CPU has them (what skv_rng_normals does). Both
 * give the bits of n calls of skv_rng_normal. */
int skv_rng_normals_isa(double *out, size_t n, skv_rng *r, int generic);

#endif
