/* format.c - the number formats: names, parameters, spacing and the public rounding function. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "fmt_inline.h"
#include "skv.h"

/* Every query reads the one table, skv_fmts_i in fmt_inline.h. */

const char *skv_format_name(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? r->name : NULL;
}

int skv_format_parse(skv_format *f, const char *name)
{
	if (f == NULL || name == NULL)
		return SKV_EINVAL;
	for (unsigned i = 0; i < SKV_NFORMATS; i++) {
		if (strcmp(name, skv_fmts_i[i].name) == 0) {
			*f = (skv_format)i;
			return SKV_OK;
		}
	}
	return SKV_EINVAL;
}

int skv_format_bits(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? r->bits : 0;
}

int skv_format_precision(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? r->p : 0;
}

/* INT_MIN for an unknown format (e2m1's emin is 0). */
int skv_format_emin(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? r->emin : INT_MIN;
}

int skv_format_emax(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? r->emax : INT_MIN;
}

int skv_format_overflow(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? (int)r->ovf : -1;
}

int skv_format_is_signed(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? r->sgn : -1;
}

int skv_format_is_scale(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? r->scale : -1;
}

/* NaN if unknown. */
double skv_format_max(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? r->max : NAN;
}

/* 2^-p; NaN if unknown. */
double skv_format_unit_roundoff(skv_format f)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	return r ? ldexp(1.0, -r->p) : NAN;
}

/* 2^(max(e, emin) - p + 1), e = floor(log2 |x|) clamped to emax (so the
 * infinities get the spacing of the largest binade); ilogb is exact, also
 * for double subnormals. NaN for NaN or an unknown format. */
double skv_ulp(skv_format f, double x)
{
	const skv_fmt_i *r = skv_fmt_i_of(f);
	int e;

	if (r == NULL || isnan(x))
		return NAN;
	if (x == 0)
		e = r->emin;
	else if (isinf(x))
		e = r->emax;
	else
		e = ilogb(x);
	if (e < r->emin)
		e = r->emin;
	if (e > r->emax)
		e = r->emax;
	return ldexp(1.0, e - r->p + 1);
}

double skv_round(skv_format f, double x) { return skv_round_i(f, x); }
