/* tensors.h - tensors read from and written to .npy and .safetensors files, their values decoded exactly into doubles. */
#ifndef TENSORS_H
#define TENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "io/io.h" /* message */
#include "skv.h"

/* Error convention of every fallible function below: it returns an SKV_*
 * status and, on error, sets the message e (io.h; e may be NULL) to one
 * line: "FILE: tensor NAME: problem", or "FILE: problem" when no tensor is
 * concerned yet (a truncated prefix, a header that does not parse before
 * any name). Control bytes of file names, tensor names and file contents
 * are written as \xNN so the message stays one line. Nothing is printed,
 * nothing exits, and the output arguments are untouched on error (what was
 * allocated is freed). File and tensor names are cut at 200 bytes (then
 * "..."); the problem is never cut. */
#define TENSOR_MAX_RANK 8   /* enough for every attention tensor (at most 5-D) */
#define TENSOR_ANY SIZE_MAX /* in an expected shape: any extent */

/* Element formats. The floating formats decode exactly: each bit pattern is
 * one double (NaN patterns give a NaN of the same sign, payload dropped).
 * Integers decode exactly while their magnitude is at most 2^53; beyond, the
 * read fails (SKV_ERANGE) rather than round. */
typedef enum {
	TENSOR_NONE = -1, /* no format: tensor_read_opts.raw when integers are integers */
	TENSOR_F16 = 0,   /* IEEE 754 binary16 */
	TENSOR_BF16,      /* bfloat16: the top 16 bits of a binary32 */
	TENSOR_F32,       /* IEEE 754 binary32 */
	TENSOR_F64,       /* IEEE 754 binary64 */
	TENSOR_E4M3,      /* OCP OFP8 E4M3: bias 7, no infinity, S.1111.111 is NaN, max 448 */
	TENSOR_E5M2,      /* OCP OFP8 E5M2: bias 15, IEEE-like (infinities, NaNs), max 57344 */
	TENSOR_I8,
	TENSOR_I16,
	TENSOR_I32,
	TENSOR_I64,
	TENSOR_U8,
	TENSOR_U16,
	TENSOR_U32,
	TENSOR_U64,
	TENSOR_NDTYPES
} tensor_dtype;

/* skv's name of a format: "f16", "bf16", "f32", "f64", "e4m3", "e5m2",
 * "i8".."i64", "u8".."u64"; NULL for anything else. */
const char *tensor_dtype_name(tensor_dtype dt);
/* The safetensors spelling ("F16", "BF16", "F8_E4M3", "I64", ...). */
const char *tensor_dtype_st_name(tensor_dtype dt);
/* Bytes per element (1, 2, 4 or 8); 0 for an unknown format. */
size_t tensor_dtype_size(tensor_dtype dt);
/* 1 for the floating formats, 0 for integers and unknown values. */
int tensor_dtype_is_float(tensor_dtype dt);
/* Parses skv's names above; SKV_EINVAL otherwise (dt untouched). */
int tensor_dtype_parse(tensor_dtype *dt, const char *name);
/* The value of bit pattern bits (the low 8 * size bits) in format dt.
 * SKV_ERANGE for an integer beyond 2^53 in magnitude; SKV_EINVAL for an
 * unknown format. Exact: no rounding happens. */
int tensor_decode(double *x, tensor_dtype dt, uint64_t bits);
/* The bit pattern of x in format dt. SKV_ERANGE when x is not exactly a
 * value of dt (nothing is rounded: a writer never changes a value); every
 * NaN encodes as the format's quiet NaN of the same sign (E4M3: S.1111.111),
 * E4M3 has no infinity, and integers have no -0. SKV_EINVAL for an unknown
 * format. */
int tensor_encode(uint64_t *bits, tensor_dtype dt, double x);

