/* status.c - status messages, the version string and whether MPFR is thread-safe. */
#include <mpfr.h>

#include "skv.h"

const char *skv_strerror(int status)
{
	switch (status) {
	case SKV_OK: return "success";
	case SKV_EINVAL: return "invalid argument";
	case SKV_ENOMEM: return "out of memory";
	case SKV_EIO: return "input/output error";
	case SKV_ERANGE: return "value out of range";
	default: return "unknown status";
	}
}

const char *skv_version(void) { return SKV_VERSION; }

int skv_mpfr_thread_safe(void) { return mpfr_buildopt_tls_p() != 0; }
