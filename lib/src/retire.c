/*
 * retire.c - retirement of idle records (docs/design/lifecycle.md
 * "Retirement").
 *
 * Under the index lock the retirer first CASes the record's head word
 * from live to (BRK__KIND_RETIRED, same generation), THEN checks that the
 * record is idle (closed, mode normal, no lease, activity unchanged); if
 * it is not, it CASes the head back. A claimer of a probe or permit lease
 * re-reads the head after its claiming CAS (acquire.c). Both sides use
 * full-barrier CASes (Dekker): either the claimer sees the retired head
 * and gives its lease back, or the retirer sees the lease and backs off.
 * An idle record's index slot becomes a tomb, header.index_seq is bumped
 * and its run goes to the free list (alloc.c), quarantined.
 */
#include <string.h>

#include "ident.h"
#include "internal.h"

enum why { IDLE = 0, BUSY_LEASE, BUSY_STATE, BUSY_RECENT };

uint64_t brk__activity(const struct brk__record *r, uint64_t head)
{
	uint64_t sum = 0;
	uint32_t i;

	switch (BRK__HEAD_KIND(head)) {
	case BRK_KIND_BREAKER:
		for (i = 0; i < BRK__CTR_COUNT; i++)
			sum += uatomic_read(&r->ctr[i]);
		break;
	case BRK_KIND_BUCKET:
		sum = uatomic_read(&brk__xw(r)[BRK__BK_TAKEN]) +
		      uatomic_read(&brk__xw(r)[BRK__BK_DENIED]) +
		      uatomic_read(&brk__xw(r)[BRK__BK_TOKENS]) +
		      /* a pace's reports are activity too (0 if plain) */
		      uatomic_read(&brk__xw(r)[BRK__BK_CUTS]) +
		      uatomic_read(&brk__xw(r)[BRK__BK_LIMITED]) +
		      uatomic_read(&brk__xw(r)[BRK__BK_OK]) +
		      uatomic_read(&brk__xw(r)[BRK__BK_HIGH]) +
		      /* a reservation waiting is activity (issue 25) */
		      uatomic_read(&brk__xw(r)[BRK__BK_RESV]);
		break;
	case BRK_KIND_BUDGET:
		sum = uatomic_read(&brk__xw(r)[BRK__BG_DEPOSITS]) +
		      uatomic_read(&brk__xw(r)[BRK__BG_RETRIES]) +
		      uatomic_read(&brk__xw(r)[BRK__BG_RETRIES_FLOOR]) +
		      uatomic_read(&brk__xw(r)[BRK__BG_DEFERRED]);
		break;
	}
	return sum;
}

static int leases_held(const struct brk__slots *set)
{
	uint32_t i, n = brk__slots_total(set);

	for (i = 0; i < n; i++)
		if (uatomic_read(&brk__slot(set, i)->owner))
			return 1;
	return 0;
}

/* The retirement sweep's two words of a record of kind @kind (layout.h
 * BRK__IDLE_WORD()). */
static uint64_t *idle_snap(const struct brk__record *r, uint64_t head)
{
	return &brk__xw(r)[BRK__IDLE_WORD(BRK__HEAD_KIND(head))];
}

static uint64_t *idle_since(const struct brk__record *r, uint64_t head)
{
	return idle_snap(r, head) + 1;
}

/* Is @r's fallback flag (health.c, window block word BRK__WIN_FALLBACK)
 * set? It is an operator's decision that lasts until it is turned off,
 * and callers in fallback leave the breaker idle: retiring it would drop
 * the flag. Any ON bit counts (a corrupt word only keeps a record). */
static int fallback_set(brk_segment *s, const struct brk__record *r)
{
	const uint64_t *x = brk__window_words(s, r);

	return x && (uatomic_read(&x[BRK__WIN_FALLBACK]) & BRK__FB_ON);
}

/* Is @r (live head @head) idle for @idle_ms at @rel (ms since epoch)?
 * @idle_ms 0: only leases and state count. */
static enum why idle_check(brk_segment *s, struct brk__record *r,
			   uint64_t head, uint64_t idle_ms, uint64_t rel)
{
	if (BRK__HEAD_KIND(head) == BRK_KIND_BREAKER) {
		struct brk__slots probes, permits;

		brk__probe_slots(s, r, &probes);
		brk__permit_slots(s, r, &permits);
		if (leases_held(&probes) || leases_held(&permits))
			return BUSY_LEASE;
		if (BRK__ST_STATE(uatomic_read(&r->state)) != BRK_CLOSED ||
		    uatomic_read(&r->mode) != BRK_MODE_NORMAL ||
		    fallback_set(s, r))
			return BUSY_STATE;
	}
	if (idle_ms) {
		uint64_t since = uatomic_read(idle_since(r, head));
		if (since == 0 || brk__activity(r, head) != uatomic_read(idle_snap(r, head)) ||
		    rel + 1 < since || rel + 1 - since < idle_ms)
			return BUSY_RECENT;
	}
	return IDLE;
}

