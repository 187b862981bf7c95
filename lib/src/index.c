/*
 * index.c - the shared name index: name -> record ref, and record
 * creation.
 *
 * Open addressing with linear probing; a slot is 0 or (hash32 << 32 |
 * ref + 1), claimed by one CAS, so a concurrent get-or-create of one name
 * from many processes yields exactly one record. A creator reserves a
 * record (CAS on header.live_records, bounded by the capacity), allocates
 * the kind's run of arena units and the extension blocks its settings
 * need (alloc.c, blocks.c), initialises them, writes the head word last
 * and publishes the record with the index CAS; a creator that loses the
 * race marks its run an orphan, gives it back (brk__free) and uses the
 * winner's record.
 */
#include <sched.h>
#include <string.h>

#include "ident.h"
#include "internal.h"

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

	if (w == 0)
		return 0;
	if (rec1 == 0)
		return -BRK_ECORRUPT;
	cmm_smp_rmb();
	kind = brk__ref_kind(s, rec1 - 1);
	if (kind > 0)
		*ref = rec1 - 1;
	return kind;
}

/* Is index word @w the record for @name? 1 yes, 0 no, <0 corrupt. */
static int slot_matches(brk_segment *s, uint64_t w, const char *name,
			uint64_t h, uint32_t *idx)
{
	char got[BRK__NAME_BYTES];
	uint32_t ref = 0;
	uint64_t head;
	int rc;

	if (BRK__IDX_HASH(w) != (uint32_t)(h >> 32))
		return 0;
	rc = brk__index_record(s, w, &ref);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		/* a published slot names a published record: only a retired
		 * one is legitimately something else */
		head = BRK__IDX_REC(w) - 1 < s->arena_units
			? uatomic_read(&brk__rec(s, BRK__IDX_REC(w) - 1)->head) : 0;
		return BRK__HEAD_KIND(head) == BRK__KIND_RETIRED ? 0 : -BRK_ECORRUPT;
	}
	rc = brk__record_name(brk__rec(s, ref), got);
	if (rc)
		return rc;
	if (strcmp(got, name) != 0)
		return 0;
	*idx = ref;
	return 1;
}

int brk__lookup(brk_segment *s, const char *name, uint64_t h, uint32_t *idx)
{
	uint32_t mask = s->index_slots - 1, pos = (uint32_t)h & mask, i;

	for (i = 0; i < s->index_slots; i++, pos = (pos + 1) & mask) {
		uint64_t w = uatomic_read(&s->index[pos]);
		int rc;

		if (w == 0)
			return -ENOENT;
		rc = slot_matches(s, w, name, h, idx);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return -ENOENT;
}

/* One record of the capacity (CAS-bumped header.live_records). */
static int reserve_record(brk_segment *s)
{
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES * 16; tries++) {
		uint64_t n = uatomic_read(&s->hdr->live_records);
		if (n >= s->capacity)
			return -ENOSPC;
		if (uatomic_cmpxchg(&s->hdr->live_records, n, n + 1) == n)
			return 0;
	}
	return -BRK_ECONTENDED;
}

static void unreserve_record(brk_segment *s)
{
	(void)uatomic_add_return(&s->hdr->live_records, -1);
}

/* Initialise the run at @r (nobody else refers to it yet) and write its
 * head last. Breakers get the extension blocks their settings need first:
 * no process ever sees a record without the blocks its settings use. */
static int init_record(brk_segment *s, struct brk__record *r, uint32_t units,
		       const char *name, uint64_t h, int kind,
		       const struct brk__init *init)
{
	uint64_t gen = BRK__HEAD_GEN(uatomic_read(&r->head));
	uint64_t *w = brk__xw(r);
	size_t len = strlen(name);
	uint32_t i;
	int rc;

	memset(w + 1, 0, (size_t)units * BRK__UNIT - sizeof(r->head));
	memcpy(r->name, name, len);
	uatomic_set(&r->hash, h);
	if (kind == BRK_KIND_BREAKER) {
		if (init && init->cfg) {
			rc = brk__ensure_blocks(s, r, init->cfg);
			if (rc) {
				brk__free_blocks(s, r);
				return rc;
			}
			brk__config_store(r, init->cfg);
		}
		uatomic_set(&r->state, BRK__ST_MAKE(BRK_CLOSED, 0, 0));
	}
	for (i = 0; init && i < init->n_ext && i < 4; i++)
		if (init->ext[i].idx >= BRK__ID_WORDS &&
		    init->ext[i].idx < units * BRK__UNIT_WORDS)
			uatomic_set(&w[init->ext[i].idx], init->ext[i].val);
	cmm_smp_wmb();
	uatomic_set(&r->head, BRK__HEAD_MAKE(kind, units, gen));
	return 0;
}

