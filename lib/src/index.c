/*
 * index.c - the shared name index: name -> record, and record creation.
 *
 * Open addressing with linear probing; a slot is 0 (empty), (hash32 << 32
 * | record index + 1) (live) or BRK__IDX_TOMB (a retired name). Lookups
 * are lock-free: they skip tombs and stop at an empty slot. Creation runs
 * under the index lock (idxlock.c): a full lookup, then a run from
 * brk__alloc() (a new one, or a retired one past its quarantine),
 * initialised with every word stored atomically, its head word published
 * last, then the first tomb or empty slot of the chain takes it. One
 * holder at a time means a concurrent get-or-create of one name from many
 * processes yields exactly one record, with no orphaned records to take
 * back (the lock-free "creating"/"orphans" protocol of layout 2 is gone).
 */
#include <sched.h>
#include <string.h>

#include "ident.h"
#include "internal.h"
#include "killpoint.h"

struct brk__record *brk__slot_rec(brk_segment *s, uint64_t w)
{
	uint32_t rec1 = BRK__IDX_REC(w);

	if (w == 0 || w == BRK__IDX_TOMB || rec1 == 0 || rec1 > s->capacity)
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
	uint32_t rec1 = BRK__IDX_REC(w);
	struct brk__record *r;
	char got[BRK__NAME_BYTES];
	uint64_t hd;
	int rc;

	if (BRK__IDX_HASH(w) != (uint32_t)(h >> 32))
		return 0;
	if (rec1 == 0 || rec1 > s->capacity)
		return -BRK_ECORRUPT;
	cmm_smp_rmb();
	r = brk__rec(s, rec1 - 1);
	hd = uatomic_read(&r->head);
	if (BRK__HEAD_KIND(hd) != BRK__KIND_RETIRED && !brk__head_live(hd))
		return -BRK_ECORRUPT;
	rc = brk__record_name(r, got);
	if (rc)
		return BRK__HEAD_KIND(hd) == BRK__KIND_RETIRED ? 0 : rc;
	if (strcmp(got, name) != 0)
		return 0;
	*idx = rec1 - 1;
	return BRK__HEAD_KIND(hd) == BRK__KIND_RETIRED ? 2 : 1;
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

int brk__lookup(brk_segment *s, const char *name, uint64_t h, uint32_t *idx)
{
	return find(s, name, h, idx, NULL);
}

int brk__index_pos(brk_segment *s, const char *name, uint64_t h,
		   uint32_t idx, uint32_t *pos)
{
	uint32_t got;
	int rc = find(s, name, h, &got, pos);

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

/* Every word of @r but the head back to zero, one atomic store each (a
 * stale writer may still touch a retired run: no torn words). */
static void clear_record(struct brk__record *r)
{
	uint64_t *w = (uint64_t *)(void *)r;
	size_t i;

	for (i = 1; i < sizeof(*r) / sizeof(uint64_t); i++)
		if (uatomic_read(&w[i]))
			uatomic_set(&w[i], 0);
}

static void init_record(struct brk__record *r, const char *name, uint64_t h,
			int kind, const struct brk__init *init)
{
	uint64_t old = uatomic_read(&r->head), gen = 1, st_gen = 0;
	uint64_t nw[BRK__NAME_BYTES / 8] = { 0 };
	uint32_t i;

	if (old != 0) {
		/* A retired run: a new generation of the head, and a state
		 * word above any a stale handle read, so no CAS of one
		 * succeeds here (docs/design.md "Retirement"). */
		gen = BRK__HEAD_GEN(old) + 1;
		st_gen = (BRK__ST_GEN(uatomic_read(&r->state)) + 1) & BRK__GEN_MASK;
		clear_record(r);
	}
	memcpy(nw, name, strlen(name));
	for (i = 0; i < BRK__NAME_BYTES / 8; i++)
		uatomic_set(&((uint64_t *)(void *)r->name)[i], nw[i]);
	uatomic_set(&r->hash, h);
	if (init && init->cfg)
		brk__config_store(r, init->cfg);
	for (i = 0; init && i < init->n_ext && i < 4; i++)
		if (init->ext[i].idx < sizeof(r->ext) / sizeof(r->ext[0]))
			uatomic_set(&r->ext[init->ext[i].idx], init->ext[i].val);
	uatomic_set(&r->state, BRK__ST_MAKE(BRK_CLOSED, 0, st_gen));
	cmm_smp_wmb();
	uatomic_set(&r->head, BRK__HEAD_MAKE(kind, 1, gen));
}

/* Under the lock, @name known absent. */
static int create_locked(brk_segment *s, const char *name, uint64_t h, int kind,
			 const struct brk__init *init, uint32_t *idx)
{
	uint32_t mine;
	int rc;

	rc = brk__alloc(s, 1, &mine);
	if (rc)
		return rc;
	init_record(brk__rec(s, mine), name, h, kind, init);
	BRK__KILLPOINT(BRK__KP_INDEX_LOCKED);
	rc = brk__index_insert(s, h, mine);
	if (rc) {
		struct brk__record *r = brk__rec(s, mine);
		uatomic_set(&r->head, BRK__HEAD_MAKE(BRK__KIND_RETIRED, 1,
						     BRK__HEAD_GEN(uatomic_read(&r->head))));
		brk__free(s, mine, 1);
		return rc;
	}
	uatomic_add_return(&s->hdr->index_seq, 1);
	uatomic_add_return(&s->hdr->live_records, 1);
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
	uint64_t n = uatomic_read(&s->hdr->record_count);

	return n > s->capacity ? s->capacity : (uint32_t)n;
}
