/*
 * admin.c - operator actions on a breaker: reset, trip (open for a
 * while), trip_extend (open at least this long: a fleet peer's decision),
 * set_mode (forced open, disabled, metrics only). Each is one
 * transition or one word of the record (state.c below it).
 */
#include "ident.h"
#include "fresh.h"
#include "internal.h"
#include "window.h"

int brk_reset(brk_breaker *b)
{
	struct brk__record *r;
	int changed;

	if (!b)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	/* Bulkhead permits out stay counted until released (or their owner
	 * dies); their late release frees the slot and counts no verdict. */
	/* ending a cooling or a forced mode is a change even when the state
	 * stays closed: the fleet link's staleness rule reads it */
	changed = uatomic_xchg(&r->cool_until_ns, 0) > brk__now(b->seg);
	changed |= uatomic_xchg(&r->mode, BRK_MODE_NORMAL) != BRK_MODE_NORMAL;
	brk__quorum_clear(b->seg, r);
	return brk__reset_state(b->seg, r, changed);
}

/* Open @b for @for_ms ms from now, unless it is open already: until its
 * cooling period ends (@extend 0: brk_trip()), or at least until now +
 * @for_ms (@extend 1: brk_trip_extend()). Closed, half-open or open for
 * less: OPEN(gen + 1) at the same level (the cooling level is the host's
 * own), which also ends a half-open breaker's probe leases (cleared on
 * the transition). */
static int trip(brk_breaker *b, uint64_t for_ms, int extend)
{
	struct brk__record *r;
	uint64_t now, rel, until;
	int tries;

	if (!b || for_ms == 0)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	for_ms = brk__cooling_cap(r, for_ms); /* as brk__open_for() will */
	now = brk__now(b->seg);
	rel = brk__rel_ms(b->seg, now);
	until = extend ? brk__until_add(rel, for_ms) : rel + 1u;
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t w = uatomic_read(&r->state);
		if (BRK__ST_STATE(w) == BRK_OPEN && brk__open_until(r, w) >= until)
			return -EALREADY;
		if (brk__open_for(b->seg, r, w, BRK__ST_LEVEL(w), for_ms, now,
				  BRK_EV_TRIP))
			return 0;
	}
	return -BRK_ECONTENDED;
}

int brk_trip(brk_breaker *b, uint64_t for_ms)
{
	return trip(b, for_ms, 0);
}

int brk_trip_extend(brk_breaker *b, uint64_t for_ms)
{
	return trip(b, for_ms, 1);
}

int brk_set_mode(brk_breaker *b, int mode)
{
	struct brk__record *r;
	uint64_t old, w;

	if (!b || mode < BRK_MODE_NORMAL || mode > BRK_MODE_METRICS_ONLY)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	old = uatomic_xchg(&r->mode, (uint64_t)mode);
	if (old == (uint64_t)mode)
		return -EALREADY;
	w = uatomic_read(&r->state);
	brk__record_event(b->seg, r, BRK__ST_STATE(w), BRK__ST_STATE(w), BRK_EV_FORCED,
		     brk__self()->pid, (uint64_t)mode);
	return 0;
}
