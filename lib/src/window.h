/*
 * window.h - words of a breaker record used by the sliding-window trip
 * rules (failure rate, slow-call rate) and the trip quorum. They live in
 * the record's window extension block (layout.h, ext_refs), allocated
 * when a setting needs them; without it the rules are inactive.
 *
 * Window: BRK_WINDOW_BUCKETS buckets of window_ms / BRK_WINDOW_BUCKETS ms,
 * each two words tagged tag:24 = (gen & 0xffff) << 8 | (bucket epoch &
 * 0xff):  A = tag | calls:20 | failures:20,  B = tag | slow:20 | 0:20,
 * and a head word: the newest bucket epoch (ms / bucket ms since the
 * segment epoch, 64 bits) any call was counted in.
 * A bucket whose tag is not the expected one is empty: it is rotated
 * lazily by the CAS of the call that lands in it (which counts itself).
 * Short tags never alias (issue 9):
 *  - time: the caller that moves the head forward empties every bucket it
 *    passes over, and readers count only buckets of the BRK_WINDOW_BUCKETS
 *    epochs up to the head, so a bucket never holds data older than the
 *    window and 8 bits tell the epochs of one window apart;
 *  - generation: every transition's winner empties the buckets of older
 *    generations (brk__window_clear), so 16 bits only stop a late writer
 *    that read an older state.
 *
 * Quorum: BRK_MAX_QUORUM slots of pid:22 | last_failure_ms:42 (ms since
 * the segment epoch, modulo 2^42; ages are taken modulo 2^42, right at any
 * segment age for failures less than 139 years old).
 */
#ifndef BRK_WINDOW_H
#define BRK_WINDOW_H

#include "internal.h"

/* The words' offsets in the block are layout.h's BRK__WIN_* and
 * BRK__QUORUM*. */

/* Does this breaker use a window rule at all? */
static inline int brk__window_active(const struct brk__record *r)
{
	/* failure_rate_pct != 0 || slow_call_ms != 0: one load, one test */
	return (uatomic_read(&r->cfg[BRK__CFG_WINDOW_WORD]) >> BRK__CFG_WINDOW_SHIFT) != 0;
}

struct brk__window_sum {
	uint64_t calls, failures, slow;
};

/* Count one call (closed state, generation of @w) and evaluate the rate
 * rules. Returns 0, or the rule that says open (BRK_EV_FAILURE_RATE,
 * BRK_EV_SLOW_RATE): the caller opens (brk__open_by_rule()), so the
 * window calls nothing above it. */
int brk__window_record(brk_segment *s, struct brk__record *r, uint64_t w,
		       uint64_t now, int failed, int slow);
void brk__window_sum(brk_segment *s, const struct brk__record *r, uint64_t w,
		     uint64_t now, struct brk__window_sum *out);

/* Note a failure by this process; returns distinct failing processes in
 * the last window_ms (including this one). */
uint32_t brk__quorum_note(brk_segment *s, struct brk__record *r, uint64_t now);
uint32_t brk__quorum_count(brk_segment *s, const struct brk__record *r,
			   uint64_t now);
void brk__quorum_clear(brk_segment *s, struct brk__record *r);
/* Empty every bucket not of generation @gen (a transition's winner). */
void brk__window_clear(brk_segment *s, struct brk__record *r, uint64_t gen);

#endif
