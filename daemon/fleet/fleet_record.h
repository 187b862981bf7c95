/*
 * fleet_record.h - find a record by name and say whether it is
 * fleet-wide (its fleet setting): the one test both directions of the
 * link use (what is published is what is accepted).
 */
#ifndef BREAKERD_FLEET_RECORD_H
#define BREAKERD_FLEET_RECORD_H

#include "breaker.h"

/* The breaker @name into *@b and its snapshot into *@info. Returns 1
 * (fleet = 1), 0 (not fleet-wide), -ENOENT (no such record),
 * -EMEDIUMTYPE (a record of another kind), or the library's error. */
int fleet_breaker_lookup(brk_segment *seg, const char *name,
			 brk_breaker **b, struct brk_info *info);

/* The pace @name into *@k. Returns 1 (fleet = 1), 0 (not fleet-wide or a
 * plain bucket), -ENOENT, -EMEDIUMTYPE (a breaker or budget), or the
 * library's error. */
int fleet_pace_lookup(brk_segment *seg, const char *name, brk_bucket **k);

#endif
