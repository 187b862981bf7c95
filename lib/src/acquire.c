/*
 * acquire.c - brk_acquire(): the state machine's answer for one call
 * (admit, probe, or refuse), the bulkhead permit, and the probe lease.
 * Calls down into state.c (cooling, transitions), parents.c, reclaim.c,
 * refuse.c and lease.c.
 */
#include <string.h>

#include "adaptive.h"
#include "ident.h"
#include "fresh.h"
#include "internal.h"
#include "limits.h"
#include "killpoint.h"

/* Bulkhead permits carry tag 0 (layout.h): a permit counts until it is
 * released or its owner dies, whatever resets or transitions happen. */
#define PERMIT_TAG 0u

static int refuse(brk_breaker *b, struct brk_refusal *why, enum brk__ctr c,
		  int code, uint64_t wait_ms, int cause)
{
	return brk__refuse(b, why, c, code, wait_ms, NULL, cause);
}

static uint64_t ns_to_ms_ceil(uint64_t ns)
{
	return ns / 1000000u + (ns % 1000000u != 0);
}

/* After a lease claim (a full-barrier CAS): is the record still the one
 * the handle resolved? The retirer CASes the head before it looks for
 * leases (retire.c), so one of the two sees the other (Dekker). */
static int head_kept(const brk_breaker *b, const struct brk__record *r)
{
	return uatomic_read(&r->head) == uatomic_read(&b->view)->head &&
	       brk__brec(b) == r;
}

/* Permits of max_concurrent @mc that normal priority never takes:
 * floor(mc * reserve_pct / 100) (reserve_pct clamped: an untrusted word). */
static uint32_t reserved_permits(const struct brk__record *r, uint32_t mc)
{
	uint32_t pct = brk__cfg_u32(r, BRK__CFG_RESERVE_PCT, 0, BRK_MAX_RESERVE_PCT);

	return mc * pct / 100u;
}

/* max_concurrent's field in cfg[2]: its top bits (layout.h brk__cfg_pos),
 * tested with the auto bit by one mask: "is there a bulkhead" */
#define MC_SHIFT 57u
_Static_assert(MC_SHIFT + 7u == 64u, "max_concurrent: the top 7 bits of cfg[2]");
#define BULKHEAD_MASK ((0x7fULL << MC_SHIFT) | BRK__CFG_AUTO_BIT)

/* max_concurrent = auto (adaptive.c): the learned limit is the bound of
 * the claim and the count below, as a lowered max_concurrent would be */
static __attribute__((noinline)) uint32_t auto_bound(brk_breaker *b)
{
	return brk__ac_limit(b->seg, brk__brec(b));
}

/* An auto permit: its start time (the latency sample, release.c) and the
 * permits out now (the window's "app-limited" test, adaptive.c). */
static __attribute__((noinline)) void
auto_admitted(brk_breaker *b, brk_permit *p, const struct brk__slots *set)
{
	brk__ac_inflight(b->seg, brk__brec(b),
			 brk__lease_count(set, 0, BRK__PERMIT_SLOTS, PERMIT_TAG));
	/* the clock read for slow_call_ms or hold_histogram, if admit()
	 * made one (start_time() runs first), else one of our own */
	if (!p->start_ns_)
		p->start_ns_ = brk__now(b->seg);
}

/* The claim of a permit under bound @mc (max_concurrent, or the learned
 * limit), into @set's slots; see take_permit(). */
static inline __attribute__((always_inline)) int
claim_permit(brk_breaker *b, brk_permit *p, int prio, uint32_t mc,
	     struct brk__slots *set)
{
	struct brk__record *r = brk__brec(b);
	uint64_t hw;
	uint32_t slot;

