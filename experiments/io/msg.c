/* msg.c - one-line error messages of the skv program, never cut, control characters escaped. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/io.h"

/* The message as one printable line: a byte below 0x20 or DEL becomes \n,
 * \r, \t or \xHH (bytes from 0x80 up are kept: they are UTF-8 text). */
static char *one_line(const char *s, size_t n)
{
	char *out = malloc(4 * n + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != 0x7f)
			*o++ = (char)c;
		else if (c == '\n')
			o += sprintf(o, "\\n");
		else if (c == '\r')
			o += sprintf(o, "\\r");
		else if (c == '\t')
			o += sprintf(o, "\\t");
		else
			o += sprintf(o, "\\x%02x", c);
	}
	*o = '\0';
	return out;
}

/* What a message reads when formatting it ran out of memory. */
static char oom[] = "skv: out of memory";

char *msg_vformat(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	const int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s)
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

void msg_set(message *e, const char *fmt, ...)
{
	if (!e)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *raw = msg_vformat(fmt, ap);
	va_end(ap);
	char *msg = raw ? one_line(raw, strlen(raw)) : NULL;
	free(raw);
	msg_free(e);
	e->msg = msg ? msg : oom;
}

const char *msg_text(const message *e)
{
	return e && e->msg ? e->msg : "";
}

void msg_free(message *e)
{
	if (!e)
		return;
	if (e->msg != oom)
		free(e->msg);
	e->msg = NULL;
}
