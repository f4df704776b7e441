/* test_mma.c - tensor-core units: every recorded GPU vector bit for bit, the parameters, the rules, and `skv mma`. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/mma_cmd.h"
#include "ref_mpfr.h"
#include "skv.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
enum { MAX_REPORTS = 8 };

/* ------------------------------------------------------- recorded data */

/* ../shared/data/tensor-core-vectors beside the checkout (the binary is
 * ROOT/BUILD/tests/test_mma), or $SKV_TC_VECTORS. */
static const char *data_dir(void)
{
	static char dir[4096];
	const char *env = getenv("SKV_TC_VECTORS");
	if (env && *env)
		return env;
	ssize_t k = readlink("/proc/self/exe", dir, sizeof dir - 64);
	if (k <= 0)
		return NULL;
	dir[k] = '\0';
	for (int up = 0; up < 3; up++) {
		char *s = strrchr(dir, '/');
		if (!s)
			return NULL;
		*s = '\0';
	}
	strcat(dir, "/../shared/data/tensor-core-vectors");
	return dir;
}

static int is_dir(const char *p)
{
	struct stat st;
	return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The data folder, or NULL after saying plainly that it is absent (the
 * test is then skipped; run-tests.sh counts it apart). */
static const char *data_dir_or_say(void)
{
	const char *dir = data_dir();
	if (is_dir(dir))
		return dir;
	print_message("skipped: data folder absent (%s; set SKV_TC_VECTORS to its path)\n", dir ? dir : "?");
	return NULL;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 20, n = 0, r;
	char *b = malloc(cap);
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0)
		if ((n += r) == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb)
				free(b);
			b = nb;
		}
	fclose(f);
	*len = n;
	return b;
}

/* Reads a vector (in >= 0) or bit-pattern file; 0 when absent. */
static int load(mma_cmd_vecs *v, const char *path, int in)
{
	size_t len;
	char msg[256], *t = slurp(path, &len);
	if (!t)
		return 0;
	int rc = in >= 0 ? mma_cmd_parse_hex(v, t, len, path, (skv_format)in, msg, sizeof msg)
			 : mma_cmd_parse_bin(v, t, len, path, msg, sizeof msg);
	free(t);
	if (rc)
		fail_msg("%s:%d: %s", __FILE__, __LINE__, msg);
	return 1;
}

/* Every folder of the data; use_c 0 where the GPU ran with c = 0 (H100
 * FP8 wgmma, model_validation/Validate_TC_models.m). */
static const struct {
	const char *gpu, *fmt, *out;
	skv_gpu g;
	skv_format in;
	skv_format f;
	int use_c;
} recorded[] = {
	{"V100", "fp16", "fp32", SKV_GPU_V100, SKV_FP16, SKV_FP32, 1},
	{"V100", "fp16", "fp16", SKV_GPU_V100, SKV_FP16, SKV_FP16, 1},
#define R4_(G, g)                                                                                     \
	{G, "fp16", "fp32", g, SKV_FP16, SKV_FP32, 1}, {G, "fp16", "fp16", g, SKV_FP16, SKV_FP16, 1}, \
	{G, "bf16", "fp32", g, SKV_BF16, SKV_FP32, 1}, {G, "tf32", "fp32", g, SKV_TF32, SKV_FP32, 1}
	R4_("A100", SKV_GPU_A100), R4_("L40S", SKV_GPU_ADA), R4_("H100", SKV_GPU_H100), R4_("B200", SKV_GPU_B200),
	{"L40S", "E4M3", "fp32", SKV_GPU_ADA, SKV_E4M3, SKV_FP32, 1},
	{"L40S", "E5M2", "fp32", SKV_GPU_ADA, SKV_E5M2, SKV_FP32, 1},
	{"H100", "E4M3", "fp32", SKV_GPU_H100, SKV_E4M3, SKV_FP32, 0},
	{"H100", "E5M2", "fp32", SKV_GPU_H100, SKV_E5M2, SKV_FP32, 0},
	{"H100", "E4M3", "fp16", SKV_GPU_H100, SKV_E4M3, SKV_FP16, 1},
	{"H100", "E5M2", "fp16", SKV_GPU_H100, SKV_E5M2, SKV_FP16, 1},
	{"B200", "E4M3", "fp32", SKV_GPU_B200, SKV_E4M3, SKV_FP32, 1},
	{"B200", "E5M2", "fp32", SKV_GPU_B200, SKV_E5M2, SKV_FP32, 1},
	{"B200", "E4M3", "fp16", SKV_GPU_B200, SKV_E4M3, SKV_FP16, 1},
	{"B200", "E5M2", "fp16", SKV_GPU_B200, SKV_E5M2, SKV_FP16, 1},
};

typedef struct {
	mma_cmd_vecs a, b, c, d;
} vecset;

static void vecset_free(vecset *s)
{
	mma_cmd_vecs_free(&s->a);
	mma_cmd_vecs_free(&s->b);
	mma_cmd_vecs_free(&s->c);
	mma_cmd_vecs_free(&s->d);
}

