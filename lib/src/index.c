/*
 * index.c - the shared name index: name -> record, and record creation.
 *
 * Open addressing with linear probing, insert-only; a slot is 0 or
 * (hash32 << 32 | record index + 1), claimed by one CAS, so a concurrent
 * get-or-create of one name from many processes yields exactly one
 * record. A creator allocates its record first (CAS on
 * header.record_count, bounded by the capacity), initialises it, then
 * publishes it with the index CAS; a creator that loses the race marks its
 * record an orphan (never listed) and uses the winner's.
 */
#include <sched.h>
#include <string.h>

#include "ident.h"
#include "internal.h"

#define BRK__KIND_ORPHAN 0xdeadu

/* Is index word @w the record for @name? 1 yes, 0 no, <0 corrupt. */
static int slot_matches(brk_segment *s, uint64_t w, const char *name,
			uint64_t h, uint32_t *idx)
{
	uint32_t rec1 = BRK__IDX_REC(w);
	struct brk__record *r;
	char got[BRK__NAME_BYTES];
	int rc;

	if (BRK__IDX_HASH(w) != (uint32_t)(h >> 32))
		return 0;
	if (rec1 == 0 || rec1 > s->capacity)
		return -BRK_ECORRUPT;
	cmm_smp_rmb();
	r = brk__rec(s, rec1 - 1);
	rc = brk__record_name(r, got);
	if (rc)
		return rc;
	if (strcmp(got, name) != 0)
		return 0;
	*idx = rec1 - 1;
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

static int alloc_record(brk_segment *s, uint32_t *idx)
{
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES * 16; tries++) {
		uint64_t n = uatomic_read(&s->hdr->record_count);
		if (n >= s->capacity)
			return -ENOSPC;
		if (uatomic_cmpxchg(&s->hdr->record_count, n, n + 1) == n) {
			*idx = (uint32_t)n;
			return 0;
		}
	}
	return -BRK_ECONTENDED;
}

/* Take back a record orphaned by a lost creation race: CAS(kind, orphan
 * -> 0), then clear it (no index slot points at an orphan). */
static int reuse_orphan(brk_segment *s, uint32_t *idx)
{
	uint32_t n = brk_record_count(s), i;

	if (uatomic_read(&s->hdr->orphans) == 0)
		return -ENOSPC;
	for (i = 0; i < n; i++) {
		struct brk__record *r = brk__rec(s, i);
		if (uatomic_read(&r->kind) != BRK__KIND_ORPHAN ||
		    uatomic_cmpxchg(&r->kind, BRK__KIND_ORPHAN, 0) != BRK__KIND_ORPHAN)
			continue;
		uatomic_add_return(&s->hdr->orphans, -1);
		memset((uint8_t *)r + sizeof(r->kind), 0, sizeof(*r) - sizeof(r->kind));
		*idx = i;
		return 0;
	}
	return -ENOSPC;
}

static void init_record(brk_segment *s, struct brk__record *r,
			const char *name, uint64_t h, int kind,
			const struct brk__init *init)
{
	uint32_t i;

	size_t len = strlen(name);

	memset(r->name, 0, sizeof(r->name));
	memcpy(r->name, name, len);
	uatomic_set(&r->hash, h);
	if (init && init->cfg)
		brk__config_store(r, init->cfg);
	for (i = 0; init && i < init->n_ext && i < 4; i++)
		if (init->ext[i].idx < sizeof(r->ext) / sizeof(r->ext[0]))
			uatomic_set(&r->ext[init->ext[i].idx], init->ext[i].val);
	uatomic_set(&r->state, BRK__ST_MAKE(BRK_CLOSED, 0, 0));
	(void)s;
	cmm_smp_wmb();
	uatomic_set(&r->kind, (uint64_t)kind);
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

/* Allocate, initialise and publish a record for @name (we hold a
 * "creating" count meanwhile). -ENOSPC: no record free right now. */
static int create_once(brk_segment *s, const char *name, uint64_t h, int kind,
		       const struct brk__init *init, uint32_t *idx)
{
	uint32_t mine;
	int rc;

	rc = alloc_record(s, &mine);
	if (rc == -ENOSPC)
		rc = reuse_orphan(s, &mine);
	if (rc)
		return rc;
	init_record(s, brk__rec(s, mine), name, h, kind, init);
	rc = publish(s, name, h, mine, idx);
	if (rc == 1)
		return 0;
	uatomic_set(&brk__rec(s, mine)->kind, BRK__KIND_ORPHAN);
	uatomic_add_return(&s->hdr->orphans, 1);
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
	uint64_t n = uatomic_read(&s->hdr->record_count);

	return n > s->capacity ? s->capacity : (uint32_t)n;
}
