/*
 * it_hierarchy.c - "a/b/c" is refused while "a" or "a/b" is open, across
 * processes; failures of "a/b/c" never open "a" or "a/b".
 *
 *  1. Worker C (its own process) gets "a/b/c" while neither "a" nor "a/b"
 *     exists, and is admitted.
 *  2. Process A creates "a" and opens it with failures (threshold 3).
 *  3. C's acquire on "a/b/c" is refused: -BRK_EOPEN, why.by == "a", with a
 *     wait: the ancestor created after C's handle is honoured (the library
 *     looks again when the segment's record count changes).
 *  4. "a" reset, "a/b" created (another process). C is admitted; then
 *     reaches a/b/c's threshold with failures: "a/b/c" opens, "a" and
 *     "a/b" stay closed with no failure counted; processes using "a" and
 *     "a/b" are still admitted while "a/b/c" is open.
 *  5. "a/b/c" reset; "a/b" tripped by another process: C is refused with
 *     why.by == "a/b"; "a" forced open (brk_set_mode) with "a/b" reset:
 *     refused by "a".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "proc.h"

static const char *shm;

enum { ACT_OPEN_A, ACT_RESET_A_MAKE_AB, ACT_TRIP_AB, ACT_FORCE_A };

static void cfg_init(struct brk_config *c)
{
	brk_config_init(c);
	c->failure_threshold = 3;
	c->open_ms = 60000;
}

/* One short-lived process that acts on the ancestors. */
static int actor(int act, void *arg)
{
	struct brk_config cfg;
	brk_segment *seg = it_attach(shm, 0);
	brk_breaker *a, *ab;
	brk_permit p;
	int i, bad = 0;

	(void)arg;
	cfg_init(&cfg);
	a = ft_breaker(seg, "a", &cfg);
	switch (act) {
	case ACT_OPEN_A:
		for (i = 0; i < 3; i++) {
			if (brk_acquire(a, &p, NULL) != 0)
				bad++;
			else
				bad += brk_release(&p, BRK_FAILURE,
						   BRK_REASON_CONNECT, 0) != 0;
		}
		break;
	case ACT_RESET_A_MAKE_AB:
		bad += brk_reset(a) != 0;
		ft_breaker(seg, "a/b", &cfg);
		break;
	case ACT_TRIP_AB:
		ab = ft_breaker(seg, "a/b", &cfg);
		bad += brk_trip(ab, 60000) != 0;
		break;
	case ACT_FORCE_A:
		ab = ft_breaker(seg, "a/b", &cfg);
		bad += brk_reset(ab) != 0;
		bad += brk_set_mode(a, BRK_MODE_FORCED_OPEN) != 0;
		break;
	}
	brk_detach(seg);
	return bad ? 1 : 0;
}

