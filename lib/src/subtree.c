/*
 * subtree.c - the records of a name's subtree: NAME, NAME/... and
 * NAME:... (any kind), for health.c.
 *
 * The name index is a hash table: nothing in it is ordered by prefix, so
 * finding a subtree means one walk of every slot, reading the head and
 * the name of each live record (O(index_slots) = about 2 x capacity
 * slots; docs/design/observability.md "Health states" has the cost at 10^6
 * records).
 *
 * A handle keeps the membership of the last BRK__SUBTREE_CACHED names it
 * walked (refs, kinds, head words), valid while header.index_seq is
 * unchanged: every create and every retire bumps it after changing the
 * index, so a walk that read the sequence first and finds it unchanged
 * (and no retirer moving slots) at its end saw every member. A repeated
 * evaluation (breakerd --health every scan, a status page) then costs
 * O(subtree): each cached record's head word is checked again (a record
 * reused under a new name would fail it) and the caller reads its words
 * live. Only the membership is cached, never a state.
 *
 * Threads of one process share the cache under a try-lock: a thread that
 * finds it taken walks without it (correct, just the full cost). A child
 * forked while a thread held it walks uncached for good.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "subtree.h"

#define BRK__SUBTREE_CACHED 8u

struct member {
	uint32_t ref;
	int kind;
	uint64_t head;
	int self;
};

struct entry {
	char name[BRK__NAME_BYTES];
	int valid;
	uint64_t seq;      /* header.index_seq the walk started at */
	uint64_t used;     /* cache tick of the last use (replacement) */
	uint32_t n, cap;
	struct member *m;
};

struct brk__subtree_cache {
	int lock;          /* 0 free, 1 taken (uatomic_cmpxchg) */
	uint64_t tick;
	struct entry e[BRK__SUBTREE_CACHED];
};

/* The handle's cache, allocated on first use (NULL: out of memory). */
static struct brk__subtree_cache *cache_of(brk_segment *s)
{
	struct brk__subtree_cache *c = uatomic_read(&s->subtree), *mine;

	if (c)
		return c;
	mine = calloc(1, sizeof(*mine));
	if (!mine)
		return NULL;
	c = uatomic_cmpxchg(&s->subtree, NULL, mine);
	if (c) { /* another thread's won */
		free(mine);
		return c;
	}
	return mine;
}

void brk__subtree_cache_free(brk_segment *s)
{
	struct brk__subtree_cache *c = s->subtree;
	uint32_t i;

	if (!c)
		return;
	for (i = 0; i < BRK__SUBTREE_CACHED; i++)
		free(c->e[i].m);
	free(c);
	s->subtree = NULL;
}

/* Append a member (a failed allocation makes the entry not cacheable). */
static void add(struct entry *en, uint32_t ref, int kind, uint64_t head, int self)
{
	if (!en)
		return;
	if (en->n == en->cap) {
		uint32_t cap = en->cap ? en->cap * 2u : 16u;
		struct member *m = realloc(en->m, cap * sizeof(*m));
		if (!m) {
			en->valid = -1;
			return;
		}
		en->m = m;
		en->cap = cap;
	}
	en->m[en->n++] = (struct member){ ref, kind, head, self };
}

/* Is the slot at @pos still @w? A record that looks wrong under a slot
 * that changed meanwhile was retired or reused: not corruption. */
static int slot_moved(brk_segment *s, uint32_t pos, uint64_t w)
{
	cmm_smp_rmb();
	return uatomic_read(&s->index[pos]) != w;
}

/* Does the name of @r start with @name (@len bytes) followed by NUL, '/'
 * or ':'? One shared load per byte compared, stopping at the first
 * difference; never past the name field. */
static int prefix_match(const struct brk__record *r, const char *name, size_t len)
{
	size_t i;
	char c;

	for (i = 0; i < len; i++)
		if (CMM_LOAD_SHARED(r->name[i]) != name[i])
			return 0;
	c = CMM_LOAD_SHARED(r->name[len]); /* len <= BRK_NAME_MAX */
	return c == '\0' || c == '/' || c == ':';
}