/* Loads row r of `recorded`; 0 (with a line saying so) when a file is absent. */
static int load_recorded(vecset *s, size_t r, const char *dir)
{
	char p[4][4200];
	const char *G = recorded[r].gpu, *F = recorded[r].fmt;
	snprintf(p[0], sizeof p[0], "%s/%s/%s/a_%s_%s.txt", dir, G, F, G, F);
	snprintf(p[1], sizeof p[1], "%s/%s/%s/b_%s_%s.txt", dir, G, F, G, F);
	snprintf(p[2], sizeof p[2], "%s/%s/%s/c_%s_fp32.txt", dir, G, F, G);
	snprintf(p[3], sizeof p[3], "%s/%s/%s/d_%s_%s.txt", dir, G, F, G, recorded[r].out);
	memset(s, 0, sizeof *s);
	if (load(&s->a, p[0], (int)recorded[r].in) && load(&s->b, p[1], (int)recorded[r].in) && load(&s->c, p[2], -1) &&
	    load(&s->d, p[3], -1)) {
		assert_int_equal(s->a.rows, s->b.rows);
		assert_int_equal(s->a.k, s->b.k);
		assert_int_equal(s->a.rows, s->c.rows);
		assert_int_equal(s->a.rows, s->d.rows);
		return 1;
	}
	print_message("skipped: %s/%s/%s: a file is absent\n", G, F, recorded[r].out);
	vecset_free(s);
	return 0;
}

/* Vectors of s where unit u's d equals the recorded one bit for bit (NaN
 * against NaN counting as equal); c rounded to the output as the
 * recording's __float2half did for fp16 (mma_fp8_output_fp16.cu). */
static size_t replay(const skv_mma_unit *u, const vecset *s, int use_c, int report)
{
	size_t match = 0, k = s->a.k;
	for (size_t i = 0; i < s->a.rows; i++) {
		double c = use_c ? skv_round(u->output, s->c.v[i]) : 0.0, d;
		assert_int_equal(skv_mma_dot(&d, u, s->a.v + i * k, 1, s->b.v + i * k, 1, k, c), SKV_OK);
		float g = (float)s->d.v[i], m = (float)d;
		if (memcmp(&g, &m, sizeof g) == 0 || (isnan(g) && isnan(m)))
			match++;
		else if (report && i - match < MAX_REPORTS)
			print_error("%s:%d: vector %zu: c = %a: got %a, GPU %a\n", __FILE__, __LINE__, i + 1, c, d,
				    s->d.v[i]);
	}
	return match;
}

static void test_recorded(void **state)
{
	(void)state;
	const char *dir = data_dir_or_say();
	if (!dir)
		skip();
	size_t files = 0;
	for (size_t r = 0; r < COUNT(recorded); r++) {
		vecset s;
		skv_mma_unit u, ieee;
		if (!load_recorded(&s, r, dir))
			continue;
		assert_int_equal(skv_mma_unit_init(&u, recorded[r].g, recorded[r].in, recorded[r].f), SKV_OK);
		assert_int_equal(skv_mma_unit_init(&ieee, SKV_GPU_IEEE, recorded[r].in, recorded[r].f), SKV_OK);
		size_t m = replay(&u, &s, recorded[r].use_c, 1), mi = replay(&ieee, &s, recorded[r].use_c, 0);
		print_message("%s %s -> %s (K = %zu): %s %zu/%zu match (ieee %zu)\n", recorded[r].gpu, recorded[r].fmt,
			      recorded[r].out, s.a.k, skv_gpu_name(recorded[r].g), m, s.a.rows, mi);
		if (m != s.a.rows)
			fail_msg("%s:%d: %s %s -> %s: %zu of %zu vectors differ", __FILE__, __LINE__, recorded[r].gpu,
				 recorded[r].fmt, recorded[r].out, s.a.rows - m, s.a.rows);
		vecset_free(&s);
		files++;
	}
	print_message("%zu of %zu recorded files replayed\n", files, COUNT(recorded));
}

/* Why FP8 mma.sync departs from the model files: their one block of 32
 * with c aligned (B200TC.m: neab 2, rz; H100TC.m for fp16 out: neab -10,
 * rne, with 10 fraction bits as its 0 bits fit nothing) fits only these
 * counts of the recorded vectors. */