static int act(int what)
{
	int st = 0;
	pid_t pid = it_fork(actor, what, NULL);

	if (it_wait(pid, 10000, &st) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void info_of(brk_segment *seg, const char *name, struct brk_info *in)
{
	brk_breaker *b = NULL;

	if (brk_breaker_find(seg, name, &b) != 0) {
		memset(in, 0, sizeof(*in));
		in->state = -1;
		return;
	}
	it_info(b, in);
}

int main(void)
{
	struct brk_info ia, iab, iabc, ia2, iab2;
	struct brk_config cfg;
	struct ft_worker *c, *wa, *wab;
	brk_segment *seg;

	it_init("it_hierarchy", 60);
	shm = it_segment(NULL);
	seg = it_attach(shm, 0);
	cfg_init(&cfg);

	/* 1 */
	c = ft_worker_start(shm, "a/b/c", &cfg, 0);
	ft_worker_calls(c, 1, BRK_SUCCESS, 0);
	CHECK(c->admitted == 1, "a/b/c admitted while it has no ancestor (pid %d)",
	      (int)c->self_pid);
	/* 2 */
	CHECK(act(ACT_OPEN_A) == 0, "another process creates \"a\" and opens it with 3 failures");
	info_of(seg, "a", &ia);
	CHECK(ia.state == BRK_OPEN, "\"a\" is open");
	/* 3 */
	ft_worker_calls(c, 1, BRK_SUCCESS, 0);
	CHECK(c->refused == 1 && c->last_rc == -BRK_EOPEN,
	      "a/b/c is refused with -BRK_EOPEN while \"a\" is open (rc %d)", c->last_rc);
	CHECK(strcmp(c->by, "a") == 0 && c->wait_ms > 0,
	      "why.by == \"a\" (got '%s'), wait %" PRIu64 " ms: an ancestor created "
	      "after the handle is honoured", c->by, c->wait_ms);
	info_of(seg, "a/b/c", &iabc);
	CHECK(iabc.state == BRK_CLOSED && iabc.counters.rejected_open == 1,
	      "a/b/c itself stays closed; the refusal is counted on a/b/c");

	/* 4 */
	CHECK(act(ACT_RESET_A_MAKE_AB) == 0, "another process resets \"a\" and creates \"a/b\"");
	ft_worker_calls(c, 1, BRK_SUCCESS, 0);
	CHECK(c->admitted == 1, "a/b/c admitted again");
	info_of(seg, "a", &ia);
	info_of(seg, "a/b", &iab);
	ft_worker_calls(c, 3, BRK_FAILURE, BRK_REASON_SERVER_ERROR);
	CHECK(c->admitted == 3, "a/b/c: 3 failures reported");
	info_of(seg, "a/b/c", &iabc);
	info_of(seg, "a", &ia2);
	info_of(seg, "a/b", &iab2);
	CHECK(iabc.state == BRK_OPEN, "a/b/c opened at its threshold (%s)",
	      brk_state_name(iabc.state));
	CHECK(ia2.state == BRK_CLOSED && iab2.state == BRK_CLOSED,
	      "\"a\" and \"a/b\" stay closed (%s, %s)", brk_state_name(ia2.state),
	      brk_state_name(iab2.state));
	CHECK(ia2.counters.failures == ia.counters.failures &&
	      iab2.counters.failures == iab.counters.failures &&
	      ia2.consecutive_failures == 0 && iab2.consecutive_failures == 0 &&
	      ia2.counters.transitions == ia.counters.transitions &&
	      iab2.counters.transitions == iab.counters.transitions,
	      "no failure or transition was counted on \"a\" or \"a/b\"");
	wa = ft_worker_start(shm, "a", &cfg, 0);
	wab = ft_worker_start(shm, "a/b", &cfg, 0);
	ft_worker_calls(wa, 1, BRK_SUCCESS, 0);
	ft_worker_calls(wab, 1, BRK_SUCCESS, 0);
	CHECK(wa->admitted == 1 && wab->admitted == 1,
	      "processes using \"a\" and \"a/b\" are admitted while a/b/c is open");
	ft_worker_calls(c, 1, BRK_SUCCESS, 0);
	CHECK(c->refused == 1 && strcmp(c->by, "a/b/c") == 0,
	      "a/b/c refused by itself (by '%s')", c->by);

	/* 5 */
	{
		brk_breaker *abc = NULL;
		CHECK(brk_breaker_find(seg, "a/b/c", &abc) == 0 && brk_reset(abc) == 0,
		      "reset a/b/c");
	}
	CHECK(act(ACT_TRIP_AB) == 0, "another process trips \"a/b\"");
	ft_worker_calls(c, 1, BRK_SUCCESS, 0);
	CHECK(c->refused == 1 && c->last_rc == -BRK_EOPEN && strcmp(c->by, "a/b") == 0,
	      "a/b/c refused with why.by == \"a/b\" (rc %d, by '%s')", c->last_rc, c->by);
	ft_worker_calls(wa, 1, BRK_SUCCESS, 0);
	CHECK(wa->admitted == 1, "\"a\" still admits while its child \"a/b\" is open");
	CHECK(act(ACT_FORCE_A) == 0, "another process resets \"a/b\", forces \"a\" open");
	ft_worker_calls(c, 1, BRK_SUCCESS, 0);
	CHECK(c->refused == 1 && c->last_rc == -BRK_EOPEN && strcmp(c->by, "a") == 0,
	      "a/b/c refused by forced-open \"a\" (rc %d, by '%s')", c->last_rc, c->by);
	ft_worker_calls(wab, 1, BRK_SUCCESS, 0);
	CHECK(wab->refused == 1 && strcmp(wab->by, "a") == 0,
	      "and so is \"a/b\" (by '%s')", wab->by);

	ft_worker_stop(c);
	ft_worker_stop(wa);
	ft_worker_stop(wab);
	brk_detach(seg);
	return it_finish();
}
