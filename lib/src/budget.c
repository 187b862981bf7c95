/*
 * budget.c - retry budgets (after Finagle's RetryBudget: a floor of
 * retries per second plus a ratio of the first attempts).
 *
 * A budget record (kind BRK_KIND_BUDGET) has two token sources, each one
 * 64-bit word changed by one CAS (layout.h):
 *
 *  pool   epoch:24 | milli:40. brk_budget_deposit() adds ratio_milli per
 *         first attempt; brk_retry_permitted() takes 1000. The epoch is
 *         the number of BRK_BUDGET_EPOCH_MS periods of the segment clock
 *         since the segment's epoch (mod 2^24); the pool is halved for
 *         every period boundary crossed since it was last written, read
 *         lazily by whoever comes next (k >= 40 periods: empty). This is
 *         a one-word approximation of Finagle's 10 s deposit TTL: a long
 *         healthy spell cannot be banked for a later retry storm, while
 *         steady traffic keeps its deposits (at most ~2x what 10 s of
 *         deposits bring). A word whose epoch is ahead of the reader's
 *         (a process that read its clock just before a boundary) is taken
 *         as current, never decayed by 2^24 - 1 periods.
 *
 *  floor  a GCRA bucket (gcra.c) of floor_per_s tokens/s, capacity
 *         floor_burst = ceil(floor_per_s) >= 1, full at creation.
 *
 * The bound (breaker.h "Retry budgets"): every token a retry spends came
 * either from a deposit (ratio_milli / 1000 per first attempt, never more:
 * decay and the saturating cap only remove tokens) or from the floor
 * bucket (GCRA: at most floor_burst + d / T_floor in any interval d). So
 * over any interval retries <= ratio * deposits + floor * d + floor_burst
 * + the pool at its start.
 */
#include <math.h>
#include <string.h>

#include "abi.h"
#include "limits.h"

#define MILLI 1000u
#define EPOCH_NS ((uint64_t)BRK_BUDGET_EPOCH_MS * 1000000u)

struct budget_cfg {
	uint32_t floor_milli; /* retries per 1000 s */
	uint32_t ratio_milli; /* milli-tokens per first attempt */
	uint64_t t;           /* floor interval, ns; 0: no floor */
	uint32_t burst;       /* floor capacity, tokens */
	uint64_t tau;         /* t * burst */
};

static int milli_of(double v, double max, uint32_t *out)
{
	double m;

	if (!isfinite(v) || !(v >= 0.0) || !(v <= max))
		return -EINVAL;
	m = v * 1000.0 + 0.5;
	*out = (uint32_t)m;
	if (v > 0.0 && *out == 0)
		return -EINVAL; /* below 0.0005: not representable */
	return 0;
}

static int budget_cfg_make(double floor_per_s, double ratio, uint64_t *w)
{
	uint32_t fm, rm;

	if (milli_of(floor_per_s, BRK_BUDGET_MAX_FLOOR, &fm) ||
	    milli_of(ratio, BRK_BUDGET_MAX_RATIO, &rm))
		return -EINVAL;
	*w = BRK__BGC_MAKE(fm, rm);
	return 0;
}

static void derive(struct budget_cfg *c)
{
	if (c->floor_milli == 0) {
		c->t = 0;
		c->burst = 0;
		c->tau = 0;
		return;
	}
	/* T = round(1e12 / floor_milli) ns: 1e3 .. 1e12 */
	c->t = (1000000000000ULL + c->floor_milli / 2) / c->floor_milli;
	c->burst = (c->floor_milli + MILLI - 1) / MILLI;
	if (c->burst < 1)
		c->burst = 1;
	c->tau = c->t * c->burst; /* <= 1e12 * 1e6 */
}

/* Decode the settings word read from the (untrusted) segment. */
static int budget_cfg_parse(uint64_t w, struct budget_cfg *c)
{
	if (w == 0)
		return -EAGAIN;
	if (!(w & BRK__BGC_SET) || (w & ~(BRK__BGC_SET | (((uint64_t)1 << 47) - 1))))
		return -BRK_ECORRUPT;
	c->floor_milli = BRK__BGC_FLOOR(w);
	c->ratio_milli = BRK__BGC_RATIO(w);
	if (c->floor_milli > (uint32_t)(BRK_BUDGET_MAX_FLOOR * 1000.0) ||
	    c->ratio_milli > (uint32_t)(BRK_BUDGET_MAX_RATIO * 1000.0))
		return -BRK_ECORRUPT;
	derive(c);
	return 0;
}

