/*
 * test_modes.c - operator overrides (brk_set_mode, the BREAKERD_DISABLED
 * kill-switch) and the optional trip rules: slow-call rate and the
 * distinct-process quorum (breaker.h "min_distinct_processes").
 */
#include <sys/wait.h>

#include "fixture.h"

UT_GROUP_FIXTURES("modes", 0)

/* FORCED_OPEN refuses every call; -EALREADY when repeated; reset and
 * NORMAL give it back. */
static void forced_open_refuses_until_reset_or_normal(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_refusal why;
	brk_permit p;
	brk_breaker *b;
	uint64_t ev;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_rc(-EINVAL, brk_set_mode(b, 4));
	ut_rc(-EINVAL, brk_set_mode(b, -1));
	ut_rc(-EALREADY, brk_set_mode(b, BRK_MODE_NORMAL));
	ut_rc(0, brk_set_mode(b, BRK_MODE_FORCED_OPEN));
	ev = ut_events_written(u->seg);
	ut_rc(-EALREADY, brk_set_mode(b, BRK_MODE_FORCED_OPEN));
	assert_int_equal(ut_events_written(u->seg), ev);
	for (int k = 0; k < 3; k++) {
		memset(&why, 0, sizeof why);
		ut_rc(-BRK_EOPEN, brk_acquire(b, &p, &why));
		assert_string_equal(why.by, "svc");
	}
	ut_advance_ms(u, 3600000);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_info(b, &i);
	assert_int_equal(i.mode, BRK_MODE_FORCED_OPEN);
	assert_int_equal(i.counters.rejected_open, 4);
	ut_rc(0, brk_set_mode(b, BRK_MODE_NORMAL));
	ut_rc(0, ut_try(b));
	ut_rc(0, brk_set_mode(b, BRK_MODE_FORCED_OPEN));
	ut_rc(0, brk_reset(b));
	ut_info(b, &i);
	assert_int_equal(i.mode, BRK_MODE_NORMAL);
	ut_rc(0, ut_try(b));
	assert_string_equal(brk_mode_name(BRK_MODE_NORMAL), "normal");
	assert_string_equal(brk_mode_name(BRK_MODE_FORCED_OPEN), "forced_open");
	assert_string_equal(brk_mode_name(BRK_MODE_DISABLED), "disabled");
	assert_string_equal(brk_mode_name(BRK_MODE_METRICS_ONLY), "metrics_only");
}

/* DISABLED admits every call (even while open), counts outcomes, never
 * transitions. */
static void disabled_admits_and_never_transitions(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i, before;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_trip(b, 10000));
	ut_rc(0, brk_set_mode(b, BRK_MODE_DISABLED));
	ut_info(b, &before);
	for (int k = 0; k < 10; k++)
		ut_call(b, BRK_FAILURE, BRK_REASON_TIMEOUT);
	ut_info(b, &i);
	assert_int_equal(i.counters.failures, before.counters.failures + 10);
	assert_int_equal(i.counters.transitions, before.counters.transitions);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 10000);
	ut_rc(0, brk_set_mode(b, BRK_MODE_NORMAL));
	ut_rc(-BRK_EOPEN, ut_try(b));

	/* closed + disabled: failures never open it */
	ut_rc(0, brk_reset(b));
	ut_rc(0, brk_set_mode(b, BRK_MODE_DISABLED));
	ut_fail_n(b, 10);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* Issue 9, operator actions keep the invariants: disabling a breaker
 * (bctl disable) turns its trip rules off, not its bulkhead. A permit in
 * flight before the disable still counts, a call admitted while disabled
 * takes a permit, and max_concurrent is never exceeded. */
static void disabled_breaker_keeps_its_bulkhead(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit a, d, x;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "svc/bulk", &c);
	ut_acquire_ok(b, &a);                          /* before the disable */
	ut_rc(0, brk_set_mode(b, BRK_MODE_DISABLED));
	ut_acquire_ok(b, &d);                          /* while disabled */
	ut_rc(-BRK_EFULL, brk_acquire(b, &x, NULL));  /* 2 of 2 out */
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 2);
	ut_release_ok(&a, BRK_SUCCESS, BRK_REASON_NONE);
	ut_acquire_ok(b, &x);                          /* a's slot, freed */
	ut_release_ok(&d, BRK_FAILURE, BRK_REASON_TIMEOUT);
	ut_release_ok(&x, BRK_SUCCESS, BRK_REASON_NONE);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
	assert_int_equal(i.state, BRK_CLOSED);
}

/* METRICS_ONLY runs the state machine (it opens, events are recorded)
 * but never refuses. */
