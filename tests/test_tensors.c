/* test_tensors.c - .npy and .safetensors: exact element formats, round trips, files numpy and a stdlib writer made, and every bad file. */
#include "tensors_test.h"

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* ------------------------------------------------------ element formats */

/* Values stated by the formats' definitions (IEEE 754-2019 table 3.5; OCP
 * OFP8 rev. 1.0 table 2), typed in independently of experiments/tensors.c. */
static const struct {
	tensor_dtype dt;
	uint64_t bits;
	double want;
} anchors[] = {
	{TENSOR_F16, 0x3c00, 1.0}, {TENSOR_F16, 0x7bff, 65504.0}, {TENSOR_F16, 0x0001, 0x1p-24},
	{TENSOR_F16, 0x0400, 0x1p-14}, {TENSOR_F16, 0x3555, 0x1.554p-2}, {TENSOR_F16, 0x8000, -0.0},
	{TENSOR_F16, 0x7c00, INFINITY}, {TENSOR_F16, 0xfc00, -INFINITY}, {TENSOR_F16, 0x7e00, NAN},
	{TENSOR_BF16, 0x3f80, 1.0}, {TENSOR_BF16, 0x7f7f, 0x1.fep127}, {TENSOR_BF16, 0x0001, 0x1p-133},
	{TENSOR_BF16, 0xff80, -INFINITY}, {TENSOR_BF16, 0x7fc0, NAN},
	{TENSOR_F32, 0x00000001, 0x1p-149}, {TENSOR_F32, 0x7f7fffff, 0x1.fffffep127},
	{TENSOR_F64, 1, 0x1p-1074}, {TENSOR_F64, UINT64_C(0x7fefffffffffffff), 0x1.fffffffffffffp1023},
	{TENSOR_E4M3, 0x7e, 448.0}, {TENSOR_E4M3, 0x08, 0x1p-6}, {TENSOR_E4M3, 0x01, 0x1p-9},
	{TENSOR_E4M3, 0x07, 0x1.cp-7}, {TENSOR_E4M3, 0x78, 256.0}, {TENSOR_E4M3, 0x7f, NAN},
	{TENSOR_E4M3, 0xff, -NAN}, {TENSOR_E4M3, 0x80, -0.0}, {TENSOR_E4M3, 0xfe, -448.0},
	{TENSOR_E5M2, 0x7b, 57344.0}, {TENSOR_E5M2, 0x04, 0x1p-14}, {TENSOR_E5M2, 0x01, 0x1p-16},
	{TENSOR_E5M2, 0x7c, INFINITY}, {TENSOR_E5M2, 0xfc, -INFINITY}, {TENSOR_E5M2, 0x7d, NAN},
	{TENSOR_E5M2, 0x3c, 1.0},
	{TENSOR_I8, 0x80, -128}, {TENSOR_I16, 0xffff, -1}, {TENSOR_U16, 0xffff, 65535},
	{TENSOR_I32, 0x80000000, -2147483648.0}, {TENSOR_U32, 0xffffffff, 4294967295.0},
	{TENSOR_I64, UINT64_C(1) << 53, 0x1p53}, {TENSOR_I64, (uint64_t)-(INT64_C(1) << 53), -0x1p53},
};

static void test_decode_anchors(void **state)
{
	(void)state;
	for (size_t i = 0; i < COUNT(anchors); i++) {
		double x = 0;
		if (tensor_decode(&x, anchors[i].dt, anchors[i].bits) != SKV_OK)
			fail_msg("anchor %zu: %s 0x%llx refused", i, tensor_dtype_name(anchors[i].dt),
				 (unsigned long long)anchors[i].bits);
		CHECK_SAME(tensor_dtype_name(anchors[i].dt), i, x, anchors[i].want);
	}
	/* beyond 2^53 an integer is refused, never rounded */
	double x = 7;
	assert_int_equal(tensor_decode(&x, TENSOR_I64, (UINT64_C(1) << 53) + 1), SKV_ERANGE);
	assert_int_equal(tensor_decode(&x, TENSOR_U64, UINT64_MAX), SKV_ERANGE);
	assert_int_equal(tensor_decode(&x, TENSOR_I64, (uint64_t)INT64_MIN), SKV_ERANGE);
	CHECK_SAME("untouched", 0, x, 7.0);
}

