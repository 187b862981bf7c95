/*
 * bulkhead_queue.c - the bulkhead's wait queue: brk_admit()'s waiters for
 * a permit are served close to arrival order across processes, and a
 * waiter that dies does not stall the rest (issue 25; docs/design/
 * limits.md "Fair bulkhead waits"; layout.h "The control unit of a permit
 * block").
 *
 * A ticket lock in four words of the primary permit block's control
 * unit. A waiter takes ticket t = fetch-and-add(NEXT). Only the head
 * (t == SERVED) may claim a freed permit; having claimed it, it moves
 * SERVED from t to t + 1 by one CAS, past every following ticket whose
 * GONE bit is set (clearing it), and wakes the others. A waiter that
 * gives up moves SERVED itself if it is the head, else sets its GONE bit;
 * a head that has had a permit free for BRK__BQ_GRACE_NS without taking
 * it is taken for dead and skipped by a waiter behind it. A skipped
 * waiter that is alive after all (t < SERVED) may claim at any time: it
 * came earlier. Plain brk_acquire() never looks at the queue.
 *
 * Who moves SERVED from s: the one whose CAS s -> s + 1 succeeds; the
 * head that claimed or left, the one that cleared s's GONE bit (a CAS of
 * GONE), and a waiter that timed s out may all try, and one wins. A
 * leaver sets its bit, then (a full barrier) reads SERVED; an advancer
 * CASes SERVED, then reads GONE: one of the two sees the other, so a
 * ticket that left is never waited for (Dekker). A bit seen wrong (set
 * for a later ticket, or cleared) costs at most a grace period or an
 * order, never a permit: the queue only orders claims, acquire.c's
 * take_permit() still bounds them.
 *
 * Waiters sleep on the low 32 bits of FUTEX (FUTEX_WAIT without
 * FUTEX_PRIVATE_FLAG: the segment is a MAP_SHARED mapping of one shm
 * object, so the futex keys on the object and works across processes, as
 * event_wait.c's), at most BRK__BQ_POLL_NS at a time. brk_release() of a
 * permit bumps it and wakes them when NEXT != SERVED. A waiter reads the
 * futex word, then (a full barrier) looks for a free permit; a releaser
 * frees its permit (a CAS), then reads NEXT and SERVED: either the
 * releaser sees the ticket and wakes (the FUTEX_WAIT returns at once) or
 * the waiter sees the permit. No wake-up is lost.
 *
 * Calls down into acquire.c (brk__acquire_prio, brk__permit_free),
 * blocks.c and hold.c; release.c and admit.c call it.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "adaptive.h"
#include "bulkhead_queue.h"
#include "killpoint.h"

/* The futex word: the low 32 bits of the FUTEX word (FUTEX_WAIT compares
 * 32 bits at the address). */
static uint32_t *futex_addr(uint64_t *c)
{
	uint32_t *w = (uint32_t *)(void *)&c[BRK__PQ_FUTEX];

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return w + 1;
#else
	return w;
#endif
}

static uint32_t futex_value(uint64_t *c)
{
	return (uint32_t)uatomic_read(&c[BRK__PQ_FUTEX]);
}

static long futex(uint32_t *addr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static void wake(uint64_t *c)
{
	uatomic_add(&c[BRK__PQ_FUTEX], 1);
	(void)futex(futex_addr(c), FUTEX_WAKE, INT32_MAX, NULL);
}

static uint64_t gone_bit(uint64_t t)
{
	return 1ull << (t % BRK__BQ_GONE_BITS);
}

/* Clear ticket @t's GONE bit. 1 if this call cleared it (then the caller
 * owns moving SERVED past @t). */
static int clear_gone(uint64_t *c, uint64_t t)
{
	uint64_t bit = gone_bit(t), g = uatomic_read(&c[BRK__PQ_GONE]);
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES && (g & bit); tries++) {
		uint64_t seen = uatomic_cmpxchg(&c[BRK__PQ_GONE], g, g & ~bit);
		if (seen == g)
			return 1;
		g = seen;
	}
	return 0;
}

/* Move SERVED from @s (the caller owns that move) to the next ticket that
 * has not left, and wake the waiters. 1 if this call moved it. */
static int advance(uint64_t *c, uint64_t s)
{
	unsigned n;
	int moved = 0;

	for (n = 0; n <= BRK__BQ_GONE_BITS; n++) {
		if (uatomic_cmpxchg(&c[BRK__PQ_SERVED], s, s + 1) != s)
			break; /* moved by another: theirs to finish */
		moved = 1;
		s++;
		if ((int64_t)(uatomic_read(&c[BRK__PQ_NEXT]) - s) <= 0)
			break; /* nobody left in the queue */
		if (!clear_gone(c, s))
			break; /* s waits (or its leaver moves on itself) */
	}
	if (moved)
		wake(c);
	return moved;
}

