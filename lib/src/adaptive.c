/*
 * adaptive.c - max_concurrent = auto (issue 25): one bulkhead limit per
 * breaker, learned from completion latency across every process of the
 * host, by a gradient rule after Netflix concurrency-limits' Gradient2
 * whose baseline is a no-load estimate, a windowed minimum as in TCP
 * Vegas, BBR's min-RTT filter and Envoy's minRTT, rather than Gradient2's
 * long EWMA (which, under sustained saturation, absorbs the queueing the
 * limit causes and lets the limit creep up):
 *
 *   baseline = min of the windows' smallest samples over the current 5 s
 *              period and the one before (a minimum lives 5..10 s)
 *   gradient = clamp(baseline / short, 0.5, 1.0)
 *   new      = gradient * limit + max(0.5, floor(floor(sqrt(limit)) / 2))
 *   limit    = 0.8 * limit + 0.2 * new, in [min, max]
 *
 * once per short window (>= 100 ms and >= 10 samples, or >= 1 s with any
 * sample; short = the window's mean), never growing while app-limited
 * (fewer than limit / 2 permits were out at every admission of the
 * window). A persistent slowdown of the upstream at any load is the new
 * baseline after at most two periods: the re-measure, without a pin of the
 * limit and its burst of refusals. The constants, their sources and why:
 * docs/design/limits.md "Adaptive concurrency".
 *
 * State: four words of the primary permit block's control unit
 * (layout.h BRK__AC_*, encodings in adaptive.h). A release adds its
 * sample with one fetch-and-add and lowers the window's minimum with a
 * CAS when it beats it; the release that finds the window due wins a CAS
 * on WIN, takes the samples (exchange to 0), updates LIMIT with a CAS
 * (which also takes the window's minimum) and stores LONG (only a
 * window's closer writes it; a closer stalled past the next window's
 * close may overwrite a newer value with an older sane one, never with
 * garbage). Every word is read as untrusted: decoded values are clamped.
 */
#include "adaptive.h"

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void brk__ac_bounds(const struct brk__record *r, uint32_t *min, uint32_t *max)
{
	uint32_t hi = brk__cfg_u32(r, BRK__CFG_MAX_CONCURRENT, 0, BRK__PERMIT_SLOTS);
	uint32_t lo = brk__cfg_u32(r, BRK__CFG_MIN_CONCURRENT, 1, BRK__PERMIT_SLOTS);

	if (hi == 0)
		hi = BRK__PERMIT_SLOTS;
	*max = hi;
	*min = lo > hi ? hi : lo;
}

static double initial(uint32_t min, uint32_t max)
{
	return clampd(BRK__AC_INITIAL, min, max);
}

static uint64_t cap24(uint64_t v)
{
	return v > BRK__AC_RTT_MAX_US ? BRK__AC_RTT_MAX_US : v;
}

/* the min filter's baseline: the smaller nonzero half (0: none) */
static double baseline(uint64_t cur, uint64_t prev)
{
	uint64_t b = cur && prev ? (cur < prev ? cur : prev) : cur ? cur : prev;

	return (double)b;
}

void brk__ac_decode(uint64_t limit_w, uint64_t long_w, uint32_t min,
		    uint32_t max, struct brk__ac *a)
{
	uint32_t fp = (uint32_t)(limit_w & 0xffffu);

	a->limit = fp ? clampd((double)fp / BRK__AC_LIMIT_FP, min, max)
		      : initial(min, max);
	a->recent_us = (limit_w >> 16) & BRK__AC_24;
	a->cur_us = long_w & BRK__AC_24;
	a->prev_us = (long_w >> 24) & BRK__AC_24;
	a->period = (uint32_t)(long_w >> 48);
	a->long_us = baseline(a->cur_us, a->prev_us);
}

/* LIMIT without its window minimum (the closer's CAS adds it: none) */
void brk__ac_encode(const struct brk__ac *a, uint64_t *limit_w, uint64_t *long_w)
{
	double l = clampd(a->limit, 1, BRK__PERMIT_SLOTS);
	uint64_t fp = (uint64_t)(l * BRK__AC_LIMIT_FP + 0.5);

	*limit_w = (fp > 0xffffu ? 0xffffu : fp) | (cap24(a->recent_us) << 16);
	*long_w = cap24(a->cur_us) | (cap24(a->prev_us) << 24) |
		  ((uint64_t)(a->period & 0xffffu) << 48);
}

