/* truth_exp.c - exp in 128-bit fixed point, with a proven error bound, for the fast ground truth. */
#include <math.h>
#include <stdint.h>

#include "truth_internal.h"
#include "truth_xacc.h"

/*
 * exp(x) for x = x0 + rest[0] + ... (an exact sum of doubles), |x0| <= 700,
 * as m 2^(k - 127), m < 2^128: the weights of lib/truth_fast.c and the
 * Newton steps of its logarithm. Only integer arithmetic and the exact
 * double operations named below, so the bits are the same everywhere.
 *
 * Reduction. k = RN(RN(x0 / ln 2)) (any integer would do; this one makes
 * |y| <= ln(2)/2 (1 + 2^-40)), and y = x - k ln 2 is formed from
 *   ln 2 = L0 + L1 + L2 + dL, L0, L1 of 42 bits, L2 = RN53(ln 2 - L0 - L1),
 *   |dL| < 2^-144 (tests/test_truth_fast.c checks the split with MPFR):
 * k L0 and k L1 are exact (|k| < 2^11, 42 + 11 bits), (y0, e0) =
 * TwoSum(x0, -k L0) is exact, k L2 rounds once (error <= u |k L2| <
 * |k| 2^-142), so y = y0 + e0 - k L1 - RN(k L2) + sum rest + a with
 * |a| < |k| 2^-141.
 *
 * Fixed point. Each of those n <= 10 doubles (each below 1 in magnitude) is
 * truncated toward zero to a multiple of 2^-126 (error < 2^-126 each) and
 * the integers are added modulo 2^128 to a bias of 2^126: Y = 2^126 (1 +
 * y'), |y' - y| < n 2^-126 + |k| 2^-141 = arg_err (returned with the
 * result; |y'| < 1, so Y is in (0, 2^127) and the modular sum is exact).
 * t = floor(2^12 y') = floor(Y / 2^114) - 2^12 and zeta = y' - t 2^-12 in
 * [0, 2^-12) are read off Y exactly; t = 64 t1 + t2 with t2 in [0, 64),
 * and t1 in [-24, 23] (|y'| < 0.375; otherwise -1: the caller declines).
 *
 * Evaluation, values v held as V = v 2^127 in 128 bits, products by
 * mul127(A, B) = floor(A B / 2^127), so every product is truncated by less
 * than 2^-127 (and below 2 in value: < 2^128). Tables (RN to 2^-128):
 *   E1 = exp(t1 / 64), E2 = exp(t2 / 4096), C_k = 1 / k! (C_0, C_1 exact).
 *   h = C_0 + z (C_1 + z (... + z C_8)) by Horner. Steps 8 to 6 run in 64
 *       bits (V = v 2^64, products floor(A B / 2^64), C_k and z truncated
 *       from their 128-bit values): each adds at most 2^-64 twice, so h_6
 *       is within 2^-63 of its exact Horner value, and its error reaches h
 *       multiplied by z^6 < 2^-72: 2^-135. Steps 5 to 0 run in 128 bits:
 *       each adds its coefficient's 2^-128 and mul127's 2^-127, later steps
 *       multiply the earlier errors by z < 2^-12: |h - P(z)| <= (1.000245 +
 *       2^-8) 2^-127 <= 1.0042 2^-127, and the series' tail is sum_{k>=9}
 *       z^k / k! < 2^-108 / 9! (1.00003) = 2^-126.469 = 1.4427 2^-127, so
 *       |h - exp(z)| <= 2.4469 2^-127.
 *   M1 = mul127(E1, E2): |M1 - e1 e2| <= 2^-128 (1.0155 + 1.4324) + 2^-127
 *       = 2.224 2^-127 (e1 = exp(t1/64) <= 1.4324, e2 <= 1.0155).
 *   m = mul127(M1, h): |m 2^-127 - exp(y')| <= 2.224 h + e1 e2 2.4469 + 1
 *       <= (2.2245 + 1.4546 * 2.4469 + 1) 2^-127 = 6.784 2^-127,
 *       relative to exp(y') >= exp(-0.375) = 0.6873: 9.871 2^-127 <
 *       10 2^-127 = SKV_TRUTH_EXP_REL.
 * So m 2^(k-127) = exp(x) e^a' (1 + r) with |a'| <= arg_err and |r| <=
 * SKV_TRUTH_EXP_REL; m is in [0.687, 1.455] 2^127.
 */

typedef unsigned __int128 u128;

