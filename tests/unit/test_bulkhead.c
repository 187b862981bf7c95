/*
 * test_bulkhead.c - max_concurrent permits: N admitted, N+1th refused at
 * once with -BRK_EFULL, release frees one, double release is a reported
 * no-op, reset frees them all.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("bulk", 0)

static void bulkhead_n(struct ut *u, uint32_t n)
{
	struct brk_config c;
	struct brk_info i;
	struct brk_refusal why;
	brk_permit p[BRK_MAX_CONCURRENT + 1], extra;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = n;
	b = ut_breaker(u, "svc", &c);
	for (uint32_t k = 0; k < n; k++)
		ut_acquire_ok(b, &p[k]);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, n);
	assert_int_equal(i.n_leases, n);
	for (uint32_t k = 0; k < i.n_leases; k++) {
		assert_int_equal(i.leases[k].kind, BRK_LEASE_PERMIT);
		assert_int_equal(i.leases[k].pid, getpid());
	}

	memset(&why, 0, sizeof why);
	ut_rc(-BRK_EFULL, brk_acquire(b, &extra, &why));
	assert_string_equal(why.by, "svc");
	ut_info(b, &i);
	assert_int_equal(i.counters.rejected_full, 1);
	assert_int_equal(i.counters.allowed, n);
	assert_int_equal(i.in_flight, n);

	/* release frees exactly one */
	ut_release_ok(&p[0], BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, n - 1);
	ut_acquire_ok(b, &p[0]);
	ut_rc(-BRK_EFULL, ut_try(b));

	/* double release: reported, frees nothing else */
	ut_release_ok(&p[n - 1], BRK_SUCCESS, 0);
	ut_acquire_ok(b, &extra); /* may take the slot p[n-1] had */
	ut_rc(-BRK_ESTALE, brk_release(&p[n - 1], BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, n);
	assert_int_equal(i.counters.successes, 2);
	ut_rc(-BRK_EFULL, ut_try(b));
	ut_release_ok(&extra, BRK_SUCCESS, 0);
	ut_acquire_ok(b, &p[n - 1]);

	/* a reset frees no permit: the ones out still count (issue 9); their
	 * late releases are stale and free their own slots */
	ut_rc(0, brk_reset(b));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, n);
	assert_int_equal(i.n_leases, n);
	ut_rc(-BRK_EFULL, ut_try(b));
	for (uint32_t k = 0; k < n; k++) {
		ut_rc(-BRK_ESTALE, brk_release(&p[k], BRK_SUCCESS, 0, 0));
		ut_acquire_ok(b, &p[k]);
	}
	/* p[] now hold new permits; acquire one more to see it is full */
	ut_rc(-BRK_EFULL, ut_try(b));
	for (uint32_t k = 0; k < n; k++)
		ut_release_ok(&p[k], BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
}

static void bulkhead_of_one_admits_exactly_one(void **state) { bulkhead_n(*state, 1); }
static void bulkhead_of_three_admits_exactly_three(void **state) { bulkhead_n(*state, 3); }
static void bulkhead_of_max_concurrent_admits_exactly_that_many(void **state) { bulkhead_n(*state, BRK_MAX_CONCURRENT); }

/* Permits from before a reset still count; their stale releases free
 * their own slots and never the new holders' leases. */
static void reset_then_old_release_frees_nothing(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit old[2], p[2];
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &old[0]);
	ut_acquire_ok(b, &old[1]);
	ut_rc(0, brk_reset(b));
	ut_rc(-BRK_EFULL, ut_try(b));
	ut_rc(-BRK_ESTALE, brk_release(&old[0], BRK_SUCCESS, 0, 0));
	ut_acquire_ok(b, &p[0]);
	ut_rc(-BRK_ESTALE, brk_release(&old[1], BRK_FAILURE, 0, 0));
	ut_acquire_ok(b, &p[1]);
	ut_rc(-BRK_ESTALE, brk_release(&old[0], BRK_SUCCESS, 0, 0));
	ut_rc(-BRK_ESTALE, brk_release(&old[1], BRK_FAILURE, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 2);
	assert_int_equal(i.consecutive_failures, 0);
	ut_rc(-BRK_EFULL, ut_try(b));
	ut_release_ok(&p[0], BRK_SUCCESS, 0);
	ut_release_ok(&p[1], BRK_SUCCESS, 0);
}

/* Every outcome frees the permit: cancelled, rejected_request, unknown. */
static void every_outcome_frees_permit(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;
	const int outcomes[] = { BRK_SUCCESS, BRK_FAILURE, BRK_HEALTHY_ERROR,
				 BRK_REJECTED_REQUEST, BRK_CANCELLED };

	ut_cfg(&c);
	c.max_concurrent = 1;
	c.failure_threshold = 100;
	b = ut_breaker(u, "svc", &c);
	for (size_t k = 0; k < sizeof outcomes / sizeof outcomes[0]; k++) {
		ut_acquire_ok(b, &p);
		ut_rc(-BRK_EFULL, ut_try(b));
		ut_release_ok(&p, outcomes[k], BRK_REASON_CONNECT);
		ut_info(b, &i);
		assert_int_equal(i.in_flight, 0);
	}
	ut_acquire_ok(b, &p);
	ut_rc(-EINVAL, brk_release(&p, 77, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
}

/* A refused acquire (open) takes no permit. */
static void refusal_takes_no_permit(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_trip(b, 1000));
	for (int k = 0; k < 10; k++)
		ut_rc(-BRK_EOPEN, ut_try(b));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
	assert_int_equal(i.counters.rejected_full, 0);
	assert_int_equal(i.counters.rejected_open, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(bulkhead_of_one_admits_exactly_one),
		UT_TEST(bulkhead_of_three_admits_exactly_three),
		UT_TEST(bulkhead_of_max_concurrent_admits_exactly_that_many),
		UT_TEST(reset_then_old_release_frees_nothing),
		UT_TEST(every_outcome_frees_permit),
		UT_TEST(refusal_takes_no_permit),
	};
	return cmocka_run_group_tests_name("bulkhead", tests, NULL, NULL);
}