uint32_t brk__ac_bound(uint64_t limit_w, uint32_t min, uint32_t max)
{
	struct brk__ac a;

	brk__ac_decode(limit_w, 0, min, max, &a); /* in [min, max] */
	return (uint32_t)a.limit;
}

/* The headroom: floor(sqrt(limit)) / 2 (integer halves), at least 0.5
 * (half of Envoy's sqrt(limit), not Gradient2's fixed 4:
 * docs/design/limits.md says why). */
static double headroom(double limit)
{
	uint32_t l = (uint32_t)limit, q = 1;

	while ((q + 1) * (q + 1) <= l)
		q++;
	return q / 2 ? (double)(q / 2) : BRK__AC_HEADROOM_MIN;
}

/* The min filter: the window's minimum joins the current period's; a new
 * period moves the current one to prev; a gap of two periods or more
 * (or a period word from the future: garbage, or 2^16 periods of
 * silence) leaves nothing to keep. */
static void min_filter(struct brk__ac *a, uint64_t wmin, uint64_t rel_ms)
{
	uint32_t p = (uint32_t)((rel_ms / BRK__AC_PERIOD_MS) & 0xffffu);
	uint32_t d = (p - a->period) & 0xffffu;

	if (d == 1) {
		a->prev_us = a->cur_us;
		a->cur_us = 0;
	} else if (d != 0) {
		a->prev_us = a->cur_us = 0;
	}
	a->period = p;
	if (a->cur_us == 0 || wmin < a->cur_us)
		a->cur_us = wmin;
	a->long_us = baseline(a->cur_us, a->prev_us);
}

void brk__ac_step(struct brk__ac *a, uint64_t short_us, uint64_t wmin_us,
		  uint32_t inflight, uint64_t rel_ms, uint32_t min, uint32_t max)
{
	double s = (double)cap24(short_us ? short_us : 1), g, nl;
	uint64_t wm = wmin_us && wmin_us <= (uint64_t)s ? wmin_us : (uint64_t)s;

	a->recent_us = (uint64_t)s;
	a->limit = clampd(a->limit, min, max);
	a->cur_us = cap24(a->cur_us);
	a->prev_us = cap24(a->prev_us);
	min_filter(a, wm, rel_ms);
	g = clampd(BRK__AC_TOLERANCE * a->long_us / s, BRK__AC_GRAD_MIN,
		   BRK__AC_GRAD_MAX);
	nl = g * a->limit + headroom(a->limit);
	nl = a->limit * (1 - BRK__AC_SMOOTHING) + nl * BRK__AC_SMOOTHING;
	/* app-limited: the limit was not what held the callers back, so
	 * latency says nothing about a higher one: no growth. (Gradient2
	 * returns before any change; a fall is kept here, or a limit left
	 * high while the callers were few would not follow an upstream that
	 * slows down meanwhile.) */
	if ((double)inflight < a->limit / 2 && nl > a->limit)
		return;
	a->limit = clampd(nl, min, max);
}

int brk__ac_due(uint64_t start1, uint32_t count, uint64_t rel_ms)
{
	uint64_t el;

	if (start1 == 0 || start1 - 1 > rel_ms)
		return 0;
	el = rel_ms - (start1 - 1);
	return count >= 1 && ((el >= BRK__AC_WIN_MS && count >= BRK__AC_WIN_SAMPLES) ||
			      el >= BRK__AC_WIN_IDLE_MS);
}

uint32_t brk__ac_limit(brk_segment *s, struct brk__record *r)
{
	uint64_t *ctl = brk__permit_ctl(s, r);
	uint32_t min, max;

	brk__ac_bounds(r, &min, &max);
	return brk__ac_bound(ctl ? uatomic_read(&ctl[BRK__AC_LIMIT]) : 0, min, max);
}

