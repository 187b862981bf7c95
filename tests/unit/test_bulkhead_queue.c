/*
 * test_bulkhead_queue.c - the bulkhead's wait queue (lib/src/
 * bulkhead_queue.c; docs/design/limits.md "Fair bulkhead waits") on the
 * fake clock: its primitives (take a ticket, is it my turn, try to claim,
 * leave, skip a stale head) driven one step at a time, as waiters of
 * several processes would take them; brk_info.queued; garbage queue
 * words; and brk_admit()'s estimated wait against the deadline. Nothing
 * sleeps: the sleeping loop (brk__bq_wait()) runs only on the real
 * clock (tests/integration/it_bulkhead_fifo.c).
 */
#include <sys/wait.h>
#include <unistd.h>

#include "layout.h"
#include "internal.h"
#include "bulkhead_queue.h"
#include "killpoint.h"
#include "fixture.h"

UT_GROUP_FIXTURES("bq", 8)

static brk_breaker *bulkhead(struct ut *u, const char *name, uint32_t mc,
			     int hold_histogram)
{
	struct brk_config c;

	ut_cfg(&c);
	c.max_concurrent = mc;
	c.hold_histogram = hold_histogram;
	return ut_breaker(u, name, &c);
}

static uint64_t *ctl(struct ut *u, brk_breaker *b)
{
	uint64_t *c = brk__permit_ctl(u->seg, brk__brec(b));

	assert_non_null(c);
	return c;
}

static void join(struct ut *u, brk_breaker *b, struct brk__bq_waiter *w,
		 int prio)
{
	ut_rc(0, brk__bq_join(u->seg, brk__brec(b), prio, w));
}

static int try_claim(brk_breaker *b, struct brk__bq_waiter *w, brk_permit *p)
{
	struct brk_refusal why;

	memset(&why, 0, sizeof(why));
	return brk__bq_try_claim(b, w, p, &why);
}

static uint64_t queued(brk_breaker *b)
{
	struct brk_info *i = malloc(sizeof(*i));
	uint64_t q;

	assert_non_null(i);
	ut_info(b, i);
	q = i->queued;
	free(i);
	return q;
}

static uint64_t rejected_full(brk_breaker *b)
{
	struct brk_info *i = malloc(sizeof(*i));
	uint64_t n;

	assert_non_null(i);
	ut_info(b, i);
	n = i->counters.rejected_full;
	free(i);
	return n;
}

/* Three tickets; permits freed one by one go to 1, 2, 3 in that order,
 * though 3 and 2 ask first each time. A waiter woken for nothing (no
 * permit free) is told so without asking the breaker: not counted as
 * refused again. */
static void arrival_order_is_kept(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__bq_waiter w1, w2, w3;
	brk_permit hold, p1, p2, p3;
	uint64_t full;

	ut_acquire_ok(b, &hold);
	join(u, b, &w1, BRK_PRIORITY_NORMAL);
	join(u, b, &w2, BRK_PRIORITY_NORMAL);
	join(u, b, &w3, BRK_PRIORITY_NORMAL);
	assert_true(w1.ticket + 1 == w2.ticket && w2.ticket + 1 == w3.ticket);
	full = rejected_full(b);
	ut_rc(-BRK_EFULL, try_claim(b, &w1, &p1)); /* its turn, nothing free */
	assert_int_equal(rejected_full(b), full);  /* the breaker not asked */

	ut_release_ok(&hold, BRK_SUCCESS, 0);
	ut_rc(-EAGAIN, try_claim(b, &w3, &p3));
	ut_rc(-EAGAIN, try_claim(b, &w2, &p2));
	ut_rc(0, try_claim(b, &w1, &p1));
	assert_int_equal(queued(b), 2);

	ut_release_ok(&p1, BRK_SUCCESS, 0);
	ut_rc(-EAGAIN, try_claim(b, &w3, &p3));
	ut_rc(0, try_claim(b, &w2, &p2));
	assert_int_equal(queued(b), 1);

	ut_release_ok(&p2, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &w3, &p3));
	assert_int_equal(queued(b), 0);
	ut_release_ok(&p3, BRK_SUCCESS, 0);
}

/* The head dies holding its ticket (it never asks again): the waiter
 * behind it skips it once a permit has been free for the grace, and not
 * a nanosecond before; time with no permit free does not count. */
