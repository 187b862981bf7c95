/*
 * pace_curve.c - the learned-rate curve of paced buckets and the coding
 * of their words. Pure functions of their arguments (no shared memory, no
 * clock), so the curve is unit-tested alone.
 *
 * The rule (issue 21) holds the rate just under the limit a cut found
 * and probes above it briefly and rarely: BBR's ProbeBW cycle (N.
 * Cardwell et al., "BBR Congestion Control", draft-ietf-ccwg-bbr,
 * section 4.3.3: cruise at the estimated bandwidth, then ProbeBW_UP with
 * a growing gain until loss, at a wall-clock interval of seconds rather
 * than every round) applied to a rate limit, and BBR's Startup exit
 * ("full bandwidth reached" when a round grew the estimate by less than
 * 25 %; 10 % here, BRK_PACE_GROW_RATIO) for GROWING. It replaced RFC 8312 CUBIC (multiplicative cut by
 * 0.7, cubic regrowth), whose sawtooth averaged well below the limit it
 * found (69 % and 81 % goodput in two shapes measured in issue 21). The
 * limit estimate at a cut is the accepted rate, as the design's earlier
 * since-cut average. Every constant is in breaker.h (BRK_PACE_HOLD_GAIN
 * ...), tuned with bench/pace_sim.py --matrix.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "breaker.h"
#include "layout.h"
#include "pace_curve.h"

double brk__pace_hold_s(double limit)
{
	double h = BRK_PACE_HOLD_REQS / limit;

	if (!(h >= BRK_PACE_HOLD_MIN_MS / 1e3)) /* also NaN */
		return BRK_PACE_HOLD_MIN_MS / 1e3;
	return h > BRK_PACE_HOLD_MAX_MS / 1e3 ? BRK_PACE_HOLD_MAX_MS / 1e3 : h;
}

double brk__pace_curve(double limit, int grow, double t_s, double floor_per_s,
		       double ceiling_per_s)
{
	double h, x, r;

	if (!(limit > 0.0))
		return ceiling_per_s; /* never cut (or NaN: no data) */
	if (!(t_s > 0.0))
		t_s = 0.0;
	if (t_s > 1e6)
		return ceiling_per_s; /* idle for 11 days: long back at it */
	h = grow ? 0.0 : brk__pace_hold_s(limit);
	r = BRK_PACE_HOLD_GAIN * limit;
	if (t_s > h) {
		x = (t_s - h) * 1e3 / (grow ? BRK_PACE_GROW_DOUBLE_MS
					    : BRK_PACE_PROBE_DOUBLE_MS);
		if (x > 1000.0)
			return ceiling_per_s;
		r *= exp2(x);
	}
	if (!(r >= floor_per_s)) /* also NaN */
		return floor_per_s;
	return r > ceiling_per_s ? ceiling_per_s : r;
}

int brk__pace_probing(const struct brk__pace *p, uint64_t now_ms)
{
	double t = now_ms > p->cut_ms ? (double)(now_ms - p->cut_ms) / 1e3 : 0.0;

	return !(p->w_max > 0.0) || p->grow || t > brk__pace_hold_s(p->w_max);
}

double brk__pace_cut_limit(const struct brk__pace *p, double rate, double est_long,
			   double est1s, int probing, int *grow)
{
	double base;

	*grow = 0;
	if (probing) {
		/* no 429 while holding: the limit is at least the one held
		 * under; the cycle's accepted rate (exact while the upstream's
		 * burst kept what the hold left unused) */
		base = p->w_max > 0.0 ? p->w_max : 0.0;
		if (est_long > base)
			base = est_long;
		/* growing (or the first cut): the cycle is short, the last
		 * second is what is known */
		if ((p->grow || !(p->w_max > 0.0)) &&
		    BRK_PACE_PROBE_EST_SHARE * est1s > base)
			base = BRK_PACE_PROBE_EST_SHARE * est1s;
		if (!(base > 0.0))
			base = BRK_PACE_NODATA_CUT * rate; /* nothing known */
		if (base > rate)
			base = rate;
		*grow = !(p->w_max > 0.0) || base >= BRK_PACE_GROW_RATIO * p->w_max;
	} else if (est_long > 0.0) {
		/* below the rate held: the limit fell to it; at or above it
		 * (everything sent was accepted, one 429 anyway: a transient)
		 * the limit found stays (never above the accepted rate) */
		base = est_long < rate ? est_long :
		       (est_long < p->w_max ? est_long : p->w_max);
	} else if (est1s > 0.0) {
		/* under a second since the last cut: the last second still
		 * holds the burst the probe took; below it and the rate */
		base = BRK_PACE_HOLD_SHORT_CUT * (est1s < rate ? est1s : rate);
	} else {
		base = BRK_PACE_NODATA_CUT * rate;
	}
	return base;
}