static void test_fp8_model_files(void **state)
{
	(void)state;
	const char *dir = data_dir_or_say();
	if (!dir)
		skip();
	const skv_mma_params b200 = {32, 0, 2, 0, SKV_MMA_RZ, SKV_MMA_RZ, 23, -133, 0, 1, 1, 1, 0, SKV_MMA_C_ALIGNED},
			     h100 = {32,   0, -10, 0, SKV_MMA_RNE, SKV_MMA_RZ, 10,
				     -133, 0, 1,   1, 1,           0,          SKV_MMA_C_ALIGNED};
	const struct {
		skv_gpu g;
		skv_format in, out;
		const skv_mma_params *p;
		size_t want;
	} t[] = {{SKV_GPU_B200, SKV_E4M3, SKV_FP32, &b200, 3207},
		 {SKV_GPU_B200, SKV_E5M2, SKV_FP32, &b200, 3236},
		 {SKV_GPU_H100, SKV_E4M3, SKV_FP16, &h100, 3113},
		 {SKV_GPU_H100, SKV_E5M2, SKV_FP16, &h100, 3340}};
	for (size_t r = 0; r < COUNT(recorded); r++)
		for (size_t j = 0; j < COUNT(t); j++) {
			vecset s;
			skv_mma_unit u;
			if (recorded[r].g != t[j].g || recorded[r].in != t[j].in || recorded[r].f != t[j].out ||
			    !load_recorded(&s, r, dir))
				continue;
			assert_int_equal(skv_mma_unit_custom(&u, t[j].p, t[j].in, t[j].out), SKV_OK);
			size_t m = replay(&u, &s, 1, 0);
			print_message("%s %s -> %s with the model file's parameters: %zu/%zu\n", recorded[r].gpu,
				      recorded[r].fmt, recorded[r].out, m, s.a.rows);
			assert_int_equal(m, t[j].want);
			vecset_free(&s);
		}
}

/* ------------------------------------------------- the parameters */

/* Each named unit's parameters, typed in from the model files (models/
 * GPUTC.m at b12b5a7: fma, neab, frmode, min_exp_limit; NoManBitsOut +
 * neab for FP8 with fp32 out, GEMM.m) and, for FP8 mma.sync, from the
 * interleaved pattern of GEMM.m 109e412 that the recorded vectors select.
 * The data does not pin every field (min_exp_limit rarely matters there). */
static const struct {
	skv_gpu g;
	skv_format in;
	skv_format out;
	unsigned n;
	int halves, neab, rne, frac, min_exp;
	skv_mma_cjoin cj;
} published[] = {
	{SKV_GPU_V100, SKV_FP16, SKV_FP32, 4, 0, 0, 0, 23, -1024, 0},
	{SKV_GPU_V100, SKV_FP16, SKV_FP16, 4, 0, 0, 1, 10, -19, 0},
#define PUB4_(G, nn, ne, lim, lim16, ntf)                                                        \
	{G, SKV_FP16, SKV_FP32, nn, 0, ne, 0, 23, lim, 0}, {G, SKV_FP16, SKV_FP16, nn, 0, ne, 1, 10, lim16, 0}, \
	{G, SKV_BF16, SKV_FP32, nn, 0, ne, 0, 23, lim, 0}, {G, SKV_TF32, SKV_FP32, ntf, 0, ne, 0, 23, lim, 0}
	PUB4_(SKV_GPU_A100, 8, 1, -132, -20, 4), PUB4_(SKV_GPU_ADA, 8, 1, -132, -20, 4),
	PUB4_(SKV_GPU_H100, 16, 2, -133, -21, 8), PUB4_(SKV_GPU_B200, 16, 2, -133, -21, 8),
	{SKV_GPU_ADA, SKV_E4M3, SKV_FP32, 16, 0, -10, 0, 13, -132, 0},
	{SKV_GPU_ADA, SKV_E5M2, SKV_FP32, 16, 0, -10, 0, 13, -132, 0},
	{SKV_GPU_ADA, SKV_E4M3, SKV_FP16, 16, 0, -10, 1, 10, -132, 0},
	{SKV_GPU_ADA, SKV_E5M2, SKV_FP16, 16, 0, -10, 1, 10, -132, 0},
	{SKV_GPU_H100, SKV_E4M3, SKV_FP32, 32, 0, -10, 0, 13, -133, 0},
	{SKV_GPU_H100, SKV_E5M2, SKV_FP32, 32, 0, -10, 0, 13, -133, 0},
	{SKV_GPU_H100, SKV_E4M3, SKV_FP16, 32, 1, 2, 1, 10, -133, SKV_MMA_C_AFTER},
	{SKV_GPU_H100, SKV_E5M2, SKV_FP16, 32, 1, 2, 1, 10, -133, SKV_MMA_C_AFTER},
	{SKV_GPU_B200, SKV_E4M3, SKV_FP32, 32, 1, 2, 0, 23, -133, SKV_MMA_C_AFTER},
	{SKV_GPU_B200, SKV_E5M2, SKV_FP32, 32, 1, 2, 0, 23, -133, SKV_MMA_C_AFTER},
	{SKV_GPU_B200, SKV_E4M3, SKV_FP16, 32, 1, 2, 1, 10, -133, SKV_MMA_C_AFTER},
	{SKV_GPU_B200, SKV_E5M2, SKV_FP16, 32, 1, 2, 1, 10, -133, SKV_MMA_C_AFTER},
};

/* The base input of a saturating FP8 variant (the same values); -1 for
 * formats the tensor cores do not take. */
static int input_of(int f)
{
	if (f == SKV_E4M3_SAT || f == SKV_E5M2_SAT)
		return f == SKV_E4M3_SAT ? SKV_E4M3 : SKV_E5M2;
	return f == SKV_FP16 || f == SKV_BF16 || f == SKV_TF32 || f == SKV_E4M3 || f == SKV_E5M2 ? f : -1;
}

