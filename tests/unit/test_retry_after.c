/*
 * test_retry_after.c - a Retry-After cools every process (shared
 * cool-until, jittered waits) up to max_wait_ms, and opens the breaker
 * beyond it; absurd values are clamped, never overflowed.
 *
 * ut_cfg(): failure_threshold 3, open_ms 1000, max_open_ms 8000 (ra_cfg():
 * BRK_MAX_DURATION_MS),
 * max_wait_ms 300000 (300 s).
 */
#include "fixture.h"

UT_GROUP_FIXTURES("ra", 0)

/*
 * Every cooling period is capped at max_open_ms (issue 22; the tests at
 * the end). The tests before them are about max_wait_ms, the shared
 * cool-until, jitter and overflow, with periods up to BRK_MAX_DURATION_MS:
 * their breakers allow the longest open period, so the cap is not what
 * they see.
 */
static void ra_cfg(struct brk_config *c)
{
	ut_cfg(c);
	c->max_open_ms = BRK_MAX_DURATION_MS;
}

/*
 * Jitter bound. breaker.h promises only "the jittered wait" ("with
 * per-caller jitter"); docs/design/semantics.md "Breaker semantics" bounds
 * it. The test holds the library to: never below the time left (a caller must
 * not come back early into a cooling upstream), never above the time left +
 * 25% (+1 ms of rounding).
 */
#define UT_JITTER_MAX_PCT 25u

static uint64_t jitter_max(uint64_t remaining)
{
	return remaining + remaining * UT_JITTER_MAX_PCT / 100 + 1;
}

static void release_with_retry_after(brk_breaker *b, int outcome, int reason,
				     int64_t ra)
{
	brk_permit p;
	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, outcome, reason, ra));
}

/* Retry-After 3600 s with max_wait 300 s opens for 3600 s and tells
 * nobody to wait that long. */
static void above_max_wait_opens(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_refusal why;
	brk_permit p;
	brk_breaker *b;
	struct brk_event ev[16];
	uint64_t cur = 1;
	size_t n;

	ra_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 3600000);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 3600000);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	assert_int_equal(i.counters.transitions, 1);

	memset(&why, 0, sizeof why);
	ut_rc(-BRK_EOPEN, brk_acquire(b, &p, &why));
	assert_string_equal(why.by, "svc");

	n = ut_events(u->seg, &cur, ev, 16, NULL);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].reason, BRK_EV_RETRY_AFTER);
	assert_int_equal(ev[0].from, BRK_CLOSED);
	assert_int_equal(ev[0].to, BRK_OPEN);
	assert_int_equal(ev[0].value, 3600000);

	ut_advance_ms(u, 3599999);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_info(b, &i);
	assert_int_equal(i.open_remaining_ms, 1);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	ut_advance_ms(u, 1);
	ut_acquire_ok(b, &p);
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* Any outcome may carry it: a success or healthy error too. */
static void above_max_wait_opens_from_any_outcome(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ra_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	release_with_retry_after(b, BRK_HEALTHY_ERROR, 0, 400000);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 400000);
	assert_int_equal(i.cool_until_remaining_ms, 0);
}

/* The boundary: exactly max_wait is waited out; max_wait + 1 opens. */
static void max_wait_boundary(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b1, *b2;

	ra_cfg(&c);
	b1 = ut_breaker(u, "svc1", &c);
	b2 = ut_breaker(u, "svc2", &c);
	release_with_retry_after(b1, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 300000);
	ut_info(b1, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.cool_until_remaining_ms, 300000);
	assert_int_equal(i.open_remaining_ms, 0);
	release_with_retry_after(b2, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 300001);
	ut_info(b2, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 300001);
	assert_int_equal(i.cool_until_remaining_ms, 0);
}

/* Retry-After <= max_wait: every process is told to wait, with jitter,
 * and admitted once the deadline passed. */
