/*
 * test_window.c - the sliding-window trip rules on the fake clock
 * (brk_attach_opts.clock; nothing sleeps).
 *
 * The window is BRK_WINDOW_BUCKETS (10) buckets of window_ms / 10; a
 * bucket is emptied lazily by the first call that lands in it after it
 * went out of date (that call counts itself), and the window sums the
 * current bucket and the 9 before it. Times below are ms since the
 * segment was created (the fake clock's start), so bucket k holds
 * [1000 k, 1000 k + 999] with window_ms 10000.
 *
 * window_drops_the_oldest_second_at_the_edge: window_ms 10000, failure_rate_pct 50, min_calls 20,
 * failure_threshold 1000000. 1000 successes a second for 10 s (at ms
 * 0..9999: buckets 0..9, 1000 each), then 900 failures in the 11th second
 * (ms 10000..10899, bucket 10). When the 11th second begins, bucket 0
 * leaves the window: window_calls drops from 10000 to 9000, and the first
 * failure, which rotates bucket 10's slot (shared with bucket 0), counts
 * itself: 9001. At the end window_calls is 9900 (9000 successes of
 * seconds 2-10 + 900 failures), window_failures 900: a 9.1% failure rate,
 * the breaker stays closed. Shifted by 1 ms (successes at ms 1..10000,
 * failures at 10001..10900) the last success lands in bucket 10 and
 * bucket 0 had only 999: window_calls is then 9901, failures 900.
 *
 * slow_rate: slow_call_ms 100, slow_rate_pct 50, min_calls 10: a permit
 * held 99 ms is not slow, 100 ms is; the call that makes slow >= 50% of
 * >= min_calls calls opens the breaker with event reason slow_rate.
 *
 * failure_rate: failure_rate_pct 50, min_calls 20: 19 failures (100%) do
 * not open it (min_calls); the 20th does, reason failure_rate. 10
 * successes + 9 failures: closed; the 10th failure (20 calls, 50%)
 * opens it.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("window", 16)

static void at_ms(struct ut *w, uint64_t ms)
{
	ut_set_ns(w, UT_CLOCK_START_NS + ms * UT_NS_PER_MS);
}

/* One admitted call held @hold_ms on the fake clock. */
static void call(struct ut *w, brk_breaker *b, int outcome, uint64_t hold_ms)
{
	brk_permit p;

	assert_int_equal(brk_acquire(b, &p, NULL), 0);
	ut_advance_ns(w, hold_ms * UT_NS_PER_MS);
	assert_int_equal(brk_release(&p, outcome,
				     outcome == BRK_FAILURE ? BRK_REASON_SERVER_ERROR : 0,
				     0), 0);
}

/* The events written since @cursor that opened the breaker. */
static int opens_since(struct ut *w, uint64_t *cursor, int *reason)
{
	struct brk_event ev[32];
	uint64_t lost;
	int n, i, opens = 0;

	while ((n = brk_events_read(w->seg, cursor, ev, 32, &lost)) > 0)
		for (i = 0; i < n; i++)
			if (ev[i].to == BRK_OPEN && ev[i].from != BRK_OPEN) {
				opens++;
				*reason = ev[i].reason;
			}
	return opens;
}

static uint64_t events_now(struct ut *w)
{
	struct brk_segment_info si;

	assert_int_equal(brk_segment_info(w->seg, &si), 0);
	return si.events_written + 1;
}

static void edge_cfg(struct brk_config *c)
{
	brk_config_init(c);
	c->window_ms = 10000;
	c->failure_rate_pct = 50;
	c->min_calls = 20;
	c->failure_threshold = 1000000;
}

