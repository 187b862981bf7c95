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
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "breaker.h"

#define MS 1000000ULL
#define START_NS (5000ULL * 1000 * MS)

struct world {
	char shm[96];
	uint64_t now_ns;
	uint64_t rnd;
	brk_segment *seg;
};

static uint64_t fake_clock(void *ctx)
{
	return ((struct world *)ctx)->now_ns;
}

static uint64_t fake_random(void *ctx)
{
	struct world *w = ctx;

	w->rnd = w->rnd * 6364136223846793005ULL + 1442695040888963407ULL;
	return w->rnd >> 11;
}

static int setup(void **state)
{
	static unsigned n;
	struct brk_attach_opts o;
	struct world *w = calloc(1, sizeof(*w));
	char err[256] = "";
	int rc;

	assert_non_null(w);
	snprintf(w->shm, sizeof(w->shm), "/brkft-window-%d-%u", (int)getpid(), n++);
	w->now_ns = START_NS;
	w->rnd = 42;
	brk_segment_unlink(w->shm);
	brk_attach_opts_init(&o);
	o.shm_name = w->shm;
	o.capacity = 16;
	o.clock = fake_clock;
	o.clock_ctx = w;
	o.random = fake_random;
	o.random_ctx = w;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	rc = brk_attach(&o, &w->seg);
	if (rc)
		fprintf(stderr, "attach %s: %s (%s)\n", w->shm, brk_strerror(rc), err);
	assert_int_equal(rc, 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	brk_detach(w->seg);
	brk_segment_unlink(w->shm);
	free(w);
	return 0;
}

static void at_ms(struct world *w, uint64_t ms)
{
	w->now_ns = START_NS + ms * MS;
}

static brk_breaker *breaker(struct world *w, const char *name,
			    const struct brk_config *c)
{
	brk_breaker *b = NULL;

	assert_int_equal(brk_breaker_get(w->seg, name, c, &b), 0);
	return b;
}

static void info(brk_breaker *b, struct brk_info *in)
{
	assert_int_equal(brk_breaker_info(b, in), 0);
}

/* One admitted call held @hold_ms on the fake clock. */
static void call(struct world *w, brk_breaker *b, int outcome, uint64_t hold_ms)
{
	brk_permit p;

	assert_int_equal(brk_acquire(b, &p, NULL), 0);
	w->now_ns += hold_ms * MS;
	assert_int_equal(brk_release(&p, outcome,
				     outcome == BRK_FAILURE ? BRK_REASON_SERVER_ERROR : 0,
				     0), 0);
}

/* The events written since @cursor that opened the breaker. */
static int opens_since(struct world *w, uint64_t *cursor, int *reason)
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

static uint64_t events_now(struct world *w)
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
	struct world *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	uint64_t i, cursor;
	int reason = 0;

	edge_cfg(&c);
	b = breaker(w, off ? "edge/shifted" : "edge/aligned", &c);
	cursor = events_now(w);
	for (i = 0; i < 10000; i++) {
		at_ms(w, off + i);
		call(w, b, BRK_SUCCESS, 0);
	}
	info(b, &in);
	/* aligned: buckets 0..9 hold 1000 each; shifted: the last success
	 * (10000 ms) rotated bucket 0's slot and counted itself: 9000 + 1 */
	assert_int_equal(in.window_calls, off ? 9001 : 10000);
	assert_int_equal(in.window_failures, 0);

	at_ms(w, 10000 + off);
	info(b, &in);
	/* bucket 0 is out; aligned, bucket 10 has not started (9000);
	 * shifted, it holds the success at 10000 ms (9001) */
	assert_int_equal(in.window_calls, off ? 9001 : 9000);
	call(w, b, BRK_FAILURE, 0);
	info(b, &in);
	assert_int_equal(in.window_failures, 1);
	assert_int_equal(in.window_calls, off ? 9002 : 9001); /* aligned: the
								rotating call counts */
	for (i = 1; i < 900; i++) {
		at_ms(w, 10000 + off + i);
		call(w, b, BRK_FAILURE, 0);
	}
	info(b, &in);
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
	struct world *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	int i;

	edge_cfg(&c);
	b = breaker(w, "rotate", &c);
	at_ms(w, 500); /* bucket 0 */
	for (i = 0; i < 5; i++)
		call(w, b, BRK_FAILURE, 0);
	at_ms(w, 1500); /* bucket 1 */
	call(w, b, BRK_SUCCESS, 0);
	info(b, &in);
	assert_int_equal(in.window_calls, 6);
	assert_int_equal(in.window_failures, 5);
	at_ms(w, 10500); /* bucket 10: same slot as bucket 0 */
	info(b, &in);
	assert_int_equal(in.window_calls, 1);
	assert_int_equal(in.window_failures, 0);
	call(w, b, BRK_SUCCESS, 0);
	info(b, &in);
	assert_int_equal(in.window_calls, 2);
	assert_int_equal(in.window_failures, 0);
	at_ms(w, 30000); /* everything is old */
	info(b, &in);
	assert_int_equal(in.window_calls, 0);
	call(w, b, BRK_SUCCESS, 0);
	info(b, &in);
	assert_int_equal(in.window_calls, 1);
}

