/* test_report_csv.c - the RFC 4180 reader: quoting, line endings, numbers, and errors that name the line. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "skv.h"

/* Parses text, failing with the input shown when the status differs. */
static int parse(csv_table *t, const char *text, int want, const char *file, int line)
{
	message err = {NULL};
	int rc = csv_parse(t, text, strlen(text), "t.csv", &err);
	if (rc != want) {
		print_error("%s:%d: csv_parse(\"%s\") returned %d, expected %d (%s)\n", file, line, text, rc, want,
			    msg_text(&err));
		fail();
	}
	msg_free(&err);
	return rc;
}
#define PARSE(t, text, want) parse((t), (text), (want), __FILE__, __LINE__)

static void expect_field(const csv_table *t, size_t row, size_t col, const char *want, const char *file, int line)
{
	const char *got = csv_get(t, row, col);
	if (!got || strcmp(got, want) != 0) {
		print_error("%s:%d: field (%zu, %zu) is \"%s\", expected \"%s\"\n", file, line, row, col,
			    got ? got : "(null)", want);
		fail();
	}
}
#define FIELD(t, r, c, want) expect_field((t), (r), (c), (want), __FILE__, __LINE__)

static void plain_and_quoted(void **state)
{
	(void)state;
	csv_table t;
	PARSE(&t, "a,b,c\n1,\"x,y\",\"say \"\"hi\"\"\"\n\"\",,\"two\nlines\"\n", SKV_OK);
	assert_int_equal(t.ncols, 3);
	assert_int_equal(t.nrows, 2);
	assert_string_equal(csv_colname(&t, 2), "c");
	FIELD(&t, 0, 0, "1");
	FIELD(&t, 0, 1, "x,y");
	FIELD(&t, 0, 2, "say \"hi\"");
	FIELD(&t, 1, 0, "");
	FIELD(&t, 1, 1, "");
	FIELD(&t, 1, 2, "two\nlines");
	/* record lines: header 1, first row 2, second row 3 (it spans 3-4) */
	assert_int_equal(csv_line(&t, 0), 2);
	assert_int_equal(csv_line(&t, 1), 3);
	size_t col = 99;
	assert_int_equal(csv_find(&t, "b", &col), SKV_OK);
	assert_int_equal(col, 1);
	assert_int_equal(csv_find(&t, "B", &col), SKV_EINVAL);
	assert_int_equal(col, 1);
	assert_null(csv_get(&t, 2, 0));
	assert_null(csv_get(&t, 0, 3));
	csv_free(&t);
}

static void line_endings(void **state)
{
	(void)state;
	csv_table t;
	/* CRLF, a CRLF inside quotes kept as data, no final terminator, BOM */
	PARSE(&t, "\xEF\xBB\xBFx,y\r\n1,\"a\r\nb\"\r\n2,3", SKV_OK);
	assert_string_equal(csv_colname(&t, 0), "x");
	assert_int_equal(t.nrows, 2);
	FIELD(&t, 0, 1, "a\r\nb");
	FIELD(&t, 1, 0, "2");
	FIELD(&t, 1, 1, "3");
	assert_int_equal(csv_line(&t, 1), 4);
	csv_free(&t);
	/* a header alone is a table with no rows */
	PARSE(&t, "only\n", SKV_OK);
	assert_int_equal(t.ncols, 1);
	assert_int_equal(t.nrows, 0);
	csv_free(&t);
	/* a trailing comma is one more (empty) field */
	PARSE(&t, "a,b\n1,\n", SKV_OK);
	FIELD(&t, 0, 1, "");
	csv_free(&t);
}

/* Every malformed input: the status, and a message naming t.csv and the
 * line where the problem is. */
