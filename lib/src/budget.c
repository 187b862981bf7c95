/*
 * budget.c - retry budgets (after Finagle's RetryBudget: a floor of
 * retries per second plus a ratio of the first attempts).
 *
 * A budget record (kind BRK_KIND_BUDGET) has two token sources, each
 * changed only by CAS on aligned 64-bit words (layout.h):
 *
 *  pool   deposits that expire BRK_BUDGET_TTL_MS after they were made,
 *         sliding, as Finagle's TokenRetryBudget's do (its WindowedAdder
 *         keeps 10 time slices of ttl / 10). The segment clock is cut into
 *         slices of BRK__BG_SLICE_MS since the segment's epoch; slice k's
 *         deposits sit in ring word k % BRK__BG_SLICES (slice:35 |
 *         milli:29; k whole, never wrapped: layout.h). A slice's deposits
 *         saturate at BRK__BGW_MILLI_MAX (536,870.911 tokens; the excess
 *         is dropped: fewer retries). brk_budget_deposit() adds
 *         ratio_milli to the word of
 *         the current slice (a word still holding a slice BRK__BG_SLICES
 *         or more back is recycled: those deposits have expired). A slice
 *         counts while it is one of the last BRK__BG_SLICES, so a deposit
 *         lives between TTL - TTL/10 and TTL.
 *
 *         Withdrawals never touch the ring: one spend cursor word
 *         (slice:35 | used:29) says "everything deposited before slice
 *         `slice`, and `used` milli-tokens of slice `slice`, is spent or
 *         expired". brk_retry_permitted() walks the live slices from the
 *         cursor (or from the oldest live slice, if the cursor is older),
 *         finds 1000 unspent milli-tokens, and moves the cursor past them
 *         by one CAS. Every withdrawal CASes the same word, so they are
 *         serialised; a ring word only grows while it holds one slice, so
 *         a stale read of it can only under-count.
 *
 *         Slices are stored and compared whole (35 bits hold the slice
 *         of any 64-bit ns clock), never modulo a tag width: a ring word
 *         or a cursor of an older slice is never taken for a newer one,
 *         however long the budget sat idle (issue 9: with 24-bit tags a
 *         cursor 2^24 slices old passed for a current one and a ring
 *         word 5 * 2^24 slices old was counted again).
 *
 *  floor  a GCRA bucket (gcra.c) of floor_per_s tokens/s, capacity
 *         floor_burst = ceil(floor_per_s) >= 1, full at creation.
 *
 * The bound (breaker.h "Retry budgets"): the cursor only moves forward,
 * over milli-tokens that were deposited in a slice still live at the
 * withdrawal's clock read, so every token a retry takes from the pool is a
 * distinct 1000 milli-tokens of deposits made less than TTL before it
 * (ratio_milli / 1000 per first attempt, never more: saturation, a
 * recycled word and a deposit into a slice the cursor has passed only
 * remove tokens); every other token came from the floor bucket (GCRA: at
 * most floor_burst + d / T_floor in any interval d). So over [t0, t1]
 * retries <= ratio * deposits(t0 - TTL, t1) + floor * (t1 - t0) +
 * floor_burst.
 */
#include <math.h>
#include <string.h>

#include "abi.h"
#include "fresh.h"
#include "limits.h"

#define MILLI 1000u
#define SLICE_NS ((uint64_t)BRK__BG_SLICE_MS * 1000000u)
#define N_SLICES ((uint64_t)BRK__BG_SLICES)
/* A word at most this many slices ahead of our clock was written by a
 * process whose clock is ahead of (or whose read is fresher than) ours;
 * further ahead it is garbage from the (untrusted) segment. */
#define SKEW_SLICES (2u * BRK__BG_SLICES)

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

/* The slice of @now: BRK__BG_SLICE_MS periods since the segment epoch,
 * whole (<= BRK__BGW_SLICE_MAX for any @now: layout.h). */
static uint64_t slice_of(const brk_segment *s, uint64_t now)
{
	return (now > s->epoch_ns ? now - s->epoch_ns : 0) / SLICE_NS;
}

/* Milli-tokens deposited in slice @k, if its ring word still holds it. */
static uint64_t slice_milli(const struct brk__record *r, uint64_t k)
{
	uint64_t w = uatomic_read(&brk__xw(r)[BRK__BG_SLOT(k)]);

	return BRK__BGW_SLICE(w) == k ? BRK__BGW_MILLI(w) : 0;
}

/*
 * Where spending starts at slice @cur given the cursor word @cw: the first
 * live slice not wholly spent (*from) and how much of it is spent (*used).
 * A cursor ahead of @cur (a process whose clock is already in a later
 * slice moved it) moves @cur up to it: slices are never spent twice. A
 * word more than SKEW_SLICES ahead is no clock's: garbage, ignored.
 */
