/* mma_cmd.h - `skv mma`: a tensor-core unit on vectors in the published text format, and its parsers. */
#ifndef MMA_CMD_H
#define MMA_CMD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "skv.h"

/* The command; argv[0] is "mma". Writes results to out and one-line
 * messages to err. Exit status 0 on success (also when --check finds
 * differences: the summary says how many), 1 when a file cannot be read or
 * is malformed (the message names the file and line), 2 for bad usage (the
 * message names the flag and value). */
int mma_cmd_main(int argc, char **argv, FILE *out, FILE *err);

/* rows vectors of k values each, row-major in v. */
typedef struct {
	size_t rows, k;
	double *v;
} mma_cmd_vecs;

/* Parses a vector file (model_validation's a_*.txt, b_*.txt): one vector a
 * line, k >= 1 values each given as exactly 8 hex digits of an fp32 bit
 * pattern, separated by spaces or tabs, the same k on every line; trailing
 * spaces, tabs and a carriage return are allowed, empty lines are not, and
 * the last newline is optional. Every value must be a value of `in`. name is
 * the file name for messages. Returns 0, or 1 with "name:LINE: what" in msg
 * (out untouched); 2 on allocation failure. */
int mma_cmd_parse_hex(mma_cmd_vecs *out, const char *text, size_t len, const char *name, skv_format in, char *msg,
		      size_t msgsz);

/* Parses a c_*.txt or d_*.txt file: one fp32 bit pattern a line as exactly
 * 32 characters 0 or 1 (first the sign), the same whitespace rules; k = 1.
 * Returns as mma_cmd_parse_hex. */
int mma_cmd_parse_bin(mma_cmd_vecs *out, const char *text, size_t len, const char *name, char *msg, size_t msgsz);

void mma_cmd_vecs_free(mma_cmd_vecs *v);

/* Distance in units in the last place of `out` (fp32 or fp16) between two
 * values of it: the number of representable values between them, +0 and -0
 * being one point, the infinities one step beyond the largest finite value.
 * 0 for two NaNs; UINT64_MAX when exactly one is NaN. */
uint64_t mma_cmd_ulp_distance(skv_format out, double x, double y);

#endif
