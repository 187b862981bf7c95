/*
 * alloc.c - runs of records: handing them out and taking them back.
 *
 * On this layout a record is one run of one unit (one 4 KiB slot); the
 * bump side is header.record_count. Retired runs go to a FIFO free list
 * per run size (header free_head[] / free_tail[], index units - 1, ref + 1;
 * 0: empty). A freed run's own words carry the list: `hash` (word 1) is
 * the ref + 1 of the next newer free run (0: last), `free_ms` when it was
 * freed (ms since the segment epoch, segment clock). brk__alloc() takes
 * the oldest run of its size only once it has been free for
 * BRK__RETIRE_QUARANTINE_MS, so a write of a handle that raced the
 * retirement lands in a record nobody owns yet (docs/design.md
 * "Retirement"). Everything here runs under the index lock (idxlock.c):
 * the lists have one writer at a time; the words are still atomic so
 * that a stale reader never sees a torn word.
 */
#include "internal.h"

static uint64_t free_now_ms(brk_segment *s)
{
	return brk__rel_ms(s, brk__now(s));
}

/* The run of ref + 1 @ref1 if it is in bounds for @units, else NULL. */
static struct brk__record *run(brk_segment *s, uint64_t ref1, uint32_t units)
{
	if (ref1 == 0 || ref1 > s->capacity || ref1 - 1 + units > s->capacity)
		return NULL;
	return brk__rec(s, (uint32_t)(ref1 - 1));
}

static int take_free(brk_segment *s, uint32_t units, uint32_t *ref)
{
	uint32_t k = units - 1;
	uint64_t h = uatomic_read(&s->hdr->free_head[k]), next;
	struct brk__record *r;

	if (h == 0)
		return -ENOSPC;
	r = run(s, h, units);
	if (!r) { /* corrupt: drop the list (its runs leak, nothing breaks) */
		uatomic_set(&s->hdr->free_head[k], 0);
		uatomic_set(&s->hdr->free_tail[k], 0);
		return -ENOSPC;
	}
	{
		uint64_t freed = uatomic_read(&r->free_ms), now = free_now_ms(s);
		if (freed > now || now - freed < BRK__RETIRE_QUARANTINE_MS)
			return -ENOSPC; /* the oldest is still in quarantine */
	}
	next = uatomic_read(&r->hash);
	if (next && !run(s, next, units))
		next = 0; /* corrupt link: the rest leaks */
	uatomic_set(&s->hdr->index_intent,
		    BRK__INTENT_MAKE(BRK__INTENT_CREATE, h));
	uatomic_set(&s->hdr->free_head[k], next);
	if (next == 0)
		uatomic_set(&s->hdr->free_tail[k], 0);
	uatomic_set(&r->hash, 0);
	uatomic_set(&r->free_ms, 0);
	*ref = (uint32_t)(h - 1);
	return 0;
}

int brk__alloc(brk_segment *s, uint32_t units, uint32_t *ref)
{
	uint64_t n;

	if (units == 0 || units > s->capacity)
		return -EINVAL;
	if (units <= BRK__FREE_SIZES && take_free(s, units, ref) == 0)
		return 0;
	n = uatomic_read(&s->hdr->record_count);
	if (n > s->capacity || s->capacity - n < units)
		return -ENOSPC;
	/* intent before the bump: a holder killed after it leaves a run
	 * that idxlock.c's repair finds and frees */
	uatomic_set(&s->hdr->index_intent,
		    BRK__INTENT_MAKE(BRK__INTENT_CREATE, n + 1));
	if (uatomic_cmpxchg(&s->hdr->record_count, n, n + units) != n)
		return -BRK_ECONTENDED; /* a writer without the lock: corrupt */
	*ref = (uint32_t)n;
	return 0;
}

void brk__free(brk_segment *s, uint32_t ref, uint32_t units)
{
	uint32_t k = units - 1;
	struct brk__record *r = run(s, (uint64_t)ref + 1, units), *t;
	uint64_t tail;

	if (!r || units == 0 || units > BRK__FREE_SIZES)
		return; /* cannot be listed: leaks (never on this layout) */
	uatomic_set(&r->hash, 0);
	uatomic_set(&r->free_ms, free_now_ms(s));
	tail = uatomic_read(&s->hdr->free_tail[k]);
	t = run(s, tail, units);
	if (t && uatomic_read(&s->hdr->free_head[k]) != 0)
		uatomic_set(&t->hash, (uint64_t)ref + 1);
	else
		uatomic_set(&s->hdr->free_head[k], (uint64_t)ref + 1);
	uatomic_set(&s->hdr->free_tail[k], (uint64_t)ref + 1);
}

int brk__free_has(brk_segment *s, uint32_t ref, uint32_t units)
{
	uint64_t at = uatomic_read(&s->hdr->free_head[units - 1]);
	uint32_t steps;

	for (steps = 0; at && steps <= s->capacity; steps++) {
		struct brk__record *r = run(s, at, units);
		if (!r)
			return 0;
		if (at == (uint64_t)ref + 1)
			return 1;
		at = uatomic_read(&r->hash);
	}
	return 0;
}

void brk__free_repair(brk_segment *s)
{
	uint32_t k;

	for (k = 0; k < BRK__FREE_SIZES; k++) {
		uint64_t at = uatomic_read(&s->hdr->free_head[k]), last = 0;
		uint32_t steps;

		for (steps = 0; at && steps <= s->capacity; steps++) {
			struct brk__record *r = run(s, at, k + 1);
			if (!r)
				break;
			last = at;
			at = uatomic_read(&r->hash);
		}
		if (last == 0)
			uatomic_set(&s->hdr->free_head[k], 0);
		else if (at) /* a cycle or a bad link: cut it at the last good run */
			uatomic_set(&brk__rec(s, (uint32_t)(last - 1))->hash, 0);
		uatomic_set(&s->hdr->free_tail[k], last);
	}
}