static void slow_rate(void **state)
{
	struct world *w = *state;
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
	b = breaker(w, "slow", &c);
	cursor = events_now(w);
	at_ms(w, 100);
	for (i = 0; i < 5; i++)
		call(w, b, BRK_SUCCESS, 10);
	call(w, b, BRK_SUCCESS, 99); /* just under: not slow */
	info(b, &in);
	assert_int_equal(in.window_calls, 6);
	assert_int_equal(in.window_slow, 0);
	/* slow calls: after k, slow k of 6 + k; 50% at k = 6 (12 >= 10) */
	for (i = 1; i <= 5; i++) {
		call(w, b, BRK_SUCCESS, 100);
		info(b, &in);
		assert_int_equal(in.state, BRK_CLOSED);
		assert_int_equal(in.window_slow, (uint64_t)i);
		assert_int_equal(in.window_calls, 6 + (uint64_t)i);
	}
	assert_int_equal(opens_since(w, &cursor, &reason), 0);
	call(w, b, BRK_SUCCESS, 150);
	info(b, &in);
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
	struct world *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	int i;

	brk_config_init(&c);
	c.slow_call_ms = 100;
	c.slow_rate_pct = 50;
	c.min_calls = 10;
	b = breaker(w, "slow/min", &c);
	for (i = 0; i < 9; i++)
		call(w, b, BRK_SUCCESS, 200);
	info(b, &in);
	assert_int_equal(in.window_slow, 9);
	assert_int_equal(in.state, BRK_CLOSED);
	call(w, b, BRK_SUCCESS, 200);
	info(b, &in);
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
	struct world *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	uint64_t cursor;
	int i, reason = 0;

	rate_cfg(&c);
	b = breaker(w, "rate/min", &c);
	cursor = events_now(w);
	for (i = 0; i < 19; i++)
		call(w, b, BRK_FAILURE, 1);
	info(b, &in);
	assert_int_equal(in.window_failures, 19);
	assert_int_equal(in.state, BRK_CLOSED); /* 100%, but 19 < min_calls */
	call(w, b, BRK_FAILURE, 1);
	info(b, &in);
	assert_int_equal(in.state, BRK_OPEN);
	assert_int_equal(opens_since(w, &cursor, &reason), 1);
	assert_int_equal(reason, BRK_EV_FAILURE_RATE);
	assert_string_equal(brk_event_reason_name(reason), "failure_rate");
}

static void failure_rate_at_pct(void **state)
{
	struct world *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	uint64_t cursor;
	int i, reason = 0;

	rate_cfg(&c);
	b = breaker(w, "rate/pct", &c);
	cursor = events_now(w);
	for (i = 0; i < 10; i++)
		call(w, b, BRK_SUCCESS, 1);
	for (i = 0; i < 9; i++)
		call(w, b, BRK_FAILURE, 1);
	info(b, &in);
	assert_int_equal(in.window_calls, 19);
	assert_int_equal(in.state, BRK_CLOSED);
	call(w, b, BRK_FAILURE, 1); /* 10 of 20: 50% */
	info(b, &in);
	assert_int_equal(in.state, BRK_OPEN);
	assert_int_equal(opens_since(w, &cursor, &reason), 1);
	assert_int_equal(reason, BRK_EV_FAILURE_RATE);
}

/* 9 of 20 (45%) stays closed; healthy errors count as calls. */
static void failure_rate_below(void **state)
{
	struct world *w = *state;
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	int i;

	rate_cfg(&c);
	b = breaker(w, "rate/below", &c);
	for (i = 0; i < 6; i++)
		call(w, b, BRK_SUCCESS, 1);
	for (i = 0; i < 5; i++)
		call(w, b, BRK_HEALTHY_ERROR, 1);
	for (i = 0; i < 9; i++)
		call(w, b, BRK_FAILURE, 1);
	info(b, &in);
	assert_int_equal(in.window_calls, 20);
	assert_int_equal(in.window_failures, 9);
	assert_int_equal(in.state, BRK_CLOSED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(window_drops_the_oldest_second_at_the_edge, setup, teardown),
		cmocka_unit_test_setup_teardown(window_edge_shifted_by_1ms_keeps_the_last_success, setup, teardown),
		cmocka_unit_test_setup_teardown(rotation_counts_the_call, setup, teardown),
		cmocka_unit_test_setup_teardown(slow_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(slow_rate_min_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(failure_rate_min_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(failure_rate_at_pct, setup, teardown),
		cmocka_unit_test_setup_teardown(failure_rate_below, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
