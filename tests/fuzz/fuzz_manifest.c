/* fuzz_manifest.c - libFuzzer target: grade_manifest_parse on any bytes; what it accepts written back as a manifest parses to the same sources, and what it refuses leaves them as they were. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grade.h"

/* Build and run: make fuzz (or, by hand, clang -fsanitize=fuzzer,address,undefined -Ilib
 * -Iexperiments this file with the program's and library's sources), a scratch copy of
 * tests/fuzz/corpus/fuzz_manifest as the corpus. */

static int same_sources(const grade_sources *a, const grade_sources *b)
{
	for (int i = 0; i < GT_N; i++) {
		if (!a->file[i] != !b->file[i] || (a->file[i] && strcmp(a->file[i], b->file[i])))
			return 0;
		if (!a->name[i] != !b->name[i] || (a->name[i] && strcmp(a->name[i], b->name[i])))
			return 0;
		if (a->given[i] != b->given[i])
			return 0;
	}
	return a->raw == b->raw && a->base == b->base && memcmp(&a->scale, &b->scale, sizeof a->scale) == 0;
}

/* The sources as manifest lines, KEY=VALUE with no blank, so no line
 * grows past what the parser took. */
static char *write_back(size_t *len, const grade_sources *s)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	if (!f)
		abort();
	for (int i = 0; i < GT_N; i++)
		if (s->given[i])
			fprintf(f, "%s=%s%s%s\n", grade_tensor_name(i), s->file[i], s->name[i] ? ":" : "",
				s->name[i] ? s->name[i] : "");
	if (s->raw != TENSOR_NONE)
		fprintf(f, "raw=%s\n", tensor_dtype_name(s->raw));
	if (s->base != GRADE_BASE_AUTO)
		fprintf(f, "lse-base=%s\n", s->base == SKV_BASE_2 ? "2" : "e");
	if (s->scale > 0)
		fprintf(f, "scale=%a\n", s->scale);
	if (fclose(f) != 0)
		abort();
	return text;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	message e = {NULL};
	grade_sources s, before, back;
	grade_sources_init(&s);
	grade_sources_init(&before);
	/* a source set before the manifest, which a refusal must leave alone */
	if (grade_sources_set(&s, GT_OUT, "x.safetensors:o", NULL, &e) != SKV_OK ||
	    grade_sources_set(&before, GT_OUT, "x.safetensors:o", NULL, &e) != SKV_OK)
		abort();
	const int st = grade_manifest_parse(&s, (const char *)data, size, "fuzz", NULL, &e);
	if (st != SKV_OK) {
		const char *m = msg_text(&e);
		if (st != SKV_EINVAL || strncmp(m, "skv grade: fuzz:", 16) != 0 || strchr(m, '\n') ||
		    !same_sources(&s, &before))
			abort(); /* one line naming the line, nothing changed */
	} else {
		size_t len;
		char *text = write_back(&len, &s);
		grade_sources_init(&back);
		if (grade_manifest_parse(&back, text, len, "again", NULL, &e) != SKV_OK)
			abort();
		if (!same_sources(&s, &back))
			abort();
		grade_sources_free(&back);
		free(text);
	}
	msg_free(&e);
	grade_sources_free(&s);
	grade_sources_free(&before);
	return 0;
}
