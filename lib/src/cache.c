/*
 * cache.c - the per-process handle cache: name -> struct brk_breaker.
 *
 * An open-addressing table (linear probing) of (hash, handle) slots that
 * starts at BRK__CACHE_MIN_SLOTS and doubles, synchronously, in the thread
 * whose insert takes it past half full. No thread is ever started (the
 * library must stay fork()-safe and work where a worker may not create
 * threads), so liburcu's rculfhash is not used any more: its resize
 * splits the re-bucketing of a table of 2^13 buckets or more across
 * pthreads it creates (partition_resize_helper() in src/rculfhash.c,
 * liburcu 0.13, when more than one CPU is online), and its automatic
 * resize runs in the call_rcu worker thread. A fixed table (the earlier
 * design, min(capacity, 65536) buckets) either wastes memory in a process
 * that uses three names or degrades at 10^6.
 *
 * Concurrency: lookups take no lock and write nothing: load the table
 * pointer, probe. Inserts (once per name per process, after the shared
 * index lookup that costs far more) are serialised by a per-segment lock
 * word; an insert writes the slot's hash, then publishes the handle
 * pointer (release), so a reader that sees the pointer sees the handle
 * whole. A grow copies every slot into a new table under the lock and
 * publishes it with one store; the old table stays readable (it is freed
 * only by brk_detach(), with the handles), so a reader still probing it
 * finds every name inserted before the grow, and one inserted after it
 * is a miss that ends in the insert path, which finds it under the lock.
 * Retired tables add at most the current table's size again (a geometric
 * series), about 16-32 bytes per cached name.
 *
 * fork(): the lock word holds the owner's pid; a child that finds it held
 * by another pid inherited it from a thread that does not exist in the
 * child, and takes it over (every step under the lock leaves the table
 * consistent: slots and the table pointer are single stores).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define BRK__CACHE_MIN_SLOTS 16u

struct brk__cache_slot {
	uint64_t hash;
	brk_breaker *b; /* NULL: empty; set once, after hash */
};

struct brk__cache_table {
	struct brk__cache_table *older; /* retired tables, freed at detach */
	size_t mask;                    /* slots - 1 */
	struct brk__cache_slot slot[];
};

static struct brk__cache_table *table_new(size_t slots)
{
	struct brk__cache_table *t =
		calloc(1, sizeof(*t) + slots * sizeof(t->slot[0]));

	if (t)
		t->mask = slots - 1;
	return t;
}

int brk__cache_init(brk_segment *s)
{
	s->cache = calloc(1, sizeof(*s->cache));
	if (!s->cache)
		return -ENOMEM;
	s->cache->table = table_new(BRK__CACHE_MIN_SLOTS);
	if (!s->cache->table) {
		free(s->cache);
		s->cache = NULL;
		return -ENOMEM;
	}
	return 0;
}

void brk__cache_free(brk_segment *s)
{
	struct brk__cache_table *t, *older;
	size_t i;

	if (!s->cache)
		return;
	t = s->cache->table;
	for (i = 0; i <= t->mask; i++)
		if (t->slot[i].b) { /* the current table holds every handle */
			brk__views_free(t->slot[i].b);
			free(t->slot[i].b->init);
			free(t->slot[i].b);
		}
	for (; t; t = older) {
		older = t->older;
		free(t);
	}
	free(s->cache);
	s->cache = NULL;
}

size_t brk__cache_count(brk_segment *s)
{
	return s && s->cache ? uatomic_read(&s->cache->count) : 0;
}

size_t brk__cache_bytes(brk_segment *s)
{
	const struct brk__cache_table *t;
	size_t n = 0;

	if (!s || !s->cache)
		return 0;
	for (t = uatomic_read(&s->cache->table); t; t = t->older)
		n += sizeof(*t) + (t->mask + 1) * sizeof(t->slot[0]);
	return n;
}

static int name_is(const brk_breaker *b, const char *name)
{
	return strcmp(b->name, name) == 0;
}

/* Probe @t for @name: the handle, or NULL at the first empty slot. */
static brk_breaker *table_find(const struct brk__cache_table *t,
			       const char *name, uint64_t h)
{
	size_t pos = (size_t)h & t->mask, i;

	for (i = 0; i <= t->mask; i++, pos = (pos + 1) & t->mask) {
		brk_breaker *b = uatomic_read(&t->slot[pos].b);

		if (!b)
			return NULL;
		cmm_smp_rmb(); /* the pointer before the hash written before it */
		if (t->slot[pos].hash == h && name_is(b, name))
			return b;
	}
	return NULL;
}

static brk_breaker *cache_get(brk_segment *s, const char *name, uint64_t h)
{
	const struct brk__cache_table *t = uatomic_read(&s->cache->table);

	cmm_smp_rmb(); /* the table pointer before its slots */
	return table_find(t, name, h);
}

/* Put @b in the first empty slot of its chain in @t (under the lock, with
 * room known to be there). */
static void table_put(struct brk__cache_table *t, brk_breaker *b)
{
	size_t pos = (size_t)b->hash & t->mask;

	while (t->slot[pos].b)
		pos = (pos + 1) & t->mask;
	t->slot[pos].hash = b->hash;
	cmm_smp_wmb(); /* the hash (and the handle) before the pointer */
	uatomic_set(&t->slot[pos].b, b);
}