static void errors_name_the_line(void **state)
{
	(void)state;
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"", "t.csv:1: empty file"},
		{"a,b\n1,2\n3\n", "t.csv:3: 1 fields, the header has 2"},
		{"a,b\n1,2\n\n", "t.csv:3: 1 fields, the header has 2"},
		{"a,b\n1,2,3\n", "t.csv:2: 3 fields, the header has 2"},
		{"a\n1\n\"open\nstill\n", "t.csv:3: unterminated quoted field"},
		{"a\nx\"y\n", "t.csv:2: quote inside an unquoted field"},
		{"a\n\"x\"y\n", "t.csv:2: character 'y' after a closing quote"},
		{"a\n1\r2\n", "t.csv:2: carriage return not followed by a line feed"},
		{"a,a\n1,2\n", "t.csv:1: column 'a' appears twice"},
		{"a,\n1,2\n", "t.csv:1: column 2 has an empty name"},
		{"a\n\"x\ny\"\n1,2\n", "t.csv:4: 2 fields, the header has 1"},
		/* a control character quoted from the file is escaped (io.h) */
		{"a\n\"x\"\x01\n", "t.csv:2: character '\\x01' after a closing quote"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		message err = {NULL};
		csv_table t = {.ncols = 12345};
		int rc = csv_parse(&t, bad[i].text, strlen(bad[i].text), "t.csv", &err);
		if (rc != SKV_EINVAL || strncmp(msg_text(&err), bad[i].msg, strlen(bad[i].msg)) != 0 || t.ncols != 12345) {
			print_error("%s:%d: case %zu \"%s\": status %d, message \"%s\", expected \"%s...\"\n", __FILE__,
				    __LINE__, i, bad[i].text, rc, msg_text(&err), bad[i].msg);
			fail();
		}
		msg_free(&err);
	}
	/* A NUL byte in the data is an error, not an early end of file. */
	static const char nul[] = {'a', '\n', 'x', '\0', 'y', '\n'};
	message err = {NULL};
	csv_table t;
	assert_int_equal(csv_parse(&t, nul, sizeof nul, "t.csv", &err), SKV_EINVAL);
	assert_string_equal(msg_text(&err), "t.csv:2: NUL byte");
	/* A message is never cut: a 3000-byte column name is quoted whole. */
	char text[2 * 3000 + 8], want[3000 + 64];
	memset(text, 'c', 3000);
	text[3000] = ',';
	memset(text + 3001, 'c', 3000);
	strcpy(text + 6001, "\n1,2\n");
	snprintf(want, sizeof want, "t.csv:1: column '%.3000s' appears twice", text);
	assert_int_equal(csv_parse(&t, text, strlen(text), "t.csv", &err), SKV_EINVAL);
	assert_string_equal(msg_text(&err), want);
	/* without a message the status alone comes back */
	assert_int_equal(csv_parse(&t, nul, sizeof nul, "t.csv", NULL), SKV_EINVAL);
	msg_free(&err);
}

static void read_file(void **state)
{
	(void)state;
	char path[] = "/tmp/skv-csv-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("p,q\n1,2\n", f);
	fclose(f);
	csv_table t;
	message err = {NULL};
	assert_int_equal(csv_read(&t, path, &err), SKV_OK);
	assert_string_equal(t.name, path);
	FIELD(&t, 0, 1, "2");
	csv_free(&t);
	remove(path);
	assert_int_equal(csv_read(&t, path, &err), SKV_EIO);
	assert_non_null(strstr(msg_text(&err), path));
	msg_free(&err);
}

static void numbers(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		double v;
	} good[] = {
		{"0", 0},
		{"-0", -0.0},
		{"1.5", 1.5},
		{"7.599531928977013e-16", 7.599531928977013e-16},
		{"4.9406564584124654e-324", 4.9406564584124654e-324},
		{"1.7976931348623157e+308", 1.7976931348623157e+308},
		{"inf", INFINITY},
		{"-inf", -INFINITY},
		{"1e999", INFINITY},
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		double x = 0;
		int rc = csv_number(&x, good[i].s);
		if (rc != SKV_OK || memcmp(&x, &good[i].v, sizeof x) != 0) {
			print_error("%s:%d: csv_number(\"%s\") = %a (status %d), expected %a\n", __FILE__, __LINE__,
				    good[i].s, x, rc, good[i].v);
			fail();
		}
	}
	double x = 0;
	assert_int_equal(csv_number(&x, "nan"), SKV_OK);
	assert_true(isnan(x));
	assert_int_equal(csv_number(&x, "-nan"), SKV_OK);
	assert_true(isnan(x));
	static const char *const bad[] = {"", " 1", "1 ", "1x", "x", "1,5", "--1"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		x = 42;
		if (csv_number(&x, bad[i]) != SKV_EINVAL || x != 42) {
			print_error("%s:%d: csv_number(\"%s\") accepted (x = %a)\n", __FILE__, __LINE__, bad[i], x);
			fail();
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_and_quoted),
		cmocka_unit_test(line_endings),
		cmocka_unit_test(errors_name_the_line),
		cmocka_unit_test(read_file),
		cmocka_unit_test(numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