static void test_parameters(void **state)
{
	(void)state;
	size_t found = 0, base_found = 0;
	for (int g = 1; g < SKV_NGPUS; g++)
		for (int in = 0; in <= SKV_NFORMATS; in++) /* every format, and one past them */
			for (int o = 0; o < 2; o++) {
				skv_format out = o ? SKV_FP16 : SKV_FP32;
				skv_mma_unit u;
				size_t i;
				int ok = skv_mma_unit_init(&u, (skv_gpu)g, (skv_format)in, out) == SKV_OK;
				for (i = 0; i < COUNT(published); i++)
					if ((int)published[i].g == g && (int)published[i].in == input_of(in) &&
					    published[i].out == out)
						break;
				assert_int_equal(ok, i < COUNT(published)); /* a unit exactly where a model is */
				if (!ok)
					continue;
				found++;
				base_found += input_of(in) == in;
				const skv_mma_params *p = &u.par;
				int same = p->n == published[i].n && p->halves == published[i].halves &&
					   p->neab == published[i].neab && p->out_frac == published[i].frac &&
					   (p->final_round == SKV_MMA_RNE) == published[i].rne && p->cjoin == published[i].cj;
				/* -1024 ("no limit") is kept as -400, below every operand */
				same &= p->min_exp == (published[i].min_exp < -400 ? -400 : published[i].min_exp);
				same &= !p->sticky && p->align_round == SKV_MMA_RZ && p->in_subnormals && p->out_subnormals &&
					p->denorm_products && !p->product_limit && u.input == (skv_format)in;
				if (!same)
					fail_msg("%s:%d: %s: not the model file's parameters", __FILE__, __LINE__, u.source);
			}
	assert_int_equal(base_found, COUNT(published));
	assert_int_equal(found, COUNT(published) + 12); /* the FP8 rows again for e4m3-sat and e5m2-sat */
}

/* ---------------------------------------------- rules of the model */

static double dot1(const skv_mma_unit *u, const double *a, const double *b, size_t K, double c)
{
	double d = -12345.0;
	assert_int_equal(skv_mma_dot(&d, u, a, 1, b, 1, K, c), SKV_OK);
	return d;
}

#define EXPECT_BITS(what, got, want)                                                                \
	do {                                                                                        \
		double g_ = (got), w_ = (want);                                                     \
		if (!ref_same(g_, w_))                                                              \
			fail_msg("%s:%d: %s: got %a, want %a", __FILE__, __LINE__, (what), g_, w_); \
	} while (0)

/* NaN and infinities as GEMM.m decides them, over the whole vector. */
static void test_specials(void **state)
{
	(void)state;
	skv_mma_unit u, e4;
	assert_int_equal(skv_mma_unit_init(&u, SKV_GPU_H100, SKV_BF16, SKV_FP32), SKV_OK);
	assert_int_equal(skv_mma_unit_init(&e4, SKV_GPU_H100, SKV_E4M3, SKV_FP32), SKV_OK);
	double b[20] = {1, 1, 1, 1}, a[20];
	const struct {
		const char *what;
		double a0, a1, b1, c, want;
	} t[] = {
		{"NaN input", 1, NAN, 1, 0, NAN},         {"0 * inf", 1, INFINITY, 0, 0, NAN},
		{"+inf and -inf", INFINITY, -INFINITY, 1, 0, NAN}, {"+inf", 1, INFINITY, 1, 5, INFINITY},
		{"-inf product", 1, -INFINITY, 1, 5, -INFINITY}, {"c = -inf", 1, 2, 1, -INFINITY, -INFINITY},
		{"c = +inf, product -inf", 1, -INFINITY, 1, INFINITY, NAN}, {"c = NaN", 1, 2, 1, NAN, NAN},
	};
	for (size_t i = 0; i < COUNT(t); i++) {
		memset(a, 0, sizeof a);
		a[0] = t[i].a0, a[1] = t[i].a1, b[1] = t[i].b1;
		a[18] = 3; /* in the second block: the rule covers the whole vector */
		EXPECT_BITS(t[i].what, dot1(&u, a, b, 20, t[i].c), t[i].want);
	}
	double x = INFINITY, one = 1, d = 7;
	assert_int_equal(skv_mma_dot(&d, &e4, &x, 1, &one, 1, 1, 0.0), SKV_EINVAL); /* e4m3 has no inf */
	assert_true(d == 7);
	x = NAN;
	EXPECT_BITS("e4m3 NaN", dot1(&e4, &x, &one, 1, 0.0), NAN);
}

