/*
 * cool.c - the shared cool-until of a breaker (record word
 * cool_until_ns, monotonic ns): brk__raise_cool_until() for release.c's
 * Retry-After and brk_cool_for() for a fleet peer's decision. One CAS,
 * only ever upwards; brk_acquire() refuses with -BRK_ECOOLING until then.
 */
#include "cool.h"
#include "fresh.h"
#include "ident.h"

int brk__raise_cool_until(brk_segment *s, struct brk__record *r,
			  uint64_t ms, uint64_t now)
{
	uint64_t target;
	int tries;

	ms = brk__cooling_cap(r, ms);
	target = brk__sat_add(now, brk__ms_to_ns(ms));

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t cu = uatomic_read(&r->cool_until_ns), w;
		if (cu >= target)
			return 0;
		if (uatomic_cmpxchg(&r->cool_until_ns, cu, target) != cu)
			continue;
		if (cu <= now) { /* a new cooling, not an extension */
			w = uatomic_read(&r->state);
			brk__record_event(s, r, BRK__ST_STATE(w), BRK__ST_STATE(w),
					  BRK_EV_COOL_UNTIL, brk__self()->pid, ms);
		}
		return 1;
	}
	return -BRK_ECONTENDED;
}

int brk_cool_for(brk_breaker *b, uint64_t ms)
{
	struct brk__record *r;
	uint64_t now;
	int rc;

	if (!b || ms == 0)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	now = brk__now(b->seg);
	rc = brk__raise_cool_until(b->seg, r, ms, now);
	return rc == 0 ? -EALREADY : rc < 0 ? rc : 0;
}
