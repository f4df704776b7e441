/* fuzz_flags.c - libFuzzer target: an experiment's flags, parsed and checked as skv run parses them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

/* The first byte picks the experiment; the rest, split at spaces and
 * newlines, is the command line. Parsing and the cross checks (which
 * include the memory estimate) must never crash or leak, and every refusal
 * has a message. Nothing runs. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	const char *exp = skv_app_experiments[data[0] % skv_app_nexperiments].name;
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	char *argv[128], *save = NULL;
	int argc = 0;
	for (char *t = strtok_r(text, " \n", &save); t && argc < 128; t = strtok_r(NULL, " \n", &save))
		argv[argc++] = t;
	skv_app_spec s;
	skv_app_error e = {NULL};
	if (skv_app_spec_init(&s, exp, &e) == SKV_APP_EXIT_OK) {
		int st = skv_app_spec_args(&s, argc, argv, &e);
		if (st == SKV_APP_EXIT_OK)
			st = skv_app_spec_check(&s, &e);
		if (st != SKV_APP_EXIT_OK && !e.msg)
			abort();
		skv_app_spec_free(&s);
	}
	skv_app_error_free(&e);
	free(text);
	return 0;
}
