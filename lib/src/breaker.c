/*
 * breaker.c - the circuit-breaker state machine over one shm state word.
 *
 * state word = state:2 | level:6 | gen:56 (layout.h). Every transition is
 * one CAS that bumps gen, so a reader never sees half of one and a result
 * admitted under an older gen is not counted. An OPEN state's deadline is
 * written, tagged with its generation, before that CAS (open_until[]).
 *
 * Nothing aliases (issue 9). The generation is 56 bits, so a state word
 * never repeats; every shorter tag (counters 44 bits, window buckets 16,
 * probe tokens 17, deadline slots 18) is backed by "clear on
 * transition": the winner of each transition resets the words that
 * belong to older generations (after_transition()), so a tag never has to
 * tell apart two generations far apart, and a late writer that read an
 * older state cannot add to a newer count (its tag differs). We chose
 * clearing over tags of the full 56 bits because a count and its tag
 * must stay one word (one CAS), and 44 + 20 bits is what fits.
 *
 *   CLOSED --failure_threshold consecutive failures--> OPEN(cooling(level))
 *   OPEN --cooling period over, first caller--> HALF_OPEN
 *   HALF_OPEN --success_threshold probe successes--> CLOSED, level = 0
 *   HALF_OPEN --failed or reclaimed probe--> OPEN(cooling(level + 1))
 *   cooling(level) = min(open_ms * 2^level, max_open_ms)
 *
 * (Nygard, "Release It!"; generations as in sony/gobreaker; exponential
 * open periods as Semian's and resilience4j's IntervalFunction.)
 */
#include <string.h>

#include "abi.h"
#include "ident.h"
#include "internal.h"
#include "killpoint.h"
#include "window.h"

#define PERMIT_RELEASED 1u
#define PERMIT_UNGATED 2u /* admitted by a disabled breaker: no verdict */
#define PERMIT_REFUSED (PERMIT_RELEASED | 4u) /* never admitted */

/* Bulkhead permits carry tag 0 (layout.h): a permit counts until it is
 * released or its owner dies, whatever resets or transitions happen. */
#define PERMIT_TAG 0u

static uint32_t cfg_u32(const struct brk__record *r, enum brk__cfg k,
			uint32_t lo, uint32_t hi)
{
	uint64_t v = brk__cfg(r, k);

	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

static uint64_t cfg_ms(const struct brk__record *r, enum brk__cfg k)
{
	uint64_t v = brk__cfg(r, k);

	return v > BRK_MAX_DURATION_MS ? BRK_MAX_DURATION_MS : v;
}

uint64_t brk__cooling_ms(const struct brk__record *r, uint32_t level)
{
	uint64_t open = cfg_ms(r, BRK__CFG_OPEN_MS);
	uint64_t max = cfg_ms(r, BRK__CFG_MAX_OPEN_MS);

	if (open == 0)
		open = 1;
	if (max < open)
		max = open;
	if (level >= 63 || open > (max >> level))
		return max;
	return open << level;
}

static void record_event(brk_segment *s, struct brk__record *r, int from,
			 int to, int reason, int32_t pid, uint64_t value)
{
	char name[BRK__NAME_BYTES];

	if (brk__record_name(r, name) != 0)
		strcpy(name, "?");
	brk__event(s, brk__rec_index(s, r), name, from, to, reason, pid, value);
}

uint64_t brk__open_until(const struct brk__record *r, uint64_t w)
{
	uint64_t g = BRK__ST_GEN(w), u;

	cmm_smp_rmb(); /* the slot was written before the state word */
	u = uatomic_read(&r->open_until[g & 1]);
	return BRK__UT_FOR(u, g) ? BRK__UT_UNTIL(u) : 0;
}

/*
 * Put the deadline @until of OPEN(g + 1) (g: the generation of @old) into
 * its slot before the state CAS, so a reader of OPEN(g + 1) always finds
 * it. A slot already tagged g + 1 holds the deadline of an opener racing
 * us from the same state: the later of the two is kept (so whichever
 * opener wins the state CAS, the breaker stays open at least as long as
 * each of them asked; an opener that loses the race may so lengthen the
 * winner's open period, never shorten it). Returns 0 if @old is no longer
 * the state (the transition would fail anyway), else 1.
 */
static int propose_until(struct brk__record *r, uint64_t old, uint64_t until)
{
	uint64_t ng = (BRK__ST_GEN(old) + 1) & BRK__GEN_MASK;
	uint64_t *slot = &r->open_until[ng & 1];
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t u = uatomic_read(slot);
		if (BRK__UT_FOR(u, ng) && BRK__UT_UNTIL(u) >= until)
			return 1;
		if (!BRK__UT_FOR(u, ng) && uatomic_read(&r->state) != old)
			return 0;
		if (uatomic_cmpxchg(slot, u, BRK__UT_MAKE(ng, until)) == u)
			return 1;
	}
	return 0;
}