static void window_edge_at(void **state, uint64_t off, uint64_t want_calls)
{
	struct ut *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	uint64_t i, cursor;
	int reason = 0;

	edge_cfg(&c);
	b = ut_breaker(w, off ? "edge/shifted" : "edge/aligned", &c);
	cursor = events_now(w);
	for (i = 0; i < 10000; i++) {
		at_ms(w, off + i);
		call(w, b, BRK_SUCCESS, 0);
	}
	ut_info(b, &in);
	/* aligned: buckets 0..9 hold 1000 each; shifted: the last success
	 * (10000 ms) rotated bucket 0's slot and counted itself: 9000 + 1 */
	assert_int_equal(in.window_calls, off ? 9001 : 10000);
	assert_int_equal(in.window_failures, 0);

	at_ms(w, 10000 + off);
	ut_info(b, &in);
	/* bucket 0 is out; aligned, bucket 10 has not started (9000);
	 * shifted, it holds the success at 10000 ms (9001) */
	assert_int_equal(in.window_calls, off ? 9001 : 9000);
	call(w, b, BRK_FAILURE, 0);
	ut_info(b, &in);
	assert_int_equal(in.window_failures, 1);
	assert_int_equal(in.window_calls, off ? 9002 : 9001); /* aligned: the
								rotating call counts */
	for (i = 1; i < 900; i++) {
		at_ms(w, 10000 + off + i);
		call(w, b, BRK_FAILURE, 0);
	}
	ut_info(b, &in);
	printf("# offset %" PRIu64 " ms: window_calls %" PRIu64 ", window_failures %"
	       PRIu64 " (%.2f%%), state %s\n", off, in.window_calls,
	       in.window_failures, 100.0 * (double)in.window_failures /
	       (double)in.window_calls, brk_state_name(in.state));
	assert_int_equal(in.window_calls, want_calls);
	assert_int_equal(in.window_failures, 900);
	assert_int_equal(in.state, BRK_CLOSED);
	assert_int_equal(in.consecutive_failures, 900);
	assert_int_equal(in.counters.successes, 10000);
	assert_int_equal(in.counters.failures, 900);
	assert_int_equal(opens_since(w, &cursor, &reason), 0);
}

static void window_drops_the_oldest_second_at_the_edge(void **state)
{
	window_edge_at(state, 0, 9900);
}

static void window_edge_shifted_by_1ms_keeps_the_last_success(void **state)
{
	window_edge_at(state, 1, 9901);
}

/* A bucket that went out of date is emptied by the call that lands in
 * it: the window counts that call, not the stale bucket's. */
static void rotation_counts_the_call(void **state)
{
	struct ut *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	int i;

	edge_cfg(&c);
	b = ut_breaker(w, "rotate", &c);
	at_ms(w, 500); /* bucket 0 */
	for (i = 0; i < 5; i++)
		call(w, b, BRK_FAILURE, 0);
	at_ms(w, 1500); /* bucket 1 */
	call(w, b, BRK_SUCCESS, 0);
	ut_info(b, &in);
	assert_int_equal(in.window_calls, 6);
	assert_int_equal(in.window_failures, 5);
	at_ms(w, 10500); /* bucket 10: same slot as bucket 0 */
	ut_info(b, &in);
	assert_int_equal(in.window_calls, 1);
	assert_int_equal(in.window_failures, 0);
	call(w, b, BRK_SUCCESS, 0);
	ut_info(b, &in);
	assert_int_equal(in.window_calls, 2);
	assert_int_equal(in.window_failures, 0);
	at_ms(w, 30000); /* everything is old */
	ut_info(b, &in);
	assert_int_equal(in.window_calls, 0);
	call(w, b, BRK_SUCCESS, 0);
	ut_info(b, &in);
	assert_int_equal(in.window_calls, 1);
}

static void slow_rate(void **state)
{
	struct ut *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	uint64_t cursor;
	int i, reason = 0;

	brk_config_init(&c);
	c.window_ms = 10000;
	c.slow_call_ms = 100;
	c.slow_rate_pct = 50;
	c.min_calls = 10;
	c.failure_threshold = 1000000;
	c.open_ms = 30000;
	c.max_open_ms = 60000;
	b = ut_breaker(w, "slow", &c);
	cursor = events_now(w);
	at_ms(w, 100);
	for (i = 0; i < 5; i++)
		call(w, b, BRK_SUCCESS, 10);
	call(w, b, BRK_SUCCESS, 99); /* just under: not slow */
	ut_info(b, &in);
	assert_int_equal(in.window_calls, 6);
	assert_int_equal(in.window_slow, 0);
	/* slow calls: after k, slow k of 6 + k; 50% at k = 6 (12 >= 10) */
	for (i = 1; i <= 5; i++) {
		call(w, b, BRK_SUCCESS, 100);
		ut_info(b, &in);
		assert_int_equal(in.state, BRK_CLOSED);
		assert_int_equal(in.window_slow, (uint64_t)i);
		assert_int_equal(in.window_calls, 6 + (uint64_t)i);
	}
	assert_int_equal(opens_since(w, &cursor, &reason), 0);
	call(w, b, BRK_SUCCESS, 150);
	ut_info(b, &in);
	assert_int_equal(in.state, BRK_OPEN);
	assert_int_equal(in.open_remaining_ms, 30000);
	assert_int_equal(opens_since(w, &cursor, &reason), 1);
	assert_int_equal(reason, BRK_EV_SLOW_RATE);
	assert_string_equal(brk_event_reason_name(reason), "slow_rate");
	assert_int_equal(in.counters.failures, 0); /* slow successes */
}

