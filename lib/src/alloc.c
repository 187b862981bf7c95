/*
 * alloc.c - runs of 64-byte units in the segment's arena (layout.h).
 *
 * Allocation bumps header.arena_next by CAS, bounded by arena_units: a
 * run is handed out once and never moves. Unit 0 is never handed out (a
 * link word of 0 means "no block"). Freeing: see brk__free().
 */
#include "internal.h"

int brk__alloc(brk_segment *s, uint32_t units, uint32_t *ref)
{
	int tries;

	if (units == 0 || units > s->arena_units)
		return -ENOSPC;
	for (tries = 0; tries < BRK__CAS_TRIES * 16; tries++) {
		uint64_t n = uatomic_read(&s->hdr->arena_next);

		if (n == 0) /* untrusted: the creator starts it at 1 */
			return -BRK_ECORRUPT;
		if (n > s->arena_units || units > s->arena_units - n)
			return -ENOSPC;
		if (uatomic_cmpxchg(&s->hdr->arena_next, n, n + units) == n) {
			*ref = (uint32_t)n;
			return 0;
		}
		caa_cpu_relax();
	}
	return -BRK_ECONTENDED;
}

/*
 * Give back the run of @units at @ref (nothing points at it any more).
 * For now nothing reuses a freed run: it is left as is and counted in
 * header.leaked_units (bctl info shows the arena's use). The retirement
 * part of issue 10 replaces this with free lists per run size and a
 * quarantine.
 */
void brk__free(brk_segment *s, uint32_t ref, uint32_t units)
{
	if (!brk__block(s, ref, units))
		return;
	(void)uatomic_add_return(&s->hdr->leaked_units, units);
}
