/*
 * release.c - brk_release(): count a permit's outcome in the generation
 * it was admitted under (closed failures and successes, probe verdicts,
 * the window rules, Retry-After), note how long it was held (hold.c),
 * free its leases (waking the bulkhead queue's waiters), and report
 * whether it counted. Calls down into state.c, window.c, lease.c and
 * bulkhead_queue.c.
 */
#include <string.h>

#include "adaptive.h"
#include "bulkhead_queue.h"
#include "cool.h"
#include "ident.h"
#include "fresh.h"
#include "internal.h"
#include "limits.h"
#include "killpoint.h"
#include "window.h"

/* The count of generation @g in counter word @c (0 if it is still an
 * older generation's that the transition's winner has not cleared yet).
 * Returns 0 if @c may belong to a newer generation: do not write. */
static int gc_count(const struct brk__record *r, uint64_t c, uint64_t g,
		    uint64_t *n)
{
	if (BRK__GC_FOR(c, g)) {
		*n = BRK__GC_COUNT(c);
		return 1;
	}
	*n = 0;
	return BRK__ST_GEN(uatomic_read(&r->state)) == g;
}

/* The verdict helpers return 0 (counted, or overtaken by a transition:
 * then the result belongs to the generation before it) or
 * -BRK_ECONTENDED (a bounded CAS loop gave up: not counted). */
static int closed_failure(brk_breaker *b, uint64_t w, uint64_t now)
{
	struct brk__record *r = brk__brec(b);
	uint64_t g = BRK__ST_GEN(w), n;
	uint64_t thr = brk__cfg_u32(r, BRK__CFG_FAILURE_THRESHOLD, 1,
				    BRK_MAX_FAILURE_THRESHOLD);
	int tries;

	if (brk__cfg(r, BRK__CFG_MIN_DISTINCT) >= 2)
		brk__quorum_note(b->seg, r, now);
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t f = uatomic_read(&r->fails);
		if (!gc_count(r, f, g, &n))
			return 0; /* a newer generation's count: ours is over */
		if (uatomic_cmpxchg(&r->fails, f, BRK__GC_MAKE(g, n + 1)) != f)
			continue;
		if (n + 1 >= thr)
			brk__open_by_rule(b->seg, r, w, now, BRK_EV_THRESHOLD);
		return 0;
	}
	return -BRK_ECONTENDED;
}

static int closed_success(brk_breaker *b, uint64_t w)
{
	struct brk__record *r = brk__brec(b);
	uint64_t g = BRK__ST_GEN(w);
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t f = uatomic_read(&r->fails);
		if (!BRK__GC_FOR(f, g) || BRK__GC_COUNT(f) == 0 ||
		    uatomic_cmpxchg(&r->fails, f, BRK__GC_MAKE(g, 0)) == f)
			return 0;
	}
	return -BRK_ECONTENDED;
}

static int probe_success(brk_breaker *b, uint64_t w)
{
	struct brk__record *r = brk__brec(b);
	uint64_t g = BRK__ST_GEN(w), n;
	uint64_t thr = brk__cfg_u32(r, BRK__CFG_SUCCESS_THRESHOLD, 1,
				    BRK_MAX_SUCCESS_THRESHOLD);
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t c = uatomic_read(&r->ho_successes);
		if (!gc_count(r, c, g, &n))
			return 0;
		if (uatomic_cmpxchg(&r->ho_successes, c, BRK__GC_MAKE(g, n + 1)) != c)
			continue;
		if (n + 1 >= thr)
			brk__transition(b->seg, r, w, BRK_CLOSED, 0, 0,
				   BRK_EV_PROBE_OK, n + 1);
		return 0;
	}
	return -BRK_ECONTENDED;
}

/* BRK_THROTTLED is counted in the slot reason NONE would have used. */
_Static_assert(BRK__CTR_THROTTLED == BRK__CTR_FAIL_REASON0 + BRK_REASON_NONE,
	       "throttled aliases the unused reason-NONE failure counter");

/* Retry-After: up to max_wait_ms a shared cool-until (not for
 * BRK_THROTTLED: the pace's cut replaces the cooling); above it, open for
 * that long (only from a counted result: a stale one cannot re-open). */
