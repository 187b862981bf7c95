/*
 * blocks.c - a breaker's extension blocks (layout.h): the probe slots
 * after probe0, the window and quorum words, the bulkhead permit slots.
 *
 * A block is allocated when a setting first needs it (by the creator
 * before publication, or by brk_breaker_update() before it writes the
 * setting) and linked by one CAS of the record's link word that keeps the
 * other fields; a loser of that race frees its block. Blocks never move
 * and are never unlinked while the record lives. Every link read from shm
 * is bounds-checked (brk__block()) and followed only to a block that
 * carries this record's owner tag (layout.h, BRK__BTAG; issue 22): a
 * corrupt one reads as "no block", so nothing is ever written through it.
 */
#include "internal.h"

uint32_t brk__ref_of(const brk_segment *s, const struct brk__record *r)
{
	return (uint32_t)(((const uint8_t *)r - s->arena) / BRK__UNIT);
}

uint64_t *brk__tagged_block(const brk_segment *s, const struct brk__record *r,
			    uint32_t ref, uint32_t units, unsigned what)
{
	uint64_t *w = brk__block(s, ref, units);

	if (!w || uatomic_read(&w[BRK__BTAG_WORD(units)]) !=
		  BRK__BTAG(brk__ref_of(s, r), what))
		return NULL;
	return w;
}

void brk__probe_slots(brk_segment *s, struct brk__record *r, struct brk__slots *set)
{
	uint64_t x = uatomic_read(&r->ext_refs);

	set->part[0] = &r->probe0;
	set->n[0] = 1;
	set->part[1] = (struct brk__lease *)brk__tagged_block(s, r, BRK__XR_PROBE(x),
							      BRK__PROBE_EXT_UNITS,
							      BRK__BT_PROBE);
	set->n[1] = set->part[1] ? BRK__PROBE_EXT_SLOTS : 0;
}

/* Slot counts read from shm: even, and together at most
 * BRK__PERMIT_SLOTS. */
static uint32_t sane_slots(uint32_t n, uint32_t room)
{
	n &= ~1u;
	return n > room ? room & ~1u : n;
}

void brk__permit_slots(brk_segment *s, struct brk__record *r, struct brk__slots *set)
{
	uint64_t p = uatomic_read(&r->permit_refs);
	uint32_t pn = sane_slots(BRK__PR_P_SLOTS(p), BRK__PERMIT_SLOTS);
	uint32_t on = sane_slots(BRK__PR_O_SLOTS(p), BRK__PERMIT_SLOTS - pn);

	set->part[0] = pn ? (struct brk__lease *)brk__tagged_block(s, r,
			BRK__PR_P_REF(p), BRK__PERMIT_UNITS(pn), BRK__BT_PERMIT) : NULL;
	set->n[0] = set->part[0] ? pn : 0;
	set->part[1] = on ? (struct brk__lease *)brk__tagged_block(s, r,
			BRK__PR_O_REF(p), BRK__PERMIT_UNITS(on), BRK__BT_PERMIT) : NULL;
	set->n[1] = set->part[1] ? on : 0;
	if (!set->part[0]) { /* a lone overflow block is the first run */
		set->part[0] = set->part[1];
		set->n[0] = set->n[1];
		set->part[1] = NULL;
		set->n[1] = 0;
	}
}

/* The primary permit block's control unit (layout.h "The control unit of
 * a permit block"): its BRK__PERMIT_CTL_WORDS words, or NULL when the
 * record has no primary block or its link is not this record's permit
 * block (tag-checked as brk__permit_slots()). The bulkhead queue's PQ_*
 * words (bulkhead_queue.c) and the adaptive limit's AC_* words. */
uint64_t *brk__permit_ctl(brk_segment *s, const struct brk__record *r)
{
	uint64_t p = uatomic_read(&r->permit_refs);
	uint32_t pn = sane_slots(BRK__PR_P_SLOTS(p), BRK__PERMIT_SLOTS);
	uint64_t *w;

	if (!pn)
		return NULL;
	w = brk__tagged_block(s, r, BRK__PR_P_REF(p), BRK__PERMIT_UNITS(pn),
			      BRK__BT_PERMIT);
	return w ? w + BRK__PERMIT_CTL_UNIT(pn) * BRK__UNIT_WORDS : NULL;
}

