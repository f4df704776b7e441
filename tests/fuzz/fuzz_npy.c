/* fuzz_npy.c - libFuzzer target: npy_read_mem on any bytes, then a write and re-read of what it accepted. */
#include <stdlib.h>
#include <string.h>

#include "io/tensors.h"

/* Build: clang -fsanitize=fuzzer,address,undefined -Ilib -Iexperiments
 *   tests/fuzz/fuzz_npy.c experiments/io/tensors.c experiments/io/npy.c experiments/io/msg.c -lm
 *   (or: make fuzz)
 * Run:   cp -r tests/fuzz/corpus/fuzz_npy /tmp/c && ./fuzz_npy -max_len=4096
 *        -dict=tests/fuzz/npy.dict /tmp/c   (a scratch copy: the seeds stay few)
 * The first byte picks the options (raw format, finite), the rest is the
 * file. Whatever is read must write back and re-read to the same values. */
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const tensor_dtype raws[4] = {TENSOR_NONE, TENSOR_BF16, TENSOR_E4M3, TENSOR_E5M2};
	message err = {NULL};
	tensor t, back;
	unsigned char *out;
	size_t len;
	if (size < 1)
		return 0;
	const tensor_read_opts o = {raws[data[0] & 3], (data[0] >> 2) & 1};
	int st = npy_read_mem(&t, "fuzz/x.npy", data + 1, size - 1, &o, &err);
	if (st != SKV_OK) {
		if (!*msg_text(&err) || strchr(msg_text(&err), '\n'))
			abort(); /* a refusal says why, on one line */
		msg_free(&err);
		return 0;
	}
	if (npy_write_mem(&out, &len, &t, "fuzz", &err) == SKV_OK) {
		const tensor_read_opts r = {tensor_dtype_size(t.dtype) <= 2 && tensor_dtype_is_float(t.dtype) &&
						    t.dtype != TENSOR_F16 ? t.dtype : TENSOR_NONE, 0};
		if (npy_read_mem(&back, "fuzz", out, len, &r, &err) != SKV_OK ||
		    back.count != t.count || back.dtype != t.dtype)
			abort();
		for (size_t i = 0; i < t.count; i++)
			if (memcmp(&back.values[i], &t.values[i], sizeof(double)) != 0 &&
			    !(back.values[i] != back.values[i] && t.values[i] != t.values[i]))
				abort();
		tensor_free(&back);
		free(out);
	} else
		abort(); /* every value read is in its format, so it must write */
	tensor_free(&t);
	return 0;
}
