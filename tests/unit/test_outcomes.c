/*
 * test_outcomes.c - what each reported outcome does to the breaker, in
 * closed and half-open, and brk_call().
 *
 * ut_cfg(): failure_threshold 3, open_ms 1000, max_open_ms 8000,
 * half_open_probes 1, success_threshold 1, probe_timeout_ms 5000.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("outc", 0)

static brk_breaker *half_open_breaker(struct ut *u, const char *name,
				      struct brk_config *c)
{
	brk_breaker *b = ut_breaker(u, name, c);

	ut_fail_n(b, c->failure_threshold);
	assert_int_equal(ut_state(b), BRK_OPEN);
	ut_advance_ms(u, ut_open_remaining(b));
	return b;
}

/* An outcome that is none of the known ones is refused with -EINVAL and
 * still frees its lease: the next caller can get the probe. */
static void unknown_outcome_frees_probe(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i, before;
	brk_permit p;
	brk_breaker *b;
	const int bad[] = { 99, 0, -1, 7, 1000000 };

	ut_cfg(&c);
	b = half_open_breaker(u, "svc", &c);
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		ut_acquire_ok(b, &p);
		ut_info(b, &before);
		assert_int_equal(before.state, BRK_HALF_OPEN);
		assert_int_equal(before.probes_in_flight, 1);
		ut_rc(-EINVAL, brk_release(&p, bad[k], 0, 0));
		ut_info(b, &i);
		assert_int_equal(i.state, BRK_HALF_OPEN);
		assert_int_equal(i.probes_in_flight, 0);
		assert_int_equal(i.n_leases, 0);
		assert_int_equal(i.half_open_successes, 0);
		assert_int_equal(i.counters.successes, before.counters.successes);
		assert_int_equal(i.counters.failures, before.counters.failures);
		/* consumed: a second release is stale and changes nothing */
		ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0));
		assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	}
	/* and the probe slot is usable */
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* Same with a bulkhead permit in closed, and an unknown reason. */
static void unknown_outcome_or_reason_frees_permit(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 1;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_rc(-BRK_EFULL, ut_try(b));
	ut_rc(-EINVAL, brk_release(&p, 99, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);

	ut_acquire_ok(b, &p);
	ut_rc(-EINVAL, brk_release(&p, BRK_FAILURE, 42, 0));
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_FAILURE, 0, 0)); /* consumed */
	ut_acquire_ok(b, &p);
	ut_rc(-EINVAL, brk_release(&p, BRK_FAILURE, -1, 0));
	ut_acquire_ok(b, &p);
	ut_rc(-EINVAL, brk_release(&p, BRK_FAILURE, BRK_REASON_COUNT, 0));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
	assert_int_equal(i.counters.failures, 0);
	assert_int_equal(i.consecutive_failures, 0);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* A cancelled probe frees its lease without a verdict. */
static void cancelled_probe_no_verdict(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i, before;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = half_open_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_info(b, &before);
	ut_release_ok(&p, BRK_CANCELLED, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.half_open_successes, 0);
	assert_int_equal(i.cooling_level, 0);
	assert_int_equal(i.counters.successes, before.counters.successes);
	assert_int_equal(i.counters.failures, before.counters.failures);
	assert_int_equal(i.counters.cancelled, before.counters.cancelled + 1);
	assert_int_equal(i.counters.transitions, before.counters.transitions);
	ut_acquire_ok(b, &p); /* the next caller gets the probe */
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* Cancelled in closed: neither resets nor adds to the consecutive count. */
static void cancelled_in_closed_no_verdict(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 2);
	ut_call(b, BRK_CANCELLED, 0);
	ut_info(b, &i);
	assert_int_equal(i.consecutive_failures, 2);
	assert_int_equal(i.counters.cancelled, 1);
	ut_fail_n(b, 1);
	assert_int_equal(ut_state(b), BRK_OPEN);
}

/* healthy_error closes half-open and never counts as a failure. */
static void healthy_error_closes_half_open(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i, before;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = half_open_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_info(b, &before);
	ut_release_ok(&p, BRK_HEALTHY_ERROR, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.cooling_level, 0);
	assert_int_equal(i.counters.failures, before.counters.failures);
	assert_int_equal(i.counters.healthy_errors, 1);
	assert_int_equal(i.consecutive_failures, 0);
}

/* With success_threshold 3, healthy errors count toward closing. */
static void healthy_error_counts_as_probe_success(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.success_threshold = 3;
	b = half_open_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_HEALTHY_ERROR, 0);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.half_open_successes, 2);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_HEALTHY_ERROR, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* healthy_error in closed resets the consecutive count like a success. */