static void dead_head_is_skipped_after_the_grace_and_no_earlier(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__record *r = brk__brec(b);
	struct brk__bq_waiter dead, w2;
	brk_permit hold, p2;

	ut_acquire_ok(b, &hold);
	join(u, b, &dead, BRK_PRIORITY_NORMAL);
	join(u, b, &w2, BRK_PRIORITY_NORMAL);
	/* nothing free: the head is not late, however long it takes */
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &w2), 0);
	ut_advance_ms(u, 1000);
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &w2), 0);

	ut_release_ok(&hold, BRK_SUCCESS, 0);
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &w2), 0); /* timing */
	ut_rc(-EAGAIN, try_claim(b, &w2, &p2));
	ut_advance_ns(u, BRK__BQ_GRACE_NS - 1);
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &w2), 0);
	ut_rc(-EAGAIN, try_claim(b, &w2, &p2));
	ut_advance_ns(u, 1);
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &w2), 1);
	ut_rc(0, try_claim(b, &w2, &p2));
	assert_int_equal(queued(b), 0);
	ut_release_ok(&p2, BRK_SUCCESS, 0);
}

/* Many dead tickets in a row (a storm of SIGKILLed waiters, or waiters
 * that gave up 64 or more behind the head and left no GONE bit) cost the
 * live waiter behind them a few graces, not one grace each: a waiter
 * whose skip was not followed by a claim doubles its next skip (1, 2, 4,
 * ...; never past itself). Before, 300 dead tickets stalled it 300 x 50
 * ms = 15 s: every waiter with a shorter max_wait was refused
 * BULKHEAD_FULL on an empty bulkhead, and each left another dead ticket. */
static void a_run_of_dead_tickets_costs_a_few_graces_not_one_each(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__record *r = brk__brec(b);
	struct brk__bq_waiter dead, live, behind;
	brk_permit p;
	int i, graces = 0;

	for (i = 0; i < 300; i++)
		join(u, b, &dead, BRK_PRIORITY_NORMAL); /* never seen again */
	join(u, b, &live, BRK_PRIORITY_NORMAL);
	join(u, b, &behind, BRK_PRIORITY_NORMAL);
	while (brk__bq_turn(u->seg, r, &live) != 1 && graces < 400) {
		(void)brk__bq_skip_stale(u->seg, r, &live); /* timing */
		ut_advance_ns(u, BRK__BQ_GRACE_NS);
		(void)brk__bq_skip_stale(u->seg, r, &live);
		graces++;
	}
	assert_true(graces <= 10); /* log2(300) + 1 */
	/* it became the head itself; the one behind it keeps its place */
	assert_int_equal(uatomic_read(&ctl(u, b)[BRK__PQ_SERVED]), live.ticket);
	assert_int_equal(brk__bq_turn(u->seg, r, &behind), 0);
	ut_rc(0, try_claim(b, &live, &p));
	assert_int_equal(queued(b), 1);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &behind, &p));
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(queued(b), 0);
}

/* The doubling of rule 5 is the queue's, not one waiter's: a run of
 * dead or garbage tickets (here a gap of 2^19 written into NEXT) is
 * drained by waiters that come and go, each with a short max_wait (6
 * graces), in about log2(gap) graces in all. When each waiter started
 * again at a skip of 1, each skipped 63 tickets before it gave up (and
 * left one more, with no GONE bit): about 8000 waiters, every one of
 * them refused BULKHEAD_FULL on an empty bulkhead. */
static void a_garbage_gap_is_drained_by_waiters_that_come_and_go(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__record *r = brk__brec(b);
	uint64_t *c = ctl(u, b);
	struct brk__bq_waiter w;
	brk_permit p;
	int n, g, head = 0;

	uatomic_set(&c[BRK__PQ_NEXT], uatomic_read(&c[BRK__PQ_SERVED]) + (1ull << 19));
	for (n = 0; n < 50 && !head; n++) {
		join(u, b, &w, BRK_PRIORITY_NORMAL);
		for (g = 0; g < 6 && !head; g++) {
			(void)brk__bq_skip_stale(u->seg, r, &w); /* timing */
			ut_advance_ns(u, BRK__BQ_GRACE_NS);
			(void)brk__bq_skip_stale(u->seg, r, &w);
			head = brk__bq_turn(u->seg, r, &w) == 1;
		}
		if (!head)
			brk__bq_leave(u->seg, r, &w); /* max_wait: gives up */
	}
	assert_true(head);
	assert_true(n <= 5); /* 2^19: 20 graces, 6 a waiter */
	ut_rc(0, try_claim(b, &w, &p));
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(queued(b), 0);
}

