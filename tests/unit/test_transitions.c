/*
 * test_transitions.c - every state transition of docs/design/semantics.md
 * "Breaker semantics", on the fake clock.
 *
 * ut_cfg(): failure_threshold 3, open_ms 1000, max_open_ms 8000,
 * half_open_probes 1, success_threshold 1, probe_timeout_ms 5000.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("trans", 0)

/* Open @b by failures and move it to half-open-able (cooling passed). */
static void open_and_cool(struct ut *u, brk_breaker *b, unsigned threshold)
{
	ut_fail_n(b, threshold);
	assert_int_equal(ut_state(b), BRK_OPEN);
	ut_advance_ms(u, ut_open_remaining(b));
}

/* CLOSED -> OPEN at exactly failure_threshold consecutive failures. */
static void closed_to_open_at_threshold(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_refusal why;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(i.open_remaining_ms, 0);

	ut_fail_n(b, 2);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 2);
	assert_int_equal(i.counters.transitions, 0);

	ut_fail_n(b, 1);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 1000);
	assert_int_equal(i.counters.transitions, 1);
	assert_int_equal(i.counters.failures, 3);

	memset(&why, 0, sizeof why);
	ut_rc(-BRK_EOPEN, brk_acquire(b, &p, &why));
	assert_string_equal(why.by, "svc");
	/* "0 if unknown"; if known it is at least the time left. */
	assert_true(why.wait_ms == 0 || why.wait_ms >= 1000);
	ut_info(b, &i);
	assert_int_equal(i.counters.rejected_open, 1);
	assert_int_equal(i.counters.allowed, 3);
}

/* A success between failures resets the consecutive count. */
static void success_resets_consecutive(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 2);
	ut_call(b, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.consecutive_failures, 0);
	ut_fail_n(b, 2);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 2);
	ut_fail_n(b, 1);
	assert_int_equal(ut_state(b), BRK_OPEN);
}

/* OPEN -> HALF_OPEN lazily: the first acquire after the cooling period. */
static void open_to_half_open_lazily(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 999);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 1);

	ut_advance_ms(u, 1);
	ut_info(b, &i);
	assert_int_equal(i.open_remaining_ms, 0);
	assert_int_equal(i.counters.transitions, 1); /* nobody called yet */

	ut_acquire_ok(b, &p);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);
	assert_int_equal(i.counters.probes, 1);
	assert_int_equal(i.counters.transitions, 2);
	assert_int_equal(i.n_leases, 1);
	assert_int_equal(i.leases[0].kind, BRK_LEASE_PROBE);
	assert_int_equal(i.leases[0].pid, getpid());
	ut_advance_ms(u, 1500);
	ut_info(b, &i);
	assert_int_equal(i.leases[0].age_ms, 1500);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.n_leases, 0);
}

static void half_open_admits_n(struct ut *u, uint32_t probes)
{
	struct brk_config c;
	struct brk_info i;
	brk_permit p[BRK_MAX_PROBES + 1];
	struct brk_refusal why;
	brk_breaker *b;

	ut_cfg(&c);
	c.half_open_probes = probes;
	c.success_threshold = probes + 1; /* stay half-open while we look */
	b = ut_breaker(u, "svc", &c);
	open_and_cool(u, b, 3);

	for (uint32_t k = 0; k < probes; k++)
		ut_acquire_ok(b, &p[k]);
	for (int k = 0; k < 5; k++) {
		memset(&why, 0, sizeof why);
		ut_rc(-BRK_EOPEN, brk_acquire(b, &p[probes], &why));
		assert_string_equal(why.by, "svc");
	}
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, probes);
	assert_int_equal(i.counters.probes, probes);
	assert_int_equal(i.counters.rejected_open, 5);

	/* A finished probe frees its slot for the next caller. */
	ut_release_ok(&p[0], BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.half_open_successes, 1);
	assert_int_equal(i.probes_in_flight, probes - 1);
	ut_acquire_ok(b, &p[0]);
	ut_rc(-BRK_EOPEN, ut_try(b));
	for (uint32_t k = 0; k < probes; k++)
		ut_release_ok(&p[k], BRK_CANCELLED, 0);
	ut_info(b, &i);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.state, BRK_HALF_OPEN);
}