	hw = uatomic_read(&r->permit_hw);
	while (hw < mc) { /* before the claim: a counter then sees our slot */
		uint64_t seen = uatomic_cmpxchg(&r->permit_hw, hw, mc);
		if (seen == hw)
			hw = mc;
		else
			hw = seen;
	}
	brk__permit_slots(b->seg, r, set);
	p->permit_ = brk__lease_claim(b->seg, brk__bidx(b), set, mc, PERMIT_TAG,
				      PERMIT_TAG, &slot);
	if (!p->permit_ && brk__caller_reclaim(b)) /* a holder died? */
		p->permit_ = brk__lease_claim(b->seg, brk__bidx(b), set, mc,
					      PERMIT_TAG, PERMIT_TAG, &slot);
	if (!p->permit_)
		return -BRK_EFULL;
	if (!head_kept(b, r)) {
		brk__lease_free(brk__slot(set, slot), p->permit_);
		p->permit_ = 0;
		return BRK__EREHEAD;
	}
	/* Permits claimed while max_concurrent was higher still count: claim
	 * first, then count every slot, and give ours back if that is over
	 * the bound (of racing claimers, the last to claim sees them all).
	 * Only slots below the high-water mark can be taken: read it after
	 * our claim, so it covers every claim made before ours. */
	hw = uatomic_read(&r->permit_hw);
	if (hw > BRK__PERMIT_SLOTS)
		hw = BRK__PERMIT_SLOTS; /* untrusted */
	if (hw > mc &&
	    brk__lease_count(set, mc, (uint32_t)hw, PERMIT_TAG) != 0 &&
	    brk__lease_count(set, 0, BRK__PERMIT_SLOTS, PERMIT_TAG) > mc) {
		brk__lease_free(brk__slot(set, slot), p->permit_);
		p->permit_ = 0;
		return -BRK_EFULL;
	}
	if (prio != BRK_PRIORITY_HIGH) {
		uint32_t keep = reserved_permits(r, mc);
		if (keep &&
		    brk__lease_count(set, 0, hw > mc ? (uint32_t)hw : mc,
				     PERMIT_TAG) > mc - keep) {
			brk__lease_free(brk__slot(set, slot), p->permit_);
			p->permit_ = 0;
			return -BRK_EFULL;
		}
	}
	p->permit_slot_ = (uint16_t)slot;
	return 0;
}

/* Would take_permit() find a permit for @prio now (a count, no claim)?
 * The bulkhead queue's waiters (bulkhead_queue.c) ask before they try,
 * so a waiter that is woken for nothing is not counted as refused again
 * and again. 1 also without a bulkhead. */
int brk__permit_free(brk_segment *s, struct brk__record *r, int prio)
{
	uint64_t cw = uatomic_read(&r->cfg[BRK__CFG_PACE_WORD]);
	uint32_t mc, limit;
	struct brk__slots set;

	if (!(cw & BULKHEAD_MASK))
		return 1;
	/* max_concurrent = auto: the learned limit is the bound */
	mc = (cw & BRK__CFG_AUTO_BIT)
		     ? brk__ac_limit(s, r)
		     : brk__cfg_u32(r, BRK__CFG_MAX_CONCURRENT, 0, BRK__PERMIT_SLOTS);
	limit = mc;
	if (prio != BRK_PRIORITY_HIGH)
		limit -= reserved_permits(r, mc);
	brk__permit_slots(s, r, &set);
	return brk__lease_count(&set, 0, BRK__PERMIT_SLOTS, PERMIT_TAG) < limit;
}

/* max_concurrent = auto: out of line, so a fixed bulkhead's claim stays
 * as it was (bench/callgrind.sh) */
static __attribute__((noinline)) int take_auto(brk_breaker *b, brk_permit *p,
					       int prio)
{
	struct brk__slots set;
	int rc = claim_permit(b, p, prio, auto_bound(b), &set);

	if (rc == 0)
		auto_admitted(b, p, &set);
	return rc;
}

/* Claim a bulkhead permit if the breaker has a bulkhead: slots of the
 * primary block, then of the overflow block, max_concurrent in all. A
 * normal-priority claim is given back when, with it, more than
 * max_concurrent - reserved permits are out (claim, then count, as for a
 * lowered max_concurrent: of racing claimers the last sees them all, and
 * both may give back - a lost race errs towards fewer). 0, -BRK_EFULL, or
 * BRK__EREHEAD (the record is being retired: claim given back). With
 * max_concurrent = auto the bound is the learned limit (take_auto()). */