/* Double the table (under the lock). 0, or -ENOMEM (the old one stays). */
static int cache_grow(struct brk__cache *c)
{
	struct brk__cache_table *old = c->table, *t;
	size_t i;

	t = table_new((old->mask + 1) * 2);
	if (!t)
		return -ENOMEM;
	for (i = 0; i <= old->mask; i++)
		if (old->slot[i].b)
			table_put(t, old->slot[i].b);
	t->older = old;
	cmm_smp_wmb(); /* the slots before the table that holds them */
	uatomic_set(&c->table, t);
	return 0;
}

static void cache_lock(struct brk__cache *c)
{
	int32_t me = (int32_t)getpid();

	for (;;) {
		int32_t held = uatomic_cmpxchg(&c->lock, 0, me);

		if (held == 0)
			return;
		/* held by a thread of the parent we were fork()ed from: gone */
		if (held != me && uatomic_cmpxchg(&c->lock, held, me) == held)
			return;
		sched_yield();
	}
}

static void cache_unlock(struct brk__cache *c)
{
	uatomic_set(&c->lock, 0);
}

/* Publish @b, or return the handle another thread published first for its
 * name (then @b is freed). NULL: out of memory (@b freed). */
static brk_breaker *cache_put(brk_segment *s, brk_breaker *b)
{
	struct brk__cache *c = s->cache;
	brk_breaker *got;

	cache_lock(c);
	got = table_find(c->table, b->name, b->hash);
	if (!got) {
		/* past half full: grow (if that fails, go on in the old
		 * table while it keeps one slot empty, so probes end) */
		if ((c->count + 1) * 2 > c->table->mask + 1)
			(void)cache_grow(c);
		if (c->count + 1 <= c->table->mask) {
			table_put(c->table, b);
			uatomic_set(&c->count, c->count + 1);
			got = b;
		}
	}
	cache_unlock(c);
	if (got != b) {
		free(b->init);
		free(b);
	}
	return got;
}

/* The number of ancestors of @name ("a/b/c" has "a" and "a/b"). */
static uint32_t count_levels(const char *name)
{
	uint32_t n = 0;

	for (; *name; name++)
		n += *name == '/';
	return n;
}

int brk__handle_cached(brk_segment *s, const char *name, int kind,
		       brk_breaker **out)
{
	brk_breaker *b;

	if (!s || !out || brk_name_validate(name) != 0)
		return -ENOENT;
	b = cache_get(s, name, brk__hash(name));
	if (!b || b->kind != kind)
		return -ENOENT;
	{ /* retired since: the full path refreshes it */
		const struct brk__view *v = uatomic_read(&b->view);
		if (uatomic_read(&v->rec->head) != v->head)
			return -ENOENT;
	}
	*out = b;
	return 0;
}

/* The handle's copy of its creation settings (refresh.c re-creates with
 * them after a retirement). */
static int keep_init(brk_breaker *b, const struct brk__init *init)
{
	struct brk__init_copy *c;
	uint32_t i;

	if (!init || (!init->cfg && init->n_ext == 0))
		return 0; /* the defaults: nothing to keep */
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (init->cfg) {
		c->cfg = *init->cfg;
		c->has_cfg = 1;
	}
	c->n_ext = init->n_ext < 4 ? init->n_ext : 4;
	for (i = 0; i < c->n_ext; i++) {
		c->ext[i].idx = init->ext[i].idx;
		c->ext[i].val = init->ext[i].val;
	}
	b->init = c;
	return 0;
}

int brk__handle(brk_segment *s, const char *name, int create, int kind,
		const struct brk__init *init, brk_breaker **out)
{
	brk_breaker *b;
	uint64_t h, head;
	uint32_t idx, np;
	int rc;

	if (!s || !out)
		return -EINVAL;
	rc = brk_name_validate(name);
	if (rc)
		return rc;
	h = brk__hash(name);
	b = cache_get(s, name, h);
	if (!b) {
		rc = brk__resolve(s, name, h, create, kind, init, &idx, &head);
		if (rc)
			return rc;
		/* room for the ancestors this name has, not for the most a
		 * name can have */
		np = kind == BRK_KIND_BREAKER ? count_levels(name) : 0;
		b = calloc(1, sizeof(*b) + np * sizeof(b->parents[0]));
		if (!b)
			return -ENOMEM;
		b->seg = s;
		b->view0.idx = idx;
		b->view0.rec = brk__rec(s, idx);
		b->view0.head = head;
		b->view = &b->view0;
		b->kind = kind;
		b->create = create;
		if (keep_init(b, init) != 0) {
			free(b);
			return -ENOMEM;
		}
		b->hash = h;
		memcpy(b->name, name, strlen(name) + 1);
		if (kind == BRK_KIND_BREAKER)
			brk__parents_resolve(b);
		b = cache_put(s, b);
		if (!b)
			return -ENOMEM;
	}
	if (b->kind != kind)
		return -EMEDIUMTYPE;
	/* A cached handle whose record was retired: a get creates it again
	 * (with the settings it passes), a find only looks. */
	{
		const struct brk__view *v = uatomic_read(&b->view);
		rc = uatomic_read(&v->rec->head) == v->head ? 0
		     : brk__refresh_with(b, create, create ? init : NULL);
	}
	if (rc)
		return rc;
	*out = b;
	return 0;
}