static void half_open_admits_exactly_one(void **state)
{
	half_open_admits_n(*state, 1);
}

static void half_open_admits_exactly_three(void **state)
{
	half_open_admits_n(*state, 3);
}

static void half_open_admits_exactly_eight(void **state)
{
	half_open_admits_n(*state, BRK_MAX_PROBES);
}

/* HALF_OPEN -> CLOSED after success_threshold successes; cooling level
 * reset: the next trip uses open_ms again. */
static void half_open_to_closed_resets_level(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.success_threshold = 2;
	b = ut_breaker(u, "svc", &c);
	open_and_cool(u, b, 3);
	/* one failed probe: level 1, 2000 ms */
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_FAILURE, BRK_REASON_TIMEOUT);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.cooling_level, 1);
	assert_int_equal(i.open_remaining_ms, 2000);
	ut_advance_ms(u, 2000);

	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.half_open_successes, 1);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.cooling_level, 0);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(i.half_open_successes, 0);

	ut_fail_n(b, 2);
	assert_int_equal(ut_state(b), BRK_CLOSED); /* fresh count */
	ut_fail_n(b, 1);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 1000);
}

/* HALF_OPEN -> OPEN on a failed probe, cooling doubled up to the cap. */
static void half_open_failure_doubles_capped(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;
	const uint64_t want[] = { 2000, 4000, 8000, 8000, 8000 };

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	open_and_cool(u, b, 3);
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		ut_acquire_ok(b, &p);
		assert_int_equal(ut_state(b), BRK_HALF_OPEN);
		ut_release_ok(&p, BRK_FAILURE, BRK_REASON_CONNECT);
		ut_info(b, &i);
		assert_int_equal(i.state, BRK_OPEN);
		assert_int_equal(i.open_remaining_ms, want[k]);
		assert_int_equal(i.cooling_level, k + 1);
		ut_advance_ms(u, want[k] - 1);
		ut_rc(-BRK_EOPEN, ut_try(b));
		ut_advance_ms(u, 1);
	}
}

/* A probe older than probe_timeout_ms is reclaimed by the next acquire
 * and counted as a failed probe (re-open, doubled cooling). */
static void probe_timeout_reclaimed_by_acquire(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p, q;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	open_and_cool(u, b, 3);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 4999);
	ut_rc(-BRK_EOPEN, ut_try(b)); /* not yet */
	ut_info(b, &i);
	assert_int_equal(i.probes_in_flight, 1);
	assert_int_equal(i.counters.reclaimed, 0);

	ut_advance_ms(u, 2);
	ut_rc(-BRK_EOPEN, brk_acquire(b, &q, NULL));
	ut_info(b, &i);
	assert_int_equal(i.counters.reclaimed, 1);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.cooling_level, 1);
	assert_int_equal(i.open_remaining_ms, 2000);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.n_leases, 0);

	/* The slow probe's late answer is not counted. */
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 2000);
	assert_int_equal(i.counters.stale, 1);

	/* The next cycle works normally. */
	ut_advance_ms(u, 2000);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* brk_reset from OPEN: closed, counts, level, cool-until cleared. */
static void reset_from_open(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	open_and_cool(u, b, 3);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_FAILURE, 0); /* level 1 */
	ut_info(b, &i);
	assert_int_equal(i.cooling_level, 1);

	ut_rc(0, brk_reset(b));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(i.cooling_level, 0);
	assert_int_equal(i.open_remaining_ms, 0);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.in_flight, 0);

	ut_fail_n(b, 2);
	assert_int_equal(ut_state(b), BRK_CLOSED);
	ut_fail_n(b, 1);
	assert_int_equal(ut_open_remaining(b), 1000); /* level was reset */
}

/* brk_reset clears a running cool-until. */
static void reset_clears_cool_until(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 60000));
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 60000);
	ut_rc(-BRK_ECOOLING, ut_try(b));
	ut_rc(0, brk_reset(b));
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	assert_int_equal(i.consecutive_failures, 0);
	ut_rc(0, ut_try(b));
}

/* brk_reset from HALF_OPEN frees the probe lease; the probe goes stale. */
static void reset_from_half_open(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.success_threshold = 2;
	b = ut_breaker(u, "svc", &c);
	open_and_cool(u, b, 3);
	ut_acquire_ok(b, &p);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);

	ut_rc(0, brk_reset(b));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.n_leases, 0);
	assert_int_equal(i.half_open_successes, 0);

	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_FAILURE, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 0);
	ut_rc(0, ut_try(b));
}