struct brk__lease *brk__probe_at(brk_segment *s, struct brk__record *r, uint32_t i)
{
	struct brk__slots set;

	if (i == 0)
		return &r->probe0;
	brk__probe_slots(s, r, &set);
	return i < brk__slots_total(&set) ? brk__slot(&set, i) : NULL;
}

struct brk__lease *brk__permit_at(brk_segment *s, struct brk__record *r, uint32_t i)
{
	struct brk__slots set;

	brk__permit_slots(s, r, &set);
	return i < brk__slots_total(&set) ? brk__slot(&set, i) : NULL;
}

struct brk__lease *brk__permit_at_ctl(brk_segment *s, struct brk__record *r,
				      uint32_t i, uint64_t **ctl)
{
	uint64_t p = uatomic_read(&r->permit_refs);
	struct brk__slots set;

	brk__permit_slots(s, r, &set);
	/* the primary block, once linked, never changes: the first run is
	 * it when it starts at the primary ref (else a lone overflow block,
	 * whose control unit is not used) */
	*ctl = set.n[0] && BRK__PR_P_SLOTS(p) &&
			       (uint8_t *)set.part[0] ==
				       s->arena + (uint64_t)BRK__PR_P_REF(p) * BRK__UNIT
		       ? (uint64_t *)(void *)set.part[0] +
				 BRK__PERMIT_CTL_UNIT(set.n[0]) * BRK__UNIT_WORDS
		       : NULL;
	return i < brk__slots_total(&set) ? brk__slot(&set, i) : NULL;
}

uint64_t *brk__window_words(brk_segment *s, const struct brk__record *r)
{
	return brk__tagged_block(s, r, BRK__XR_WINDOW(uatomic_read(&r->ext_refs)),
				 BRK__WIN_EXT_UNITS, BRK__BT_WINDOW);
}

uint32_t brk__ext_units(brk_segment *s, const struct brk__record *r)
{
	struct brk__slots set;
	uint64_t x = uatomic_read(&r->ext_refs);
	uint32_t n = 0;

	if (brk__tagged_block(s, r, BRK__XR_PROBE(x), BRK__PROBE_EXT_UNITS,
			      BRK__BT_PROBE))
		n += BRK__PROBE_EXT_UNITS;
	if (brk__tagged_block(s, r, BRK__XR_WINDOW(x), BRK__WIN_EXT_UNITS,
			      BRK__BT_WINDOW))
		n += BRK__WIN_EXT_UNITS;
	if (brk__hold_words(s, r))
		n += BRK__HOLD_UNITS;
	brk__permit_slots(s, (struct brk__record *)r, &set);
	return n + BRK__PERMIT_UNITS(set.n[0]) + BRK__PERMIT_UNITS(set.n[1]);
}

/* Does config @c need each block? */
static int needs_probe_ext(const struct brk_config *c)
{
	return c->half_open_probes > 1;
}

static int needs_window(const struct brk_config *c)
{
	return c->failure_rate_pct != 0 || c->slow_call_ms != 0 ||
	       c->min_distinct_processes >= 2;
}

/* Allocate a zeroed block of @units for @r, tagged as its block of kind
 * @what (a fresh run is zero: the segment is zero-filled; a reused one is
 * cleared), the tag written before the link that publishes it. */
static int alloc_block(brk_segment *s, struct brk__record *r, uint32_t units,
		       unsigned what, uint32_t *ref)
{
	int rc = brk__alloc(s, units, ref);
	uint64_t *w;
	uint32_t i;

	if (rc)
		return rc;
	w = brk__block(s, *ref, units);
	for (i = 0; i < BRK__BTAG_WORD(units); i++)
		if (uatomic_read(&w[i]))
			uatomic_set(&w[i], 0);
	uatomic_set(&w[BRK__BTAG_WORD(units)], BRK__BTAG(brk__ref_of(s, r), what));
	cmm_smp_wmb();
	return 0;
}