double brk__pace_since_est(const struct brk__pace *p, uint64_t since_w, uint64_t now_ms)
{
	uint64_t start = BRK__SINCE_MS(since_w);

	if (p->w_max > 0.0 && since_w != 0 && start >= p->cut_ms &&
	    now_ms >= start + BRK_PACE_EST_MIN_MS && BRK__SINCE_N(since_w) > 0)
		return BRK_PACE_EST_SHARE * (double)BRK__SINCE_N(since_w) * 1e3 /
		       (double)(now_ms - start);
	return 0.0;
}

uint32_t brk__pace_f24_encode(double v)
{
	float f;
	uint32_t u;

	if (!isfinite(v) || !(v > 0.0))
		return 0;
	if (v > 3.0e38)
		v = 3.0e38;
	f = (float)v;
	if ((double)f > v) /* rounded up: step one ulp down */
		f = nextafterf(f, 0.0f);
	memcpy(&u, &f, sizeof(u));
	u >>= 8;
	return u ? u : 1u; /* the smallest positive pattern, never 0 */
}

double brk__pace_f24_decode(uint32_t w24)
{
	uint32_t u = (w24 & 0xffffffu) << 8;
	float f;

	if (w24 == 0)
		return 0.0;
	memcpy(&f, &u, sizeof(f));
	if (!isfinite(f) || !(f > 0.0f))
		return -1.0;
	return (double)f;
}

int brk__pace_parse(uint64_t cfg_w, uint64_t pace_w, uint64_t cut_w,
		    struct brk__pace *p)
{
	memset(p, 0, sizeof(*p));
	if (cfg_w == 0)
		return -EAGAIN;
	p->ceil_t = BRK__BKC_T(cfg_w);
	p->burst = BRK__BKC_BURST(cfg_w);
	if (p->ceil_t == 0 || p->ceil_t > BRK__T_LIMIT || p->burst == 0 ||
	    p->burst > BRK_BUCKET_MAX_BURST)
		return -BRK_ECORRUPT;
	if (!(pace_w & BRK__PC_PACED))
		return 1;
	p->floor_t = BRK__PC_FLOOR_T(pace_w);
	p->reserve_pct = BRK__PC_RESERVE(pace_w);
	p->fleet = (pace_w & BRK__PC_FLEET) != 0;
	if (p->floor_t < p->ceil_t || p->floor_t > BRK__T_LIMIT ||
	    p->reserve_pct > BRK_PACE_MAX_RESERVE_PCT ||
	    (pace_w & ~(BRK__PC_PACED | BRK__PC_FLEET | BRK__PC_IMPLICIT |
			BRK__PC_MAKE(BRK__BKC_T_MAX, BRK__PC_RESERVE_MASK))))
		return -BRK_ECORRUPT;
	p->implicit = (pace_w & BRK__PC_IMPLICIT) != 0;
	if (cut_w != 0) {
		p->cut_ms = BRK__CUT_MS(cut_w);
		p->grow = (cut_w & BRK__CUT_GROW) != 0;
		p->w_max = brk__pace_f24_decode(BRK__CUT_W(cut_w & ~BRK__CUT_GROW));
		if (!(p->w_max > 0.0))
			return -BRK_ECORRUPT;
	}
	return 0;
}

double brk__pace_rate(const struct brk__pace *p, uint64_t now_ms)
{
	double t = now_ms > p->cut_ms ? (double)(now_ms - p->cut_ms) / 1e3 : 0.0;

	return brk__pace_curve(p->w_max, p->grow, t, 1e9 / (double)p->floor_t,
			       1e9 / (double)p->ceil_t);
}

uint64_t brk__pace_rate_t(const struct brk__pace *p, uint64_t now_ms)
{
	double t;

	if (p->w_max <= 0.0)
		return p->ceil_t;
	t = 1e9 / brk__pace_rate(p, now_ms) + 0.5;
	if (!(t >= (double)p->ceil_t))
		return p->ceil_t;
	if (t >= (double)p->floor_t)
		return p->floor_t;
	return (uint64_t)t;
}