/* Every pattern of the 8- and 16-bit formats against an independent decoding:
 * f16 by the compiler's _Float16 where it has one, E5M2 as the top byte of an
 * f16 (same exponent field and bias), bf16 as a float's top half; each finite
 * value is in skv's format (skv_round leaves it), positive patterns increase
 * strictly, and encoding gives the pattern back (NaNs: the quiet NaN). */
static double f16_ref(uint16_t b)
{
#ifdef __FLT16_MANT_DIG__
	_Float16 h;
	memcpy(&h, &b, sizeof h);
	return (double)h;
#else
	double x;
	tensor_decode(&x, TENSOR_F16, b);
	return x;
#endif
}

static void test_exhaustive_small_formats(void **state)
{
	(void)state;
	static const tensor_dtype dts[] = {TENSOR_F16, TENSOR_BF16, TENSOR_E4M3, TENSOR_E5M2};
	for (size_t f = 0; f < COUNT(dts); f++) {
		const tensor_dtype dt = dts[f];
		const uint64_t n = UINT64_C(1) << (8 * tensor_dtype_size(dt));
		double prev = -1;
		for (uint64_t b = 0; b < n; b++) {
			double x, ref, back;
			uint64_t e;
			assert_int_equal(tensor_decode(&x, dt, b), SKV_OK);
			if (dt == TENSOR_F16)
				ref = f16_ref((uint16_t)b);
			else if (dt == TENSOR_E5M2)
				ref = f16_ref((uint16_t)(b << 8));
			else if (dt == TENSOR_BF16) {
				const uint32_t u = (uint32_t)b << 16;
				float g;
				memcpy(&g, &u, sizeof g);
				ref = g;
			} else
				ref = b == 0x7f || b == 0xff ? copysign(NAN, b & 0x80 ? -1 : 1)
				      : ((b & 0x78) ? ldexp(8 + (double)(b & 7), (int)((b >> 3) & 15) - 10)
						    : ldexp((double)(b & 7), -9)) * (b & 0x80 ? -1 : 1);
			CHECK_SAME(tensor_dtype_name(dt), b, x, ref);
			if (isfinite(x) && (dt == TENSOR_F16 || dt == TENSOR_BF16))
				CHECK_SAME("in skv's format", b, skv_round(dt == TENSOR_F16 ? SKV_FP16 : SKV_BF16, x), x);
			if (b < n / 2 && !isnan(x)) {
				if (!(x > prev) && b)
					fail_msg("%s pattern 0x%llx: %a not above %a", tensor_dtype_name(dt),
						 (unsigned long long)b, x, prev);
				prev = x;
			}
			assert_int_equal(tensor_encode(&e, dt, x), SKV_OK);
			assert_int_equal(tensor_decode(&back, dt, e), SKV_OK);
			CHECK_SAME("encode", b, back, x);
			if (!isnan(x) && e != b)
				fail_msg("%s: 0x%llx encodes as 0x%llx", tensor_dtype_name(dt),
					 (unsigned long long)b, (unsigned long long)e);
		}
	}
}

/* f32 and f64: seeded patterns against memcpy into float and double. */
static void test_wide_formats_sampled(void **state)
{
	(void)state;
	uint64_t s = 17;
	for (int i = 0; i < 200000; i++) {
		const uint64_t r = splitmix(&s);
		const uint32_t u = (uint32_t)r;
		float g;
		double d, x, y;
		uint64_t e;
		memcpy(&g, &u, sizeof g);
		memcpy(&d, &r, sizeof d);
		assert_int_equal(tensor_decode(&x, TENSOR_F32, u), SKV_OK);
		assert_int_equal(tensor_decode(&y, TENSOR_F64, r), SKV_OK);
		CHECK_SAME("f32", u, x, (double)g);
		CHECK_SAME("f64", r, y, d);
		assert_int_equal(tensor_encode(&e, TENSOR_F64, d), SKV_OK);
		if (!isnan(d) && e != r)
			fail_msg("f64 0x%llx encodes as 0x%llx", (unsigned long long)r, (unsigned long long)e);
		assert_int_equal(tensor_encode(&e, TENSOR_F32, (double)g), SKV_OK);
		if (!isnan(g) && e != u)
			fail_msg("f32 0x%x encodes as 0x%llx", u, (unsigned long long)e);
	}
}