static void retry_after(brk_breaker *b, int64_t ra, int counted, int outcome,
			uint64_t now)
{
	struct brk__record *r = brk__brec(b);
	uint64_t ms = (uint64_t)ra, w, until;
	int tries;

	if (ms > BRK_MAX_DURATION_MS)
		ms = BRK_MAX_DURATION_MS;
	if (ms <= brk__cfg_ms(r, BRK__CFG_MAX_WAIT_MS)) {
		if (outcome == BRK_THROTTLED)
			return;
		(void)brk__raise_cool_until(b->seg, r, ms, now);
		return;
	}
	if (!counted)
		return;
	ms = brk__cooling_cap(r, ms);
	until = brk__until_add(brk__rel_ms(b->seg, now), ms);
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		w = uatomic_read(&r->state);
		if (BRK__ST_STATE(w) == BRK_OPEN && brk__open_until(r, w) >= until)
			return;
		if (brk__open_for(b->seg, r, w, BRK__ST_LEVEL(w), ms, now,
			     BRK_EV_RETRY_AFTER))
			return;
	}
}

static int is_slow(const struct brk__record *r, const brk_permit *p,
		   uint64_t now)
{
	uint64_t slow = brk__cfg(r, BRK__CFG_SLOW_CALL_MS);

	return slow && p->start_ns_ && now > p->start_ns_ &&
	       now - p->start_ns_ >= brk__ms_to_ns(slow);
}

static void count_outcome(struct brk__record *r, int outcome, int reason)
{
	switch (outcome) {
	case BRK_SUCCESS:
		brk__count(r, BRK__CTR_SUCCESS);
		break;
	case BRK_HEALTHY_ERROR:
		brk__count(r, BRK__CTR_HEALTHY);
		break;
	case BRK_FAILURE:
		brk__count(r, BRK__CTR_FAILURE);
		brk__count(r, (enum brk__ctr)(BRK__CTR_FAIL_REASON0 +
			       (reason == BRK_REASON_NONE ? BRK_REASON_OTHER : reason)));
		break;
	case BRK_REJECTED_REQUEST:
		brk__count(r, BRK__CTR_IGNORED);
		break;
	case BRK_THROTTLED:
		brk__count(r, BRK__CTR_THROTTLED);
		break;
	default:
		brk__count(r, BRK__CTR_CANCELLED);
		break;
	}
}

/* The clock is read on release only where a rule needs it: a success of
 * a closed breaker without window rules reads no clock at all. */
static uint64_t lazy_now(const brk_breaker *b, uint64_t *now)
{
	if (!*now)
		*now = brk__now(b->seg);
	return *now;
}

static int verdict(brk_breaker *b, const brk_permit *p, int outcome,
		   int reason, uint64_t w, uint64_t *now)
{
	struct brk__record *r = brk__brec(b);
	int probe = p->token_ != 0 && BRK__ST_STATE(w) == BRK_HALF_OPEN;
	int closed = !probe && BRK__ST_STATE(w) == BRK_CLOSED;

	count_outcome(r, outcome, reason);
	if (p->flags_ & BRK__PERMIT_UNGATED)
		return 0;
	if (closed && brk__window_active(r) &&
	    (outcome == BRK_SUCCESS || outcome == BRK_HEALTHY_ERROR ||
	     outcome == BRK_FAILURE)) {
		int rule = brk__window_record(b->seg, r, w, lazy_now(b, now),
					      outcome == BRK_FAILURE,
					      is_slow(r, p, lazy_now(b, now)));
		if (rule)
			brk__open_by_rule(b->seg, r, w, *now, rule);
	}
	w = uatomic_read(&r->state); /* the window rule may have opened it */
	if (BRK__ST_GEN(w) != p->changes_)
		return 0;

	if (outcome == BRK_SUCCESS || outcome == BRK_HEALTHY_ERROR) {
		/* With a slow-call rule on, a slow probe is a failed probe: a
		 * breaker opened for slowness must not close on slow calls. */
		if (probe && brk__cfg(r, BRK__CFG_SLOW_CALL_MS) &&
		    is_slow(r, p, lazy_now(b, now)))
			brk__probe_failed(b->seg, r, w, lazy_now(b, now));
		else if (probe)
			return probe_success(b, w);
		else if (closed)
			return closed_success(b, w);
	} else if (outcome == BRK_FAILURE) {
		if (probe)
			brk__probe_failed(b->seg, r, w, lazy_now(b, now));
		else if (closed)
			return closed_failure(b, w, lazy_now(b, now));
	}
	return 0;
}

