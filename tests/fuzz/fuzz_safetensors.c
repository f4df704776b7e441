/* fuzz_safetensors.c - libFuzzer target: safetensors_read_mem on any bytes, then a write and re-read of what it accepted. */
#include <stdlib.h>
#include <string.h>

#include "io/tensors.h"

/* Build: clang -fsanitize=fuzzer,address,undefined -Ilib -Iexperiments
 *   tests/fuzz/fuzz_safetensors.c experiments/io/tensors.c experiments/io/safetensors.c
 *   experiments/io/safetensors_write.c experiments/io/msg.c -lm (or: make fuzz)
 * Run:   cp -r tests/fuzz/corpus/fuzz_safetensors /tmp/c && ./fuzz_safetensors
 *        -max_len=4096 -dict=tests/fuzz/safetensors.dict /tmp/c
 * The first byte picks finite; the rest is the file. What is read must
 * write and re-read to the same tensors, metadata included. */
static int same_set(const tensor_set *a, const tensor_set *b)
{
	if (a->ntensors != b->ntensors || a->nmeta != b->nmeta)
		return 0;
	for (size_t i = 0; i < a->nmeta; i++)
		if (strcmp(a->meta[i].key, b->meta[i].key) || strcmp(a->meta[i].value, b->meta[i].value))
			return 0;
	for (size_t i = 0; i < a->ntensors; i++) {
		const tensor *x = &a->tensors[i], *y = tensor_set_find(b, x->name);
		if (!y || y->dtype != x->dtype || y->count != x->count || y->rank != x->rank)
			return 0;
		for (size_t k = 0; k < x->count; k++)
			if (memcmp(&x->values[k], &y->values[k], sizeof(double)) != 0 &&
			    !(x->values[k] != x->values[k] && y->values[k] != y->values[k]))
				return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	message err = {NULL};
	tensor_set s, back;
	unsigned char *out;
	size_t len;
	if (size < 1)
		return 0;
	const tensor_read_opts o = {TENSOR_NONE, data[0] & 1};
	if (safetensors_read_mem(&s, "fuzz.safetensors", data + 1, size - 1, &o, &err)) {
		if (!*msg_text(&err) || strchr(msg_text(&err), '\n'))
			abort(); /* a refusal says why, on one line */
		msg_free(&err);
		return 0;
	}
	if (safetensors_write_mem(&out, &len, s.tensors, s.ntensors, s.meta, s.nmeta, "fuzz", &err) != SKV_OK)
		abort(); /* names, keys and values read are all writable */
	if (safetensors_read_mem(&back, "fuzz", out, len, NULL, &err) != SKV_OK ||
	    !same_set(&s, &back))
		abort();
	free(out);
	tensor_set_free(&back);
	tensor_set_free(&s);
	return 0;
}
