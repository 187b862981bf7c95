/*
 * test_classify.c - brk_http_classify() and its halves (breaker.h, "HTTP
 * classification"): the status table, Retry-After in both RFC 9110 forms
 * (delta-seconds and the three HTTP-date forms), signs in text that is not
 * NUL-terminated, and status 0 decided by the text. Pure functions: every
 * date test passes now_unix_ms, so no clock is read (except in the one
 * test that checks the clock is read when now is 0).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "breaker.h"

#define MS(s) ((int64_t)(s) * 1000)
#define NOW_1994 MS(784111740)   /* Sun, 06 Nov 1994 08:49:00 GMT */
#define NOW_LEAP MS(1709164800 - 1) /* Wed, 28 Feb 2024 23:59:59 GMT */
#define NOW_2026 MS(1780272000)  /* Mon, 01 Jun 2026 00:00:00 GMT */
#define CAP ((int64_t)BRK_MAX_DURATION_MS)

static struct brk_result classify(int status, const char *ra, const char *text,
				  int64_t now)
{
	struct brk_result r;

	memset(&r, 0x5a, sizeof(r));
	assert_int_equal(brk_http_classify(status, ra, text,
					   text ? strlen(text) : 0, now, &r), 0);
	return r;
}

static void expect(int status, const char *ra, const char *text, int64_t now,
		   int outcome, int reason, int64_t wait)
{
	struct brk_result r = classify(status, ra, text, now);

	if (r.outcome != outcome || r.reason != reason || r.retry_after_ms != wait)
		fail_msg("status %d, Retry-After '%s', text '%s': got %s/%s/%lld, "
			 "want %s/%s/%lld", status, ra ? ra : "(null)",
			 text ? text : "(null)", brk_outcome_name(r.outcome),
			 brk_reason_name(r.reason), (long long)r.retry_after_ms,
			 brk_outcome_name(outcome), brk_reason_name(reason),
			 (long long)wait);
}

/* The Retry-After value @ra read with a 429 at @now: the wait, or -1 if it
 * was not a Retry-After (then the status alone decided: 0 ms). */
static int64_t header_ms(const char *ra, int64_t now)
{
	struct brk_result r = classify(0, ra, NULL, now);

	if (r.outcome == 0)
		return -1;
	assert_int_equal(r.outcome, BRK_FAILURE);
	assert_int_equal(r.reason, BRK_REASON_RATE_LIMITED);
	assert_int_equal(classify(429, ra, NULL, now).retry_after_ms,
			 r.retry_after_ms);
	return r.retry_after_ms;
}

static void expect_header(const char *ra, int64_t now, int64_t want)
{
	int64_t got = header_ms(ra, now);

	if (got != want)
		fail_msg("Retry-After '%s': %lld ms, want %lld", ra, (long long)got,
			 (long long)want);
}

/* ---- the status table ---------------------------------------------------- */