/*
 * Turn index slot @pos into a tomb, then keep the chains short (lock
 * held): entries further along the chain that may live in an earlier
 * hole move back into it (backward-shift deletion for linear probing:
 * an entry at j whose home is h may sit anywhere in [h, j]). A move
 * writes the entry into the hole first and only then turns its old slot
 * into a tomb, so every slot between an entry's home and the entry stays
 * non-empty; a lock-free lookup that passed the hole before the copy and
 * reaches the old slot after it would miss the entry, so header
 * index_moving is odd while slots move and a lookup that missed while it
 * changed looks again (index.c). The last hole, and tombs just before
 * it, end no chain and become empty. Without this, tombs of retired
 * names fill the index until every miss scans all of it.
 */
static void tomb(brk_segment *s, uint32_t pos)
{
	uint32_t mask = s->index_slots - 1, hole = pos, j, n, i;

	uatomic_set(&s->index[pos], BRK__IDX_TOMB);
	uatomic_add_return(&s->hdr->index_moving, 1); /* odd: moving */
	for (n = 1, j = (pos + 1) & mask; n < s->index_slots; n++, j = (j + 1) & mask) {
		uint64_t w = uatomic_read(&s->index[j]);
		uint32_t ref, home;

		if (w == 0)
			break;
		if (w == BRK__IDX_TOMB)
			continue;
		if (brk__index_record(s, w, &ref) <= 0)
			break; /* not a plain live record: leave the rest alone */
		home = (uint32_t)uatomic_read(&brk__rec(s, ref)->hash) & mask;
		if (((j - home) & mask) < ((j - hole) & mask))
			continue; /* the hole is before its home */
		uatomic_set(&s->index[hole], w);
		uatomic_set(&s->index[j], BRK__IDX_TOMB);
		hole = j;
	}
	/* the chain ended at slot j, empty: every entry between the last
	 * hole and j lives from a home after the hole, so the hole ends no
	 * chain any entry needs, and neither do tombs just before it */
	if (n < s->index_slots)
		uatomic_set(&s->index[hole], 0);
	uatomic_add_return(&s->hdr->index_moving, 1); /* even: done */
	if (uatomic_read(&s->index[hole]) != 0)
		return;
	for (i = 0, pos = (hole - 1) & mask; i < s->index_slots &&
		    uatomic_read(&s->index[pos]) == BRK__IDX_TOMB;
	     i++, pos = (pos - 1) & mask)
		uatomic_set(&s->index[pos], 0);
}

/* Retire record @idx at index slot @pos, lock held. 0 or -EBUSY (*why). */
static int retire_locked(brk_segment *s, uint32_t idx, uint32_t pos,
			 uint64_t idle_ms, uint64_t rel, enum why *why)
{
	struct brk__record *r = brk__rec(s, idx);
	uint64_t head = uatomic_read(&r->head), gone;

	if (!brk__head_live(head))
		return -ENOENT;
	gone = BRK__HEAD_MAKE(BRK__KIND_RETIRED, BRK__HEAD_UNITS(head),
			      BRK__HEAD_GEN(head));
	uatomic_set(&s->hdr->index_intent_head, head);
	uatomic_set(&s->hdr->index_intent,
		    BRK__INTENT_MAKE(BRK__INTENT_RETIRE, idx + 1));
	if (uatomic_cmpxchg(&r->head, head, gone) != head) /* full barrier */
		return -BRK_ECORRUPT; /* only lock holders change a live head */
	*why = idle_check(s, r, head, idle_ms, rel);
	if (*why != IDLE) {
		(void)uatomic_cmpxchg(&r->head, gone, head);
		uatomic_set(&s->hdr->index_intent, 0);
		return -EBUSY;
	}
	brk__record_event(s, r, BRK_CLOSED, BRK_CLOSED, BRK_EV_RETIRED,
			  brk__self()->pid, idle_ms);
	tomb(s, pos);
	uatomic_add_return(&s->hdr->index_seq, 1);
	if (uatomic_read(&s->hdr->live_records))
		uatomic_add_return(&s->hdr->live_records, -1);
	uatomic_add_return(&s->hdr->retired_total, 1);
	brk__lmap_clear(s, idx); /* no lease held: nothing for a scan */
	brk__free_record(s, idx, BRK__HEAD_KIND(head));
	uatomic_set(&s->hdr->index_intent, 0);
	return 0;
}

