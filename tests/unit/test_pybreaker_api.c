/*
 * test_pybreaker_api.c - the core calls pybreaker's API needs of a shared
 * breaker (issue 24): the failure streak that survives the trip,
 * brk_half_open(), brk_trip_restart(), brk_breaker_counts() and
 * brk_breaker_get_ex(). Each test is named after the behaviour it holds.
 * Fake clock, no sleep.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("pybapi", 0)

static struct brk_counts counts(brk_breaker *b)
{
	struct brk_counts c;

	memset(&c, 0xa5, sizeof c);
	ut_rc(0, brk_breaker_counts(b, &c));
	assert_int_equal(c.size, sizeof c);
	return c;
}

/* threshold 3: the streak is 3 while open (consecutive_failures, the
 * generation's count, is 0), stays 3 into half-open, 4 after the failed
 * probe, 0 after the probe that closes. */
static void failure_streak_survives_trip_and_counts_failed_probe(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "streak", &c);
	ut_fail_n(b, 2);
	ut_info(b, &i);
	assert_int_equal(i.failure_streak, 2);
	assert_int_equal(i.consecutive_failures, 2);
	ut_fail_n(b, 1);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.failure_streak, 3);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(counts(b).failure_streak, 3);
	ut_advance_ms(u, 1000);
	ut_call(b, BRK_FAILURE, BRK_REASON_SERVER_ERROR); /* the probe */
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.failure_streak, 4);
	ut_advance_ms(u, 2000);
	ut_call(b, BRK_SUCCESS, BRK_REASON_NONE);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.failure_streak, 0);
}

static void failure_streak_kept_by_trip_cleared_by_reset(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "streak/trip", &c);
	ut_fail_n(b, 2);
	ut_rc(0, brk_trip(b, 5000));
	assert_int_equal(counts(b).failure_streak, 2);
	assert_int_equal(counts(b).consecutive_failures, 0);
	ut_rc(0, brk_reset(b));
	assert_int_equal(counts(b).failure_streak, 0);
}

static void half_open_forced_from_closed_and_open(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_event ev[8];
	uint64_t cur = ut_events_written(u->seg) + 1;
	brk_breaker *b;
	brk_permit p;

	ut_cfg(&c);
	c.success_threshold = 2;
	b = ut_breaker(u, "ho", &c);
	ut_rc(0, brk_half_open(b));
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_rc(-EALREADY, brk_half_open(b));
	assert_int_equal(ut_events(u->seg, &cur, ev, 8, NULL), 1);
	assert_int_equal(ev[0].reason, BRK_EV_HALF_OPEN);
	assert_string_equal(brk_event_reason_name(ev[0].reason), "half_open");
	assert_int_equal(ev[0].from, BRK_CLOSED);
	assert_int_equal(ev[0].to, BRK_HALF_OPEN);
	/* probes at once, no wait */
	ut_call(b, BRK_SUCCESS, BRK_REASON_NONE);
	assert_int_equal(counts(b).half_open_successes, 1);
	ut_call(b, BRK_SUCCESS, BRK_REASON_NONE);
	assert_int_equal(ut_state(b), BRK_CLOSED);
	/* from open: the period is cut short */
	ut_rc(0, brk_trip(b, 60000));
	ut_rc(0, brk_half_open(b));
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_FAILURE, BRK_REASON_SERVER_ERROR);
	assert_int_equal(ut_state(b), BRK_OPEN);
	assert_int_equal(counts(b).failure_streak, 1);
}

static void trip_restart_restarts_an_open_period(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_open_ms = 60000; /* above the periods below: no cap (issue 22) */
	b = ut_breaker(u, "restart", &c);
	ut_rc(0, brk_trip(b, 10000));
	ut_advance_ms(u, 6000);
	ut_rc(-EALREADY, brk_trip(b, 10000)); /* brk_trip(): unchanged */
	assert_int_equal(ut_open_remaining(b), 4000);
	ut_rc(0, brk_trip_restart(b, 10000));
	assert_int_equal(ut_open_remaining(b), 10000);
	ut_rc(0, brk_trip_restart(b, 500)); /* shorter too */
	assert_int_equal(ut_open_remaining(b), 500);
	ut_rc(-EINVAL, brk_trip_restart(b, 0));
	ut_rc(-EINVAL, brk_trip_restart(NULL, 1));
	/* a restart is a cooling period like any other: capped at max_open */
	ut_rc(0, brk_trip_restart(b, 3600000));
	assert_int_equal(ut_open_remaining(b), 60000);
}

static void counts_match_the_snapshot(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_counts k;
	brk_breaker *b;
	unsigned char big[64];

	ut_cfg(&c);
	b = ut_breaker(u, "counts", &c);
	ut_fail_n(b, 1);
	k = counts(b);
	ut_info(b, &i);
	assert_int_equal(k.state, i.state);
	assert_int_equal((uint32_t)k.generation, i.generation);
	assert_int_equal(k.consecutive_failures, 1);
	assert_int_equal(k.mode, BRK_MODE_NORMAL);
	/* a caller built with a larger struct gets zeros past ours */
	memset(big, 0xa5, sizeof big);
	ut_rc(0, brk_breaker_counts_sz(b, (struct brk_counts *)(void *)big, sizeof big));
	for (size_t j = sizeof k; j < sizeof big; j++)
		assert_int_equal(big[j], 0);
	ut_rc(-EINVAL, brk_breaker_counts_sz(b, &k, 4));
	ut_rc(-EINVAL, brk_breaker_counts(NULL, &k));
}

static void get_ex_says_whether_it_created(void **state)
{
	struct ut *u = *state;
	brk_breaker *b1, *b2;
	int created = -1;

	ut_rc(0, brk_breaker_get_ex(u->seg, "made", NULL, &b1, &created));
	assert_int_equal(created, 1);
	ut_rc(0, brk_breaker_get_ex(u->seg, "made", NULL, &b2, &created));
	assert_int_equal(created, 0);
	assert_ptr_equal(b1, b2);
	/* another handle (another process's view) sees it existing */
	brk_segment *other = ut_attach_other(u, NULL);
	ut_rc(0, brk_breaker_get_ex(other, "made", NULL, &b2, &created));
	assert_int_equal(created, 0);
	ut_rc(-EINVAL, brk_breaker_get_ex(u->seg, "bad//name", NULL, &b2, &created));
	assert_int_equal(created, 0);
	brk_detach(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(failure_streak_survives_trip_and_counts_failed_probe),
		UT_TEST(failure_streak_kept_by_trip_cleared_by_reset),
		UT_TEST(half_open_forced_from_closed_and_open),
		UT_TEST(trip_restart_restarts_an_open_period),
		UT_TEST(counts_match_the_snapshot),
		UT_TEST(get_ex_says_whether_it_created),
	};
	return cmocka_run_group_tests_name("pybreaker_api", tests, NULL, NULL);
}