/* A gen-tagged counter that is not of generation @g becomes (g, 0). */
static void counter_clear(uint64_t *c, uint64_t g)
{
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t x = uatomic_read(c);
		if (BRK__GC_FOR(x, g) ||
		    uatomic_cmpxchg(c, x, BRK__GC_MAKE(g, 0)) == x)
			return;
	}
}

/*
 * Clear on transition: the winner of the CAS to @nw resets what belongs
 * to older generations, with one CAS per word that leaves alone anything
 * already of the new generation (a racing caller of the new generation
 * loses nothing). A winner that dies before this leaves old words that
 * the next transition's winner clears; their tags do not match the new
 * generation meanwhile. Bulkhead permits are not touched (a permit counts
 * until released or its owner dies).
 */
static void after_transition(struct brk__record *r, uint64_t nw)
{
	uint64_t g = BRK__ST_GEN(nw), *next = &r->open_until[(g + 1) & 1], u;
	uint32_t i, tag = BRK__ST_TAG(nw);

	u = uatomic_read(next); /* OPEN(g - 1)'s slot: keep only g + 1's */
	if (u && !BRK__UT_FOR(u, (g + 1) & BRK__GEN_MASK))
		uatomic_cmpxchg(next, u, 0);
	counter_clear(&r->fails, g);
	counter_clear(&r->ho_successes, g);
	for (i = 0; i < BRK__PROBE_SLOTS; i++) { /* stale probe leases */
		uint64_t o = uatomic_read(&r->probes[i].owner);
		if (o != 0 && BRK__TOK_GEN(o) != tag)
			uatomic_cmpxchg(&r->probes[i].owner, o, 0);
	}
	brk__window_clear(r, g);
}

/* One CAS from @old to (@to, @level, gen + 1), an OPEN state with the
 * deadline @until (ms since the segment epoch). 1 if we did it. */
static int transition(brk_segment *s, struct brk__record *r, uint64_t old,
		      int to, uint32_t level, uint64_t until, int reason,
		      uint64_t value)
{
	uint64_t nw = BRK__ST_MAKE(to, level, BRK__ST_GEN(old) + 1);

	if (to == BRK_OPEN && !propose_until(r, old, until))
		return 0;
	if (uatomic_cmpxchg(&r->state, old, nw) != old)
		return 0;
	after_transition(r, nw);
	brk__count(r, BRK__CTR_TRANSITIONS);
	record_event(s, r, BRK__ST_STATE(old), to, reason, brk__self()->pid,
		     value);
	return 1;
}

static int open_for(brk_segment *s, struct brk__record *r, uint64_t old,
		    uint32_t level, uint64_t ms, uint64_t now, int reason)
{
	uint64_t until = brk__until_add(brk__rel_ms(s, now), ms);

	return transition(s, r, old, BRK_OPEN, level, until, reason, ms);
}

/* A failed (or reclaimed) probe: re-open with the cooling doubled. */
static void probe_failed(brk_segment *s, struct brk__record *r, uint64_t w,
			 uint64_t now)
{
	uint32_t level = BRK__ST_LEVEL(w);

	if (level < BRK__LEVEL_MAX)
		level++;
	open_for(s, r, w, level, brk__cooling_ms(r, level), now,
		 BRK_EV_PROBE_FAILED);
}

