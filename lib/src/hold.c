/*
 * hold.c - the permit hold-time histogram of a breaker (layout.h
 * "Hold-time histogram"; breaker.h brk_hold_info).
 *
 * brk_release() hands the hold (ns from the permit's start to now) to
 * brk__hold_note(): two atomic adds to the record's histogram block, its
 * bucket and the µs sum. The block is allocated by the first release that
 * finds none and linked by one CAS of the hold word from 0; the loser of
 * that race frees its run (counted in leaked_units, alloc.c) and uses the
 * winner's. An allocation leaves the arena units that the cores of the
 * records still to be created and half of the extension room may need
 * (hold_room()): a histogram never makes a create or a bulkhead fail.
 * Without room the word becomes BRK__HOLD_NOROOM, so later releases pay
 * one load, and brk_info shows BRK_HOLD_NOROOM. Every link read from shm
 * is bounds-checked (brk__block()): a corrupt one reads as "no block" and
 * nothing is written. The block stays with the run when the record is
 * retired (the free stamp keeps its ref, alloc.c) and is cleared for the
 * next owner (brk__hold_clear(), index.c).
 */
#include <string.h>

#include "internal.h"

/* Prometheus' default buckets (client_golang DefBuckets), µs. */
static const uint64_t bound_us[BRK__HOLD_BUCKETS - 1] = {
	5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000
};

uint64_t brk_hold_bound_us(unsigned i)
{
	return i < BRK__HOLD_BUCKETS - 1u ? bound_us[i] : UINT64_MAX;
}

const char *brk_hold_state_name(int state)
{
	switch (state) {
	case BRK_HOLD_RECORDED: return "recorded";
	case BRK_HOLD_NOROOM: return "no_room";
	case BRK_HOLD_OFF: return "off";
	default: return "none";
	}
}

uint64_t *brk__hold_words(const brk_segment *s, const struct brk__record *r)
{
	return brk__block(s, BRK__HOLD_REF(uatomic_read(&r->hold)), BRK__HOLD_UNITS);
}

/* May a histogram take BRK__HOLD_UNITS now? Only out of what is left
 * after the cores of the records still to be created (as breakers, the
 * largest kind) and half of the extension room. */
static int hold_room(const brk_segment *s)
{
	uint64_t next = uatomic_read(&s->hdr->arena_next);
	uint64_t live = uatomic_read(&s->hdr->live_records);
	uint64_t keep = brk__ext_room_units(s->capacity) / 2u;

	if (live < s->capacity)
		keep += (uint64_t)(s->capacity - live) * BRK__BREAKER_UNITS;
	return next <= s->arena_units &&
	       s->arena_units - next >= BRK__HOLD_UNITS + keep;
}

/* The block of @r, allocated and linked now if there is none. NULL: no
 * room (marked), a contended allocation, or a corrupt word. Once per
 * record: kept out of the release's straight line. */
static __attribute__((noinline, cold)) uint64_t *hold_install(brk_segment *s, struct brk__record *r, uint64_t w)
{
	uint32_t ref, i;
	uint64_t *h, seen;

	if (w != 0)
		return NULL; /* NOROOM, or not a hold word: write nothing */
	if (!hold_room(s) || brk__alloc(s, BRK__HOLD_UNITS, &ref) != 0) {
		(void)uatomic_cmpxchg(&r->hold, 0, BRK__HOLD_NOROOM);
		return NULL;
	}
	h = brk__block(s, ref, BRK__HOLD_UNITS);
	for (i = 0; i < BRK__HOLD_UNITS * BRK__UNIT_WORDS; i++)
		if (uatomic_read(&h[i])) /* fresh runs are zero */
			uatomic_set(&h[i], 0);
	seen = uatomic_cmpxchg(&r->hold, 0, BRK__HOLD_MAKE(ref)); /* full barrier */
	if (seen == 0)
		return h;
	brk__free(s, ref, BRK__HOLD_UNITS); /* lost: use the winner's */
	return brk__block(s, BRK__HOLD_REF(seen), BRK__HOLD_UNITS);
}

void brk__hold_note(brk_segment *s, struct brk__record *r, uint64_t ns)
{
	uint64_t w = uatomic_read(&r->hold), *h, us = ns / 1000u;
	uint32_t i;

	h = (w & BRK__HOLD_LINK) ? brk__block(s, BRK__HOLD_REF(w), BRK__HOLD_UNITS)
				 : hold_install(s, r, w);
	if (!h)
		return;
	for (i = 0; i < BRK__HOLD_BUCKETS - 1u; i++) /* µs resolution */
		if (us <= bound_us[i])
			break;
	uatomic_inc(&h[i]);
	uatomic_add(&h[BRK__HOLD_SUM], us);
}

void brk__hold_clear(brk_segment *s, struct brk__record *r)
{
	uint64_t *h = brk__hold_words(s, r);
	uint32_t i;

	if (!h) {
		uatomic_set(&r->hold, 0); /* NOROOM or corrupt: start over */
		return;
	}
	for (i = 0; i < BRK__HOLD_UNITS * BRK__UNIT_WORDS; i++)
		if (uatomic_read(&h[i]))
			uatomic_set(&h[i], 0);
}

void brk__hold_read(const brk_segment *s, const struct brk__record *r,
		    struct brk_hold_info *out)
{
	uint64_t w = uatomic_read(&r->hold);
	const uint64_t *h = brk__hold_words(s, r);
	uint32_t i;

	memset(out, 0, sizeof(*out));
	out->buckets = BRK_HOLD_BUCKETS;
	if (!h) {
		out->state = w == BRK__HOLD_NOROOM ? BRK_HOLD_NOROOM
			     : brk__cfg(r, BRK__CFG_HOLD_HISTOGRAM) ? BRK_HOLD_NONE
								    : BRK_HOLD_OFF;
		return;
	}
	out->state = BRK_HOLD_RECORDED;
	for (i = 0; i < BRK__HOLD_BUCKETS; i++) {
		out->bucket[i] = uatomic_read(&h[i]);
		/* saturating: a corrupt counter must not wrap the count */
		out->count = out->bucket[i] > UINT64_MAX - out->count
				     ? UINT64_MAX : out->count + out->bucket[i];
	}
	out->sum_us = uatomic_read(&h[BRK__HOLD_SUM]);
}