/* Free the probe slot if we still hold it (@judging: with the mark). */
static void drop_probe(brk_breaker *b, const brk_permit *p, int judging)
{
	if (p->token_)
		brk__lease_free(brk__probe_at(b->seg, brk__brec(b), p->probe_slot_),
				p->token_ | (judging ? BRK__TOK_JUDGING : 0));
}

/* Has this probe's lease been reclaimed, or has it outlived
 * probe_timeout_ms unnoticed (then it is reclaimed now, as a failure)? */
static int probe_lost(brk_breaker *b, const brk_permit *p)
{
	struct brk__record *r = brk__brec(b);
	struct brk__lease *l = brk__probe_at(b->seg, r, p->probe_slot_);
	uint64_t claim, rel;

	if (!l || uatomic_read(&l->owner) != p->token_)
		return 1;
	if (brk__lease_claim_ms(l, p->token_, &claim) != 0)
		return 0;
	rel = brk__rel_ms(b->seg, brk__now(b->seg));
	if (BRK__CLAIM_AGE(rel, claim) < brk__cfg_ms(r, BRK__CFG_PROBE_TIMEOUT_MS))
		return 0;
	brk__reclaim_probe(b->seg, r, p->probe_slot_, p->token_,
			   BRK_EV_RECLAIM_TIMEOUT);
	return 1;
}

/* The permit's hold time into the histogram (hold.c), whatever the
 * verdict, if the breaker's hold_histogram setting is on now: last,
 * after every other step and clock read of the release. A lease
 * reclaimed from a dead owner has no release and no hold. */
static __attribute__((noinline)) /* off the straight line: 4 fewer when off */
void note_hold_on(brk_breaker *b, const brk_permit *p, uint64_t *now)
{
	if (!(uatomic_read(&brk__brec(b)->cfg[BRK__CFG_WINDOW_WORD]) & BRK__CFG_HOLD_BIT))
		return;
	if (lazy_now(b, now) >= p->start_ns_)
		brk__hold_note(b->seg, brk__brec(b), *now - p->start_ns_);
}

/* max_concurrent = auto (adaptive.c): a completion's latency is a sample
 * of the host-wide limit. Successes and healthy errors (the upstream
 * answered) and timeouts (it was at least that slow) are samples; other
 * failures are not (a refused connection is fast and would read as "no
 * queue"). Called only for a permit with a start time: one load and a
 * test of the auto bit here. */
static __attribute__((noinline))
void note_latency(brk_breaker *b, const brk_permit *p, int outcome, int reason,
		  uint64_t *now)
{
	struct brk__record *r = brk__brec(b);

	if (!(uatomic_read(&r->cfg[BRK__CFG_PACE_WORD]) & BRK__CFG_AUTO_BIT) ||
	    !p->permit_)
		return;
	if (!(outcome == BRK_SUCCESS || outcome == BRK_HEALTHY_ERROR ||
	      (outcome == BRK_FAILURE && reason == BRK_REASON_TIMEOUT)))
		return;
	if (lazy_now(b, now) > p->start_ns_)
		brk__ac_sample(b->seg, r, *now - p->start_ns_, *now);
}

/* A permit has a start time only if slow_call_ms or hold_histogram was
 * on when it was admitted (acquire.c start_time()): without, this is the
 * release's whole cost of the histogram, one test of the permit. */
static inline void note_hold(brk_breaker *b, const brk_permit *p, uint64_t *now)
{
	if (p->start_ns_)
		note_hold_on(b, p, now);
}

/*
 * Returns 0 exactly when the verdict was counted, -BRK_ESTALE exactly when
 * it was not because the permit was stale, -BRK_ECONTENDED when a bounded
 * CAS loop of the verdict gave up (not counted either). A probe is marked judging (CAS token -> token | judging)
 * before its verdict is counted: a reclaimer or an expiry that takes the
 * slot before the mark wins, and this release is stale; one that takes it
 * after the mark counts nothing, and this release is counted even though
 * the slot it frees at the end is no longer its own (the final CAS then
 * fails and frees nothing else).
 */