static void cool_until_shared_by_every_handle(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_refusal why;
	struct ut_rand r2 = { 0xfeedULL };
	brk_segment *other;
	brk_breaker *b, *b2;
	brk_permit p;

	ra_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	other = ut_attach_other(u, &r2);
	b2 = ut_breaker_on(other, "svc", NULL);

	release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 5000);
	ut_info(b2, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.cool_until_remaining_ms, 5000);
	assert_int_equal(i.consecutive_failures, 1);

	for (int k = 0; k < 2; k++) {
		brk_breaker *x = k ? b2 : b;
		memset(&why, 0, sizeof why);
		ut_rc(-BRK_ECOOLING, brk_acquire(x, &p, &why));
		assert_string_equal(why.by, "svc");
		assert_true(why.wait_ms >= 5000);
		assert_true(why.wait_ms <= jitter_max(5000));
	}
	ut_advance_ms(u, 2000);
	for (int k = 0; k < 2; k++) {
		brk_breaker *x = k ? b2 : b;
		memset(&why, 0, sizeof why);
		ut_rc(-BRK_ECOOLING, brk_acquire(x, &p, &why));
		assert_true(why.wait_ms >= 3000);
		assert_true(why.wait_ms <= jitter_max(3000));
	}
	ut_advance_ms(u, 2999);
	ut_rc(-BRK_ECOOLING, ut_try(b2));
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 1);
	assert_int_equal(i.counters.rejected_cooling, 5);
	ut_advance_ms(u, 1);
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	ut_rc(0, ut_try(b2));
	ut_rc(0, ut_try(b));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.counters.transitions, 0);
	brk_detach(other);
}

/* Different random sources give different waits, each within bounds;
 * the same seed gives the same wait (the jitter is the random source's). */
static void jitter_varies_per_caller(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_refusal why;
	brk_breaker *b;
	brk_permit p;
	uint64_t waits[64];
	unsigned distinct = 0;

	ra_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 100000);
	ut_advance_ms(u, 20000); /* 80000 left */
	for (int k = 0; k < 64; k++) {
		__atomic_store_n(&u->rnd.state, 1000003ULL * (uint64_t)(k + 1),
				 __ATOMIC_RELAXED);
		memset(&why, 0, sizeof why);
		ut_rc(-BRK_ECOOLING, brk_acquire(b, &p, &why));
		waits[k] = why.wait_ms;
		if (why.wait_ms < 80000 || why.wait_ms > jitter_max(80000))
			fprintf(stderr, "seed %d: wait %" PRIu64 " ms, 80000 left\n",
				k, why.wait_ms);
		assert_true(why.wait_ms >= 80000);
		assert_true(why.wait_ms <= jitter_max(80000));
	}
	for (int k = 0; k < 64; k++) {
		int seen = 0;
		for (int j = 0; j < k; j++)
			seen |= waits[j] == waits[k];
		distinct += !seen;
	}
	fprintf(stderr, "jitter: %u distinct waits of 64 (80000 ms left)\n",
		distinct);
	assert_true(distinct >= 16);

	/* determinism: replaying seed 5 gives wait 5 again */
	__atomic_store_n(&u->rnd.state, 1000003ULL * 5, __ATOMIC_RELAXED);
	ut_rc(-BRK_ECOOLING, brk_acquire(b, &p, &why));
	assert_int_equal(why.wait_ms, waits[4]);
}

static uint64_t const_random(void *ctx)
{
	return *(const uint64_t *)ctx;
}

/* The extremes of the random source: the wait stays inside the bounds
 * (a random source returning 0 or all ones must not step outside them). */
