/* test_mpfr_tls.c - the program refuses an MPFR without thread-local storage, with a message that names it and the fix. */
#include <mpfr.h>

#include "testutil.h"
#include "cli/cli.h"

static void test_refusal(void **state)
{
	(void)state;
	message e = {NULL};
	assert_int_equal(cli_mpfr_check(0, &e), SKV_EIO);
	const char *m = msg_text(&e);
	if (!strstr(m, "thread-local storage") || !strstr(m, mpfr_get_version()) || !strstr(m, "--enable-thread-safe") ||
	    strchr(m, '\n'))
		fail_msg("%s:%d: message \"%s\"", __FILE__, __LINE__, m);
	assert_int_equal(cli_exit_status(SKV_EIO), 1);
	msg_free(&e);
	assert_int_equal(cli_mpfr_check(1, &e), SKV_OK);
	assert_string_equal(msg_text(&e), "");
}

/* The library's answer is MPFR's, and Debian's MPFR (the one scripts/deps.sh
 * installs) is thread-safe, so the program runs here. */
static void test_this_mpfr(void **state)
{
	(void)state;
	assert_int_equal(skv_mpfr_thread_safe(), mpfr_buildopt_tls_p() != 0);
	assert_true(skv_mpfr_thread_safe());
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_refusal), cmocka_unit_test(test_this_mpfr)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