/* Fewer slow calls than min_calls never open, even at 100%. */
static void slow_rate_min_calls(void **state)
{
	struct ut *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	int i;

	brk_config_init(&c);
	c.slow_call_ms = 100;
	c.slow_rate_pct = 50;
	c.min_calls = 10;
	b = ut_breaker(w, "slow/min", &c);
	for (i = 0; i < 9; i++)
		call(w, b, BRK_SUCCESS, 200);
	ut_info(b, &in);
	assert_int_equal(in.window_slow, 9);
	assert_int_equal(in.state, BRK_CLOSED);
	call(w, b, BRK_SUCCESS, 200);
	ut_info(b, &in);
	assert_int_equal(in.state, BRK_OPEN);
}

static void rate_cfg(struct brk_config *c)
{
	brk_config_init(c);
	c->window_ms = 10000;
	c->failure_rate_pct = 50;
	c->min_calls = 20;
	c->failure_threshold = 1000000;
}

static void failure_rate_min_calls(void **state)
{
	struct ut *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	uint64_t cursor;
	int i, reason = 0;

	rate_cfg(&c);
	b = ut_breaker(w, "rate/min", &c);
	cursor = events_now(w);
	for (i = 0; i < 19; i++)
		call(w, b, BRK_FAILURE, 1);
	ut_info(b, &in);
	assert_int_equal(in.window_failures, 19);
	assert_int_equal(in.state, BRK_CLOSED); /* 100%, but 19 < min_calls */
	call(w, b, BRK_FAILURE, 1);
	ut_info(b, &in);
	assert_int_equal(in.state, BRK_OPEN);
	assert_int_equal(opens_since(w, &cursor, &reason), 1);
	assert_int_equal(reason, BRK_EV_FAILURE_RATE);
	assert_string_equal(brk_event_reason_name(reason), "failure_rate");
}

static void failure_rate_at_pct(void **state)
{
	struct ut *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	uint64_t cursor;
	int i, reason = 0;

	rate_cfg(&c);
	b = ut_breaker(w, "rate/pct", &c);
	cursor = events_now(w);
	for (i = 0; i < 10; i++)
		call(w, b, BRK_SUCCESS, 1);
	for (i = 0; i < 9; i++)
		call(w, b, BRK_FAILURE, 1);
	ut_info(b, &in);
	assert_int_equal(in.window_calls, 19);
	assert_int_equal(in.state, BRK_CLOSED);
	call(w, b, BRK_FAILURE, 1); /* 10 of 20: 50% */
	ut_info(b, &in);
	assert_int_equal(in.state, BRK_OPEN);
	assert_int_equal(opens_since(w, &cursor, &reason), 1);
	assert_int_equal(reason, BRK_EV_FAILURE_RATE);
}

/* 9 of 20 (45%) stays closed; healthy errors count as calls. */
static void failure_rate_below(void **state)
{
	struct ut *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	int i;

	rate_cfg(&c);
	b = ut_breaker(w, "rate/below", &c);
	for (i = 0; i < 6; i++)
		call(w, b, BRK_SUCCESS, 1);
	for (i = 0; i < 5; i++)
		call(w, b, BRK_HEALTHY_ERROR, 1);
	for (i = 0; i < 9; i++)
		call(w, b, BRK_FAILURE, 1);
	ut_info(b, &in);
	assert_int_equal(in.window_calls, 20);
	assert_int_equal(in.window_failures, 9);
	assert_int_equal(in.state, BRK_CLOSED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(window_drops_the_oldest_second_at_the_edge),
		UT_TEST(window_edge_shifted_by_1ms_keeps_the_last_success),
		UT_TEST(rotation_counts_the_call),
		UT_TEST(slow_rate),
		UT_TEST(slow_rate_min_calls),
		UT_TEST(failure_rate_min_calls),
		UT_TEST(failure_rate_at_pct),
		UT_TEST(failure_rate_below),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