/* Overflow, the persistence of an infinite accumulator, signed zeros. */
static void test_edges(void **state)
{
	(void)state;
	skv_mma_unit u, h, ieee;
	assert_int_equal(skv_mma_unit_init(&u, SKV_GPU_H100, SKV_BF16, SKV_FP32), SKV_OK);
	assert_int_equal(skv_mma_unit_init(&h, SKV_GPU_H100, SKV_FP16, SKV_FP16), SKV_OK);
	assert_int_equal(skv_mma_unit_init(&ieee, SKV_GPU_IEEE, SKV_BF16, SKV_FP32), SKV_OK);
	double a[32] = {0x1.fep127, 0x1p120}, b[32] = {1, 1};
	EXPECT_BITS("rz, sum 2^128", dot1(&u, a, b, 2, 0.0), INFINITY); /* the model: inf, not FLT_MAX */
	EXPECT_BITS("rz, below 2^128", dot1(&u, a, b, 1, 0.0), 0x1.fep127);
	for (int i = 16; i < 32; i++)
		a[i] = -0x1p127, b[i] = 1;
	EXPECT_BITS("overflowed accumulator stays", dot1(&u, a, b, 32, 0.0), INFINITY);
	double fa[2] = {65504, 8}, fb[2] = {1, 1};
	EXPECT_BITS("fp16 65512 rne", dot1(&h, fa, fb, 2, 0.0), 65504);
	fa[1] = 16;
	EXPECT_BITS("fp16 65520 rne", dot1(&h, fa, fb, 2, 0.0), INFINITY);
	double za[2] = {1, -1}, zb[2] = {0.5, 0.5};
	EXPECT_BITS("exact cancellation", dot1(&u, za, zb, 2, 0.0), 0.0);
	EXPECT_BITS("cancellation onto -c", dot1(&u, za, zb, 1, -0.5), 0.0);
	za[0] = -0.0;
	EXPECT_BITS("-0 product, c = -0", dot1(&u, za, zb, 1, -0.0), 0.0);
	EXPECT_BITS("ieee keeps -0", dot1(&ieee, za, zb, 1, -0.0), -0.0);
	za[0] = -0x1p-100, zb[0] = 0x1p-60; /* -2^-160: below the min_exp_limit grid 2^-158 */
	EXPECT_BITS("product under min_exp_limit", dot1(&u, za, zb, 1, 0.0), 0.0);
	zb[0] = 0x1p-55; /* -2^-155: on the grid, below the fp32 subnormals */
	EXPECT_BITS("negative underflow keeps its sign", dot1(&u, za, zb, 1, 0.0), -0.0);
	zb[0] = 0x1p-40; /* -2^-140: an fp32 subnormal, exact */
	EXPECT_BITS("subnormal result", dot1(&u, za, zb, 1, 0.0), -0x1p-140);
	EXPECT_BITS("K = 0", dot1(&u, za, zb, 0, 0x1.8p-3), 0x1.8p-3);
	double sa[12] = {0}, sb[4] = {0.25, 3, -2, 1}, dense[4] = {1.5, -0.75, 2, 0x1p-9}, d1, d2;
	for (int i = 0; i < 4; i++)
		sa[3 * i] = dense[i];
	assert_int_equal(skv_mma_dot(&d1, &u, sa, 3, sb, 1, 4, 1.0), SKV_OK);
	assert_int_equal(skv_mma_dot(&d2, &u, dense, 1, sb, 1, 4, 1.0), SKV_OK);
	EXPECT_BITS("stride 3", d1, d2);
}