static void test_status_table(void **state)
{
	static const int ok[] = { 100, 101, 199, 200, 201, 202, 204, 299,
				  300, 301, 302, 304, 307, 399 };
	static const int ours[] = { 400, 401, 402, 403, 405, 406, 409, 410,
				    411, 413, 415, 418, 422, 451, 499 };
	static const int server[] = { 500, 501, 502, 505, 507, 508, 511, 599 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		expect(ok[i], NULL, NULL, NOW_2026, BRK_SUCCESS, BRK_REASON_NONE, 0);
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		expect(ours[i], NULL, NULL, NOW_2026, BRK_REJECTED_REQUEST,
		       BRK_REASON_NONE, 0);
	for (i = 0; i < sizeof(server) / sizeof(server[0]); i++)
		expect(server[i], NULL, NULL, NOW_2026, BRK_FAILURE,
		       BRK_REASON_SERVER_ERROR, 0);
	expect(404, NULL, NULL, NOW_2026, BRK_HEALTHY_ERROR, BRK_REASON_NONE, 0);
	expect(408, NULL, NULL, NOW_2026, BRK_FAILURE, BRK_REASON_TIMEOUT, 0);
	expect(429, NULL, NULL, NOW_2026, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 0);
	expect(503, NULL, NULL, NOW_2026, BRK_FAILURE, BRK_REASON_OVERLOADED, 0);
	expect(529, NULL, NULL, NOW_2026, BRK_FAILURE, BRK_REASON_OVERLOADED, 0);
	expect(504, NULL, NULL, NOW_2026, BRK_FAILURE, BRK_REASON_TIMEOUT, 0);
	expect(600, NULL, NULL, NOW_2026, BRK_FAILURE, BRK_REASON_OTHER, 0);
	expect(999, NULL, NULL, NOW_2026, BRK_FAILURE, BRK_REASON_OTHER, 0);
	/* nothing known: no verdict */
	expect(0, NULL, NULL, NOW_2026, 0, BRK_REASON_NONE, 0);
	expect(0, NULL, "all good\n", NOW_2026, 0, BRK_REASON_NONE, 0);
}

static void test_bad_arguments(void **state)
{
	static const int bad_status[] = { -1, 1, 42, 99, 1000, 100000 };
	struct brk_result r, before;
	size_t i;

	(void)state;
	memset(&r, 0x5a, sizeof(r));
	before = r;
	assert_int_equal(brk_http_classify(200, NULL, NULL, 0, 0, NULL), -EINVAL);
	for (i = 0; i < sizeof(bad_status) / sizeof(bad_status[0]); i++) {
		assert_int_equal(brk_http_classify(bad_status[i], NULL, NULL, 0,
						   NOW_2026, &r), -EINVAL);
		assert_int_equal(brk_http_verdict(bad_status[i], 0, 0, &r), -EINVAL);
	}
	assert_int_equal(brk_http_classify(429, "5", NULL, 3, NOW_2026, &r), -EINVAL);
	assert_memory_equal(&r, &before, sizeof(r)); /* untouched */
	assert_int_equal(brk_http_classify(429, "5", NULL, 0, NOW_2026, &r), 0);
	assert_int_equal(r.retry_after_ms, 5000);
	assert_int_equal(brk_http_scan_text(NULL, 1, NOW_2026, NULL), -EINVAL);
	assert_int_equal(brk_http_scan_text(NULL, 0, NOW_2026, NULL), 0);
	assert_int_equal(brk_http_verdict(0, 8, 0, &r), -EINVAL);
	assert_int_equal(brk_http_verdict(0, 0, 0, NULL), -EINVAL);
	/* a negative or huge wait given to the verdict */
	assert_int_equal(brk_http_verdict(429, 0, -5, &r), 0);
	assert_int_equal(r.retry_after_ms, 0);
	assert_int_equal(brk_http_verdict(503, 0, INT64_MAX, &r), 0);
	assert_int_equal(r.retry_after_ms, CAP);
}

/* Retry-After is kept with failures only (breaker.h says why). */
static void test_retry_after_only_with_failures(void **state)
{
	static const int kept[] = { 408, 429, 500, 502, 503, 504, 529, 599, 777 };
	static const int dropped[] = { 100, 200, 202, 301, 303, 307, 400, 401,
				       404, 413 };
	struct brk_result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		r = classify(kept[i], "120", NULL, NOW_2026);
		assert_int_equal(r.outcome, BRK_FAILURE);
		assert_int_equal(r.retry_after_ms, 120000);
	}
	for (i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		r = classify(dropped[i], "120", "all is well", NOW_2026);
		assert_int_not_equal(r.outcome, BRK_FAILURE);
		assert_int_equal(r.retry_after_ms, 0);
		/* but a body that asks to wait is a rate limit, whatever the
		 * status; the wait is then the longest seen */
		expect(dropped[i], "120", "try again in 5 seconds", NOW_2026,
		       BRK_FAILURE, BRK_REASON_RATE_LIMITED, 120000);
		expect(dropped[i], NULL, "{\"retry_after\": 5}", NOW_2026,
		       BRK_FAILURE, BRK_REASON_RATE_LIMITED, 5000);
	}
	expect(403, NULL, "You have exceeded a secondary rate limit. Please "
	       "try again in 60 seconds.", NOW_2026, BRK_FAILURE,
	       BRK_REASON_RATE_LIMITED, 60000);
	/* a failure keeps its own reason */
	expect(503, NULL, "try again in 5 seconds", NOW_2026, BRK_FAILURE,
	       BRK_REASON_OVERLOADED, 5000);
}

