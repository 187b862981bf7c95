/*
 * iter.c - walking the records through the name index (breaker.h,
 * "Iterating over the records").
 *
 * The walk goes slot by slot over the name index, not over record indices
 * 0 .. count-1: only a slot tells which records are published under a
 * name (a record allocated by a creator that died or lost its race is in
 * no slot), and with retirement a record index may be free or reused.
 * Slots never move (insert in place, retire to a tombstone in place), so
 * a cursor that is a slot position visits every record that stays
 * published during the walk exactly once.
 */
#include <string.h>

#include "abi.h"
#include "internal.h"


/* What one slot holds. */
enum slot_kind { SLOT_SKIP, SLOT_RECORD, SLOT_CORRUPT };

/* Is the slot at @pos still @w? A record that looks wrong under a slot
 * that changed meanwhile was retired or reused: not corruption. */
static int slot_moved(brk_segment *s, uint32_t pos, uint64_t w)
{
	cmm_smp_rmb();
	return uatomic_read(&s->index[pos]) != w;
}

/* Classify slot @pos (its word into *@wp); for SLOT_RECORD fill @b (name,
 * index, kind). */
static enum slot_kind read_slot(brk_segment *s, uint32_t pos,
				struct brk_record_brief *b, uint64_t *wp)
{
	uint64_t w = uatomic_read(&s->index[pos]);
	const struct brk__record *r;
	uint32_t ref = 0;
	int kind;

	*wp = w;
	if (w == 0 || w == BRK__IDX_TOMB)
		return SLOT_SKIP;
	/* the slot before the record it publishes; the ref inside the arena
	 * and the head's units the kind's (index.c) */
	kind = brk__index_record(s, w, &ref);
	if (kind == 0) { /* a retirer holds it (or a stale slot) */
		uint64_t hd;

		r = brk__slot_rec(s, w);
		hd = r ? uatomic_read(&r->head) : 0;
		if (BRK__HEAD_KIND(hd) == BRK__KIND_RETIRED)
			return SLOT_SKIP;
		if (brk__head_live(hd)) /* it found the record busy: live again */
			kind = brk__index_record(s, w, &ref);
	}
	if (kind <= 0)
		return slot_moved(s, pos, w) ? SLOT_SKIP : SLOT_CORRUPT;
	r = brk__rec(s, ref);
	if (brk__record_name(r, b->name) != 0 ||
	    (uint32_t)(brk__hash(b->name) >> 32) != BRK__IDX_HASH(w))
		return slot_moved(s, pos, w) ? SLOT_SKIP : SLOT_CORRUPT;
	b->index = ref;
	b->kind = kind;
	return SLOT_RECORD;
}

/* The state part of a brief, for a breaker (clamped as info.c does: the
 * segment is untrusted). */
static void brief_state(brk_segment *s, struct brk_record_brief *b)
{
	const struct brk__record *r = brk__rec(s, b->index);
	int mode;

	b->state = BRK_CLOSED;
	b->mode = BRK_MODE_NORMAL;
	b->last_change_age_ms = UINT64_MAX;
	if (b->kind != BRK_KIND_BREAKER)
		return;
	b->state = BRK__ST_STATE(uatomic_read(&r->state));
	if (b->state > BRK_HALF_OPEN)
		b->state = BRK_OPEN;
	mode = (int)uatomic_read(&r->mode);
	b->mode = mode < BRK_MODE_NORMAL || mode > BRK_MODE_METRICS_ONLY
			  ? BRK_MODE_FORCED_OPEN : mode;
	b->last_change_age_ms = brk__change_age_ms(s, r);
}

/* The next slot from *@cursor holding a record (or a corrupt one); its
 * word into *@w. */
static int next_slot(brk_segment *s, uint64_t *cursor,
		     struct brk_record_brief *b, uint64_t *w)
{
	while (*cursor < s->index_slots) {
		uint32_t pos = (uint32_t)(*cursor)++;

		memset(b, 0, sizeof(*b));
		switch (read_slot(s, pos, b, w)) {
		case SLOT_SKIP:
			continue;
		case SLOT_CORRUPT:
			memset(b, 0, sizeof(*b));
			return -BRK_ECORRUPT;
		case SLOT_RECORD:
			return 0;
		}
	}
	return -ENOENT;
}

int brk_record_next_brief_sz(brk_segment *seg, uint64_t *cursor,
			     struct brk_record_brief *out, size_t size)
{
	struct brk_record_brief b;
	uint64_t w;
	int rc;

	if (!seg || !cursor || !out)
		return -EINVAL;
	rc = next_slot(seg, cursor, &b, &w);
	if (rc == 0)
		brief_state(seg, &b);
	else
		memset(&b, 0, sizeof(b));
	brk__struct_out(out, size, &b, sizeof(b));
	return rc;
}

int brk_record_next_sz(brk_segment *seg, uint64_t *cursor,
		       struct brk_info *out, size_t size)
{
	struct brk_record_brief b;
	uint64_t w;
	int rc;

	if (!seg || !cursor || !out)
		return -EINVAL;
	for (;;) {
		rc = next_slot(seg, cursor, &b, &w);
		if (rc == 0) {
			/* the slot was just read: no name-index lookup, but
			 * the slot again after the snapshot (retired or
			 * reused meanwhile: skipped) */
			rc = brk__info_ref_sz(seg, b.index, out, size);
			if (rc == -ENOENT || slot_moved(seg, (uint32_t)(*cursor - 1), w))
				continue;
			if (rc < 0)
				memset(out, 0, size);
			return rc;
		}
		memset(out, 0, size); /* exactly the caller's size */
		return rc;
	}
}

int (brk_record_next)(brk_segment *seg, uint64_t *cursor, struct brk_info *out)
{
	return brk_record_next_sz(seg, cursor, out, BRK_INFO_SIZE_VER0);
}

int (brk_record_next_brief)(brk_segment *seg, uint64_t *cursor,
			    struct brk_record_brief *out)
{
	return brk_record_next_brief_sz(seg, cursor, out,
					BRK_RECORD_BRIEF_SIZE_VER0);
}
