/* format.c - the number formats: names, parameters, spacing and the public rounding function. */
#include <math.h>
#include <string.h>

#include "fmt_inline.h"
#include "skv.h"

/* One row per format, indexed by skv_format; the single source of the
 * parameters (p with the implicit bit, emin and emax of the normal range). */
static const struct {
	const char *name;
	int p, emin, emax;
} skv_formats[] = {
	[SKV_FP16] = {"fp16", 11, -14, 15},
	[SKV_BF16] = {"bf16", 8, -126, 127},
	[SKV_FP32] = {"fp32", 24, -126, 127},
	[SKV_FP64] = {"fp64", 53, -1022, 1023},
};
_Static_assert(sizeof skv_formats / sizeof skv_formats[0] == SKV_NFORMATS, "one row per format");

static int skv_format_ok(skv_format f) { return (unsigned)f < SKV_NFORMATS; }

const char *skv_format_name(skv_format f) { return skv_format_ok(f) ? skv_formats[f].name : NULL; }

int skv_format_parse(skv_format *f, const char *name)
{
	if (f == NULL || name == NULL)
		return SKV_EINVAL;
	for (unsigned i = 0; i < SKV_NFORMATS; i++) {
		if (strcmp(name, skv_formats[i].name) == 0) {
			*f = (skv_format)i;
			return SKV_OK;
		}
	}
	return SKV_EINVAL;
}

int skv_format_precision(skv_format f) { return skv_format_ok(f) ? skv_formats[f].p : 0; }

/* 0 for an unknown format (no format has emin or emax 0). */
int skv_format_emin(skv_format f) { return skv_format_ok(f) ? skv_formats[f].emin : 0; }
int skv_format_emax(skv_format f) { return skv_format_ok(f) ? skv_formats[f].emax : 0; }

/* (2 - 2^(1-p)) 2^emax: both steps are exact in double. NaN if unknown. */
double skv_format_max(skv_format f)
{
	if (!skv_format_ok(f))
		return NAN;
	return ldexp(2.0 - ldexp(1.0, 1 - skv_formats[f].p), skv_formats[f].emax);
}

/* 2^-p; NaN if unknown. */
double skv_format_unit_roundoff(skv_format f)
{
	return skv_format_ok(f) ? ldexp(1.0, -skv_formats[f].p) : NAN;
}

/* 2^(max(e, emin) - p + 1), e = floor(log2 |x|) clamped to emax (so the
 * infinities get the spacing of the largest binade); ilogb is exact, also
 * for double subnormals. NaN for NaN or an unknown format. */
double skv_ulp(skv_format f, double x)
{
	int e;

	if (!skv_format_ok(f) || isnan(x))
		return NAN;
	if (x == 0)
		e = skv_formats[f].emin;
	else if (isinf(x))
		e = skv_formats[f].emax;
	else
		e = ilogb(x);
	if (e < skv_formats[f].emin)
		e = skv_formats[f].emin;
	if (e > skv_formats[f].emax)
		e = skv_formats[f].emax;
	return ldexp(1.0, e - skv_formats[f].p + 1);
}

double skv_round(skv_format f, double x) { return skv_round_i(f, x); }