/* Link a block into half @shift (0 probe, 32 window) of ext_refs. */
static int link_ext(brk_segment *s, struct brk__record *r, unsigned shift,
		    uint32_t units)
{
	uint32_t ref;
	int rc, tries;

	if ((uint32_t)(uatomic_read(&r->ext_refs) >> shift) != 0)
		return 0;
	rc = alloc_block(s, r, units, shift ? BRK__BT_WINDOW : BRK__BT_PROBE, &ref);
	if (rc)
		return rc;
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t x = uatomic_read(&r->ext_refs);
		if ((uint32_t)(x >> shift) != 0)
			break; /* someone else linked one: ours goes back */
		if (uatomic_cmpxchg(&r->ext_refs, x, x | ((uint64_t)ref << shift)) == x)
			return 0;
	}
	brk__free(s, ref, units);
	return 0;
}

/* The bulkhead blocks for @mc slots: a primary block of mc rounded up to
 * even, and once a later update asks for more than the primary holds, an
 * overflow block of the rest of BRK__PERMIT_SLOTS. */
static int link_permits(brk_segment *s, struct brk__record *r, uint32_t mc)
{
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t p = uatomic_read(&r->permit_refs), want;
		uint32_t pn = BRK__PR_P_SLOTS(p), on = BRK__PR_O_SLOTS(p);
		uint32_t ref, n, units;
		int rc;

		if (pn + on >= mc || (pn && on) || pn >= BRK__PERMIT_SLOTS)
			return 0;
		n = pn ? BRK__PERMIT_SLOTS - pn : (mc + 1u) & ~1u;
		units = BRK__PERMIT_UNITS(n);
		rc = alloc_block(s, r, units, BRK__BT_PERMIT, &ref);
		if (rc)
			return rc;
		want = pn ? BRK__PR_MAKE(BRK__PR_P_REF(p), pn, ref, n)
			  : BRK__PR_MAKE(ref, n, 0, 0);
		if (uatomic_cmpxchg(&r->permit_refs, p, want) == p)
			return 0;
		brk__free(s, ref, units); /* lost: look again */
	}
	return -BRK_ECONTENDED;
}

int brk__ensure_blocks(brk_segment *s, struct brk__record *r,
		       const struct brk_config *c)
{
	int rc = 0;

	if (needs_probe_ext(c))
		rc = link_ext(s, r, 0, BRK__PROBE_EXT_UNITS);
	if (!rc && needs_window(c))
		rc = link_ext(s, r, 32, BRK__WIN_EXT_UNITS);
	if (!rc && brk__bulkhead_slots(c) > 0) /* auto: a bulkhead too */
		rc = link_permits(s, r, brk__bulkhead_slots(c));
	/* hold_histogram on: its block is linked by the first release
	 * (hold.c); one refused for want of room is tried again */
	if (!rc && c->hold_histogram)
		(void)uatomic_cmpxchg(&r->hold, BRK__HOLD_NOROOM, 0);
	return rc;
}

int brk__ensure_window(brk_segment *s, struct brk__record *r)
{
	return link_ext(s, r, 32, BRK__WIN_EXT_UNITS);
}

void brk__free_blocks(brk_segment *s, struct brk__record *r)
{
	uint64_t x = uatomic_read(&r->ext_refs), p = uatomic_read(&r->permit_refs);
	uint32_t pn = BRK__PR_P_SLOTS(p), on = BRK__PR_O_SLOTS(p);

	/* only our own blocks: a garbage link frees nobody else's */
	if (brk__tagged_block(s, r, BRK__XR_PROBE(x), BRK__PROBE_EXT_UNITS, BRK__BT_PROBE))
		brk__free(s, BRK__XR_PROBE(x), BRK__PROBE_EXT_UNITS);
	if (brk__tagged_block(s, r, BRK__XR_WINDOW(x), BRK__WIN_EXT_UNITS, BRK__BT_WINDOW))
		brk__free(s, BRK__XR_WINDOW(x), BRK__WIN_EXT_UNITS);
	if (pn && brk__tagged_block(s, r, BRK__PR_P_REF(p), BRK__PERMIT_UNITS(pn),
				    BRK__BT_PERMIT))
		brk__free(s, BRK__PR_P_REF(p), BRK__PERMIT_UNITS(pn));
	if (on && brk__tagged_block(s, r, BRK__PR_O_REF(p), BRK__PERMIT_UNITS(on),
				    BRK__BT_PERMIT))
		brk__free(s, BRK__PR_O_REF(p), BRK__PERMIT_UNITS(on));
	uatomic_set(&r->ext_refs, 0);
	uatomic_set(&r->permit_refs, 0);
}
