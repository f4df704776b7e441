/* fuzz_suite.c - libFuzzer target: the suite-file parser, with the command-line flags that follow the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The input up to the first byte 0x01 is the suite file; what follows,
 * split at 0x01 bytes, is the command line after it. Every line is parsed
 * and checked, nothing runs: no crash, no leak, a message on every error. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	char *argv[64];
	int argc = 0;
	char *cut = memchr(text, '\x01', size);
	size_t len = cut ? (size_t)(cut - text) : size;
	for (char *a = cut; a && argc < 64; a = strchr(a + 1, '\x01')) {
		*a = '\0';
		argv[argc++] = a + 1;
	}
	for (char *a = cut ? cut + 1 : NULL; a && a < text + size; a++)
		if (*a == '\x01')
			*a = '\0';
	size_t n = 0;
	message e = {NULL};
	int st = suite_parse(&n, "fuzz.suite", text, len, argc, argv, &e);
	if (st != SKV_OK && !e.msg)
		abort(); /* every refusal says why */
	msg_free(&e);
	free(text);
	return 0;
}