/* A writer never rounds: values outside a format are refused. */
static void test_encode_refuses_inexact(void **state)
{
	(void)state;
	static const struct {
		tensor_dtype dt;
		double x;
	} bad[] = {
		{TENSOR_F16, 0.1}, {TENSOR_F16, 65520.0}, {TENSOR_F16, 0x1p-25}, {TENSOR_F16, 0x1.8p-24},
		{TENSOR_F16, 0x1.002p0}, {TENSOR_BF16, 0x1.01p0}, {TENSOR_BF16, 0x1p-134},
		{TENSOR_F32, 0x1p-150}, {TENSOR_F32, 1e39}, {TENSOR_E4M3, 480.0}, {TENSOR_E4M3, 449.0},
		{TENSOR_E4M3, INFINITY}, {TENSOR_E4M3, 0x1p-10}, {TENSOR_E5M2, 61440.0},
		{TENSOR_E5M2, 1.125}, {TENSOR_I8, 128}, {TENSOR_I8, 1.5}, {TENSOR_U8, -1},
		{TENSOR_U16, NAN}, {TENSOR_I32, INFINITY}, {TENSOR_I16, -0.0}, {TENSOR_I64, 0x1p53 + 2}, {TENSOR_U64, 0x1p60},
	};
	for (size_t i = 0; i < COUNT(bad); i++) {
		uint64_t b = 12345;
		if (tensor_encode(&b, bad[i].dt, bad[i].x) != SKV_ERANGE || b != 12345)
			fail_msg("case %zu: %a accepted by %s", i, bad[i].x, tensor_dtype_name(bad[i].dt));
	}
}

/* ------------------------------------------------------------ round trips */

/* Every value of dt when it has at most 2^16 patterns; else seeded
 * patterns with the extremes. Returns the count (at most 65536). */
static size_t values_of(double *v, tensor_dtype dt)
{
	const size_t sz = tensor_dtype_size(dt);
	uint64_t s = 99 + (uint64_t)dt;
	if (sz <= 2) {
		for (uint64_t b = 0; b < (UINT64_C(1) << (8 * sz)); b++)
			assert_int_equal(tensor_decode(&v[b], dt, b), SKV_OK);
		return (size_t)1 << (8 * sz);
	}
	size_t n = 0;
	const double ext[] = {0, -0.0, 1, -1, INFINITY, -INFINITY, NAN};
	for (size_t k = 0; k < COUNT(ext); k++)
		if (tensor_dtype_is_float(dt) || (isfinite(ext[k]) && !signbit(ext[k])) ||
		    (ext[k] == -1 && dt <= TENSOR_I64))
			v[n++] = ext[k];
	while (n < 5000) {
		uint64_t b = splitmix(&s);
		if (!tensor_dtype_is_float(dt) && sz == 8)
			b = (b & 1 ? ~UINT64_C(0) : 0) ^ (b >> 11); /* within 2^53 */
		if (tensor_decode(&v[n], dt, b) == SKV_OK)
			n++;
	}
	return n;
}

static void test_npy_round_trip(void **state)
{
	(void)state;
	static double v[65536];
	char path[128];
	for (int dt = 0; dt < TENSOR_NDTYPES; dt++) {
		tensor t, back;
		const size_t n = values_of(v, (tensor_dtype)dt), shape[2] = {n / 8, 8};
		CHECK_OK(tensor_init(&t, "rt", (tensor_dtype)dt, 2, shape, v, &err));
		in_dir(path, sizeof path, "rt.npy");
		CHECK_OK(npy_write(path, &t, &err));
		const tensor_read_opts o = {tensor_dtype_size(dt) <= 2 && tensor_dtype_is_float(dt) &&
						    dt != TENSOR_F16 ? (tensor_dtype)dt : TENSOR_NONE, 0};
		CHECK_OK(npy_read(&back, path, &o, &err));
		assert_string_equal(back.name, "rt");
		assert_int_equal(back.dtype, dt);
		assert_int_equal(back.rank, 2);
		assert_int_equal(back.shape[0], n / 8);
		for (size_t i = 0; i < back.count; i++)
			CHECK_SAME(tensor_dtype_name(dt), i, back.values[i], v[i]);
		tensor_free(&t);
		tensor_free(&back);
	}
}