static void metrics_only_never_refuses(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 1;
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_set_mode(b, BRK_MODE_METRICS_ONLY));
	ut_fail_n(b, 3);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.counters.transitions, 1);
	for (int k = 0; k < 5; k++)
		ut_call(b, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN); /* results while open: no verdict */
	assert_int_equal(i.counters.allowed, 8);
	assert_int_equal(i.in_flight, 0);
}

/* BREAKERD_DISABLED=1 at attach: this handle admits everything. */
static void breakerd_disabled_env_admits_that_process_only(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;
	brk_segment *h;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_trip(b, 10000));
	setenv(BRK_DISABLED_ENV, "1", 1);
	h = ut_attach_other(u, NULL);
	unsetenv(BRK_DISABLED_ENV);
	ut_rc(0, ut_try(ut_breaker_on(h, "svc", NULL)));
	ut_rc(-BRK_EOPEN, ut_try(b));
	brk_detach(h);
	setenv(BRK_DISABLED_ENV, "0", 1);
	h = ut_attach_other(u, NULL);
	unsetenv(BRK_DISABLED_ENV);
	ut_rc(-BRK_EOPEN, ut_try(ut_breaker_on(h, "svc", NULL)));
	brk_detach(h);
}

/* Slow calls: at slow_rate_pct of min_calls or more, the breaker opens
 * (event SLOW_RATE), even though every call succeeded. */
static void slow_call_rate_opens(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_event ev[16];
	brk_permit p;
	brk_breaker *b;
	uint64_t cur;
	size_t n;
	int saw = 0;

	ut_cfg(&c);
	c.slow_call_ms = 100;
	c.slow_rate_pct = 50;
	c.min_calls = 4;
	c.window_ms = 10000;
	b = ut_breaker(u, "svc", &c);
	cur = ut_events_written(u->seg) + 1;
	for (int k = 0; k < 3; k++) {
		ut_acquire_ok(b, &p);
		ut_advance_ms(u, (k % 2) ? 10 : 150); /* slow, fast, slow */
		ut_release_ok(&p, BRK_SUCCESS, 0);
	}
	assert_int_equal(ut_state(b), BRK_CLOSED); /* 3 < min_calls */
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 101);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_OPEN); /* 3 of 4 slow */
	n = ut_events(u->seg, &cur, ev, 16, NULL);
	for (size_t k = 0; k < n; k++)
		saw |= ev[k].reason == BRK_EV_SLOW_RATE && ev[k].to == BRK_OPEN;
	assert_true(saw);
}

/* Fast calls never open it by the slow rule. */
static void fast_calls_stay_closed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.slow_call_ms = 100;
	c.slow_rate_pct = 50;
	c.min_calls = 4;
	b = ut_breaker(u, "svc", &c);
	for (int k = 0; k < 50; k++) {
		ut_acquire_ok(b, &p);
		ut_advance_ms(u, (k % 4) ? 99 : 150); /* one in four slow */
		ut_release_ok(&p, BRK_SUCCESS, 0);
	}
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* Quorum: failures of one process never open it; a second process's
 * failure in the window does. */
static void quorum_needs_distinct_processes(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	pid_t pid;
	int st = 0;

	ut_cfg(&c);
	c.min_distinct_processes = 2;
	c.window_ms = 10000;
	ut_rc(0, brk_config_validate(&c, NULL));
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 10);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.distinct_failing_processes, 1);

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		brk_permit p;
		if (brk_acquire(b, &p, NULL) != 0)
			_exit(1);
		if (brk_release(&p, BRK_FAILURE, BRK_REASON_CONNECT, 0) != 0)
			_exit(2);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	ut_info(b, &i);
	assert_int_equal(i.distinct_failing_processes, 2);
	if (i.state != BRK_OPEN)
		ut_fail_n(b, 1); /* the next failure sees the quorum */
	assert_int_equal(ut_state(b), BRK_OPEN);

	/* quorum bounds */
	c.min_distinct_processes = BRK_MAX_QUORUM;
	ut_rc(0, brk_config_validate(&c, NULL));
	c.min_distinct_processes = BRK_MAX_QUORUM + 1;
	ut_rc(-EINVAL, brk_config_validate(&c, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(forced_open_refuses_until_reset_or_normal),
		UT_TEST(disabled_admits_and_never_transitions),
		UT_TEST(disabled_breaker_keeps_its_bulkhead),
		UT_TEST(metrics_only_never_refuses),
		UT_TEST(breakerd_disabled_env_admits_that_process_only),
		UT_TEST(slow_call_rate_opens),
		UT_TEST(fast_calls_stay_closed),
		UT_TEST(quorum_needs_distinct_processes),
	};
	return cmocka_run_group_tests_name("modes", tests, NULL, NULL);
}