typedef struct {
	char *name;          /* owned, NUL-terminated */
	tensor_dtype dtype;  /* the format the values were decoded from */
	char file_dtype[16]; /* the element type as the file spells it: "<f2", "|u1", "BF16" */
	size_t rank;
	size_t shape[TENSOR_MAX_RANK];
	size_t count;   /* product of the shape; 1 for rank 0 */
	double *values; /* count values in C (row-major) order; NULL when count is 0 */
} tensor;

typedef struct {
	char *key, *value; /* owned, NUL-terminated */
} tensor_meta;

typedef struct {
	tensor *tensors; /* in the order of their data in the file */
	size_t ntensors;
	tensor_meta *meta; /* safetensors "__metadata__", sorted by key */
	size_t nmeta;
} tensor_set;

typedef struct {
	/* npy only. numpy has no bf16 or fp8 dtype, so such data is saved as
	 * 16- or 8-bit integers ('<u2', '|u1', '<i2', ...): raw names the
	 * floating format those integer elements hold, whose size must match.
	 * Files of a floating dtype are decoded as that dtype whatever raw is.
	 * TENSOR_NONE (the default): integer elements are integers. */
	tensor_dtype raw;
	int finite; /* nonzero: a NaN or an infinity among the values is an error */
} tensor_read_opts;

/* A tensor holding a copy of values (count of them, C order; may be NULL
 * when the count is 0). SKV_EINVAL for a NULL or empty name, a bad format,
 * rank > TENSOR_MAX_RANK, or an element count that overflows size_t;
 * SKV_ENOMEM. Values need not be in dtype: writers check that. */
int tensor_init(tensor *t, const char *name, tensor_dtype dt, size_t rank, const size_t *shape,
		const double *values, message *e);
/* Frees what t owns and zeroes it; NULL and zeroed tensors are fine. */
void tensor_free(tensor *t);
void tensor_set_free(tensor_set *s);
/* The tensor of that name, or NULL. */
const tensor *tensor_set_find(const tensor_set *s, const char *name);

/* SKV_EINVAL, naming the first offending element by its index, when a value
 * of t is NaN or infinite. file names the file in the message. */
int tensor_check_finite(const tensor *t, const char *file, message *e);
/* SKV_EINVAL unless t has this rank and these extents (TENSOR_ANY matches any
 * extent); the message shows both shapes. */
int tensor_check_shape(const tensor *t, const char *file, size_t rank, const size_t *shape,
		       message *e);

/* ---------------------------------------------------------------- .npy */

/* NumPy's own default cap (numpy/lib/_format_impl.py, _MAX_HEADER_SIZE =
 * 10000): every file numpy loads by default has a header this short. */
#define NPY_MAX_HEADER 10000

/* Reads a .npy file of format version 1.0, 2.0 or 3.0: little- or big-endian,
 * C or Fortran order (values returned in C order), dtypes f2, f4, f8, i1..i8
 * and u1..u8. The tensor is named after the file: its last path component
 * without ".npy". opts may be NULL (defaults). SKV_EIO for a file that cannot
 * be read or is not a regular file (refused before any byte is read);
 * SKV_EINVAL for a file that breaks the format or a check of opts; SKV_ERANGE
 * for an integer not exact in a double; SKV_ENOMEM. */
int npy_read(tensor *out, const char *path, const tensor_read_opts *opts, message *e);
/* The same from len bytes in memory; label stands for the file in messages
 * and names the tensor (NULL: "<memory>", tensor "array"). */
int npy_read_mem(tensor *out, const char *label, const unsigned char *buf, size_t len,
		 const tensor_read_opts *opts, message *e);
/* Writes t as .npy version 1.0, little-endian, C order: f2, f4, f8 for
 * F16/F32/F64, '<u2' holding the bits of BF16, '|u1' those of E4M3 and E5M2
 * (read them back with opts.raw), i1..i8 and u1..u8 for the integers. Every
 * value must be exactly in t->dtype (SKV_ERANGE, naming it, otherwise). The
 * file appears whole or not at all (written aside, then renamed); an existing
 * path that is not a regular file (a symbolic link too) is refused. SKV_EIO,
 * SKV_ENOMEM. */