static void test_safetensors_round_trip(void **state)
{
	(void)state;
	static double v[65536];
	tensor ts[TENSOR_NDTYPES + 2];
	char path[128], name[64];
	const tensor_meta meta[2] = {{"format", "pt"}, {"note", "caf\xc3\xa9 \"quoted\"\n"}};
	for (int dt = 0; dt < TENSOR_NDTYPES; dt++) {
		const size_t n = values_of(v, (tensor_dtype)dt), shape[3] = {2, n / 16, 8};
		snprintf(name, sizeof name, "%s \"t\"\t\xe2\x82\xac", tensor_dtype_name(dt));
		CHECK_OK(tensor_init(&ts[dt], name, (tensor_dtype)dt, 3, shape, v, &err));
	}
	const size_t zero[2] = {0, 3};
	CHECK_OK(tensor_init(&ts[TENSOR_NDTYPES], "empty", TENSOR_F32, 2, zero, NULL, &err));
	CHECK_OK(tensor_init(&ts[TENSOR_NDTYPES + 1], "scalar", TENSOR_F64, 0, NULL, (double[]){-2.5},
			     &err));
	in_dir(path, sizeof path, "rt.safetensors");
	CHECK_OK(safetensors_write(path, ts, COUNT(ts), meta, 2, &err));
	tensor_set s;
	CHECK_OK(safetensors_read(&s, path, NULL, &err));
	assert_int_equal(s.ntensors, COUNT(ts));
	assert_int_equal(s.nmeta, 2);
	assert_string_equal(s.meta[1].value, meta[1].value);
	for (size_t i = 0; i < COUNT(ts); i++) {
		const tensor *b = tensor_set_find(&s, ts[i].name);
		assert_non_null(b);
		assert_int_equal(b->dtype, ts[i].dtype);
		assert_int_equal(b->rank, ts[i].rank);
		assert_int_equal(b->count, ts[i].count);
		assert_string_equal(b->file_dtype, tensor_dtype_st_name(ts[i].dtype));
		for (size_t k = 0; k < b->count; k++)
			CHECK_SAME(b->name, k, b->values[k], ts[i].values[k]);
		/* data order: decreasing element size, as the reference writer */
		if (i && tensor_dtype_size(s.tensors[i].dtype) > tensor_dtype_size(s.tensors[i - 1].dtype))
			fail_msg("%s after %s", s.tensors[i].name, s.tensors[i - 1].name);
	}
	tensor_set_free(&s);
	for (size_t i = 0; i < COUNT(ts); i++)
		tensor_free(&ts[i]);
	/* no tensors at all: "{}" padded to 8, and back */
	unsigned char *b;
	size_t n;
	CHECK_OK(safetensors_write_mem(&b, &n, NULL, 0, NULL, 0, "none", &err));
	assert_int_equal(n, 16);
	CHECK_OK(safetensors_read_mem(&s, "none", b, n, NULL, &err));
	assert_int_equal(s.ntensors, 0);
	free(b);
	tensor_set_free(&s);
}

/* --------------------------------------- files written by other programs */

/* Splits line at spaces into at most max tokens. */
static size_t tokens(char *line, char **tok, size_t max)
{
	size_t n = 0;
	for (char *save = NULL, *t = strtok_r(line, " \n", &save); t && n < max;
	     t = strtok_r(NULL, " \n", &save))
		tok[n++] = t;
	return n;
}

/* Compares t with manifest tokens: RANK D1.. V1.. (values as hex floats). */
static void check_against(const tensor *t, char **tok, size_t n, const char *what)
{
	const size_t rank = strtoull(tok[0], NULL, 10);
	if (rank != t->rank || n != 1 + rank + t->count)
		fail_msg("%s: rank %zu, %zu tokens; read rank %zu, %zu values", what, rank, n, t->rank,
			 t->count);
	for (size_t d = 0; d < rank; d++)
		assert_int_equal(strtoull(tok[1 + d], NULL, 10), t->shape[d]);
	for (size_t i = 0; i < t->count; i++) {
		double want = strtod(tok[1 + rank + i], NULL);
		if (isnan(want) && isnan(t->values[i]))
			continue; /* Python prints every NaN as "nan" */
		CHECK_SAME(what, i, t->values[i], want);
	}
}

static char *hex_to_str(const char *h)
{
	static char s[256];
	size_t n = 0;
	for (; h[0] && h[1] && n + 1 < sizeof s; h += 2) {
		unsigned c;
		sscanf(h, "%2x", &c);
		s[n++] = (char)c;
	}
	s[n] = 0;
	return s;
}

/* Runs a script of tests/data with /usr/bin/python3 (Debian's, where
 * python3-numpy installs); skips the test when python or numpy is absent. */
static FILE *script(const char *name, const char *args)
{
	char cmd[8192];
	if (access("/usr/bin/python3", X_OK) != 0) {
		print_message("skipped: /usr/bin/python3 is missing\n");
		skip();
	}
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 -B '%s/tests/data/%s' %s", root, name, args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	return p;
}

