/* seeds.c - the one seed rule: the problem, the random layout and the random order of trial t, from the base seed. */
#include "core/core.h"

/*
 * Trial t of a run with base seed S uses
 *   problem seed  P = skv_seed_mix(S, t)      (skv_problem_init)
 *   layout seed     skv_seed_mix(P, 1)        (the random layout's cuts)
 *   order seed      skv_seed_mix(P, 2)        (the random reduction order)
 *   math seed       skv_seed_mix(P, 3)        (the approximate-math bound model)
 * so one CSV row is reproduced from its seed and trial columns alone, and
 * every variant of a trial (formats, merges, orders) sees the same problem.
 */
uint64_t seed_problem(uint64_t seed, uint64_t trial) { return skv_seed_mix(seed, trial); }

uint64_t seed_layout(uint64_t seed, uint64_t trial) { return skv_seed_mix(seed_problem(seed, trial), 1); }

uint64_t seed_order(uint64_t seed, uint64_t trial) { return skv_seed_mix(seed_problem(seed, trial), 2); }

uint64_t seed_math(uint64_t seed, uint64_t trial) { return skv_seed_mix(seed_problem(seed, trial), 3); }
