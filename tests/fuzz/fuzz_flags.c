/* fuzz_flags.c - libFuzzer target: an experiment's flags, parsed and checked as skv run parses them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The first byte picks the experiment; the rest, split at spaces and
 * newlines, is the command line. Parsing and the cross checks (which
 * include the memory estimate) must never crash or leak, and every refusal
 * has a message. Nothing runs. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	const char *exp = experiments[data[0] % nexperiments]->def.name;
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	char *argv[128], *save = NULL;
	int argc = 0;
	for (char *t = strtok_r(text, " \n", &save); t && argc < 128; t = strtok_r(NULL, " \n", &save))
		argv[argc++] = t;
	run_spec s;
	message e = {NULL};
	if (catalog_spec_init(&s, exp, &e) == SKV_OK) {
		int st = spec_args(&s, argc, argv, &e);
		if (st == SKV_OK)
			st = spec_check(&s, &e);
		if (st != SKV_OK && !e.msg)
			abort();
		spec_free(&s);
	}
	msg_free(&e);
	free(text);
	return 0;
}
