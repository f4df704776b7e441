/* truth_kern.h - internal template: the fast truth's vector loops, one instance per instruction set. */

/*
 * Before each inclusion: KERN(name) names the instance, KERN_ATTR is its
 * function attribute (the target), VFMA(a, b, c) is a b + c rounded once
 * per element. Every instance does the same IEEE operations in the same
 * order on four lanes (a lane i mod 4 of the dimension), so instances
 * differ in speed only: fma is correctly rounded wherever it comes from.
 * What each loop computes, and why the bounds of lib/truth_fast.c hold for
 * it, is stated there; TWO_SUM is Knuth's error-free sum (Knuth, TAOCP vol.
 * 2, 4.2.2, Theorem B): s + t = a + b exactly with s = RN(a + b), t = RN of
 * the rest, for any finite a, b whose sum does not overflow.
 */

/* The last d % 4 values of p into x, zeros above (p[0..n), 0 < n < 4). */
#define LOAD_TAIL(x, p, n)                                                                              \
	do {                                                                                            \
		double t_[4] = {0, 0, 0, 0};                                                            \
		memcpy(t_, (p), (n) * sizeof(double));                                                  \
		memcpy(&(x), t_, sizeof(v4));                                                           \
	} while (0)

/* The loop over full vectors, then the tail, both running STEP(x, i) on
 * the vector x of src at i. */
#define FOR_VECTORS(src, d, STEP)                                                                       \
	do {                                                                                            \
		size_t i_ = 0;                                                                          \
		for (; i_ + 4 <= (d); i_ += 4) {                                                        \
			v4 x_;                                                                          \
			memcpy(&x_, (src) + i_, sizeof x_);                                             \
			STEP(x_, i_);                                                                   \
		}                                                                                       \
		if (i_ < (d)) {                                                                         \
			v4 x_;                                                                          \
			LOAD_TAIL(x_, (src) + i_, (d) - i_);                                            \
			STEP(x_, i_);                                                                   \
		}                                                                                       \
	} while (0)

#define TWO_SUM(s, t, a, b)                                                                             \
	do {                                                                                            \
		const v4 a_ = (a), b_ = (b), s_ = a_ + b_, bb_ = s_ - a_;                               \
		(t) = (a_ - (s_ - bb_)) + (b_ - bb_);                                                   \
		(s) = s_;                                                                               \
	} while (0)

/* Pass 1: a plain double dot product (to pick the reference key) and the sum
 * of |q_i k_i| (for the error bound), lane by lane, then lanes (0 + 1) +
 * (2 + 3). The tail of k is read into a zeroed vector (q4 is zero there). */
static KERN_ATTR void KERN(scan)(double *dot, double *abs, const double *q4, const double *aq4,
				 const double *k, size_t d)
{
	v4 s = {0, 0, 0, 0}, a = {0, 0, 0, 0};
#define SCAN_STEP(kk, i)                                                                                \
	do {                                                                                            \
		v4 qq, aq;                                                                              \
		memcpy(&qq, q4 + (i), sizeof qq);                                                       \
		memcpy(&aq, aq4 + (i), sizeof aq);                                                      \
		s = s + qq * (kk);                                                                      \
		a = a + aq * V4ABS(kk);                                                                 \
	} while (0)
	FOR_VECTORS(k, d, SCAN_STEP);
#undef SCAN_STEP
	*dot = (s[0] + s[1]) + (s[2] + s[3]);
	*abs = (a[0] + a[1]) + (a[2] + a[3]);
}

/* q . k as three levels per lane: p + e = q_i k_i exactly (TwoProd by fma),
 * level 0 takes p by TwoSum, level 1 takes e and level 0's error by TwoSum,
 * level 2 adds level 1's errors. */
static KERN_ATTR void KERN(dot3)(double *lanes, const double *q4, const double *k, size_t d)
{
	v4 s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0;
#define DOT3_STEP(kk, i)                                                                                \
	do {                                                                                            \
		v4 qq, t0, t1, t2;                                                                      \
		memcpy(&qq, q4 + (i), sizeof qq);                                                       \
		const v4 p = qq * (kk), e = VFMA(qq, (kk), -p);                                         \
		TWO_SUM(s0, t0, s0, p);                                                                 \
		TWO_SUM(s1, t1, s1, e);                                                                 \
		TWO_SUM(s1, t2, s1, t0);                                                                \
		s2 = s2 + t1;                                                                           \
		s2 = s2 + t2;                                                                           \
	} while (0)
	FOR_VECTORS(k, d, DOT3_STEP);
#undef DOT3_STEP
	memcpy(lanes, &s0, sizeof s0);
	memcpy(lanes + 4, &s1, sizeof s1);
	memcpy(lanes + 8, &s2, sizeof s2);
}

/* (s0, s1, s2) += (w0 + w1 + w2) v, per dimension: a0 + a1 = w0 v and b0 + b1
 * = w1 v exactly (TwoProd), c0 = RN(w2 v); level 0 takes a0, level 1 takes
 * a1, b0 and level 0's error, level 2 adds level 1's errors, b1 and c0.
 * a += RN(RN(w0 |v|)) bounds the sum of |w v| for the error bound. */
static KERN_ATTR void KERN(accum)(double *s0, double *s1, double *s2, double *a, const double *v,
				  size_t d, double w0, double w1, double w2)
{
	const v4 W0 = {w0, w0, w0, w0}, W1 = {w1, w1, w1, w1}, W2 = {w2, w2, w2, w2};
#define ACCUM_STEP(vv, i)                                                                               \
	do {                                                                                            \
		v4 S0, S1, S2, A, t0, t1, t2, t3;                                                       \
		memcpy(&S0, s0 + (i), sizeof S0);                                                       \
		memcpy(&S1, s1 + (i), sizeof S1);                                                       \
		memcpy(&S2, s2 + (i), sizeof S2);                                                       \
		memcpy(&A, a + (i), sizeof A);                                                          \
		const v4 a0 = W0 * (vv), a1 = VFMA(W0, (vv), -a0);                                      \
		const v4 b0 = W1 * (vv), b1 = VFMA(W1, (vv), -b0), c0 = W2 * (vv);                      \
		TWO_SUM(S0, t0, S0, a0);                                                                \
		TWO_SUM(S1, t1, S1, a1);                                                                \
		TWO_SUM(S1, t2, S1, b0);                                                                \
		TWO_SUM(S1, t3, S1, t0);                                                                \
		S2 = S2 + t1;                                                                           \
		S2 = S2 + t2;                                                                           \
		S2 = S2 + t3;                                                                           \
		S2 = S2 + b1;                                                                           \
		S2 = S2 + c0;                                                                           \
		A = A + W0 * V4ABS(vv);                                                                 \
		memcpy(s0 + (i), &S0, sizeof S0);                                                       \
		memcpy(s1 + (i), &S1, sizeof S1);                                                       \
		memcpy(s2 + (i), &S2, sizeof S2);                                                       \
		memcpy(a + (i), &A, sizeof A);                                                          \
	} while (0)
	FOR_VECTORS(v, d, ACCUM_STEP);
#undef ACCUM_STEP
}

#undef TWO_SUM
#undef LOAD_TAIL
#undef FOR_VECTORS