enum { E1_LO = -24, N_E1 = 48, N_E2 = 64, N_COEF = 9, N_COEF64 = 6, T_BITS = 12, FIX_BITS = 126 };

static const uint64_t E1[N_E1][2] = {
	{0x57f91857a63a3aa9u, 0xec6dc02611213ba2u}, /* exp(-24/64) */
	{0x595bc02fd5e5a993u, 0xe6dd6872d1296a41u}, /* exp(-23/64) */
	{0x5ac3fdcb7ae27389u, 0x5029a28fcff8762du}, /* exp(-22/64) */
	{0x5c31e7ae8cf01aa7u, 0x48edd8b9a5ea56beu}, /* exp(-21/64) */
	{0x5da594b7c8bdf84du, 0x117dd51383bdc2a5u}, /* exp(-20/64) */
	{0x5f1f1c221dd8eff7u, 0xb2acbed566e78d81u}, /* exp(-19/64) */
	{0x609e9586225c57a5u, 0x3455273f7cfd2984u}, /* exp(-18/64) */
	{0x622418db8c7d50ecu, 0xe14ec6cc176bae4du}, /* exp(-17/64) */
	{0x63afbe7ab2082ba1u, 0xa0ae5e4eb1b479ddu}, /* exp(-16/64) */
	{0x65419f1e0de7c9f4u, 0x83a3e8cd60e99ee7u}, /* exp(-15/64) */
	{0x66d9d3e3cbcf5eaeu, 0x40244ed6f6bcd75eu}, /* exp(-14/64) */
	{0x6878764f5a1f403cu, 0x74d7b5d9d1f13a23u}, /* exp(-13/64) */
	{0x6a1da04b021def01u, 0x64eec82915df2e0fu}, /* exp(-12/64) */
	{0x6bc96c29869ed298u, 0x95ad5e59e7560f29u}, /* exp(-11/64) */
	{0x6d7bf4a7c930989eu, 0xafebeb852f6ababfu}, /* exp(-10/64) */
	{0x6f3554ee75ed8805u, 0xab530d4d196be693u}, /* exp(-9/64) */
	{0x70f5a893b608861eu, 0x1f58934f97aea57du}, /* exp(-8/64) */
	{0x72bd0b9ce931f64au, 0x411174311cf0b72au}, /* exp(-7/64) */
	{0x748b9a8065f00acdu, 0x5184250eee9c4e99u}, /* exp(-6/64) */
	{0x7661722741068c61u, 0xe6378c4e295859b3u}, /* exp(-5/64) */
	{0x783eafef1c0a8f39u, 0x78c7f81824d62ebfu}, /* exp(-4/64) */
	{0x7a2371abfb3efec7u, 0x19deb63e91e34276u}, /* exp(-3/64) */
	{0x7c0fd5aa22d75e45u, 0x2c02afe5dd89cd74u}, /* exp(-2/64) */
	{0x7e03faaffbbe9249u, 0xf442f7553ab56a92u}, /* exp(-1/64) */
	{0x8000000000000000u, 0x0000000000000000u}, /* exp(0/64) */
	{0x8204055aaef1c8bdu, 0x5c3259f4822735a3u}, /* exp(1/64) */
	{0x84102b00893f64c7u, 0x05e841d5d4064bd3u}, /* exp(2/64) */
	{0x862491b414f45e14u, 0x967f31eb2594af51u}, /* exp(3/64) */
	{0x88415abbe9a76beau, 0xd8d00cf112e4d4a9u}, /* exp(4/64) */
	{0x8a66a7e4c4e6b22au, 0xaf50ce3713ce2f05u}, /* exp(5/64) */
	{0x8c949b83a7066b44u, 0x9e8c66dd40755e15u}, /* exp(6/64) */
	{0x8ecb5877f873c9e8u, 0xac7a4d3206c3015fu}, /* exp(7/64) */
	{0x910b022db7ae67ceu, 0x76b441c27035c6a1u}, /* exp(8/64) */
	{0x9353bc9fb00b215au, 0xeb9860044d070592u}, /* exp(9/64) */
	{0x95a5ac59b963ca80u, 0x9bb3e062cebec9a5u}, /* exp(10/64) */
	{0x9800f67b00d7b805u, 0xeae44b1a7ffaabe3u}, /* exp(11/64) */
	{0x9a65c0b85ac1a96au, 0x7062465be33249a3u}, /* exp(12/64) */
	{0x9cd4315e9e0832fbu, 0xa34f397a1f83baa9u}, /* exp(13/64) */
	{0x9f4c6f5508ee5d51u, 0xbbdee0206028ab6cu}, /* exp(14/64) */
	{0xa1cea21faf8ac771u, 0xd268bc652de9f408u}, /* exp(15/64) */
	{0xa45af1e1f40c333bu, 0x3de1db4dd55f29a7u}, /* exp(16/64) */
	{0xa6f1876108f3009du, 0xa911f650b893501cu}, /* exp(17/64) */
	{0xa9928c067d67bb65u, 0x16cc14c91b4fdb27u}, /* exp(18/64) */
	{0xac3e29e2d3d7813bu, 0x0e93c017936f2fa1u}, /* exp(19/64) */
	{0xaef48bb022ffa9dau, 0x89923298baa201e1u}, /* exp(20/64) */
	{0xb1b5dcd4c192c269u, 0x39863ee4919e1312u}, /* exp(21/64) */
	{0xb4824965fca1967eu, 0xd7cc08291bd3a598u}, /* exp(22/64) */
	{0xb759fe2ad8f3ada4u, 0xeb266eee5f9881c0u}, /* exp(23/64) */
};

