/*
 * update.c - brk_breaker_update(): change some settings of a live
 * breaker, every setting by one CAS inside its packed word, checked
 * against the config sequence word (the packing itself: config.c).
 */
#include <string.h>

#include "fresh.h"
#include "internal.h"


/* CAS setting @k from @expect (any value if @any) to @v, keeping the
 * other settings of its word. 1 done (or already @v), 0 it held another
 * value, -1 the CAS loop gave up. */
static int field_cas(struct brk__record *r, enum brk__cfg k, int any,
		     uint64_t expect, uint64_t v)
{
	struct brk__cfg_field f = brk__cfg_pos(k);
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t x = uatomic_read(&r->cfg[f.word]), cur = brk__cfg_get(x, f);
		if (cur == v)
			return 1;
		if (!any && cur != expect)
			return 0;
		if (uatomic_cmpxchg(&r->cfg[f.word], x, brk__cfg_field_put(x, k, v)) == x)
			return 1;
		caa_cpu_relax();
	}
	return -1;
}

/* Give back the settings this update wrote (@wrote) and still owns: CAS
 * each from our value to the one we overwrote (keeping the other settings
 * of its word); then bump the sequence word so
 * an update that validated against our values looks again. */
static void withdraw(struct brk__record *r, uint64_t wrote,
		     const uint64_t *ours, const uint64_t *before)
{
	int i;

	for (i = 0; i < BRK__CFG_COUNT; i++)
		if (wrote & BRK__BIT(i))
			(void)field_cas(r, (enum brk__cfg)i, 0, ours[i], before[i]);
	(void)uatomic_add_return(&r->cfg[BRK__CFG_SEQ], 1);
}

int brk_breaker_update(brk_breaker *b, const struct brk_config *cfg,
		       uint64_t fields, const char **what)
{
	uint64_t ours[BRK__CFG_COUNT], before[BRK__CFG_COUNT], wrote = 0;
	struct brk__record *r;
	struct brk_config cur, in;
	int i, tries, rc;

	if (what)
		*what = NULL;
	if (!b || !cfg || (fields & ~BRK_CFG_ALL)) {
		if (what)
			*what = !b || !cfg ? "config" : "fields";
		return -EINVAL;
	}
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	if (fields == 0)
		return 0;
	rc = brk__config_in(cfg, &in); /* the caller's size (-E2BIG) */
	if (rc) {
		if (what)
			*what = "size";
		return rc;
	}
	r = brk__brec(b);
	for (i = 0; i < BRK__CFG_COUNT; i++)
		ours[i] = brk__cfg_member_get(&in, i);
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t seq = uatomic_read(&r->cfg[BRK__CFG_SEQ]);

		cmm_smp_rmb(); /* the settings as of @seq, or newer */
		brk_config_init(&cur);
		brk__config_load(r, &cur);
		for (i = 0; i < BRK__CFG_COUNT; i++)
			if (fields & BRK__BIT(i))
				brk__cfg_member_put(&cur, i, ours[i]);
		rc = brk_config_validate(&cur, what);
		if (rc) {
			if (!wrote)
				return rc; /* invalid against the stored values */
			/* a concurrent update made ours invalid: withdraw */
			withdraw(r, wrote, ours, before);
			return -BRK_ECONTENDED;
		}
		/* the blocks the new settings use exist before any caller
		 * can read the settings (a raised max_concurrent finds its
		 * overflow slots, a raised half_open_probes its probe slots) */
		rc = brk__ensure_blocks(b->seg, r, &cur);
		if (rc) {
			if (wrote)
				withdraw(r, wrote, ours, before);
			if (what)
				*what = "arena";
			return rc;
		}
		for (i = 0; i < BRK__CFG_COUNT; i++) {
			uint64_t v;

			if (!(fields & BRK__BIT(i)))
				continue;
			v = brk__cfg(r, (enum brk__cfg)i);
			if (v == ours[i])
				continue;
			if (!(wrote & BRK__BIT(i)))
				before[i] = v;
			wrote |= BRK__BIT(i);
			if (field_cas(r, (enum brk__cfg)i, 1, 0, ours[i]) < 0) {
				withdraw(r, wrote, ours, before);
				if (what)
					*what = NULL;
				return -BRK_ECONTENDED;
			}
		}
		/* full barrier: our words are visible before the commit */
		if (uatomic_cmpxchg(&r->cfg[BRK__CFG_SEQ], seq, seq + 1) == seq)
			return 0;
		caa_cpu_relax();
	}
	if (wrote)
		withdraw(r, wrote, ours, before);
	if (what)
		*what = NULL;
	return -BRK_ECONTENDED;
}