static int take_permit(brk_breaker *b, brk_permit *p, int prio)
{
	uint64_t cw = uatomic_read(&brk__brec(b)->cfg[BRK__CFG_PACE_WORD]);
	struct brk__slots set;
	uint32_t mc;

	if (!(cw & BULKHEAD_MASK))
		return 0;
	if (cw & BRK__CFG_AUTO_BIT)
		return take_auto(b, p, prio);
	mc = (uint32_t)(cw >> MC_SHIFT);
	if (mc > BRK__PERMIT_SLOTS)
		mc = BRK__PERMIT_SLOTS; /* untrusted */
	return claim_permit(b, p, prio, mc, &set);
}

/* A permit's start time is needed only by the slow-call rule and the
 * hold-time histogram (hold.c): one load and one test of the word that
 * holds both settings; without either, no clock read and 0, which tells
 * brk_release() it has nothing to measure (release.c note_hold()). */
static uint64_t start_time(const brk_breaker *b, uint64_t *now)
{
	uint64_t w = uatomic_read(&brk__brec(b)->cfg[BRK__CFG_WINDOW_WORD]);

	return (w & BRK__CFG_CLOCK_MASK) ? brk__lazy_now(b->seg, now) : 0;
}

static inline __attribute__((always_inline)) int /* see acquire_once() */
admit(brk_breaker *b, brk_permit *p, uint64_t w, uint64_t *now,
      struct brk_refusal *why, int prio)
{
	int rc;

	/* before the permit: an auto bulkhead's claim sets its own start */
	p->start_ns_ = start_time(b, now);
	rc = take_permit(b, p, prio);
	if (rc == BRK__EREHEAD)
		return rc;
	if (rc != 0)
		return refuse(b, why, BRK__CTR_REJ_FULL, -BRK_EFULL, 0,
			      BRK_CAUSE_FULL);
	p->changes_ = BRK__ST_GEN(w); /* the 56-bit generation */
	p->gen_ = (uint32_t)BRK__ST_GEN(w);
	brk__count(brk__brec(b), BRK__CTR_ALLOWED);
	BRK__KILLPOINT(BRK__KP_PERMIT_ADMITTED);
	return 0;
}

/* Reclaim probes of this generation older than probe_timeout_ms, as
 * failed probes. Returns 1 if one was reclaimed (the state may have
 * moved on). */
static int reclaim_expired(brk_segment *s, struct brk__record *r, uint64_t w,
			   uint64_t now, const struct brk__slots *set, uint32_t n)
{
	uint64_t timeout = brk__cfg_ms(r, BRK__CFG_PROBE_TIMEOUT_MS);
	uint64_t rel = brk__rel_ms(s, now), claim;
	uint32_t i;

	if (n > brk__slots_total(set))
		n = brk__slots_total(set);
	for (i = 0; i < n; i++) {
		struct brk__lease *l = brk__slot(set, i);
		uint64_t o = uatomic_read(&l->owner);
		if (o == 0 || BRK__TOK_GEN(o) != BRK__ST_TAG(w))
			continue;
		if (brk__lease_claim_ms(l, o, &claim) != 0)
			continue;
		if (BRK__CLAIM_AGE(rel, claim) >= timeout &&
		    brk__reclaim_probe(s, r, i, o, BRK_EV_RECLAIM_TIMEOUT))
			return 1;
	}
	return 0;
}

/* HALF_OPEN: claim a probe slot. -EAGAIN: state moved, look again. */
__attribute__((noinline)) /* half-open only: keep it off the closed fast path */
static int try_probe(brk_breaker *b, brk_permit *p, uint64_t w, uint64_t *nowp,
		     struct brk_refusal *why, int prio)
{
	uint64_t now = brk__lazy_now(b->seg, nowp);
	struct brk__record *r = brk__brec(b);
	uint32_t n = brk__cfg_u32(r, BRK__CFG_HALF_OPEN_PROBES, 1, BRK__PROBE_SLOTS);
	uint32_t g = BRK__ST_TAG(w), slot;
	struct brk__slots set;
	uint64_t wait;
	int rc;

