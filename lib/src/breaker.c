/*
 * breaker.c - a circuit breaker's handle: get (create with settings),
 * find, name, configure. The state machine is state.c (the state word and
 * its transitions), acquire.c, release.c and admin.c (operator actions);
 * the design is in state.c's comment.
 */
#include "internal.h"

const char *brk_breaker_name(const brk_breaker *b)
{
	return b ? b->name : NULL;
}

int brk_breaker_get(brk_segment *seg, const char *name,
		    const struct brk_config *cfg, brk_breaker **out)
{
	struct brk__init init = { NULL, 0, { { 0, 0 } } };
	struct brk_config k;
	int rc;

	/* Without settings, a name already cached needs no defaults filled
	 * and validated (they are valid by construction): the same result,
	 * at the cost of the cache lookup alone. */
	if (!cfg && brk__handle_cached(seg, name, BRK_KIND_BREAKER, out) == 0)
		return 0;
	rc = brk__config_in(cfg, &k); /* NULL: the defaults */
	if (rc == 0)
		rc = brk_config_validate(&k, NULL);
	if (rc)
		return rc;
	init.cfg = &k;
	return brk__handle(seg, name, 1, BRK_KIND_BREAKER, &init, out);
}

int brk_breaker_find(brk_segment *seg, const char *name, brk_breaker **out)
{
	return brk__handle(seg, name, 0, BRK_KIND_BREAKER, NULL, out);
}

int brk_breaker_configure(brk_breaker *b, const struct brk_config *cfg)
{
	return brk_breaker_update(b, cfg, BRK_CFG_ALL, NULL);
}
