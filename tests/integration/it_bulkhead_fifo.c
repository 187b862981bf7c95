/*
 * it_bulkhead_fifo.c - fair bulkhead waits across real processes on the
 * real clock (issue 25 item 1; docs/design/limits.md "Fair bulkhead
 * waits"):
 *
 *  1. arrival_order_across_processes: max_concurrent 1, held by the test;
 *     6 forked waiters call brk_admit() (max_wait 10 s) one after the
 *     other, each only once the one before it is in the queue
 *     (brk_info.queued) and 20 ms later; the permit is given back; each
 *     holds it 50 ms. They are admitted in arrival order, each within a
 *     generous bound of the release before it (woken, not polled), and
 *     each counted one refusal (rejected_full) when it joined.
 *  2. a_killed_waiter_does_not_stall_the_rest: the same, and the third
 *     waiter is SIGKILLed while it waits. The rest are admitted in order;
 *     the one after the dead waiter within the grace (50 ms) plus a
 *     generous 450 ms of the release before it.
 *  3. a_waiter_that_gives_up_is_skipped_at_once: the third waiter has
 *     max_wait 100 ms and gives up while the first two are served; the
 *     fourth is admitted as soon as the second releases (well under the
 *     grace).
 * Generous bounds (a loaded 2-core host): the order is exact, the times
 * are bounds, not figures.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

#define WAITERS 6
#define HOLD_MS 50u
#define GAP_MS 20u

struct shared {
	int ready;
	int go[WAITERS];
	uint64_t max_wait_ms[WAITERS];
	int admitted;             /* admissions so far */
	int order[WAITERS];       /* who, in admission order */
	int rc[WAITERS];
	uint64_t admit_ns[WAITERS], release_ns[WAITERS];
};

static const char *shm;
static struct shared *sh;
static int use_hist; /* the breakers' hold_histogram (test 4) */
static brk_segment *test_seg; /* the test process's one attach (main_seg) */

/* The test process's attach, made once and detached by main (one per
 * test leaked its handles: LeakSanitizer failed the ASan stage). */
static brk_segment *main_seg(void)
{
	if (!test_seg)
		test_seg = it_attach(shm, 0);
	return test_seg;
}

static void cfg_init(struct brk_config *c)
{
	brk_config_init(c);
	c->max_concurrent = 1;
	c->failure_threshold = 1000;
	c->implicit_pace = 0;
	c->hold_histogram = use_hist;
}

static int waiter(int idx, void *arg)
{
	const char *name = arg;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_config cfg;
	brk_segment *seg = it_attach(shm, 0);
	brk_breaker *b;
	int rc, n;

	cfg_init(&cfg);
	if (brk_breaker_get(seg, name, &cfg, &b) != 0)
		return 1;
	AT_ADD(&sh->ready, 1);
	while (!AT_LOAD(&sh->go[idx]))
		it_sleep_us(200);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.breaker = b;
	q.max_wait_ms = AT_LOAD(&sh->max_wait_ms[idx]);
	rc = brk_admit(&q, &a);
	AT_STORE(&sh->rc[idx], rc);
	if (rc == 0) {
		AT_STORE(&sh->admit_ns[idx], it_now_ns());
		n = AT_ADD(&sh->admitted, 1) - 1;
		if (n >= 0 && n < WAITERS)
			AT_STORE(&sh->order[n], idx);
		it_sleep_ms(HOLD_MS);
		AT_STORE(&sh->release_ns[idx], it_now_ns());
		if (brk_admit_release(&a, BRK_SUCCESS, 0, 0) != 0)
			return 2;
	}
	brk_detach(seg);
	return 0;
}

static uint64_t queued(brk_breaker *b)
{
	struct brk_info i;

	it_info(b, &i);
	return i.queued;
}

/* Start the waiters one by one behind a permit the test holds; @kill_idx:
 * SIGKILL that waiter once all wait, @giveup_idx: that one has max_wait
 * 100 ms (-1: none); then give the permit back and wait for the rest.
 * Returns the breaker (the segment stays attached: the test ends with
 * it). */