int brk__reclaim_probe(brk_segment *s, struct brk__record *r, uint32_t slot,
		       uint64_t owner, int reason)
{
	uint64_t w;

	if (slot >= BRK__PROBE_SLOTS ||
	    uatomic_cmpxchg(&r->probes[slot].owner, owner, 0) != owner)
		return 0;
	brk__count(r, BRK__CTR_RECLAIMED);
	w = uatomic_read(&r->state);
	record_event(s, r, BRK__ST_STATE(w), BRK__ST_STATE(w), reason,
		     (int32_t)BRK__TOK_PID(owner), 0);
	/* A judging probe's owner is counting its own verdict (or died doing
	 * so): freeing its slot counts nothing, so no probe counts twice. */
	if (!(owner & BRK__TOK_JUDGING) && BRK__ST_STATE(w) == BRK_HALF_OPEN &&
	    BRK__ST_TAG(w) == BRK__TOK_GEN(owner))
		probe_failed(s, r, w, brk__now(s));
	return 1;
}

/* Jittered wait: [base, base + min(base / 4, 5 s)]. */
static uint64_t jitter_ms(brk_segment *s, uint64_t base)
{
	uint64_t span = base / 4;

	if (span > 5000)
		span = 5000;
	return brk__sat_add(base, brk__random(s) % (span + 1));
}

int brk__refuse(brk_breaker *b, struct brk_refusal *why, enum brk__ctr c,
		int code, uint64_t wait_ms, const struct brk__record *by,
		int cause)
{
	brk__count(b->rec, c);
	if (why) {
		memset(why, 0, sizeof(*why)); /* reserved_ too */
		why->cause = cause;
		why->wait_ms = wait_ms ? jitter_ms(b->seg, wait_ms) : 0;
		if (!by || brk__record_name(by, why->by) != 0)
			memcpy(why->by, b->name, sizeof(why->by));
	}
	return code;
}

static int refuse(brk_breaker *b, struct brk_refusal *why, enum brk__ctr c,
		  int code, uint64_t wait_ms, int cause)
{
	return brk__refuse(b, why, c, code, wait_ms, NULL, cause);
}

static uint64_t ns_to_ms_ceil(uint64_t ns)
{
	return ns / 1000000u + (ns % 1000000u != 0);
}

/* Claim a bulkhead permit if the breaker has a bulkhead. */
static int take_permit(brk_breaker *b, brk_permit *p)
{
	struct brk__record *r = b->rec;
	uint32_t mc = cfg_u32(r, BRK__CFG_MAX_CONCURRENT, 0, BRK__PERMIT_SLOTS);
	uint64_t hw = uatomic_read(&r->permit_hw);
	uint32_t slot;

	if (mc == 0)
		return 0;
	while (hw < mc) { /* before the claim: a counter then sees our slot */
		uint64_t seen = uatomic_cmpxchg(&r->permit_hw, hw, mc);
		if (seen == hw)
			hw = mc;
		else
			hw = seen;
	}
	p->permit_ = brk__lease_claim(b->seg, r->permits, mc, PERMIT_TAG,
				      PERMIT_TAG, &slot);
	if (!p->permit_ && brk__caller_reclaim(b)) /* a holder died? */
		p->permit_ = brk__lease_claim(b->seg, r->permits, mc, PERMIT_TAG,
					      PERMIT_TAG, &slot);
	if (!p->permit_)
		return -BRK_EFULL;
	/* Permits claimed while max_concurrent was higher still count: claim
	 * first, then count every slot, and give ours back if that is over
	 * the bound (of racing claimers, the last to claim sees them all).
	 * Only slots below the high-water mark can be taken: read it after
	 * our claim, so it covers every claim made before ours. */
	hw = uatomic_read(&r->permit_hw);
	if (hw > BRK__PERMIT_SLOTS)
		hw = BRK__PERMIT_SLOTS; /* untrusted */
	if (hw > mc &&
	    brk__lease_count(r->permits + mc, (uint32_t)hw - mc, PERMIT_TAG) != 0 &&
	    brk__lease_count(r->permits, BRK__PERMIT_SLOTS, PERMIT_TAG) > mc) {
		brk__lease_free(&r->permits[slot], p->permit_);
		p->permit_ = 0;
		return -BRK_EFULL;
	}
	p->permit_slot_ = (uint16_t)slot;
	return 0;
}

