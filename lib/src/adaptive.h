/*
 * adaptive.h - the learned bulkhead limit (max_concurrent = auto,
 * issue 25): a Gradient2 rule (Netflix concurrency-limits) fed by every
 * process's releases through four words of the primary permit block's
 * control unit (layout.h BRK__AC_*). The rule itself is pure functions
 * of those words (unit-tested on their own); adaptive.c has both.
 * docs/design/limits.md "Adaptive concurrency" is the contract.
 */
#ifndef BRK_ADAPTIVE_H
#define BRK_ADAPTIVE_H

#include <stdint.h>

#include "internal.h"

/* ---- constants (docs/design/limits.md "Adaptive concurrency") ---------- */
#define BRK__AC_WIN_MS 100u        /* a short window: >= 100 ms and */
#define BRK__AC_WIN_SAMPLES 10u    /* >= 10 samples, or */
#define BRK__AC_WIN_IDLE_MS 1000u  /* >= 1 s with any sample */
#define BRK__AC_PERIOD_MS 5000u    /* the baseline's min filter: two halves
				      of 5 s (a minimum lives 5..10 s) */
#define BRK__AC_TOLERANCE 1.0      /* gradient = 1.0 x baseline / short */
#define BRK__AC_SMOOTHING 0.2      /* Gradient2's smoothing */
#define BRK__AC_GRAD_MIN 0.5       /* gradient clamped to [0.5, 1.0] */
#define BRK__AC_GRAD_MAX 1.0
#define BRK__AC_HEADROOM_MIN 0.5   /* headroom floor (limits below 4) */
#define BRK__AC_INITIAL 4u         /* first limit (clamped to min..max) */
#define BRK__AC_RTT_MAX_US ((1ULL << 24) - 1u) /* a sample's cap: 16.8 s */

/* ---- word encodings ----------------------------------------------------
 * LIMIT  limit_fp:16 (limit x 256; 0: never learned) | recent_us:24 |
 *        wmin_us:24 (the open window's smallest sample, lowered by a CAS
 *        per release that beats it; 0: none yet)
 * ACC    count:20 (low) | sum_us:44; one fetch-and-add per sample,
 *        exchanged to 0 by the window's closer
 * LONG   cur_us:24 | prev_us:24 | period:16 - the baseline's min filter:
 *        the smallest window minimum of the current period (rel_ms / 5 s,
 *        mod 2^16) and of the one before (0: none); baseline = the
 *        smaller nonzero one
 * WIN    start:48 (ms since the segment epoch + 1; 0: none yet) |
 *        inflight_hw:8 (the most permits out at an admission this window) |
 *        closed:8 (windows closed, mod 256: for tests and brk_info)
 */
#define BRK__AC_LIMIT_FP 256u
#define BRK__AC_24 ((1ULL << 24) - 1u)
#define BRK__AC_LIMIT_WMIN(w) (((w) >> 40) & BRK__AC_24)
#define BRK__AC_ACC_CBITS 20u
#define BRK__AC_ACC_COUNT(w) ((uint32_t)((w) & ((1u << BRK__AC_ACC_CBITS) - 1u)))
#define BRK__AC_ACC_SUM(w) ((w) >> BRK__AC_ACC_CBITS)
#define BRK__AC_ACC_ONE(us) (1u | ((uint64_t)(us) << BRK__AC_ACC_CBITS))
#define BRK__AC_48 ((1ULL << 48) - 1u)
#define BRK__AC_WIN_START(w) ((w) & BRK__AC_48)
#define BRK__AC_WIN_HW(w) ((uint32_t)(((w) >> 48) & 0xffu))
#define BRK__AC_WIN_CLOSED(w) ((uint32_t)((w) >> 56))
#define BRK__AC_WIN_MAKE(start1, hw, closed)                                   \
	(((uint64_t)(start1) & BRK__AC_48) | ((uint64_t)((hw) & 0xffu) << 48) | \
	 ((uint64_t)((closed) & 0xffu) << 56))

/* The rule's state, decoded (and clamped) from LIMIT and LONG. */
struct brk__ac {
	double limit;       /* in [min, max] */
	double long_us;     /* the baseline: min(cur_us, prev_us) of those
			       nonzero; 0: none yet (derived on decode/step) */
	uint64_t cur_us;    /* the min filter's current period */
	uint64_t prev_us;   /* and the one before */
	uint32_t period;    /* rel_ms / BRK__AC_PERIOD_MS, mod 2^16 */
	uint64_t recent_us; /* the last window's mean latency */
};

/* The bounds of a breaker's learned limit from its settings words:
 * min_concurrent and max_concurrent (0: BRK_MAX_CONCURRENT), clamped
 * (untrusted) so that 1 <= min <= max <= BRK__PERMIT_SLOTS. */
void brk__ac_bounds(const struct brk__record *r, uint32_t *min, uint32_t *max);
/* Pure: the words decoded, garbage clamped. */
void brk__ac_decode(uint64_t limit_w, uint64_t long_w, uint32_t min,
		    uint32_t max, struct brk__ac *a);
void brk__ac_encode(const struct brk__ac *a, uint64_t *limit_w, uint64_t *long_w);
/* Pure: the permits the limit word allows now (floor, in [min, max]). */
uint32_t brk__ac_bound(uint64_t limit_w, uint32_t min, uint32_t max);
/* Pure: one window's step of the rule: @short_us the window's mean
 * latency, @wmin_us its smallest sample (0: use the mean), @inflight the
 * most permits out at an admission during it, @rel_ms when it closed. */
void brk__ac_step(struct brk__ac *a, uint64_t short_us, uint64_t wmin_us,
		  uint32_t inflight, uint64_t rel_ms, uint32_t min, uint32_t max);
/* Pure: does a window that started at @start1 (WIN's field) with @count
 * samples close at @rel_ms? */
int brk__ac_due(uint64_t start1, uint32_t count, uint64_t rel_ms);

/* shm: the bound take_permit() uses (@mc: the max_concurrent field) */
uint32_t brk__ac_limit(brk_segment *s, struct brk__record *r);
/* shm: @n permits out at an admission (raises WIN's high-water mark) */
void brk__ac_inflight(brk_segment *s, struct brk__record *r, uint32_t n);
/* shm: one completion of @rtt_ns at @now_ns; the release that finds the
 * window due closes it (CAS on WIN) and updates LIMIT and LONG. */
void brk__ac_sample(brk_segment *s, struct brk__record *r, uint64_t rtt_ns,
		    uint64_t now_ns);
/* shm: the state for brk_info (0 if the breaker has no permit block) */
int brk__ac_read(brk_segment *s, struct brk__record *r, struct brk__ac *a);

#endif
