/*
 * pace_curve.h - the pure arithmetic of paced buckets (pace_curve.c):
 * the learned-rate curve, the float24 encoding of w_max, decoding and
 * bounds-checking the pace words read from the (untrusted) segment, and
 * the accepted-rate estimate. No shared memory is touched here: every
 * function works on values, so each is unit-tested alone.
 */
#ifndef BRK_PACE_CURVE_H
#define BRK_PACE_CURVE_H

#include <stdint.h>

/* The decoded settings and learned state of one paced bucket. */
struct brk__pace {
	uint64_t ceil_t;      /* ns per token at the ceiling */
	uint64_t floor_t;     /* ns per token at the floor (>= ceil_t) */
	uint32_t burst;
	uint32_t reserve_pct; /* 0 .. BRK_PACE_MAX_RESERVE_PCT */
	uint32_t fleet;       /* 0 or 1 (BRK__PC_FLEET) */
	uint32_t implicit;    /* 0 or 1 (BRK__PC_IMPLICIT): made by a breaker */
	uint64_t cut_ms;      /* last cut, ms of the segment epoch */
	double w_max;         /* the limit the last cut found, tokens/s; 0:
	                         never cut */
	int grow;             /* the last cut's GROWING bit (BRK__CUT_GROW) */
};

/* The hold after a cut that found @limit tokens/s: BRK_PACE_HOLD_REQS /
 * limit s within [BRK_PACE_HOLD_MIN_MS, BRK_PACE_HOLD_MAX_MS]. */
double brk__pace_hold_s(double limit);

/* rate(t), tokens/s, t in s since the cut (negative: 0): HOLD_GAIN x
 * limit for t <= H (0 when @grow), then doubling every PROBE_DOUBLE_MS
 * (GROW_DOUBLE_MS when @grow); clamped to [floor, ceiling]. limit <= 0
 * (never cut): ceiling. A NaN anywhere gives the floor or the ceiling:
 * never a NaN, never 0 when floor > 0. */
double brk__pace_curve(double limit, int grow, double t_s, double floor_per_s,
		       double ceiling_per_s);

/* Is the pace probing at @now_ms (never cut, growing, or past its hold)? */
int brk__pace_probing(const struct brk__pace *p, uint64_t now_ms);

/* The limit a cut stores (tokens/s, not clamped) and its GROWING bit, from
 * the rate at the cut, the since-cut accepted rate (brk__pace_since_est:
 * 0 under BRK_PACE_EST_MIN_MS) and the last second's (brk__pace_est);
 * breaker.h "Pacing". */
double brk__pace_cut_limit(const struct brk__pace *p, double rate, double est_long,
			   double est1s, int probing, int *grow);

/* BRK_PACE_EST_SHARE x the successes per second of the window of
 * @since_w when it belongs to the last cut and is BRK_PACE_EST_MIN_MS
 * long or more; else 0. */
double brk__pace_since_est(const struct brk__pace *p, uint64_t since_w, uint64_t now_ms);

/* float24: float32 bits >> 8 (sign 0, 8 exponent, 15 mantissa bits);
 * encode rounds down, so a decoded w_max never exceeds the value given.
 * encode of a value <= 0 or not finite is 0; decode of 0 is 0 and of a
 * pattern that is not a finite positive float is -1. */
uint32_t brk__pace_f24_encode(double v);
double brk__pace_f24_decode(uint32_t w24);

/* Decode the settings, pace and cut words (layout.h) into @p.
 * Returns 0, -EAGAIN (cfg 0: never configured), 1 (@pace_w has no PACED
 * bit: a plain bucket; only ceil_t and burst set), -BRK_ECORRUPT (a field
 * out of range: T 0 or above the limit, floor faster than the ceiling,
 * reserve above the maximum, a w_max not a finite positive float). */
int brk__pace_parse(uint64_t cfg_w, uint64_t pace_w, uint64_t cut_w,
		    struct brk__pace *p);

/* The learned rate (tokens/s) at @now_ms (segment epoch ms), and the
 * interval in ns for it, within [ceil_t, floor_t]. */
double brk__pace_rate(const struct brk__pace *p, uint64_t now_ms);
uint64_t brk__pace_rate_t(const struct brk__pace *p, uint64_t now_ms);

/* The interval for normal-priority takes: t / (1 - reserve), rounded up,
 * saturating at the bucket's interval limit * 10. */
uint64_t brk__pace_normal_t(uint64_t t, uint32_t reserve_pct);

/* Accepted-rate estimate word (slot_s:32 | cur:16 | prev:16): the word
 * after one more success at @now_ms, and the estimate in successes per
 * second at @now_ms (cur + prev * (1 - elapsed fraction of the slot)). */
uint64_t brk__pace_est_add(uint64_t w, uint64_t now_ms);
double brk__pace_est(uint64_t w, uint64_t now_ms);

/* The since-cut count word (start_ms:40 | n:24) after one more success at
 * @now_ms, for the cut at @cut_ms: a window that starts before that cut
 * starts again at the cut with 1; one after an idle spell (@idle: the
 * previous success was BRK_PACE_IDLE_MS or more ago) starts at @now_ms. */
uint64_t brk__pace_since_add(uint64_t w, uint64_t cut_ms, uint64_t now_ms, int idle);

/* Was the success before @now_ms, recorded in the estimate word @est_w,
 * BRK_PACE_IDLE_MS or more ago (in whole slots)? 0 for a word with none. */
int brk__pace_idle(uint64_t est_w, uint64_t now_ms);

/* The accepted-rate estimate a cut at @now_ms starts from (tokens/s; 0:
 * no data): BRK_PACE_EST_SHARE x the successes per second of the window
 * of @since_w, when it belongs to the last cut (starts at or after
 * @p->cut_ms, @p->w_max > 0) and is at least BRK_PACE_EST_MIN_MS long;
 * else the sliding one-second estimate of @est_w. */
double brk__pace_cut_estimate(const struct brk__pace *p, uint64_t since_w,
			      uint64_t est_w, uint64_t now_ms);

/* @base clamped to [floor, ceiling] (a NaN: the floor). */
double brk__pace_clamp(double base, double floor_per_s, double ceiling_per_s);

/* tau = t * burst, saturating below UINT64_MAX / 2. */
uint64_t brk__pace_tau(uint64_t t, uint32_t burst);

#endif /* BRK_PACE_CURVE_H */
