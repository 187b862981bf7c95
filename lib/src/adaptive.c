/*
 * adaptive.c - max_concurrent = auto (issue 25): one bulkhead limit per
 * breaker, learned from completion latency across every process of the
 * host, by Netflix concurrency-limits' Gradient2 rule:
 *
 *   gradient = clamp(long / short, 0.5, 1.0)
 *   new      = gradient * limit + max(1, floor(sqrt(limit)) / 2)  (headroom)
 *   limit    = 0.8 * limit + 0.2 * new, in [min, max]
 *
 * once per short window (>= 100 ms and >= 10 samples, or >= 1 s with any
 * sample), never growing while app-limited (fewer than limit / 2 permits
 * were out at every admission of the window); long is an EWMA of the
 * windows' means (600 windows, the first 10 a plain mean) and decays by
 * 0.9 a window while long / short > 2 (Gradient2's drift recovery). The
 * constants, their sources and why: docs/design/limits.md "Adaptive
 * concurrency".
 *
 * State: four words of the primary permit block's control unit
 * (layout.h BRK__AC_*, encodings in adaptive.h). A release adds its
 * sample with one fetch-and-add; the release that finds the window due
 * wins a CAS on WIN, takes the samples (exchange to 0) and writes LIMIT
 * and LONG (plain stores: only a window's closer writes them; a closer
 * stalled past the next window's close may overwrite a newer value with
 * an older sane one, never with garbage). Every word is read as
 * untrusted: decoded values are clamped.
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

void brk__ac_decode(uint64_t limit_w, uint64_t long_w, uint32_t min,
		    uint32_t max, struct brk__ac *a)
{
	uint32_t fp = (uint32_t)(limit_w & 0xffffu);
	uint64_t lf = long_w & BRK__AC_48;

	a->limit = fp ? clampd((double)fp / BRK__AC_LIMIT_FP, min, max)
		      : initial(min, max);
	a->recent_us = (limit_w >> 16) & ((1ULL << 40) - 1u);
	if (a->recent_us > BRK__AC_RTT_MAX_US)
		a->recent_us = BRK__AC_RTT_MAX_US;
	a->long_us = clampd((double)lf / BRK__AC_LONG_FP, 0, BRK__AC_RTT_MAX_US);
	a->windows = a->long_us > 0 ? (uint32_t)(long_w >> 48) : 0;
}

void brk__ac_encode(const struct brk__ac *a, uint64_t *limit_w, uint64_t *long_w)
{
	double l = clampd(a->limit, 1, BRK__PERMIT_SLOTS);
	double lu = clampd(a->long_us, 0, BRK__AC_RTT_MAX_US);
	uint64_t fp = (uint64_t)(l * BRK__AC_LIMIT_FP + 0.5);
	uint64_t rec = a->recent_us > BRK__AC_RTT_MAX_US ? BRK__AC_RTT_MAX_US
							 : a->recent_us;
	uint32_t n = a->windows > 0xffffu ? 0xffffu : a->windows;

	*limit_w = (fp > 0xffffu ? 0xffffu : fp) | (rec << 16);
	*long_w = ((uint64_t)(lu * BRK__AC_LONG_FP + 0.5) & BRK__AC_48) |
		  ((uint64_t)n << 48);
}

uint32_t brk__ac_bound(uint64_t limit_w, uint32_t min, uint32_t max)
{
	struct brk__ac a;

	brk__ac_decode(limit_w, 0, min, max, &a); /* in [min, max] */
	return (uint32_t)a.limit;
}

/* The headroom: floor(sqrt(limit)) / 2, at least 1 (half of Envoy's
 * sqrt(limit), not Gradient2's fixed 4: docs/design/limits.md says why). */
static double headroom(double limit)
{
	uint32_t l = (uint32_t)limit, q = 1;

	while ((q + 1) * (q + 1) <= l)
		q++;
	return q / 2 ? q / 2 : 1;
}

void brk__ac_step(struct brk__ac *a, uint64_t short_us, uint32_t inflight,
		  uint32_t min, uint32_t max)
{
	double s = (double)(short_us ? short_us : 1), g, nl;

	if (s > BRK__AC_RTT_MAX_US)
		s = BRK__AC_RTT_MAX_US;
	a->recent_us = (uint64_t)s;
	a->limit = clampd(a->limit, min, max);
	/* the baseline: a plain mean of the first windows, then an EWMA */
	if (a->long_us <= 0 || a->windows == 0) {
		a->long_us = s;
		a->windows = 1;
	} else if (a->windows < BRK__AC_WARMUP) {
		a->long_us = (a->long_us * a->windows + s) / (a->windows + 1);
		a->windows++;
	} else {
		a->long_us += (s - a->long_us) * (2.0 / (BRK__AC_LONG_WINDOWS + 1));
		if (a->windows < 0xffffu)
			a->windows++;
	}
	/* drift recovery: latency fell well below a baseline inflated by a
	 * long overload; do not wait for the EWMA */
	if (a->long_us / s > BRK__AC_DRIFT)
		a->long_us *= BRK__AC_DRIFT_DECAY;
	g = clampd(a->long_us / s, BRK__AC_GRAD_MIN, BRK__AC_GRAD_MAX);
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
				    BRK__AC_WIN_MAKE(BRK__AC_WIN_START(w), n)) == w)
			return;
	}
}

void brk__ac_sample(brk_segment *s, struct brk__record *r, uint64_t rtt_ns,
		    uint64_t now_ns)
{
	uint64_t *ctl = brk__permit_ctl(s, r);
	uint64_t us = rtt_ns / 1000u, rel, w, acc, lw, gw;
	uint32_t n, min, max;
	struct brk__ac a;

	if (!ctl)
		return;
	us = us < 1 ? 1 : us > BRK__AC_RTT_MAX_US ? BRK__AC_RTT_MAX_US : us;
	n = BRK__AC_ACC_COUNT(uatomic_add_return(&ctl[BRK__AC_ACC],
						 BRK__AC_ACC_ONE(us)));
	rel = brk__rel_ms(s, now_ns);
	w = uatomic_read(&ctl[BRK__AC_WIN]);
	if (BRK__AC_WIN_START(w) == 0 || BRK__AC_WIN_START(w) - 1 > rel) {
		/* the first window starts (or a start in the future, garbage,
		 * starts over): its samples so far are this window's */
		(void)uatomic_cmpxchg(&ctl[BRK__AC_WIN], w,
				      BRK__AC_WIN_MAKE(rel + 1, BRK__AC_WIN_HW(w)));
		return;
	}
	if (!brk__ac_due(BRK__AC_WIN_START(w), n, rel))
		return;
	if (uatomic_cmpxchg(&ctl[BRK__AC_WIN], w, BRK__AC_WIN_MAKE(rel + 1, 0)) != w)
		return; /* another release closed it */
	acc = uatomic_xchg(&ctl[BRK__AC_ACC], 0);
	if (BRK__AC_ACC_COUNT(acc) == 0)
		return;
	brk__ac_bounds(r, &min, &max);
	brk__ac_decode(uatomic_read(&ctl[BRK__AC_LIMIT]),
		       uatomic_read(&ctl[BRK__AC_LONG]), min, max, &a);
	brk__ac_step(&a, BRK__AC_ACC_SUM(acc) / BRK__AC_ACC_COUNT(acc),
		     BRK__AC_WIN_HW(w), min, max);
	brk__ac_encode(&a, &lw, &gw);
	uatomic_set(&ctl[BRK__AC_LONG], gw);
	uatomic_set(&ctl[BRK__AC_LIMIT], lw);
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