/*
 * The skip run: the high 32 bits of FUTEX (the futex word is the low 32)
 * count the heads skipped as stale since a head last claimed; the next
 * skip passes 2^run tickets (rule 5). A wake's add carries into them
 * once in 2^32 wakes: one skip doubled once, harmless.
 */
#define RUN_SHIFT 32u
#define RUN_MAX 20u /* 2^20 = BRK__BQ_MAX_QUEUED: no larger skip needed */

static unsigned run_of(uint64_t *c)
{
	uint64_t r = uatomic_read(&c[BRK__PQ_FUTEX]) >> RUN_SHIFT;

	return r > RUN_MAX ? RUN_MAX : (unsigned)r;
}

/* Set the run to @run (0: a head claimed) keeping the futex word. */
static void run_set(uint64_t *c, unsigned run)
{
	int i;

	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(&c[BRK__PQ_FUTEX]);
		uint64_t nw = (old & 0xffffffffu) | (uint64_t)run << RUN_SHIFT;

		if (old == nw || uatomic_cmpxchg(&c[BRK__PQ_FUTEX], old, nw) == old)
			return;
	}
}

/*
 * A head @s timed out by @w: skip it, and as many tickets after it as
 * the queue's skip run says (1, 2, 4, ...: each stale skip since a head
 * last claimed doubles the next), never past @w itself. A run of N dead
 * tickets (a storm of SIGKILLs, leavers 64 or more back with no GONE
 * bit, a garbage NEXT) costs about log2(N) + 1 graces in all, even when
 * the waiters that time them out come and go. Live waiters in the run
 * are skipped ones (rule 6: they may claim at any time): an order lost,
 * never a permit. The GONE bits of the tickets passed are cleared (one a
 * leaver set for a ticket of the new window is lost with them: a grace,
 * rule 10). 1 if this call moved SERVED.
 */
static int skip_run(uint64_t *c, uint64_t s, const struct brk__bq_waiter *w)
{
	unsigned run = run_of(c);
	uint64_t n = 1, t;

	if (run && (int64_t)(w->ticket - s) > 1) {
		n = 1ull << run;
		if (n > w->ticket - s)
			n = w->ticket - s;
	}
	if (n == 1) {
		if (!advance(c, s))
			return 0;
	} else {
		if (uatomic_cmpxchg(&c[BRK__PQ_SERVED], s, s + n) != s)
			return 0;
		for (t = s; t != s + n && t - s < BRK__BQ_GONE_BITS; t++)
			(void)clear_gone(c, t);
		if ((int64_t)(uatomic_read(&c[BRK__PQ_NEXT]) - (s + n)) > 0 &&
		    clear_gone(c, s + n))
			(void)advance(c, s + n); /* the new head had left */
		else
			wake(c);
	}
	if (run < RUN_MAX)
		run_set(c, run + 1);
	return 1;
}

int brk__bq_join(brk_segment *s, struct brk__record *r, int prio,
		 struct brk__bq_waiter *w)
{
	uint64_t *c = brk__permit_ctl(s, r), t, srv;

	if (!c)
		return -ENOENT;
	t = uatomic_add_return(&c[BRK__PQ_NEXT], 1) - 1; /* a full barrier */
	srv = uatomic_read(&c[BRK__PQ_SERVED]);
	/* SERVED <= NEXT always, and nobody skips a ticket just taken: a
	 * head past ours, or one further back than any queue, is a garbage
	 * word. Ours becomes the head (tickets between, if any are real,
	 * read as skipped: they may claim at any time). */
	if ((int64_t)(t - srv) < 0 || t - srv > BRK__BQ_MAX_QUEUED) {
		if (uatomic_cmpxchg(&c[BRK__PQ_SERVED], srv, t) == srv)
			uatomic_set(&c[BRK__PQ_GONE], 0);
	}
	w->ticket = t;
	w->prio = prio == BRK_PRIORITY_HIGH ? BRK_PRIORITY_HIGH : BRK_PRIORITY_NORMAL;
	w->acq_flags = 0;
	w->timed_head = 0;
	w->free_since = 0;
	w->timing = 0;
	return 0;
}

int brk__bq_turn(brk_segment *s, struct brk__record *r,
		 const struct brk__bq_waiter *w)
{
	uint64_t *c = brk__permit_ctl(s, r);

	if (!c)
		return -ENOENT;
	if (w->prio == BRK_PRIORITY_HIGH)
		return 1; /* high priority passes the queue */
	return (int64_t)(w->ticket - uatomic_read(&c[BRK__PQ_SERVED])) <= 0;
}

