/*
 * cool.h - the breaker's shared cool-until (cool.c): raised by a
 * Retry-After up to max_wait_ms (release.c) and by a fleet peer's
 * cool_until decision (brk_cool_for()); never lowered but by brk_reset().
 */
#ifndef BRK_COOL_H
#define BRK_COOL_H

#include <stdint.h>

#include "internal.h"

/* Raise @r's cool_until_ns to @now + @ms (monotonic ns; @ms capped at
 * max_open_ms: brk__cooling_cap()) if it is lower; a new cooling (the old
 * one over at @now) writes the event "cool_until" with the capped @ms.
 * Returns 1 (raised), 0 (already at or above it), -BRK_ECONTENDED (bounded
 * CAS tries). */
int brk__raise_cool_until(brk_segment *s, struct brk__record *r,
			  uint64_t ms, uint64_t now);

#endif /* BRK_COOL_H */