static void jitter_extremes_in_bounds(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_attach_opts o;
	struct brk_refusal why;
	brk_segment *h;
	brk_breaker *b;
	brk_permit p;
	const uint64_t values[] = { 0, 1, UINT64_MAX, UINT64_MAX - 1,
				    1ULL << 63, 0x5555555555555555ULL };
	const uint64_t left[] = { 1, 3, 4, 999, 1000, 20000, 80000, 300000 };
	uint64_t v = 0;

	ra_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_opts(u, &o, 0);
	o.flags = BRK_ATTACH_NOCREATE;
	o.random = const_random;
	o.random_ctx = &v;
	ut_rc(0, brk_attach(&o, &h));
	for (size_t j = 0; j < sizeof left / sizeof left[0]; j++) {
		ut_rc(0, brk_reset(b));
		release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED,
					 (int64_t)left[j]);
		for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
			v = values[k];
			memset(&why, 0, sizeof why);
			ut_rc(-BRK_ECOOLING,
			      brk_acquire(ut_breaker_on(h, "svc", NULL), &p, &why));
			if (why.wait_ms < left[j] || why.wait_ms > jitter_max(left[j]))
				fprintf(stderr, "random %#" PRIx64 ", %" PRIu64
					" ms left: wait %" PRIu64 "\n", values[k],
					left[j], why.wait_ms);
			assert_true(why.wait_ms >= left[j]);
			assert_true(why.wait_ms <= jitter_max(left[j]));
		}
	}
	brk_detach(h);
}

/* Waits from other processes (handles with their own seeds) differ too. */
static void jitter_varies_across_handles(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_refusal why;
	struct ut_rand r[8];
	brk_segment *h[8];
	brk_breaker *b;
	brk_permit p;
	uint64_t w[8];
	int same = 1;

	ra_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	release_with_retry_after(b, BRK_FAILURE, BRK_REASON_OVERLOADED, 60000);
	for (int k = 0; k < 8; k++) {
		r[k].state = 0xabcdef01ULL * (uint64_t)(k + 3);
		h[k] = ut_attach_other(u, &r[k]);
		memset(&why, 0, sizeof why);
		ut_rc(-BRK_ECOOLING,
		      brk_acquire(ut_breaker_on(h[k], "svc", NULL), &p, &why));
		w[k] = why.wait_ms;
		assert_true(w[k] >= 60000 && w[k] <= jitter_max(60000));
		if (k && w[k] != w[0])
			same = 0;
	}
	assert_false(same);
	for (int k = 0; k < 8; k++)
		brk_detach(h[k]);
}

/* A longer Retry-After extends the cool-until; a shorter one never
 * shortens it. */
static void cool_until_never_shortened(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ra_cfg(&c);
	c.failure_threshold = 100;
	b = ut_breaker(u, "svc", &c);
	release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 10000);
	ut_advance_ms(u, 10000);
	release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 10000);
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 10000);
	/* the two calls below were admitted before the cool-until began */
	{
		brk_permit p1, p2;
		ut_advance_ms(u, 10000);
		ut_acquire_ok(b, &p1);
		ut_acquire_ok(b, &p2);
		ut_rc(0, brk_release(&p1, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 20000));
		ut_rc(0, brk_release(&p2, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 2000));
	}
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 20000);
}

/* INT64_MAX (2^63 - 1 ms) is clamped to BRK_MAX_DURATION_MS: open for
 * about 8.7 years, not wrapped into the past. */
static void huge_retry_after_clamped(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	const int64_t huge[] = { INT64_MAX, INT64_MAX / 1000, (int64_t)1 << 62,
				 (int64_t)1 << 44, (int64_t)BRK_MAX_DURATION_MS + 1,
				 (int64_t)BRK_MAX_DURATION_MS };
	char name[32];

	ra_cfg(&c);
	for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++) {
		snprintf(name, sizeof name, "svc%zu", k);
		b = ut_breaker(u, name, &c);
		release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED,
					 huge[k]);
		ut_info(b, &i);
		if (i.state != BRK_OPEN || i.open_remaining_ms + 1000 < BRK_MAX_DURATION_MS)
			fprintf(stderr, "retry_after %" PRId64 ": state %d, "
				"open_remaining_ms %" PRIu64 "\n", huge[k],
				i.state, i.open_remaining_ms);
		assert_int_equal(i.state, BRK_OPEN);
		/* the clock is 0 ms into the segment's epoch plus what this
		 * loop advanced: the saturated deadline leaves at least
		 * MAX - elapsed */
		assert_true(i.open_remaining_ms <= BRK_MAX_DURATION_MS);
		assert_true(i.open_remaining_ms + 1000 >= BRK_MAX_DURATION_MS);
		assert_int_equal(i.cool_until_remaining_ms, 0);
		ut_rc(-BRK_EOPEN, ut_try(b));
		ut_advance_ms(u, 100);
	}
	/* a year later, still open */
	ut_advance_ms(u, 365ULL * 24 * 3600 * 1000);
	ut_rc(-BRK_EOPEN, ut_try(b));
	assert_int_equal(ut_state(b), BRK_OPEN);
}