/* Permits held by a process that died are reclaimed by the waiters
 * (brk__caller_reclaim(), as a plain brk_acquire() that finds the
 * bulkhead full does): a waiter only calls the acquire path once it sees
 * a permit free, so before, with every permit held by dead holders (and
 * no breakerd sweeping), the queue waited out every max_wait and refused
 * BULKHEAD_FULL on a bulkhead nobody used. Here behind a dead head too:
 * the waiter behind it reclaims, then times the head out. */
static void waiters_reclaim_permits_of_dead_holders(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__record *r = brk__brec(b);
	struct brk__bq_waiter dead, live;
	struct brk_info *i = malloc(sizeof(*i));
	brk_permit p;
	pid_t pid;
	int st = 0;

	assert_non_null(i);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(brk_acquire(b, &p, NULL) == 0 ? 0 : 1); /* leaks it */
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	join(u, b, &dead, BRK_PRIORITY_NORMAL);
	join(u, b, &live, BRK_PRIORITY_NORMAL);
	ut_rc(-EAGAIN, try_claim(b, &live, &p)); /* not its turn ... */
	ut_info(b, i);
	assert_int_equal(i->in_flight, 0); /* ... but it reclaimed */
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &live), 0); /* timing */
	ut_advance_ns(u, BRK__BQ_GRACE_NS);
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &live), 1);
	ut_rc(0, try_claim(b, &live, &p));
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(queued(b), 0);
	free(i);
}

/* A read-only attach (BRK_ATTACH_READONLY: mapped PROT_READ) never
 * writes the queue's words nor its counters: brk_admit() that may wait
 * (the real clock, max_wait_ms) on a full bulkhead with others queued is
 * -EROFS like every write. Before, it counted its refusal (a write)
 * before it joined the queue: SIGSEGV in the caller. */
static void a_read_only_attach_never_writes_the_queue(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0), *rb;
	uint64_t *c = ctl(u, b), next;
	struct brk__bq_waiter w;
	struct brk_attach_opts o;
	struct brk_admit_req q;
	struct brk_admission a;
	brk_segment *ro;
	brk_permit hold;

	ut_acquire_ok(b, &hold);
	join(u, b, &w, BRK_PRIORITY_NORMAL);
	next = uatomic_read(&c[BRK__PQ_NEXT]);
	ut_opts(u, &o, 0);
	o.flags = BRK_ATTACH_READONLY;
	o.clock = NULL; /* the real clock: brk_admit() may wait */
	o.clock_ctx = NULL;
	ut_rc(0, brk_attach(&o, &ro));
	ut_rc(0, brk_breaker_find(ro, "svc", &rb));
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.breaker = rb;
	q.max_wait_ms = 100;
	ut_rc(-EROFS, brk_admit(&q, &a));
	q.priority = BRK_PRIORITY_HIGH;
	ut_rc(-EROFS, brk_admit(&q, &a));
	assert_int_equal(uatomic_read(&c[BRK__PQ_NEXT]), next);
	assert_int_equal(queued(b), 1);
	brk_detach(ro);
	brk__bq_leave(u->seg, brk__brec(b), &w);
	ut_release_ok(&hold, BRK_SUCCESS, 0);
}

/* A waiter that leaves (deadline, max_wait, a signal) is skipped at once:
 * behind the head, by its GONE bit when the head moves on; as the head,
 * by itself. No clock moves in this test. */
static void a_waiter_that_leaves_is_skipped_at_once(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__bq_waiter w1, w2, w3, w4;
	brk_permit hold, p1, p3;

	ut_acquire_ok(b, &hold);
	join(u, b, &w1, BRK_PRIORITY_NORMAL);
	join(u, b, &w2, BRK_PRIORITY_NORMAL);
	join(u, b, &w3, BRK_PRIORITY_NORMAL);
	join(u, b, &w4, BRK_PRIORITY_NORMAL);
	brk__bq_leave(u->seg, brk__brec(b), &w2); /* behind the head */
	assert_int_equal(queued(b), 4);            /* until the head moves */
	ut_release_ok(&hold, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &w1, &p1));
	assert_int_equal(queued(b), 2); /* past w1 and w2 */
	ut_release_ok(&p1, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &w3, &p3));
	/* the head leaves: the next one is the head at once */
	ut_release_ok(&p3, BRK_SUCCESS, 0);
	assert_int_equal(brk__bq_turn(u->seg, brk__brec(b), &w4), 1);
	brk__bq_leave(u->seg, brk__brec(b), &w4);
	assert_int_equal(queued(b), 0);
	assert_int_equal(uatomic_read(&ctl(u, b)[BRK__PQ_GONE]), 0);
}

