/*
 * alloc.c - runs of 64-byte units in the segment's arena (layout.h):
 * handing them out and taking retired records back.
 *
 * New runs: header.arena_next is bumped by CAS, bounded by arena_units; a
 * run never moves. Unit 0 is never handed out (a link word of 0 means "no
 * block"). Extension blocks are always new runs (brk__alloc(), lock-free:
 * an update links them outside the index lock).
 *
 * Retired records go to a FIFO free list per record kind (header
 * free_head[] / free_tail[], ref + 1; 0: empty), with their extension
 * blocks still linked: a retired record is reused whole, by a record of
 * the same kind, so no block is ever handed to a different owner while a
 * stale handle could still write into it. A free record's own identity
 * words carry the list (BRK__FREE_LINK_WORD: ref + 1 of the next newer
 * free record, 0: last; BRK__FREE_MS_WORD(kind), the kind's last word:
 * its stamp, BRK__FREE_STAMP(): when it was freed, ms since the segment
 * epoch + 1 on the segment clock, and a breaker's hold-time histogram ref,
 * which that word links while the record lives); no stale writer touches
 * those words (a release racing the retirement finds no link bit in a
 * stamp) and no lookup reads them.
 * brk__alloc_record() takes the oldest record of its kind only once it has
 * been free for BRK__RETIRE_QUARANTINE_MS, so a write of a handle that
 * raced the retirement lands in a record nobody owns yet
 * (docs/design/lifecycle.md "Retirement"). The free lists change only under
 * the index lock (idxlock.c): one writer at a time; the words are still
 * atomic so that a stale reader never sees a torn word.
 *
 * A run that was never published and cannot go on a list (a creator's or
 * an update's lost race for a block) is counted in header.leaked_units.
 */
#include "internal.h"

int brk__alloc(brk_segment *s, uint32_t units, uint32_t *ref)
{
	int tries;

	if (units == 0 || units > s->arena_units)
		return -ENOSPC;
	for (tries = 0; tries < BRK__CAS_TRIES * 16; tries++) {
		uint64_t n = uatomic_read(&s->hdr->arena_next);

		if (n == 0) /* untrusted: the creator starts it at 1 */
			return -BRK_ECORRUPT;
		if (n > s->arena_units || units > s->arena_units - n)
			return -ENOSPC;
		if (uatomic_cmpxchg(&s->hdr->arena_next, n, n + units) == n) {
			*ref = (uint32_t)n;
			return 0;
		}
		caa_cpu_relax();
	}
	return -BRK_ECONTENDED;
}

void brk__free(brk_segment *s, uint32_t ref, uint32_t units)
{
	if (!brk__block(s, ref, units))
		return;
	(void)uatomic_add_return(&s->hdr->leaked_units, units);
}

static uint64_t free_now_ms(brk_segment *s)
{
	return brk__rel_ms(s, brk__now(s));
}

static int list_of(uint32_t kind)
{
	uint32_t units = brk__kind_units(kind);

	return units != 0 && kind < BRK__FREE_LISTS ? (int)units : 0;
}

/* The record of ref + 1 @ref1 of @kind if its run lies in the arena. */
static uint64_t *run(brk_segment *s, uint64_t ref1, uint32_t kind)
{
	uint32_t units = brk__kind_units(kind);

	if (ref1 == 0 || ref1 > UINT32_MAX || units == 0)
		return NULL;
	return brk__block(s, (uint32_t)(ref1 - 1), units);
}

static int take_free(brk_segment *s, uint32_t kind, uint32_t *ref)
{
	uint64_t h = uatomic_read(&s->hdr->free_head[kind]), next, freed, now, stamp;
	uint64_t *w;

	if (h == 0)
		return -ENOSPC;
	w = run(s, h, kind);
	/* a free record's head says retired, with its kind's units: anything
	 * else (a corrupt list naming a live record) is never handed out */
	if (w && (BRK__HEAD_KIND(uatomic_read(&w[0])) != BRK__KIND_RETIRED ||
		  BRK__HEAD_UNITS(uatomic_read(&w[0])) != brk__kind_units(kind)))
		w = NULL;
	if (!w) { /* corrupt: drop the list (its runs leak, nothing breaks) */
		uatomic_set(&s->hdr->free_head[kind], 0);
		uatomic_set(&s->hdr->free_tail[kind], 0);
		return -ENOSPC;
	}
	stamp = uatomic_read(&w[BRK__FREE_MS_WORD(kind)]);
	freed = BRK__FREE_STAMP_MS1(stamp);
	now = (free_now_ms(s) + 1u) & BRK__FREE_MS_MASK;
	/* ages modulo 2^39 ms; a stamp from the future (corrupt, or a
	 * stale writer's word) is young: the record waits, nothing breaks */
	if (freed == 0 || ((now - freed) & BRK__FREE_MS_MASK) < BRK__RETIRE_QUARANTINE_MS ||
	    ((now - freed) & BRK__FREE_MS_MASK) > (BRK__FREE_MS_MASK >> 1))
		return -ENOSPC; /* the oldest is still in quarantine */
	next = uatomic_read(&w[BRK__FREE_LINK_WORD]);
	if (next && !run(s, next, kind))
		next = 0; /* corrupt link: the rest leaks */
	uatomic_set(&s->hdr->index_intent,
		    BRK__INTENT_MAKE_KIND(BRK__INTENT_CREATE, kind, h));
	uatomic_set(&s->hdr->free_head[kind], next);
	if (next == 0)
		uatomic_set(&s->hdr->free_tail[kind], 0);
	uatomic_set(&w[BRK__FREE_LINK_WORD], 0);
	/* the word links the kept histogram again (hold.c clears it) */
	uatomic_set(&w[BRK__FREE_MS_WORD(kind)],
		    kind == BRK_KIND_BREAKER && BRK__FREE_STAMP_REF(stamp)
			    ? BRK__HOLD_MAKE(BRK__FREE_STAMP_REF(stamp)) : 0);
	*ref = (uint32_t)(h - 1);
	return 0;
}