/* ---- delta-seconds ----------------------------------------------------- */

static void test_delta_seconds(void **state)
{
	(void)state;
	expect_header("0", NOW_2026, 0);
	expect_header("1", NOW_2026, 1000);
	expect_header("120", NOW_2026, 120000);
	expect_header("007", NOW_2026, 7000);
	expect_header("0000000000000000000000000000042", NOW_2026, 42000);
	expect_header(" 5", NOW_2026, 5000);
	expect_header("5 \t", NOW_2026, 5000);
	expect_header("274877906", NOW_2026, 274877906000); /* below the cap */
	expect_header("274877907", NOW_2026, CAP);          /* just above */
	expect_header("1180591620717411303424", NOW_2026, CAP); /* 2^70 */
	expect_header("99999999999999999999999999999999999999999", NOW_2026, CAP);
}

static void test_delta_seconds_garbage(void **state)
{
	static const char *const bad[] = {
		"", " ", "-5", "-0", "+5", "5s", "1.5", "5 5", "0x10", "abc",
		"5,6", "5;q=1", "\xef\xbc\x95" /* fullwidth 5 */, "5\n",
		"Infinity", "1e3",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (header_ms(bad[i], NOW_2026) != -1)
			fail_msg("'%s' taken for a Retry-After", bad[i]);
		/* garbage is never an error, and the status still decides */
		expect(429, bad[i], NULL, NOW_2026, BRK_FAILURE,
		       BRK_REASON_RATE_LIMITED, 0);
		expect(200, bad[i], NULL, NOW_2026, BRK_SUCCESS, BRK_REASON_NONE, 0);
	}
}

/* ---- HTTP-date ------------------------------------------------------------ */

static void test_http_date_forms(void **state)
{
	(void)state;
	/* the three forms of RFC 9110 section 5.6.7, 37 s after NOW_1994 */
	expect_header("Sun, 06 Nov 1994 08:49:37 GMT", NOW_1994, 37000);
	expect_header("Sunday, 06-Nov-94 08:49:37 GMT", NOW_1994, 37000);
	expect_header("Sun Nov  6 08:49:37 1994", NOW_1994, 37000);
	expect_header("Sun Nov 16 08:49:37 1994", NOW_1994, MS(10 * 86400 + 37));
	/* names in any case, whitespace around the value */
	expect_header("  sun, 06 NOV 1994 08:49:37 gmt ", NOW_1994, 37000);
	expect_header("SUNDAY, 06-nov-94 08:49:37 GMT", NOW_1994, 37000);
	/* the day name is not checked against the date */
	expect_header("Mon, 06 Nov 1994 08:49:37 GMT", NOW_1994, 37000);
	/* a leap second is a valid time of day */
	expect_header("Sun, 06 Nov 1994 08:49:60 GMT", NOW_1994, 60000);
	/* ms resolution of now */
	expect_header("Sun, 06 Nov 1994 08:49:37 GMT", NOW_1994 + 250, 36750);
	/* far future: clamped */
	expect_header("Fri, 31 Dec 9999 23:59:59 GMT", NOW_2026, CAP);
}

static void test_http_date_past_is_zero(void **state)
{
	(void)state;
	expect_header("Sun, 06 Nov 1994 08:49:37 GMT", NOW_2026, 0);
	expect_header("Sunday, 06-Nov-94 08:49:37 GMT", NOW_2026, 0);
	expect_header("Sun Nov  6 08:49:37 1994", NOW_2026, 0);
	expect_header("Sun, 06 Nov 1994 08:49:00 GMT", NOW_1994, 0); /* == now */
	expect_header("Thu, 01 Jan 1970 00:00:00 GMT", NOW_2026, 0);
	expect_header("Mon, 01 Jan 0001 00:00:00 GMT", NOW_2026, 0);
	/* a past date still makes a 503 a failure with "retry now" */
	expect(503, "Sun, 06 Nov 1994 08:49:37 GMT", NULL, NOW_2026, BRK_FAILURE,
	       BRK_REASON_OVERLOADED, 0);
}

