/*
 * test_scan.c - the bctl output scanner: which lines are rate-limit or
 * overload signs, which are not, and that long lines split across chunks
 * (at every possible boundary) are read the same as whole lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bctl_scan.h"
#include "breaker.h"

#define RATE(r) (((r).signs & BRK_HTTP_SIGN_RATE_LIMITED) != 0)
#define OVER(r) (((r).signs & BRK_HTTP_SIGN_OVERLOADED) != 0)
#define HINT(r) (((r).signs & BRK_HTTP_SIGN_RETRY_AFTER) != 0)

static struct scan_result scan_str(const char *line)
{
	struct scan_result r;

	scan_result_init(&r);
	scan_line(line, strlen(line), &r);
	return r;
}

static void expect_rate(const char *line)
{
	struct scan_result r = scan_str(line);

	if (!RATE(r))
		fail_msg("not rate_limited: '%s'", line);
	assert_false(OVER(r));
}

static void expect_overload(const char *line)
{
	struct scan_result r = scan_str(line);

	if (!OVER(r))
		fail_msg("not overloaded: '%s'", line);
	assert_false(RATE(r));
}

static void expect_nothing(const char *line)
{
	struct scan_result r = scan_str(line);

	if (scan_found(&r))
		fail_msg("false sign in '%s' (429:%d 503/529:%d hint:%d)", line,
			 RATE(r), OVER(r), HINT(r));
}

static void expect_wait(const char *line, uint64_t ms)
{
	struct scan_result r = scan_str(line);

	if (!HINT(r) || r.retry_after_ms != (int64_t)ms)
		fail_msg("'%s': hint %d, %llu ms, want %llu ms", line, HINT(r),
			 (unsigned long long)r.retry_after_ms,
			 (unsigned long long)ms);
}

static void status_429_503_529_lines_are_detected(void **state)
{
	(void)state;
	expect_rate("HTTP/1.1 429 Too Many Requests");
	expect_rate("< HTTP/2 429");
	expect_rate("http/1.0 429\r");
	expect_rate("status: 429");
	expect_rate("Status=429");
	expect_rate("{\"status\":429,\"error\":\"slow down\"}");
	expect_rate("{\"statusCode\": \"429\"}");
	expect_rate("error: 429 Too Many Requests");
	expect_rate("HTTPError: 429 Client Error: Too Many Requests for url: x");
	expect_rate("got HTTP 429 from upstream");
	expect_overload("HTTP/1.1 503 Service Unavailable");
	expect_overload("HTTP/2 503");
	expect_overload("HTTP/2.0 529");
	expect_overload("status: 503");
	expect_overload("503 Service Unavailable");
	expect_overload("upstream said 529: overloaded");
	expect_overload("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}} 529");
	expect_overload("529 Site is overloaded");
}

static void numbers_that_are_not_a_status_are_ignored(void **state)
{
	(void)state;
	expect_nothing("processed 4290 items");
	expect_nothing("processed 429 items");
	expect_nothing("id 5290429 done");
	expect_nothing("took 1.429 s");
	expect_nothing("version 4.29.3, build 429a");
	expect_nothing("HTTP/1.1 200 OK");
	expect_nothing("status: 200 (429 bytes)");
	expect_nothing("529 widgets shipped");
	expect_nothing("503 messages queued");
	expect_nothing("status429");
	expect_nothing("server overloaded? no");
	expect_nothing("");
	expect_nothing("retry later");
	expect_nothing("try again in a few seconds");
	expect_nothing("try again in 5");
	expect_nothing("Retry-After: Wed, 30 Feb 2015 07:28:00 GMT");
	expect_nothing("Retry-After: soon");
	expect_nothing("my-retry-after-hook: 5");
	expect_nothing("Retry-After: 5x");
}

static void retry_after_header_gives_the_wait_in_ms(void **state)
{
	(void)state;
	expect_wait("Retry-After: 2", 2000);
	expect_wait("retry-after:30", 30000);
	expect_wait("RETRY-AFTER:   7\r", 7000);
	expect_wait("Retry-After: 1.5", 1500);
	expect_wait("Retry-After: 0.0001", 1);
	expect_wait("Retry-After: 0", 0);
	expect_wait("{\"retry_after\": 3}", 3000);
	expect_wait("{\"retry_after\":\"4\"}", 4000);
	expect_wait("x-foo: 1, Retry-After: 12, Retry-After: 3", 12000);
	expect_wait("Retry-After: 99999999999999999999999", BRK_MAX_DURATION_MS);
	/* HTTP-dates (bctl exec did not read them before the library did) */
	expect_wait("Retry-After: Wed, 21 Oct 2015 07:28:00 GMT", 0); /* past */
	expect_wait("< retry-after: Fri, 31 Dec 9999 23:59:59 GMT\r",
		    BRK_MAX_DURATION_MS);
	expect_wait("Retry-After: Friday, 31-Dec-99 23:59:59 GMT", 0);
	expect_wait("Retry-After: Sun Nov  6 08:49:37 1994", 0);
	expect_wait("please retry after 30 seconds", 30000);
}