/* Every refusal leaves its output untouched. */
static void test_args(void **state)
{
	(void)state;
	skv_mma_unit u, v;
	memset(&u, 0x5a, sizeof u);
	v = u;
	const struct {
		int g, in, out;
	} bad[] = {{SKV_NGPUS, 0, SKV_FP32}, {-1, 0, SKV_FP32}, {1, SKV_FP32, SKV_FP32},
		   {SKV_GPU_IEEE, SKV_E2M1, SKV_FP32}, {1, SKV_NFORMATS, SKV_FP32}, {1, 0, SKV_BF16},
		   {SKV_GPU_V100, SKV_BF16, SKV_FP32}, {SKV_GPU_A100, SKV_E4M3, SKV_FP32},
		   {SKV_GPU_A100, SKV_BF16, SKV_FP16}, {SKV_GPU_H100, SKV_TF32, SKV_FP16},
		   {SKV_GPU_IEEE, SKV_FP16, SKV_FP64}};
	for (size_t i = 0; i < COUNT(bad); i++)
		assert_int_equal(
			skv_mma_unit_init(&u, (skv_gpu)bad[i].g, (skv_format)bad[i].in, (skv_format)bad[i].out), SKV_EINVAL);
	assert_int_equal(skv_mma_unit_init(NULL, SKV_GPU_H100, SKV_BF16, SKV_FP32), SKV_EINVAL);
	const skv_mma_params ok = {16, 0, 2, 0, SKV_MMA_RZ, SKV_MMA_RZ, 23, -133, 0, 1, 1, 1, 0, SKV_MMA_C_ALIGNED};
	skv_mma_params p[14];
	for (int i = 0; i < 14; i++)
		p[i] = ok;
	p[0].n = 0, p[1].n = 65, p[2].halves = 1, p[2].n = 6, p[3].neab = -21, p[4].neab = 8, p[5].sticky = 2;
	p[6].final_round = (skv_mma_round)4, p[7].out_frac = 0, p[8].out_frac = 24, p[9].min_exp = 201;
	p[10].cjoin = SKV_MMA_C_LATE, p[10].sticky = 1, p[11].cjoin = SKV_MMA_C_LATE, p[11].halves = 1;
	p[12].out_subnormals = 2, p[13].cjoin = (skv_mma_cjoin)3;
	for (int i = 0; i < 14; i++)
		if (skv_mma_unit_custom(&u, &p[i], SKV_BF16, SKV_FP32) != SKV_EINVAL)
			fail_msg("%s:%d: parameter set %d accepted", __FILE__, __LINE__, i);
	p[0] = ok, p[0].out_frac = 11;
	assert_int_equal(skv_mma_unit_custom(&u, &p[0], SKV_FP16, SKV_FP16), SKV_EINVAL);
	assert_int_equal(skv_mma_unit_custom(&u, NULL, SKV_FP16, SKV_FP32), SKV_EINVAL);
	assert_memory_equal(&u, &v, sizeof u);

	double a[2] = {1, 0x1.004p0}, b[2] = {1, 1}, d = 42;
	assert_int_equal(skv_mma_unit_init(&u, SKV_GPU_H100, SKV_BF16, SKV_FP32), SKV_OK);
	assert_int_equal(skv_mma_dot(&d, &u, a, 1, b, 1, 2, 0.0), SKV_EINVAL); /* 1 + 2^-10 is no bf16 */
	assert_int_equal(skv_mma_dot(NULL, &u, a, 1, b, 1, 1, 0.0), SKV_EINVAL);
	assert_int_equal(skv_mma_dot(&d, NULL, a, 1, b, 1, 1, 0.0), SKV_EINVAL);
	assert_int_equal(skv_mma_dot(&d, &u, NULL, 1, b, 1, 1, 0.0), SKV_EINVAL);
	assert_int_equal(skv_mma_dot(&d, &u, a, 0, b, 1, 2, 0.0), SKV_EINVAL);
	assert_int_equal(skv_mma_dot(&d, &u, a, 1, b, 1, 1, 0x1.0000001p0), SKV_EINVAL); /* c not fp32 */
	v = u, v.par.n = 0;
	assert_int_equal(skv_mma_dot(&d, &v, a, 1, b, 1, 1, 0.0), SKV_EINVAL);
	assert_true(d == 42);
	assert_int_equal(skv_mma_dot(&d, &u, a, 0, b, 0, 1, 0.0), SKV_OK); /* one element: strides unused */
	assert_true(d == 1);
}

static void test_names(void **state)
{
	(void)state;
	const char *gpus[] = {"ieee", "v100", "a100", "ada", "h100", "b200"};
	skv_gpu g = SKV_GPU_B200;
	for (int i = 0; i < SKV_NGPUS; i++) {
		assert_string_equal(skv_gpu_name((skv_gpu)i), gpus[i]);
		assert_int_equal(skv_gpu_parse(&g, gpus[i]), SKV_OK);
		assert_int_equal(g, i);
	}
	const struct {
		const char *alias;
		skv_gpu g;
	} al[] = {{"a2", SKV_GPU_A100}, {"a30", SKV_GPU_A100}, {"l40s", SKV_GPU_ADA}, {"h200", SKV_GPU_H100}};
	for (size_t i = 0; i < COUNT(al); i++) {
		assert_int_equal(skv_gpu_parse(&g, al[i].alias), SKV_OK);
		assert_int_equal(g, al[i].g);
	}
	assert_int_equal(skv_gpu_parse(&g, "H100"), SKV_EINVAL);
	assert_int_equal(g, SKV_GPU_H100);
	assert_null(skv_gpu_name((skv_gpu)SKV_NGPUS));
	/* The saturating FP8 formats are the same inputs: the same result. */
	skv_mma_unit u, v;
	double a[3] = {448, -0x1p-9, 3}, b[3] = {0.5, 0.25, -0x1.cp-1}, x, y;
	assert_int_equal(skv_mma_unit_init(&u, SKV_GPU_H100, SKV_E4M3, SKV_FP32), SKV_OK);
	assert_int_equal(skv_mma_unit_init(&v, SKV_GPU_H100, SKV_E4M3_SAT, SKV_FP32), SKV_OK);
	assert_int_equal(skv_mma_dot(&x, &u, a, 1, b, 1, 3, 0.25), SKV_OK);
	assert_int_equal(skv_mma_dot(&y, &v, a, 1, b, 1, 3, 0.25), SKV_OK);
	EXPECT_BITS("e4m3-sat as e4m3", y, x);
}

/* ---------------------------------------------------------- skv mma */

typedef struct {
	int rc;
	char *out, *err;
	size_t nout, nerr;
} cmd_result;