/* With max_wait_ms at the maximum, a huge Retry-After is a cool-until
 * clamped to BRK_MAX_DURATION_MS (not a wrap to the past). */
static void huge_retry_after_cool_until_clamped(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_refusal why;
	brk_permit p;
	brk_breaker *b;

	ra_cfg(&c);
	c.max_wait_ms = BRK_MAX_DURATION_MS;
	b = ut_breaker(u, "svc", &c);
	release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED, INT64_MAX);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_true(i.cool_until_remaining_ms <= BRK_MAX_DURATION_MS);
	assert_true(i.cool_until_remaining_ms + 1000 >= BRK_MAX_DURATION_MS);
	memset(&why, 0, sizeof why);
	ut_rc(-BRK_ECOOLING, brk_acquire(b, &p, &why));
	assert_true(why.wait_ms >= i.cool_until_remaining_ms);
	ut_advance_ms(u, 365ULL * 24 * 3600 * 1000);
	ut_rc(-BRK_ECOOLING, ut_try(b));
}

/* Negative and zero Retry-After values are ignored. */
static void negative_retry_after_ignored(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	const int64_t neg[] = { 0, -1, -1000, INT64_MIN, INT64_MIN + 1 };

	ra_cfg(&c);
	c.failure_threshold = 100;
	b = ut_breaker(u, "svc", &c);
	for (size_t k = 0; k < sizeof neg / sizeof neg[0]; k++) {
		release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED,
					 neg[k]);
		release_with_retry_after(b, BRK_SUCCESS, 0, neg[k]);
		ut_info(b, &i);
		assert_int_equal(i.state, BRK_CLOSED);
		assert_int_equal(i.cool_until_remaining_ms, 0);
		assert_int_equal(i.open_remaining_ms, 0);
		ut_rc(0, ut_try(b));
	}
	ut_info(b, &i);
	assert_int_equal(i.counters.transitions, 0);
	assert_int_equal(i.counters.rejected_cooling, 0);
}

/* A Retry-After on a stale permit is still a fact about the upstream: it
 * is applied, but only as a cool-until (no re-open, no extension). */
static void stale_permit_retry_after_only_cools(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p, q;
	brk_breaker *b;

	ra_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_acquire_ok(b, &q);
	ut_rc(0, brk_trip(b, 3000));
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 5000));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 3000);
	assert_int_equal(i.cool_until_remaining_ms, 5000);
	assert_int_equal(i.counters.transitions, 1);

	/* above max_wait from a stale permit: never (re)opens or extends */
	ut_rc(0, brk_reset(b));
	ut_rc(-BRK_ESTALE, brk_release(&q, BRK_FAILURE, BRK_REASON_RATE_LIMITED,
				       3600000));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.counters.transitions, 2);
	assert_int_equal(i.open_remaining_ms, 0);
}

/*
 * Issue 22: every cooling period, whatever its source, is capped at the
 * record's max_open_ms (8000 here): one output line with a Retry-After of
 * 10^12 s, a year-9999 HTTP-date or "try again in 10^12 seconds" used to
 * open the breaker for BRK_MAX_DURATION_MS (8.7 years).
 */