static void test_http_date_invalid(void **state)
{
	static const char *const bad[] = {
		"Sun, 31 Feb 1994 08:49:37 GMT",  /* no such day */
		"Sun, 30 Feb 2024 08:49:37 GMT",
		"Sun, 29 Feb 2023 08:49:37 GMT",  /* not a leap year */
		"Sun, 31 Apr 1994 08:49:37 GMT",
		"Sun, 00 Nov 1994 08:49:37 GMT",
		"Sun, 32 Jan 1994 08:49:37 GMT",
		"Sun, 06 Foo 1994 08:49:37 GMT",  /* no such month */
		"Sun, 06 November 1994 08:49:37 GMT",
		"Xyz, 06 Nov 1994 08:49:37 GMT",  /* no such day name */
		"Sun, 06 Nov 1994 24:00:00 GMT",
		"Sun, 06 Nov 1994 08:60:00 GMT",
		"Sun, 06 Nov 1994 08:49:61 GMT",
		"Sun, 06 Nov 1994 08:49:37",      /* no GMT */
		"Sun, 06 Nov 1994 08:49:37 UTC",
		"Sun, 06 Nov 1994 08:49:37 GMT+1",
		"Sun, 06 Nov 94 08:49:37 GMT",    /* 2-digit year in IMF */
		"Sun, 6 Nov 1994 08:49:37 GMT",   /* 1-digit day in IMF */
		"Sun,06 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 8:49:37 GMT",
		"Sun, 06 Nov 19945 08:49:37 GMT",
		"Sun, 06-Nov-94 08:49:37 GMT",    /* RFC 850 needs the long name */
		"Sunday, 06 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-1994 08:49:37 GMT",
		"Sunday, 31-Jun-94 08:49:37 GMT",
		"Sun Nov 6 08:49:37 1994",        /* asctime pads the day */
		"Sun Nov  6 08:49:37 94",
		"Sun Nov  6 08:49:37 1994 GMT",
		"Sunday Nov  6 08:49:37 1994",
		"Sun Nov 31 08:49:37 1994",
		"Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994",
		"Sun",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (header_ms(bad[i], NOW_1994) != -1)
			fail_msg("'%s' taken for a date", bad[i]);
}

static void test_leap_day(void **state)
{
	(void)state;
	expect_header("Thu, 29 Feb 2024 00:00:00 GMT", NOW_LEAP, 1000);
	expect_header("Thursday, 29-Feb-24 00:00:01 GMT", NOW_LEAP, 2000);
	expect_header("Thu Feb 29 00:00:02 2024", NOW_LEAP, 3000);
	expect_header("Fri, 01 Mar 2024 00:00:00 GMT", NOW_LEAP, MS(86400 + 1));
	/* 2000 is a leap year (divisible by 400), 1900 is not */
	expect_header("Tue, 29 Feb 2000 12:00:00 GMT", MS(951825600), 0);
	expect_header("Tue, 29 Feb 2000 12:00:01 GMT", MS(951825600), 1000);
	assert_int_equal(header_ms("Thu, 29 Feb 1900 00:00:00 GMT", NOW_LEAP), -1);
	assert_int_equal(header_ms("Sat, 29 Feb 2100 00:00:00 GMT", NOW_LEAP), -1);
}

/* RFC 9110: a two-digit year more than 50 years ahead is last century's. */
static void test_rfc850_century(void **state)
{
	(void)state;
	/* now is 2026: "76" is 2076 (50 years ahead), "77" is 1977 */
	expect_header("Wednesday, 01-Jan-76 00:00:00 GMT", NOW_2026,
		      (int64_t)MS(3345062400) - NOW_2026 > CAP ? CAP
		      : (int64_t)MS(3345062400) - NOW_2026);
	expect_header("Saturday, 01-Jan-77 00:00:00 GMT", NOW_2026, 0);
	expect_header("Tuesday, 02-Jun-26 00:00:00 GMT", NOW_2026, MS(86400));
	expect_header("Friday, 01-Jan-99 00:00:00 GMT", NOW_2026, 0);
}

/*
 * An RFC 850 date takes its century from now, so with a now millions of
 * years away its seconds times 1000 overflowed int64 (UBSan: signed
 * overflow in httpdate.c; found by tests/fuzz/fuzz_classify). Any now
 * must give a wait in 0 .. BRK_MAX_DURATION_MS, never undefined
 * behaviour.
 */
static void test_rfc850_date_with_extreme_now_saturates(void **state)
{
	static const int64_t nows[] = { INT64_MIN, INT64_MIN + 1,
					-9223372036854775807LL / 2, -1, 1,
					INT64_MAX / 2, INT64_MAX - 1, INT64_MAX };
	struct brk_result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(nows) / sizeof(nows[0]); i++) {
		r = classify(429, "Sunday, 06-Nov-02 08:49:37 GMT", NULL, nows[i]);
		assert_true(r.retry_after_ms >= 0 && r.retry_after_ms <= CAP);
		r = classify(0, NULL, "Retry-After: Sunday, 06-Nov-02 08:49:37 GMT",
			     nows[i]);
		assert_int_equal(r.reason, BRK_REASON_RATE_LIMITED);
		assert_true(r.retry_after_ms >= 0 && r.retry_after_ms <= CAP);
	}
	/* the 4-digit forms against the extremes: far future, far past */
	expect_header("Sun, 06 Nov 1994 08:49:37 GMT", INT64_MIN, CAP);
	expect_header("Sun, 06 Nov 1994 08:49:37 GMT", INT64_MAX, 0);
	expect_header("Sun Nov  6 08:49:37 1994", INT64_MIN, CAP);
}

