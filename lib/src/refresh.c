/*
 * refresh.c - generation-tagged handles: resolving a name to a live
 * record, and re-resolving a handle whose record was retired.
 *
 * A handle keeps the head word of the record it resolved (struct
 * brk__view). Every entry point compares it with the record's head (one
 * load, brk__fresh()); on a mismatch the record was retired (or is being
 * retired) and this file resolves the name again: a lookup, and - for a
 * handle from a get-or-create - a creation with the handle's original
 * settings. The new view is published with one atomic store; views are
 * never freed before the handle, so a thread still reading an older one
 * reads valid memory (and refreshes again on its next call).
 */
#include <stdlib.h>
#include <string.h>

#include "fresh.h"
#include "internal.h"

/* Does live record @r (head @head) still carry @name? Name read between
 * two loads of the head: equal heads mean the name belongs to it. */
static int still_named(const struct brk__record *r, uint64_t head,
		       const char *name)
{
	char got[BRK__NAME_BYTES];

	cmm_smp_rmb();
	if (brk__record_name(r, got) != 0)
		return 0;
	cmm_smp_rmb();
	return uatomic_read(&r->head) == head && strcmp(got, name) == 0;
}

int brk__resolve(brk_segment *s, const char *name, uint64_t h, int create,
		 int kind, const struct brk__init *init, uint32_t *idx,
		 uint64_t *head)
{
	int tries, rc;

	for (tries = 0; tries < 8; tries++) {
		uint64_t hd;

		if (create && !s->readonly) {
			rc = brk__create(s, name, h, kind, init, idx);
		} else {
			rc = brk__lookup(s, name, h, idx);
			if (rc == -ENOENT && create)
				rc = -EROFS;
		}
		if (rc)
			return rc;
		hd = uatomic_read(&brk__rec(s, *idx)->head);
		if (brk__head_live(hd)) {
			if (!still_named(brk__rec(s, *idx), hd, name))
				continue; /* retired (and maybe reused) meanwhile */
			if (BRK__HEAD_KIND(hd) != (uint32_t)kind)
				return -EMEDIUMTYPE;
			*head = hd;
			return 0;
		}
		if (BRK__HEAD_KIND(hd) != BRK__KIND_RETIRED)
			return -BRK_ECORRUPT;
		/* A retirement in progress: wait for its holder to finish. */
		if (!s->readonly && brk__index_lock(s) == 0)
			brk__index_unlock(s);
	}
	return -BRK_ECONTENDED;
}

static void init_of(const brk_breaker *b, struct brk__init *init)
{
	uint32_t i;

	memset(init, 0, sizeof(*init));
	if (!b->init)
		return;
	init->cfg = b->init->has_cfg ? &b->init->cfg : NULL;
	init->n_ext = b->init->n_ext;
	for (i = 0; i < b->init->n_ext && i < 4; i++) {
		init->ext[i].idx = b->init->ext[i].idx;
		init->ext[i].val = b->init->ext[i].val;
	}
}

int brk__refresh(brk_breaker *b)
{
	struct brk__init init;

	init_of(b, &init);
	return brk__refresh_with(b, b->create, &init);
}

int brk__refresh_with(brk_breaker *b, int create, const struct brk__init *init)
{
	struct brk__view *v, *old = uatomic_read(&b->view);
	uint64_t head;
	uint32_t idx;
	int rc;

	rc = brk__resolve(b->seg, b->name, b->hash, create, b->kind, init,
			  &idx, &head);
	if (rc)
		return rc;
	if (uatomic_read(&b->view) != old) {
		old = uatomic_read(&b->view);
		if (old->idx == idx && old->head == head)
			return 0; /* another thread did it */
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->rec = brk__rec(b->seg, idx);
	v->idx = idx;
	v->head = head;
	/* Chain every view for brk_detach(): CAS onto the current one. */
	for (;;) {
		v->older = old;
		if (uatomic_cmpxchg(&b->view, old, v) == old)
			return 0;
		old = uatomic_read(&b->view);
	}
}

void brk__views_free(brk_breaker *b)
{
	struct brk__view *v = b->view;

	while (v && v != &b->view0) {
		struct brk__view *o = v->older;
		free(v);
		v = o;
	}
}