static void spend_start(uint64_t cw, uint64_t *cur, uint64_t *from,
			uint64_t *used)
{
	uint64_t cs = BRK__BGW_SLICE(cw);
	uint64_t oldest;
	int garbage = cs > *cur && cs - *cur > SKEW_SLICES;

	if (cs > *cur && !garbage)
		*cur = cs;
	oldest = *cur >= N_SLICES - 1 ? *cur - (N_SLICES - 1) : 0;
	if (garbage || cs < oldest) {
		/* the cursor's slice expired (or the word is garbage: far
		 * ahead of any clock) */
		*from = oldest;
		*used = 0;
		return;
	}
	*from = cs;
	*used = BRK__BGW_MILLI(cw);
}

/*
 * The unspent live deposits at slice @cur (milli-tokens, saturating), and
 * if @want > 0 and they hold @want, the cursor word that spends @want of
 * them, oldest first (*next; 0 returned if they do not).
 */
static uint64_t pool_scan(const struct brk__record *r, uint64_t cw,
			  uint64_t cur, uint64_t want, uint64_t *next)
{
	uint64_t from, used, k, total = 0;

	spend_start(cw, &cur, &from, &used);
	for (k = from; k <= cur; k++) {
		uint64_t m = slice_milli(r, k);
		uint64_t avail = m > used ? m - used : 0;

		if (want && total + avail >= want) {
			*next = BRK__BGW_MAKE(k, used + (want - total));
			return want;
		}
		total = brk__sat_add(total, avail);
		used = 0;
	}
	return want ? 0 : total;
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
	    uatomic_read(&brk__xw(brk__brec(b))[BRK__BG_CFG]) == 0)
		(void)uatomic_cmpxchg(&brk__xw(brk__brec(b))[BRK__BG_CFG], 0, cfg);
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
	return brk_budget_update(g, floor_per_s, ratio,
				 BRK_BUDGET_FLOOR | BRK_BUDGET_RATIO);
}

int brk_budget_update(brk_budget *g, double floor_per_s, double ratio,
		      uint64_t fields)
{
	const uint64_t both = BRK_BUDGET_FLOOR | BRK_BUDGET_RATIO;
	brk_breaker *b = brk__bg_h(g);
	uint32_t fm = 0, rm = 0;
	uint64_t *cw;
	int i;

	if (!g || (fields & ~both) ||
	    ((fields & BRK_BUDGET_FLOOR) &&
	     milli_of(floor_per_s, BRK_BUDGET_MAX_FLOOR, &fm)) ||
	    ((fields & BRK_BUDGET_RATIO) &&
	     milli_of(ratio, BRK_BUDGET_MAX_RATIO, &rm)))
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	if (fields == 0)
		return 0;
	cw = &brk__xw(brk__brec(b))[BRK__BG_CFG];
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(cw), nwc;
		struct budget_cfg oc, nc;
		int rc;

		memset(&oc, 0, sizeof(oc));
		rc = budget_cfg_parse(old, &oc);
		if (rc && fields != both)
			return rc; /* nothing to keep the other setting from */
		nwc = BRK__BGC_MAKE(fields & BRK_BUDGET_FLOOR ? fm : oc.floor_milli,
				    fields & BRK_BUDGET_RATIO ? rm : oc.ratio_milli);
		if (old == nwc)
			return 0;
		memset(&nc, 0, sizeof(nc));
		(void)budget_cfg_parse(nwc, &nc);
		/* one CAS on the one word: a concurrent change of the other
		 * setting makes it fail, and the retry keeps that change */
		if (uatomic_cmpxchg(cw, old, nwc) != old) {
			caa_cpu_relax();
			continue;
		}
		if (nc.t == 0)
			return 0; /* no floor any more: its TAT is unused */
		if (rc || oc.t == 0) /* none before (or corrupt): clamp only */
			oc.t = nc.t, oc.tau = nc.tau;
		return brk__gcra_rescale(b->seg, &brk__xw(brk__brec(b))[BRK__BG_TAT],
					 oc.t, oc.tau, nc.t, nc.tau, 0);
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
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	rc = budget_cfg_parse(uatomic_read(&brk__xw(r)[BRK__BG_CFG]), &c);
	if (rc)
		return rc;
	uatomic_inc(&brk__xw(r)[BRK__BG_DEPOSITS]);
	if (c.ratio_milli == 0)
		return 0;
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t k = slice_of(b->seg, brk__now(b->seg));
		uint64_t *slot = &brk__xw(r)[BRK__BG_SLOT(k)];
		uint64_t w = uatomic_read(slot), m = 0, nw;
		uint64_t ws = BRK__BGW_SLICE(w);

		if (ws == k)
			m = BRK__BGW_MILLI(w);
		else if (ws > k && ws - k <= SKEW_SLICES)
			return 0; /* a later slice holds the word: our clock read
				     is most of a TTL stale; the deposit is
				     dropped (fewer retries, never more) */
		/* else: an expired slice (or garbage far ahead of any clock):
		 * recycle the word */
		m = brk__sat_add(m, c.ratio_milli);
		if (m > BRK__BGW_MILLI_MAX)
			m = BRK__BGW_MILLI_MAX; /* saturate: the excess is dropped */
		nw = BRK__BGW_MAKE(k, m);
		if (nw == w || uatomic_cmpxchg(slot, w, nw) == w)
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
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	rc = budget_cfg_parse(uatomic_read(&brk__xw(r)[BRK__BG_CFG]), &c);
	if (rc)
		return rc;
	/* 1. the pool (deposits expire anyway: spend them first). The
	 * cursor first, then the clock, as in brk__gcra_take(). */
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t cw = uatomic_read(&brk__xw(r)[BRK__BG_CURSOR]), next = 0;

		now = brk__now(b->seg);
		if (pool_scan(r, cw, slice_of(b->seg, now), MILLI, &next) == 0)
			break;
		if (uatomic_cmpxchg(&brk__xw(r)[BRK__BG_CURSOR], cw, next) == cw) {
			uatomic_inc(&brk__xw(r)[BRK__BG_RETRIES]);
			return 0;
		}
		caa_cpu_relax();
	}
	/* 2. the floor (a contended pool also falls through to it) */
	rc = -BRK_ENOTOKENS;
	if (c.t != 0)
		rc = brk__gcra_take(b->seg, &brk__xw(r)[BRK__BG_TAT], c.t, c.tau, 1,
				    &now, &nb);
	if (rc == 0) {
		uatomic_inc(&brk__xw(r)[BRK__BG_RETRIES]);
		uatomic_inc(&brk__xw(r)[BRK__BG_RETRIES_FLOOR]);
		return 0;
	}
	uatomic_inc(&brk__xw(r)[BRK__BG_DEFERRED]);
	return rc == -BRK_ECONTENDED ? rc : -BRK_EDEFERRED;
}