int brk__alloc_record(brk_segment *s, uint32_t kind, uint32_t *ref)
{
	uint32_t units = brk__kind_units(kind);
	int rc;

	if (!list_of(kind))
		return -EINVAL;
	if (take_free(s, kind, ref) == 0)
		return 0;
	/* intent before the bump: a holder killed after it leaves a run
	 * that idxlock.c's repair finds and frees */
	uatomic_set(&s->hdr->index_intent,
		    BRK__INTENT_MAKE_KIND(BRK__INTENT_CREATE, kind,
					  uatomic_read(&s->hdr->arena_next)));
	rc = brk__alloc(s, units, ref);
	if (rc == 0)
		uatomic_set(&s->hdr->index_intent,
			    BRK__INTENT_MAKE_KIND(BRK__INTENT_CREATE, kind,
						  (uint64_t)*ref + 1));
	return rc;
}

void brk__free_record(brk_segment *s, uint32_t ref, uint32_t kind)
{
	uint64_t *w = list_of(kind) ? run(s, (uint64_t)ref + 1, kind) : NULL, *t;
	uint64_t tail;

	if (!w)
		return; /* cannot be listed: leaks */
	uatomic_set(&w[BRK__FREE_LINK_WORD], 0);
	uatomic_set(&w[BRK__FREE_MS_WORD(kind)],
		    BRK__FREE_STAMP(free_now_ms(s),
				    kind == BRK_KIND_BREAKER
					    ? brk__hold_kept(s, uatomic_read(&w[BRK__FREE_MS_WORD(kind)]))
					    : 0));
	tail = uatomic_read(&s->hdr->free_tail[kind]);
	t = run(s, tail, kind);
	if (t && uatomic_read(&s->hdr->free_head[kind]) != 0)
		uatomic_set(&t[BRK__FREE_LINK_WORD], (uint64_t)ref + 1);
	else
		uatomic_set(&s->hdr->free_head[kind], (uint64_t)ref + 1);
	uatomic_set(&s->hdr->free_tail[kind], (uint64_t)ref + 1);
}

int brk__free_has(brk_segment *s, uint32_t ref, uint32_t kind)
{
	uint64_t at = list_of(kind) ? uatomic_read(&s->hdr->free_head[kind]) : 0;
	uint32_t steps;

	for (steps = 0; at && steps <= s->arena_units; steps++) {
		uint64_t *w = run(s, at, kind);
		if (!w)
			return 0;
		if (at == (uint64_t)ref + 1)
			return 1;
		at = uatomic_read(&w[BRK__FREE_LINK_WORD]);
	}
	return 0;
}

void brk__free_repair(brk_segment *s)
{
	uint32_t k;

	for (k = 0; k < BRK__FREE_LISTS; k++) {
		uint64_t at, last = 0;
		uint32_t steps;

		if (!list_of(k)) {
			uatomic_set(&s->hdr->free_head[k], 0);
			uatomic_set(&s->hdr->free_tail[k], 0);
			continue;
		}
		at = uatomic_read(&s->hdr->free_head[k]);
		for (steps = 0; at && steps <= s->arena_units; steps++) {
			uint64_t *w = run(s, at, k);
			if (!w)
				break;
			last = at;
			at = uatomic_read(&w[BRK__FREE_LINK_WORD]);
		}
		if (last == 0)
			uatomic_set(&s->hdr->free_head[k], 0);
		else if (at) /* a cycle or a bad link: cut it at the last good run */
			uatomic_set(&run(s, last, k)[BRK__FREE_LINK_WORD], 0);
		uatomic_set(&s->hdr->free_tail[k], last);
	}
}
