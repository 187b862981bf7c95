/*
 * half_open.c - the calls pybreaker's API needs of a shared breaker
 * (issue 24): force half-open (brk_half_open()), restart an open period
 * (brk_trip_restart()), read the few words a caller polls
 * (brk_breaker_counts()) and get a breaker saying whether this call
 * created it (brk_breaker_get_ex()). Each is a transition of state.c or
 * plain loads; nothing here adds a word to the segment.
 */
#include <string.h>

#include "fresh.h"
#include "internal.h"

__thread uint64_t brk__created_here;

int brk_half_open(brk_breaker *b)
{
	struct brk__record *r;
	int tries;

	if (!b)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t w = uatomic_read(&r->state);
		if (BRK__ST_STATE(w) == BRK_HALF_OPEN)
			return -EALREADY;
		if (brk__transition(b->seg, r, w, BRK_HALF_OPEN, BRK__ST_LEVEL(w),
				    0, BRK_EV_HALF_OPEN, 0))
			return 0;
	}
	return -BRK_ECONTENDED;
}

int brk_trip_restart(brk_breaker *b, uint64_t for_ms)
{
	struct brk__record *r;
	uint64_t now;
	int tries;

	if (!b || for_ms == 0)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	if (for_ms > BRK_MAX_DURATION_MS)
		for_ms = BRK_MAX_DURATION_MS;
	now = brk__now(b->seg);
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t w = uatomic_read(&r->state);
		if (brk__open_for(b->seg, r, w, BRK__ST_LEVEL(w), for_ms, now,
				  BRK_EV_TRIP))
			return 0;
	}
	return -BRK_ECONTENDED;
}

int brk_breaker_counts_sz(brk_breaker *b, struct brk_counts *out, size_t size)
{
	struct brk_counts c;
	const struct brk__record *r;
	uint64_t w, f, hs, g;

	if (!b || !out || size < 8 || size > BRK_STRUCT_SIZE_MAX)
		return -EINVAL;
	r = brk__brec(b);
	memset(&c, 0, sizeof(c));
	w = uatomic_read(&r->state);
	f = uatomic_read(&r->fails);
	hs = uatomic_read(&r->ho_successes);
	g = BRK__ST_GEN(w);
	c.size = (uint32_t)(size < sizeof(c) ? size : sizeof(c));
	c.state = BRK__ST_STATE(w);
	if (c.state > BRK_HALF_OPEN)
		c.state = BRK_OPEN; /* unknown states are treated as open */
	c.generation = g;
	c.failure_streak = BRK__GC_FOR(f, g) ? (uint32_t)BRK__GC_COUNT(f) : 0;
	c.consecutive_failures = c.state == BRK_CLOSED ? c.failure_streak : 0;
	c.half_open_successes = BRK__GC_FOR(hs, g) ? (uint32_t)BRK__GC_COUNT(hs) : 0;
	c.cooling_level = BRK__ST_LEVEL(w);
	c.mode = (int)uatomic_read(&r->mode);
	if (c.mode < BRK_MODE_NORMAL || c.mode > BRK_MODE_METRICS_ONLY)
		c.mode = BRK_MODE_FORCED_OPEN;
	if (size <= sizeof(c)) {
		memcpy(out, &c, size);
	} else {
		memcpy(out, &c, sizeof(c));
		memset((char *)out + sizeof(c), 0, size - sizeof(c));
	}
	return 0;
}

int (brk_breaker_counts)(brk_breaker *b, struct brk_counts *out)
{
	return brk_breaker_counts_sz(b, out, BRK_COUNTS_SIZE_VER0);
}

int brk_breaker_get_ex(brk_segment *seg, const char *name,
		       const struct brk_config *cfg, brk_breaker **out,
		       int *created)
{
	uint64_t before = brk__created_here;
	int rc = brk_breaker_get(seg, name, cfg, out);

	if (created)
		*created = rc == 0 && brk__created_here != before;
	return rc;
}
