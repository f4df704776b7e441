/* rng_vec.h - internal template: the polar method's arithmetic on four lanes, one instance per instruction set. */

/*
 * Before each inclusion: RV(name) names the instance, RV_ATTR is its
 * function attribute (the target) and RV_SQRT(x) the correctly rounded
 * square root of each lane. Every lane does the IEEE operations of
 * lib/rng.c's scalar definitions in the same order (skv_rng_uniform,
 * skv_rng_log, skv_rng_normal), each correctly rounded, and the few steps
 * that differ are exact (proved where they stand), so every instance gives
 * the bits of the scalar code. -ffp-contract=off (the Makefile) keeps the
 * compiler from fusing a multiply and an add.
 */

/* u = 2 U - 1 for U = k 2^-53, k = x >> 11, the scalar skv_rng_uniform and
 * its caller. AVX2 has no 64-bit integer to double conversion, so: with
 * h = x >> 12 (k = 2 h + b, b = bit 11 of x), m = 1 + h 2^-52 (the bits of
 * 1.0 with h as significand) is exact, 2 m - 3 = h 2^-51 - 1 is exact (a
 * multiple of 2^-51 in [-1, 1)), and adding b 2^-52 is exact (a multiple of
 * 2^-52 in [-1, 1)): the sum is k 2^-52 - 1 = 2 U - 1, which the scalar
 * code also gets exactly (2 U is exact, and so is 2 U - 1 by the same
 * argument). Zero only for k = 2^52, as +0 in both (2 m - 3 = +0 and b =
 * 0). */
static RV_ATTR v4 RV(centred)(v4u x)
{
	const v4u one = (v4u){0, 0, 0, 0} + RV_ONE_BITS, lsb = (v4u){0, 0, 0, 0} + RV_ULP52_BITS;
	const v4 m = (v4)((x >> 12) | one);
	const v4 b = (v4)((((v4u){0, 0, 0, 0} - ((x >> 11) & 1))) & lsb);
	return (2.0 * m - 3.0) + b;
}

/* u, s = u^2 + v^2 of pairs i .. i + 3 and the acceptance mask (all ones
 * where 0 < s < 1), as the scalar loop of skv_rng_normal computes them. */
static RV_ATTR void RV(pairs)(double *uo, double *so, int64_t *acc, const uint64_t *xu, const uint64_t *xv,
			      size_t n)
{
	for (size_t i = 0; i < n; i += 4) {
		v4u a, b;
		memcpy(&a, xu + i, sizeof a);
		memcpy(&b, xv + i, sizeof b);
		const v4 u = RV(centred)(a), v = RV(centred)(b), s = u * u + v * v;
		const v4i ok = (s < 1.0) & (s != 0.0);
		memcpy(uo + i, &u, sizeof u);
		memcpy(so + i, &s, sizeof s);
		memcpy(acc + i, &ok, sizeof ok);
	}
}

/* skv_rng_log on lanes with 2^-1022 <= x < inf (the polar method's s lies
 * in [2^-104, 1)): the scalar code's normal path. The exponent e is a small
 * integer (|e| <= 1024), turned into a double exactly by the 2^52 trick:
 * the double with bits 0x433 << 52 | E is 2^52 + E exactly, so subtracting
 * 2^52 + 1023 gives E - 1023. The scalar code's e == 0 branch, f - A with
 * A = hfsq - s (hfsq + R), needs no lane of its own: with e = 0 the general
 * formula is +0 - ((hfsq - (s (hfsq + R) + 0)) - f) = -(A - f), the same
 * bits: y + 0 = y for y = s (hfsq + R) != 0, and y = 0 only for f = 0 (x =
 * 1), where both give +0; +0 - z = -z for z = A - f != 0, and -(A - f) = f -
 * A since RN is symmetric; when A = f both give +0. */
static RV_ATTR v4 RV(log)(v4 x)
{
	const v4u bits = (v4u)x, mant = (v4u){0, 0, 0, 0} + RV_MANT_MASK;
	const v4u one = (v4u){0, 0, 0, 0} + RV_ONE_BITS, magic = (v4u){0, 0, 0, 0} + RV_MAGIC_BITS;
	v4 m = (v4)((bits & mant) | one);
	v4 de = (v4)((bits >> 52) | magic) - RV_MAGIC_BIAS;
	const v4i big = m >= sqrt2;
	m = (v4)(((v4u)(m * 0.5) & (v4u)big) | ((v4u)m & ~(v4u)big));
	de = de + (v4)((v4u)(v4){1.0, 1.0, 1.0, 1.0} & (v4u)big);
	const v4 f = m - 1.0, s = f / (2.0 + f), z = s * s;
	const double *c = log_coef;
	const v4 z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
	const v4 R = z * ((c[0] + z * c[1]) + z2 * (c[2] + z * c[3]) + z4 * ((c[4] + z * c[5]) + z2 * (c[6] + z * c[7])) +
			  z8 * ((c[8] + z * c[9]) + z2 * c[10]));
	const v4 hfsq = 0.5 * f * f;
	return de * ln2_hi - ((hfsq - (s * (hfsq + R) + de * ln2_lo)) - f);
}

/* out[i] = u[i] sqrt(-2 log(s[i]) / s[i]) for i < n (n a multiple of 4). */
static RV_ATTR void RV(polar)(double *out, const double *u, const double *s, size_t n)
{
	for (size_t i = 0; i < n; i += 4) {
		v4 uu, ss;
		memcpy(&uu, u + i, sizeof uu);
		memcpy(&ss, s + i, sizeof ss);
		const v4 t = (-2.0 * RV(log)(ss)) / ss;
		const v4 o = uu * RV_SQRT(t);
		memcpy(out + i, &o, sizeof o);
	}
}
