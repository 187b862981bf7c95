/*
 * index.c - the shared name index: name -> record ref, and record
 * creation.
 *
 * Open addressing with linear probing; a slot is 0 (empty), (hash32 << 32
 * | ref + 1) (live; ref = the record's first arena unit) or BRK__IDX_TOMB
 * (a retired name). Lookups are lock-free: they skip tombs and stop at an
 * empty slot. Creation runs under the index lock (idxlock.c): a full
 * lookup, then a record run from brk__alloc_record() (a new one, or a
 * retired one of the same kind past its quarantine), the extension blocks
 * its settings need (blocks.c), every word stored atomically, its head
 * word published last, then the first tomb or empty slot of the chain
 * takes it. One holder at a time means a concurrent get-or-create of one
 * name from many processes yields exactly one record, with no orphaned
 * records to take back.
 */
#include <sched.h>
#include <string.h>

#include "ident.h"
#include "internal.h"
#include "killpoint.h"

int brk__ref_kind(brk_segment *s, uint32_t ref)
{
	uint64_t head;
	uint32_t kind, units;

	if (ref == 0 || ref >= s->arena_units)
		return -BRK_ECORRUPT;
	head = uatomic_read(&brk__rec(s, ref)->head);
	kind = BRK__HEAD_KIND(head);
	if (kind == 0 || kind == BRK__KIND_RETIRED || kind == BRK__KIND_ORPHAN)
		return 0;
	units = brk__kind_units(kind);
	if (units == 0 || BRK__HEAD_UNITS(head) != units ||
	    units > s->arena_units - ref)
		return -BRK_ECORRUPT;
	return (int)kind;
}

int brk__index_record(brk_segment *s, uint64_t w, uint32_t *ref)
{
	uint32_t rec1 = BRK__IDX_REC(w);
	int kind;

	if (w == 0 || w == BRK__IDX_TOMB)
		return 0;
	if (rec1 == 0)
		return -BRK_ECORRUPT;
	cmm_smp_rmb();
	kind = brk__ref_kind(s, rec1 - 1);
	if (kind > 0)
		*ref = rec1 - 1;
	return kind;
}

struct brk__record *brk__slot_rec(brk_segment *s, uint64_t w)
{
	uint32_t rec1 = BRK__IDX_REC(w);

	if (w == 0 || w == BRK__IDX_TOMB || rec1 == 0 ||
	    !brk__block(s, rec1 - 1, BRK__ID_WORDS * 8u / BRK__UNIT + 1u))
		return NULL;
	return brk__rec(s, rec1 - 1);
}

/* Is index word @w the record for @name? 1 yes, 0 no, 2 it is, but a
 * retirer holds it (its head is retired, its slot still live: the
 * retirer is checking it, and undoes or tombs it in a moment), <0
 * corrupt. */
static int slot_matches(brk_segment *s, uint64_t w, const char *name,
			uint64_t h, uint32_t *idx)
{
	uint32_t ref = 0;
	struct brk__record *r;
	char got[BRK__NAME_BYTES];
	uint64_t hd;
	int rc, retired, tries;

	if (BRK__IDX_HASH(w) != (uint32_t)(h >> 32))
		return 0;
	for (tries = 0;; tries++) {
		rc = brk__index_record(s, w, &ref);
		if (rc != 0)
			break;
		/* a published slot names a published record: only one a
		 * retirer holds is legitimately something else, and a retirer
		 * that found it busy puts the live head back (retire.c): then
		 * it is live again, look once more */
		r = brk__slot_rec(s, w);
		hd = r ? uatomic_read(&r->head) : 0;
		if (brk__head_live(hd) && tries < 4)
			continue;
		if (BRK__HEAD_KIND(hd) != BRK__KIND_RETIRED ||
		    BRK__HEAD_UNITS(hd) == 0 ||
		    !brk__block(s, BRK__IDX_REC(w) - 1, BRK__HEAD_UNITS(hd)))
			return -BRK_ECORRUPT;
		ref = BRK__IDX_REC(w) - 1;
		break;
	}
	if (rc < 0)
		return rc;
	retired = rc == 0;
	r = brk__rec(s, ref);
	rc = brk__record_name(r, got);
	if (rc)
		return retired ? 0 : rc;
	if (strcmp(got, name) != 0)
		return 0;
	*idx = ref;
	return retired ? 2 : 1;
}

/* A lookup that meets a record a retirer is checking waits this many
 * rounds (sched_yield) for the verdict, then takes the name as absent. */
#define RETIRING_SPINS 4096

