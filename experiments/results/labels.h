/* labels.h - how the report names columns and their values: "partial fp16", "LSE offset 100", "causal". */
#ifndef SKV_LABELS_H
#define SKV_LABELS_H

#include <stddef.h>

/* The name a reader knows a column by: "LSE" for lse, "LSE offset" for
 * lse_offset, "head-dim" for head_dim, ...; other columns as they are
 * (label_value and label_param write them as their command-line
 * flags, underscores as dashes). */
const char *label_column(const char *col);

/* Writes "name value" for one column's value into buf[0..n) ("partial fp16",
 * "LSE offset 100", "splits 64"); the value alone for columns whose values
 * name themselves (merge, order, layout, preset, dist: "onepass"); "causal"
 * or "non-causal" for causal 1 and 0; "name (none)" for an empty value.
 * Returns buf (truncated to fit, always NUL-terminated when n > 0). */
char *label_value(char *buf, size_t n, const char *col, const char *val);

/* "name value" always, as in a list of fixed parameters ("order seq",
 * "merge onepass", "round-states 0"); causal as above. */
char *label_param(char *buf, size_t n, const char *col, const char *val);

/* Appends the labels of several (column, value) pairs joined by ", ". */
char *label_join(char *buf, size_t n, const char *const *cols, const char *const *vals, size_t k);

/* Formats x with `digits` significant digits (1 to 17) the way a reader
 * writes it: plain decimals from 0.01 to 10^max(4, digits) without trailing
 * zeros (0.14, 2, 1024: an integer part is never rounded away), otherwise
 * mantissa and exponent without "+" or leading exponent zeros (1.7e-3,
 * 1.2e16); "inf", "-inf", "NaN". Returns buf. */
char *label_number(char *buf, size_t n, double x, int digits);

#endif
