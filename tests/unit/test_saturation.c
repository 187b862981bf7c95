/*
 * test_saturation.c - every time addition saturates: a clock near
 * UINT64_MAX, durations at BRK_MAX_DURATION_MS, and the cooling doubling
 * over 10^6 failed probes.
 */
#include <time.h>

#include "fixture.h"

UT_GROUP_FIXTURES("sat", 0)

/* Cooling doubling stops at max_open_ms for any number of failed probes.
 * open_ms 1000, max_open_ms 64000: 2000, 4000, ... 64000, 64000, ... for
 * 10^6 failed probes (about 2 years of fake time, inside the 38-bit
 * open-until range of 8.7 years). */
static void doubling_capped_for_a_million_failed_probes(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;
	uint64_t want = 1000;
	const unsigned n = 1000000;
	struct timespec t0, t1;

	ut_cfg(&c);
	c.failure_threshold = 1;
	c.open_ms = 1000;
	c.max_open_ms = 64000;
	b = ut_breaker(u, "svc", &c);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ut_call(b, BRK_FAILURE, 0);
	ut_info(b, &i);
	assert_int_equal(i.open_remaining_ms, 1000);

	for (unsigned k = 1; k <= n; k++) {
		ut_advance_ms(u, want);
		if (brk_acquire(b, &p, NULL) != 0) {
			ut_info(b, &i);
			fprintf(stderr, "failed probe %u: acquire refused, state %d "
				"open_remaining %" PRIu64 "\n", k, i.state,
				i.open_remaining_ms);
			fail();
		}
		if (brk_release(&p, BRK_FAILURE, BRK_REASON_TIMEOUT, 0) != 0)
			fail_msg("failed probe %u: release refused", k);
		want = want * 2 > c.max_open_ms ? c.max_open_ms : want * 2;
		if (k <= 64 || k % 1024 == 0 || k == n) {
			ut_info(b, &i);
			if (i.state != BRK_OPEN || i.open_remaining_ms != want)
				fail_msg("failed probe %u: state %d open_remaining "
					 "%" PRIu64 " want %" PRIu64 " (level %u)",
					 k, i.state, i.open_remaining_ms, want,
					 i.cooling_level);
		}
	}
	ut_info(b, &i);
	assert_int_equal(i.open_remaining_ms, c.max_open_ms);
	assert_int_equal(i.counters.failures, n + 1);
	assert_int_equal(i.counters.probes, n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "10^6 failed probes: %.2f s\n",
		(double)(t1.tv_sec - t0.tv_sec) +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e9);

	/* and a success still closes it, with the level reset */
	ut_advance_ms(u, want);
	ut_call(b, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.cooling_level, 0);
	ut_call(b, BRK_FAILURE, 0);
	assert_int_equal(ut_open_remaining(b), 1000);
}

/* Doubling with a large open_ms and max_open_ms at BRK_MAX_DURATION_MS:
 * 2^30, 2^31, 2^32 ms (the fake time stays inside the 38-bit range). */
static void doubling_large_open_ms(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.failure_threshold = 1;
	c.open_ms = 1ULL << 30;
	c.max_open_ms = BRK_MAX_DURATION_MS;
	ut_rc(0, brk_config_validate(&c, NULL));
	b = ut_breaker(u, "svc", &c);
	ut_call(b, BRK_FAILURE, 0);
	assert_int_equal(ut_open_remaining(b), 1ULL << 30);
	ut_advance_ms(u, 1ULL << 30);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_FAILURE, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 1ULL << 31);
	ut_advance_ms(u, 1ULL << 31);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_FAILURE, 0);
	ut_info(b, &i);
	assert_int_equal(i.open_remaining_ms, 1ULL << 32);
}

/* open_ms = max_open_ms = BRK_MAX_DURATION_MS: opens for the maximum and
 * the doubling cannot overflow past it. */
static void open_ms_at_max_duration(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	c.open_ms = BRK_MAX_DURATION_MS;
	c.max_open_ms = BRK_MAX_DURATION_MS;
	ut_rc(0, brk_config_validate(&c, NULL));
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, BRK_MAX_DURATION_MS);
	ut_advance_ms(u, 100ULL * 24 * 3600 * 1000);
	ut_rc(-BRK_EOPEN, ut_try(b));
}

/* Half-way through the old 38-bit open-until range (layout 1 saturated
 * here), a trip for the maximum stays open for exactly the maximum: the
 * 45-bit deadline neither saturates nor wraps to the past. */
static void open_until_full_length_past_old_field(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	const uint64_t half = BRK_MAX_DURATION_MS / 2;

	ut_cfg(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "svc", &c);
	ut_advance_ms(u, half);
	ut_rc(0, brk_trip(b, BRK_MAX_DURATION_MS));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, BRK_MAX_DURATION_MS);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_advance_ms(u, 1000);
	ut_rc(-BRK_EOPEN, ut_try(b));
	assert_int_equal(ut_state(b), BRK_OPEN);
}