/* A permit's start time is needed only by the slow-call rule. */
static uint64_t start_time(const brk_breaker *b, uint64_t *now)
{
	return brk__cfg(b->rec, BRK__CFG_SLOW_CALL_MS)
		       ? brk__lazy_now(b->seg, now) : *now;
}

static int admit(brk_breaker *b, brk_permit *p, uint64_t w, uint64_t *now,
		 struct brk_refusal *why)
{
	if (take_permit(b, p) != 0)
		return refuse(b, why, BRK__CTR_REJ_FULL, -BRK_EFULL, 0,
			      BRK_CAUSE_FULL);
	p->changes_ = BRK__ST_GEN(w); /* the 56-bit generation */
	p->gen_ = (uint32_t)BRK__ST_GEN(w);
	p->start_ns_ = start_time(b, now);
	brk__count(b->rec, BRK__CTR_ALLOWED);
	BRK__KILLPOINT(BRK__KP_PERMIT_ADMITTED);
	return 0;
}

/* Reclaim probes of this generation older than probe_timeout_ms, as
 * failed probes. Returns 1 if one was reclaimed (the state may have
 * moved on). */
static int reclaim_expired(brk_segment *s, struct brk__record *r, uint64_t w,
			   uint64_t now, uint32_t n)
{
	uint64_t timeout = cfg_ms(r, BRK__CFG_PROBE_TIMEOUT_MS);
	uint64_t rel = brk__rel_ms(s, now), claim;
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint64_t o = uatomic_read(&r->probes[i].owner);
		if (o == 0 || BRK__TOK_GEN(o) != BRK__ST_TAG(w))
			continue;
		if (brk__lease_claim_ms(&r->probes[i], o, &claim) != 0)
			continue;
		if (BRK__CLAIM_AGE(rel, claim) >= timeout &&
		    brk__reclaim_probe(s, r, i, o, BRK_EV_RECLAIM_TIMEOUT))
			return 1;
	}
	return 0;
}

/* HALF_OPEN: claim a probe slot. -EAGAIN: state moved, look again. */
static int try_probe(brk_breaker *b, brk_permit *p, uint64_t w, uint64_t *nowp,
		     struct brk_refusal *why)
{
	uint64_t now = brk__lazy_now(b->seg, nowp);
	struct brk__record *r = b->rec;
	uint32_t n = cfg_u32(r, BRK__CFG_HALF_OPEN_PROBES, 1, BRK__PROBE_SLOTS);
	uint32_t g = BRK__ST_TAG(w), slot;
	uint64_t wait;