static const uint64_t E2[N_E2][2] = {
	{0x8000000000000000u, 0x0000000000000000u}, /* exp(0/4096) */
	{0x8008004001555aaau, 0xbbbbe93efbf08f0au}, /* exp(1/4096) */
	{0x801001000aab0002u, 0x222d830c31931c15u}, /* exp(2/4096) */
	{0x801802402401b010u, 0x33b4d045912c51d6u}, /* exp(3/4096) */
	{0x80200400555aaaeeu, 0xf1c7367437493bd5u}, /* exp(4/4096) */
	{0x80280640a6b7b0d0u, 0x602f9878a77c555au}, /* exp(5/4096) */
	{0x80300901201b0206u, 0x86ce893967449a9eu}, /* exp(6/4096) */
	{0x80380c41c9875f0bu, 0x73da9e55b951f5aau}, /* exp(7/4096) */
	{0x80401002ab000889u, 0x3ea0eadeb97a647au}, /* exp(8/4096) */
	{0x80481443cc88bf62u, 0x0ac5aa1999db3c6au}, /* exp(9/4096) */
	{0x805019053625c4b8u, 0x0c05224e41d1f812u}, /* exp(10/4096) */
	{0x80581e46efdbd9f5u, 0x8a74c7a60fb0092fu}, /* exp(11/4096) */
	{0x8060240901b040d4u, 0xe744a71efe4d3866u}, /* exp(12/4096) */
	{0x80682a4b73a8bb68u, 0xa2012197efe43106u}, /* exp(13/4096) */
	{0x8070310e4dcb8c23u, 0x5e54fefb5ff4f044u}, /* exp(14/4096) */
	{0x80783851981f75dfu, 0xea4be18e3e40edbau}, /* exp(15/4096) */
	{0x808040155aabbbe9u, 0x451521693554f734u}, /* exp(16/4096) */
	{0x808848599d782202u, 0xa64718231f7ce457u}, /* exp(17/4096) */
	{0x8090511e688cec6fu, 0x85a2e4b3ed6d77d3u}, /* exp(18/4096) */
	{0x80985a63c3f2dffbu, 0xa358af97c268fc57u}, /* exp(19/4096) */
	{0x80a06429b7b34203u, 0x10cc773a8a236bc9u}, /* exp(20/4096) */
	{0x80a86e704bd7d87au, 0x39db6cb4cd3337acu}, /* exp(21/4096) */
	{0x80b07937886ae9f5u, 0xeea1e8e3096c1b0bu}, /* exp(22/4096) */
	{0x80b8847f75773db3u, 0x6dc201e15419b8b0u}, /* exp(23/4096) */
	{0x80c090481b081ba0u, 0x6f2ac8f58cb02cd4u}, /* exp(24/4096) */
	{0x80c89c9181294c63u, 0x2f6038f2e731280bu}, /* exp(25/4096) */
	{0x80d0a95bafe71962u, 0x7b43dd221634a28fu}, /* exp(26/4096) */
	{0x80d8b6a6af4e4ccdu, 0xbc5e38b9dd3cbbc2u}, /* exp(27/4096) */
	{0x80e0c472876c31a5u, 0x05a8f6f454bcea20u}, /* exp(28/4096) */
	{0x80e8d2bf404e93c1u, 0x20d9ebcdaa053ca4u}, /* exp(29/4096) */
	{0x80f0e18ce203bfdbu, 0x9c2eed79a613182bu}, /* exp(30/4096) */
	{0x80f8f0db749a8396u, 0xd8ba8e9dc7219227u}, /* exp(31/4096) */
	{0x810100ab00222d86u, 0x1931c15e39b44e99u}, /* exp(32/4096) */
	{0x810910fb8caa8d35u, 0x913a6b4c7ec09a35u}, /* exp(33/4096) */
	{0x811121cd2243f332u, 0x753af2470d895b3fu}, /* exp(34/4096) */
	{0x8119331fc8ff3113u, 0x0aaaca59c0bb64c7u}, /* exp(35/4096) */
	{0x812144f388ed997eu, 0xb8e40caf5f58b8b5u}, /* exp(36/4096) */
	{0x812957486a210036u, 0x1a761fa5130a5641u}, /* exp(37/4096) */
	{0x81316a1e74abba1bu, 0x0ef978111e815461u}, /* exp(38/4096) */
	{0x81397d75b0a09d38u, 0xcd647bcea7a93b1cu}, /* exp(39/4096) */
	{0x8141914e261300cbu, 0xf6e18da0ea8ed3a6u}, /* exp(40/4096) */
	{0x8149a5a7dd16bd4au, 0xaa264a80ab07feceu}, /* exp(41/4096) */
	{0x8151ba82ddc02c6cu, 0x974c00673c5a8b61u}, /* exp(42/4096) */
	{0x8159cfdf30242933u, 0x142966aaf75983ecu}, /* exp(43/4096) */
	{0x8161e5bcdc580ff1u, 0x312da00178b1fca4u}, /* exp(44/4096) */
	{0x8169fc1bea71be53u, 0xcebc8e3c826a101fu}, /* exp(45/4096) */
	{0x817212fc62879369u, 0xb30c7fd6dce67439u}, /* exp(46/4096) */
	{0x817a2a5e4cb06fabu, 0xa0853f671524e071u}, /* exp(47/4096) */
	{0x81824241b103b504u, 0x6ca08d0e773b6517u}, /* exp(48/4096) */
	{0x818a5aa6979946d9u, 0x174c09fb2596ceceu}, /* exp(49/4096) */
	{0x8192738d08898a10u, 0xe2cc9e14aee4451au}, /* exp(50/4096) */
	{0x819a8cf50bed651du, 0x6c235feb060c7d32u}, /* exp(51/4096) */
	{0x81a2a6dea9de4002u, 0xc3f4070041291ccfu}, /* exp(52/4096) */
	{0x81aac149ea76045fu, 0x87ecf08605e74366u}, /* exp(53/4096) */
	{0x81b2dc36d5cf1d74u, 0xfcb0bea80b5ca408u}, /* exp(54/4096) */
	{0x81baf7a57404782fu, 0x28419a7d9aef2741u}, /* exp(55/4096) */
	{0x81c31395cd31832cu, 0xecee20bc7b91b34fu}, /* exp(56/4096) */
	{0x81cb3007e9722ec8u, 0x24c0014834437a89u}, /* exp(57/4096) */
	{0x81d34cfbd0e2ed1du, 0xbd6c59b914720c2bu}, /* exp(58/4096) */
	{0x81db6a718ba0b215u, 0xd4c5d2f6f2995b8eu}, /* exp(59/4096) */
	{0x81e3886921c8f36bu, 0xd5b08a0413400595u}, /* exp(60/4096) */
	{0x81eba6e29b79a8b6u, 0x9597cc152c394c4au}, /* exp(61/4096) */
	{0x81f3c5de00d14b70u, 0x7265ae13f9e98dcfu}, /* exp(62/4096) */
	{0x81fbe55b59eed6ffu, 0x70fc87aa5e25665bu}, /* exp(63/4096) */
};