int brk__budget_fill(brk_segment *s, const struct brk__record *r,
		     const char *name, struct brk_budget_info *out)
{
	struct budget_cfg c;
	uint64_t now, m;
	int rc;

	memset(out, 0, sizeof(*out));
	memcpy(out->name, name, strnlen(name, BRK_NAME_MAX));
	out->deposits = uatomic_read(&brk__xw(r)[BRK__BG_DEPOSITS]);
	out->retries = uatomic_read(&brk__xw(r)[BRK__BG_RETRIES]);
	out->retries_floor = uatomic_read(&brk__xw(r)[BRK__BG_RETRIES_FLOOR]);
	out->deferred = uatomic_read(&brk__xw(r)[BRK__BG_DEFERRED]);
	rc = budget_cfg_parse(uatomic_read(&brk__xw(r)[BRK__BG_CFG]), &c);
	if (rc == -EAGAIN)
		return 0;
	if (rc)
		return rc;
	out->configured = 1;
	out->floor_per_s = c.floor_milli / 1000.0;
	out->ratio = c.ratio_milli / 1000.0;
	out->floor_burst = c.burst;
	now = brk__now(s);
	m = pool_scan(r, uatomic_read(&brk__xw(r)[BRK__BG_CURSOR]), slice_of(s, now),
		      0, NULL);
	out->pool = (double)m / 1000.0;
	if (c.t)
		out->floor_tokens = brk__gcra_tokens(
			uatomic_read(&brk__xw(r)[BRK__BG_TAT]), now, c.t, c.tau, NULL);
	out->balance = out->pool + out->floor_tokens;
	return 0;
}

int brk__budget_info(brk_budget *g, struct brk_budget_info *out)
{
	brk_breaker *b = brk__bg_h(g);

	if (!g || !out)
		return -EINVAL;
	BRK__FRESH_OR_RETURN(b);
	return brk__budget_fill(b->seg, brk__brec(b), b->name, out);
}

int brk_budget_info_sz(brk_budget *g, struct brk_budget_info *out, size_t size)
{
	struct brk_budget_info tmp;
	int rc;

	if (!g || !out)
		return -EINVAL;
	memset(&tmp, 0, sizeof(tmp));
	rc = brk__budget_info(g, &tmp);
	brk__struct_out(out, size, &tmp, sizeof(tmp));
	return rc;
}

int (brk_budget_info)(brk_budget *g, struct brk_budget_info *out)
{
	return brk_budget_info_sz(g, out, BRK_BUDGET_INFO_SIZE_VER0);
}