int brk_release(brk_permit *p, int outcome, int reason, int64_t retry_after_ms)
{
	brk_breaker *b;
	struct brk__record *r;
	uint64_t now = 0, w;
	int stale = 0, judging = 0, rc;

	if (!p || !p->b_)
		return -EINVAL;
	b = p->b_;
	r = brk__brec(b);
	if ((p->flags_ & BRK__PERMIT_REFUSED) == BRK__PERMIT_REFUSED)
		return -BRK_ESTALE; /* never admitted: nothing to count */
	/* A record with a lease is never retired; one without may have been
	 * (and its run handed to another name): count only into the record
	 * the name resolves to now. A lease is freed by a CAS of our own
	 * token, harmless on any record. */
	if (brk__fresh(b) != 0) {
		if (!(p->flags_ & BRK__PERMIT_RELEASED) && p->pid_ == brk__self()->pid) {
			p->flags_ |= BRK__PERMIT_RELEASED;
			if (p->permit_)
				brk__lease_free(brk__permit_at(b->seg, r, p->permit_slot_),
						p->permit_);
			if (p->token_)
				brk__lease_free(brk__probe_at(b->seg, r, p->probe_slot_),
						p->token_);
		}
		return -BRK_ESTALE;
	}
	r = brk__brec(b);
	if ((p->flags_ & BRK__PERMIT_RELEASED) || p->pid_ != brk__self()->pid) {
		brk__count(r, BRK__CTR_STALE);
		return -BRK_ESTALE;
	}
	p->flags_ |= BRK__PERMIT_RELEASED;
	if (p->permit_) {
		uint64_t *q;

		if (brk__lease_free(brk__permit_at_ctl(b->seg, r, p->permit_slot_, &q),
				    p->permit_))
			stale = 1;
		/* the bulkhead queue's waiters, if any (bulkhead_queue.c):
		 * two loads when nobody waits */
		if (brk__bq_waiting(q))
			brk__bq_wake(q);
	}
	BRK__KILLPOINT(BRK__KP_REL_PERMIT);
	if (outcome < BRK_SUCCESS || outcome > BRK_THROTTLED ||
	    reason < 0 || reason >= BRK_REASON_COUNT) {
		drop_probe(b, p, 0);
		note_hold(b, p, &now);
		return -EINVAL;
	}
	/* A probe keeps its slot until its verdict is in, so no second probe
	 * of this generation is admitted in between. */
	if (p->token_ && !stale) {
		if (probe_lost(b, p))
			stale = 1;
		else if (uatomic_cmpxchg(&brk__probe_at(b->seg, r, p->probe_slot_)->owner,
					 p->token_, p->token_ | BRK__TOK_JUDGING) !=
			 p->token_)
			stale = 1; /* reclaimed just now */
		else
			judging = 1;
	}
	BRK__KILLPOINT(BRK__KP_REL_CHECKED);
	/* the implicit pace learns from the answer; a rate-limit answer is
	 * then throttled (implicit.c). A success or healthy error matters
	 * only to a breaker that has one: one load and a test, no call, on
	 * the common path (a call per release cost 46 instructions of an
	 * acquire+release: 422 -> 376, bench/callgrind.sh) */
	if (!(p->flags_ & BRK__PERMIT_UNGATED) &&
	    (outcome == BRK_FAILURE ||
	     ((outcome == BRK_SUCCESS || outcome == BRK_HEALTHY_ERROR) &&
	      (uatomic_read(&r->cfg[BRK__CFG_PACE_WORD]) & BRK__CFG_HAS_PACE))))
		brk__ipace_release(b, p->start_ns_, &outcome, reason, retry_after_ms);
	w = uatomic_read(&r->state);
	if (stale || BRK__ST_GEN(w) != p->changes_) {
		drop_probe(b, p, judging);
		if (retry_after_ms > 0 && !(p->flags_ & BRK__PERMIT_UNGATED))
			retry_after(b, retry_after_ms, 0, outcome, lazy_now(b, &now));
		brk__count(r, BRK__CTR_STALE);
		note_hold(b, p, &now);
		return -BRK_ESTALE;
	}
	rc = verdict(b, p, outcome, reason, w, &now);
	BRK__KILLPOINT(BRK__KP_REL_VERDICT);
	drop_probe(b, p, judging); /* fails harmlessly if taken meanwhile */
	BRK__KILLPOINT(BRK__KP_REL_FREED);
	if (retry_after_ms > 0 && !(p->flags_ & BRK__PERMIT_UNGATED))
		retry_after(b, retry_after_ms, rc == 0, outcome,
			    lazy_now(b, &now));
	if (p->start_ns_)
		note_latency(b, p, outcome, reason, &now);
	note_hold(b, p, &now);
	return rc;
}