/* A head whose GONE bit is set (its leaver set the bit, then died
 * before it looked at SERVED again, while the head moved to it) is
 * skipped by the next waiter at once, with no grace. */
static void a_head_marked_gone_is_skipped_at_once(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__record *r = brk__brec(b);
	struct brk__bq_waiter w1, w2;
	brk_permit p2;

	join(u, b, &w1, BRK_PRIORITY_NORMAL);
	join(u, b, &w2, BRK_PRIORITY_NORMAL);
	uatomic_or(&ctl(u, b)[BRK__PQ_GONE], 1ull << (w1.ticket % 64));
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &w2), 1);
	assert_int_equal(uatomic_read(&ctl(u, b)[BRK__PQ_GONE]), 0);
	ut_rc(0, try_claim(b, &w2, &p2));
	ut_release_ok(&p2, BRK_SUCCESS, 0);
	assert_int_equal(queued(b), 0);
}

/* The race a leaver's second look at SERVED is for (the hook runs
 * between its GONE bit and that look): the head moved to the leaver
 * after it had looked at GONE and before the bit landed. */
static uint64_t *race_ctl;
static uint64_t race_served;

static void move_head_hook(int id, struct brk_segment *seg, uint32_t ref)
{
	(void)seg;
	(void)ref;
	if (id == BRK__HOOK_BQ_GONE_SET)
		uatomic_set(&race_ctl[BRK__PQ_SERVED], race_served);
}

/* ... made the leaver the head: it takes its bit back and moves on
 * itself, or the queue would wait a grace for a waiter that is gone. */
static void a_leaver_that_became_the_head_moves_on_itself(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__bq_waiter w1, w2, w3;

	join(u, b, &w1, BRK_PRIORITY_NORMAL);
	join(u, b, &w2, BRK_PRIORITY_NORMAL);
	join(u, b, &w3, BRK_PRIORITY_NORMAL);
	race_ctl = ctl(u, b);
	race_served = w2.ticket; /* w1 moved on without seeing w2's bit */
	brk__test_hook = move_head_hook;
	brk__bq_leave(u->seg, brk__brec(b), &w2);
	brk__test_hook = NULL;
	assert_int_equal(uatomic_read(&race_ctl[BRK__PQ_SERVED]), w3.ticket);
	assert_int_equal(uatomic_read(&race_ctl[BRK__PQ_GONE]), 0);
	assert_int_equal(queued(b), 1);
}

/* ... or passed it (a waiter timed it out): its bit is cleared, so it
 * does not stand for ticket t + 64. */
static void a_leaver_passed_meanwhile_clears_its_bit(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__bq_waiter w1, w2, w3;

	join(u, b, &w1, BRK_PRIORITY_NORMAL);
	join(u, b, &w2, BRK_PRIORITY_NORMAL);
	join(u, b, &w3, BRK_PRIORITY_NORMAL);
	race_ctl = ctl(u, b);
	race_served = w3.ticket;
	brk__test_hook = move_head_hook;
	brk__bq_leave(u->seg, brk__brec(b), &w2);
	brk__test_hook = NULL;
	assert_int_equal(uatomic_read(&race_ctl[BRK__PQ_SERVED]), w3.ticket);
	assert_int_equal(uatomic_read(&race_ctl[BRK__PQ_GONE]), 0);
}

/* A head skipped for slowness that turns out to be alive may still claim
 * at any time: it came earlier than everyone still waiting. */