/* Publish record @mine under @name: 1 done, 0 lost the race (*idx is
 * the winner's), <0 corrupt index or no free slot. */
static int publish(brk_segment *s, const char *name, uint64_t h,
		   uint32_t mine, uint32_t *idx)
{
	uint32_t mask = s->index_slots - 1, pos = (uint32_t)h & mask, i;
	uint64_t want = BRK__IDX_MAKE(h >> 32, mine + 1);
	int rc;

	for (i = 0; i < s->index_slots; i++, pos = (pos + 1) & mask) {
		uint64_t w = uatomic_read(&s->index[pos]);
		if (w == 0) {
			w = uatomic_cmpxchg(&s->index[pos], 0, want);
			if (w == 0) {
				*idx = mine;
				return 1;
			}
		}
		rc = slot_matches(s, w, name, h, idx);
		if (rc)
			return rc > 0 ? 0 : rc;
	}
	return -ENOSPC;
}

/* Reserve, allocate, initialise and publish a record for @name (we hold
 * a "creating" count meanwhile). -ENOSPC: capacity or arena full. */
static int create_once(brk_segment *s, const char *name, uint64_t h, int kind,
		       const struct brk__init *init, uint32_t *idx)
{
	uint32_t units = brk__kind_units((uint32_t)kind), mine;
	struct brk__record *r;
	int rc;

	if (units == 0)
		return -EINVAL;
	rc = reserve_record(s);
	if (rc)
		return rc;
	rc = brk__alloc(s, units, &mine);
	if (rc) {
		unreserve_record(s);
		return rc;
	}
	r = brk__rec(s, mine);
	rc = init_record(s, r, units, name, h, kind, init);
	if (rc == 0) {
		rc = publish(s, name, h, mine, idx);
		if (rc == 1)
			return 0;
		/* lost the race (or no index slot): give everything back */
		brk__free_blocks(s, r);
		(void)uatomic_add_return(&s->hdr->orphans, 1);
	}
	uatomic_set(&r->head, BRK__HEAD_MAKE(BRK__KIND_ORPHAN, units,
					     BRK__HEAD_GEN(uatomic_read(&r->head))));
	brk__free(s, mine, units);
	unreserve_record(s);
	return rc;
}

int brk__create(brk_segment *s, const char *name, uint64_t h, int kind,
		const struct brk__init *init, uint32_t *idx)
{
	uint64_t deadline = 0;
	int rc, settled = 0;

	for (;;) {
		rc = brk__lookup(s, name, h, idx);
		if (rc != -ENOENT)
			return rc;
		uatomic_add_return(&s->hdr->creating, 1);
		rc = create_once(s, name, h, kind, init, idx);
		uatomic_add_return(&s->hdr->creating, -1);
		if (rc != -ENOSPC)
			return rc;
		/* Full, unless a racing creator is about to publish this name
		 * or give its record back: wait for those (real time, at most
		 * 1 s: a creator that died mid-way must not block us). */
		if (uatomic_read(&s->hdr->creating) == 0) {
			if (settled++) /* one more look after everyone settled */
				return -ENOSPC;
			continue;
		}
		if (!deadline)
			deadline = brk__monotonic_ns(NULL) + 1000000000u;
		else if (brk__monotonic_ns(NULL) > deadline)
			return -ENOSPC;
		sched_yield();
	}
}

uint32_t brk_record_count(brk_segment *s)
{
	uint64_t n = uatomic_read(&s->hdr->live_records);

	return n > s->capacity ? s->capacity : (uint32_t)n;
}
