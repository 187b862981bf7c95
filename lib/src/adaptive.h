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
#define BRK__AC_LONG_WINDOWS 600u  /* the baseline's EWMA: 2 / (600 + 1) */
#define BRK__AC_WARMUP 10u         /* its first 10 windows: a plain mean */
#define BRK__AC_SMOOTHING 0.2      /* Gradient2's smoothing */
#define BRK__AC_DRIFT 2.0          /* long / short above this: */
#define BRK__AC_DRIFT_DECAY 0.9    /* long *= 0.9 (Gradient2) */
#define BRK__AC_GRAD_MIN 0.5       /* gradient clamped to [0.5, 1.0] */
#define BRK__AC_GRAD_MAX 1.0
#define BRK__AC_INITIAL 4u         /* first limit (clamped to min..max) */
#define BRK__AC_RTT_MAX_US ((1ULL << 24) - 1u) /* a sample's cap: 16.8 s */

/* ---- word encodings ----------------------------------------------------
 * LIMIT  limit_fp:16 (limit x 256; 0: never learned) | recent_us:40 | 0:8
 * ACC    count:20 (low) | sum_us:44; one fetch-and-add per sample,
 *        exchanged to 0 by the window's closer
 * LONG   long_fp:48 (baseline us x 16) | windows:16 (saturating)
 * WIN    start:48 (ms since the segment epoch + 1; 0: none yet) |
 *        inflight_hw:8 (the most permits out at an admission this window)
 */
#define BRK__AC_LIMIT_FP 256u
#define BRK__AC_ACC_CBITS 20u
#define BRK__AC_ACC_COUNT(w) ((uint32_t)((w) & ((1u << BRK__AC_ACC_CBITS) - 1u)))
#define BRK__AC_ACC_SUM(w) ((w) >> BRK__AC_ACC_CBITS)
#define BRK__AC_ACC_ONE(us) (1u | ((uint64_t)(us) << BRK__AC_ACC_CBITS))
#define BRK__AC_LONG_FP 16u
#define BRK__AC_48 ((1ULL << 48) - 1u)
#define BRK__AC_WIN_START(w) ((w) & BRK__AC_48)
#define BRK__AC_WIN_HW(w) ((uint32_t)(((w) >> 48) & 0xffu))
#define BRK__AC_WIN_MAKE(start1, hw) \
	(((uint64_t)(start1) & BRK__AC_48) | ((uint64_t)((hw) & 0xffu) << 48))

/* The rule's state, decoded (and clamped) from LIMIT and LONG. */
struct brk__ac {
	double limit;       /* in [min, max] */
	double long_us;     /* the baseline; 0: none yet */
	uint32_t windows;   /* windows folded into the baseline */
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
 * latency, @inflight the most permits out at an admission during it. */
void brk__ac_step(struct brk__ac *a, uint64_t short_us, uint32_t inflight,
		  uint32_t min, uint32_t max);
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

/* The permit slots a config's bulkhead needs (blocks.c, room.c):
 * max_concurrent, or BRK_MAX_CONCURRENT for auto with max_concurrent 0. */
static inline uint32_t brk__bulkhead_slots(const struct brk_config *c)
{
	return c->max_concurrent ? c->max_concurrent
				 : c->concurrency_auto ? BRK_MAX_CONCURRENT : 0;
}

#endif