static void a_skipped_live_waiter_can_still_claim(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__record *r = brk__brec(b);
	struct brk__bq_waiter slow, w2, w3;
	brk_permit hold, ps, p2;

	ut_acquire_ok(b, &hold);
	join(u, b, &slow, BRK_PRIORITY_NORMAL);
	join(u, b, &w2, BRK_PRIORITY_NORMAL);
	join(u, b, &w3, BRK_PRIORITY_NORMAL);
	ut_release_ok(&hold, BRK_SUCCESS, 0);
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &w3), 0);
	ut_advance_ns(u, BRK__BQ_GRACE_NS);
	assert_int_equal(brk__bq_skip_stale(u->seg, r, &w3), 1);
	assert_int_equal(brk__bq_turn(u->seg, r, &w2), 1); /* w2 the head */
	/* the slow one wakes up first: it may take the permit */
	assert_int_equal(brk__bq_turn(u->seg, r, &slow), 1);
	ut_rc(0, try_claim(b, &slow, &ps));
	ut_rc(-BRK_EFULL, try_claim(b, &w2, &p2));
	assert_int_equal(queued(b), 2); /* w2, w3: the skipped one is out */
	ut_release_ok(&ps, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &w2, &p2));
	ut_release_ok(&p2, BRK_SUCCESS, 0);
	brk__bq_leave(u->seg, r, &w3);
	assert_int_equal(queued(b), 0);
}

/* High priority passes the queue (it may take any free permit, the
 * reserved ones too) and leaves it when served; the normal queue keeps
 * its order. */
static void high_priority_passes_the_queue(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__bq_waiter w1, hi;
	brk_permit hold, p1, ph;

	ut_acquire_ok(b, &hold);
	join(u, b, &w1, BRK_PRIORITY_NORMAL);
	join(u, b, &hi, BRK_PRIORITY_HIGH);
	ut_release_ok(&hold, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &hi, &ph));
	ut_rc(-BRK_EFULL, try_claim(b, &w1, &p1));
	assert_int_equal(queued(b), 2); /* hi's ticket: a GONE bit now */
	ut_release_ok(&ph, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &w1, &p1));
	assert_int_equal(queued(b), 0); /* past hi's ticket too */
	ut_release_ok(&p1, BRK_SUCCESS, 0);
}

/* brk_info.queued is NEXT - SERVED: tickets handed out and not yet
 * served, skipped or left; 0 without a bulkhead. */
static void queued_in_brk_info(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 2, 0);
	brk_breaker *none = bulkhead(u, "plain", 0, 0);
	struct brk__bq_waiter w[3];
	int i;

	assert_int_equal(queued(b), 0);
	assert_int_equal(queued(none), 0);
	assert_int_equal(brk__bq_join(u->seg, brk__brec(none), 0, &w[0]), -ENOENT);
	for (i = 0; i < 3; i++) {
		join(u, b, &w[i], BRK_PRIORITY_NORMAL);
		assert_int_equal(queued(b), (uint64_t)i + 1);
	}
	for (i = 0; i < 3; i++)
		brk__bq_leave(u->seg, brk__brec(b), &w[i]);
	assert_int_equal(queued(b), 0);
}

/* A permit given back wakes the waiters (bumps the futex word) only
 * while someone waits: with the queue empty, nothing is written. */
static void release_wakes_only_while_someone_waits(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	uint64_t *c = ctl(u, b), f;
	struct brk__bq_waiter w;
	brk_permit p, pw;

	ut_acquire_ok(b, &p);
	f = uatomic_read(&c[BRK__PQ_FUTEX]);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(uatomic_read(&c[BRK__PQ_FUTEX]), f);
	ut_acquire_ok(b, &p);
	join(u, b, &w, BRK_PRIORITY_NORMAL);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(uatomic_read(&c[BRK__PQ_FUTEX]), f + 1);
	ut_rc(0, try_claim(b, &w, &pw)); /* the head moves on: a wake too */
	assert_int_equal(uatomic_read(&c[BRK__PQ_FUTEX]), f + 2);
	ut_release_ok(&pw, BRK_SUCCESS, 0);
	assert_int_equal(uatomic_read(&c[BRK__PQ_FUTEX]), f + 2);
}

/* Garbage queue words that no queue can have (SERVED past NEXT, a gap
 * of more than BRK__BQ_MAX_QUEUED) do not make every release of the
 * bulkhead a FUTEX_WAKE syscall until a waiter comes: a release wakes
 * (bumps the futex word) only for 0 < NEXT - SERVED <= 2^20, as
 * brk_info.queued reads it. */
