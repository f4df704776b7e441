/* fuzz_csv.c - libFuzzer target: the CSV reader and everything skv report derives from a CSV, short of gnuplot. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/chart.h"
#include "io/csv.h"
#include "results/results.h"
#include "catalog/catalog.h"

/* The first byte picks the experiment the file claims to be (each has its
 * own chart and findings), the rest is the file. Checked: a failed parse
 * leaves its output untouched, every field of a parsed file is reachable,
 * and findings and chart data never crash, leak or read out of bounds. */
static const char *const names[] = {"split-count", "lse-magnitude", "reduction-order", "merge-rule",
				    "uneven-splits", "block-size",  "systems",	       "empty-splits", "unknown"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	if (size < 1)
		return 0;
	const char *name = names[data[0] % (sizeof names / sizeof *names)];
	data++, size--;
	message err = {NULL};
	csv_table t, t0;
	memset(&t, 0xAB, sizeof t);
	t0 = t;
	if (csv_parse(&t, (const char *)data, size, "fuzz.csv", &err) != 0) {
		if (memcmp(&t, &t0, sizeof t) != 0 || !*msg_text(&err) || strchr(msg_text(&err), '\n'))
			abort(); /* untouched, and a refusal says why on one line */
		msg_free(&err);
		return 0;
	}
	for (size_t r = 0; r < t.nrows; r++)
		for (size_t c = 0; c < t.ncols; c++)
			if (!csv_get(&t, r, c))
				abort();
	for (size_t c = 0; c < t.ncols; c++) {
		size_t at;
		if (csv_find(&t, csv_colname(&t, c), &at) != 0 || at != c)
			abort();
	}
	const experiment *x = experiment_find(name);
	const chart_spec *ch = &(x ? x : &exp_generic)->chart;
	const char *need[] = {ch->x};
	results res;
	if (results_from_csv(&res, &t, name, need, ch->x ? 1 : 0, &err) != 0) {
		msg_free(&err);
		return 0;
	}
	catalog_narrate(sink, &res, &err);
	chart_write_data(sink, &res, ch, &err);
	msg_free(&err);
	results_free(&res);
	return 0;
}
