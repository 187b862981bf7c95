/*
 * cache.c - the per-process handle cache: name -> struct brk_breaker.
 *
 * A liburcu rculfhash (bp flavour: safe across fork() without exec, no
 * thread registration), fixed size, no auto-resize (that would start a
 * thread in every worker).
 */
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "internal.h"

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
	switch (BRK__HEAD_KIND(uatomic_read(&b->rec->head))) {
	case BRK_KIND_BREAKER:
	case BRK_KIND_BUCKET:
	case BRK_KIND_BUDGET:
		if (BRK__HEAD_KIND(uatomic_read(&b->rec->head)) != (uint32_t)kind)
			return -EMEDIUMTYPE;
		break;
	default:
		return -BRK_ECORRUPT;
	}
	*out = b;
	return 0;
}
