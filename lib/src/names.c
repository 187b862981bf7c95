/*
 * names.c - record names: validation, the shared name index and the
 * per-process name cache.
 *
 * Shared index: open addressing with linear probing, insert-only; a slot
 * is 0 or (hash32 << 32 | record index + 1), claimed by one CAS, so a
 * concurrent get-or-create of one name from many processes yields exactly
 * one record. A creator allocates its record first (CAS on
 * header.record_count, bounded by the capacity), initialises it, then
 * publishes it with the index CAS; a creator that loses the race marks its
 * record an orphan (never listed) and uses the winner's.
 *
 * Per-process cache: a liburcu rculfhash (bp flavour: safe across fork()
 * without exec, no thread registration), fixed size, no auto-resize (that
 * would start a thread in every worker), name -> handle.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "ident.h"
#include "internal.h"

#define BRK__KIND_ORPHAN 0xdeadu

static int name_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
	       c == '/' || c == '-';
}

int brk_name_validate(const char *name)
{
	size_t i;

	if (!name || !name[0])
		return -EINVAL;
	for (i = 0; name[i]; i++) {
		if (i >= BRK_NAME_MAX)
			return -ENAMETOOLONG;
		if (!name_char_ok((unsigned char)name[i]))
			return -EINVAL;
		if (name[i] == '/' && (i == 0 || name[i + 1] == '\0' ||
				       name[i + 1] == '/'))
			return -EINVAL;
	}
	return 0;
}

/* 64-bit FNV-1a. */
uint64_t brk__hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *name; name++) {
		h ^= (unsigned char)*name;
		h *= 0x100000001b3ULL;
	}
	return h;
}

int brk__record_name(const struct brk__record *r, char *out)
{
	size_t i;

	for (i = 0; i < BRK__NAME_BYTES; i++) {
		out[i] = CMM_LOAD_SHARED(r->name[i]);
		if (out[i] == '\0')
			break;
	}
	if (i == BRK__NAME_BYTES) {
		out[0] = '\0';
		return -BRK_ECORRUPT;
	}
	return brk_name_validate(out) == 0 ? 0 : -BRK_ECORRUPT;
}

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

/* ---- per-process cache ----------------------------------------------- */

static int cache_match(struct cds_lfht_node *node, const void *key)
{
	const struct brk_breaker *b =
		caa_container_of(node, struct brk_breaker, node);
	/* acquire: pairs with the release in cache_put (visible to TSan,
	 * which cannot see inside liburcu) */
	return uatomic_read(&b->ready) && strcmp(b->name, key) == 0;
}

int brk__cache_init(brk_segment *s)
{
	unsigned long n = 1;

	while (n < s->capacity && n < 65536)
		n <<= 1;
	s->cache = cds_lfht_new_flavor(n, n, n, 0, &urcu_bp_flavor, NULL);
	return s->cache ? 0 : -ENOMEM;
}

void brk__cache_free(brk_segment *s)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	if (!s->cache)
		return;
	urcu_bp_read_lock();
	cds_lfht_for_each(s->cache, &it, node) {
		if (cds_lfht_del(s->cache, node) == 0)
			free(caa_container_of(node, struct brk_breaker, node));
	}
	urcu_bp_read_unlock();
	cds_lfht_destroy(s->cache, NULL);
	s->cache = NULL;
}

static brk_breaker *cache_get(brk_segment *s, const char *name, uint64_t h)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	urcu_bp_read_lock();
	cds_lfht_lookup(s->cache, (unsigned long)h, cache_match, name, &it);
	node = cds_lfht_iter_get_node(&it);
	urcu_bp_read_unlock();
	/* Handles are only freed by brk_detach(): safe outside the lock. */
	return node ? caa_container_of(node, struct brk_breaker, node) : NULL;
}

static brk_breaker *cache_put(brk_segment *s, brk_breaker *b)
{
	struct cds_lfht_node *got;

	cds_lfht_node_init(&b->node);
	uatomic_set(&b->ready, 1);
	urcu_bp_read_lock();
	got = cds_lfht_add_unique(s->cache, (unsigned long)b->hash, cache_match,
				  b->name, &b->node);
	urcu_bp_read_unlock();
	if (got != &b->node) {
		free(b);
		return caa_container_of(got, struct brk_breaker, node);
	}
	return b;
}

int brk__handle(brk_segment *s, const char *name, int create, int kind,
		const struct brk__init *init, brk_breaker **out)
{
	brk_breaker *b;
	uint64_t h;
	uint32_t idx;
	int rc;

	if (!s || !out)
		return -EINVAL;
	rc = brk_name_validate(name);
	if (rc)
		return rc;
	h = brk__hash(name);
	b = cache_get(s, name, h);
	if (!b) {
		if (create && !s->readonly) {
			rc = brk__create(s, name, h, kind, init, &idx);
		} else {
			rc = brk__lookup(s, name, h, &idx);
			if (rc == -ENOENT && create)
				rc = -EROFS;
		}
		if (rc)
			return rc;
		b = calloc(1, sizeof(*b));
		if (!b)
			return -ENOMEM;
		b->seg = s;
		b->idx = idx;
		b->rec = brk__rec(s, idx);
		b->hash = h;
		memcpy(b->name, name, strlen(name) + 1);
		if (kind == BRK_KIND_BREAKER)
			brk__parents_resolve(b);
		b = cache_put(s, b);
	}
	switch (uatomic_read(&b->rec->kind)) {
	case BRK_KIND_BREAKER:
	case BRK_KIND_BUCKET:
	case BRK_KIND_BUDGET:
		if (uatomic_read(&b->rec->kind) != (uint64_t)kind)
			return -EMEDIUMTYPE;
		break;
	default:
		return -BRK_ECORRUPT;
	}
	*out = b;
	return 0;
}