void brk__bq_leave(brk_segment *s, struct brk__record *r,
		   struct brk__bq_waiter *w)
{
	uint64_t *c = brk__permit_ctl(s, r), t = w->ticket, srv;
	int64_t d;

	if (!c)
		return;
	srv = uatomic_read(&c[BRK__PQ_SERVED]);
	d = (int64_t)(t - srv);
	if (d < 0)
		return; /* passed already */
	if (d == 0) {
		(void)advance(c, t);
		return;
	}
	if (d >= (int64_t)BRK__BQ_GONE_BITS)
		return; /* no bit for it: timed out as a dead head when reached */
	uatomic_or(&c[BRK__PQ_GONE], gone_bit(t));
	cmm_smp_mb(); /* the bit before the look at SERVED (see the top) */
	BRK__HOOK(BRK__HOOK_BQ_GONE_SET, s, brk__ref_of(s, r));
	srv = uatomic_read(&c[BRK__PQ_SERVED]);
	if (srv == t) {
		/* it became the head meanwhile: whoever clears the bit moves on */
		if (clear_gone(c, t))
			(void)advance(c, t);
	} else if ((int64_t)(t - srv) < 0) {
		/* passed meanwhile: the bit would stand for ticket t + 64 */
		(void)clear_gone(c, t);
	}
}

/* After a claim: a head moves the queue on; a high-priority waiter that
 * claimed out of turn leaves it; a skipped one has nothing to do. */
static void claimed(brk_segment *s, struct brk__record *r,
		    struct brk__bq_waiter *w)
{
	uint64_t *c = brk__permit_ctl(s, r), srv;

	if (!c)
		return;
	srv = uatomic_read(&c[BRK__PQ_SERVED]);
	if (w->ticket == srv && run_of(c))
		run_set(c, 0); /* a head claimed: the skip run ends */
	if ((int64_t)(w->ticket - srv) >= 0)
		brk__bq_leave(s, r, w); /* a head: advance() */
}

int brk__bq_try_claim(brk_breaker *b, struct brk__bq_waiter *w, brk_permit *p,
		      struct brk_refusal *why)
{
	struct brk__record *r = brk__brec(b);
	int rc = brk__bq_turn(b->seg, r, w);

	/* nothing free: a holder that died? Reclaimed here, by any waiter,
	 * as brk_acquire() does when it finds the bulkhead full (at most
	 * once per 100 ms a segment, reclaim.c): a waiter calls the acquire
	 * path only once it sees a permit free, so nobody else would
	 * (without breakerd's sweep) */
	if (!brk__permit_free(b->seg, r, w->prio) &&
	    (!brk__caller_reclaim(b) || !brk__permit_free(b->seg, r, w->prio)))
		return rc == 0 ? -EAGAIN : -BRK_EFULL;
	if (rc == 0)
		return -EAGAIN;
	rc = brk__acquire_prio(b, p, why, w->prio | w->acq_flags);
	if (rc == 0)
		claimed(b->seg, r, w);
	return rc;
}

int brk__bq_skip_stale(brk_segment *s, struct brk__record *r,
		       struct brk__bq_waiter *w)
{
	uint64_t *c = brk__permit_ctl(s, r), srv, now;

	if (!c)
		return 0;
	srv = uatomic_read(&c[BRK__PQ_SERVED]); /* SERVED first: <= NEXT */
	if ((int64_t)(uatomic_read(&c[BRK__PQ_NEXT]) - srv) <= 0 ||
	    srv == w->ticket) {
		w->timing = 0; /* an empty queue, or we are the head */
		return 0;
	}
	/* a head that left: at once */
	if ((uatomic_read(&c[BRK__PQ_GONE]) & gone_bit(srv)) && clear_gone(c, srv)) {
		w->timing = 0;
		return advance(c, srv);
	}
	/* a head that does not take a free permit: after the grace. The
	 * head's priority is not known: a permit free for normal priority,
	 * which any live head takes. */
	if (!brk__permit_free(s, r, BRK_PRIORITY_NORMAL)) {
		w->timing = 0;
		return 0;
	}
	now = brk__now(s);
	if (!w->timing || w->timed_head != srv) {
		w->timing = 1;
		w->timed_head = srv;
		w->free_since = now;
		return 0;
	}
	if (now < w->free_since || now - w->free_since < BRK__BQ_GRACE_NS)
		return 0;
	w->timing = 0;
	return skip_run(c, srv, w);
}