/* now_unix_ms 0 reads CLOCK_REALTIME (any clock between 1994 and 9990
 * gives these answers). */
static void test_now_zero_reads_the_clock(void **state)
{
	(void)state;
	expect_header("Sun, 06 Nov 1994 08:49:37 GMT", 0, 0);
	expect_header("Fri, 31 Dec 9999 23:59:59 GMT", 0, CAP);
	expect_header("30", 0, 30000);
}

/* ---- text ---------------------------------------------------------------- */

/* Classify the first @len bytes of @buf (which goes on past them). */
static struct brk_result classify_n(int status, const char *buf, size_t len)
{
	struct brk_result r;

	assert_int_equal(brk_http_classify(status, NULL, buf, len, NOW_2026, &r), 0);
	return r;
}

static void test_text_phrases(void **state)
{
	static const struct {
		const char *text;
		int64_t ms;
	} t[] = {
		{ "Rate limit reached. Please try again in 20 seconds.", 20000 },
		{ "try again in 1 second", 1000 },
		{ "Try Again In 1.5s", 1500 },
		{ "TRY AGAIN IN 250MS", 250 },
		{ "please try again in 2 minutes", 120000 },
		{ "try again in 1m30s", 60000 },
		{ "try again in 0.5 sec", 500 },
		{ "try again after 3 secs", 3000 },
		{ "Please retry after 30 seconds", 30000 },
		{ "retry in 45s", 45000 },
		{ "Retry-After: 2", 2000 },
		{ "retry-after:30", 30000 },
		{ "RETRY-AFTER:   7\r", 7000 },
		{ "Retry-After: 1.5", 1500 },
		{ "Retry-After: 0.0001", 1 },
		{ "Retry-After: 0", 0 },
		{ "{\"retry_after\": 3}", 3000 },
		{ "{\"retry_after\":\"4\"}", 4000 },
		{ "Retry-After: Fri, 31 Dec 9999 23:59:59 GMT", CAP },
		{ "Retry-After: Sun, 06 Nov 1994 08:49:37 GMT", 0 },
		{ "x: 1, Retry-After: 12, Retry-After: 3", 12000 }, /* longest */
		{ "Retry-After: 99999999999999999999999", CAP },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		expect(0, NULL, t[i].text, NOW_2026, BRK_FAILURE,
		       BRK_REASON_RATE_LIMITED, t[i].ms);
		expect(503, NULL, t[i].text, NOW_2026, BRK_FAILURE,
		       BRK_REASON_OVERLOADED, t[i].ms);
	}
}