uint64_t brk__pace_normal_t(uint64_t t, uint32_t reserve_pct)
{
	unsigned __int128 q;

	if (reserve_pct == 0)
		return t;
	if (reserve_pct > BRK_PACE_MAX_RESERVE_PCT)
		reserve_pct = BRK_PACE_MAX_RESERVE_PCT;
	q = ((unsigned __int128)t * 100u + (99u - reserve_pct)) / (100u - reserve_pct);
	return q > (unsigned __int128)BRK__T_LIMIT * 10u ? BRK__T_LIMIT * 10u
							  : (uint64_t)q;
}

uint64_t brk__pace_tau(uint64_t t, uint32_t burst)
{
	unsigned __int128 q = (unsigned __int128)t * burst;

	return q > (UINT64_MAX >> 1) ? (UINT64_MAX >> 1) : (uint64_t)q;
}

uint64_t brk__pace_est_add(uint64_t w, uint64_t now_ms)
{
	uint64_t slot = (now_ms / 1000u) & 0xffffffffu, ws = BRK__EST_SLOT(w);
	uint32_t cur = BRK__EST_CUR(w);

	if (w != 0 && ws == slot)
		return BRK__EST_MAKE(slot, cur < 0xffffu ? cur + 1u : cur,
				     BRK__EST_PREV(w));
	if (w != 0 && ((ws + 1u) & 0xffffffffu) == slot)
		return BRK__EST_MAKE(slot, 1u, cur);
	return BRK__EST_MAKE(slot, 1u, 0u);
}

uint64_t brk__pace_since_add(uint64_t w, uint64_t cut_ms, uint64_t now_ms, int idle)
{
	uint32_t n = BRK__SINCE_N(w);
	uint64_t start = BRK__SINCE_MS(w);

	cut_ms &= BRK__CUT_MS_MAX;
	now_ms &= BRK__CUT_MS_MAX;
	if (idle && now_ms >= cut_ms)
		return BRK__SINCE_MAKE(now_ms, 1u);
	/* a window of an older cut, or one from the (untrusted) future */
	if (w == 0 || start < cut_ms || start > now_ms)
		return BRK__SINCE_MAKE(cut_ms, 1u);
	return BRK__SINCE_MAKE(start, n < BRK__SINCE_N_MAX ? n + 1u : n);
}

int brk__pace_idle(uint64_t est_w, uint64_t now_ms)
{
	uint64_t slot = (now_ms / 1000u) & 0xffffffffu, ws = BRK__EST_SLOT(est_w);
	uint64_t gap = (slot - ws) & 0xffffffffu;

	/* slots ws+1 .. slot-1 held no success: at least (gap - 1) s */
	return est_w != 0 && gap >= 1u + (BRK_PACE_IDLE_MS + 999u) / 1000u;
}

double brk__pace_cut_estimate(const struct brk__pace *p, uint64_t since_w,
			      uint64_t est_w, uint64_t now_ms)
{
	uint64_t start = BRK__SINCE_MS(since_w);

	if (p->w_max > 0.0 && since_w != 0 && start >= p->cut_ms &&
	    now_ms >= start + BRK_PACE_EST_MIN_MS && BRK__SINCE_N(since_w) > 0)
		return BRK_PACE_EST_SHARE * (double)BRK__SINCE_N(since_w) * 1e3 /
		       (double)(now_ms - start);
	return brk__pace_est(est_w, now_ms);
}

double brk__pace_clamp(double base, double floor_per_s, double ceiling_per_s)
{
	if (!(base >= floor_per_s))
		base = floor_per_s;
	return base > ceiling_per_s ? ceiling_per_s : base;
}

double brk__pace_est(uint64_t w, uint64_t now_ms)
{
	uint64_t slot = (now_ms / 1000u) & 0xffffffffu, ws = BRK__EST_SLOT(w);
	double left = 1.0 - (double)(now_ms % 1000u) / 1e3;

	if (w == 0)
		return 0.0;
	if (ws == slot)
		return BRK__EST_CUR(w) + BRK__EST_PREV(w) * left;
	if (((ws + 1u) & 0xffffffffu) == slot)
		return BRK__EST_CUR(w) * left;
	return 0.0;
}
