/*
 * idxlock.c - the index lock: creation and retirement change the name
 * index and the free lists one holder at a time; lookups and calls never
 * take it.
 *
 * header.index_lock is 0 or the holder's token BRK__TOK_MAKE(pid, 0,
 * nonce) (taken by CAS 0 -> token); header.index_lock_start its start
 * ticks, written right after the CAS and cleared before the lock word is.
 * A waiter that finds the holder dead (brk__owner_dead(): no such pid, a
 * zombie, or another start time) steals the lock by CAS token -> its own,
 * and repairs what the holder left half done from header.index_intent
 * (BRK__INTENT_*): a run allocated but never published is freed, a
 * retirement that had not reached the index is undone, the free lists'
 * tails are rebuilt. Waits are bounded (2 s of real time, then
 * -BRK_ECONTENDED): a holder that is alive but stopped (SIGSTOP) delays
 * creators and retirers, never a call.
 */
#include <sched.h>
#include <time.h>

#include "ident.h"
#include "internal.h"

#define LOCK_WAIT_NS 2000000000ull

/* Is live record ref + 1 @ref1 in the index? (a scan: repair only) */
static int index_has(brk_segment *s, uint32_t ref1)
{
	uint32_t i;

	for (i = 0; i < s->index_slots; i++) {
		uint64_t w = uatomic_read(&s->index[i]);
		if (w != 0 && w != BRK__IDX_TOMB && BRK__IDX_REC(w) == ref1)
			return 1;
	}
	return 0;
}

static void repair(brk_segment *s)
{
	uint64_t in = uatomic_read(&s->hdr->index_intent);
	uint32_t ref1 = BRK__INTENT_REF1(in);

	brk__free_repair(s);
	if (in == 0 || ref1 == 0 || ref1 > s->arena_units)
		goto done;
	{
		struct brk__record *r = brk__rec(s, ref1 - 1);
		uint64_t head = uatomic_read(&r->head);

		if (BRK__INTENT_OP(in) == BRK__INTENT_RETIRE) {
			uint64_t old = uatomic_read(&s->hdr->index_intent_head);
			uint32_t kind = BRK__HEAD_KIND(old);
			uint64_t gone = BRK__HEAD_MAKE(BRK__KIND_RETIRED,
						       BRK__HEAD_UNITS(old),
						       BRK__HEAD_GEN(old));
			if (head != gone)
				goto done;
			if (index_has(s, ref1)) /* not tombed yet: undo */
				(void)uatomic_cmpxchg(&r->head, gone, old);
			else if (!brk__free_has(s, ref1 - 1, kind))
				brk__free_record(s, ref1 - 1, kind);
		} else if (BRK__INTENT_OP(in) == BRK__INTENT_CREATE) {
			uint32_t kind = BRK__INTENT_KIND(in);
			uint32_t units = brk__kind_units(kind);

			/* the run of a creation that never reached the index
			 * (a bump the holder did not get is past arena_next) */
			if (units == 0 || ref1 - 1 + (uint64_t)units >
					      uatomic_read(&s->hdr->arena_next) ||
			    index_has(s, ref1) || brk__free_has(s, ref1 - 1, kind))
				goto done;
			uatomic_set(&r->head, BRK__HEAD_MAKE(BRK__KIND_RETIRED, units,
							     BRK__HEAD_GEN(head)));
			brk__free_record(s, ref1 - 1, kind);
		}
	}
done:
	uatomic_add_return(&s->hdr->index_seq, 1);
	uatomic_set(&s->hdr->index_intent, 0);
}

/* Is the holder (pid, start ticks @st, 0: not written yet) dead? Our own
 * pid is another thread of ours (alive), unless the start time says it
 * was an earlier process that had our pid. */
static int holder_dead(const struct brk__ident *me, int32_t pid, uint64_t st)
{
	if (pid == me->pid)
		return st != 0 && st != me->start_ticks;
	return brk__owner_dead(pid, st, st != 0);
}

static void pause_a_little(uint32_t round)
{
	struct timespec ts = { 0, 100000 }; /* 100 µs */

	if (round < 64)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}

int brk__index_lock(brk_segment *s)
{
	const struct brk__ident *me = brk__self();
	uint64_t tok = BRK__TOK_MAKE(me->pid, 0, brk__next_nonce() | 1u);
	uint64_t deadline = 0;
	uint32_t round;

	for (round = 0;; round++) {
		uint64_t cur = uatomic_read(&s->hdr->index_lock), st;

		if (cur == 0) {
			if (uatomic_cmpxchg(&s->hdr->index_lock, 0, tok) == 0) {
				uatomic_set(&s->hdr->index_lock_start, me->start_ticks);
				return 0;
			}
			continue;
		}
		st = uatomic_read(&s->hdr->index_lock_start);
		if (uatomic_read(&s->hdr->index_lock) == cur &&
		    holder_dead(me, (int32_t)BRK__TOK_PID(cur), st) &&
		    uatomic_cmpxchg(&s->hdr->index_lock, cur, tok) == cur) {
			uatomic_set(&s->hdr->index_lock_start, me->start_ticks);
			repair(s);
			return 0;
		}
		if (round >= 64) {
			uint64_t now = brk__monotonic_ns(NULL);
			if (!deadline)
				deadline = now + LOCK_WAIT_NS;
			else if (now > deadline)
				return -BRK_ECONTENDED;
		}
		pause_a_little(round);
	}
}

void brk__index_unlock(brk_segment *s)
{
	uatomic_set(&s->hdr->index_intent, 0);
	uatomic_set(&s->hdr->index_lock_start, 0);
	(void)uatomic_xchg(&s->hdr->index_lock, 0); /* full barrier */
}
