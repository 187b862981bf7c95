/*
 * test_stale.c - stale permits (lease reclaimed, breaker reset, released
 * twice, copied into a fork()ed child) neither free another caller's
 * lease nor change state, and the caller is told (-BRK_ESTALE).
 *
 * ut_cfg(): failure_threshold 3, open_ms 1000, max_open_ms 8000,
 * half_open_probes 1, success_threshold 1, probe_timeout_ms 5000.
 */
#include <sys/wait.h>

#include "layout.h"
#include "fixture.h"

UT_GROUP_FIXTURES("stale", 0)

static brk_breaker *half_open_breaker(struct ut *u, const char *name,
				      struct brk_config *c)
{
	brk_breaker *b = ut_breaker(u, name, c);

	ut_fail_n(b, c->failure_threshold);
	ut_advance_ms(u, ut_open_remaining(b));
	return b;
}

/* Double release in closed: the second is reported and not counted. */
static void double_release_closed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_FAILURE, 0);
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_FAILURE, 0, 0));
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_FAILURE, 0, 0));
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.consecutive_failures, 1);
	assert_int_equal(i.counters.failures, 1);
	assert_int_equal(i.counters.successes, 0);
	assert_int_equal(i.state, BRK_CLOSED);
}

/* Double release of a probe does not free the next probe's slot. */
static void double_release_probe(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit a, bp;
	brk_breaker *b;

	ut_cfg(&c);
	c.success_threshold = 2;
	b = half_open_breaker(u, "svc", &c);
	ut_acquire_ok(b, &a);
	ut_release_ok(&a, BRK_SUCCESS, 0);
	ut_acquire_ok(b, &bp); /* same slot, new holder */
	ut_rc(-BRK_ESTALE, brk_release(&a, BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);
	assert_int_equal(i.half_open_successes, 1);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_rc(-BRK_ESTALE, brk_release(&a, BRK_FAILURE, 0, 0));
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_release_ok(&bp, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* A probe reclaimed after probe_timeout_ms: its late release neither
 * frees the next probe's lease nor changes state. */
static void reclaimed_probe_is_stale(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit a, bp;
	brk_breaker *b;

	ut_cfg(&c);
	b = half_open_breaker(u, "svc", &c);
	ut_acquire_ok(b, &a);
	ut_advance_ms(u, 5001);
	ut_rc(-BRK_EOPEN, ut_try(b)); /* reclaims a: failed probe, 2000 ms */
	ut_info(b, &i);
	assert_int_equal(i.counters.reclaimed, 1);
	assert_int_equal(i.state, BRK_OPEN);
	ut_advance_ms(u, i.open_remaining_ms);
	ut_acquire_ok(b, &bp);

	ut_rc(-BRK_ESTALE, brk_release(&a, BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);
	assert_int_equal(i.counters.stale, 1);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_rc(-BRK_ESTALE, brk_release(&a, BRK_FAILURE, 0, 0));
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_release_ok(&bp, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* Released after a reset: not counted, state unchanged. */
static void released_after_reset_is_stale(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p[3];
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	for (int k = 0; k < 3; k++)
		ut_acquire_ok(b, &p[k]);
	ut_call(b, BRK_FAILURE, 0);
	ut_rc(0, brk_reset(b));
	for (int k = 0; k < 3; k++)
		ut_rc(-BRK_ESTALE, brk_release(&p[k], BRK_FAILURE, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(i.counters.failures, 1);
	assert_int_equal(i.counters.stale, 3);
}

/* ---- fork ------------------------------------------------------------- */

enum {
	CHILD_OK = 0,
	CHILD_WRONG_RC = 10,
	CHILD_CHANGED = 20,
};

/*
 * Release @p (a copy of the parent's permit) in a forked child. The
 * child must get -BRK_ESTALE and leave in_flight / probes / consecutive
 * failures as they were. Returns the child's exit status.
 */
static int release_in_child(brk_breaker *b, brk_permit *p, int outcome)
{
	pid_t pid;
	int st = 0;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct brk_info before, after;
		int rc;

		brk_breaker_info(b, &before);
		rc = brk_release(p, outcome, BRK_REASON_CONNECT, 0);
		brk_breaker_info(b, &after);
		if (rc != -BRK_ESTALE) {
			fprintf(stderr, "child: brk_release = %d (%s)\n", rc,
				brk_strerror(rc));
			_exit(CHILD_WRONG_RC);
		}
		if (after.in_flight != before.in_flight ||
		    after.probes_in_flight != before.probes_in_flight ||
		    after.state != before.state ||
		    after.consecutive_failures != before.consecutive_failures ||
		    after.counters.failures != before.counters.failures ||
		    after.counters.successes != before.counters.successes)
			_exit(CHILD_CHANGED);
		_exit(CHILD_OK);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* A bulkhead permit copied into a fork()ed child and released there. */
static void fork_child_release_permit_is_stale(void **state)
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
	assert_int_equal(release_in_child(b, &p, BRK_SUCCESS), CHILD_OK);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 1);
	ut_rc(-BRK_EFULL, ut_try(b));
	ut_release_ok(&p, BRK_SUCCESS, 0); /* the parent's release works */
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
}

/* A probe copied into a child: the child cannot free or judge it. */
static void fork_child_release_probe_is_stale(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = half_open_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	assert_int_equal(release_in_child(b, &p, BRK_FAILURE), CHILD_OK);
	assert_int_equal(release_in_child(b, &p, BRK_SUCCESS), CHILD_OK);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* A closed-state permit (no lease at all) copied into a child. */
static void fork_child_release_plain_is_stale(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 2);
	ut_acquire_ok(b, &p);
	assert_int_equal(release_in_child(b, &p, BRK_FAILURE), CHILD_OK);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 2);
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* A forked child gets its own permits (its own token), and its release
 * works; the parent's leases are untouched. */
static void fork_child_own_permit_works(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;
	pid_t pid;
	int st = 0;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		brk_permit q, r;
		struct brk_info ci;
		if (brk_acquire(b, &q, NULL) != 0)
			_exit(1);
		if (brk_acquire(b, &r, NULL) != -BRK_EFULL)
			_exit(2);
		brk_breaker_info(b, &ci);
		if (ci.in_flight != 2)
			_exit(3);
		if (brk_release(&q, BRK_SUCCESS, 0, 0) != 0)
			_exit(4);
		brk_breaker_info(b, &ci);
		if (ci.in_flight != 1)
			_exit(5);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 1);
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* A permit whose brk_acquire() was refused was never admitted: releasing
 * it anyway (a caller that ignores the return code) must not count a
 * verdict nor free anything. */
static void release_after_refusal_not_counted(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i, before;
	brk_permit held, q;
	brk_breaker *b;
	int rc;

	ut_cfg(&c);
	c.max_concurrent = 1;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &held);
	ut_rc(-BRK_EFULL, brk_acquire(b, &q, NULL));
	ut_info(b, &before);
	rc = brk_release(&q, BRK_FAILURE, BRK_REASON_TIMEOUT, 0);
	if (rc == 0)
		fprintf(stderr, "release of a refused (EFULL) permit returned 0\n");
	assert_true(rc == -BRK_ESTALE || rc == -EINVAL);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 1);
	assert_int_equal(i.counters.failures, before.counters.failures);
	assert_int_equal(i.consecutive_failures, before.consecutive_failures);
	ut_release_ok(&held, BRK_SUCCESS, 0);

	/* refused for cooling */
	ut_acquire_ok(b, &held);
	ut_rc(0, brk_release(&held, BRK_SUCCESS, 0, 5000));
	ut_rc(-BRK_ECOOLING, brk_acquire(b, &q, NULL));
	ut_info(b, &before);
	rc = brk_release(&q, BRK_SUCCESS, 0, 0);
	assert_true(rc == -BRK_ESTALE || rc == -EINVAL);
	ut_info(b, &i);
	assert_int_equal(i.counters.successes, before.counters.successes);

	/* refused because open: must not close it */
	ut_advance_ms(u, 5000);
	ut_fail_n(b, 3);
	ut_rc(-BRK_EOPEN, brk_acquire(b, &q, NULL));
	rc = brk_release(&q, BRK_SUCCESS, 0, 0);
	assert_true(rc == -BRK_ESTALE || rc == -EINVAL);
	assert_int_equal(ut_state(b), BRK_OPEN);
}

/* docs/design/segment.md "Atomics": "a result from an older generation is not
 * counted". The
 * generation was 18 bits in the state word (layout 1; 56 since layout 2):
 * a permit held across exactly 2^18 transitions (131072 trip+reset pairs
 * here, a few minutes of a flapping breaker) must still be stale, not
 * mistaken for a current one. */
static void generation_wrap_permit_is_stale(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit old;
	brk_breaker *b;
	const unsigned pairs = 1u << 17; /* 2^18 transitions: the old wrap */

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &old);
	for (unsigned k = 0; k < pairs; k++) {
		if (brk_trip(b, 1000) != 0 || brk_reset(b) != 0)
			fail_msg("trip/reset %u failed", k);
	}
	ut_info(b, &i);
	assert_int_equal(i.counters.transitions, 2ULL * pairs);
	ut_rc(-BRK_ESTALE, brk_release(&old, BRK_FAILURE, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(i.counters.failures, 0);
}

/* Uninitialised or zeroed permits are refused, never dereferenced into
 * someone else's lease. */
static void zeroed_permit_rejected(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_permit p;
	int rc;

	ut_cfg(&c);
	c.max_concurrent = 1;
	(void)ut_breaker(u, "svc", &c);
	memset(&p, 0, sizeof p);
	rc = brk_release(&p, BRK_SUCCESS, 0, 0);
	assert_true(rc == -EINVAL || rc == -BRK_ESTALE);
	rc = brk_release(NULL, BRK_SUCCESS, 0, 0);
	assert_true(rc == -EINVAL || rc == -BRK_ESTALE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(double_release_closed),
		UT_TEST(double_release_probe),
		UT_TEST(reclaimed_probe_is_stale),
		UT_TEST(released_after_reset_is_stale),
		UT_TEST(fork_child_release_permit_is_stale),
		UT_TEST(fork_child_release_probe_is_stale),
		UT_TEST(fork_child_release_plain_is_stale),
		UT_TEST(fork_child_own_permit_works),
		UT_TEST(release_after_refusal_not_counted),
		UT_TEST(generation_wrap_permit_is_stale),
		UT_TEST(zeroed_permit_rejected),
	};
	return cmocka_run_group_tests_name("stale", tests, NULL, NULL);
}