void brk__ac_inflight(brk_segment *s, struct brk__record *r, uint32_t n)
{
	uint64_t *ctl = brk__permit_ctl(s, r);
	int tries;

	if (!ctl)
		return;
	if (n > 0xffu)
		n = 0xffu;
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t w = uatomic_read(&ctl[BRK__AC_WIN]);
		if (BRK__AC_WIN_HW(w) >= n ||
		    uatomic_cmpxchg(&ctl[BRK__AC_WIN], w,
				    BRK__AC_WIN_MAKE(BRK__AC_WIN_START(w), n,
						     BRK__AC_WIN_CLOSED(w))) == w)
			return;
	}
}

/* the open window's minimum: lowered to @us if it beats it (0: none) */
static void lower_wmin(uint64_t *lw, uint64_t us)
{
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t w = uatomic_read(lw), m = BRK__AC_LIMIT_WMIN(w);
		if ((m && m <= us) ||
		    uatomic_cmpxchg(lw, w, (w & ~(BRK__AC_24 << 40)) | (us << 40)) == w)
			return;
	}
}

void brk__ac_sample(brk_segment *s, struct brk__record *r, uint64_t rtt_ns,
		    uint64_t now_ns)
{
	uint64_t *ctl = brk__permit_ctl(s, r);
	uint64_t us = rtt_ns / 1000u, rel, w, acc, lw, gw, old;
	uint32_t n, min, max;
	int tries;
	struct brk__ac a;

	if (!ctl)
		return;
	us = us < 1 ? 1 : us > BRK__AC_RTT_MAX_US ? BRK__AC_RTT_MAX_US : us;
	lower_wmin(&ctl[BRK__AC_LIMIT], us);
	n = BRK__AC_ACC_COUNT(uatomic_add_return(&ctl[BRK__AC_ACC],
						 BRK__AC_ACC_ONE(us)));
	rel = brk__rel_ms(s, now_ns);
	w = uatomic_read(&ctl[BRK__AC_WIN]);
	if (BRK__AC_WIN_START(w) == 0 || BRK__AC_WIN_START(w) - 1 > rel) {
		/* the first window starts (or a start in the future, garbage,
		 * starts over): its samples so far are this window's */
		(void)uatomic_cmpxchg(&ctl[BRK__AC_WIN], w,
				      BRK__AC_WIN_MAKE(rel + 1, BRK__AC_WIN_HW(w),
						       BRK__AC_WIN_CLOSED(w)));
		return;
	}
	if (!brk__ac_due(BRK__AC_WIN_START(w), n, rel))
		return;
	if (uatomic_cmpxchg(&ctl[BRK__AC_WIN], w,
			    BRK__AC_WIN_MAKE(rel + 1, 0, BRK__AC_WIN_CLOSED(w) + 1)) != w)
		return; /* another release closed it */
	acc = uatomic_xchg(&ctl[BRK__AC_ACC], 0);
	if (BRK__AC_ACC_COUNT(acc) == 0)
		return;
	brk__ac_bounds(r, &min, &max);
	/* LIMIT by CAS: a release may lower the window minimum meanwhile;
	 * the new word starts the next window with none */
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		old = uatomic_read(&ctl[BRK__AC_LIMIT]);
		brk__ac_decode(old, uatomic_read(&ctl[BRK__AC_LONG]), min, max, &a);
		brk__ac_step(&a, BRK__AC_ACC_SUM(acc) / BRK__AC_ACC_COUNT(acc),
			     BRK__AC_LIMIT_WMIN(old), BRK__AC_WIN_HW(w), rel,
			     min, max);
		brk__ac_encode(&a, &lw, &gw);
		if (uatomic_cmpxchg(&ctl[BRK__AC_LIMIT], old, lw) == old) {
			uatomic_set(&ctl[BRK__AC_LONG], gw);
			return;
		}
	}
}

int brk__ac_read(brk_segment *s, struct brk__record *r, struct brk__ac *a)
{
	uint64_t *ctl = brk__permit_ctl(s, r);
	uint32_t min, max;

	brk__ac_bounds(r, &min, &max);
	brk__ac_decode(ctl ? uatomic_read(&ctl[BRK__AC_LIMIT]) : 0,
		       ctl ? uatomic_read(&ctl[BRK__AC_LONG]) : 0, min, max, a);
	return ctl != NULL;
}