static uint32_t epoch_of(const brk_segment *s, uint64_t now)
{
	uint64_t rel = now > s->epoch_ns ? now - s->epoch_ns : 0;

	return (uint32_t)((rel / EPOCH_NS) & BRK__POOL_EPOCH_MASK);
}

/* The pool as of epoch @cur: (epoch to write back, milli-tokens left). */
static uint64_t pool_decayed(uint64_t w, uint32_t cur, uint32_t *ep_out)
{
	uint32_t e = BRK__POOL_EPOCH(w);
	uint32_t k = (cur - e) & BRK__POOL_EPOCH_MASK;
	uint64_t m = BRK__POOL_MILLI(w);

	if (k >= (BRK__POOL_EPOCH_MASK + 1u) / 2u) {
		/* written by someone whose clock is already past a
		 * boundary we have not reached: current, keep its epoch */
		*ep_out = e;
		return m;
	}
	*ep_out = cur;
	return k >= BRK__POOL_MILLI_BITS ? 0 : m >> k;
}

static int budget_handle(brk_segment *seg, const char *name, int create,
			 uint64_t cfg, brk_budget **out)
{
	struct brk__init init = { NULL, 1, { { BRK__BG_CFG, cfg } } };
	brk_breaker *b;
	int rc;

	if (!out)
		return -EINVAL;
	rc = brk__handle(seg, name, create, BRK_KIND_BUDGET, &init, &b);
	if (rc)
		return rc;
	/* as for buckets: settings are stored before publication; the CAS
	 * only repairs a record whose creator died half-way */
	if (create && !seg->readonly &&
	    uatomic_read(&b->rec->ext[BRK__BG_CFG]) == 0)
		(void)uatomic_cmpxchg(&b->rec->ext[BRK__BG_CFG], 0, cfg);
	*out = (brk_budget *)(void *)b;
	return 0;
}

int brk_budget_get(brk_segment *seg, const char *name, double floor_per_s,
		   double ratio, brk_budget **out)
{
	uint64_t cfg;

	if (budget_cfg_make(floor_per_s, ratio, &cfg))
		return -EINVAL;
	return budget_handle(seg, name, 1, cfg, out);
}

int brk_budget_find(brk_segment *seg, const char *name, brk_budget **out)
{
	return budget_handle(seg, name, 0, 0, out);
}

const char *brk_budget_name(const brk_budget *g)
{
	return g ? brk__bg_ch(g)->name : "";
}

int brk_budget_configure(brk_budget *g, double floor_per_s, double ratio)
{
	brk_breaker *b = brk__bg_h(g);
	uint64_t *cw, nwc;
	struct budget_cfg nc;
	int i;

	if (!g || budget_cfg_make(floor_per_s, ratio, &nwc))
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	memset(&nc, 0, sizeof(nc));
	(void)budget_cfg_parse(nwc, &nc);
	cw = &b->rec->ext[BRK__BG_CFG];
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(cw);
		struct budget_cfg oc;
		int rc;

		if (old == nwc)
			return 0;
		rc = budget_cfg_parse(old, &oc);
		if (uatomic_cmpxchg(cw, old, nwc) != old) {
			caa_cpu_relax();
			continue;
		}
		if (nc.t == 0)
			return 0; /* no floor any more: its TAT is unused */
		if (rc || oc.t == 0) /* none before (or corrupt): clamp only */
			oc.t = nc.t, oc.tau = nc.tau;
		return brk__gcra_rescale(b->seg, &b->rec->ext[BRK__BG_TAT],
					 oc.t, oc.tau, nc.t, nc.tau);
	}
	return -BRK_ECONTENDED;
}

