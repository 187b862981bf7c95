/*
 * test_implicit.c - the implicit pace (issue 21; breaker.h "Implicit
 * pace"): with no configuration a breaker that receives rate-limit
 * answers gets a pace NAME:pace that learns the upstream's rate, and the
 * answers never open it on their own; implicit_pace = 0 turns it off.
 * Fake clock throughout.
 */
#include <math.h>

#include "fixture.h"

UT_GROUP_FIXTURES("implicit", 64)

static struct ut *world;

/* The defaults (implicit_pace on), max_wait 10 s so a longer Retry-After
 * opens. */
static brk_breaker *plain(struct ut *u, const char *name, int implicit)
{
	struct brk_config c;

	brk_config_init(&c);
	assert_int_equal(c.implicit_pace, 1); /* the default */
	c.max_wait_ms = 10000;
	c.implicit_pace = (uint32_t)implicit;
	world = u;
	return ut_breaker(u, name, &c);
}

/* Acquire (waiting out the implicit pace on the fake clock, as bctl exec
 * and brk_admit() do), then release a 429 with Retry-After @ra ms. */
static int release_429(brk_breaker *b, int64_t ra)
{
	brk_permit p;
	struct brk_refusal why;
	int rc, n = 0;

	while ((rc = brk_acquire(b, &p, &why)) == -BRK_ECOOLING &&
	       why.cause == BRK_CAUSE_PACED && n++ < 100)
		ut_advance_ms(world, why.wait_ms);
	if (rc)
		return rc;
	return brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, ra);
}

static struct brk_bucket_info pace_info(struct ut *u, const char *name)
{
	struct brk_bucket_info bi;
	brk_bucket *k;

	ut_rc(0, brk_bucket_find(u->seg, name, &k));
	ut_rc(0, brk_bucket_info(k, &bi));
	return bi;
}

/* Twenty 429s (more than failure_threshold 5): the first makes api:pace,
 * flagged implicit, growing from 1/s; every one is throttled, none a
 * failure; the breaker stays closed and sets no cool-until. */
static void rate_limit_answers_make_an_implicit_pace_and_never_open_it(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = plain(u, "api", 1);
	struct brk_bucket_info bi;
	struct brk_info i;
	brk_bucket *k;
	int n;

	ut_rc(-ENOENT, brk_bucket_find(u->seg, "api:pace", &k));
	ut_rc(0, release_429(b, 1000));
	{
		/* one event "pace_implicit" (not "pace_cut": breakerd's fleet
		 * link would publish that start rate as a cut) */
		struct brk_event ev[8];
		uint64_t cursor = 0;
		size_t m, j;
		int found = 0;

		m = ut_events(u->seg, &cursor, ev, 8, NULL);
		for (j = 0; j < m; j++) {
			assert_int_not_equal(ev[j].reason, BRK_EV_PACE_CUT);
			if (ev[j].reason == BRK_EV_PACE_IMPLICIT) {
				found++;
				assert_string_equal(ev[j].name, "api:pace");
				assert_int_equal(ev[j].value, 1940);
			}
		}
		assert_int_equal(found, 1);
		assert_string_equal(brk_event_reason_name(BRK_EV_PACE_IMPLICIT),
				    "pace_implicit");
	}
	bi = pace_info(u, "api:pace");
	assert_true(bi.paced);
	assert_int_equal(bi.implicit, 1);
	assert_int_equal(bi.cuts, 1);
	assert_true(fabs(bi.w_max_per_s - BRK_PACE_IMPLICIT_START) < 1e-3);
	assert_true(fabs(bi.ceiling_per_s - BRK_PACE_IMPLICIT_CEILING) < 1e-3);
	assert_true(fabs(bi.floor_per_s - BRK_PACE_IMPLICIT_FLOOR) < 1e-6);
	for (n = 1; n < 20; n++)
		ut_rc(0, release_429(b, 1000));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	assert_int_equal(i.counters.throttled, 20);
	assert_int_equal(i.counters.failures, 0);
	assert_true(i.implicit_pace_per_s > 0.0);
	assert_true(pace_info(u, "api:pace").limited >= 2);
}

/* The pace gates the breaker: with no token the closed breaker refuses
 * -BRK_ECOOLING, cause "paced", with the wait; after it, admitted. */
static void acquire_waits_for_the_implicit_pace(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = plain(u, "api", 1);
	struct brk_refusal why;
	brk_permit p;

	ut_rc(0, release_429(b, 0));
	/* started one interval (about 1 s at 1/s) from its first token */
	memset(&why, 0, sizeof(why));
	ut_rc(-BRK_ECOOLING, brk_acquire(b, &p, &why));
	assert_int_equal(why.cause, BRK_CAUSE_PACED);
	assert_string_equal(brk_cause_name(why.cause), "paced");
	assert_true(why.wait_ms >= 1);
	{
		/* the wait is at the rate now and the rate grows, so it can
		 * be early (a refused retry waits again): about 1 s in all */
		uint64_t t0 = ut_now_ns(u);
		int rc = -BRK_ECOOLING, n = 0;

		while (rc == -BRK_ECOOLING && n++ < 50) {
			assert_int_equal(why.cause, BRK_CAUSE_PACED);
			ut_advance_ms(u, why.wait_ms);
			rc = brk_acquire(b, &p, &why);
		}
		ut_rc(0, rc);
		assert_true(ut_now_ns(u) - t0 >= 500 * UT_NS_PER_MS);
		assert_true(ut_now_ns(u) - t0 <= 1500 * UT_NS_PER_MS);
	}
	ut_rc(0, brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0));
	/* the success was reported to the pace */
	assert_int_equal(pace_info(u, "api:pace").ok, 1);
}

