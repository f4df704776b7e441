/* fuzz_mma.c - libFuzzer target: the `skv mma` file parsers, then the units on what they accept. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/mma_cmd.h"
#include "skv.h"

/*
 * Input: one control byte, then the text of an a file, a NUL, and the text
 * of a b file (without a NUL the same text serves as both). The control
 * byte picks the input format (bits 0-2, mod 5), the GPU (bits 3-5, mod 6)
 * and the output (bit 6: fp16). Both texts are also parsed as c/d files.
 * Build from the repository root with clang -fsanitize=fuzzer,address,
 * undefined -Ilib -Iexperiments, this file, experiments/mma_cmd.c and every
 * lib .c file, -lmpfr -lgmp -lm -fopenmp; run it on a copy of
 * tests/fuzz/corpus/fuzz_mma (libFuzzer adds to the corpus it is given).
 */

static const skv_format inputs[] = {SKV_FP16, SKV_BF16, SKV_TF32, SKV_E4M3, SKV_E5M2};

/* The properties checked on accepted input; a violation aborts. */
static void check_vectors(const mma_cmd_vecs *a, const mma_cmd_vecs *b, const mma_cmd_vecs *c, uint8_t ctl)
{
	skv_mma_unit u;
	skv_format out = (ctl & 0x40) ? SKV_FP16 : SKV_FP32;
	if (skv_mma_unit_init(&u, (skv_gpu)(((ctl >> 3) & 7) % SKV_NGPUS), inputs[(ctl & 7) % 5], out) != SKV_OK)
		return;
	size_t rows = a->rows < b->rows ? a->rows : b->rows, k = a->k < b->k ? a->k : b->k;
	for (size_t i = 0; i < rows && i < 64; i++) {
		double ci = c->v ? skv_round(out, c->v[i % c->rows]) : 0.0, d, d2;
		/* Parsed values are values of the parser's format, which is u's. */
		if (skv_mma_dot(&d, &u, a->v + i * a->k, 1, b->v + i * b->k, 1, k, ci) != SKV_OK)
			abort();
		d2 = skv_mma_dot_fast(&u, a->v + i * a->k, 1, b->v + i * b->k, 1, k, ci);
		if (mma_cmd_ulp_distance(out, d, d2) != 0 || (d == d && skv_round(out, d) != d))
			abort(); /* deterministic, and a value of the output format */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t ctl = data[0];
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	const char *nul = memchr(text, '\0', len);
	size_t la = nul ? (size_t)(nul - text) : len;
	const char *tb = nul ? nul + 1 : text;
	size_t lb = nul ? len - la - 1 : len;
	skv_format in = inputs[(ctl & 7) % 5];
	mma_cmd_vecs a = {0}, b = {0}, c = {0}, d = {0};
	char msg[256];
	int ra = mma_cmd_parse_hex(&a, text, la, "a", in, msg, sizeof msg);
	int rb = mma_cmd_parse_hex(&b, tb, lb, "b", in, msg, sizeof msg);
	int rc = mma_cmd_parse_bin(&c, tb, lb, "c", msg, sizeof msg);
	int rd = mma_cmd_parse_bin(&d, text, la, "d", msg, sizeof msg);
	if ((ra == 0 && (a.rows == 0 || a.k == 0 || !a.v)) || (rc == 0 && c.k != 1) || (rd == 0 && d.k != 1))
		abort(); /* an accepted file has at least one vector */
	if (ra == 0 && rb == 0)
		check_vectors(&a, &b, rc == 0 ? &c : &d, ctl);
	mma_cmd_vecs_free(&a);
	mma_cmd_vecs_free(&b);
	mma_cmd_vecs_free(&c);
	mma_cmd_vecs_free(&d);
	return 0;
}
