/*
 * test_event_wait.c - brk_events_wait() (issue 24): a listener blocked on
 * the event ring is woken by another process's transition, by name; a
 * look without blocking; the waiter count; kicks; read-only refusal.
 * Fake clock for the breakers; the waits' timeouts are real but generous
 * and nothing asserts on time.
 */
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

UT_GROUP_FIXTURES("evwait", 0)

static void spin_until_waiters(brk_segment *seg, uint64_t n)
{
	for (long i = 0; i < 100000000L && brk_events_waiters(seg) != n; i++)
		sched_yield();
	assert_int_equal(brk_events_waiters(seg), n);
}

static void wait_looks_without_blocking_and_filters_by_name(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_event ev;
	uint64_t cur = ut_events_written(u->seg) + 1, start = cur, lost;
	brk_breaker *a, *ab, *abc;

	ut_cfg(&c);
	a = ut_breaker(u, "wait/a", &c);
	ab = ut_breaker(u, "wait/ab", &c);
	abc = ut_breaker(u, "wait/a/c", &c);
	ut_rc(0, brk_events_wait(u->seg, &cur, NULL, 0));
	assert_int_equal(cur, start);
	ut_rc(0, brk_trip(ab, 1000));
	ut_rc(0, brk_events_wait(u->seg, &cur, "wait/a", 0)); /* ab is not below a */
	assert_int_equal(cur, start + 1);                     /* looked past it */
	ut_rc(0, brk_trip(abc, 1000));
	ut_rc(1, brk_events_wait(u->seg, &cur, "wait/a", 0)); /* a/c is */
	assert_int_equal(cur, start + 1);
	assert_int_equal(brk_events_read(u->seg, &cur, &ev, 1, &lost), 1);
	assert_string_equal(ev.name, "wait/a/c");
	ut_rc(0, brk_trip(a, 1000));
	ut_rc(1, brk_events_wait(u->seg, &cur, NULL, 0));
	ut_rc(-EINVAL, brk_events_wait(u->seg, &cur, "bad//name", 0));
	ut_rc(-EINVAL, brk_events_wait(u->seg, &cur, NULL, -2));
	ut_rc(-EINVAL, brk_events_wait(NULL, &cur, NULL, 0));
	assert_int_equal(brk_events_waiters(u->seg), 0);
}

/* A child blocks (for up to 60 s: the test never waits that long unless
 * the wake is lost) on "xp/a"; an event of another name wakes it with 0,
 * the parent's trip of "xp/a" with 1. */
static void other_process_transition_wakes_a_blocked_waiter(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	uint64_t cur = ut_events_written(u->seg) + 1;
	brk_breaker *a, *b;
	int status, fd[2];
	char one;
	pid_t pid;

	ut_cfg(&c);
	a = ut_breaker(u, "xp/a", &c);
	b = ut_breaker(u, "xq/b", &c);
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc, woken_by_other = 0;
		struct brk_event ev;
		uint64_t lost;

		close(fd[0]);
		while ((rc = brk_events_wait(u->seg, &cur, "xp/a", 60000)) == 0) {
			woken_by_other++;
			if (write(fd[1], "w", 1) != 1)
				_exit(2);
		}
		if (rc != 1 || woken_by_other < 1 ||
		    brk_events_read(u->seg, &cur, &ev, 1, &lost) != 1 ||
		    strcmp(ev.name, "xp/a") != 0)
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	spin_until_waiters(u->seg, 1);
	ut_rc(0, brk_trip(b, 1000));   /* wakes it: no match, 0, waits again */
	assert_int_equal(read(fd[0], &one, 1), 1);
	spin_until_waiters(u->seg, 1);
	ut_rc(0, brk_trip(a, 1000));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(brk_events_waiters(u->seg), 0);
}

static void kick_wakes_a_waiter_with_nothing_new(void **state)
{
	struct ut *u = *state;
	uint64_t cur = ut_events_written(u->seg) + 1;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(brk_events_wait(u->seg, &cur, NULL, 60000) == 0 ? 0 : 1);
	spin_until_waiters(u->seg, 1);
	ut_rc(0, brk_events_kick(u->seg));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void read_only_attach_refuses_to_block(void **state)
{
	struct ut *u = *state;
	brk_segment *ro = ut_attach_as(u, NULL, NULL, BRK_ATTACH_READONLY);
	uint64_t cur = ut_events_written(u->seg) + 1;

	ut_rc(0, brk_events_wait(ro, &cur, NULL, 0));
	ut_rc(-EROFS, brk_events_wait(ro, &cur, NULL, 10));
	ut_rc(-EROFS, brk_events_kick(ro));
	brk_detach(ro);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(wait_looks_without_blocking_and_filters_by_name),
		UT_TEST(other_process_transition_wakes_a_blocked_waiter),
		UT_TEST(kick_wakes_a_waiter_with_nothing_new),
		UT_TEST(read_only_attach_refuses_to_block),
	};
	return cmocka_run_group_tests_name("event_wait", tests, NULL, NULL);
}
