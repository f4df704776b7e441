/* labels.c - how the report names columns and their values: "partial fp16", "LSE offset 100", "causal". */
#include "results/labels.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *col, *label;
	int bare; /* the value names itself: print it alone */
} names[] = {
	{"lse", "LSE", 0},
	{"lse_offset", "LSE offset", 0},
	{"lse_base", "LSE base", 0},
	{"head_dim", "head-dim", 0},
	{"block_size", "block size", 0},
	{"score_scale", "score scale", 0},
	{"merge_threads", "merge threads", 0},
	{"round_states", "round states", 0},
	{"merge", "merge", 1},
	{"order", "order", 1},
	{"layout", "layout", 1},
	{"preset", "preset", 1},
	{"dist", "dist", 1},
};

static int find(const char *col)
{
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(names[i].col, col) == 0)
			return (int)i;
	return -1;
}

const char *label_column(const char *col)
{
	int i = col ? find(col) : -1;
	return i >= 0 ? names[i].label : col;
}

/* "name value" with the reader's name of the column; an unknown column is
 * named by its command-line flag (underscores as dashes). */
static char *name_value(char *buf, size_t n, const char *col, const char *val)
{
	int i = find(col);
	if (i >= 0) {
		snprintf(buf, n, "%s %s", names[i].label, *val ? val : "(none)");
		return buf;
	}
	size_t k = 0;
	for (; col[k] && k + 1 < n; k++)
		buf[k] = col[k] == '_' ? '-' : col[k];
	buf[k] = '\0';
	if (k + 1 < n)
		snprintf(buf + k, n - k, " %s", *val ? val : "(none)");
	return buf;
}

char *label_value(char *buf, size_t n, const char *col, const char *val)
{
	if (!buf || n == 0)
		return buf;
	if (!col || !val) {
		buf[0] = '\0';
		return buf;
	}
	int i = find(col);
	if (strcmp(col, "causal") == 0 && (strcmp(val, "0") == 0 || strcmp(val, "1") == 0))
		snprintf(buf, n, "%s", val[0] == '1' ? "causal" : "non-causal");
	else if (i >= 0 && names[i].bare && *val)
		snprintf(buf, n, "%s", val);
	else
		name_value(buf, n, col, val);
	return buf;
}

char *label_param(char *buf, size_t n, const char *col, const char *val)
{
	if (!buf || n == 0)
		return buf;
	if (!col || !val) {
		buf[0] = '\0';
		return buf;
	}
	if (strcmp(col, "causal") == 0)
		return label_value(buf, n, col, val);
	return name_value(buf, n, col, val);
}

char *label_join(char *buf, size_t n, const char *const *cols, const char *const *vals, size_t k)
{
	if (!buf || n == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < k; i++) {
		char one[128];
		size_t len = strlen(buf);
		label_value(one, sizeof one, cols[i], vals[i]);
		snprintf(buf + len, n - len, "%s%s", i ? ", " : "", one);
	}
	return buf;
}

char *label_number(char *buf, size_t n, double x, int digits)
{
	if (!buf || n == 0)
		return buf;
	if (digits < 1)
		digits = 1;
	if (isnan(x)) {
		snprintf(buf, n, "NaN");
		return buf;
	}
	if (isinf(x)) {
		snprintf(buf, n, "%s", x > 0 ? "inf" : "-inf");
		return buf;
	}
	if (digits > 17)
		digits = 17;
	char tmp[64];
	/* Plain decimals from 0.01 up to 10^max(4, digits), a mantissa and
	 * exponent outside: 0.14, 1024, 1.7e-3, 1.2e16. */
	int e = x == 0 ? 0 : (int)floor(log10(fabs(x)));
	if (e >= -2 && e < (digits > 4 ? digits : 4)) {
		int dec = digits - 1 - e > 0 ? digits - 1 - e : 0;
		snprintf(tmp, sizeof tmp, "%.*f", dec, x);
		/* trailing zeros of the fraction say nothing: 0.50 -> 0.5, 2.0 -> 2 */
		if (strchr(tmp, '.')) {
			char *z = tmp + strlen(tmp) - 1;
			while (*z == '0')
				*z-- = '\0';
			if (*z == '.')
				*z = '\0';
		}
		snprintf(buf, n, "%s", tmp);
		return buf;
	}
	snprintf(tmp, sizeof tmp, "%.*e", digits - 1, x);
	/* "1.2e-07" -> "1.2e-7", "1.5e+04" -> "1.5e4" */
	char *ex = strchr(tmp, 'e');
	char out[64];
	size_t k = (size_t)(ex - tmp);
	memcpy(out, tmp, k);
	if (memchr(out, '.', k)) { /* 1.0e-3 -> 1e-3 */
		while (out[k - 1] == '0')
			k--;
		if (out[k - 1] == '.')
			k--;
	}
	out[k++] = 'e';
	const char *s = ex + 1;
	if (*s == '-')
		out[k++] = *s;
	if (*s == '-' || *s == '+')
		s++;
	while (*s == '0' && s[1])
		s++;
	snprintf(out + k, sizeof out - k, "%s", s);
	snprintf(buf, n, "%s", out);
	return buf;
}