static brk_breaker *run(const char *name, int kill_idx, int giveup_idx,
			pid_t *pids)
{
	struct brk_config cfg;
	brk_segment *seg = main_seg();
	brk_breaker *b;
	brk_permit p;
	int i, k, st;

	memset(sh, 0, sizeof(*sh));
	for (i = 0; i < WAITERS; i++) {
		sh->max_wait_ms[i] = 10000;
		sh->rc[i] = 1;
	}
	cfg_init(&cfg);
	if (brk_breaker_get(seg, name, &cfg, &b) != 0 || brk_acquire(b, &p, NULL) != 0) {
		CHECK(0, "%s: the breaker and its one permit", name);
		return NULL;
	}
	if (giveup_idx >= 0)
		sh->max_wait_ms[giveup_idx] = 100;
	for (i = 0; i < WAITERS; i++)
		pids[i] = it_fork(waiter, i, (void *)name);
	for (k = 0; k < 500 && AT_LOAD(&sh->ready) < WAITERS; k++)
		it_sleep_ms(10);
	CHECK(AT_LOAD(&sh->ready) == WAITERS, "%s: %d waiters attached", name,
	      WAITERS);
	for (i = 0; i < WAITERS; i++) {
		AT_STORE(&sh->go[i], 1);
		for (k = 0; k < 1000 && queued(b) < (uint64_t)i + 1; k++)
			it_sleep_ms(2);
		CHECK(queued(b) == (uint64_t)i + 1, "%s: waiter %d in the queue "
		      "(queued %llu)", name, i, (unsigned long long)queued(b));
		it_sleep_ms(GAP_MS);
	}
	if (kill_idx >= 0)
		it_kill(pids[kill_idx]);
	brk_release(&p, BRK_SUCCESS, 0, 0);
	for (i = 0; i < WAITERS; i++) {
		if (i == kill_idx)
			continue;
		CHECK(it_wait(pids[i], 20000, &st) == 0 && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0, "%s: waiter %d exited 0", name, i);
	}
	return b;
}

static void print_order(const char *name)
{
	char buf[128];
	int i, n = AT_LOAD(&sh->admitted), o = 0;

	for (i = 0; i < n && i < WAITERS; i++)
		o += snprintf(buf + o, sizeof(buf) - (size_t)o, " %d", sh->order[i]);
	buf[o] = '\0';
	it_note("%s: admitted in order:%s", name, n ? buf : " none");
}

static uint64_t ms_between(uint64_t from_ns, uint64_t to_ns)
{
	return to_ns > from_ns ? (to_ns - from_ns) / 1000000u : 0;
}

static void arrival_order_across_processes(void)
{
	pid_t pids[WAITERS];
	brk_breaker *b = run("fifo", -1, -1, pids);
	int i, in_order = 1;
	uint64_t worst = 0;

	if (!b)
		return;
	print_order("fifo");
	CHECK(AT_LOAD(&sh->admitted) == WAITERS, "every waiter admitted (%d)",
	      sh->admitted);
	for (i = 0; i < WAITERS; i++)
		in_order &= sh->order[i] == i;
	CHECK(in_order, "admitted in arrival order");
	for (i = 1; i < WAITERS; i++) {
		uint64_t d = ms_between(sh->release_ns[i - 1], sh->admit_ns[i]);
		if (d > worst)
			worst = d;
	}
	it_note("fifo: longest hand-over %llu ms", (unsigned long long)worst);
	CHECK(worst < 200, "each admitted soon after the release before it "
	      "(longest %llu ms; woken, not polled)", (unsigned long long)worst);
	CHECK(queued(b) == 0, "queue empty (%llu)", (unsigned long long)queued(b));
	{
		struct brk_info i;

		it_info(b, &i);
		CHECK(i.counters.rejected_full == WAITERS, "each waiter counted "
		      "one refusal when it joined, none while it waited (%llu)",
		      (unsigned long long)i.counters.rejected_full);
	}
}

static void a_killed_waiter_does_not_stall_the_rest(void)
{
	pid_t pids[WAITERS];
	brk_breaker *b = run("killed", 2, -1, pids);
	static const int want[] = { 0, 1, 3, 4, 5 };
	int i, in_order = 1;
	uint64_t gap;

	if (!b)
		return;
	print_order("killed");
	CHECK(AT_LOAD(&sh->admitted) == WAITERS - 1, "every live waiter admitted "
	      "(%d)", sh->admitted);
	for (i = 0; i < WAITERS - 1; i++)
		in_order &= sh->order[i] == want[i];
	CHECK(in_order, "the live ones in arrival order: 0 1 3 4 5");
	gap = ms_between(sh->release_ns[1], sh->admit_ns[3]);
	it_note("killed: waiter 3 admitted %llu ms after waiter 1's release "
		"(the dead waiter 2 skipped after the 50 ms grace)",
		(unsigned long long)gap);
	CHECK(gap < 500, "the dead waiter stalls the next one at most the grace "
	      "and a generous 450 ms (%llu ms)", (unsigned long long)gap);
	CHECK(queued(b) == 0, "queue empty (%llu)", (unsigned long long)queued(b));
}

