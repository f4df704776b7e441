/* numfmt.c - numbers as the commands print them: text (%.3g), CSV (%.17g), JSON (null for non-finite). */
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"

const char *cli_num3(char *buf, size_t n, double x)
{
	if (isnan(x))
		snprintf(buf, n, "nan");
	else if (isinf(x))
		snprintf(buf, n, x < 0 ? "-inf" : "inf");
	else
		snprintf(buf, n, "%.3g", x);
	return buf;
}

void cli_csv_num(FILE *f, double x)
{
	char b[8];
	if (isfinite(x))
		fprintf(f, "%.17g", x);
	else
		fputs(cli_num3(b, sizeof b, x), f);
}

/* JSON has no NaN or infinity. */
void cli_json_num(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, "%.17g", x);
	else
		fputs("null", f);
}