/* brk_trip from CLOSED: open for exactly the given time. */
static void trip_from_closed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_trip(b, 12345));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 12345);
	assert_int_equal(i.counters.transitions, 1);
	ut_advance_ms(u, 12344);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_advance_ms(u, 1);
	ut_rc(0, ut_try(b));
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
}

/* brk_trip from HALF_OPEN: open for the given time; the probe is stale. */
static void trip_from_half_open(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	open_and_cool(u, b, 3);
	ut_acquire_ok(b, &p);
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_rc(0, brk_trip(b, 5000));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 5000);
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 5000);
}

static void trip_zero_is_einval(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = ut_breaker(u, "svc", NULL);

	ut_rc(-EINVAL, brk_trip(b, 0));
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* Tripping an open breaker neither extends it nor records a transition. */
static void trip_already_open_is_ealready(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	uint64_t ev, tr;

	ut_cfg(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_trip(b, 10000));
	ut_advance_ms(u, 3000);
	ut_info(b, &i);
	tr = i.counters.transitions;
	ev = ut_events_written(u->seg);

	ut_rc(-EALREADY, brk_trip(b, 100000));
	ut_rc(-EALREADY, brk_trip(b, 1));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 7000);
	assert_int_equal(i.counters.transitions, tr);
	assert_int_equal(ut_events_written(u->seg), ev);

	/* Same for a breaker opened by failures. */
	b = ut_breaker(u, "svc2", &c);
	ut_fail_n(b, 3);
	ut_info(b, &i);
	tr = i.counters.transitions;
	ev = ut_events_written(u->seg);
	ut_rc(-EALREADY, brk_trip(b, 999999));
	ut_info(b, &i);
	assert_int_equal(i.open_remaining_ms, 1000);
	assert_int_equal(i.counters.transitions, tr);
	assert_int_equal(ut_events_written(u->seg), ev);
}

/* A late failure from a call admitted before the breaker opened neither
 * re-opens nor extends it. */
