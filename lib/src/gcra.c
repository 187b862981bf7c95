/*
 * gcra.c - GCRA token buckets shared by every process on the host.
 *
 * Algorithm: the Generic Cell Rate Algorithm (ATM Forum, Traffic
 * Management Specification 4.0, 1996), in the "virtual scheduling" form
 * Brandur Leach's redis-cell uses (github.com/brandur/redis-cell,
 * src/cell/mod.rs): one theoretical arrival time (TAT) in ns, an emission
 * interval T and a tolerance tau. Here tau = T * burst, so a full bucket
 * grants exactly @burst tokens at once (redis-cell's tolerance is
 * T * (burst + 1)); see breaker.h "Token buckets (GCRA)".
 *
 * Shared words (layout.h, "GCRA buckets and retry budgets"): the TAT (its
 * own cache line, the only word a take CASes), the settings word
 * (interval_ns:44 | burst:20, so interval and burst change together) and
 * three counters. A refusal writes nothing to the TAT. Every CAS loop is
 * bounded by BRK__CAS_TRIES and re-reads the clock on each try (a stale
 * `now` after preemption would over-admit by rate * stall). All arithmetic
 * on values read from the segment saturates; the segment is untrusted.
 *
 * The handles (brk_bucket_get, brk_bucket_find) are in bucket_handle.c,
 * which pace.c calls too; this file calls pace.c (one take path).
 */
#include <math.h>
#include <string.h>

#include "abi.h"
#include "fresh.h"
#include "limits.h"

/* ---- buckets ---------------------------------------------------------- */

/* Decode a settings word read from the (untrusted) segment. */
static int bucket_cfg_parse(uint64_t w, uint64_t *t, uint32_t *burst)
{
	if (w == 0)
		return -EAGAIN;
	*t = BRK__BKC_T(w);
	*burst = BRK__BKC_BURST(w);
	if (*t == 0 || *t > BRK__T_LIMIT || *burst == 0 ||
	    *burst > BRK_BUCKET_MAX_BURST)
		return -BRK_ECORRUPT;
	return 0;
}

const char *brk_bucket_name(const brk_bucket *k)
{
	return k ? brk__bk_ch(k)->name : "";
}

int brk_bucket_configure(brk_bucket *k, double rate_per_s, uint32_t burst)
{
	return brk_bucket_update(k, rate_per_s, burst,
				 BRK_BUCKET_RATE | BRK_BUCKET_BURST);
}

int brk_bucket_update(brk_bucket *k, double rate_per_s, uint32_t burst,
		      uint64_t fields)
{
	const uint64_t both = BRK_BUCKET_RATE | BRK_BUCKET_BURST;
	brk_breaker *b = brk__bk_h(k);
	uint64_t *cw, t_given = 0;
	int i, rc;

	if (!k || (fields & ~both))
		return -EINVAL;
	if ((fields & BRK_BUCKET_RATE) &&
	    (t_given = brk__interval_ns(rate_per_s)) == 0)
		return -EINVAL;
	if ((fields & BRK_BUCKET_BURST) &&
	    (burst < 1 || burst > BRK_BUCKET_MAX_BURST))
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	/* a pace's ceiling is this word too: only brk_pace_update() keeps it
	 * above the floor (a pace never loses its PACED bit) */
	if (uatomic_read(&brk__xw(brk__brec(b))[BRK__BK_PACE]) & BRK__PC_PACED)
		return -EMEDIUMTYPE;
	if (fields == 0)
		return 0;
	cw = &brk__xw(brk__brec(b))[BRK__BK_CFG];
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(cw), t_old = 0, t_new, nwc;
		uint32_t burst_old = 0, burst_new;

		rc = bucket_cfg_parse(old, &t_old, &burst_old);
		if (rc && fields != both)
			return rc; /* nothing to keep the other setting from */
		t_new = fields & BRK_BUCKET_RATE ? t_given : t_old;
		burst_new = fields & BRK_BUCKET_BURST ? burst : burst_old;
		nwc = BRK__BKC_MAKE(t_new, burst_new);
		if (old == nwc)
			return 0;
		/* one CAS on the one word: a concurrent change of the other
		 * setting makes it fail, and the retry keeps that change */
		if (uatomic_cmpxchg(cw, old, nwc) != old) {
			caa_cpu_relax();
			continue;
		}
		if (rc == -EAGAIN)
			return 0; /* never configured: nothing was taken */
		if (rc) /* corrupt: clamp the TAT to the new bucket */
			t_old = t_new, burst_old = burst_new;
		return brk__gcra_rescale(b->seg, &brk__xw(brk__brec(b))[BRK__BK_TAT],
					 t_old, t_old * burst_old, t_new,
					 t_new * burst_new, 0);
	}
	return -BRK_ECONTENDED;
}

