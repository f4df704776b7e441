/* error.c - one-line error messages of the skv program. */
#include <stdarg.h>
#include "app.h"

void skv_app_errorf(skv_app_error *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* A message longer than the buffer is cut: the offending token comes
	 * first in every message, so the cut part is the list of expectations. */
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
}
