/* test_tensors_bad.c - every bad .npy and .safetensors file is refused with one line naming the file, the tensor and the problem. */
#include <sys/stat.h>

#include "tensors_test.h"

/* ------------------------------------------------------------------ .npy */

enum { NO_NL = 1, MISALIGN = 2 };

typedef struct {
	const char *what;  /* names the file, hence the tensor */
	int major;         /* 0: version 1.0 */
	const char *dict;  /* NULL: the file is data alone */
	const char *data;
	size_t ndata;
	int flags;
	size_t hlen;       /* HEADER_LEN written; 0: the true one */
	int st;
	const char *problem;
	const char *raw;   /* tensor_read_opts.raw by name; NULL: none */
	int finite;
} npy_case;

#define F4(shape) "{'descr': '<f4', 'fortran_order': False, 'shape': " shape ", }"
#define ZEROS12 "\0\0\0\0\0\0\0\0\0\0\0\0"

static const npy_case npy_cases[] = {
	{"short", 0, NULL, "\x93NUM", 4, 0, 0, SKV_EINVAL, "truncated: 4 bytes", NULL, 0},
	{"magic", 0, NULL, "\x93NUMPX\x01\x00\x10\x00{}      \n", 19, 0, 0, SKV_EINVAL, "not a .npy file", NULL, 0},
	{"version", 4, F4("(3,)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "format version 4.0", NULL, 0},
	{"hlen_past_eof", 0, F4("(3,)"), ZEROS12, 12, 0, 200, SKV_EINVAL, "truncated: the header claims 200", NULL, 0},
	{"hlen_cap", 2, F4("(3,)"), ZEROS12, 12, 0, 20000, SKV_EINVAL, "exceeds the cap of 10000", NULL, 0},
	{"misaligned", 0, F4("(3,)"), ZEROS12, 12, MISALIGN, 0, SKV_EINVAL, "16-byte boundary", NULL, 0},
	{"no_newline", 0, F4("(3,)"), ZEROS12, 12, NO_NL, 0, SKV_EINVAL, "newline", NULL, 0},
	{"shape_lies", 0, F4("(4,)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "truncated: shape [4] of '<f4' is 4 elements", NULL, 0},
	{"trailing", 0, F4("(2,)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "bytes after the data", NULL, 0},
	{"complex", 0, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", ZEROS12, 8, 0, 0, SKV_EINVAL, "unsupported dtype '<c8'", NULL, 0},
	{"pipe_f4", 0, "{'descr': '|f4', 'fortran_order': False, 'shape': (3,), }", ZEROS12, 12, 0, 0, SKV_EINVAL, "unsupported dtype '|f4'", NULL, 0},
	{"native", 0, "{'descr': '=f4', 'fortran_order': False, 'shape': (3,), }", ZEROS12, 12, 0, 0, SKV_EINVAL, "unsupported dtype '=f4'", NULL, 0},
	{"structured", 0, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }", ZEROS12, 12, 0, 0, SKV_EINVAL, "structured dtypes", NULL, 0},
	{"dup_key", 0, "{'descr': '<f4', 'shape': (3,), 'fortran_order': False, 'shape': (3,), }", ZEROS12, 12, 0, 0, SKV_EINVAL, "duplicate key", NULL, 0},
	{"no_shape", 0, "{'descr': '<f4', 'fortran_order': False, }", ZEROS12, 12, 0, 0, SKV_EINVAL, "no 'shape' key", NULL, 0},
	{"unknown_key", 0, "{'descr': '<f4', 'order': 'C', 'fortran_order': False, 'shape': (3,), }", ZEROS12, 12, 0, 0, SKV_EINVAL, "unknown key", NULL, 0},
	{"count_overflow", 0, F4("(4294967296, 4294967296, 4294967296)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "element count overflows", NULL, 0},
	{"bytes_overflow", 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }", ZEROS12, 12, 0, 0, SKV_EINVAL, "element count overflows", NULL, 0},
	{"extent_overflow", 0, F4("(99999999999999999999999,)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "shape extent overflows", NULL, 0},
	{"negative", 0, F4("(-3,)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "negative shape extent", NULL, 0},
	{"long_suffix", 0, F4("(3L,)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "Python 2 long suffix", NULL, 0},
	{"leading_zero", 0, F4("(03,)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "leading zero", NULL, 0},
	{"rank9", 0, F4("(1, 1, 1, 1, 1, 1, 1, 1, 3)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "more dimensions than skv's limit of 8", NULL, 0},
	{"fortran_int", 0, "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }", ZEROS12, 12, 0, 0, SKV_EINVAL, "not True or False", NULL, 0},
	{"shape_int", 0, F4("3"), ZEROS12, 12, 0, 0, SKV_EINVAL, "shape is not a tuple", NULL, 0},
	{"shape_paren", 0, F4("(3)"), ZEROS12, 12, 0, 0, SKV_EINVAL, "shape (n) is not a tuple", NULL, 0},
	{"after_dict", 0, F4("(3,)") " x", ZEROS12, 12, 0, 0, SKV_EINVAL, "after the dict", NULL, 0},
	{"not_dict", 0, "['<f4', False, (3,)]", ZEROS12, 12, 0, 0, SKV_EINVAL, "not a dict literal", NULL, 0},
	{"escape", 0, "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (3,), }", ZEROS12, 12, 0, 0, SKV_EINVAL, "escape sequence", NULL, 0},
	{"unterminated", 0, "{'descr': '<f4", ZEROS12, 12, 0, 0, SKV_EINVAL, "string too long", NULL, 0},
	{"raw_size", 0, "{'descr': '<u2', 'fortran_order': False, 'shape': (6,), }", ZEROS12, 12, 0, 0, SKV_EINVAL, "'<u2' holds 16-bit elements, e4m3 needs 8-bit", "e4m3", 0},
	{"int_beyond_2p53", 0, "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", "\x01\0\0\0\0\0\x20\0", 8, 0, 0, SKV_ERANGE, "beyond 2^53", NULL, 0},
	{"nan", 0, F4("(3,)"), "\0\0\0\0\0\0\xc0\x7f\0\0\0\0", 12, 0, 0, SKV_EINVAL, "element [1] (nan) is not finite", NULL, 1},
	{"inf_be_fortran", 0, "{'descr': '>f2', 'fortran_order': True, 'shape': (2, 2), }", "\0\0\x7c\0\0\0\0\0", 8, 0, 0, SKV_EINVAL, "element [1, 0] (inf) is not finite", NULL, 1},
};

static size_t build_npy(unsigned char *b, const npy_case *c)
{
	if (!c->dict) {
		memcpy(b, c->data, c->ndata);
		return c->ndata;
	}
	const int major = c->major ? c->major : 1;
	const size_t pre = major == 1 ? 10 : 12, h = strlen(c->dict);
	size_t pad = (64 - (pre + h + 1) % 64) % 64;
	if (c->flags & MISALIGN)
		pad = (pad + 8) % 64;
	memcpy(b, "\x93NUMPY", 6);
	b[6] = (unsigned char)major, b[7] = 0;
	memcpy(b + pre, c->dict, h);
	memset(b + pre + h, ' ', pad + 1);
	if (!(c->flags & NO_NL))
		b[pre + h + pad] = '\n';
	const size_t hl = c->hlen ? c->hlen : h + pad + 1;
	for (size_t k = 0; k < pre - 8; k++)
		b[8 + k] = (unsigned char)(hl >> (8 * k));
	memcpy(b + pre + h + pad + 1, c->data, c->ndata);
	return pre + h + pad + 1 + c->ndata;
}

static void test_bad_npy(void **state)
{
	(void)state;
	unsigned char b[1024];
	for (size_t i = 0; i < COUNT(npy_cases); i++) {
		const npy_case *c = &npy_cases[i];
		char path[128], name[64];
		tensor t = {.name = (char *)"untouched"};
		tensor_read_opts o = {TENSOR_NONE, c->finite};
		if (c->raw)
			assert_int_equal(tensor_dtype_parse(&o.raw, c->raw), SKV_OK);
		snprintf(name, sizeof name, "%s.npy", c->what);
		put_file(in_dir(path, sizeof path, name), b, build_npy(b, c));
		CHECK_ERR(npy_read(&t, path, &o, &err), c->st, path, c->what, c->problem);
		assert_string_equal(t.name, "untouched");
		/* the same bytes from memory, for the fuzz target's entry point */
		const size_t n = build_npy(b, c);
		CHECK_ERR(npy_read_mem(&t, path, b, n, &o, &err), c->st, path, c->what, c->problem);
	}
}

/* ----------------------------------------------------------- .safetensors */

typedef struct {
	const char *what;
	const char *json; /* NULL: the file is data alone */
	const char *data;
	size_t ndata;
	uint64_t n; /* the header size written; 0: strlen(json) */
	int st;
	const char *tensor; /* the tensor the message must name, or NULL */
	const char *problem;
	int finite;
} st_case;

#define E(dt, shape, offs) "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" offs "}"
#define Z16 "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"

static const st_case st_cases[] = {
	{"short", NULL, "\x05\0\0", 3, 0, SKV_EINVAL, NULL, "truncated: 3 bytes", 0},
	{"cap", "{}", "", 0, 100000001, SKV_EINVAL, NULL, "exceeds the cap of 100000000", 0},
	{"size_past_eof", "{}", "", 0, 12, SKV_EINVAL, NULL, "truncated: the header size says 12", 0},
	{"not_object", "[1]", "", 0, 0, SKV_EINVAL, NULL, "does not begin with '{'", 0},
	{"leading_space", " {}", "", 0, 0, SKV_EINVAL, NULL, "does not begin with '{'", 0},
	{"no_colon", "{\"a\" " E("F32", "[1]", "[0,4]") "}", Z16, 4, 0, SKV_EINVAL, "a", "expected ':'", 0},
	{"after_object", "{}x", "", 0, 0, SKV_EINVAL, NULL, "bytes after the header's object", 0},
	{"dup_name", "{\"a\":" E("F32", "[1]", "[0,4]") ",\"a\":" E("F32", "[1]", "[4,8]") "}", Z16, 8, 0, SKV_EINVAL, "a", "duplicate tensor name", 0},
	{"dup_key", "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\"}}", "", 0, 0, SKV_EINVAL, "a", "duplicate key \"dtype\"", 0},
	{"unknown_key", "{\"a\":{\"dtype\":\"F32\",\"offsets\":[0,4]}}", Z16, 4, 0, SKV_EINVAL, "a", "unknown key in a tensor entry", 0},
	{"missing_key", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", Z16, 4, 0, SKV_EINVAL, "a", "has no \"data_offsets\"", 0},
	{"empty_entry", "{\"a\":{}}", "", 0, 0, SKV_EINVAL, "a", "empty tensor entry", 0},
	{"dtype_e8m0", "{\"a\":" E("F8_E8M0", "[1]", "[0,1]") "}", Z16, 1, 0, SKV_EINVAL, "a", "unsupported dtype \"F8_E8M0\"", 0},
	{"dtype_bool", "{\"a\":" E("BOOL", "[1]", "[0,1]") "}", Z16, 1, 0, SKV_EINVAL, "a", "unsupported dtype \"BOOL\"", 0},
	{"size_lies", "{\"a\":" E("F32", "[3]", "[0,8]") "}", Z16, 8, 0, SKV_EINVAL, "a", "hold 8 bytes, shape [3] of F32 needs 12", 0},
	{"size_too_big", "{\"a\":" E("F32", "[1]", "[0,8]") "}", Z16, 8, 0, SKV_EINVAL, "a", "hold 8 bytes, shape [1] of F32 needs 4", 0},
	{"reversed", "{\"a\":" E("F32", "[1]", "[8,4]") "}", Z16, 8, 0, SKV_EINVAL, "a", "end before they begin", 0},
	{"past_buffer", "{\"a\":" E("F32", "[2]", "[0,8]") "}", Z16, 4, 0, SKV_EINVAL, "a", "run past the end of the 4-byte data buffer", 0},
	{"overlap", "{\"a\":" E("F32", "[2]", "[0,8]") ",\"b\":" E("F32", "[2]", "[4,12]") "}", Z16, 12, 0, SKV_EINVAL, "b", "overlap those of tensor \"a\"", 0},
	{"empty_inside", "{\"a\":" E("F32", "[2]", "[0,8]") ",\"b\":" E("F32", "[0]", "[4,4]") "}", Z16, 8, 0, SKV_EINVAL, "b", "overlap", 0},
	{"gap", "{\"a\":" E("F32", "[1]", "[0,4]") ",\"b\":" E("F32", "[1]", "[8,12]") "}", Z16, 12, 0, SKV_EINVAL, "b", "leaving bytes [4, 8)", 0},
	{"not_at_zero", "{\"a\":" E("F32", "[1]", "[4,8]") "}", Z16, 8, 0, SKV_EINVAL, "a", "leaving bytes [0, 4)", 0},
	{"unaccounted", "{\"a\":" E("F32", "[1]", "[0,4]") "}", Z16, 8, 0, SKV_EINVAL, NULL, "4 bytes unaccounted for", 0},
	{"count_overflow", "{\"a\":" E("F32", "[4294967296,4294967296,4294967296]", "[0,4]") "}", Z16, 4, 0, SKV_EINVAL, "a", "element count overflows", 0},
	{"float_extent", "{\"a\":" E("F32", "[1.0]", "[0,4]") "}", Z16, 4, 0, SKV_EINVAL, "a", "shape is not an integer", 0},
	{"exponent", "{\"a\":" E("F32", "[1e0]", "[0,4]") "}", Z16, 4, 0, SKV_EINVAL, "a", "shape is not an integer", 0},
	{"negative", "{\"a\":" E("F32", "[1]", "[-4,0]") "}", Z16, 4, 0, SKV_EINVAL, "a", "data_offsets is negative", 0},
	{"nested", "{\"a\":" E("F32", "[[1]]", "[0,4]") "}", Z16, 4, 0, SKV_EINVAL, "a", "shape is not an integer", 0},
	{"leading_zero", "{\"a\":" E("F32", "[01]", "[0,4]") "}", Z16, 4, 0, SKV_EINVAL, "a", "leading zero", 0},
	{"u64_overflow", "{\"a\":" E("F32", "[18446744073709551616]", "[0,4]") "}", Z16, 4, 0, SKV_EINVAL, "a", "overflows 64 bits", 0},
	{"rank9", "{\"a\":" E("F32", "[1,1,1,1,1,1,1,1,1]", "[0,4]") "}", Z16, 4, 0, SKV_EINVAL, "a", "more than 8 entries", 0},
	{"three_offsets", "{\"a\":" E("F32", "[1]", "[0,4,8]") "}", Z16, 4, 0, SKV_EINVAL, "a", "more than 2 entries", 0},
	{"one_offset", "{\"a\":" E("F32", "[1]", "[0]") "}", Z16, 4, 0, SKV_EINVAL, "a", "has 1 entries, not 2", 0},
	{"null_dtype", "{\"a\":{\"dtype\":null}}", "", 0, 0, SKV_EINVAL, "a", "expected a string", 0},
	{"true_entry", "{\"a\":true}", "", 0, 0, SKV_EINVAL, "a", "not an object", 0},
	{"cut_short", "{\"a\":{\"dtype\":\"F32\"", "", 0, 0, SKV_EINVAL, "a", "expected ',' or '}'", 0},
	{"meta_nested", "{\"__metadata__\":{\"k\":{\"x\":\"y\"}}}", "", 0, 0, SKV_EINVAL, NULL, "value is not a string", 0},
	{"meta_dup_key", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", "", 0, 0, SKV_EINVAL, NULL, "the key \"k\" twice", 0},
	{"meta_twice", "{\"__metadata__\":{},\"__metadata__\":{}}", "", 0, 0, SKV_EINVAL, NULL, "duplicate key \"__metadata__\"", 0},
	{"lone_high", "{\"\\ud800x\":1}", "", 0, 0, SKV_EINVAL, NULL, "without its low half", 0},
	{"lone_low", "{\"\\udc00\":1}", "", 0, 0, SKV_EINVAL, NULL, "lone low surrogate", 0},
	{"bad_escape", "{\"\\x41\":1}", "", 0, 0, SKV_EINVAL, NULL, "bad escape", 0},
	{"nul_escape", "{\"a\\u0000\":1}", "", 0, 0, SKV_EINVAL, NULL, "\\u0000 in a string", 0},
	{"bad_utf8", "{\"\xff\":1}", "", 0, 0, SKV_EINVAL, NULL, "invalid UTF-8", 0},
	{"overlong_utf8", "{\"\xc0\xaf\":1}", "", 0, 0, SKV_EINVAL, NULL, "invalid UTF-8", 0},
	{"surrogate_utf8", "{\"\xed\xa0\x80\":1}", "", 0, 0, SKV_EINVAL, NULL, "invalid UTF-8", 0},
	{"control_byte", "{\"a\x01\":1}", "", 0, 0, SKV_EINVAL, NULL, "control byte 0x01", 0},
	{"unterminated", "{\"abc", "", 0, 0, SKV_EINVAL, NULL, "unterminated string", 0},
	{"nan", "{\"a\":" E("F32", "[2]", "[0,8]") "}", "\0\0\x80\x3f\0\0\xc0\xff", 8, 0, SKV_EINVAL, "a", "element [1] (-nan) is not finite", 1},
	{"int_beyond_2p53", "{\"a\":" E("I64", "[]", "[0,8]") "}", "\x01\0\0\0\0\0\x20\0", 8, 0, SKV_ERANGE, "a", "beyond 2^53", 0},
};

static size_t build_st(unsigned char *b, const st_case *c)
{
	if (!c->json) {
		memcpy(b, c->data, c->ndata);
		return c->ndata;
	}
	const size_t h = strlen(c->json);
	const uint64_t n = c->n ? c->n : h;
	for (int k = 0; k < 8; k++)
		b[k] = (unsigned char)(n >> (8 * k));
	memcpy(b + 8, c->json, h);
	memcpy(b + 8 + h, c->data, c->ndata);
	return 8 + h + c->ndata;
}

static void test_bad_safetensors(void **state)
{
	(void)state;
	unsigned char b[1024];
	for (size_t i = 0; i < COUNT(st_cases); i++) {
		const st_case *c = &st_cases[i];
		char path[128], name[64];
		tensor_set s = {.ntensors = 12345};
		const tensor_read_opts o = {TENSOR_NONE, c->finite};
		snprintf(name, sizeof name, "%s.safetensors", c->what);
		put_file(in_dir(path, sizeof path, name), b, build_st(b, c));
		CHECK_ERR(safetensors_read(&s, path, &o, &err), c->st, path, c->tensor, c->problem);
		assert_int_equal(s.ntensors, 12345);
	}
}

/* The good neighbours of the bad cases read, so the cases fail for their
 * one reason: the same layouts with the fault removed. */
static void test_near_misses_read(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"{\"a\":" E("F32", "[2]", "[0,8]") ",\"b\":" E("F32", "[0]", "[8,8]") "}",
		"{\"b\":" E("F32", "[1]", "[4,8]") ",\"a\":" E("F32", "[1]", "[0,4]") "}   ",
		"{ \"__metadata__\" : { \"k\" : \"\\ud83d\\ude00\\n\" } ,\n\"a\":" E("F32", "[2]", "[0,8]") "}",
		"{\"a\":{\"shape\":[1,2],\"data_offsets\":[0,8],\"dtype\":\"F32\"}}",
	};
	for (size_t i = 0; i < COUNT(ok); i++) {
		unsigned char b[512];
		const st_case c = {"ok", ok[i], Z16, 8, 0, 0, NULL, NULL, 0};
		tensor_set s;
		CHECK_OK(safetensors_read_mem(&s, "ok", b, build_st(b, &c), NULL, &err));
		assert_int_equal(s.ntensors, i == 2 ? 1 : i == 3 ? 1 : 2);
		if (i == 2)
			assert_string_equal(s.meta[0].value, "\xf0\x9f\x98\x80\n");
		tensor_set_free(&s);
	}
	tensor t;
	unsigned char b[512];
	const npy_case c = {"ok", 0, F4("(3,)"), ZEROS12, 12, 0, 0, 0, NULL, NULL, 0};
	CHECK_OK(npy_read_mem(&t, "dir/ok.npy", b, build_npy(b, &c), NULL, &err));
	assert_string_equal(t.name, "ok");
	tensor_free(&t);
}

/* ------------------------------------------------- files that are not */

static void test_refuses_non_regular(void **state)
{
	(void)state;
	char fifo[128];
	tensor t;
	tensor_set s;
	in_dir(fifo, sizeof fifo, "fifo.npy");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(20); /* opening the FIFO would block: die rather than hang */
	CHECK_ERR(npy_read(&t, fifo, NULL, &err), SKV_EIO, fifo, NULL, "is a FIFO");
	CHECK_ERR(safetensors_read(&s, fifo, NULL, &err), SKV_EIO, fifo, NULL, "is a FIFO");
	CHECK_ERR(npy_read(&t, dir, NULL, &err), SKV_EIO, dir, NULL, "is a directory");
	CHECK_ERR(npy_read(&t, "/dev/zero", NULL, &err), SKV_EIO, "/dev/zero", NULL,
		  "is a character device");
	CHECK_ERR(safetensors_read(&s, "/nonexistent/x", NULL, &err), SKV_EIO,
		  "/nonexistent/x", NULL, "cannot open");
	alarm(0);
	CHECK_OK(tensor_init(&t, "x", TENSOR_F32, 0, NULL, (double[]){1}, &err));
	CHECK_ERR(npy_write(fifo, &t, &err), SKV_EIO, fifo, NULL, "is a FIFO; not replaced");
	tensor_free(&t);
}

/* ------------------------------------------------- writers and checks */

static void test_writers_refuse(void **state)
{
	(void)state;
	char path[128];
	tensor t, u, back;
	const size_t two[1] = {2};
	in_dir(path, sizeof path, "w.npy");
	CHECK_OK(tensor_init(&t, "w", TENSOR_F16, 1, two, (double[]){1, 2}, &err));
	CHECK_OK(npy_write(path, &t, &err));
	/* 0.1 is not an f16: refused, naming it; the file written before stays */
	CHECK_OK(tensor_init(&u, "w", TENSOR_F16, 1, two, (double[]){1, 0.1}, &err));
	CHECK_ERR(npy_write(path, &u, &err), SKV_ERANGE, path, "w",
		  "element [1] (0x1.999999999999ap-4) is not exactly representable");
	CHECK_OK(npy_read(&back, path, NULL, &err));
	CHECK_SAME("kept", 1, back.values[1], 2.0);
	tensor_free(&back);
	in_dir(path, sizeof path, "w.safetensors");
	CHECK_ERR(safetensors_write(path, &u, 1, NULL, 0, &err), SKV_ERANGE, path, "w",
		  "element [1] (0x1.999999999999ap-4) is not exactly representable");
	assert_int_equal(access(path, F_OK), -1);
	tensor pair[2] = {t, t};
	CHECK_ERR(safetensors_write(path, pair, 2, NULL, 0, &err), SKV_EINVAL, path, "w",
		  "duplicate tensor name");
	const tensor_meta dup[2] = {{"k", "1"}, {"k", "2"}};
	CHECK_ERR(safetensors_write(path, &t, 1, dup, 2, &err), SKV_EINVAL, path, NULL,
		  "the key \"k\" twice");
	char *name = t.name;
	t.name = (char *)"__metadata__";
	CHECK_ERR(safetensors_write(path, &t, 1, NULL, 0, &err), SKV_EINVAL, path,
		  "__metadata__", "reserved");
	t.name = (char *)"bad\xff";
	CHECK_ERR(safetensors_write(path, &t, 1, NULL, 0, &err), SKV_EINVAL, path, "bad\\xff",
		  "not UTF-8");
	t.name = name;
	assert_int_equal(access(path, F_OK), -1);
	tensor_free(&t);
	tensor_free(&u);
}

static void test_shape_and_finite_checks(void **state)
{
	(void)state;
	tensor t;
	const size_t shape[2] = {2, 3};
	CHECK_OK(tensor_init(&t, "q\nx", TENSOR_F32, 2, shape, (double[]){0, 1, 2, 3, 4, -INFINITY}, &err));
	CHECK_OK(tensor_check_shape(&t, "f", 2, (size_t[]){2, TENSOR_ANY}, &err));
	CHECK_ERR(tensor_check_shape(&t, "f.npy", 2, (size_t[]){2, 4}, &err), SKV_EINVAL,
		  "f.npy", "q\\x0ax", "shape [2, 3] where [2, 4] is expected");
	CHECK_ERR(tensor_check_shape(&t, "f.npy", 3, (size_t[]){TENSOR_ANY, 3, 1}, &err),
		  SKV_EINVAL, "f.npy", "q\\x0ax", "where [*, 3, 1] is expected");
	CHECK_ERR(tensor_check_finite(&t, "f.npy", &err), SKV_EINVAL, "f.npy", "q\\x0ax",
		  "element [1, 2] (-inf) is not finite");
	/* without a message the status alone comes back */
	assert_int_equal(tensor_check_finite(&t, "f.npy", NULL), SKV_EINVAL);
	tensor_free(&t);
}

/* Names are cut at 200 bytes (then "..."), a character begun before the
 * cut kept whole; the problem is never cut, however long. */
static void test_message_lengths(void **state)
{
	(void)state;
	char file[301], name[260], problem[3001];
	memset(file, 'f', 300), file[300] = 0;
	memset(name, 'n', 199), memcpy(name + 199, "\xc3\xa9tail", 7), name[206] = 0;
	memset(problem, 'p', 3000), problem[3000] = 0;
	assert_int_equal(tensor_errf(&err, SKV_EINVAL, file, name, "%s!", problem), SKV_EINVAL);
	char want[4000];
	snprintf(want, sizeof want, "%.200s...: tensor %.199s\xc3\xa9...: %s!", file, name, problem);
	assert_string_equal(msg_text(&err), want);
	assert_int_equal(strlen(msg_text(&err)), 200 + 3 + 9 + 201 + 3 + 2 + 3001);
	assert_int_equal(tensor_errf(NULL, SKV_EIO, file, NULL, "x"), SKV_EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_npy),
		cmocka_unit_test(test_message_lengths),
		cmocka_unit_test(test_bad_safetensors),
		cmocka_unit_test(test_near_misses_read),
		cmocka_unit_test(test_refuses_non_regular),
		cmocka_unit_test(test_writers_refuse),
		cmocka_unit_test(test_shape_and_finite_checks),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
