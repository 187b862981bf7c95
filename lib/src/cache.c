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
		if (cds_lfht_del(s->cache, node) == 0) {
			brk_breaker *b = caa_container_of(node, struct brk_breaker, node);
			brk__views_free(b);
			free(b);
		}
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

/* The handle's copy of its creation settings (refresh.c re-creates with
 * them after a retirement). */
static void keep_init(brk_breaker *b, const struct brk__init *init)
{
	uint32_t i;

	if (!init)
		return;
	if (init->cfg) {
		b->init.cfg = *init->cfg;
		b->init.has_cfg = 1;
	}
	b->init.n_ext = init->n_ext < 4 ? init->n_ext : 4;
	for (i = 0; i < b->init.n_ext; i++) {
		b->init.ext[i].idx = init->ext[i].idx;
		b->init.ext[i].val = init->ext[i].val;
	}
}

int brk__handle(brk_segment *s, const char *name, int create, int kind,
		const struct brk__init *init, brk_breaker **out)
{
	brk_breaker *b;
	uint64_t h, head;
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
		rc = brk__resolve(s, name, h, create, kind, init, &idx, &head);
		if (rc)
			return rc;
		b = calloc(1, sizeof(*b));
		if (!b)
			return -ENOMEM;
		b->seg = s;
		b->view0.idx = idx;
		b->view0.rec = brk__rec(s, idx);
		b->view0.head = head;
		b->view = &b->view0;
		b->kind = kind;
		b->create = create;
		keep_init(b, init);
		b->hash = h;
		memcpy(b->name, name, strlen(name) + 1);
		if (kind == BRK_KIND_BREAKER)
			brk__parents_resolve(b);
		b = cache_put(s, b);
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