static void release_does_not_wake_for_garbage_queue_words(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	uint64_t *c = ctl(u, b), f;
	brk_permit p;

	uatomic_set(&c[BRK__PQ_NEXT], 5);
	uatomic_set(&c[BRK__PQ_SERVED], 1000);
	ut_acquire_ok(b, &p);
	f = uatomic_read(&c[BRK__PQ_FUTEX]);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(uatomic_read(&c[BRK__PQ_FUTEX]), f);
	uatomic_set(&c[BRK__PQ_SERVED], 7);
	uatomic_set(&c[BRK__PQ_NEXT], 7 + (1ull << 40));
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(uatomic_read(&c[BRK__PQ_FUTEX]), f);
	/* the largest queue believed still wakes */
	uatomic_set(&c[BRK__PQ_NEXT], 7 + BRK__BQ_MAX_QUEUED);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(uatomic_read(&c[BRK__PQ_FUTEX]), f + 1);
}

/* Garbage queue words (SERVED past NEXT, a gap no queue has, every GONE
 * bit set) are clamped by readers and repaired by the next waiter that
 * joins: nothing hangs, nothing crashes, the permit is still handed out. */
static void garbage_queue_words_are_clamped_and_repaired(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	struct brk__record *r = brk__brec(b);
	uint64_t *c = ctl(u, b);
	struct brk__bq_waiter w, w2;
	brk_permit p, p2;

	/* SERVED past NEXT */
	uatomic_set(&c[BRK__PQ_NEXT], 5);
	uatomic_set(&c[BRK__PQ_SERVED], 1000);
	assert_int_equal(queued(b), 0);
	join(u, b, &w, BRK_PRIORITY_NORMAL);
	assert_int_equal(uatomic_read(&c[BRK__PQ_SERVED]), w.ticket);
	ut_rc(0, try_claim(b, &w, &p));
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(queued(b), 0);

	/* a gap of 2^40 tickets: clamped; the next waiter is the head */
	uatomic_set(&c[BRK__PQ_SERVED], 7);
	uatomic_set(&c[BRK__PQ_NEXT], 7 + (1ull << 40));
	assert_int_equal(queued(b), BRK__BQ_MAX_QUEUED);
	join(u, b, &w, BRK_PRIORITY_NORMAL);
	assert_int_equal(queued(b), 1);
	ut_rc(0, try_claim(b, &w, &p));
	ut_release_ok(&p, BRK_SUCCESS, 0);

	/* NEXT about to wrap */
	uatomic_set(&c[BRK__PQ_SERVED], UINT64_MAX);
	uatomic_set(&c[BRK__PQ_NEXT], UINT64_MAX);
	ut_acquire_ok(b, &p);
	join(u, b, &w, BRK_PRIORITY_NORMAL);
	join(u, b, &w2, BRK_PRIORITY_NORMAL);
	assert_int_equal(w2.ticket, 0); /* wrapped */
	assert_int_equal(queued(b), 2);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_rc(-EAGAIN, try_claim(b, &w2, &p2));
	ut_rc(0, try_claim(b, &w, &p));
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &w2, &p2));
	ut_release_ok(&p2, BRK_SUCCESS, 0);
	assert_int_equal(queued(b), 0);

	/* every GONE bit set: the head's move stops at NEXT */
	uatomic_set(&c[BRK__PQ_GONE], UINT64_MAX);
	ut_acquire_ok(b, &p);
	join(u, b, &w, BRK_PRIORITY_NORMAL);
	join(u, b, &w2, BRK_PRIORITY_NORMAL);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &w, &p));
	assert_int_equal(queued(b), 0); /* w2 read as left: skipped ... */
	assert_int_equal(brk__bq_turn(u->seg, r, &w2), 1); /* ... it may claim */
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_rc(0, try_claim(b, &w2, &p2));
	ut_release_ok(&p2, BRK_SUCCESS, 0);
}

/* A waiter 64 or more tickets behind the head has no GONE bit: leaving
 * sets none (it is timed out as a dead head when reached). */
static void no_gone_bit_beyond_the_window(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 0);
	uint64_t *c = ctl(u, b);
	struct brk__bq_waiter w[BRK__BQ_GONE_BITS + 1];
	unsigned i;

	for (i = 0; i <= BRK__BQ_GONE_BITS; i++)
		join(u, b, &w[i], BRK_PRIORITY_NORMAL);
	brk__bq_leave(u->seg, brk__brec(b), &w[BRK__BQ_GONE_BITS]);
	assert_int_equal(uatomic_read(&c[BRK__PQ_GONE]), 0);
	brk__bq_leave(u->seg, brk__brec(b), &w[BRK__BQ_GONE_BITS - 1]);
	assert_int_equal(uatomic_read(&c[BRK__PQ_GONE]),
			 1ull << ((BRK__BQ_GONE_BITS - 1) % BRK__BQ_GONE_BITS));
}

