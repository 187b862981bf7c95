/*
 * refuse.c - the bookkeeping of a refused call: count it, and fill the
 * caller's struct brk_refusal (cause, jittered wait, the refusing record's
 * name). Used by acquire.c and parents.c.
 */
#include <string.h>

#include "internal.h"

/* Jittered wait: [base, base + min(base / 4, 5 s)]. */
static uint64_t jitter_ms(brk_segment *s, uint64_t base)
{
	uint64_t span = base / 4;

	if (span > 5000)
		span = 5000;
	return brk__sat_add(base, brk__random(s) % (span + 1));
}

int brk__refuse(brk_breaker *b, struct brk_refusal *why, enum brk__ctr c,
		int code, uint64_t wait_ms, const struct brk__record *by,
		int cause)
{
	brk__count(brk__brec(b), c);
	if (why) {
		memset(why, 0, sizeof(*why)); /* reserved_ too */
		why->cause = cause;
		/* no breaker is open or cooling longer than one clamped duration:
		 * a hostile deadline word in the segment says more */
		if (wait_ms > BRK_MAX_DURATION_MS)
			wait_ms = BRK_MAX_DURATION_MS;
		why->wait_ms = wait_ms ? jitter_ms(b->seg, wait_ms) : 0;
		if (!by || brk__record_name(by, why->by) != 0)
			memcpy(why->by, b->name, sizeof(why->by));
	}
	return code;
}
