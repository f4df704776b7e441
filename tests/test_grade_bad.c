/* test_grade_bad.c - skv grade and export refuse what they cannot grade or write: every bad file with one line naming the file, the tensor and the problem (exit 2), the manifest's errors by line, ambiguous LSE bases, bad flags. */
#include "grade_test.h"

/* --------------------------------------------------------- a good dump */

/* Two query heads over one KV head, 5 keys, head_dim 8, two splits [0, 2),
 * [2, 5); the outputs plausible, not right (grading does not need them
 * right). shape_k / shape_v / ... replace one tensor's shape. */
typedef struct {
	const char *name;
	tensor_dtype dt;
	size_t rank, shape[3];
} spec;

static const spec good[] = {
	{"q", TENSOR_F32, 2, {2, 8}},           {"k", TENSOR_F32, 3, {1, 5, 8}},
	{"v", TENSOR_F32, 3, {1, 5, 8}},        {"partial_out", TENSOR_F32, 3, {2, 2, 8}},
	{"partial_lse", TENSOR_F32, 2, {2, 2}}, {"out", TENSOR_F32, 2, {2, 8}},
	{"lse", TENSOR_F32, 1, {2}},            {"splits", TENSOR_I64, 1, {3}},
};

/* The tensors of the good dump with tensor `which` changed to `alt` (NULL:
 * none changed) and value `bad` at element `at` of it (when not 0). */
static void dump_tensors(tensor *t, const spec *alt, int which, size_t at, double bad)
{
	double v[256];
	for (size_t i = 0; i < COUNT(good); i++) {
		const spec *s = (int)i == which && alt ? alt : &good[i];
		size_t n = 1;
		for (size_t k = 0; k < s->rank; k++)
			n *= s->shape[k];
		for (size_t k = 0; k < n && k < 256; k++)
			v[k] = s->dt == TENSOR_I64   ? (double)(k == 0 ? 0 : k == 1 ? 2 : 5)
			       : s->dt == TENSOR_I16 ? (double)(k % 5)
						     : (double)((k * 7) % 5) * 0.25 - 0.5;
		if ((int)i == which && bad != 0)
			v[at] = bad;
		CHECK_OK(tensor_init(&t[i], s->name, s->dt, s->rank, s->shape, v, &err));
	}
}

/* Writes the dump as a folder of .npy files (folder) or one .safetensors
 * file, with one tensor changed. */