	/* An expired probe is reclaimed (as failed) whatever the other slots
	 * hold: a free slot must not let a hung probe linger. */
	if (reclaim_expired(b->seg, r, w, now, n))
		return -EAGAIN;
	p->token_ = brk__lease_claim(b->seg, r->probes, n, g, g, &slot);
	if (!p->token_) {
		if (brk__caller_reclaim(b))
			return -EAGAIN;
		wait = brk__cooling_ms(r, BRK__ST_LEVEL(w));
		if (wait > cfg_ms(r, BRK__CFG_PROBE_TIMEOUT_MS))
			wait = cfg_ms(r, BRK__CFG_PROBE_TIMEOUT_MS);
		return refuse(b, why, BRK__CTR_REJ_OPEN, -BRK_EOPEN, wait,
			      BRK_CAUSE_PROBES_BUSY);
	}
	p->probe_slot_ = (uint16_t)slot;
	if (uatomic_read(&r->state) != w) {
		/* A probe of a generation that is already over. */
		brk__lease_free(&r->probes[slot], p->token_);
		p->token_ = 0;
		return -EAGAIN;
	}
	BRK__KILLPOINT(BRK__KP_PROBE_CHECKED);
	if (take_permit(b, p) != 0) {
		brk__lease_free(&r->probes[slot], p->token_);
		p->token_ = 0;
		return refuse(b, why, BRK__CTR_REJ_FULL, -BRK_EFULL, 0,
			      BRK_CAUSE_FULL);
	}
	/* Owning the slot is the last check before admission: a caller that
	 * stalled past probe_timeout_ms since its claim may have been
	 * reclaimed as an expired probe (counted as failed), and must not run
	 * as a probe without a lease beside a new one (the spin model's
	 * BUG_ADMIT_UNOWNED). */
	if (uatomic_read(&r->probes[slot].owner) != p->token_) {
		if (p->permit_)
			brk__lease_free(&r->permits[p->permit_slot_], p->permit_);
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
	uint64_t cu = uatomic_read(&b->rec->cool_until_ns);

	if (cu == 0)
		return 0;
	if (cu > brk__lazy_now(b->seg, now)) {
		*left_ms = ns_to_ms_ceil(cu - *now);
		return 1;
	}
	uatomic_cmpxchg(&b->rec->cool_until_ns, cu, 0);
	return 0;
}

/* The state machine's answer for a call (@now read lazily). */
static int acquire_state(brk_breaker *b, brk_permit *p, uint64_t *now,
			 struct brk_refusal *why)
{
	struct brk__record *r = b->rec;
	uint64_t w, left, rel;
	int tries, rc;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		w = uatomic_read(&r->state);
		if (BRK__ST_STATE(w) == BRK_OPEN) {
			uint64_t until = brk__open_until(r, w);
			rel = brk__rel_ms(b->seg, brk__lazy_now(b->seg, now));
			if (rel < until)
				return refuse(b, why, BRK__CTR_REJ_OPEN, -BRK_EOPEN,
					      until - rel, BRK_CAUSE_OPEN);
			transition(b->seg, r, w, BRK_HALF_OPEN, BRK__ST_LEVEL(w),
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
		if (BRK__ST_STATE(w) == BRK_CLOSED)
			return admit(b, p, w, now, why);
		rc = try_probe(b, p, w, now, why);
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
	p->changes_ = BRK__ST_GEN(uatomic_read(&b->rec->state));
	p->gen_ = (uint32_t)p->changes_;
	p->start_ns_ = start_time(b, now);
	p->flags_ = flags;
	brk__count(b->rec, BRK__CTR_ALLOWED);
	return 0;
}

static int effective_mode(const brk_breaker *b)
{
	uint64_t m;

	if (b->seg->disabled)
		return BRK_MODE_DISABLED;
	m = uatomic_read(&b->rec->mode);
	return m > BRK_MODE_METRICS_ONLY ? BRK_MODE_FORCED_OPEN : (int)m;
}

int brk_acquire(brk_breaker *b, brk_permit *p, struct brk_refusal *why)
{
	uint64_t now = 0;
	int mode, rc;

	if (!b || !p)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->flags_ = PERMIT_REFUSED;
	if (b->seg->readonly)
		return -EROFS;
	p->flags_ = 0;
	p->b_ = b;
	p->pid_ = brk__self()->pid;
	mode = effective_mode(b);
	if (mode == BRK_MODE_FORCED_OPEN) {
		p->flags_ = PERMIT_REFUSED;
		return refuse(b, why, BRK__CTR_REJ_OPEN, -BRK_EOPEN, 0,
			      BRK_CAUSE_FORCED_OPEN);
	}
	if (mode == BRK_MODE_DISABLED)
		return admit_ungated(b, p, &now, PERMIT_UNGATED);
	rc = brk__parents_check(b, &now, why);
	if (rc == 0)
		rc = acquire_state(b, p, &now, why);
	if (rc && mode == BRK_MODE_METRICS_ONLY && brk_is_refusal(rc))
		rc = admit_ungated(b, p, &now, 0);
	if (rc) /* a refused permit cannot be released and counted */
		p->flags_ = PERMIT_REFUSED;
	return rc;
}

/* ---- release ---------------------------------------------------------- */

void brk__open_by_rule(brk_segment *s, struct brk__record *r, uint64_t w,
		       uint64_t now, int reason)
{
	uint64_t k = brk__cfg(r, BRK__CFG_MIN_DISTINCT);
	uint32_t level = BRK__ST_LEVEL(w);
	uint64_t ms = brk__cooling_ms(r, level);

	if (k >= 2 && brk__quorum_count(s, r, now) < k)
		return; /* one broken worker cannot open it for everyone */
	transition(s, r, w, BRK_OPEN, level,
		   brk__until_add(brk__rel_ms(s, now), ms), reason, ms);
}

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
	struct brk__record *r = b->rec;
	uint64_t g = BRK__ST_GEN(w), n;
	uint64_t thr = cfg_u32(r, BRK__CFG_FAILURE_THRESHOLD, 1, 1000000);
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
	struct brk__record *r = b->rec;
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
	struct brk__record *r = b->rec;
	uint64_t g = BRK__ST_GEN(w), n;
	uint64_t thr = cfg_u32(r, BRK__CFG_SUCCESS_THRESHOLD, 1, 1000000);
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t c = uatomic_read(&r->ho_successes);
		if (!gc_count(r, c, g, &n))
			return 0;
		if (uatomic_cmpxchg(&r->ho_successes, c, BRK__GC_MAKE(g, n + 1)) != c)
			continue;
		if (n + 1 >= thr)
			transition(b->seg, r, w, BRK_CLOSED, 0, 0,
				   BRK_EV_PROBE_OK, n + 1);
		return 0;
	}
	return -BRK_ECONTENDED;
}

static void raise_cool_until(brk_breaker *b, uint64_t target, uint64_t now,
			     uint64_t ms)
{
	struct brk__record *r = b->rec;
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t cu = uatomic_read(&r->cool_until_ns);
		if (cu >= target)
			return;
		if (uatomic_cmpxchg(&r->cool_until_ns, cu, target) == cu) {
			if (cu <= now) /* a new cooling, not an extension */
				record_event(b->seg, r, BRK__ST_STATE(uatomic_read(&r->state)),
					     BRK__ST_STATE(uatomic_read(&r->state)),
					     BRK_EV_COOL_UNTIL, brk__self()->pid, ms);
			return;
		}
	}
}