static void try_again_in_n_seconds_gives_the_wait(void **state)
{
	(void)state;
	expect_wait("Rate limit reached. Please try again in 20 seconds.", 20000);
	expect_wait("try again in 1 second", 1000);
	expect_wait("Try Again In 1.5s", 1500);
	expect_wait("try again in 250ms.", 250);
	expect_wait("please try again in 2 minutes", 120000);
	expect_wait("try again in 1m30s", 60000);
	expect_wait("try again in 0.5 sec", 500);
}

static void binary_output_and_nul_bytes_are_scanned_safely(void **state)
{
	static const char bin[] = "\x00\xff\x01HTTP/1.1 429\x00tail";
	struct scan_result r;
	unsigned char junk[8192];
	size_t i;

	(void)state;
	scan_result_init(&r);
	scan_line(bin, sizeof(bin) - 1, &r);
	assert_true(RATE(r));

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 131u + 7u);
	scan_result_init(&r);
	scan_line((const char *)junk, sizeof(junk), &r); /* must not crash */
}

/* Feed @text in pieces of @step bytes through a stream. */
static struct scan_result feed_steps(const char *text, size_t len, size_t step)
{
	struct scan_stream *s = malloc(sizeof(*s));
	struct scan_result r;
	size_t off, n;

	assert_non_null(s);
	scan_stream_init(s);
	scan_result_init(&r);
	for (off = 0; off < len; off += n) {
		n = len - off < step ? len - off : step;
		scan_feed(s, text + off, n, &r);
	}
	scan_finish(s, &r);
	free(s);
	return r;
}

/*
 * A long line with @needle placed at every offset around @edge (where a
 * chunk ends, or where the overlap kept for the next chunk starts).
 */
static void sweep_at(const char *needle, size_t edge, bool rate,
		     uint64_t wait_ms)
{
	size_t nlen = strlen(needle), len = 3 * SCAN_LINE_MAX, pos;
	char *line = malloc(len + 1);
	struct scan_result r;

	assert_non_null(line);
	for (pos = edge - nlen - 2; pos < edge + 2; pos++) {
		memset(line, 'x', len);
		line[pos - 1] = ' ';
		memcpy(line + pos, needle, nlen);
		line[pos + nlen] = ' ';
		line[len] = '\n';
		r = feed_steps(line, len + 1, 1000);
		if (RATE(r) != rate || r.retry_after_ms != (int64_t)wait_ms)
			fail_msg("'%s' at %zu: 429 %d, wait %llu", needle, pos,
				 RATE(r), (unsigned long long)r.retry_after_ms);
	}
	free(line);
}

static void boundary_sweep(const char *needle, bool rate, uint64_t wait_ms)
{
	sweep_at(needle, SCAN_LINE_MAX, rate, wait_ms);
	sweep_at(needle, SCAN_LINE_MAX - SCAN_OVERLAP, rate, wait_ms);
}

static void long_lines_are_scanned_at_every_boundary(void **state)
{
	(void)state;
	boundary_sweep("HTTP/1.1 429 Too Many Requests", true, 0);
	boundary_sweep("Retry-After: 1234", false, 1234000);
	boundary_sweep("try again in 2.5 seconds", false, 2500);
	boundary_sweep("processed 4290 items", false, 0);
	boundary_sweep("1429 Too Many Requests", false, 0);
	boundary_sweep("Retry-After: Fri, 31 Dec 9999 23:59:59 GMT", false,
		       BRK_MAX_DURATION_MS);
	boundary_sweep("status:4290", false, 0);
}

static void output_split_anywhere_scans_like_whole_lines(void **state)
{
	static const char text[] =
		"ok line\nstill fine 429 items\r\nHTTP/1.1 503 Service Unavailable\n"
		"Retry-After: 2\npartial try again in 3 seconds";
	struct scan_result r;
	size_t step;

	(void)state;
	for (step = 1; step < sizeof(text); step++) {
		r = feed_steps(text, sizeof(text) - 1, step);
		assert_true(OVER(r));
		assert_false(RATE(r));
		assert_true(HINT(r));
		assert_int_equal(r.retry_after_ms, 3000);
	}
}

/* In a long line, a bare 529 and "overloaded" count together when they
 * are in one window (bctl_scan.h), wherever the window boundaries fall. */