/* brk_trip with UINT64_MAX ms is clamped. */
static void trip_huge_clamped(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	brk_config_init(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "svc", &c);

	ut_rc(0, brk_trip(b, UINT64_MAX));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_true(i.open_remaining_ms <= BRK_MAX_DURATION_MS);
	assert_true(i.open_remaining_ms + 1 >= BRK_MAX_DURATION_MS);
	ut_advance_ms(u, 365ULL * 24 * 3600 * 1000);
	ut_rc(-BRK_EOPEN, ut_try(b));

	b = ut_breaker(u, "svc2", &c);
	ut_rc(0, brk_trip(b, BRK_MAX_DURATION_MS + 12345));
	ut_info(b, &i);
	assert_true(i.open_remaining_ms <= BRK_MAX_DURATION_MS);
}

/* ---- a clock near UINT64_MAX ------------------------------------------ */

#define NEAR_END_NS (UINT64_MAX - 5000ULL * UT_NS_PER_MS) /* 5 s before */

static int end_setup(void **state)
{
	*state = ut_new("satend", 16, NEAR_END_NS);
	return 0;
}

static int end7_setup(void **state)
{
	*state = ut_new("satend", 16, NEAR_END_NS - 2000 * UT_NS_PER_MS);
	return 0;
}

/* A segment created with the clock 5 s from UINT64_MAX: a trip for an
 * hour stays open until the clock's end (no wrap to the past). */
static void clock_near_end_trip(void **state)
{
	struct ut *u = *state;
	struct brk_info i;
	brk_breaker *b;

	b = ut_breaker(u, "svc", NULL);
	ut_rc(0, brk_trip(b, 3600000));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_true(i.open_remaining_ms >= 4999);
	assert_true(i.open_remaining_ms <= 3600000);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_clock_set(&u->clk, UINT64_MAX - 1);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_clock_set(&u->clk, UINT64_MAX);
	ut_rc(-BRK_EOPEN, ut_try(b));
	assert_int_equal(ut_state(b), BRK_OPEN);
}

/* Failures near the end of the clock open the breaker; it stays open. */
static void clock_near_end_threshold(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;

	ut_cfg(&c);
	c.open_ms = 60000;
	c.max_open_ms = 60000;
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	assert_int_equal(ut_state(b), BRK_OPEN);
	ut_clock_set(&u->clk, UINT64_MAX - 1);
	ut_rc(-BRK_EOPEN, ut_try(b));
}

/* A cool-until that would pass UINT64_MAX ns saturates: callers are still
 * refused at the very end of the clock, with a wait >= what is left. */
static void clock_near_end_cool_until(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_refusal why;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 100000));
	ut_info(b, &i);
	assert_true(i.cool_until_remaining_ms >= 4999);
	assert_true(i.cool_until_remaining_ms <= 100000);
	memset(&why, 0, sizeof why);
	ut_rc(-BRK_ECOOLING, brk_acquire(b, &p, &why));
	assert_true(why.wait_ms >= i.cool_until_remaining_ms);
	ut_clock_set(&u->clk, UINT64_MAX - 1);
	ut_rc(-BRK_ECOOLING, ut_try(b));
}

/* A probe taken near the end of the clock is not "older than
 * probe_timeout_ms" because claim + timeout overflowed. */
static void clock_near_end_probe_not_reclaimed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.open_ms = 1000;
	c.probe_timeout_ms = 30000;
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);
	ut_clock_set(&u->clk, UINT64_MAX - 1);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_info(b, &i);
	assert_int_equal(i.counters.reclaimed, 0);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* A huge Retry-After near the end of the clock. */
static void clock_near_end_huge_retry_after(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, INT64_MAX));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	ut_clock_set(&u->clk, UINT64_MAX);
	ut_rc(-BRK_EOPEN, ut_try(b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(doubling_capped_for_a_million_failed_probes),
		UT_TEST(doubling_large_open_ms),
		UT_TEST(open_ms_at_max_duration),
		UT_TEST(open_until_full_length_past_old_field),
		UT_TEST(trip_huge_clamped),
		cmocka_unit_test_setup_teardown(clock_near_end_trip, end_setup,
						ut_teardown),
		cmocka_unit_test_setup_teardown(clock_near_end_threshold,
						end_setup, ut_teardown),
		cmocka_unit_test_setup_teardown(clock_near_end_cool_until,
						end_setup, ut_teardown),
		cmocka_unit_test_setup_teardown(clock_near_end_probe_not_reclaimed,
						end7_setup, ut_teardown),
		cmocka_unit_test_setup_teardown(clock_near_end_huge_retry_after,
						end_setup, ut_teardown),
	};
	return cmocka_run_group_tests_name("saturation", tests, NULL, NULL);
}
