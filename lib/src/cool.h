/*
 * cool.h - the breaker's shared cool-until (cool.c): raised by a
 * Retry-After up to max_wait_ms (release.c) and by a fleet peer's
 * cool_until decision (brk_cool_for()); never lowered but by brk_reset().
 */
#ifndef BRK_COOL_H
#define BRK_COOL_H

#include <stdint.h>

#include "internal.h"

/* Raise @r's cool_until_ns to @target (monotonic ns) if it is lower; a
 * new cooling (the old one over at @now) writes the event "cool_until"
 * with value @ms. Returns 1 (raised), 0 (already at or above @target),
 * -BRK_ECONTENDED (bounded CAS tries). */
int brk__raise_cool_until(brk_segment *s, struct brk__record *r,
			  uint64_t target, uint64_t now, uint64_t ms);

#endif /* BRK_COOL_H */