static void status_529_and_overloaded_in_one_window_of_a_long_line_are_seen(void **state)
{
	size_t len = 2 * SCAN_LINE_MAX + 100, at;
	char *line = malloc(len);
	struct scan_result r;

	(void)state;
	assert_non_null(line);
	for (at = SCAN_LINE_MAX - 300; at < SCAN_LINE_MAX + 300; at += 7) {
		memset(line, 'x', len);
		memcpy(line + at, " 529 ", 5);
		memcpy(line + at + 600, " overloaded ", 12);
		r = feed_steps(line, len, 700);
		if (!OVER(r))
			fail_msg("529 at %zu, overloaded at %zu: not seen", at,
				 at + 600);
	}
	free(line);
}

/* Minified JSON: a long line with no blank at all. */
static void long_minified_json_line_is_scanned(void **state)
{
	static const char needle[] = ",\"status\":429,\"retry_after\":7,";
	size_t len = 3 * SCAN_LINE_MAX, nlen = sizeof(needle) - 1, pos, i;
	char *line = malloc(len + 1);
	struct scan_result r;

	(void)state;
	assert_non_null(line);
	for (pos = SCAN_LINE_MAX - 200; pos < SCAN_LINE_MAX + 200; pos++) {
		for (i = 0; i < len; i++) /* {"k0":"v",...} without blanks */
			line[i] = "\"k\":\"abc\","[i % 10];
		memcpy(line + pos, needle, nlen);
		line[len] = '\n';
		r = feed_steps(line, len + 1, 999);
		if (!RATE(r) || r.retry_after_ms != 7000)
			fail_msg("JSON sign at %zu: 429 %d, wait %lld", pos, RATE(r),
				 (long long)r.retry_after_ms);
	}
	free(line);
}

/* Feed @text as one stream (stdout of curl -i) and return what it found. */
static struct scan_result scan_stream_str(const char *text)
{
	struct scan_stream st;
	struct scan_result r;

	scan_stream_init(&st);
	scan_result_init(&r);
	scan_feed(&st, text, strlen(text), &r);
	scan_finish(&st, &r);
	return r;
}

/* nginx's `add_header Retry-After 1 always` puts the header on every
 * answer: on a 200 it is no rate limit (RFC 9110 section 10.2.3; the
 * library honours a Retry-After header only with a failure), so a pace
 * must not be cut by each success. */
static void retry_after_header_of_a_2xx_answer_is_no_sign(void **state)
{
	struct scan_result r;

	(void)state;
	r = scan_stream_str("HTTP/1.1 200 OK\r\nServer: nginx\r\n"
			    "Retry-After: 1\r\n\r\nok\n");
	if (scan_found(&r))
		fail_msg("a 200's Retry-After header read as a sign (hint:%d)",
			 HINT(r));
	r = scan_stream_str("HTTP/1.1 302 Found\r\nretry-after : 5\r\n\r\n");
	assert_false(scan_found(&r));
	/* a 100 Continue block first: the final answer's header decides */
	r = scan_stream_str("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Too "
			    "Many Requests\r\nRetry-After: 1\r\n\r\n");
	assert_true(RATE(r));
	assert_int_equal(r.retry_after_ms, 1000);
	/* on a 429 or 503 the header is the wait */
	r = scan_stream_str("HTTP/1.1 503 Service Unavailable\r\n"
			    "Retry-After: 7\r\n\r\n");
	assert_true(OVER(r));
	assert_int_equal(r.retry_after_ms, 7000);
	/* a wait in the body of a 200 is still a rate limit */
	r = scan_stream_str("HTTP/1.1 200 OK\r\nRetry-After: 1\r\n\r\n"
			    "{\"error\": \"slow down\", \"retry_after\": 30}\n");
	assert_true(HINT(r));
	assert_int_equal(r.retry_after_ms, 30000);
	/* without a status line a Retry-After line is a sign, as before */
	r = scan_stream_str("Retry-After: 2\n");
	assert_true(HINT(r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(status_429_503_529_lines_are_detected),
		cmocka_unit_test(numbers_that_are_not_a_status_are_ignored),
		cmocka_unit_test(retry_after_header_gives_the_wait_in_ms),
		cmocka_unit_test(try_again_in_n_seconds_gives_the_wait),
		cmocka_unit_test(binary_output_and_nul_bytes_are_scanned_safely),
		cmocka_unit_test(long_lines_are_scanned_at_every_boundary),
		cmocka_unit_test(output_split_anywhere_scans_like_whole_lines),
		cmocka_unit_test(status_529_and_overloaded_in_one_window_of_a_long_line_are_seen),
		cmocka_unit_test(long_minified_json_line_is_scanned),
		cmocka_unit_test(retry_after_header_of_a_2xx_answer_is_no_sign),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