static void script_done(FILE *p)
{
	const int rc = pclose(p);
	if (WIFEXITED(rc) && WEXITSTATUS(rc) == 3) {
		print_message("skipped: numpy is missing (Debian: apt-get install python3-numpy)\n");
		skip();
	}
	assert_int_equal(rc, 0);
}

static void test_npy_from_numpy(void **state)
{
	(void)state;
	char args[128], path[128], *line = NULL, *tok[1024];
	size_t cap = 0, files = 0;
	snprintf(args, sizeof args, "'%s'", dir);
	script_done(script("make_npy.py", args));
	FILE *f = fopen(in_dir(path, sizeof path, "npy_expected.txt"), "r");
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		const size_t n = tokens(line, tok, COUNT(tok));
		tensor_read_opts o = {TENSOR_NONE, 0};
		tensor t;
		assert_true(n >= 4);
		if (strcmp(tok[1], "none") != 0)
			assert_int_equal(tensor_dtype_parse(&o.raw, tok[1]), SKV_OK);
		CHECK_OK(npy_read(&t, in_dir(path, sizeof path, tok[0]), &o, &err));
		assert_string_equal(t.file_dtype, tok[2]);
		check_against(&t, tok + 3, n - 3, tok[0]);
		tensor_free(&t);
		files++;
	}
	free(line);
	fclose(f);
	assert_int_equal(files, 16);
	/* finite inputs required: numpy's inf is named with its index */
	tensor t;
	const tensor_read_opts fin = {TENSOR_NONE, 1};
	in_dir(path, sizeof path, "f2_special.npy");
	CHECK_ERR(npy_read(&t, path, &fin, &err), SKV_EINVAL, path, "f2_special",
		  "element [4] (inf) is not finite");
	/* without raw, the fp8 patterns numpy saved are the integers they are */
	CHECK_OK(npy_read(&t, in_dir(path, sizeof path, "e4m3_u1.npy"), NULL, &err));
	assert_int_equal(t.dtype, TENSOR_U8);
	CHECK_SAME("u8", 255, t.values[255], 255.0);
	tensor_free(&t);
}

/* What skv writes, numpy reads back as the same values. */
static void test_npy_read_by_numpy(void **state)
{
	(void)state;
	static const struct {
		tensor_dtype dt;
		const char *descr;
		size_t rank, shape[3], n;
		double v[6];
	} cases[] = {
		{TENSOR_F16, "<f2", 2, {2, 3}, 6, {1, -0.5, 65504, 0x1p-24, -0.0, INFINITY}},
		{TENSOR_BF16, "<u2", 1, {4}, 4, {1, -2.5, 0x1p-133, 0x1.fep127}},
		{TENSOR_E4M3, "|u1", 1, {3}, 3, {448, -0x1p-9, NAN}},
		{TENSOR_E5M2, "|u1", 3, {1, 1, 2}, 2, {57344, -INFINITY}},
		{TENSOR_I64, "<i8", 1, {4}, 4, {0, 5, -11, 0x1p53}},
		{TENSOR_F64, "<f8", 0, {0}, 1, {0x1p-1074}},
		{TENSOR_F32, "<f4", 2, {0, 2}, 0, {0}},
		{TENSOR_U8, "|u1", 1, {2}, 2, {0, 255}},
	};
	for (size_t c = 0; c < COUNT(cases); c++) {
		char path[128], args[256], *line = NULL, *tok[64];
		size_t cap = 0;
		tensor t;
		CHECK_OK(tensor_init(&t, "x", cases[c].dt, cases[c].rank, cases[c].shape, cases[c].v, &err));
		snprintf(path, sizeof path, "%s/skv_%zu.npy", dir, c);
		CHECK_OK(npy_write(path, &t, &err));
		const int raw = cases[c].dt == TENSOR_BF16 || cases[c].dt == TENSOR_E4M3 ||
				cases[c].dt == TENSOR_E5M2;
		snprintf(args, sizeof args, "check '%s' %s", path, raw ? tensor_dtype_name(cases[c].dt) : "none");
		FILE *p = script("make_npy.py", args);
		const ssize_t got = getline(&line, &cap, p);
		script_done(p);
		assert_true(got > 0);
		const size_t n = tokens(line, tok, COUNT(tok));
		assert_string_equal(tok[2], cases[c].descr);
		assert_string_not_equal(tok[n - 1], "fortran");
		check_against(&t, tok + 3, n - 3, path);
		free(line);
		tensor_free(&t);
	}
}