/* The chain of @h: the slot of @name (*pos, *idx) or -ENOENT. */
static int find(brk_segment *s, const char *name, uint64_t h, uint32_t *idx,
		uint32_t *pos_out)
{
	uint32_t mask = s->index_slots - 1, pos = (uint32_t)h & mask, i = 0;
	uint32_t spins = 0;

	while (i < s->index_slots) {
		uint64_t w = uatomic_read(&s->index[pos]);
		int rc;

		if (w == 0)
			return -ENOENT;
		rc = w == BRK__IDX_TOMB ? 0 : slot_matches(s, w, name, h, idx);
		if (rc < 0)
			return rc;
		if (rc == 2 && spins++ < RETIRING_SPINS) {
			sched_yield(); /* the same slot again */
			continue;
		}
		if (rc == 1) {
			if (pos_out)
				*pos_out = pos;
			return 0;
		}
		i++;
		pos = (pos + 1) & mask;
	}
	return -ENOENT;
}

/* find(), looked at again when a retirer moved index slots meanwhile
 * (retire.c tomb(): header index_moving is odd while it moves). A miss
 * is only trusted when no move overlapped it; the waits are bounded (the
 * word is untrusted). */
#define MOVE_RETRIES 64

static int find_stable(brk_segment *s, const char *name, uint64_t h,
		       uint32_t *idx, uint32_t *pos)
{
	int tries, rc = -ENOENT;

	for (tries = 0; tries < MOVE_RETRIES; tries++) {
		uint64_t m = uatomic_read(&s->hdr->index_moving);

		if (m & 1u) {
			sched_yield();
			continue;
		}
		cmm_smp_rmb();
		rc = find(s, name, h, idx, pos);
		if (rc != -ENOENT)
			return rc;
		cmm_smp_rmb();
		if (uatomic_read(&s->hdr->index_moving) == m)
			return rc;
	}
	return find(s, name, h, idx, pos);
}

int brk__lookup(brk_segment *s, const char *name, uint64_t h, uint32_t *idx)
{
	return find_stable(s, name, h, idx, NULL);
}

int brk__index_pos(brk_segment *s, const char *name, uint64_t h,
		   uint32_t idx, uint32_t *pos)
{
	uint32_t got;
	int rc = find_stable(s, name, h, &got, pos);

	return rc ? rc : got == idx ? 0 : -ENOENT;
}

int brk__index_insert(brk_segment *s, uint64_t h, uint32_t idx)
{
	uint32_t mask = s->index_slots - 1, pos = (uint32_t)h & mask, i;

	for (i = 0; i < s->index_slots; i++, pos = (pos + 1) & mask) {
		uint64_t w = uatomic_read(&s->index[pos]);
		if (w == 0 || w == BRK__IDX_TOMB) {
			uatomic_set(&s->index[pos], BRK__IDX_MAKE(h >> 32, idx + 1));
			return 0;
		}
	}
	return -ENOSPC;
}

/* @n words at @w back to zero, one atomic store each (a stale writer may
 * still touch a retired run: no torn words). */
static void clear_words(uint64_t *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (uatomic_read(&w[i]))
			uatomic_set(&w[i], 0);
}

/* A retired breaker's extension blocks, kept linked while it was free,
 * cleared for its next owner (their links stay: blocks.c adds what the
 * new settings need on top). */
static void clear_blocks(brk_segment *s, struct brk__record *r)
{
	uint64_t x = uatomic_read(&r->ext_refs), p = uatomic_read(&r->permit_refs);
	uint32_t pn = BRK__PR_P_SLOTS(p), on = BRK__PR_O_SLOTS(p);
	uint64_t *w;

	/* only blocks with this record's owner tag, all but the tag (the run
	 * is reused whole: same owner); a garbage link writes nowhere */
	if ((w = brk__tagged_block(s, r, BRK__XR_PROBE(x), BRK__PROBE_EXT_UNITS,
				   BRK__BT_PROBE)))
		clear_words(w, BRK__BTAG_WORD(BRK__PROBE_EXT_UNITS));
	if ((w = brk__tagged_block(s, r, BRK__XR_WINDOW(x), BRK__WIN_EXT_UNITS,
				   BRK__BT_WINDOW)))
		clear_words(w, BRK__BTAG_WORD(BRK__WIN_EXT_UNITS));
	if (pn && (w = brk__tagged_block(s, r, BRK__PR_P_REF(p), BRK__PERMIT_UNITS(pn),
					 BRK__BT_PERMIT)))
		clear_words(w, BRK__BTAG_WORD(BRK__PERMIT_UNITS(pn)));
	if (on && (w = brk__tagged_block(s, r, BRK__PR_O_REF(p), BRK__PERMIT_UNITS(on),
					 BRK__BT_PERMIT)))
		clear_words(w, BRK__BTAG_WORD(BRK__PERMIT_UNITS(on)));
}

