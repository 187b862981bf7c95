/*
 * bulkhead_queue.h - the bulkhead's wait queue (bulkhead_queue.c; private;
 * docs/design/limits.md "Fair bulkhead waits").
 *
 * The primitives take the clock from the segment (brk__now()) and never
 * sleep, so unit tests on the fake clock drive them one step at a time;
 * brk__bq_wait() is the sleeping loop brk_admit() uses on the real clock.
 */
#ifndef BRK_BULKHEAD_QUEUE_H
#define BRK_BULKHEAD_QUEUE_H

#include "internal.h"

/* A head that has had a permit free for this long without taking it (and
 * without leaving) is taken for dead and skipped (docs/design/limits.md
 * "Fair bulkhead waits": why 50 ms). */
#define BRK__BQ_GRACE_NS (50ull * 1000000u)
/* A sleeping waiter looks again at least this often (a wake-up it did not
 * get: a skipped waiter, a dead head to time, a permit freed by the
 * reclaim of a dead holder). */
#define BRK__BQ_POLL_NS (10ull * 1000000u)
/* More waiters than this in one queue are not believed: NEXT - SERVED
 * beyond it (or SERVED past NEXT) is a garbage word, clamped by readers
 * and repaired by the next waiter that joins. */
#define BRK__BQ_MAX_QUEUED (1u << 20)
/* GONE has one bit per ticket in [SERVED, SERVED + BRK__BQ_GONE_BITS). */
#define BRK__BQ_GONE_BITS 64u

/* One waiter's place in the queue (the caller's memory, not shared). */
struct brk__bq_waiter {
	uint64_t ticket;
	int prio;             /* enum brk_priority: HIGH claims out of turn */
	int acq_flags;        /* BRK__ACQ_* for the claim's acquire (brk_admit()
	                         reserved the implicit pace itself) */
	uint64_t timed_head;  /* the head this waiter is timing ... */
	uint64_t free_since;  /* ... since this segment time (ns) with a
	                         permit free */
	int timing;           /* 0: not timing a head */
};

/* Take a ticket for @prio (fetch-and-add NEXT; a garbage SERVED is
 * repaired to it). 0, or -ENOENT: @r has no primary permit block. */
int brk__bq_join(brk_segment *s, struct brk__record *r, int prio,
		 struct brk__bq_waiter *w);
/* 1 if @w may claim a permit now: it is the head (ticket == SERVED), a
 * head that was skipped (ticket < SERVED: it came earlier), or high
 * priority; 0 if others are before it; -ENOENT as above. */
int brk__bq_turn(brk_segment *s, struct brk__record *r,
		 const struct brk__bq_waiter *w);
/* Try to claim a permit of @b for @w: -EAGAIN if not its turn,
 * -BRK_EFULL if no permit is free (not asked: not counted again), else
 * the acquire's result. On 0 the queue moves on (a head advances SERVED
 * past itself and any tickets that left, and wakes the others; a
 * high-priority waiter out of turn leaves). */
int brk__bq_try_claim(brk_breaker *b, struct brk__bq_waiter *w, brk_permit *p,
		      struct brk_refusal *why);
/* @w gives up (deadline, max_wait, a signal, a refusal that is not
 * BULKHEAD_FULL): a head advances SERVED itself; a waiter behind it sets
 * its GONE bit (if within BRK__BQ_GONE_BITS of the head), so it is
 * skipped at once when reached. */
void brk__bq_leave(brk_segment *s, struct brk__record *r,
		   struct brk__bq_waiter *w);
/* @w watches the head: a head whose GONE bit is set is skipped at once;
 * one that has had a permit free and not moved for BRK__BQ_GRACE_NS of
 * the segment clock is taken for dead and skipped (it may still claim
 * if alive). 1 if SERVED moved. */
int brk__bq_skip_stale(brk_segment *s, struct brk__record *r,
		       struct brk__bq_waiter *w);
/* Waiters in @r's queue (NEXT - SERVED, clamped to [0,
 * BRK__BQ_MAX_QUEUED]); 0 without a permit block. */
uint64_t brk__bq_queued(brk_segment *s, const struct brk__record *r);
/* Does anyone wait in the queue of control unit @c (NULL: no queue)?
 * brk_release() asks after it freed a permit (two loads), and then
 * wakes them: brk__bq_wake() bumps the futex word, FUTEX_WAKE. */
static inline int brk__bq_waiting(uint64_t *c)
{
	uint64_t d;

	if (!c)
		return 0;
	/* SERVED first (it only grows towards NEXT); words no queue can
	 * have (SERVED past NEXT, more than BRK__BQ_MAX_QUEUED waiters) are
	 * garbage, not waiters: no wake (a syscall) on every release for
	 * them; the next waiter that joins repairs them */
	d = uatomic_read(&c[BRK__PQ_SERVED]);
	d = uatomic_read(&c[BRK__PQ_NEXT]) - d;
	return (int64_t)d > 0 && d <= BRK__BQ_MAX_QUEUED;
}
void brk__bq_wake(uint64_t *c);
/* The estimated wait of the @position-th waiter (1: the head) for
 * @prio: position x mean hold time / permits, the mean from the hold-time
 * histogram (hold.c). 0: unknown (no histogram, nothing recorded). */
uint64_t brk__bq_estimate_ns(brk_segment *s, struct brk__record *r,
			     uint64_t position, int prio);
/* brk_admit()'s wait (real clock only): join, then claim in turn,
 * sleeping on the queue's futex word until @until_ns (segment clock).
 * 0 (a permit held in @p), -BRK_EFULL (@until_ns came first),
 * -EINTR (a signal), or a refusal of the breaker that is not the
 * bulkhead's (open, cooling: the wait is left). Holds no ticket after. */
int brk__bq_wait(brk_breaker *b, brk_permit *p, struct brk_refusal *why,
		 int prio, uint64_t until_ns);

#endif /* BRK_BULKHEAD_QUEUE_H */