static const uint64_t COEF[N_COEF][2] = {
	{0x8000000000000000u, 0x0000000000000000u}, /* 1/0! */
	{0x8000000000000000u, 0x0000000000000000u}, /* 1/1! */
	{0x4000000000000000u, 0x0000000000000000u}, /* 1/2! */
	{0x1555555555555555u, 0x5555555555555555u}, /* 1/3! */
	{0x0555555555555555u, 0x5555555555555555u}, /* 1/4! */
	{0x0111111111111111u, 0x1111111111111111u}, /* 1/5! */
	{0x002d82d82d82d82du, 0x82d82d82d82d82d8u}, /* 1/6! */
	{0x0006806806806806u, 0x8068068068068068u}, /* 1/7! */
	{0x0000d00d00d00d00u, 0xd00d00d00d00d00du}, /* 1/8! */
};

/* ln 2 = LN2S[0] + LN2S[1] + LN2S[2] + dL, |dL| < 2^-144 */
static const double LN2S[3] = {0x1.62e42fefa38p-1, 0x1.ef35793c768p-45, -0x1.9ff0342542fc3p-90};

#define INV_LN2 0x1.71547652b82fep0 /* RN(1 / ln 2); only picks k */
#define RINT_MAGIC 0x1.8p52         /* (x + 1.5 2^52) - 1.5 2^52 = RN to an integer, |x| < 2^51 */