	/* probe0, then the probe extension (linked before half_open_probes
	 * was raised above 1) */
	brk__probe_slots(b->seg, r, &set);
	/* An expired probe is reclaimed (as failed) whatever the other slots
	 * hold: a free slot must not let a hung probe linger. */
	if (reclaim_expired(b->seg, r, w, now, &set, n))
		return -EAGAIN;
	p->token_ = brk__lease_claim(b->seg, brk__bidx(b), &set, n, g, g, &slot);
	if (!p->token_) {
		if (brk__caller_reclaim(b))
			return -EAGAIN;
		wait = brk__cooling_ms(r, BRK__ST_LEVEL(w));
		if (wait > brk__cfg_ms(r, BRK__CFG_PROBE_TIMEOUT_MS))
			wait = brk__cfg_ms(r, BRK__CFG_PROBE_TIMEOUT_MS);
		return refuse(b, why, BRK__CTR_REJ_OPEN, -BRK_EOPEN, wait,
			      BRK_CAUSE_PROBES_BUSY);
	}
	p->probe_slot_ = (uint16_t)slot;
	if (!head_kept(b, r)) {
		brk__lease_free(brk__slot(&set, slot), p->token_);
		p->token_ = 0;
		return BRK__EREHEAD;
	}
	if (uatomic_read(&r->state) != w) {
		/* A probe of a generation that is already over. */
		brk__lease_free(brk__slot(&set, slot), p->token_);
		p->token_ = 0;
		return -EAGAIN;
	}
	BRK__KILLPOINT(BRK__KP_PROBE_CHECKED);
	if ((rc = take_permit(b, p, prio)) != 0) {
		brk__lease_free(brk__slot(&set, slot), p->token_);
		p->token_ = 0;
		if (rc == BRK__EREHEAD)
			return rc;
		return refuse(b, why, BRK__CTR_REJ_FULL, -BRK_EFULL, 0,
			      BRK_CAUSE_FULL);
	}
	/* Owning the slot is the last check before admission: a caller that
	 * stalled past probe_timeout_ms since its claim may have been
	 * reclaimed as an expired probe (counted as failed), and must not run
	 * as a probe without a lease beside a new one (the spin model's
	 * BUG_ADMIT_UNOWNED). */
	if (uatomic_read(&brk__slot(&set, slot)->owner) != p->token_) {
		if (p->permit_)
			brk__lease_free(brk__permit_at(b->seg, r, p->permit_slot_),
					p->permit_);
		p->permit_ = 0;
		p->token_ = 0;
		return -EAGAIN;
	}
	p->changes_ = BRK__ST_GEN(w);
	p->gen_ = (uint32_t)BRK__ST_GEN(w);
	p->start_ns_ = now;
	brk__count(r, BRK__CTR_PROBES);
	brk__count(r, BRK__CTR_ALLOWED);
	BRK__KILLPOINT(BRK__KP_PROBE_ADMITTED);
	return 0;
}

/* Expired cool-until: clear it once, so later calls need no clock. */
static int cooling(brk_breaker *b, uint64_t *now, uint64_t *left_ms)
{
	uint64_t cu = uatomic_read(&brk__brec(b)->cool_until_ns);

	if (cu == 0)
		return 0;
	if (cu > brk__lazy_now(b->seg, now)) {
		/* at most max_open ahead (a far word is brought back) */
		cu = brk__cool_until_now(brk__brec(b), *now, !b->seg->readonly);
		*left_ms = ns_to_ms_ceil(cu - *now);
		return 1;
	}
	uatomic_cmpxchg(&brk__brec(b)->cool_until_ns, cu, 0);
	return 0;
}

/* The state machine's answer for a call (@now read lazily). Inlined into
 * both entry points, as acquire_once() below. */