static void late_failure_is_stale(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p[5], q;
	brk_breaker *b;
	uint64_t ev;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	for (int k = 0; k < 5; k++)
		ut_acquire_ok(b, &p[k]);
	for (int k = 0; k < 3; k++)
		ut_release_ok(&p[k], BRK_FAILURE, BRK_REASON_TIMEOUT);
	ut_advance_ms(u, 400);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 600);
	assert_int_equal(i.counters.transitions, 1);
	ev = ut_events_written(u->seg);

	ut_rc(-BRK_ESTALE, brk_release(&p[3], BRK_FAILURE, BRK_REASON_TIMEOUT, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 600);
	assert_int_equal(i.cooling_level, 0);
	assert_int_equal(i.counters.transitions, 1);
	assert_int_equal(i.counters.failures, 3);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_TIMEOUT], 3);
	assert_int_equal(i.counters.stale, 1);
	assert_int_equal(ut_events_written(u->seg), ev);

	/* ...and once half-open, an old permit neither fails nor closes it,
	 * nor frees the real probe's slot. */
	ut_advance_ms(u, 600);
	ut_acquire_ok(b, &q);
	ut_rc(-BRK_ESTALE, brk_release(&p[4], BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);
	assert_int_equal(i.half_open_successes, 0);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_release_ok(&q, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* A permit admitted before brk_trip is stale afterwards. */
static void failure_after_trip_is_stale(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.failure_threshold = 1;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_rc(0, brk_trip(b, 3000));
	ut_advance_ms(u, 1000);
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_FAILURE, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.open_remaining_ms, 2000);
	assert_int_equal(i.cooling_level, 0);
	assert_int_equal(i.counters.transitions, 1);
	assert_int_equal(i.counters.failures, 0);
}

/* A permit from a previous closed cycle is stale in the next one. */
static void permit_from_previous_closed_cycle_is_stale(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit old, p;
	brk_breaker *b;

	ut_cfg(&c);
	c.failure_threshold = 2;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &old);
	ut_fail_n(b, 2);
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
	ut_call(b, BRK_FAILURE, 0);
	/* old's failure would be the second in a row: it must not count */
	ut_rc(-BRK_ESTALE, brk_release(&old, BRK_FAILURE, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 1);
}

/* Hierarchy: a/b/c is refused while a or a/b is open; failures of a/b/c
 * never open a. */
static void hierarchy_parent_open_refuses_child(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_refusal why;
	brk_permit p;
	brk_breaker *a, *ab, *abc;

	ut_cfg(&c);
	a = ut_breaker(u, "a", &c);
	ab = ut_breaker(u, "a/b", &c);
	abc = ut_breaker(u, "a/b/c", &c);

	ut_rc(0, brk_trip(a, 5000));
	memset(&why, 0, sizeof why);
	ut_rc(-BRK_EOPEN, brk_acquire(abc, &p, &why));
	assert_string_equal(why.by, "a");
	ut_rc(-BRK_EOPEN, brk_acquire(ab, &p, &why));
	assert_int_equal(ut_state(abc), BRK_CLOSED);
	ut_rc(0, brk_reset(a));
	ut_rc(0, ut_try(abc));

	ut_rc(0, brk_trip(ab, 5000));
	memset(&why, 0, sizeof why);
	ut_rc(-BRK_EOPEN, brk_acquire(abc, &p, &why));
	assert_string_equal(why.by, "a/b");
	ut_rc(0, ut_try(a));
	ut_rc(0, brk_reset(ab));

	ut_fail_n(abc, 3);
	assert_int_equal(ut_state(abc), BRK_OPEN);
	assert_int_equal(ut_state(ab), BRK_CLOSED);
	assert_int_equal(ut_state(a), BRK_CLOSED);
	ut_rc(0, ut_try(a));
	ut_rc(0, ut_try(ab));
}

/* Optional failure-rate rule: with min_calls seen, a failure rate at or
 * above failure_rate_pct opens the breaker even without a consecutive
 * run. All calls at one instant, so the window plays no part. */
static void failure_rate_opens(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	c.failure_threshold = 100;
	c.failure_rate_pct = 50;
	c.window_ms = 10000;
	c.min_calls = 10;
	b = ut_breaker(u, "svc", &c);
	for (int k = 0; k < 9; k++)
		ut_call(b, (k % 2) ? BRK_SUCCESS : BRK_FAILURE, 0);
	/* 9 calls, 5 failures: below min_calls */
	assert_int_equal(ut_state(b), BRK_CLOSED);
	ut_call(b, BRK_FAILURE, 0); /* 10 calls, 6 failures: 60% */
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 1000);
}

/* Below the rate, the breaker stays closed. */
static void failure_rate_below_stays_closed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;

	ut_cfg(&c);
	c.failure_threshold = 100;
	c.failure_rate_pct = 50;
	c.window_ms = 10000;
	c.min_calls = 10;
	b = ut_breaker(u, "svc", &c);
	for (int k = 0; k < 30; k++)
		ut_call(b, (k % 3) ? BRK_SUCCESS : BRK_FAILURE, 0); /* 33% */
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(closed_to_open_at_threshold),
		UT_TEST(success_resets_consecutive),
		UT_TEST(open_to_half_open_lazily),
		UT_TEST(half_open_admits_exactly_one),
		UT_TEST(half_open_admits_exactly_three),
		UT_TEST(half_open_admits_exactly_eight),
		UT_TEST(half_open_to_closed_resets_level),
		UT_TEST(half_open_failure_doubles_capped),
		UT_TEST(probe_timeout_reclaimed_by_acquire),
		UT_TEST(reset_from_open),
		UT_TEST(reset_clears_cool_until),
		UT_TEST(reset_from_half_open),
		UT_TEST(trip_from_closed),
		UT_TEST(trip_from_half_open),
		UT_TEST(trip_zero_is_einval),
		UT_TEST(trip_already_open_is_ealready),
		UT_TEST(late_failure_is_stale),
		UT_TEST(failure_after_trip_is_stale),
		UT_TEST(permit_from_previous_closed_cycle_is_stale),
		UT_TEST(hierarchy_parent_open_refuses_child),
		UT_TEST(failure_rate_opens),
		UT_TEST(failure_rate_below_stays_closed),
	};
	return cmocka_run_group_tests_name("transitions", tests, NULL, NULL);
}