skv_truth_exp_tables skv_truth_exp_tables_get(void)
{
	return (skv_truth_exp_tables){E1, E2, COEF, E1_LO, N_E1, N_E2, N_COEF, LN2S};
}

static u128 word(const uint64_t w[2]) { return ((u128)w[0] << 64) | w[1]; }

/* floor(a b / 2^127), for a b < 2^255: the 256-bit product from four 64-bit
 * halves (each partial product exact in 128 bits, mid below 3 2^64). */
static inline u128 mul127(u128 a, u128 b)
{
	const uint64_t a1 = (uint64_t)(a >> 64), a0 = (uint64_t)a, b1 = (uint64_t)(b >> 64), b0 = (uint64_t)b;
	const u128 lo = (u128)a0 * b0, m1 = (u128)a1 * b0, m2 = (u128)a0 * b1, hi = (u128)a1 * b1;
	const u128 mid = (lo >> 64) + (uint64_t)m1 + (uint64_t)m2;
	const u128 top = hi + (m1 >> 64) + (m2 >> 64) + (mid >> 64); /* product / 2^128, floor */
	return (top << 1) | ((uint64_t)mid >> 63);
}

/* trunc(x 2^126) modulo 2^128 (two's complement), for |x| < 1: x = M 2^e,
 * M < 2^53, so M 2^(e+126) is below 2^126 and shifts by less than 128. */
static inline u128 fix126(double x)
{
	int e;
	const uint64_t m = skv_dbl_int(x, &e);
	const int sh = e + FIX_BITS;
	u128 v = 0;
	if (sh >= 0)
		v = (u128)m << sh;
	else if (sh > -DBL_MANT_DIG)
		v = (u128)(m >> -sh);
	return signbit(x) ? (u128)0 - v : v;
}

int skv_truth_exp(skv_texp *r, double x0, const double *rest, int nrest)
{
	if (!(fabs(x0) <= 700.0) || nrest < 0 || nrest > 6)
		return -1;
	for (int i = 0; i < nrest; i++)
		if (!(fabs(rest[i]) <= 0x1p-5))
			return -1;
	const double kd = (x0 * INV_LN2 + RINT_MAGIC) - RINT_MAGIC;
	const double p0 = kd * LN2S[0], y0 = x0 - p0, bb = y0 - x0;
	const double e0 = (x0 - (y0 - bb)) + (-p0 - bb); /* TwoSum(x0, -p0) */
	const double c[4] = {y0, e0, -(kd * LN2S[1]), -(kd * LN2S[2])};
	u128 Y = (u128)1 << FIX_BITS;
	for (int i = 0; i < 4; i++)
		Y += fix126(c[i]);
	for (int i = 0; i < nrest; i++)
		Y += fix126(rest[i]);
	const int t = (int)(uint64_t)(Y >> (FIX_BITS - T_BITS)) - (1 << T_BITS);
	const int tb = t - E1_LO * 64; /* t + 1536 */
	if (tb < 0 || tb >= N_E1 * 64)
		return -1;
	const u128 z = (Y & (((u128)1 << (FIX_BITS - T_BITS)) - 1)) << 1; /* zeta 2^127 */
	const uint64_t z64 = (uint64_t)(z >> 63);
	uint64_t g = (uint64_t)(word(COEF[N_COEF - 1]) >> 63);
	for (int k = N_COEF - 2; k >= N_COEF64; k--)
		g = (uint64_t)(word(COEF[k]) >> 63) + (uint64_t)(((u128)z64 * g) >> 64);
	u128 h = (u128)g << 63;
	for (int k = N_COEF64 - 1; k >= 0; k--)
		h = word(COEF[k]) + mul127(z, h);
	r->m = mul127(mul127(word(E1[tb >> 6]), word(E2[tb & 63])), h);
	r->k = (int)kd;
	r->arg_err = (4 + nrest) * 0x1p-126 + fabs(kd) * 0x1p-141;
	return 0;
}
