/*
 * parents.c - hierarchy: "a/b/c" is refused while "a" or "a/b" is open
 * (or cooling, or forced open); failures of "a/b/c" never open its
 * ancestors. Ancestors are looked up again when header.index_seq has
 * changed (bumped by every create and every retire: a missing ancestor
 * may exist now, a found one may have been retired), so the fast path of
 * a hierarchical name costs one load per level plus one for the
 * sequence.
 */
#include <string.h>

#include "internal.h"

void brk__parents_resolve(brk_breaker *b)
{
	char prefix[BRK_NAME_MAX + 1];
	uint32_t n = 0, missing = 0, idx;
	uint64_t at = uatomic_read(&b->seg->hdr->index_seq);
	size_t i;

	for (i = 0; b->name[i]; i++) {
		struct brk__record *r = NULL;
		if (b->name[i] != '/')
			continue;
		memcpy(prefix, b->name, i);
		prefix[i] = '\0';
		if (brk__lookup(b->seg, prefix, brk__hash(prefix), &idx) == 0 &&
		    brk__ref_kind(b->seg, idx) == BRK_KIND_BREAKER)
			r = brk__rec(b->seg, idx);
		else
			missing++;
		uatomic_set(&b->parents[n], r);
		n++;
	}
	uatomic_set(&b->parents_missing, missing);
	uatomic_set(&b->parents_at, at);
	uatomic_set(&b->n_parents, n);
}

int brk__parents_check(brk_breaker *b, uint64_t *now, struct brk_refusal *why)
{
	uint32_t n = uatomic_read(&b->n_parents), k;

	if (n == 0)
		return 0;
	if (uatomic_read(&b->seg->hdr->index_seq) != uatomic_read(&b->parents_at))
		brk__parents_resolve(b);
	for (k = 0; k < n; k++) {
		/* not const: the gate may bring a far deadline back */
		struct brk__record *r = (struct brk__record *)uatomic_read(&b->parents[k]);
		uint64_t mode, w, cu;
		if (!r)
			continue;
		mode = uatomic_read(&r->mode);
		if (mode == BRK_MODE_FORCED_OPEN || mode > BRK_MODE_METRICS_ONLY)
			return brk__refuse(b, why, BRK__CTR_REJ_OPEN, -BRK_EOPEN, 0, r,
					   BRK_CAUSE_FORCED_OPEN);
		if (mode == BRK_MODE_DISABLED || mode == BRK_MODE_METRICS_ONLY)
			continue;
		w = uatomic_read(&r->state);
		if (BRK__ST_STATE(w) == BRK_OPEN) {
			uint64_t rel = brk__rel_ms(b->seg, brk__lazy_now(b->seg, now));
			uint64_t until = brk__open_until_now(r, w, rel,
							     !b->seg->readonly);
			if (rel < until)
				return brk__refuse(b, why, BRK__CTR_REJ_OPEN,
						   -BRK_EOPEN, until - rel, r,
						   BRK_CAUSE_OPEN);
		}
		cu = uatomic_read(&r->cool_until_ns);
		if (cu && cu > brk__lazy_now(b->seg, now) &&
		    (cu = brk__cool_until_now(r, *now, !b->seg->readonly)) > *now)
			return brk__refuse(b, why, BRK__CTR_REJ_COOLING,
					   -BRK_ECOOLING,
					   (cu - *now + 999999u) / 1000000u, r,
					   BRK_CAUSE_COOLING);
	}
	return 0;
}