/* Retry-After: up to max_wait_ms a shared cool-until; above it, open for
 * that long (only from a counted result: a stale one cannot re-open). */
static void retry_after(brk_breaker *b, int64_t ra, int counted, uint64_t now)
{
	struct brk__record *r = b->rec;
	uint64_t ms = (uint64_t)ra, w, until;
	int tries;

	if (ms > BRK_MAX_DURATION_MS)
		ms = BRK_MAX_DURATION_MS;
	if (ms <= cfg_ms(r, BRK__CFG_MAX_WAIT_MS)) {
		raise_cool_until(b, brk__sat_add(now, brk__ms_to_ns(ms)), now, ms);
		return;
	}
	if (!counted)
		return;
	until = brk__until_add(brk__rel_ms(b->seg, now), ms);
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		w = uatomic_read(&r->state);
		if (BRK__ST_STATE(w) == BRK_OPEN && brk__open_until(r, w) >= until)
			return;
		if (open_for(b->seg, r, w, BRK__ST_LEVEL(w), ms, now,
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
	struct brk__record *r = b->rec;
	int probe = p->token_ != 0 && BRK__ST_STATE(w) == BRK_HALF_OPEN;
	int closed = !probe && BRK__ST_STATE(w) == BRK_CLOSED;

	count_outcome(r, outcome, reason);
	if (p->flags_ & PERMIT_UNGATED)
		return 0;
	if (closed && brk__window_active(r) &&
	    (outcome == BRK_SUCCESS || outcome == BRK_HEALTHY_ERROR ||
	     outcome == BRK_FAILURE))
		brk__window_record(b->seg, r, w, lazy_now(b, now),
				   outcome == BRK_FAILURE,
				   is_slow(r, p, lazy_now(b, now)));
	w = uatomic_read(&r->state); /* the window rule may have opened it */
	if (BRK__ST_GEN(w) != p->changes_)
		return 0;

	if (outcome == BRK_SUCCESS || outcome == BRK_HEALTHY_ERROR) {
		/* With a slow-call rule on, a slow probe is a failed probe: a
		 * breaker opened for slowness must not close on slow calls. */
		if (probe && brk__cfg(r, BRK__CFG_SLOW_CALL_MS) &&
		    is_slow(r, p, lazy_now(b, now)))
			probe_failed(b->seg, r, w, lazy_now(b, now));
		else if (probe)
			return probe_success(b, w);
		else if (closed)
			return closed_success(b, w);
	} else if (outcome == BRK_FAILURE) {
		if (probe)
			probe_failed(b->seg, r, w, lazy_now(b, now));
		else if (closed)
			return closed_failure(b, w, lazy_now(b, now));
	}
	return 0;
}

/* Free the probe slot if we still hold it (@judging: with the mark). */
static void drop_probe(struct brk__record *r, const brk_permit *p, int judging)
{
	if (p->token_)
		brk__lease_free(&r->probes[p->probe_slot_],
				p->token_ | (judging ? BRK__TOK_JUDGING : 0));
}

/* Has this probe's lease been reclaimed, or has it outlived
 * probe_timeout_ms unnoticed (then it is reclaimed now, as a failure)? */
static int probe_lost(brk_breaker *b, const brk_permit *p)
{
	struct brk__record *r = b->rec;
	struct brk__lease *l = &r->probes[p->probe_slot_];
	uint64_t claim, rel;

	if (uatomic_read(&l->owner) != p->token_)
		return 1;
	if (brk__lease_claim_ms(l, p->token_, &claim) != 0)
		return 0;
	rel = brk__rel_ms(b->seg, brk__now(b->seg));
	if (BRK__CLAIM_AGE(rel, claim) < cfg_ms(r, BRK__CFG_PROBE_TIMEOUT_MS))
		return 0;
	brk__reclaim_probe(b->seg, r, p->probe_slot_, p->token_,
			   BRK_EV_RECLAIM_TIMEOUT);
	return 1;
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
	r = b->rec;
	if ((p->flags_ & PERMIT_REFUSED) == PERMIT_REFUSED)
		return -BRK_ESTALE; /* never admitted: nothing to count */
	if ((p->flags_ & PERMIT_RELEASED) || p->pid_ != brk__self()->pid) {
		brk__count(r, BRK__CTR_STALE);
		return -BRK_ESTALE;
	}
	p->flags_ |= PERMIT_RELEASED;
	if (p->permit_ && brk__lease_free(&r->permits[p->permit_slot_], p->permit_))
		stale = 1;
	BRK__KILLPOINT(BRK__KP_REL_PERMIT);
	if (outcome < BRK_SUCCESS || outcome > BRK_CANCELLED ||
	    reason < 0 || reason >= BRK_REASON_COUNT) {
		drop_probe(r, p, 0);
		return -EINVAL;
	}
	/* A probe keeps its slot until its verdict is in, so no second probe
	 * of this generation is admitted in between. */
	if (p->token_ && !stale) {
		if (probe_lost(b, p))
			stale = 1;
		else if (uatomic_cmpxchg(&r->probes[p->probe_slot_].owner,
					 p->token_, p->token_ | BRK__TOK_JUDGING) !=
			 p->token_)
			stale = 1; /* reclaimed just now */
		else
			judging = 1;
	}
	BRK__KILLPOINT(BRK__KP_REL_CHECKED);
	w = uatomic_read(&r->state);
	if (stale || BRK__ST_GEN(w) != p->changes_) {
		drop_probe(r, p, judging);
		if (retry_after_ms > 0 && !(p->flags_ & PERMIT_UNGATED))
			retry_after(b, retry_after_ms, 0, lazy_now(b, &now));
		brk__count(r, BRK__CTR_STALE);
		return -BRK_ESTALE;
	}
	rc = verdict(b, p, outcome, reason, w, &now);
	BRK__KILLPOINT(BRK__KP_REL_VERDICT);
	drop_probe(r, p, judging); /* fails harmlessly if taken meanwhile */
	BRK__KILLPOINT(BRK__KP_REL_FREED);
	if (retry_after_ms > 0 && !(p->flags_ & PERMIT_UNGATED))
		retry_after(b, retry_after_ms, rc == 0, lazy_now(b, &now));
	return rc;
}

int brk_call(brk_breaker *b, brk_call_fn fn, void *ctx,
	     struct brk_refusal *why, int *release_rc)
{
	struct brk_result res;
	brk_permit p;
	int rc, rrc;

	if (!fn)
		return -EINVAL;
	rc = brk_acquire(b, &p, why);
	if (rc)
		return rc;
	memset(&res, 0, sizeof(res));
	rc = fn(ctx, &res);
	if (res.outcome == 0) {
		res.outcome = rc == 0 ? BRK_SUCCESS : BRK_FAILURE;
		res.reason = rc == 0 ? BRK_REASON_NONE : BRK_REASON_OTHER;
	}
	rrc = brk_release(&p, res.outcome, res.reason, res.retry_after_ms);
	if (release_rc)
		*release_rc = rrc;
	return rc;
}

/* ---- operator actions ------------------------------------------------- */

int brk_reset(brk_breaker *b)
{
	struct brk__record *r;
	int tries;

	if (!b)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	r = b->rec;
	/* Bulkhead permits out stay counted until released (or their owner
	 * dies); their late release frees the slot and counts no verdict. */
	uatomic_set(&r->cool_until_ns, 0);
	uatomic_set(&r->mode, BRK_MODE_NORMAL);
	brk__quorum_clear(r);
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t w = uatomic_read(&r->state);
		uint64_t nw = BRK__ST_MAKE(BRK_CLOSED, 0, BRK__ST_GEN(w) + 1);
		if (uatomic_cmpxchg(&r->state, w, nw) != w)
			continue;
		after_transition(r, nw);
		if (BRK__ST_STATE(w) != BRK_CLOSED)
			brk__count(r, BRK__CTR_TRANSITIONS);
		record_event(b->seg, r, BRK__ST_STATE(w), BRK_CLOSED,
			     BRK_EV_RESET, brk__self()->pid, 0);
		return 0;
	}
	return -BRK_ECONTENDED;
}

int brk_trip(brk_breaker *b, uint64_t for_ms)
{
	struct brk__record *r;
	uint64_t now;
	int tries;

	if (!b || for_ms == 0)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	r = b->rec;
	if (for_ms > BRK_MAX_DURATION_MS)
		for_ms = BRK_MAX_DURATION_MS;
	now = brk__now(b->seg);
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t w = uatomic_read(&r->state);
		if (BRK__ST_STATE(w) == BRK_OPEN &&
		    brk__rel_ms(b->seg, now) < brk__open_until(r, w))
			return -EALREADY;
		if (open_for(b->seg, r, w, BRK__ST_LEVEL(w), for_ms, now,
			     BRK_EV_TRIP))
			return 0;
	}
	return -BRK_ECONTENDED;
}