static void a_waiter_that_gives_up_is_skipped_at_once(void)
{
	pid_t pids[WAITERS];
	brk_breaker *b = run("gaveup", -1, 2, pids);
	static const int want[] = { 0, 1, 3, 4, 5 };
	int i, in_order = 1;
	uint64_t gap;

	if (!b)
		return;
	print_order("gaveup");
	CHECK(sh->rc[2] == -BRK_EFULL, "the third gave up BULKHEAD_FULL after "
	      "its 100 ms (%s)", brk_strerror(sh->rc[2]));
	for (i = 0; i < WAITERS - 1; i++)
		in_order &= sh->order[i] == want[i];
	CHECK(in_order, "the others in arrival order: 0 1 3 4 5");
	gap = ms_between(sh->release_ns[1], sh->admit_ns[3]);
	it_note("gaveup: waiter 3 admitted %llu ms after waiter 1's release",
		(unsigned long long)gap);
	CHECK(gap < 200, "the one that gave up costs no grace (%llu ms)",
	      (unsigned long long)gap);
	CHECK(queued(b) == 0, "queue empty (%llu)", (unsigned long long)queued(b));
}

/* 4. Dead tickets on an empty bulkhead do not make a job with a
 * deadline EXPIRED at once: with a permit free the queue is not what
 * holds it up, so its estimate counts the job alone (the mean hold /
 * permits), not behind the dead tickets; it joins and skips them. Before,
 * its estimate put it behind 3 dead waiters (4 x the mean hold > its
 * 600 ms deadline) and it was refused at once, as was every job with a deadline
 * that came after it: none joined, so nothing skipped the dead tickets. */
static void dead_tickets_on_an_empty_bulkhead_do_not_expire_a_job(void)
{
	struct brk_config cfg;
	struct brk_admit_req q;
	struct brk_admission a;
	brk_segment *seg = main_seg();
	brk_breaker *b;
	brk_permit p;
	pid_t pids[3];
	uint64_t t0;
	int i, k, rc;

	memset(sh, 0, sizeof(*sh));
	use_hist = 1;
	cfg_init(&cfg);
	if (brk_breaker_get(seg, "deadq", &cfg, &b) != 0 || brk_acquire(b, &p, NULL) != 0) {
		CHECK(0, "deadq: the breaker and its one permit");
		return;
	}
	it_sleep_ms(400); /* a hold of 400 ms, and the one of the permit held
			   * while the waiters queue: a mean of 200 .. 550 ms */
	brk_release(&p, BRK_SUCCESS, 0, 0);
	CHECK(brk_acquire(b, &p, NULL) == 0, "deadq: the permit held again");
	for (i = 0; i < 3; i++) {
		sh->max_wait_ms[i] = 10000;
		pids[i] = it_fork(waiter, i, (void *)"deadq");
	}
	for (k = 0; k < 500 && AT_LOAD(&sh->ready) < 3; k++)
		it_sleep_ms(10);
	for (i = 0; i < 3; i++) {
		AT_STORE(&sh->go[i], 1);
		for (k = 0; k < 1000 && queued(b) < (uint64_t)i + 1; k++)
			it_sleep_ms(2);
	}
	for (i = 0; i < 3; i++)
		it_kill(pids[i]);
	brk_release(&p, BRK_SUCCESS, 0, 0);
	CHECK(queued(b) == 3, "deadq: 3 dead tickets on an empty bulkhead (%llu)",
	      (unsigned long long)queued(b));
	{
		struct brk_info i;

		it_info(b, &i);
		it_note("deadq: hold state %d count %llu sum %llu us", i.hold.state,
			(unsigned long long)i.hold.count, (unsigned long long)i.hold.sum_us);
	}
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.breaker = b;
	q.max_wait_ms = 2000;
	q.deadline_ns = brk_now_ns(seg) + 600 * 1000000ull;
	t0 = it_now_ns();
	rc = brk_admit(&q, &a);
	it_note("deadq: a job with a 600 ms deadline: %s after %llu ms",
		rc ? brk_strerror(rc) : "GO",
		(unsigned long long)ms_between(t0, it_now_ns()));
	CHECK(rc == 0, "deadq: admitted past the dead tickets (%s)", brk_strerror(rc));
	if (rc == 0)
		brk_admit_release(&a, BRK_SUCCESS, 0, 0);
	CHECK(queued(b) == 0, "deadq: queue empty (%llu)", (unsigned long long)queued(b));
	use_hist = 0;
}

int main(void)
{
	it_init("bulkhead_fifo", 90);
	shm = it_segment(NULL);
	sh = it_shared(sizeof(*sh));
	arrival_order_across_processes();
	a_killed_waiter_does_not_stall_the_rest();
	a_waiter_that_gives_up_is_skipped_at_once();
	dead_tickets_on_an_empty_bulkhead_do_not_expire_a_job();
	if (test_seg)
		brk_detach(test_seg);
	return it_finish();
}
