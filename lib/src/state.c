/*
 * state.c - the circuit-breaker state machine's lowest layer: the shm
 * state word and its transitions (open, half-open, close, reset), with the
 * clear on transition. acquire.c, release.c, admin.c and reclaim.c call
 * it; it calls only window.c (clear, quorum), events.c and below.
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
#include "ident.h"
#include "internal.h"
#include "killpoint.h"
#include "window.h"

uint64_t brk__cooling_ms(const struct brk__record *r, uint32_t level)
{
	uint64_t open = brk__cfg_ms(r, BRK__CFG_OPEN_MS);
	uint64_t max = brk__cfg_ms(r, BRK__CFG_MAX_OPEN_MS);

	if (open == 0)
		open = 1;
	if (max < open)
		max = open;
	if (level >= 63 || open > (max >> level))
		return max;
	return open << level;
}

uint64_t brk__cooling_cap(const struct brk__record *r, uint64_t ms)
{
	uint64_t max = brk__cooling_ms(r, 63); /* max_open_ms, >= open_ms >= 1 */

	return ms > max ? max : ms;
}

uint64_t brk__open_until(const struct brk__record *r, uint64_t w)
{
	uint64_t g = BRK__ST_GEN(w), u;

	cmm_smp_rmb(); /* the slot was written before the state word */
	u = uatomic_read(&r->open_until[g & 1]);
	return BRK__UT_FOR(u, g) ? BRK__UT_UNTIL(u) : 0;
}

uint64_t brk__open_until_now(struct brk__record *r, uint64_t w,
			     uint64_t rel_ms, int repair)
{
	uint64_t until = brk__open_until(r, w), g = BRK__ST_GEN(w), u, cap;
	uint64_t max = brk__cooling_cap(r, UINT64_MAX);

	if (until <= rel_ms || until - rel_ms <= max)
		return until;
	cap = brk__sat_add(rel_ms, max);
	if (cap > BRK__UNTIL_MASK)
		cap = BRK__UNTIL_MASK;
	if (repair) {
		u = uatomic_read(&r->open_until[g & 1]);
		if (BRK__UT_FOR(u, g) && BRK__UT_UNTIL(u) == until)
			uatomic_cmpxchg(&r->open_until[g & 1], u,
					BRK__UT_MAKE(g, cap));
	}
	return cap;
}