/* Initialise the run at @r (nobody else refers to it) and write its head
 * last. A retired run gets a new generation of the head and a state word
 * above any a stale handle read, so no CAS of one succeeds here
 * (docs/design/lifecycle.md "Retirement"). Breakers get the extension blocks
 * their settings need first: no process ever sees a record without them. */
static int init_record(brk_segment *s, struct brk__record *r, uint32_t units,
		       const char *name, uint64_t h, int kind,
		       const struct brk__init *init)
{
	uint64_t old = uatomic_read(&r->head), gen = 1, st_gen = 0;
	uint64_t nw[BRK__NAME_BYTES / 8] = { 0 }, links[3] = { 0, 0, 0 };
	uint64_t *w = brk__xw(r);
	uint32_t i;
	int rc;

	if (old != 0) {
		gen = BRK__HEAD_GEN(old) + 1;
		if (kind == BRK_KIND_BREAKER) {
			st_gen = (BRK__ST_GEN(uatomic_read(&r->state)) + 1) & BRK__GEN_MASK;
			clear_blocks(s, r);
			brk__hold_clear(s, r);
			links[0] = uatomic_read(&r->ext_refs);
			links[1] = uatomic_read(&r->permit_refs);
			links[2] = uatomic_read(&r->hold);
		}
	}
	clear_words(w + 1, (size_t)units * BRK__UNIT_WORDS - 1);
	memcpy(nw, name, strlen(name));
	for (i = 0; i < BRK__NAME_BYTES / 8; i++)
		uatomic_set(&((uint64_t *)(void *)r->name)[i], nw[i]);
	uatomic_set(&r->hash, h);
	if (kind == BRK_KIND_BREAKER) {
		uatomic_set(&r->ext_refs, links[0]);
		uatomic_set(&r->permit_refs, links[1]);
		uatomic_set(&r->hold, links[2]);
		if (init && init->cfg) {
			rc = brk__ensure_blocks(s, r, init->cfg);
			if (rc)
				return rc; /* blocks linked so far stay with the run */
			brk__config_store(r, init->cfg);
		}
		uatomic_set(&r->state, BRK__ST_MAKE(BRK_CLOSED, 0, st_gen));
	}
	for (i = 0; init && i < init->n_ext && i < 4; i++)
		if (init->ext[i].idx >= BRK__ID_WORDS &&
		    init->ext[i].idx < units * BRK__UNIT_WORDS)
			uatomic_set(&w[init->ext[i].idx], init->ext[i].val);
	cmm_smp_wmb();
	uatomic_set(&r->head, BRK__HEAD_MAKE(kind, units, gen));
	return 0;
}

/* Under the lock, @name known absent. */
static int create_locked(brk_segment *s, const char *name, uint64_t h, int kind,
			 const struct brk__init *init, uint32_t *idx)
{
	uint32_t units = brk__kind_units((uint32_t)kind), mine;
	struct brk__record *r;
	int rc;

	if (units == 0)
		return -EINVAL;
	if (uatomic_read(&s->hdr->live_records) >= s->capacity)
		return -ENOSPC;
	rc = brk__alloc_record(s, (uint32_t)kind, &mine);
	if (rc)
		return rc;
	r = brk__rec(s, mine);
	rc = init_record(s, r, units, name, h, kind, init);
	BRK__KILLPOINT(BRK__KP_INDEX_LOCKED);
	if (rc == 0)
		rc = brk__index_insert(s, h, mine);
	if (rc) {
		/* never published: back on the free list, blocks and all */
		uatomic_set(&r->head, BRK__HEAD_MAKE(BRK__KIND_RETIRED, units,
						     BRK__HEAD_GEN(uatomic_read(&r->head))));
		brk__free_record(s, mine, (uint32_t)kind);
		uatomic_set(&s->hdr->index_intent, 0);
		return rc;
	}
	uatomic_add_return(&s->hdr->index_seq, 1);
	uatomic_add_return(&s->hdr->live_records, 1);
	uatomic_set(&s->hdr->index_intent, 0);
	brk__created_here++; /* brk_breaker_get_ex() */
	*idx = mine;
	return 0;
}

int brk__create(brk_segment *s, const char *name, uint64_t h, int kind,
		const struct brk__init *init, uint32_t *idx)
{
	int rc;

	rc = brk__lookup(s, name, h, idx);
	if (rc != -ENOENT)
		return rc;
	rc = brk__index_lock(s);
	if (rc)
		return rc;
	rc = brk__lookup(s, name, h, idx); /* full lookup, under the lock */
	if (rc == -ENOENT)
		rc = create_locked(s, name, h, kind, init, idx);
	brk__index_unlock(s);
	return rc;
}

uint32_t brk_record_count(brk_segment *s)
{
	uint64_t n = uatomic_read(&s->hdr->live_records);

	return n > s->capacity ? s->capacity : (uint32_t)n;
}
