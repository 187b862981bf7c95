/*
 * test_throttled.c - BRK_THROTTLED (issue 11 §2): a rate-limit answer a
 * pace takes frees the lease and counts neither way for the trip rules;
 * a Retry-After up to max_wait_ms sets no shared cool-until, one above it
 * still opens. Without a pace a 429 is a rate_limited failure as before,
 * and a dead upstream is still cut off.
 *
 * Breakers here: failure_threshold 5, open_ms 1000, max_wait_ms 300000.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("thr", 0)

static void cfg5(struct brk_config *c)
{
	ut_cfg(c);
	c->failure_threshold = 5;
}

static void release_ra(brk_breaker *b, int outcome, int reason, int64_t ra)
{
	brk_permit p;

	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, outcome, reason, ra));
}

/* The behaviour the outcome exists for: five 429s in a row, each with a
 * Retry-After of 1 s, taken by a pace, leave the breaker closed and set
 * no cool-until: the next call is admitted at once. */
static void five_throttled_in_a_row_leave_it_closed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	brk_permit p;
	int k;

	cfg5(&c);
	b = ut_breaker(u, "svc", &c);
	for (k = 0; k < 5; k++)
		release_ra(b, BRK_THROTTLED, BRK_REASON_RATE_LIMITED, 1000);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	assert_int_equal(i.counters.throttled, 5);
	assert_int_equal(i.counters.failures, 0);
	assert_int_equal(i.counters.successes, 0);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_NONE], 0);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_RATE_LIMITED], 0);
	assert_int_equal(i.counters.transitions, 0);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* Unchanged: without a pace, five rate_limited failures open it, and a
 * Retry-After up to max_wait cools every caller. */
static void five_rate_limited_failures_still_open(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	int k;

	cfg5(&c);
	b = ut_breaker(u, "svc", &c);
	release_ra(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 1000);
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 1000);
	ut_advance_ms(u, 1000);
	for (k = 1; k < 5; k++)
		release_ra(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_RATE_LIMITED], 5);
	assert_int_equal(i.counters.throttled, 0);
}

/* A Retry-After above max_wait_ms opens for that long, THROTTLED or not. */
static void throttled_retry_after_above_max_wait_opens(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	cfg5(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "svc", &c);
	release_ra(b, BRK_THROTTLED, BRK_REASON_RATE_LIMITED, 300001);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 300001);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	ut_rc(-BRK_EOPEN, ut_try(b));
}

/* Exactly max_wait_ms with THROTTLED: neither cooling nor open. */
static void throttled_retry_after_at_max_wait_sets_nothing(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	cfg5(&c);
	b = ut_breaker(u, "svc", &c);
	release_ra(b, BRK_THROTTLED, BRK_REASON_RATE_LIMITED, 300000);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	assert_int_equal(i.open_remaining_ms, 0);
}

/* A dead upstream (timeouts) is still cut off, THROTTLED answers in
 * between or not: they neither count nor reset the failure run. */
static void dead_upstream_still_opens(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	int k;

	cfg5(&c);
	b = ut_breaker(u, "svc", &c);
	for (k = 0; k < 4; k++) {
		release_ra(b, BRK_FAILURE, BRK_REASON_TIMEOUT, 0);
		release_ra(b, BRK_THROTTLED, BRK_REASON_RATE_LIMITED, 500);
	}
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 4);
	release_ra(b, BRK_FAILURE, BRK_REASON_TIMEOUT, 0);
	assert_int_equal(ut_state(b), BRK_OPEN);
}

/* Neither does it feed the failure-rate window: 100 THROTTLED and one
 * failure make a window of one call. */
static void throttled_not_in_the_window(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	int k;

	cfg5(&c);
	c.failure_threshold = 1000;
	c.failure_rate_pct = 50;
	c.min_calls = 10;
	c.window_ms = 10000;
	b = ut_breaker(u, "svc", &c);
	for (k = 0; k < 100; k++)
		release_ra(b, BRK_THROTTLED, BRK_REASON_RATE_LIMITED, 0);
	release_ra(b, BRK_SUCCESS, 0, 0);
	ut_info(b, &i);
	assert_int_equal(i.window_calls, 1);
	assert_int_equal(i.window_failures, 0);
	assert_int_equal(i.state, BRK_CLOSED);
}

/* Half-open: a probe released THROTTLED is freed with no verdict; the
 * next probe is admitted and decides. */
static void throttled_probe_freed_no_verdict(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	brk_permit p;

	cfg5(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 5);
	assert_int_equal(ut_state(b), BRK_OPEN);
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_rc(-BRK_EOPEN, ut_try(b)); /* the one probe slot is taken */
	ut_rc(0, brk_release(&p, BRK_THROTTLED, BRK_REASON_RATE_LIMITED, 1000));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	ut_acquire_ok(b, &p); /* the next probe goes at once */
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

static void throttled_name(void **state)
{
	(void)state;
	assert_string_equal(brk_outcome_name(BRK_THROTTLED), "throttled");
	assert_string_equal(brk_outcome_name(BRK_THROTTLED + 1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(five_throttled_in_a_row_leave_it_closed),
		UT_TEST(five_rate_limited_failures_still_open),
		UT_TEST(throttled_retry_after_above_max_wait_opens),
		UT_TEST(throttled_retry_after_at_max_wait_sets_nothing),
		UT_TEST(dead_upstream_still_opens),
		UT_TEST(throttled_not_in_the_window),
		UT_TEST(throttled_probe_freed_no_verdict),
		UT_TEST(throttled_name),
	};
	return cmocka_run_group_tests_name("throttled", tests, NULL, NULL);
}
