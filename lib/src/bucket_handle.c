/*
 * bucket_handle.c - the handles of GCRA buckets and paces:
 * brk_bucket_get() (makes the bucket with its settings) and
 * brk_bucket_find() (an existing one, plain or paced). See breaker.h
 * "Token buckets (GCRA)".
 *
 * Calls: the record index (brk__handle) and gcra_core.c, nothing above.
 * pace.c calls here (an implicit pace found by name) as gcra.c's users
 * do, so pace.c never calls gcra.c, which calls pace.c.
 */
#include "limits.h"

static int bucket_cfg_make(double rate_per_s, uint32_t burst, uint64_t *w)
{
	uint64_t t = brk__interval_ns(rate_per_s);

	if (t == 0 || burst < 1 || burst > BRK_BUCKET_MAX_BURST)
		return -EINVAL;
	*w = BRK__BKC_MAKE(t, burst);
	return 0;
}

static int bucket_handle(brk_segment *seg, const char *name, int create,
			 uint64_t cfg, brk_bucket **out)
{
	struct brk__init init = { NULL, 1, { { BRK__BK_CFG, cfg } } };
	brk_breaker *b;
	int rc;

	if (!out)
		return -EINVAL;
	rc = brk__handle(seg, name, create, BRK_KIND_BUCKET, &init, &b);
	if (rc)
		return rc;
	/*
	 * A creator stores the settings before publishing the record; this
	 * CAS only fills records made by a creator that died half-way (their
	 * settings word is 0, and takers see -EAGAIN until it is set).
	 */
	if (create && !seg->readonly &&
	    uatomic_read(&brk__xw(brk__brec(b))[BRK__BK_CFG]) == 0)
		(void)uatomic_cmpxchg(&brk__xw(brk__brec(b))[BRK__BK_CFG], 0, cfg);
	*out = (brk_bucket *)(void *)b;
	return 0;
}

int brk_bucket_get(brk_segment *seg, const char *name, double rate_per_s,
		   uint32_t burst, brk_bucket **out)
{
	uint64_t cfg;
	int rc = bucket_cfg_make(rate_per_s, burst, &cfg);

	if (rc)
		return rc;
	return bucket_handle(seg, name, 1, cfg, out);
}

int brk_bucket_find(brk_segment *seg, const char *name, brk_bucket **out)
{
	return bucket_handle(seg, name, 0, 0, out);
}