static cmd_result run_cmd(int argc, const char **argv)
{
	cmd_result r;
	FILE *o = open_memstream(&r.out, &r.nout), *e = open_memstream(&r.err, &r.nerr);
	assert_non_null(o);
	assert_non_null(e);
	r.rc = mma_cmd_main(argc, (char **)argv, o, e);
	fclose(o);
	fclose(e);
	return r;
}

static void cmd_free(cmd_result *r)
{
	free(r->out);
	free(r->err);
}

/* Runs the command and requires its status and a piece of its stdout (or,
 * for a failure, its one-line stderr). */
#define EXPECT_CMD(rc_, text_, ...)                                                                           \
	do {                                                                                                  \
		const char *argv_[] = {"mma", __VA_ARGS__};                                                   \
		cmd_result r_ = run_cmd((int)COUNT(argv_), argv_);                                            \
		const char *s_ = (rc_) == 0 ? r_.out : r_.err;                                                \
		if (r_.rc != (rc_) || !strstr(s_, (text_)))                                                   \
			fail_msg("%s:%d: status %d, want %d; expected '%s' in:\n%s%s", __FILE__, __LINE__, r_.rc, \
				 (rc_), (text_), r_.out, r_.err);                                             \
		if ((rc_) != 0 && (strchr(r_.err, '\n') != r_.err + r_.nerr - 1 || r_.nout != 0))            \
			fail_msg("%s:%d: a failure writes one line to stderr only: '%s'", __FILE__, __LINE__, r_.err); \
		cmd_free(&r_);                                                                                \
	} while (0)

static void test_cmd_usage(void **state)
{
	(void)state;
	EXPECT_CMD(0, "usage: skv mma --gpu=NAME", "--help");
	EXPECT_CMD(2, "missing --gpu=VALUE", "--input=fp16");
	EXPECT_CMD(2, "--gpu=x100: unknown GPU", "--gpu=x100", "--input=fp16", "--output=fp32", "--a=a", "--b=b");
	EXPECT_CMD(2, "--input=fp8: not an input", "--gpu=h100", "--input=fp8", "--output=fp32", "--a=a", "--b=b");
	EXPECT_CMD(2, "--input=fp32: not an input", "--gpu=h100", "--input=fp32", "--output=fp32", "--a=a", "--b=b");
	EXPECT_CMD(2, "--output=bf16: the output", "--gpu=h100", "--input=bf16", "--output=bf16", "--a=a", "--b=b");
	EXPECT_CMD(2, "--gpu=v100 has no unit for --input=bf16 --output=fp32", "--gpu=v100", "--input=bf16",
		   "--output=fp32", "--a=a", "--b=b");
	EXPECT_CMD(2, "unknown option '--frob=1'", "--frob=1");
	EXPECT_CMD(2, "unknown option 'h100'", "h100");
	EXPECT_CMD(2, "--a needs a value", "--a=");
	EXPECT_CMD(2, "--a given twice", "--a=x", "--a=y");
	EXPECT_CMD(2, "missing --b=FILE", "--gpu=h100", "--input=bf16", "--output=fp32", "--a=a");
}

static char tmpdir[64];