/* The full walk: @fn for each member, recorded into @en if not NULL. */
static int walk(brk_segment *s, const char *name, size_t len,
		brk__subtree_fn fn, void *ctx, struct entry *en)
{
	char nm[BRK__NAME_BYTES];
	uint32_t pos;

	for (pos = 0; pos < s->index_slots; pos++) {
		uint64_t w = uatomic_read(&s->index[pos]), head;
		uint32_t ref = 0;
		int kind;
		char c;

		if (w == 0 || w == BRK__IDX_TOMB)
			continue;
		kind = brk__index_record(s, w, &ref);
		if (kind == 0)
			continue; /* being retired, or a creation not done */
		/* most names differ in their first bytes: compare in place
		 * first, copy and validate only a candidate (a record whose
		 * name is not in the subtree is not read further) */
		if (kind > 0 && !prefix_match(brk__rec(s, ref), name, len))
			continue;
		if (kind < 0 || brk__record_name(brk__rec(s, ref), nm) != 0) {
			if (slot_moved(s, pos, w))
				continue;
			return -BRK_ECORRUPT;
		}
		if (strncmp(nm, name, len) != 0)
			continue;
		c = nm[len];
		if (c != '\0' && c != '/' && c != ':')
			continue; /* "payments" is not in the subtree of "pay" */
		if ((uint32_t)(brk__hash(nm) >> 32) != BRK__IDX_HASH(w)) {
			if (slot_moved(s, pos, w))
				continue;
			return -BRK_ECORRUPT;
		}
		head = uatomic_read(&brk__rec(s, ref)->head);
		add(en, ref, kind, head, c == '\0');
		fn(ctx, ref, kind, c == '\0');
	}
	return 0;
}

/* Replay a cached entry: 1 done, 0 a member's head changed (walk again). */
static int replay(brk_segment *s, const struct entry *en, brk__subtree_fn fn,
		  void *ctx)
{
	uint32_t i;

	for (i = 0; i < en->n; i++)
		if (uatomic_read(&brk__rec(s, en->m[i].ref)->head) != en->m[i].head)
			return 0;
	for (i = 0; i < en->n; i++)
		fn(ctx, en->m[i].ref, en->m[i].kind, en->m[i].self);
	return 1;
}

/* The entry for @name, or the least recently used one, emptied. */
static struct entry *entry_for(struct brk__subtree_cache *c, const char *name,
			       int *hit)
{
	struct entry *lru = &c->e[0];
	uint32_t i;

	c->tick++;
	for (i = 0; i < BRK__SUBTREE_CACHED; i++) {
		struct entry *en = &c->e[i];
		if (en->valid == 1 && strcmp(en->name, name) == 0) {
			en->used = c->tick;
			*hit = 1;
			return en;
		}
		if (en->used < lru->used)
			lru = en;
	}
	*hit = 0;
	strcpy(lru->name, name);
	lru->valid = 0;
	lru->n = 0;
	lru->used = c->tick;
	return lru;
}

int brk__subtree_each(brk_segment *s, const char *name, brk__subtree_fn fn,
		      void *ctx, int *cached)
{
	struct brk__subtree_cache *c = cache_of(s);
	size_t len = strlen(name);
	uint64_t seq, moving;
	struct entry *en;
	int rc, hit;

	*cached = 0;
	if (!c || uatomic_cmpxchg(&c->lock, 0, 1) != 0)
		return walk(s, name, len, fn, ctx, NULL);
	seq = uatomic_read(&s->hdr->index_seq);
	moving = uatomic_read(&s->hdr->index_moving);
	cmm_smp_rmb();
	en = entry_for(c, name, &hit);
	if (hit && en->seq == seq && !(moving & 1) && replay(s, en, fn, ctx)) {
		*cached = 1;
		cmm_smp_mb(); /* our reads and writes before the unlock */
		uatomic_set(&c->lock, 0);
		return 0;
	}
	en->valid = 0;
	en->n = 0;
	rc = walk(s, name, len, fn, ctx, en);
	cmm_smp_rmb();
	/* cache it only if nothing was created, retired or moved meanwhile */
	if (rc == 0 && en->valid == 0 && !(moving & 1) &&
	    uatomic_read(&s->hdr->index_seq) == seq &&
	    uatomic_read(&s->hdr->index_moving) == moving) {
		en->seq = seq;
		en->valid = 1;
	} else {
		en->valid = 0;
	}
	cmm_smp_mb(); /* the entry's writes before the unlock */
	uatomic_set(&c->lock, 0);
	return rc;
}