static void test_text_not_signs(void **state)
{
	static const char *const none[] = {
		"processed 4290 items", "processed 429 items", "id 5290429 done",
		"took 1.429 s", "version 4.29.3, build 429a", "HTTP/1.1 200 OK",
		"status: 200 (429 bytes)", "529 widgets shipped",
		"503 messages queued", "status429", "server overloaded? no", "",
		"retry later", "try again in a few seconds", "try again in 5",
		"retry in 5", "my-retry-after-hook: 5", "Retry-After: 5x",
		"Retry-After: soon", "Retry-After: Sun, 31 Feb 1994 08:49:37 GMT",
		"529\noverloaded", /* a bare 529 counts on its own line only */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		expect(0, NULL, none[i], NOW_2026, 0, BRK_REASON_NONE, 0);
}

/* The text is bounded by text_len, never by a NUL: what lies after it in
 * the buffer must not change the answer. */
static void test_text_not_nul_terminated(void **state)
{
	static const char a[] = "try again in 5 seconds";
	static const char b[] = "Retry-After: 1234";
	static const char c[] = "HTTP/1.1 4290";
	static const char d[] = "out\0put\0HTTP/2 503\0more";
	struct brk_result r;
	char big[8192];

	(void)state;
	r = classify_n(0, a, strlen("try again in 5")); /* unit cut off */
	assert_int_equal(r.outcome, 0);
	r = classify_n(0, a, strlen("try again in 5 s"));
	assert_int_equal(r.retry_after_ms, 5000);
	r = classify_n(0, b, strlen("Retry-After: 12"));
	assert_int_equal(r.retry_after_ms, 12000);
	r = classify_n(0, c, strlen("HTTP/1.1 429"));
	assert_int_equal(r.reason, BRK_REASON_RATE_LIMITED);
	r = classify_n(0, d, sizeof(d) - 1); /* NUL bytes are ordinary */
	assert_int_equal(r.reason, BRK_REASON_OVERLOADED);
	r = classify_n(0, d, 8); /* "out\0put\0" */
	assert_int_equal(r.outcome, 0);
	/* a stdout-like buffer with no NUL anywhere, read to its last byte */
	memset(big, 'x', sizeof(big));
	memcpy(big + sizeof(big) - 12, "\nRetry-After", 12);
	r = classify_n(0, big, sizeof(big));
	assert_int_equal(r.outcome, 0);
	memcpy(big + sizeof(big) - 15, "\nHTTP/1.1 429 ", 14);
	big[sizeof(big) - 1] = 'T';
	r = classify_n(0, big, sizeof(big));
	assert_int_equal(r.reason, BRK_REASON_RATE_LIMITED);
}

/* Status 0: the text's status signs decide, as bctl exec does. */
static void test_status_zero_from_text(void **state)
{
	static const char curl_i[] =
		"HTTP/1.1 503 Service Unavailable\r\n"
		"Content-Type: text/plain\r\n"
		"Retry-After: 2\r\n"
		"\r\n"
		"down for maintenance\n";

	(void)state;
	expect(0, NULL, "HTTP/1.1 429", NOW_2026, BRK_FAILURE,
	       BRK_REASON_RATE_LIMITED, 0);
	expect(0, NULL, "< HTTP/2 429\r\n", NOW_2026, BRK_FAILURE,
	       BRK_REASON_RATE_LIMITED, 0);
	expect(0, NULL, "HTTP/2 503", NOW_2026, BRK_FAILURE,
	       BRK_REASON_OVERLOADED, 0);
	expect(0, NULL, "HTTP/1.1 529\r\n", NOW_2026, BRK_FAILURE,
	       BRK_REASON_OVERLOADED, 0);
	expect(0, NULL, "{\"status\":429,\"error\":\"slow down\"}", NOW_2026,
	       BRK_FAILURE, BRK_REASON_RATE_LIMITED, 0);
	expect(0, NULL, "error: 429 Too Many Requests", NOW_2026, BRK_FAILURE,
	       BRK_REASON_RATE_LIMITED, 0);
	expect(0, NULL, "{\"error\":{\"type\":\"overloaded_error\"}} 529",
	       NOW_2026, BRK_FAILURE, BRK_REASON_OVERLOADED, 0);
	expect(0, NULL, curl_i, NOW_2026, BRK_FAILURE, BRK_REASON_OVERLOADED, 2000);
	/* a 429 anywhere wins over a 503; the longest wait wins */
	expect(0, NULL, "HTTP/1.1 503\nRetry-After: 9\nHTTP/1.1 429\nRetry-After: 1",
	       NOW_2026, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 9000);
	/* only a wait: rate limited */
	expect(0, "5", NULL, NOW_2026, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 5000);
	expect(0, "3", "try again in 8 seconds", NOW_2026, BRK_FAILURE,
	       BRK_REASON_RATE_LIMITED, 8000);
	expect(0, "30", "HTTP/2 503", NOW_2026, BRK_FAILURE,
	       BRK_REASON_OVERLOADED, 30000);
	/* a known status is not overridden by status lines in the body */
	expect(200, NULL, "HTTP/1.1 429", NOW_2026, BRK_SUCCESS, BRK_REASON_NONE, 0);
	expect(500, NULL, "HTTP/1.1 429", NOW_2026, BRK_FAILURE,
	       BRK_REASON_SERVER_ERROR, 0);
	expect(404, NULL, "HTTP/2 503", NOW_2026, BRK_HEALTHY_ERROR,
	       BRK_REASON_NONE, 0);
	expect(200, NULL, "{\"checks\":[{\"name\":\"db\",\"status\":503}]}",
	       NOW_2026, BRK_SUCCESS, BRK_REASON_NONE, 0);
}

/* classify == scan_text + verdict, also when the text comes in pieces cut
 * at line ends (what bctl exec does). */
static void test_pieces_compose(void **state)
{
	static const char *const texts[] = {
		"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\n",
		"ok\nHTTP/2 429\nretry in 3s\n", "try again in 4 seconds\n",
		"nothing here\nat all\n", "529 overloaded\n",
		"Retry-After: Fri, 31 Dec 9999 23:59:59 GMT\nHTTP/1.1 200 OK\n",
	};
	struct brk_result whole, parts;
	int64_t ms, best;
	unsigned signs;
	size_t i, off, n;
	int s;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		whole = classify(0, NULL, texts[i], NOW_2026);
		signs = 0;
		best = 0;
		for (off = 0; texts[i][off]; off += n) {
			n = strcspn(texts[i] + off, "\n") + 1;
			s = brk_http_scan_text(texts[i] + off, n, NOW_2026, &ms);
			assert_true(s >= 0);
			signs |= (unsigned)s;
			best = ms > best ? ms : best;
		}
		assert_int_equal(brk_http_verdict(0, signs, best, &parts), 0);
		assert_int_equal(parts.outcome, whole.outcome);
		assert_int_equal(parts.reason, whole.reason);
		assert_int_equal(parts.retry_after_ms, whole.retry_after_ms);
	}
	assert_int_equal(brk_http_scan_text("HTTP/2 429 retry in 2s", 22, NOW_2026,
					    &ms),
			 BRK_HTTP_SIGN_RATE_LIMITED | BRK_HTTP_SIGN_RETRY_AFTER);
	assert_int_equal(ms, 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_table),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_retry_after_only_with_failures),
		cmocka_unit_test(test_delta_seconds),
		cmocka_unit_test(test_delta_seconds_garbage),
		cmocka_unit_test(test_http_date_forms),
		cmocka_unit_test(test_http_date_past_is_zero),
		cmocka_unit_test(test_http_date_invalid),
		cmocka_unit_test(test_leap_day),
		cmocka_unit_test(test_rfc850_century),
		cmocka_unit_test(test_rfc850_date_with_extreme_now_saturates),
		cmocka_unit_test(test_now_zero_reads_the_clock),
		cmocka_unit_test(test_text_phrases),
		cmocka_unit_test(test_text_not_signs),
		cmocka_unit_test(test_text_not_nul_terminated),
		cmocka_unit_test(test_status_zero_from_text),
		cmocka_unit_test(test_pieces_compose),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