static const char *tmpfile_with(const char *name, const char *text)
{
	static char path[8][128];
	static int next;
	char *p = path[next++ % 8];
	snprintf(p, 128, "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

#define ONE "00111111100000000000000000000000\n"    /* 1.0 */
#define HALF "00111111000000000000000000000000\n"   /* 0.5 */
#define ZERO "00000000000000000000000000000000\n"
#define D35 "01000000011000000000000000000000\n"    /* 3.5 */
#define D35P3 "01000000011000000000000000000011\n"  /* 3.5 + 3 ulp */

/* Two bf16 vectors: 1*1 + 2*1 + 0.5 = 3.5 and 1*2 + 1*(-1) + 0 = 1. */
static void test_cmd_files(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(strcpy(tmpdir, "/tmp/skv_test_mma_XXXXXX")));
	char fa[160], fb[160], fc[160], flag[4][200];
	snprintf(fa, sizeof fa, "--a=%s", tmpfile_with("a.txt", "3f800000 40000000 \n3f800000\t3f800000\r\n"));
	snprintf(fb, sizeof fb, "--b=%s", tmpfile_with("b.txt", "3f800000 3f800000\n40000000 bf800000"));
	snprintf(fc, sizeof fc, "--c=%s", tmpfile_with("c.txt", HALF ZERO));
	EXPECT_CMD(0, D35 ONE, "--gpu=h100", "--input=bf16", "--output=fp32", fa, fb, fc);
	snprintf(flag[0], sizeof flag[0], "--check=%s", tmpfile_with("d.txt", D35 ONE));
	EXPECT_CMD(0, "2 vectors, 2 match", "--gpu=h100", "--input=bf16", "--output=fp32", fa, fb, fc, flag[0]);
	snprintf(flag[0], sizeof flag[0], "--check=%s", tmpfile_with("d3.txt", D35P3 ONE));
	EXPECT_CMD(0, "differ: 1, max 3 ulp of fp32; NaN against a number: 0; +0 against -0: 0\n  ulp 3-4: 1\n",
		   "--gpu=h100", "--input=bf16", "--output=fp32", fa, fb, fc, flag[0]);
	EXPECT_CMD(1, "cannot read /nonexistent/a.txt", "--gpu=h100", "--input=bf16", "--output=fp32",
		   "--a=/nonexistent/a.txt", fb);
	const struct {
		const char *text, *msg;
	} bad_a[] = {
		{"3f800000 4000000\n", "a.txt:1: value 2 '4000000' is not 8 hex digits"},
		{"3f800000 40000000\n\n3f800000 3f800000\n", "a.txt:2: empty line"},
		{"3f800000 40000000\n3f800000\n", "a.txt:2: 1 values, expected 2"},
		{"3f800001 40000000\n3f800000 3f800000\n", "a.txt:1: value 1 (0x3f800001) is not a bf16 value"},
		{"0x3f8000 40000000\n", "a.txt:1: value 1 '0x3f8000' is not 8 hex digits"},
		{"", "a.txt:1: no vectors"},
	};
	for (size_t i = 0; i < COUNT(bad_a); i++) {
		snprintf(flag[1], sizeof flag[1], "--a=%s", tmpfile_with("a.txt", bad_a[i].text));
		EXPECT_CMD(1, bad_a[i].msg, "--gpu=h100", "--input=bf16", "--output=fp32", flag[1], fb);
	}
	tmpfile_with("a.txt", "3f800000 40000000\n3f800000 3f800000\n");
	snprintf(flag[2], sizeof flag[2], "--c=%s", tmpfile_with("c2.txt", ONE "0011111100000000000000000000000\n"));
	EXPECT_CMD(1, "c2.txt:2: value 1 '0011111100000000...' is not 32 binary digits", "--gpu=h100", "--input=bf16",
		   "--output=fp32", fa, fb, flag[2]);
	snprintf(flag[2], sizeof flag[2], "--b=%s", tmpfile_with("b1.txt", "3f800000 3f800000\n"));
	EXPECT_CMD(1, "b1.txt:2: 1 lines", "--gpu=h100", "--input=bf16", "--output=fp32", fa, flag[2]);
	snprintf(flag[3], sizeof flag[3], "--check=%s",
		 tmpfile_with("d16.txt", "00111111100000000000000000000001\n" ONE));
	EXPECT_CMD(1, "d16.txt:1: 0x3f800001 is not an fp16 value", "--gpu=h100", "--input=fp16", "--output=fp16", fa,
		   fb, flag[3]);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -r '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
}

/* The command on recorded files: the check reports the full match, and
 * the printed d is the recorded file byte for byte. */
static void test_cmd_recorded(void **state)
{
	(void)state;
	const char *dir = data_dir_or_say();
	if (!dir)
		skip();
	char f[5][4200];
	snprintf(f[0], sizeof f[0], "--a=%s/H100/E4M3/a_H100_E4M3.txt", dir);
	snprintf(f[1], sizeof f[1], "--b=%s/H100/E4M3/b_H100_E4M3.txt", dir);
	snprintf(f[2], sizeof f[2], "--check=%s/H100/E4M3/d_H100_fp32.txt", dir);
	EXPECT_CMD(0, "5000 vectors, 5000 match", "--gpu=h200", "--input=e4m3", "--output=fp32", f[0], f[1], f[2]);
	snprintf(f[3], sizeof f[3], "--c=%s/H100/E4M3/c_H100_fp32.txt", dir);
	snprintf(f[2], sizeof f[2], "--check=%s/H100/E4M3/d_H100_fp16.txt", dir);
	EXPECT_CMD(0, "5000 vectors, 5000 match", "--gpu=h100", "--input=e4m3", "--output=fp16", f[0], f[1], f[3],
		   f[2]);
	snprintf(f[0], sizeof f[0], "--a=%s/A100/bf16/a_A100_bf16.txt", dir);
	snprintf(f[1], sizeof f[1], "--b=%s/A100/bf16/b_A100_bf16.txt", dir);
	snprintf(f[3], sizeof f[3], "--c=%s/A100/bf16/c_A100_fp32.txt", dir);
	snprintf(f[4], sizeof f[4], "%s/A100/bf16/d_A100_fp32.txt", dir);
	const char *argv[] = {"mma", "--gpu=a30", "--input=bf16", "--output=fp32", f[0], f[1], f[3]};
	cmd_result r = run_cmd((int)COUNT(argv), argv);
	size_t len;
	char *want = slurp(f[4], &len);
	assert_non_null(want);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.nout, len);
	assert_memory_equal(r.out, want, len);
	free(want);
	cmd_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded),  cmocka_unit_test(test_fp8_model_files), cmocka_unit_test(test_parameters),
		cmocka_unit_test(test_specials),  cmocka_unit_test(test_edges),           cmocka_unit_test(test_args),
		cmocka_unit_test(test_names),     cmocka_unit_test(test_cmd_usage),       cmocka_unit_test(test_cmd_files),
		cmocka_unit_test(test_cmd_recorded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