static void healthy_error_in_closed_resets_count(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 2);
	ut_call(b, BRK_HEALTHY_ERROR, 0);
	ut_info(b, &i);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(i.counters.failures, 2);
	assert_int_equal(i.counters.healthy_errors, 1);
	ut_fail_n(b, 2);
	assert_int_equal(ut_state(b), BRK_CLOSED);
	for (int k = 0; k < 100; k++)
		ut_call(b, BRK_HEALTHY_ERROR, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(i.counters.failures, 4);
}

/* rejected_request counts neither way, in closed and half-open. */
static void rejected_request_neither_way(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 2);
	for (int k = 0; k < 10; k++)
		ut_call(b, BRK_REJECTED_REQUEST, BRK_REASON_TIMEOUT);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 2);
	assert_int_equal(i.counters.ignored, 10);
	assert_int_equal(i.counters.failures, 2);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_TIMEOUT], 0);
	ut_fail_n(b, 1);
	assert_int_equal(ut_state(b), BRK_OPEN);

	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_REJECTED_REQUEST, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 0); /* lease freed */
	assert_int_equal(i.half_open_successes, 0);
	assert_int_equal(i.cooling_level, 0);
	assert_int_equal(i.counters.ignored, 11);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_FAILURE, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 2000);
}

/* Failure reasons are each counted; NONE counts as OTHER. */
static void failure_reasons_counted(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	c.failure_threshold = 1000;
	b = ut_breaker(u, "svc", &c);
	for (int r = BRK_REASON_NONE; r < BRK_REASON_COUNT; r++)
		for (int k = 0; k <= r; k++)
			ut_call(b, BRK_FAILURE, r);
	ut_info(b, &i);
	assert_int_equal(i.counters.failures, 1 + 2 + 3 + 4 + 5 + 6 + 7);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_NONE], 0);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_TIMEOUT], 2);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_CONNECT], 3);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_SERVER_ERROR], 4);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_OVERLOADED], 5);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_RATE_LIMITED], 6);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_OTHER], 7 + 1);
	assert_int_equal(i.consecutive_failures, 28);
}

/* After a breaker has closed once, the next half-open needs
 * success_threshold fresh successes again. */
static void success_threshold_never_carries_over(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.success_threshold = 3;
	b = half_open_breaker(u, "svc", &c);

	/* cycle 1: 2 successes, then a failed probe */
	for (int k = 0; k < 2; k++) {
		ut_acquire_ok(b, &p);
		ut_release_ok(&p, BRK_SUCCESS, 0);
	}
	ut_info(b, &i);
	assert_int_equal(i.half_open_successes, 2);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_FAILURE, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 2000);
	ut_advance_ms(u, 2000);

	/* cycle 2: needs 3 again, not 1 */
	for (int k = 0; k < 2; k++) {
		ut_acquire_ok(b, &p);
		ut_release_ok(&p, BRK_SUCCESS, 0);
		ut_info(b, &i);
		assert_int_equal(i.state, BRK_HALF_OPEN);
		assert_int_equal(i.half_open_successes, k + 1);
	}
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);

	/* Successes while closed do not count toward the next half-open. */
	for (int k = 0; k < 10; k++)
		ut_call(b, BRK_SUCCESS, 0);

	/* after a full close, trip again: half-open needs 3 */
	ut_fail_n(b, 3);
	ut_advance_ms(u, ut_open_remaining(b));
	for (int k = 0; k < 2; k++) {
		ut_acquire_ok(b, &p);
		ut_release_ok(&p, BRK_SUCCESS, 0);
		ut_info(b, &i);
		assert_int_equal(i.state, BRK_HALF_OPEN);
		assert_int_equal(i.half_open_successes, k + 1);
	}
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);

	/* and after brk_trip + brk_reset cycles too */
	ut_rc(0, brk_trip(b, 500));
	ut_advance_ms(u, 500);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.half_open_successes, 1);
}

