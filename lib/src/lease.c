/*
 * lease.c - probe slots and bulkhead permits.
 *
 * The owner word is the truth: a slot is claimed by CAS(owner, free ->
 * token) and released by CAS(owner, token -> free), so a worker whose
 * lease was reclaimed can never free someone else's. A slot is free when
 * its owner is 0 or carries another tag (an older breaker generation for
 * probes, an older lease epoch for permits): stale leases are dropped
 * lazily by the next claim, with no multi-word reset.
 *
 * token = pid:22 | tag:18 | nonce:24. After winning the claim the owner
 * writes meta = claim_ms:40 | nonce and start = start_ticks:40 | nonce;
 * a reader trusts them only when their nonce matches the owner word's (an
 * owner that died between the claim and these stores is still found dead
 * by its pid alone).
 *
 * The lease map (leasemap.c): a claimer marks its record before it claims
 * (so a claimer that dies right after its CAS is still found by breakerd)
 * and again after a successful claim (a scanner may have found the record
 * empty and cleared the bit between the two; the CAS is a full barrier,
 * so either this re-check sees the cleared bit or the scanner's re-scan
 * sees our slot: docs/design/lifecycle.md "Lease registry").
 */
#include "ident.h"
#include "internal.h"
#include "killpoint.h"

/*
 * Is @tag (of a slot's owner) older than @cur (the claimer's)? Tags are
 * the low bits of the generation, compared modulo their width: a slot of
 * a NEWER generation belongs to a live probe that a claimer which read
 * the state word before the breaker moved on must not overwrite (the
 * spin model's BUG_CLAIM_OTHER_GEN: a preempted caller of generation g
 * took a probe slot of g + 2, and a second probe of g + 2 got in).
 */
int brk__tag_older(uint32_t tag, uint32_t cur)
{
	uint32_t d = (cur - tag) & BRK__TOK_TAG_MASK;

	return d != 0 && d < (BRK__TOK_TAG_MASK + 1) / 2;
}

uint64_t brk__lease_claim(brk_segment *s, uint32_t ref,
			  const struct brk__slots *slots, uint32_t n,
			  uint32_t gen, uint32_t cur_tag, uint32_t *slot_out)
{
	const struct brk__ident *me = brk__self();
	uint32_t i, nonce = brk__next_nonce();
	uint64_t token = BRK__TOK_MAKE(me->pid, gen, nonce);

	if (n > brk__slots_total(slots))
		n = brk__slots_total(slots);
	brk__lmap_mark(s, ref);
	BRK__HOOK(BRK__HOOK_MARKED, s, ref);
	for (i = 0; i < n; i++) {
		struct brk__lease *l = brk__slot(slots, i);
		uint64_t o = uatomic_read(&l->owner);
		if (o != 0 && !brk__tag_older(BRK__TOK_GEN(o), cur_tag))
			continue;
		if (uatomic_cmpxchg(&l->owner, o, token) != o)
			continue;
		BRK__KILLPOINT(BRK__KP_LEASE_CLAIMED);
		BRK__HOOK(BRK__HOOK_CLAIMED, s, ref);
		brk__lmap_mark(s, ref);
		BRK__KILLPOINT(BRK__KP_LEASE_MARKED);
		uatomic_set(&l->meta,
			    BRK__TAG_MAKE(brk__rel_ms(s, brk__now(s)), nonce));
		BRK__KILLPOINT(BRK__KP_LEASE_META);
		uatomic_set(&l->start, BRK__TAG_MAKE(me->start_ticks, nonce));
		BRK__KILLPOINT(BRK__KP_LEASE_START);
		*slot_out = i;
		return token;
	}
	return 0;
}

int brk__lease_free(struct brk__lease *l, uint64_t token)
{
	if (token == 0 || !l)
		return -BRK_ESTALE;
	return uatomic_cmpxchg(&l->owner, token, 0) == token ? 0 : -BRK_ESTALE;
}

int brk__lease_claim_ms(const struct brk__lease *l, uint64_t owner,
			uint64_t *claim_ms)
{
	uint64_t m = uatomic_read(&l->meta);

	if (BRK__TAG_NONCE(m) != BRK__TOK_NONCE(owner))
		return -EAGAIN;
	*claim_ms = BRK__TAG_VAL(m);
	return 0;
}

uint32_t brk__lease_count(const struct brk__slots *slots, uint32_t from,
			  uint32_t to, uint32_t tag)
{
	uint32_t i, c = 0;

	if (to > brk__slots_total(slots))
		to = brk__slots_total(slots);
	for (i = from; i < to; i++) {
		uint64_t o = uatomic_read(&brk__slot(slots, i)->owner);
		if (o != 0 && BRK__TOK_GEN(o) == tag)
			c++;
	}
	return c;
}