uint64_t brk__cool_until_now(struct brk__record *r, uint64_t now_ns,
			     int repair)
{
	uint64_t cu = uatomic_read(&r->cool_until_ns), cap;
	uint64_t max = brk__ms_to_ns(brk__cooling_cap(r, UINT64_MAX));

	if (cu <= now_ns || cu - now_ns <= max)
		return cu;
	cap = brk__sat_add(now_ns, max);
	if (repair)
		uatomic_cmpxchg(&r->cool_until_ns, cu, cap);
	return cap;
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
 * The failure streak (issue 24): the consecutive failures since the
 * breaker last closed, which pybreaker's fail_counter reports and which
 * users read to say why a breaker is open. It lives in the fails word:
 * while CLOSED that word is the generation's consecutive-failure count
 * (release.c adds to it, compares it with failure_threshold); in OPEN and
 * HALF_OPEN nothing but a transition's winner writes it, so the winner
 * carries the old generation's count @f of generation gen(@old) into the
 * new one instead of zeroing it: unchanged into OPEN and HALF_OPEN, + 1
 * for a failed (or reclaimed) probe (pybreaker counts the half-open
 * failure), 0 into CLOSED (and by brk_reset()). A count of an older
 * generation than gen(@old) (a winner died before clearing) carries 0.
 * No layout change: a library without the carry reads the word only
 * while CLOSED (a streak shown by it in OPEN is its consecutive_failures,
 * and its own transitions simply zero the streak).
 */
static uint64_t streak_carry(uint64_t f, uint64_t old, int to, int reason)
{
	uint64_t n;

	if (to == BRK_CLOSED || !BRK__GC_FOR(f, BRK__ST_GEN(old)))
		return 0;
	n = BRK__GC_COUNT(f);
	if (BRK__ST_STATE(old) == BRK_HALF_OPEN && to == BRK_OPEN &&
	    reason == BRK_EV_PROBE_FAILED)
		n++;
	return n;
}

/* The fails word of generation gen(@nw): (gen, carried streak) unless it
 * is of that generation already. */
static void fails_carry(uint64_t *c, uint64_t old, uint64_t nw, int reason)
{
	uint64_t g = BRK__ST_GEN(nw);
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t x = uatomic_read(c);
		uint64_t n = streak_carry(x, old, BRK__ST_STATE(nw), reason);
		if (BRK__GC_FOR(x, g) ||
		    uatomic_cmpxchg(c, x, BRK__GC_MAKE(g, n)) == x)
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
static void after_transition(brk_segment *s, struct brk__record *r,
			     uint64_t old, uint64_t nw, int reason)
{
	uint64_t g = BRK__ST_GEN(nw), *next = &r->open_until[(g + 1) & 1], u;
	uint32_t i, n, tag = BRK__ST_TAG(nw);
	struct brk__slots probes;

	u = uatomic_read(next); /* OPEN(g - 1)'s slot: keep only g + 1's */
	if (u && !BRK__UT_FOR(u, (g + 1) & BRK__GEN_MASK))
		uatomic_cmpxchg(next, u, 0);
	fails_carry(&r->fails, old, nw, reason); /* the streak survives */
	counter_clear(&r->ho_successes, g);
	brk__probe_slots(s, r, &probes);
	n = brk__slots_total(&probes);
	for (i = 0; i < n; i++) { /* stale probe leases */
		struct brk__lease *l = brk__slot(&probes, i);
		uint64_t o = uatomic_read(&l->owner);
		if (o != 0 && BRK__TOK_GEN(o) != tag)
			uatomic_cmpxchg(&l->owner, o, 0);
	}
	brk__window_clear(s, r, g);
}

/* The winner of a transition notes when it happened (bctl metrics
 * --changed-within); 0 stays "never", so the epoch's first ms is 1. */
static void note_change(brk_segment *s, struct brk__record *r)
{
	uint64_t rel = brk__rel_ms(s, brk__now(s));

	uatomic_set(&r->last_change_ms, rel ? rel : 1);
}

/* One CAS from @old to (@to, @level, gen + 1), an OPEN state with the
 * deadline @until (ms since the segment epoch). 1 if we did it. */
int brk__transition(brk_segment *s, struct brk__record *r, uint64_t old,
		      int to, uint32_t level, uint64_t until, int reason,
		      uint64_t value)
{
	uint64_t nw = BRK__ST_MAKE(to, level, BRK__ST_GEN(old) + 1);

	if (to == BRK_OPEN && !propose_until(r, old, until))
		return 0;
	if (uatomic_cmpxchg(&r->state, old, nw) != old)
		return 0;
	after_transition(s, r, old, nw, reason);
	note_change(s, r);
	brk__count(r, BRK__CTR_TRANSITIONS);
	brk__record_event(s, r, BRK__ST_STATE(old), to, reason, brk__self()->pid,
		     value);
	return 1;
}

int brk__open_for(brk_segment *s, struct brk__record *r, uint64_t old,
		    uint32_t level, uint64_t ms, uint64_t now, int reason)
{
	uint64_t until;

	ms = brk__cooling_cap(r, ms);
	until = brk__until_add(brk__rel_ms(s, now), ms);

	return brk__transition(s, r, old, BRK_OPEN, level, until, reason, ms);
}

/* A failed (or reclaimed) probe: re-open with the cooling doubled. */
void brk__probe_failed(brk_segment *s, struct brk__record *r, uint64_t w,
			 uint64_t now)
{
	uint32_t level = BRK__ST_LEVEL(w);

	if (level < BRK__LEVEL_MAX)
		level++;
	brk__open_for(s, r, w, level, brk__cooling_ms(r, level), now,
		 BRK_EV_PROBE_FAILED);
}

int brk__reclaim_probe(brk_segment *s, struct brk__record *r, uint32_t slot,
		       uint64_t owner, int reason)
{
	struct brk__slots probes;
	struct brk__lease *l;
	uint64_t w, mark;
	int verdict = !(owner & BRK__TOK_JUDGING);

	brk__probe_slots(s, r, &probes);
	if (slot >= brk__slots_total(&probes))
		return 0;
	l = brk__slot(&probes, slot);
	/*
	 * A probe with a verdict to count keeps its slot, marked judging by
	 * the reclaimer, until the failed-probe transition is done: freed
	 * first, the slot let a caller claim a probe of the same half-open
	 * generation that the transition then made stale (it_kill_steps,
	 * "breakerd probe lease_start", once in CI). The mark is the
	 * reclaimer's own token (its pid, a fresh nonce, the probe's
	 * generation): another reclaimer - a refused caller - must not find
	 * the dead owner there and free the slot in between. A reclaimer that
	 * dies in between leaves its judging token: reclaimed later without a
	 * verdict, as a judging probe's.
	 */
	mark = BRK__TOK_MAKE(brk__self()->pid, BRK__TOK_GEN(owner), brk__next_nonce()) |
	       BRK__TOK_JUDGING;
	if (uatomic_cmpxchg(&l->owner, owner, verdict ? mark : 0) != owner)
		return 0;
	brk__count(r, BRK__CTR_RECLAIMED);
	w = uatomic_read(&r->state);
	brk__record_event(s, r, BRK__ST_STATE(w), BRK__ST_STATE(w), reason,
		     (int32_t)BRK__TOK_PID(owner), 0);
	BRK__HOOK(BRK__HOOK_PROBE_RECLAIMING, s, 0);
	/* A judging probe's owner is counting its own verdict (or died doing
	 * so): freeing its slot counts nothing, so no probe counts twice. */
	if (verdict && BRK__ST_STATE(w) == BRK_HALF_OPEN &&
	    BRK__ST_TAG(w) == BRK__TOK_GEN(owner))
		brk__probe_failed(s, r, w, brk__now(s));
	if (verdict)
		(void)uatomic_cmpxchg(&l->owner, mark, 0);
	return 1;
}

void brk__open_by_rule(brk_segment *s, struct brk__record *r, uint64_t w,
		       uint64_t now, int reason)
{
	uint64_t k = brk__cfg(r, BRK__CFG_MIN_DISTINCT);
	uint32_t level = BRK__ST_LEVEL(w);
	uint64_t ms = brk__cooling_ms(r, level);

	/* one broken worker cannot open it for everyone (no window block:
	 * the quorum is inactive, as the window rules are) */
	if (k >= 2 && brk__window_words(s, r) && brk__quorum_count(s, r, now) < k)
		return;
	brk__open_for(s, r, w, level, ms, now, reason);
}

/* brk_reset()'s transition: from any state to CLOSED, level 0, gen + 1;
 * the change is noted (last_change_ms) when the state was not closed or
 * @changed (the reset ended a cooling or a forced mode).
 * Returns 0, or -BRK_ECONTENDED (nothing changed). */
int brk__reset_state(brk_segment *s, struct brk__record *r, int changed)
{
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t w = uatomic_read(&r->state);
		uint64_t nw = BRK__ST_MAKE(BRK_CLOSED, 0, BRK__ST_GEN(w) + 1);
		if (uatomic_cmpxchg(&r->state, w, nw) != w)
			continue;
		after_transition(s, r, w, nw, BRK_EV_RESET);
		if (BRK__ST_STATE(w) != BRK_CLOSED) {
			note_change(s, r);
			brk__count(r, BRK__CTR_TRANSITIONS);
		} else if (changed) {
			note_change(s, r);
		}
		brk__record_event(s, r, BRK__ST_STATE(w), BRK_CLOSED,
				  BRK_EV_RESET, brk__self()->pid, 0);
		return 0;
	}
	return -BRK_ECONTENDED;
}