static void write_dump(const char *path, int folder, const spec *alt, int which, size_t at, double bad)
{
	tensor t[COUNT(good)];
	dump_tensors(t, alt, which, at, bad);
	if (folder) {
		mkdir(path, 0755);
		for (size_t i = 0; i < COUNT(good); i++) {
			char f[256];
			snprintf(f, sizeof f, "%s/%s.npy", path, t[i].name);
			CHECK_OK(npy_write(f, &t[i], &err));
		}
	} else {
		CHECK_OK(safetensors_write(path, t, COUNT(good), NULL, 0, &err));
	}
	for (size_t i = 0; i < COUNT(good); i++)
		tensor_free(&t[i]);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* skv grade ARGS exits 2 with one line on stderr holding every string of
 * want (NULL-terminated), nothing on stdout. */
static void refused(char **argv, const char *const *want, int line)
{
	char *out, *e;
	const int rc = run_cmd(&out, &e, 0, argv);
	int ok = rc == 2 && !*out && count_lines(e) == 1;
	for (size_t i = 0; ok && want[i]; i++)
		ok = strstr(e, want[i]) != NULL;
	if (!ok)
		fail_msg("test_grade_bad.c:%d: status %d, stderr \"%s\", stdout %zu bytes (want %s ...)", line, rc, e,
			 strlen(out), want[0]);
	free(out);
	free(e);
}

#define REFUSED(argv, ...) refused(argv, (const char *const[]){__VA_ARGS__, NULL}, __LINE__)

static void test_good_dump_grades(void **state)
{
	(void)state;
	char path[128], *out, *e;
	write_dump(in_dir(path, sizeof path, "good"), 1, NULL, -1, 0, 0);
	char *argv[] = {"grade", path, "--lse-base=e", NULL};
	assert_int_equal(run_cmd(&out, &e, 0, argv), 0);
	assert_string_equal(e, "");
	assert_non_null(strstr(out, "partial_out"));
	free(out), free(e);
	write_dump(in_dir(path, sizeof path, "good.safetensors"), 0, NULL, -1, 0, 0);
	char *argv2[] = {"grade", path, "--lse-base=2", "--format=json", NULL};
	assert_int_equal(run_cmd(&out, &e, 0, argv2), 0);
	assert_non_null(strstr(out, "\"base\": \"2\", \"detected\": false"));
	free(out), free(e);
}

/* ---------------------------------------------------------- bad files */

static void test_bad_npy_files(void **state)
{
	(void)state;
	char d[128], f[192];
	const spec k7 = {"k", TENSOR_F32, 3, {1, 5, 7}}, v4 = {"v", TENSOR_F32, 3, {1, 4, 8}};
	const spec po3 = {"partial_out", TENSOR_F32, 3, {3, 2, 8}}, b4 = {"splits", TENSOR_I64, 1, {3}};
	const spec sf = {"splits", TENSOR_F32, 1, {3}};
	const spec qi = {"q", TENSOR_I16, 2, {2, 8}}, k4 = {"k", TENSOR_F32, 3, {4, 5, 8}};
	char *argv[] = {"grade", d, NULL};
	struct {
		const spec *alt;
		int which;
		size_t at;
		double bad;
		const char *tensor, *problem;
	} cases[] = {
		{&k7, GT_K, 0, 0, "tensor k:", "shape [1, 5, 7] where [*, *, 8] is expected"},
		{&v4, GT_V, 0, 0, "tensor v:", "shape [1, 4, 8] where [1, 5, 8] is expected"},
		{&po3, GT_PARTIAL_OUT, 0, 0, "tensor partial_out:", "shape [3, 2, 8] where [2, 2, 8] is expected"},
		{&b4, GT_SPLITS, 2, 4, "tensor splits:", "element [2] (0x1p+2) is not the key count"},
		{&b4, GT_SPLITS, 1, 9, "tensor splits:", "lies outside the keys"},
		{&sf, GT_SPLITS, 0, 0, "tensor splits:", "dtype <f4 where integer key boundaries are expected"},
		{&k4, GT_K, 0, 0, "tensor k:", "4 KV heads do not divide q's 2 query heads"},
		{&qi, GT_Q, 0, 0, "tensor q:", "dtype <i2 holds integers"},
		{&good[GT_Q], GT_Q, 11, NAN, "tensor q:", "element [1, 3] (nan) is not finite"},
		{&good[GT_V], GT_V, 7, INFINITY, "tensor v:", "element [0, 0, 7] (inf) is not finite"},
		{&good[GT_K], GT_K, 39, -INFINITY, "tensor k:", "element [0, 4, 7] (-inf) is not finite"},
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		snprintf(d, sizeof d, "%s/bad%zu", dir, i);
		write_dump(d, 1, cases[i].alt, cases[i].which, cases[i].at, cases[i].bad);
		snprintf(f, sizeof f, "%s/%s.npy", d, grade_tensor_name(cases[i].which));
		REFUSED(argv, f, cases[i].tensor, cases[i].problem);
	}
	/* a truncated file: its last 3 bytes cut */
	snprintf(d, sizeof d, "%s/bad_trunc", dir);
	write_dump(d, 1, NULL, -1, 0, 0);
	snprintf(f, sizeof f, "%s/v.npy", d);
	struct stat st;
	assert_int_equal(stat(f, &st), 0);
	assert_int_equal(truncate(f, st.st_size - 3), 0);
	REFUSED(argv, f, "tensor v:", "truncated");
	/* partials without their boundaries */
	snprintf(f, sizeof f, "%s/splits.npy", d);
	write_dump(d, 1, NULL, -1, 0, 0);
	assert_int_equal(unlink(f), 0);
	REFUSED(argv, "tensor partial_out:", "partials need their split boundaries");
}

/* Hand-made .safetensors bytes: the header size N, the JSON, the data. */
static void put_st(const char *path, uint64_t n, const char *json, size_t ndata)
{
	unsigned char b[2048] = {0};
	const size_t h = strlen(json);
	for (int k = 0; k < 8; k++)
		b[k] = (unsigned char)(n >> (8 * k));
	memcpy(b + 8, json, h);
	put_file(path, b, 8 + h + ndata);
}

static void test_bad_safetensors_files(void **state)
{
	(void)state;
	char p[128];
	char *argv[] = {"grade", p, NULL};
	const char *overlap = "{\"q\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[0,32]},"
			      "\"k\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[16,48]}}";
	put_st(in_dir(p, sizeof p, "overlap.safetensors"), strlen(overlap), overlap, 48);
	REFUSED(argv, p, "tensor k:", "overlap those of tensor \"q\"");
	put_st(in_dir(p, sizeof p, "cap.safetensors"), 100000001, "{}", 0);
	REFUSED(argv, p, "exceeds the cap of 100000000");
	/* a header that claims more bytes than the file has */
	write_dump(in_dir(p, sizeof p, "lies.safetensors"), 0, NULL, -1, 0, 0);
	FILE *f = fopen(p, "r+b");
	unsigned char n8[8];
	assert_int_equal(fread(n8, 1, 8, f), 8);
	n8[1] += 0x40; /* 16384 more */
	rewind(f);
	assert_int_equal(fwrite(n8, 1, 8, f), 8);
	fclose(f);
	REFUSED(argv, p, "truncated: the header size says");
	/* a tensor named explicitly that the file lacks */
	write_dump(in_dir(p, sizeof p, "ok.safetensors"), 0, NULL, -1, 0, 0);
	char flag[200];
	snprintf(flag, sizeof flag, "--out=%s:nope", p);
	char *argv2[] = {"grade", p, flag, NULL};
	REFUSED(argv2, p, "tensor nope:", "not in the file (it holds: ");
	/* NaN inside a .safetensors q */
	write_dump(in_dir(p, sizeof p, "nan.safetensors"), 0, &good[GT_Q], GT_Q, 0, NAN);
	REFUSED(argv, p, "tensor q:", "element [0, 0] (nan) is not finite");
}

/* ------------------------------------------------------------- LSE base */

/* Every score 0 and one key per split: each split's exact LSE is 0 in
 * both bases, so the values cannot tell them apart. Given, it grades. */
static void test_base_ambiguous(void **state)
{
	(void)state;
	char p[128];
	tensor t[5];
	const size_t sq[1] = {2}, sk[2] = {2, 2}, sl[1] = {2}, sb[1] = {3};
	CHECK_OK(tensor_init(&t[0], "q", TENSOR_F32, 1, sq, (double[]){0, 0}, &err));
	CHECK_OK(tensor_init(&t[1], "k", TENSOR_F32, 2, sk, (double[]){1, 2, 3, 4}, &err));
	CHECK_OK(tensor_init(&t[2], "v", TENSOR_F32, 2, sk, (double[]){1, 2, 3, 4}, &err));
	CHECK_OK(tensor_init(&t[3], "partial_lse", TENSOR_F32, 1, sl, (double[]){0, 0}, &err));
	CHECK_OK(tensor_init(&t[4], "splits", TENSOR_I64, 1, sb, (double[]){0, 1, 2}, &err));
	G_OK(safetensors_write(in_dir(p, sizeof p, "amb.safetensors"), t, 5, NULL, 0, &err));
	char *argv[] = {"grade", p, NULL};
	REFUSED(argv, "cannot tell the LSE base", "differ by at most 0", "--lse-base=e");
	char *given[] = {"grade", p, "--lse-base=2", NULL}, *out, *e;
	assert_int_equal(run_cmd(&out, &e, 0, given), 0);
	assert_non_null(strstr(out, "LSE base 2, as given"));
	free(out), free(e);
	/* LSEs 5 away from both bases' values */
	tensor_free(&t[3]);
	CHECK_OK(tensor_init(&t[3], "partial_lse", TENSOR_F32, 1, sl, (double[]){5, 5}, &err));
	G_OK(safetensors_write(in_dir(p, sizeof p, "far.safetensors"), t, 5, NULL, 0, &err));
	REFUSED(argv, "cannot tell the LSE base", "lie up to 5 from the exact natural LSEs");
	/* one split of two keys, both scores 0: L = ln 2 (base 2: exactly 1).
	 * A stored LSE of 1.2 ln 2 is 0.2 ln 2 from base e's value and 0.24 ln 2
	 * from base 2's, which are 0.44 ln 2 apart: more than a quarter of that
	 * from either, refused; ln 2 and 1 are told */
	const size_t s1[1] = {1}, sb2[1] = {2};
	tensor_free(&t[3]);
	tensor_free(&t[4]);
	CHECK_OK(tensor_init(&t[4], "splits", TENSOR_I64, 1, sb2, (double[]){0, 2}, &err));
	static const struct {
		double lse;
		int base; /* -1: refused */
	} near[] = {{0x1.62e43p-1 * 1.2, -1}, {0x1.62e43p-1, SKV_BASE_E}, {1.0, SKV_BASE_2}};
	for (size_t i = 0; i < COUNT(near); i++) {
		CHECK_OK(tensor_init(&t[3], "partial_lse", TENSOR_F64, 1, s1, &near[i].lse, &err));
		G_OK(safetensors_write(in_dir(p, sizeof p, "near.safetensors"), t, 5, NULL, 0, &err));
		tensor_free(&t[3]);
		if (near[i].base < 0) {
			REFUSED(argv, "cannot tell the LSE base");
			continue;
		}
		graded g;
		grade_it(&g, p, NULL, NULL, 0);
		assert_true(g.r.detected);
		assert_int_equal(g.r.base, near[i].base);
		graded_free(&g);
	}
	for (int i = 0; i < 5; i++)
		tensor_free(&t[i]);
}

/* ------------------------------------------------------------ the flags */

static void test_bad_flags(void **state)
{
	(void)state;
	char p[128], mixed[128];
	write_dump(in_dir(p, sizeof p, "flags.safetensors"), 0, NULL, -1, 0, 0);
	const spec k16 = {"k", TENSOR_F16, 3, {1, 5, 8}};
	write_dump(in_dir(mixed, sizeof mixed, "mixed.safetensors"), 0, &k16, GT_K, 0, 0);
	char *a1[] = {"grade", p, "--top=3", NULL};
	REFUSED(a1, "are --identify's");
	char *a2[] = {"grade", p, "--identify", "--split-counts=2", "--lse-base=e", NULL};
	REFUSED(a2, "the dump has its own splits (2)");
	char *a3[] = {"grade", p, p, NULL};
	REFUSED(a3, "one dump only");
	char *a4[] = {"grade", "--prefix=fa2", "--q=x.npy", NULL};
	REFUSED(a4, "--prefix=fa2 names the outputs of a DUMP");
	char *a5[] = {"grade", mixed, "--identify", "--lse-base=e", NULL};
	REFUSED(a5, "needs q, k and v in one format", "k fp16");
	char *a6[] = {"grade", p, "--format=xml", NULL};
	REFUSED(a6, "skv grade: unknown output format 'xml' for --format");
	char *a7[] = {"grade", NULL};
	REFUSED(a7, "no dump given");
	char *a8[] = {"grade", p, "--lse-base=10", NULL};
	REFUSED(a8, "--lse-base=10: expected e, 2 or auto");
	char *a9[] = {"grade", p, "--identify", "--presets=fa2,nope", NULL};
	REFUSED(a9, "unknown preset 'nope'");
	char *a10[] = {"grade", p, "--scale=-1", NULL};
	REFUSED(a10, "--scale=-1: expected a positive finite number");
	/* a value is one value: a newline in it is no second manifest line */
	char *a10n[] = {"grade", p, "--scale=0.5\nq = x.npy", NULL};
	REFUSED(a10n, "--scale=0.5\\nq = x.npy: expected a positive finite number");
	char *a11[] = {"grade", p, "--bogus=1", NULL};
	REFUSED(a11, "unknown option --bogus");
	char *a12[] = {"grade", "/nonexistent/dir", NULL}, *out, *e;
	assert_int_equal(run_cmd(&out, &e, 0, a12), 1); /* not a bad file: no file (I/O) */
	assert_non_null(strstr(e, "cannot open"));
	free(out), free(e);
	char *a13[] = {"grade", "--help", NULL};
	assert_int_equal(run_cmd(&out, &e, 0, a13), 0);
	assert_non_null(strstr(out, "usage: skv grade"));
	free(out), free(e);
}

static void test_export_refuses(void **state)
{
	(void)state;
	char o[160], full[128], *out, *e;
	snprintf(o, sizeof o, "--out=%s/x.safetensors", dir);
	char *a1[] = {"export", o, "--heads=4", "--kv-heads=3", NULL};
	char *a2[] = {"export", o, "--preset=nope", NULL};
	char *a3[] = {"export", o, "--layout=all-empty", "--splits=2", NULL};
	char *a4[] = {"export", o, "--preset=flashinfer", "--head-dim=48", "--ctx=64", NULL};
	char *a5[] = {"export", o, "--ctx=abc", NULL};
	char *a6[] = {"export", "--ctx=64", NULL};
	char *a7[] = {"export", o, "--splits=10", "--ctx=5", NULL};
	char *a8[] = {"export", o, "--input=e4m3", "--score-scale=1e6", "--ctx=8", "--head-dim=8", NULL};
	char *a9[] = {"export", o, "--flavour=1", NULL};
	struct {
		char **argv;
		const char *want;
	} cases[] = {
		{a1, "--kv-heads=3 does not divide --heads=4"}, {a2, "unknown preset 'nope'"},
		{a3, "--layout=all-empty and --layout=system are not exported"},
		{a4, "preset flashinfer does not take fp32 inputs with head_dim 48"},
		{a5, "skv export: malformed number 'abc' for --ctx"}, {a6, "no --out="},
		{a7, "--splits exceeds --ctx"}, {a8, "a drawn value overflows the input format"},
		{a9, "unknown option --flavour"},
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		const int rc = run_cmd(&out, &e, 1, cases[i].argv);
		if (rc != 2 || count_lines(e) != 1 || !strstr(e, cases[i].want))
			fail_msg("export case %zu: status %d, \"%s\" (want \"%s\")", i, rc, e, cases[i].want);
		free(out), free(e);
	}
	struct stat st;
	assert_int_not_equal(stat(o + 6, &st), 0); /* nothing written */
	/* all: the presets that do not take head_dim 48 are skipped, by name */
	char *a10[] = {"export", o, "--preset=all", "--head-dim=48", "--ctx=64", NULL};
	assert_int_equal(run_cmd(&out, &e, 1, a10), 0);
	assert_non_null(strstr(e, "13 presets: 56 tensors"));
	assert_non_null(strstr(e, "skipped (they do not take this problem): flashinfer, flashinfer-pre4401, fa3-fp8"));
	free(out), free(e);
	/* a folder that holds something is never replaced */
	in_dir(full, sizeof full, "full");
	mkdir(full, 0755);
	char keep[160];
	snprintf(keep, sizeof keep, "%s/keep.txt", full);
	put_file(keep, "x", 1);
	snprintf(o, sizeof o, "--out=%s", full);
	char *a11[] = {"export", o, "--ctx=16", "--head-dim=8", NULL};
	assert_int_equal(run_cmd(&out, &e, 1, a11), 2);
	assert_non_null(strstr(e, "exists and is not an empty folder"));
	assert_int_equal(stat(keep, &st), 0);
	free(out), free(e);
}

/* ------------------------------------------------------------ manifest */

static void test_manifest(void **state)
{
	(void)state;
	grade_sources s;
	grade_sources_init(&s);
	const char *text = "# comment\n\n  q = a.npy  \r\nk=d.safetensors:kk\nv = odd:name.npy\nsplits = /abs/s.npy\n"
			   "raw = bf16\nlse-base = 2\nscale = 0x1p-3\n";
	G_OK(grade_manifest_parse(&s, text, strlen(text), "m", "base", &err));
	assert_string_equal(s.file[GT_Q], "base/a.npy");
	assert_string_equal(s.file[GT_K], "base/d.safetensors");
	assert_string_equal(s.name[GT_K], "kk");
	assert_string_equal(s.file[GT_V], "base/odd:name.npy"); /* a colon not after .safetensors */
	assert_null(s.name[GT_V]);
	assert_string_equal(s.file[GT_SPLITS], "/abs/s.npy");
	assert_true(s.given[GT_Q] && !s.given[GT_OUT]);
	assert_int_equal(s.raw, TENSOR_BF16);
	assert_int_equal(s.base, SKV_BASE_2);
	CHECK_SAME("scale", 0, s.scale, 0.125);
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"q a.npy\n", "m:1: expected KEY = VALUE, found 'q a.npy'"},
		{"# x\nx = 1\n", "m:2: unknown key"},
		{"q = a\nk = b\nq = c\n", "m:3: repeated key 'q'"},
		{"q =   \n", "m:1: no value for 'q'"},
		{"raw = f32\n", "m:1: raw is one of bf16, f16, e4m3, e5m2, not 'f32'"},
		{"lse-base = e2\n", "m:1: lse-base is one of e, 2, auto, not 'e2'"},
		{"scale = inf\n", "m:1: scale is a positive finite number, not 'inf'"},
		{"scale = 1e400\n", "m:1: scale is a positive finite number"},
		{"scale = 0\n", "m:1: scale is a positive finite number"},
		{"out = x.safetensors:\n", "m:1: expected FILE or FILE.safetensors:NAME, found 'x.safetensors:'"},
		{"q = a\x01" "b\n", NULL},
	};
	for (size_t i = 0; i < COUNT(bad); i++) {
		const int st = grade_manifest_parse(&s, bad[i].text, strlen(bad[i].text), "m", NULL, &err);
		if (!bad[i].want) { /* a control byte in a value: kept, the reader names the file */
			assert_int_equal(st, SKV_OK);
			continue;
		}
		if (st != SKV_EINVAL || !strstr(msg_text(&err), bad[i].want) || strchr(msg_text(&err), '\n'))
			fail_msg("manifest case %zu: status %d, \"%s\" (want \"%s\")", i, st, msg_text(&err), bad[i].want);
		assert_string_equal(s.file[GT_K], "base/d.safetensors"); /* unchanged on error */
	}
	char nul[] = "q = a\0b\n";
	assert_int_equal(grade_manifest_parse(&s, nul, sizeof nul - 1, "m", NULL, &err), SKV_EINVAL);
	assert_non_null(strstr(msg_text(&err), "m:1: a NUL byte"));
	char *longl = malloc(5000);
	memset(longl, 'a', 5000);
	memcpy(longl, "q = ", 4);
	assert_int_equal(grade_manifest_parse(&s, longl, 5000, "m", NULL, &err), SKV_EINVAL);
	assert_non_null(strstr(msg_text(&err), "m:1: line longer than 4096 bytes"));
	free(longl);
	grade_sources_free(&s);
	/* a file: relative paths are its folder's */
	char p[128];
	put_file(in_dir(p, sizeof p, "x.manifest"), "q = q.npy\n", 10);
	grade_sources_init(&s);
	G_OK(grade_manifest_read(&s, p, &err));
	char want[160];
	snprintf(want, sizeof want, "%s/q.npy", dir);
	assert_string_equal(s.file[GT_Q], want);
	grade_sources_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_dump_grades),
		cmocka_unit_test(test_bad_npy_files),
		cmocka_unit_test(test_bad_safetensors_files),
		cmocka_unit_test(test_base_ambiguous),
		cmocka_unit_test(test_bad_flags),
		cmocka_unit_test(test_export_refuses),
		cmocka_unit_test(test_manifest),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