/* Note what the sweep sees of @r; 1 if it may be idle long enough. */
static int observe(struct brk__record *r, uint64_t head, uint64_t idle_ms,
		   uint64_t rel)
{
	uint64_t act = brk__activity(r, head);
	uint64_t since = uatomic_read(idle_since(r, head));

	if (since == 0 || act != uatomic_read(idle_snap(r, head))) {
		uatomic_set(idle_snap(r, head), act);
		uatomic_set(idle_since(r, head), rel + 1);
		return 0;
	}
	return rel + 1 >= since && rel + 1 - since >= idle_ms;
}

int brk_retire(brk_segment *seg, const char *name, uint64_t idle_ms)
{
	uint32_t idx, pos;
	enum why why = IDLE;
	uint64_t h, rel;
	int rc;

	if (!seg)
		return -EINVAL;
	rc = brk_name_validate(name);
	if (rc)
		return rc;
	if (seg->readonly)
		return -EROFS;
	h = brk__hash(name);
	rc = brk__lookup(seg, name, h, &idx);
	if (rc)
		return rc;
	if (idle_ms > BRK_MAX_DURATION_MS)
		idle_ms = BRK_MAX_DURATION_MS;
	rel = brk__rel_ms(seg, brk__now(seg));
	if (idle_ms) { /* the sweep's notes: this call watches it too */
		struct brk__record *r = brk__rec(seg, idx);
		uint64_t head = uatomic_read(&r->head);
		if (brk__head_live(head) && !observe(r, head, idle_ms, rel))
			return -EBUSY;
	}
	rc = brk__index_lock(seg);
	if (rc)
		return rc;
	rc = brk__lookup(seg, name, h, &idx);
	if (rc == 0)
		rc = brk__index_pos(seg, name, h, idx, &pos);
	if (rc == 0)
		rc = retire_locked(seg, idx, pos, idle_ms, rel, &why);
	brk__index_unlock(seg);
	return rc;
}

static void count_busy(struct brk_retire_stats *st, int rc, enum why why)
{
	if (rc == -BRK_ECONTENDED)
		st->busy_locked++;
	else if (why == BUSY_LEASE)
		st->busy_lease++;
	else if (why == BUSY_STATE)
		st->busy_state++;
	else if (why == BUSY_RECENT)
		st->busy_recent++;
}

int brk_retire_idle(brk_segment *seg, uint64_t idle_ms, uint32_t max,
		    struct brk_retire_stats *st)
{
	uint32_t pos, n, mask;
	uint64_t rel;

	_Static_assert(sizeof(struct brk_retire_stats) == 64, "retire stats: 64 bytes");
	if (!seg || !st || idle_ms == 0)
		return -EINVAL;
	if (seg->readonly)
		return -EROFS;
	if (idle_ms > BRK_MAX_DURATION_MS)
		idle_ms = BRK_MAX_DURATION_MS;
	pos = st->cursor;
	memset(st, 0, sizeof(*st));
	st->index_slots = seg->index_slots;
	mask = seg->index_slots - 1;
	if (pos > mask)
		pos = 0;
	if (max == 0 || max > seg->index_slots)
		max = seg->index_slots;
	rel = brk__rel_ms(seg, brk__now(seg));
	for (n = 0; n < max; n++, pos++) {
		uint64_t w, head;
		uint32_t ref = 0;
		struct brk__record *r;
		enum why why = IDLE;
		int rc;

		if (pos > mask) {
			pos = 0;
			st->wrapped = 1;
		}
		w = uatomic_read(&seg->index[pos]);
		if (brk__index_record(seg, w, &ref) <= 0)
			continue;
		r = brk__rec(seg, ref);
		head = uatomic_read(&r->head);
		if (!brk__head_live(head))
			continue;
		st->visited++;
		if (!observe(r, head, idle_ms, rel)) {
			if (idle_check(seg, r, head, 0, rel) == BUSY_LEASE)
				st->busy_lease++;
			else if (idle_check(seg, r, head, 0, rel) == BUSY_STATE)
				st->busy_state++;
			else
				st->busy_recent++;
			continue;
		}
		why = idle_check(seg, r, head, idle_ms, rel); /* cheap pre-check */
		if (why != IDLE) {
			count_busy(st, -EBUSY, why);
			continue;
		}
		rc = brk__index_lock(seg);
		if (rc) {
			count_busy(st, rc, why);
			continue;
		}
		/* the slot may have changed before we took the lock */
		if (uatomic_read(&seg->index[pos]) == w &&
		    uatomic_read(&r->head) == head)
			rc = retire_locked(seg, BRK__IDX_REC(w) - 1, pos, idle_ms,
					   rel, &why);
		else
			rc = -ENOENT;
		brk__index_unlock(seg);
		if (rc == 0)
			st->retired++;
		else if (rc == -EBUSY)
			count_busy(st, rc, why);
	}
	if (pos > mask) {
		pos = 0;
		st->wrapped = 1;
	}
	st->cursor = pos;
	return (int)st->retired;
}