static void test_safetensors_from_stdlib_writer(void **state)
{
	(void)state;
	char args[128], path[128], *line = NULL, *tok[1024];
	size_t cap = 0, nt = 0, nm = 0;
	tensor_set s;
	snprintf(args, sizeof args, "'%s'", dir);
	script_done(script("make_safetensors.py", args));
	CHECK_OK(safetensors_read(&s, in_dir(path, sizeof path, "interop.safetensors"), NULL, &err));
	FILE *f = fopen(in_dir(path, sizeof path, "st_expected.txt"), "r");
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		const size_t n = tokens(line, tok, COUNT(tok));
		if (strcmp(tok[0], "meta") == 0) {
			char key[256];
			snprintf(key, sizeof key, "%s", hex_to_str(tok[1]));
			size_t k = 0;
			while (k < s.nmeta && strcmp(s.meta[k].key, key) != 0)
				k++;
			assert_true(k < s.nmeta);
			assert_string_equal(s.meta[k].value, hex_to_str(n > 2 ? tok[2] : ""));
			nm++;
			continue;
		}
		const tensor *t = tensor_set_find(&s, hex_to_str(tok[0]));
		if (!t)
			fail_msg("no tensor \"%s\"", hex_to_str(tok[0]));
		assert_string_equal(t->file_dtype, tok[1]);
		check_against(t, tok + 2, n - 2, t->name);
		nt++;
	}
	free(line);
	fclose(f);
	assert_int_equal(nt, s.ntensors);
	assert_int_equal(nt, 11);
	assert_int_equal(nm, s.nmeta);
	tensor_set_free(&s);
}

/* What skv writes, the stdlib reader (strict: tiling, alignment) reads. */
static void test_safetensors_read_by_stdlib_reader(void **state)
{
	(void)state;
	char path[128], args[256], *line = NULL, *tok[300];
	size_t cap = 0, nt = 0;
	static double v[256];
	tensor ts[4];
	const size_t s1[1] = {256}, s2[2] = {3, 2}, s3[1] = {5};
	for (int b = 0; b < 256; b++)
		assert_int_equal(tensor_decode(&v[b], TENSOR_E4M3, (uint64_t)b), SKV_OK);
	CHECK_OK(tensor_init(&ts[0], "fp8 \xc3\xa9", TENSOR_E4M3, 1, s1, v, &err));
	CHECK_OK(tensor_init(&ts[1], "w\"1\"", TENSOR_BF16, 2, s2, (double[]){1, 2, 3, -4, 0x1p-133, 0},
			     &err));
	CHECK_OK(tensor_init(&ts[2], "a", TENSOR_F64, 1, s3, (double[]){0.1, 1e300, -0.0, 5, 6}, &err));
	CHECK_OK(tensor_init(&ts[3], "lse", TENSOR_F32, 0, NULL, (double[]){-1.5}, &err));
	const tensor_meta meta[1] = {{"k", "v\n"}};
	in_dir(path, sizeof path, "skv.safetensors");
	CHECK_OK(safetensors_write(path, ts, 4, meta, 1, &err));
	snprintf(args, sizeof args, "check '%s'", path);
	FILE *p = script("make_safetensors.py", args);
	while (getline(&line, &cap, p) > 0) {
		const size_t n = tokens(line, tok, COUNT(tok));
		if (strcmp(tok[0], "meta") == 0) {
			assert_string_equal(hex_to_str(tok[2]), "v\n");
			continue;
		}
		size_t k = 0;
		while (k < 4 && strcmp(ts[k].name, hex_to_str(tok[0])) != 0)
			k++;
		assert_true(k < 4);
		assert_string_equal(tok[1], tensor_dtype_st_name(ts[k].dtype));
		check_against(&ts[k], tok + 2, n - 2, ts[k].name);
		nt++;
	}
	script_done(p);
	assert_int_equal(nt, 4);
	free(line);
	for (int k = 0; k < 4; k++)
		tensor_free(&ts[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_anchors),
		cmocka_unit_test(test_exhaustive_small_formats),
		cmocka_unit_test(test_wide_formats_sampled),
		cmocka_unit_test(test_encode_refuses_inexact),
		cmocka_unit_test(test_npy_round_trip),
		cmocka_unit_test(test_safetensors_round_trip),
		cmocka_unit_test(test_npy_from_numpy),
		cmocka_unit_test(test_npy_read_by_numpy),
		cmocka_unit_test(test_safetensors_from_stdlib_writer),
		cmocka_unit_test(test_safetensors_read_by_stdlib_reader),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
