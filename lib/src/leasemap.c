/*
 * leasemap.c - the lease map: which records may hold a lease, so the
 * supervisor's scan (reclaim.c) visits those and not every record
 * (docs/design/lifecycle.md "Lease registry").
 *
 * Two levels of bits in the segment (layout.h): level 0, one bit per
 * record ref; level 1, one bit per level-0 word. Invariants, each kept by
 * a store-then-load pair on both sides with a full barrier between
 * (Dekker's pattern: of two such pairs at least one load sees the other
 * side's store):
 *   - a record holding a lease has its level-0 bit set, except in the one
 *     window reclaim.c's backstop sweep covers (see there);
 *   - a non-zero level-0 word has its level-1 bit set.
 * Claimers set bits (brk__lmap_mark(): level 0, then level 1); only
 * scanners clear them (brk__lmap_clear(), brk__lmap_settle()), and only
 * after a re-check. A stray bit (garbage, or a record whose lease is
 * gone) costs one visit and is cleared by it: bits are hints, the lease
 * slots stay the truth.
 */
#include "internal.h"

static inline uint64_t *l1_base(const brk_segment *s)
{
	return s->lmap + s->lmap_l0_words;
}

uint64_t brk__lmap_l0(const brk_segment *s, uint32_t w)
{
	return w < s->lmap_l0_words ? uatomic_read(&s->lmap[w]) : 0;
}

uint64_t brk__lmap_l1(const brk_segment *s, uint32_t w)
{
	return w < s->lmap_l1_words ? uatomic_read(&l1_base(s)[w]) : 0;
}

int brk__lmap_test(const brk_segment *s, uint32_t ref)
{
	return ref < brk__lmap_bits(s) &&
	       ((brk__lmap_l0(s, ref / 64u) >> (ref % 64u)) & 1u);
}

void brk__lmap_mark(brk_segment *s, uint32_t ref)
{
	uint32_t w0 = ref / 64u, w1 = w0 / 64u;
	uint64_t b0 = 1ULL << (ref % 64u), b1 = 1ULL << (w0 % 64u);
	uint64_t *l1;

	if (s->readonly || ref >= brk__lmap_bits(s))
		return;
	l1 = l1_base(s);
	/* The usual case, a record already marked: two plain loads. Level 1
	 * is checked too: a claimer that died between its two ORs left level
	 * 0 set and level 1 clear, and the next claimer mends it. */
	if ((uatomic_read(&s->lmap[w0]) & b0) && (uatomic_read(&l1[w1]) & b1))
		return;
	if (!(uatomic_read(&s->lmap[w0]) & b0)) {
		uatomic_or(&s->lmap[w0], b0);
		cmm_smp_mb(); /* level 0 is set before level 1 is read */
	}
	if (!(uatomic_read(&l1[w1]) & b1)) {
		uatomic_or(&l1[w1], b1);
		cmm_smp_mb(); /* before the caller's claim (or return) */
	}
}

void brk__lmap_clear(brk_segment *s, uint32_t ref)
{
	if (ref / 64u >= s->lmap_l0_words) /* stray bits past the map's bits
						  in its last word may go */
		return;
	uatomic_and(&s->lmap[ref / 64u], ~(1ULL << (ref % 64u)));
	cmm_smp_mb(); /* cleared before the caller re-scans the slots */
}

void brk__lmap_settle(brk_segment *s, uint32_t w0)
{
	uint64_t *l1 = l1_base(s), b = 1ULL << (w0 % 64u);
	uint32_t w1 = w0 / 64u;

	if (w1 >= s->lmap_l1_words)
		return;
	if (w0 >= s->lmap_l0_words) { /* a stray bit: no such word */
		uatomic_and(&l1[w1], ~b);
		return;
	}
	if (brk__lmap_l0(s, w0) != 0)
		return;
	uatomic_and(&l1[w1], ~b);
	cmm_smp_mb(); /* cleared before level 0 is read again */
	if (brk__lmap_l0(s, w0) != 0) { /* a claimer marked meanwhile */
		uatomic_or(&l1[w1], b);
		cmm_smp_mb();
	}
}