/* The design's exception: a Retry-After beyond max_wait_ms still opens
 * the breaker for that long. */
static void a_retry_after_beyond_max_wait_still_opens(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = plain(u, "api", 1);
	struct brk_info i;

	ut_rc(0, release_429(b, 60000));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.counters.throttled, 1);
}

/* implicit_pace = 0: no pace is made, five 429s are five rate_limited
 * failures and open the breaker, as before issue 21. */
static void implicit_pace_off_keeps_rate_limits_failures(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = plain(u, "api", 0);
	struct brk_info i;
	brk_bucket *k;
	int n;

	for (n = 0; n < 5; n++)
		ut_rc(0, release_429(b, 0));
	ut_rc(-ENOENT, brk_bucket_find(u->seg, "api:pace", &k));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.counters.failures, 5);
	assert_int_equal(i.config.implicit_pace, 0);
}

/* Turned off later (brk_breaker_update): the existing pace is neither
 * taken from nor reported to; 429s are failures again. */
static void turning_it_off_later_stops_the_gate(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = plain(u, "api", 1);
	struct brk_config c;
	struct brk_refusal why;
	brk_permit p;

	ut_rc(0, release_429(b, 0));
	ut_rc(-BRK_ECOOLING, brk_acquire(b, &p, &why));
	brk_config_init(&c);
	c.implicit_pace = 0;
	ut_rc(0, brk_breaker_update(b, &c, BRK_CFG_IMPLICIT_PACE, NULL));
	ut_rc(0, brk_acquire(b, &p, &why));
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 0));
	assert_int_equal(pace_info(u, "api:pace").limited, 1);
	{
		struct brk_info i;

		ut_info(b, &i);
		assert_int_equal(i.counters.failures, 1);
	}
}

/* A 503 with a Retry-After is a rate-limit answer too; one without is an
 * overload failure and makes no pace. Other failures never do. */
static void only_rate_limit_answers_make_one(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = plain(u, "a", 1), *c = plain(u, "b", 1);
	brk_bucket *k;
	brk_permit p;

	ut_acquire_ok(c, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_OVERLOADED, 0));
	ut_acquire_ok(c, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_SERVER_ERROR, 0));
	ut_rc(-ENOENT, brk_bucket_find(u->seg, "b:pace", &k));
	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_OVERLOADED, 2000));
	ut_rc(0, brk_bucket_find(u->seg, "a:pace", &k));
}

/* An answer a declared pace already took (released throttled, as
 * brk_admit_release() and bctl exec --pace do) makes no implicit pace. */
static void a_declared_pace_gets_no_implicit_one(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = plain(u, "api", 1);
	brk_bucket *k;
	brk_permit p;

	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_THROTTLED, BRK_REASON_RATE_LIMITED, 1000));
	ut_rc(-ENOENT, brk_bucket_find(u->seg, "api:pace", &k));
}

/* A plain bucket already named api:pace: no pace to learn it, the answer
 * stays a failure (the operator's bucket is left alone). A breaker name
 * too long for the suffix: the same. */
static void no_pace_possible_leaves_the_answer_a_failure(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = plain(u, "api", 1);
	char longname[BRK_NAME_MAX + 1];
	struct brk_info i;
	brk_bucket *k;

	ut_rc(0, brk_bucket_get(u->seg, "api:pace", 10.0, 2, &k));
	ut_rc(0, release_429(b, 0));
	ut_info(b, &i);
	assert_int_equal(i.counters.failures, 1);
	memset(longname, 'x', BRK_NAME_MAX);
	longname[BRK_NAME_MAX] = '\0';
	b = plain(u, longname, 1);
	ut_rc(0, release_429(b, 0));
	ut_info(b, &i);
	assert_int_equal(i.counters.failures, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(rate_limit_answers_make_an_implicit_pace_and_never_open_it),
		UT_TEST(acquire_waits_for_the_implicit_pace),
		UT_TEST(a_retry_after_beyond_max_wait_still_opens),
		UT_TEST(implicit_pace_off_keeps_rate_limits_failures),
		UT_TEST(turning_it_off_later_stops_the_gate),
		UT_TEST(only_rate_limit_answers_make_one),
		UT_TEST(a_declared_pace_gets_no_implicit_one),
		UT_TEST(no_pace_possible_leaves_the_answer_a_failure),
	};
	return cmocka_run_group_tests_name("implicit", tests, NULL, NULL);
}