int brk_bucket_take(brk_bucket *k, uint32_t n, uint64_t *not_before_ns)
{
	brk_breaker *b = brk__bk_h(k);

	if (!k || n == 0)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	/* one take path for plain and paced buckets (a pace: the learned
	 * rate, normal priority) */
	return brk__pace_take(b, BRK_PRIORITY_NORMAL, n, NULL, not_before_ns);
}

uint64_t brk_bucket_wake_ns(brk_bucket *k, uint64_t not_before_ns)
{
	brk_breaker *b = brk__bk_h(k);
	uint64_t t, j;
	uint32_t burst;

	if (k && brk__fresh(b) != 0)
		return not_before_ns;
	if (!k || bucket_cfg_parse(uatomic_read(&brk__xw(brk__brec(b))[BRK__BK_CFG]),
				   &t, &burst) != 0)
		return not_before_ns;
	t = brk__pace_t_now(b->seg, brk__brec(b)); /* a pace: the learned T */
	if (t == 0)
		return not_before_ns;
	j = (uint64_t)(((unsigned __int128)brk__random(b->seg) * t) >> 64);
	return brk__sat_add(not_before_ns, j);
}

int brk__bucket_fill(brk_segment *s, const struct brk__record *r,
		     const char *name, struct brk_bucket_info *out)
{
	uint64_t t, tat, now;
	uint32_t burst;
	int rc;

	memset(out, 0, sizeof(*out));
	memcpy(out->name, name, strnlen(name, BRK_NAME_MAX));
	out->taken = uatomic_read(&brk__xw(r)[BRK__BK_TAKEN]);
	out->denied = uatomic_read(&brk__xw(r)[BRK__BK_DENIED]);
	out->tokens_taken = uatomic_read(&brk__xw(r)[BRK__BK_TOKENS]);
	rc = bucket_cfg_parse(uatomic_read(&brk__xw(r)[BRK__BK_CFG]), &t, &burst);
	if (rc == -EAGAIN)
		return 0; /* configured = 0 */
	if (rc)
		return rc;
	out->configured = 1;
	out->interval_ns = t;
	out->rate_per_s = 1e9 / (double)t;
	out->burst = burst;
	tat = uatomic_read(&brk__xw(r)[BRK__BK_TAT]);
	now = brk__now(s);
	out->tokens = brk__gcra_tokens(tat, now, t, t * burst, &out->full_in_ns);
	return brk__pace_fill(s, r, out);
}

int brk__bucket_info(brk_bucket *k, struct brk_bucket_info *out)
{
	brk_breaker *b = brk__bk_h(k);

	if (!k || !out)
		return -EINVAL;
	BRK__FRESH_OR_RETURN(b);
	return brk__bucket_fill(b->seg, brk__brec(b), b->name, out);
}

int brk_bucket_info_sz(brk_bucket *k, struct brk_bucket_info *out, size_t size)
{
	struct brk_bucket_info tmp;
	int rc;

	if (!k || !out)
		return -EINVAL;
	memset(&tmp, 0, sizeof(tmp));
	rc = brk__bucket_info(k, &tmp);
	brk__struct_out(out, size, &tmp, sizeof(tmp));
	return rc;
}

int (brk_bucket_info)(brk_bucket *k, struct brk_bucket_info *out)
{
	return brk_bucket_info_sz(k, out, BRK_BUCKET_INFO_SIZE_VER0);
}