uint64_t brk__bq_queued(brk_segment *s, const struct brk__record *r)
{
	uint64_t *c = brk__permit_ctl(s, r), srv, d;

	if (!c)
		return 0;
	srv = uatomic_read(&c[BRK__PQ_SERVED]);
	d = uatomic_read(&c[BRK__PQ_NEXT]) - srv;
	if ((int64_t)d <= 0)
		return 0;
	return d > BRK__BQ_MAX_QUEUED ? BRK__BQ_MAX_QUEUED : d;
}

void brk__bq_wake(uint64_t *c)
{
	wake(c);
}

uint64_t brk__bq_estimate_ns(brk_segment *s, struct brk__record *r,
			     uint64_t position, int prio)
{
	struct brk_hold_info h;
	struct brk__ac ac;
	int is_auto = (uatomic_read(&r->cfg[BRK__CFG_PACE_WORD]) & BRK__CFG_AUTO_BIT) != 0;
	uint32_t mc = is_auto ? brk__ac_limit(s, r)
			      : brk__cfg_u32(r, BRK__CFG_MAX_CONCURRENT, 0, BRK__PERMIT_SLOTS);
	uint32_t pct = brk__cfg_u32(r, BRK__CFG_RESERVE_PCT, 0, BRK_MAX_RESERVE_PCT);
	uint32_t limit = prio == BRK_PRIORITY_HIGH ? mc : mc - mc * pct / 100u;
	double hold_ns = 0.0, ns;

	/* the mean hold: the hold histogram's, else (max_concurrent = auto)
	 * the adaptive limit's last window of latencies, else unknown */
	brk__hold_read(s, r, &h);
	if (h.state == BRK_HOLD_RECORDED && h.count > 0)
		hold_ns = (double)h.sum_us * 1000.0 / (double)h.count;
	else if (is_auto && brk__ac_read(s, r, &ac))
		hold_ns = (double)(ac.recent_us ? ac.recent_us
						: (uint64_t)ac.long_us) * 1000.0;
	if (hold_ns <= 0.0 || limit == 0)
		return 0;
	ns = (double)position * hold_ns / (double)limit;
	return ns >= 1.8e19 ? UINT64_MAX : (uint64_t)ns;
}

int brk__bq_wait(brk_breaker *b, brk_permit *p, struct brk_refusal *why,
		 int prio, uint64_t until_ns)
{
	brk_segment *s = b->seg;
	struct brk__record *r = brk__brec(b);
	struct brk__bq_waiter w;
	uint64_t *c = brk__permit_ctl(s, r);
	int rc;

	if (!c || brk__bq_join(s, r, prio & ~BRK__ACQ_NO_IPACE, &w) != 0)
		return -BRK_EFULL; /* no queue: refused as before */
	w.acq_flags = prio & BRK__ACQ_NO_IPACE; /* brk_admit() paces itself */
	for (;;) {
		uint32_t v = futex_value(c);
		struct timespec ts;
		uint64_t now, left;

		cmm_smp_mb(); /* the futex word before the look (see the top) */
		if (brk__brec(b) != r) { /* re-resolved: that queue is gone */
			brk__bq_leave(s, r, &w);
			return -EAGAIN;
		}
		rc = brk__bq_try_claim(b, &w, p, why);
		if (rc == 0)
			return 0;
		if (rc != -BRK_EFULL && rc != -EAGAIN) {
			brk__bq_leave(s, r, &w); /* open, cooling, ...: not ours */
			return rc;
		}
		if (brk__bq_skip_stale(s, r, &w))
			continue; /* the head moved: our turn? */
		now = brk__now(s);
		if (now >= until_ns) {
			brk__bq_leave(s, r, &w);
			return -BRK_EFULL;
		}
		left = until_ns - now;
		if (left > BRK__BQ_POLL_NS)
			left = BRK__BQ_POLL_NS;
		ts.tv_sec = (time_t)(left / 1000000000u);
		ts.tv_nsec = (long)(left % 1000000000u);
		if (futex(futex_addr(c), FUTEX_WAIT, v, &ts) != 0) {
			if (errno == EINTR) {
				brk__bq_leave(s, r, &w);
				return -EINTR;
			}
			/* no futex (a seccomp filter, ENOSYS): poll, do not spin */
			if (errno != EAGAIN && errno != ETIMEDOUT &&
			    nanosleep(&ts, NULL) != 0 && errno == EINTR) {
				brk__bq_leave(s, r, &w);
				return -EINTR;
			}
		}
		/* woken, timed out, or EAGAIN (the word moved before we
		 * slept): look again */
	}
}