int brk_budget_deposit(brk_budget *g)
{
	brk_breaker *b = brk__bg_h(g);
	struct brk__record *r;
	struct budget_cfg c;
	int i, rc;

	if (!g)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	r = b->rec;
	rc = budget_cfg_parse(uatomic_read(&r->ext[BRK__BG_CFG]), &c);
	if (rc)
		return rc;
	uatomic_inc(&r->ext[BRK__BG_DEPOSITS]);
	if (c.ratio_milli == 0)
		return 0;
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t now = brk__now(b->seg);
		uint64_t w = uatomic_read(&r->ext[BRK__BG_POOL]), m, nw;
		uint32_t ep;

		m = pool_decayed(w, epoch_of(b->seg, now), &ep);
		m = brk__sat_add(m, c.ratio_milli);
		if (m > BRK__POOL_MILLI_MAX)
			m = BRK__POOL_MILLI_MAX;
		nw = BRK__POOL_MAKE(ep, m);
		if (nw == w || uatomic_cmpxchg(&r->ext[BRK__BG_POOL], w, nw) == w)
			return 0;
		caa_cpu_relax();
	}
	return -BRK_ECONTENDED;
}

int brk_retry_permitted(brk_budget *g)
{
	brk_breaker *b = brk__bg_h(g);
	struct brk__record *r;
	struct budget_cfg c;
	uint64_t now = 0, nb = 0;
	int i, rc;

	if (!g)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	r = b->rec;
	rc = budget_cfg_parse(uatomic_read(&r->ext[BRK__BG_CFG]), &c);
	if (rc)
		return rc;
	/* 1. the pool (deposits decay anyway: spend them first) */
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t w = uatomic_read(&r->ext[BRK__BG_POOL]), m;
		uint32_t ep;

		now = brk__now(b->seg);
		m = pool_decayed(w, epoch_of(b->seg, now), &ep);
		if (m < MILLI)
			break;
		if (uatomic_cmpxchg(&r->ext[BRK__BG_POOL], w,
				    BRK__POOL_MAKE(ep, m - MILLI)) == w) {
			uatomic_inc(&r->ext[BRK__BG_RETRIES]);
			return 0;
		}
		caa_cpu_relax();
	}
	/* 2. the floor (a contended pool also falls through to it) */
	rc = -BRK_ENOTOKENS;
	if (c.t != 0)
		rc = brk__gcra_take(b->seg, &r->ext[BRK__BG_TAT], c.t, c.tau, 1,
				    &now, &nb);
	if (rc == 0) {
		uatomic_inc(&r->ext[BRK__BG_RETRIES]);
		uatomic_inc(&r->ext[BRK__BG_RETRIES_FLOOR]);
		return 0;
	}
	uatomic_inc(&r->ext[BRK__BG_DEFERRED]);
	return rc == -BRK_ECONTENDED ? rc : -BRK_EDEFERRED;
}

int brk__budget_fill(brk_segment *s, const struct brk__record *r,
		     const char *name, struct brk_budget_info *out)
{
	struct budget_cfg c;
	uint64_t now, m;
	uint32_t ep;
	int rc;

	memset(out, 0, sizeof(*out));
	memcpy(out->name, name, strnlen(name, BRK_NAME_MAX));
	out->deposits = uatomic_read(&r->ext[BRK__BG_DEPOSITS]);
	out->retries = uatomic_read(&r->ext[BRK__BG_RETRIES]);
	out->retries_floor = uatomic_read(&r->ext[BRK__BG_RETRIES_FLOOR]);
	out->deferred = uatomic_read(&r->ext[BRK__BG_DEFERRED]);
	rc = budget_cfg_parse(uatomic_read(&r->ext[BRK__BG_CFG]), &c);
	if (rc == -EAGAIN)
		return 0;
	if (rc)
		return rc;
	out->configured = 1;
	out->floor_per_s = c.floor_milli / 1000.0;
	out->ratio = c.ratio_milli / 1000.0;
	out->floor_burst = c.burst;
	now = brk__now(s);
	m = pool_decayed(uatomic_read(&r->ext[BRK__BG_POOL]), epoch_of(s, now),
			 &ep);
	out->pool = (double)m / 1000.0;
	if (c.t)
		out->floor_tokens = brk__gcra_tokens(
			uatomic_read(&r->ext[BRK__BG_TAT]), now, c.t, c.tau, NULL);
	out->balance = out->pool + out->floor_tokens;
	return 0;
}

int brk__budget_info(brk_budget *g, struct brk_budget_info *out)
{
	brk_breaker *b = brk__bg_h(g);

	if (!g || !out)
		return -EINVAL;
	return brk__budget_fill(b->seg, b->rec, b->name, out);
}