static void expect_open_capped(struct ut *u, const char *name,
			       const char *header, const char *text)
{
	struct brk_config c;
	struct brk_result res;
	struct brk_info i;
	struct brk_event ev[16];
	uint64_t cur = 1;
	brk_breaker *b;
	size_t n, k;
	/* 2026-12-05 00:00:00 UTC: the date is 7,973 years ahead */
	const int64_t now_unix_ms = 1796428800000LL;

	ut_cfg(&c);
	b = ut_breaker(u, name, &c);
	ut_rc(0, brk_http_classify(429, header, text, text ? strlen(text) : 0,
				   now_unix_ms, &res));
	assert_int_equal(res.outcome, BRK_FAILURE);
	assert_true((uint64_t)res.retry_after_ms > c.max_open_ms);
	release_with_retry_after(b, res.outcome, res.reason, res.retry_after_ms);
	ut_info(b, &i);
	if (i.open_remaining_ms > c.max_open_ms)
		fprintf(stderr, "%s: open_remaining_ms %" PRIu64 " > max_open_ms %"
			PRIu64 "\n", name, i.open_remaining_ms, c.max_open_ms);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, c.max_open_ms);
	/* the event (what the fleet link publishes, and the PX of its
	 * catch-up key) says the capped period too */
	n = ut_events(u->seg, &cur, ev, 16, NULL);
	for (k = 0; k < n; k++)
		if (ev[k].reason == BRK_EV_RETRY_AFTER)
			break;
	assert_true(k < n);
	assert_int_equal(ev[k].value, c.max_open_ms);
	/* and a probe runs when max_open_ms is over */
	ut_advance_ms(u, c.max_open_ms);
	ut_rc(0, ut_try(b));
}

static void retry_after_trillion_seconds_capped_at_max_open(void **state)
{
	expect_open_capped(*state, "secs", "1000000000000", NULL);
}

static void retry_after_year_9999_date_capped_at_max_open(void **state)
{
	expect_open_capped(*state, "date", "Fri, 31 Dec 9999 23:59:59 GMT", NULL);
}

static void try_again_text_capped_at_max_open(void **state)
{
	expect_open_capped(*state, "text", NULL,
			   "error: try again in 1000000000000 seconds\n");
}

/* A cooling below max_wait_ms is capped too (max_wait_ms may be set above
 * max_open_ms), and so are trip --for, a fleet peer's open (trip_extend)
 * and its cool_until (brk_cool_for). */
static void every_cooling_source_capped_at_max_open(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	const uint64_t trillion_s = 1000000000000ULL * 1000;

	ut_cfg(&c);
	c.max_wait_ms = BRK_MAX_DURATION_MS;
	b = ut_breaker(u, "cool", &c);
	release_with_retry_after(b, BRK_FAILURE, BRK_REASON_RATE_LIMITED,
				 (int64_t)trillion_s);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.cool_until_remaining_ms, c.max_open_ms);

	b = ut_breaker(u, "trip", &c);
	ut_rc(0, brk_trip(b, trillion_s));
	ut_info(b, &i);
	assert_int_equal(i.open_remaining_ms, c.max_open_ms);

	b = ut_breaker(u, "extend", &c);
	ut_rc(0, brk_trip_extend(b, trillion_s));
	ut_info(b, &i);
	assert_int_equal(i.open_remaining_ms, c.max_open_ms);
	/* already open as long as the cap allows: nothing more to do */
	ut_rc(-EALREADY, brk_trip_extend(b, trillion_s));

	b = ut_breaker(u, "peer_cool", &c);
	ut_rc(0, brk_cool_for(b, trillion_s));
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, c.max_open_ms);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(above_max_wait_opens),
		UT_TEST(above_max_wait_opens_from_any_outcome),
		UT_TEST(max_wait_boundary),
		UT_TEST(cool_until_shared_by_every_handle),
		UT_TEST(jitter_varies_per_caller),
		UT_TEST(jitter_extremes_in_bounds),
		UT_TEST(jitter_varies_across_handles),
		UT_TEST(cool_until_never_shortened),
		UT_TEST(huge_retry_after_clamped),
		UT_TEST(huge_retry_after_cool_until_clamped),
		UT_TEST(negative_retry_after_ignored),
		UT_TEST(stale_permit_retry_after_only_cools),
		UT_TEST(retry_after_trillion_seconds_capped_at_max_open),
		UT_TEST(retry_after_year_9999_date_capped_at_max_open),
		UT_TEST(try_again_text_capped_at_max_open),
		UT_TEST(every_cooling_source_capped_at_max_open),
	};
	return cmocka_run_group_tests_name("retry_after", tests, NULL, NULL);
}
