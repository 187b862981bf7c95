/*
 * room.c - brk_arena_cost(): what a create or a settings change would
 * take from the segment's arena, for a caller that must know before it
 * writes anything whether a whole batch fits (bctl apply and breakerd's
 * breakers file, cli/breakers_apply.c). It mirrors what index.c
 * (create_locked(): the core run) and blocks.c (brk__ensure_blocks():
 * the extension blocks a breaker's settings need) allocate; a change
 * there that allocates more must be mirrored here (tests/unit
 * test_room.c checks both against the arena a real create and update
 * use).
 */
#include "internal.h"

/* The probe, window and bulkhead blocks @c needs, in units, beyond
 * those linked in ext_refs @x and permit_refs @p (0 and 0: none). */
static uint64_t blocks_units(const struct brk_config *c, uint64_t x, uint64_t p)
{
	uint32_t pn = BRK__PR_P_SLOTS(p), on = BRK__PR_O_SLOTS(p);
	uint32_t mc = brk__bulkhead_slots(c); /* auto: a bulkhead too */
	uint64_t u = 0;

	if (c->half_open_probes > 1 && (uint32_t)x == 0)
		u += BRK__PROBE_EXT_UNITS;
	if ((c->failure_rate_pct != 0 || c->slow_call_ms != 0 ||
	     c->min_distinct_processes >= 2) && (uint32_t)(x >> 32) == 0)
		u += BRK__WIN_EXT_UNITS;
	/* link_permits(): one block per change, as blocks.c allocates it */
	if (mc > 0 && !(pn + on >= mc || (pn && on) || pn >= BRK__PERMIT_SLOTS))
		u += BRK__PERMIT_UNITS(pn ? BRK__PERMIT_SLOTS - pn : (mc + 1u) & ~1u);
	return u;
}

int brk_arena_cost(int kind, const struct brk_config *cfg, brk_breaker *b,
		   uint64_t *bytes)
{
	struct brk_config c;
	struct brk__record *r;
	uint64_t units;
	int rc;

	if (!bytes)
		return -EINVAL;
	*bytes = 0;
	if (kind != BRK_KIND_BREAKER && kind != BRK_KIND_BUCKET &&
	    kind != BRK_KIND_BUDGET)
		return -EINVAL;
	if (kind != BRK_KIND_BREAKER) { /* no extension blocks, ever */
		if (!b)
			*bytes = (uint64_t)brk__kind_units((uint32_t)kind) * BRK__UNIT;
		return 0;
	}
	rc = brk__config_in(cfg, &c);
	if (rc)
		return rc;
	if (!b) {
		units = BRK__BREAKER_UNITS + blocks_units(&c, 0, 0);
	} else {
		if (b->kind != BRK_KIND_BREAKER)
			return -EINVAL;
		r = brk__brec(b);
		units = blocks_units(&c, uatomic_read(&r->ext_refs),
				     uatomic_read(&r->permit_refs));
	}
	*bytes = units * BRK__UNIT;
	return 0;
}