/* Counters are exact after a scripted sequence. */
static void counters_exact(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p[3], q;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "svc", &c);

	ut_call(b, BRK_SUCCESS, 0);                     /* allowed 1 succ 1 */
	ut_call(b, BRK_HEALTHY_ERROR, 0);               /* allowed 2 he 1 */
	ut_call(b, BRK_REJECTED_REQUEST, 0);            /* allowed 3 ign 1 */
	ut_call(b, BRK_CANCELLED, 0);                   /* allowed 4 canc 1 */
	ut_acquire_ok(b, &p[0]);                        /* allowed 5 */
	ut_acquire_ok(b, &p[1]);                        /* allowed 6 */
	ut_rc(-BRK_EFULL, brk_acquire(b, &p[2], NULL)); /* full 1 */
	ut_rc(-BRK_EFULL, brk_acquire(b, &p[2], NULL)); /* full 2 */
	ut_release_ok(&p[0], BRK_FAILURE, BRK_REASON_TIMEOUT); /* fail 1 */
	ut_release_ok(&p[1], BRK_FAILURE, BRK_REASON_CONNECT); /* fail 2 */
	ut_acquire_ok(b, &p[0]);                        /* allowed 7 */
	ut_release_ok(&p[0], BRK_FAILURE, BRK_REASON_OVERLOADED); /* fail 3: open, tr 1 */
	ut_rc(-BRK_EOPEN, brk_acquire(b, &q, NULL));    /* open 1 */
	ut_rc(-BRK_EOPEN, brk_acquire(b, &q, NULL));    /* open 2 */
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &q);                           /* allowed 8 probe 1 tr 2 */
	ut_rc(-BRK_EOPEN, brk_acquire(b, &p[0], NULL)); /* open 3 */
	ut_release_ok(&q, BRK_FAILURE, BRK_REASON_NONE); /* fail 4 (other), tr 3 */
	ut_advance_ms(u, 2000);
	ut_acquire_ok(b, &q);                           /* allowed 9 probe 2 tr 4 */
	ut_release_ok(&q, BRK_SUCCESS, 0);              /* succ 2, tr 5 closed */
	ut_acquire_ok(b, &p[0]);                        /* allowed 10 */
	ut_rc(0, brk_release(&p[0], BRK_SUCCESS, 0, 5000)); /* succ 3, cool */
	ut_rc(-BRK_ECOOLING, brk_acquire(b, &q, NULL)); /* cooling 1 */
	ut_rc(-BRK_ECOOLING, brk_acquire(b, &q, NULL)); /* cooling 2 */
	ut_rc(-BRK_ECOOLING, brk_acquire(b, &q, NULL)); /* cooling 3 */
	ut_advance_ms(u, 5000);
	ut_acquire_ok(b, &p[0]);                        /* allowed 11 */
	ut_rc(0, brk_trip(b, 100));                     /* tr 6 */
	ut_rc(-BRK_ESTALE, brk_release(&p[0], BRK_FAILURE, 0, 0)); /* stale 1 */

	ut_info(b, &i);
	assert_int_equal(i.counters.allowed, 11);
	assert_int_equal(i.counters.rejected_open, 3);
	assert_int_equal(i.counters.rejected_cooling, 3);
	assert_int_equal(i.counters.rejected_full, 2);
	assert_int_equal(i.counters.successes, 3);
	assert_int_equal(i.counters.failures, 4);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_NONE], 0);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_TIMEOUT], 1);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_CONNECT], 1);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_SERVER_ERROR], 0);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_OVERLOADED], 1);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_RATE_LIMITED], 0);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_OTHER], 1);
	assert_int_equal(i.counters.healthy_errors, 1);
	assert_int_equal(i.counters.ignored, 1);
	assert_int_equal(i.counters.cancelled, 1);
	assert_int_equal(i.counters.probes, 2);
	assert_int_equal(i.counters.reclaimed, 0);
	assert_int_equal(i.counters.transitions, 6);
	assert_int_equal(i.counters.stale, 1);
	assert_int_equal(i.in_flight, 0);
}

/* ---- brk_call --------------------------------------------------------- */

struct call_ctx {
	int calls;
	int set_outcome;
	int set_reason;
	int64_t set_retry_after;
	int ret;
	int saw_nonzero_res;
};

static int call_fn(void *ctx, struct brk_result *res)
{
	struct call_ctx *x = ctx;

	x->calls++;
	if (res->outcome != 0 || res->reason != 0 || res->retry_after_ms != 0)
		x->saw_nonzero_res = 1;
	res->outcome = x->set_outcome;
	res->reason = x->set_reason;
	res->retry_after_ms = x->set_retry_after;
	return x->ret;
}

static int do_call(brk_breaker *b, struct call_ctx *x, int outcome, int reason,
		   int64_t retry_after, int ret, int *release_rc)
{
	struct brk_refusal why;

	x->set_outcome = outcome;
	x->set_reason = reason;
	x->set_retry_after = retry_after;
	x->ret = ret;
	*release_rc = 12345;
	memset(&why, 0, sizeof why);
	return brk_call(b, call_fn, x, &why, release_rc);
}