int brk_set_mode(brk_breaker *b, int mode)
{
	struct brk__record *r;
	uint64_t old, w;

	if (!b || mode < BRK_MODE_NORMAL || mode > BRK_MODE_METRICS_ONLY)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	r = b->rec;
	old = uatomic_xchg(&r->mode, (uint64_t)mode);
	if (old == (uint64_t)mode)
		return -EALREADY;
	w = uatomic_read(&r->state);
	record_event(b->seg, r, BRK__ST_STATE(w), BRK__ST_STATE(w), BRK_EV_FORCED,
		     brk__self()->pid, (uint64_t)mode);
	return 0;
}

const char *brk_breaker_name(const brk_breaker *b)
{
	return b ? b->name : NULL;
}

int brk_breaker_get(brk_segment *seg, const char *name,
		    const struct brk_config *cfg, brk_breaker **out)
{
	struct brk__init init = { NULL, 0, { { 0, 0 } } };
	struct brk_config k;
	int rc;

	rc = brk__config_in(cfg, &k); /* NULL: the defaults */
	if (rc == 0)
		rc = brk_config_validate(&k, NULL);
	if (rc)
		return rc;
	init.cfg = &k;
	return brk__handle(seg, name, 1, BRK_KIND_BREAKER, &init, out);
}

int brk_breaker_find(brk_segment *seg, const char *name, brk_breaker **out)
{
	return brk__handle(seg, name, 0, BRK_KIND_BREAKER, NULL, out);
}

int brk_breaker_configure(brk_breaker *b, const struct brk_config *cfg)
{
	return brk_breaker_update(b, cfg, BRK_CFG_ALL, NULL);
}
