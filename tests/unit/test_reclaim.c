/*
 * test_reclaim.c - brk_reclaim (the supervisor's scan) and brk_heartbeat:
 * leases of dead owners and expired probes are freed, a reclaimed probe
 * re-opens the breaker with the doubled cooling, each reclaim is an event.
 */
#include <signal.h>
#include <sys/wait.h>

#include "fixture.h"

UT_GROUP_FIXTURES("recl", 0)

/* Fork a child that acquires @n permits of @b (or a probe) and dies
 * without releasing them. Returns its pid (reaped). */
static pid_t child_dies_holding(brk_breaker *b, int n)
{
	pid_t pid;
	int st = 0;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (int k = 0; k < n; k++) {
			brk_permit p;
			if (brk_acquire(b, &p, NULL) != 0)
				_exit(10 + k);
		}
		_exit(0); /* leaks the leases */
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	return pid;
}

static void dead_owner_permits_reclaimed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_reclaim_stats st;
	struct brk_event ev[16];
	brk_permit mine;
	brk_breaker *b;
	uint64_t cur;
	pid_t dead;
	size_t n;
	int saw = 0;

	ut_cfg(&c);
	c.max_concurrent = 3;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &mine);
	dead = child_dies_holding(b, 2);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 3);
	cur = ut_events_written(u->seg) + 1;

	memset(&st, 0xff, sizeof st);
	ut_rc(0, brk_reclaim(u->seg, &st));
	assert_int_equal(st.dead_owner, 2);
	assert_int_equal(st.expired_probe, 0);
	assert_int_equal(st.reopened, 0);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 1); /* mine is alive: kept */
	assert_int_equal(i.counters.reclaimed, 2);
	assert_int_equal(i.n_leases, 1);
	assert_int_equal(i.leases[0].pid, getpid());

	n = ut_events(u->seg, &cur, ev, 16, NULL);
	for (size_t k = 0; k < n; k++)
		if (ev[k].reason == BRK_EV_RECLAIM_DEAD) {
			saw++;
			assert_int_equal(ev[k].pid, dead);
			assert_string_equal(ev[k].name, "svc");
		}
	assert_int_equal(saw, 2);

	/* a second scan finds nothing */
	ut_rc(0, brk_reclaim(u->seg, &st));
	assert_int_equal(st.dead_owner, 0);
	ut_release_ok(&mine, BRK_SUCCESS, 0);
}

/* A dead probe owner: the probe is a failed probe, re-open doubled. */
static void dead_owner_probe_reopens(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_reclaim_stats st;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 1000);
	(void)child_dies_holding(b, 1);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);

	ut_rc(0, brk_reclaim(u->seg, &st));
	assert_int_equal(st.dead_owner, 1);
	assert_int_equal(st.reopened, 1);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 2000);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.counters.reclaimed, 1);
	ut_advance_ms(u, 2000);
	ut_call(b, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* An expired probe (owner alive) is reclaimed by the scan. */
static void expired_probe_reclaimed_by_scan(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_reclaim_stats st;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 4999);
	ut_rc(0, brk_reclaim(u->seg, &st));
	assert_int_equal(st.expired_probe, 0);
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_advance_ms(u, 2);
	ut_rc(0, brk_reclaim(u->seg, &st));
	assert_int_equal(st.expired_probe, 1);
	assert_int_equal(st.reopened, 1);
	assert_int_equal(st.dead_owner, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.open_remaining_ms, 2000);
	assert_int_equal(i.counters.reclaimed, 1);
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0));
	assert_int_equal(ut_state(b), BRK_OPEN);
}

/* Bulkhead permits do not expire by age (only probes do): a long call
 * with a live owner keeps its permit. */
static void live_permit_not_reclaimed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_reclaim_stats st;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 1;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 3600000);
	ut_rc(0, brk_reclaim(u->seg, &st));
	assert_int_equal(st.dead_owner + st.expired_probe, 0);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 1);
	assert_int_equal(i.leases[0].age_ms, 3600000);
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* Workers never depend on breakerd: a caller refused by a full bulkhead
 * frees the permits of dead holders itself and is admitted. */
static void caller_reclaims_dead_permits(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "svc", &c);
	(void)child_dies_holding(b, 2);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 2);
	ut_acquire_ok(b, &p); /* reclaimed by this very call */
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 1);
	assert_int_equal(i.counters.reclaimed, 2);
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* ... and a caller refused in half-open frees a dead owner's probe (a
 * failed probe: the breaker re-opens with the cooling doubled). */
static void caller_reclaims_dead_probe(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 1000);
	(void)child_dies_holding(b, 1);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.counters.reclaimed, 1);
	assert_int_equal(i.cooling_level, 1);
}

/* A probe keeps its slot until its verdict is counted: while a success
 * with success_threshold 2 is being recorded nobody else gets a probe,
 * and a probe that outlived probe_timeout_ms unnoticed is not counted
 * when it finally reports (it failed, by definition). */
static void late_probe_counts_as_failed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 5001); /* past probe_timeout_ms, nobody looked */
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.cooling_level, 1);
	assert_int_equal(i.counters.reclaimed, 1);
	assert_int_equal(i.counters.successes, 0);
}

static void heartbeat_published(void **state)
{
	struct ut *u = *state;
	struct brk_segment_info si;

	ut_rc(0, brk_segment_info(u->seg, &si));
	assert_int_equal(si.daemon_pid, 0);
	assert_int_equal(si.heartbeat_age_ms, UINT64_MAX);
	assert_string_equal(si.shm_name, u->shm);
	assert_int_equal(si.capacity, 64);
	assert_int_equal(si.readonly, 0);
	assert_int_equal(si.creator_pid, getpid());

	ut_rc(0, brk_heartbeat(u->seg, 100));
	ut_advance_ms(u, 250);
	ut_rc(0, brk_segment_info(u->seg, &si));
	assert_int_equal(si.daemon_pid, getpid());
	assert_int_equal(si.daemon_interval_ms, 100);
	assert_int_equal(si.heartbeat_age_ms, 250);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(dead_owner_permits_reclaimed),
		UT_TEST(dead_owner_probe_reopens),
		UT_TEST(expired_probe_reclaimed_by_scan),
		UT_TEST(live_permit_not_reclaimed),
		UT_TEST(caller_reclaims_dead_permits),
		UT_TEST(caller_reclaims_dead_probe),
		UT_TEST(late_probe_counts_as_failed),
		UT_TEST(heartbeat_published),
	};
	return cmocka_run_group_tests_name("reclaim", tests, NULL, NULL);
}