/* brk_admit() on a full bulkhead: with the mean hold time known (the
 * hold-time histogram) a wait that would pass the deadline is EXPIRED at
 * once; one that would not is BULKHEAD_FULL with the estimate as
 * wait_ms; without a histogram the wait is unknown (0). */
static void estimated_wait_past_the_deadline_is_expired_at_once(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = bulkhead(u, "svc", 1, 1);
	brk_breaker *blind = bulkhead(u, "blind", 1, 0);
	struct brk_admit_req q;
	struct brk_admission a;
	brk_permit p, hb;
	int i;

	for (i = 0; i < 3; i++) { /* mean hold 100 ms */
		ut_acquire_ok(b, &p);
		ut_advance_ms(u, 100);
		ut_release_ok(&p, BRK_SUCCESS, 0);
	}
	ut_acquire_ok(b, &p);
	ut_acquire_ok(blind, &hb);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.breaker = b;
	q.max_wait_ms = 1000;
	q.deadline_ns = ut_now_ns(u) + 50 * UT_NS_PER_MS;
	ut_rc(-BRK_EEXPIRED, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_EXPIRED);
	assert_int_equal(a.wait_ms, 100);
	assert_string_equal(a.by, "svc");
	q.deadline_ns = ut_now_ns(u) + 500 * UT_NS_PER_MS;
	ut_rc(-BRK_EFULL, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_BULKHEAD_FULL);
	assert_int_equal(a.wait_ms, 100);
	q.breaker = blind;
	q.deadline_ns = ut_now_ns(u) + 50 * UT_NS_PER_MS;
	ut_rc(-BRK_EFULL, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_BULKHEAD_FULL);
	assert_int_equal(a.wait_ms, 0);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_release_ok(&hb, BRK_SUCCESS, 0);
}

/* The estimate: place x mean hold / permits left to the priority. */
static void estimate_is_place_times_mean_hold_over_permits(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;
	brk_permit p;

	ut_cfg(&c);
	c.max_concurrent = 10;
	c.reserve_pct = 20;
	c.hold_histogram = 1;
	b = ut_breaker(u, "svc", &c);
	assert_int_equal(brk__bq_estimate_ns(u->seg, brk__brec(b), 1,
					     BRK_PRIORITY_NORMAL), 0);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 80);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	/* 3rd in line, 80 ms, 8 normal permits: 30 ms; high has 10: 8 ms */
	assert_int_equal(brk__bq_estimate_ns(u->seg, brk__brec(b), 3,
					     BRK_PRIORITY_NORMAL),
			 30 * UT_NS_PER_MS);
	assert_int_equal(brk__bq_estimate_ns(u->seg, brk__brec(b), 1,
					     BRK_PRIORITY_HIGH),
			 8 * UT_NS_PER_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(arrival_order_is_kept),
		UT_TEST(dead_head_is_skipped_after_the_grace_and_no_earlier),
		UT_TEST(a_run_of_dead_tickets_costs_a_few_graces_not_one_each),
		UT_TEST(waiters_reclaim_permits_of_dead_holders),
		UT_TEST(a_garbage_gap_is_drained_by_waiters_that_come_and_go),
		UT_TEST(a_read_only_attach_never_writes_the_queue),
		UT_TEST(a_waiter_that_leaves_is_skipped_at_once),
		UT_TEST(a_head_marked_gone_is_skipped_at_once),
		UT_TEST(a_leaver_that_became_the_head_moves_on_itself),
		UT_TEST(a_leaver_passed_meanwhile_clears_its_bit),
		UT_TEST(a_skipped_live_waiter_can_still_claim),
		UT_TEST(high_priority_passes_the_queue),
		UT_TEST(queued_in_brk_info),
		UT_TEST(release_wakes_only_while_someone_waits),
		UT_TEST(release_does_not_wake_for_garbage_queue_words),
		UT_TEST(garbage_queue_words_are_clamped_and_repaired),
		UT_TEST(no_gone_bit_beyond_the_window),
		UT_TEST(estimated_wait_past_the_deadline_is_expired_at_once),
		UT_TEST(estimate_is_place_times_mean_hold_over_permits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