static inline __attribute__((always_inline)) int
acquire_state(brk_breaker *b, brk_permit *p, uint64_t *now,
	      struct brk_refusal *why, int prio, int noip)
{
	struct brk__record *r = brk__brec(b);
	uint64_t w, left, rel;
	int tries, rc;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		w = uatomic_read(&r->state);
		if (BRK__ST_STATE(w) == BRK_OPEN) {
			uint64_t until = brk__open_until(r, w);
			rel = brk__rel_ms(b->seg, brk__lazy_now(b->seg, now));
			/* at most max_open ahead (a far word is brought back) */
			if (until > rel && until - rel > brk__cooling_cap(r, UINT64_MAX))
				until = brk__open_until_now(r, w, rel,
							    !b->seg->readonly);
			if (rel < until)
				return refuse(b, why, BRK__CTR_REJ_OPEN, -BRK_EOPEN,
					      until - rel, BRK_CAUSE_OPEN);
			brk__transition(b->seg, r, w, BRK_HALF_OPEN, BRK__ST_LEVEL(w),
				   0, BRK_EV_COOLED, 0);
			BRK__KILLPOINT(BRK__KP_COOLED);
			continue;
		}
		if (BRK__ST_STATE(w) != BRK_CLOSED &&
		    BRK__ST_STATE(w) != BRK_HALF_OPEN) /* unknown: as open */
			return refuse(b, why, BRK__CTR_REJ_OPEN, -BRK_EOPEN, 0,
				      BRK_CAUSE_OPEN);
		if (cooling(b, now, &left))
			return refuse(b, why, BRK__CTR_REJ_COOLING, -BRK_ECOOLING,
				      left, BRK_CAUSE_COOLING);
		if (BRK__ST_STATE(w) == BRK_CLOSED) {
			uint64_t at = 0, wait = 0;

			/* the implicit pace (implicit.c): one load and a test
			 * unless the breaker has one */
			if (!noip &&
			    (uatomic_read(&r->cfg[BRK__CFG_PACE_WORD]) &
			     BRK__CFG_HAS_PACE) &&
			    brk__ipace_acquire(b, &at, &wait) != 0)
				return refuse(b, why, BRK__CTR_REJ_COOLING,
					      -BRK_ECOOLING, ns_to_ms_ceil(wait),
					      BRK_CAUSE_PACED);
			rc = admit(b, p, w, now, why, prio);
			if (rc == 0 && at)
				p->start_ns_ = at; /* the token's time: its
						      answer's cut rule */
			return rc;
		}
		rc = try_probe(b, p, w, now, why, prio);
		if (rc != -EAGAIN)
			return rc;
	}
	return refuse(b, why, BRK__CTR_REJ_OPEN, -BRK_ECONTENDED, 0,
		      BRK_CAUSE_CONTENDED);
}

/* Admit without asking the state machine (disabled, or metrics-only
 * after a refusal): counted, never a probe, never refused. */
static int admit_ungated(brk_breaker *b, brk_permit *p, uint64_t *now,
			 uint32_t flags)
{
	p->token_ = 0;
	p->permit_ = 0;
	p->changes_ = BRK__ST_GEN(uatomic_read(&brk__brec(b)->state));
	p->gen_ = (uint32_t)p->changes_;
	p->start_ns_ = start_time(b, now);
	p->flags_ = flags;
	brk__count(brk__brec(b), BRK__CTR_ALLOWED);
	return 0;
}

static int effective_mode(const brk_breaker *b)
{
	uint64_t m;

	if (b->seg->disabled)
		return BRK_MODE_DISABLED;
	m = uatomic_read(&brk__brec(b)->mode);
	return m > BRK_MODE_METRICS_ONLY ? BRK_MODE_FORCED_OPEN : (int)m;
}

/* Inlined into each entry point (as it was into brk_acquire() alone),
 * with acquire_state() and admit(): out-of-line copies shared by the two
 * callers cost brk_acquire()+brk_release() 24 instructions
 * (bench/callgrind.sh: 364; inlined 342, 340 before the priority). */
static inline __attribute__((always_inline)) int
acquire_once(brk_breaker *b, brk_permit *p, struct brk_refusal *why, int prio);

/* Every call first checks that the handle's record is still the one it
 * resolved (one load, brk__fresh()); a claim that finds the record being
 * retired gives its lease back, and the call starts over on the
 * re-resolved record (a few times, then -BRK_ECONTENDED). Inlined into
 * both entry points, so brk_acquire() passes a constant priority. */