static void call_records_outcomes(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct call_ctx x;
	brk_breaker *b;
	int rrc;

	ut_cfg(&c);
	c.failure_threshold = 100;
	c.max_concurrent = 1;
	b = ut_breaker(u, "svc", &c);
	memset(&x, 0, sizeof x);

	/* outcome set explicitly, return passed through */
	assert_int_equal(do_call(b, &x, BRK_SUCCESS, 0, 0, 0, &rrc), 0);
	assert_int_equal(rrc, 0);
	assert_int_equal(do_call(b, &x, BRK_SUCCESS, 0, 0, 42, &rrc), 42);
	assert_int_equal(rrc, 0);
	assert_int_equal(do_call(b, &x, BRK_FAILURE, BRK_REASON_TIMEOUT, 0, 0, &rrc), 0);
	assert_int_equal(do_call(b, &x, BRK_HEALTHY_ERROR, 0, 0, -7, &rrc), -7);
	assert_int_equal(do_call(b, &x, BRK_REJECTED_REQUEST, 0, 0, 1, &rrc), 1);
	assert_int_equal(do_call(b, &x, BRK_CANCELLED, 0, 0, 1, &rrc), 1);
	/* no outcome: derived from the return */
	assert_int_equal(do_call(b, &x, 0, 0, 0, 0, &rrc), 0);
	assert_int_equal(rrc, 0);
	assert_int_equal(do_call(b, &x, 0, 0, 0, -5, &rrc), -5);
	assert_int_equal(rrc, 0);
	assert_int_equal(do_call(b, &x, 0, 0, 0, 3, &rrc), 3);
	/* unknown outcome: release says -EINVAL, lease freed */
	assert_int_equal(do_call(b, &x, 99, 0, 0, 0, &rrc), 0);
	assert_int_equal(rrc, -EINVAL);
	/* why and release_rc may be NULL */
	x.set_outcome = BRK_SUCCESS;
	assert_int_equal(brk_call(b, call_fn, &x, NULL, NULL), 0);

	assert_int_equal(x.calls, 11);
	assert_int_equal(x.saw_nonzero_res, 0); /* res zeroed before each call */
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
	assert_int_equal(i.counters.allowed, 11);
	assert_int_equal(i.counters.successes, 2 + 1 + 1);
	assert_int_equal(i.counters.failures, 1 + 2);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_TIMEOUT], 1);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_OTHER], 2);
	assert_int_equal(i.counters.healthy_errors, 1);
	assert_int_equal(i.counters.ignored, 1);
	assert_int_equal(i.counters.cancelled, 1);
}

/* A refusal returns without calling fn. */
static void call_refused_does_not_run_fn(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_refusal why;
	struct call_ctx x;
	brk_permit p;
	brk_breaker *b;
	int rrc = 12345;

	ut_cfg(&c);
	c.max_concurrent = 1;
	b = ut_breaker(u, "svc", &c);
	memset(&x, 0, sizeof x);
	x.set_outcome = BRK_SUCCESS;

	ut_acquire_ok(b, &p);
	memset(&why, 0, sizeof why);
	ut_rc(-BRK_EFULL, brk_call(b, call_fn, &x, &why, &rrc));
	assert_string_equal(why.by, "svc");
	ut_release_ok(&p, BRK_SUCCESS, 0);

	ut_rc(0, brk_trip(b, 1000));
	ut_rc(-BRK_EOPEN, brk_call(b, call_fn, &x, &why, &rrc));
	ut_rc(0, brk_reset(b));

	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_SUCCESS, 0, 2000));
	ut_rc(-BRK_ECOOLING, brk_call(b, call_fn, &x, &why, &rrc));
	assert_true(why.wait_ms >= 2000);
	assert_int_equal(x.calls, 0);
	ut_info(b, &i);
	assert_int_equal(i.counters.allowed, 2);
}

/* fn's Retry-After and failures reach the breaker. */
static void call_failure_opens_and_retry_after_cools(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct call_ctx x;
	brk_breaker *b;
	int rrc;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	memset(&x, 0, sizeof x);
	assert_int_equal(do_call(b, &x, BRK_FAILURE, BRK_REASON_RATE_LIMITED,
				 7000, -1, &rrc), -1);
	assert_int_equal(rrc, 0);
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 7000);
	ut_advance_ms(u, 7000);
	assert_int_equal(do_call(b, &x, 0, 0, 0, -1, &rrc), -1);
	assert_int_equal(do_call(b, &x, 0, 0, 0, -1, &rrc), -1);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	/* half-open: fn's success closes it */
	ut_advance_ms(u, 1000);
	assert_int_equal(do_call(b, &x, 0, 0, 0, 0, &rrc), 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(unknown_outcome_frees_probe),
		UT_TEST(unknown_outcome_or_reason_frees_permit),
		UT_TEST(cancelled_probe_no_verdict),
		UT_TEST(cancelled_in_closed_no_verdict),
		UT_TEST(healthy_error_closes_half_open),
		UT_TEST(healthy_error_counts_as_probe_success),
		UT_TEST(healthy_error_in_closed_resets_count),
		UT_TEST(rejected_request_neither_way),
		UT_TEST(failure_reasons_counted),
		UT_TEST(success_threshold_never_carries_over),
		UT_TEST(counters_exact),
		UT_TEST(call_records_outcomes),
		UT_TEST(call_refused_does_not_run_fn),
		UT_TEST(call_failure_opens_and_retry_after_cools),
	};
	return cmocka_run_group_tests_name("outcomes", tests, NULL, NULL);
}