int npy_write(const char *path, const tensor *t, message *e);
/* The same into a malloc'd buffer (*buf, *len); label names the file in
 * messages (may be NULL). */
int npy_write_mem(unsigned char **buf, size_t *len, const tensor *t, const char *label, message *e);

/* --------------------------------------------------------- .safetensors */

/* The reference implementation's cap on the JSON header (huggingface/
 * safetensors, safetensors/src/tensor.rs, MAX_HEADER_SIZE = 100_000_000). */
#define SAFETENSORS_MAX_HEADER 100000000u

/* Reads a .safetensors file: the 8-byte little-endian header size N, N bytes
 * of JSON, then the data buffer, which the tensors' data_offsets must cover
 * contiguously (no gap, no overlap, nothing past or after it). Dtypes F16,
 * BF16, F32, F64, F8_E4M3, F8_E5M2, I8..I64, U8..U64. opts->raw is ignored
 * (the file names its formats). Errors as npy_read. */
int safetensors_read(tensor_set *out, const char *path, const tensor_read_opts *opts, message *e);
int safetensors_read_mem(tensor_set *out, const char *label, const unsigned char *buf, size_t len,
			 const tensor_read_opts *opts, message *e);
/* Writes n tensors and nmeta metadata pairs (meta may be NULL when nmeta is
 * 0). Data is laid out by decreasing element size, then by name (the
 * reference writer sorts by decreasing alignment, then by name), so each
 * tensor is aligned to its element size; the
 * header is padded with spaces to a multiple of 8 bytes. SKV_EINVAL for
 * duplicate or non-UTF-8 names or keys, a name "__metadata__"; SKV_ERANGE for
 * a value not in its tensor's format; SKV_EIO, SKV_ENOMEM. All or nothing. */
int safetensors_write(const char *path, const tensor *ts, size_t n, const tensor_meta *meta,
		      size_t nmeta, message *e);
int safetensors_write_mem(unsigned char **buf, size_t *len, const tensor *ts, size_t n,
			  const tensor_meta *meta, size_t nmeta, const char *label, message *e);

/* ------------------------------------- shared by the readers (internal) */

/* Sets e to "file: tensor name: <fmt...>" (or "file: <fmt...>" when name
 * is NULL), control bytes escaped; returns status. */
int tensor_errf(message *e, int status, const char *file, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* The whole of a regular file into a malloc'd buffer (NULL when empty). */
int tensor_read_file(unsigned char **buf, size_t *len, const char *path, message *e);
/* Writes len bytes to path all or nothing (a temporary file, then rename). */
int tensor_write_file(const char *path, const unsigned char *buf, size_t len, message *e);
/* *count = product of shape[0..rank); SKV_EINVAL when it overflows size_t. */
int tensor_count(size_t *count, size_t rank, const size_t *shape);
/* "[3, 4]" into dst (dst_len bytes), TENSOR_ANY as "*". */
void tensor_shape_str(char *dst, size_t dst_len, size_t rank, const size_t *shape);
/* Decodes count elements of dt stored at p (big-endian when big), into out.
 * SKV_ERANGE with *bad = the element's index for an integer beyond 2^53. */
int tensor_decode_buf(double *out, size_t *bad, const unsigned char *p, size_t count,
		      tensor_dtype dt, int big);
/* Encodes count values into p, little-endian. SKV_ERANGE with *bad = the
 * element's index when a value is not exactly in dt. */
int tensor_encode_buf(unsigned char *p, size_t *bad, const double *x, size_t count, tensor_dtype dt);
/* Names element flat of t in messages: "element [1, 2] (0x1.8p+0)". */
int tensor_value_errf(message *e, int status, const char *file, const tensor *t, size_t flat,
		      const char *problem);
/* 1 when the n bytes at s are well-formed UTF-8 (RFC 3629: no overlong form,
 * no surrogate, nothing above U+10FFFF), else 0. */
int tensor_utf8_valid(const unsigned char *s, size_t n);

#endif