static inline __attribute__((always_inline)) int
acquire_prio(brk_breaker *b, brk_permit *p, struct brk_refusal *why, int prio)
{
	int tries, rc = BRK__EREHEAD;

	if (!b || !p)
		return -EINVAL;
	for (tries = 0; tries < 8 && rc == BRK__EREHEAD; tries++) {
		rc = brk__fresh(b);
		if (rc) {
			memset(p, 0, offsetof(brk_permit, reserved_));
			p->flags_ = BRK__PERMIT_REFUSED;
			p->b_ = b;
			return rc;
		}
		rc = acquire_once(b, p, why, prio);
	}
	if (rc == BRK__EREHEAD) {
		p->flags_ = BRK__PERMIT_REFUSED;
		rc = -BRK_ECONTENDED;
	}
	return rc;
}

int brk_acquire(brk_breaker *b, brk_permit *p, struct brk_refusal *why)
{
	return acquire_prio(b, p, why, BRK_PRIORITY_NORMAL);
}

/* brk_admit()'s acquire: high priority may use the reserved permits;
 * BRK__ACQ_NO_IPACE: brk_admit() reserved on the implicit pace itself. */
int brk__acquire_prio(brk_breaker *b, brk_permit *p, struct brk_refusal *why,
		      int priority)
{
	int prio = priority & ~BRK__ACQ_NO_IPACE;

	return acquire_prio(b, p, why,
			    (priority & BRK__ACQ_NO_IPACE) |
				    (prio == BRK_PRIORITY_HIGH ? BRK_PRIORITY_HIGH
							       : BRK_PRIORITY_NORMAL));
}

static inline __attribute__((always_inline)) int
acquire_once(brk_breaker *b, brk_permit *p, struct brk_refusal *why, int prio)
{
	uint64_t now = 0;
	int noip = prio & BRK__ACQ_NO_IPACE, mode, rc;

	prio &= ~BRK__ACQ_NO_IPACE; /* brk_acquire(): a constant 0, folded */

	/* The reserved tail is the library's own future storage: a release
	 * that uses it will set it here. Zeroing only the fields in use keeps
	 * this a few vector stores (96 bytes made gcc emit rep stos: +30 % on
	 * acquire+release, bench/run.sh). */
	memset(p, 0, offsetof(brk_permit, reserved_));
	p->flags_ = BRK__PERMIT_REFUSED;
	if (b->seg->readonly)
		return -EROFS;
	p->flags_ = 0;
	p->b_ = b;
	p->pid_ = brk__self()->pid;
	mode = effective_mode(b);
	if (mode == BRK_MODE_FORCED_OPEN) {
		p->flags_ = BRK__PERMIT_REFUSED;
		return refuse(b, why, BRK__CTR_REJ_OPEN, -BRK_EOPEN, 0,
			      BRK_CAUSE_FORCED_OPEN);
	}
	if (mode == BRK_MODE_DISABLED) {
		/* An operator's disable turns the breaker off, not the bulkhead
		 * (resilience4j's DISABLED state does not lift its Bulkhead
		 * either): max_concurrent still holds. Only the emergency
		 * kill-switch (BREAKERD_DISABLED=1) admits everything. */
		uint64_t permit = 0, start = 0;
		uint16_t slot = 0;

		if (!b->seg->disabled) {
			rc = take_permit(b, p, prio);
			if (rc == BRK__EREHEAD) {
				p->flags_ = BRK__PERMIT_REFUSED;
				return rc;
			}
			if (rc != 0) {
				p->flags_ = BRK__PERMIT_REFUSED;
				return refuse(b, why, BRK__CTR_REJ_FULL, -BRK_EFULL, 0,
					      BRK_CAUSE_FULL);
			}
			permit = p->permit_;
			slot = p->permit_slot_;
			start = p->start_ns_; /* auto: its sample's start */
		}
		rc = admit_ungated(b, p, &now, BRK__PERMIT_UNGATED);
		p->permit_ = permit;
		p->permit_slot_ = slot;
		if (start)
			p->start_ns_ = start;
		return rc;
	}
	rc = brk__parents_check(b, &now, why);
	if (rc == 0)
		rc = acquire_state(b, p, &now, why, prio, noip);
	if (rc && mode == BRK_MODE_METRICS_ONLY && brk_is_refusal(rc))
		rc = admit_ungated(b, p, &now, 0);
	if (rc) /* a refused permit cannot be released and counted */
		p->flags_ = BRK__PERMIT_REFUSED;
	return rc;
}
