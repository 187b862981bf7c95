/*
 * fleet_apply.h - apply one peer's message (a PUBLISH payload or a
 * catch-up key's value) to this host's segment: decode (fleet_msg.h),
 * refuse what is not for us (counted by cause, logged at most once a
 * second per cause), find the record, cap the period, mark the origin and
 * apply. Called by the subscriber thread only.
 */
#ifndef BREAKERD_FLEET_APPLY_H
#define BREAKERD_FLEET_APPLY_H

#include <stddef.h>
#include <stdint.h>

#include "breaker.h"

enum fleet_outcome {
	FLEET_APPLIED = 0,
	FLEET_IGNORED = 1,   /* valid, nothing to do (-EALREADY, close on a
	                        breaker that needs none) */
	FLEET_OWN = 2,       /* our own echo: not counted */
	FLEET_DROPPED = 3,   /* refused: counted in drops[cause] */
	FLEET_FAILED = 4     /* the library refused (logged) */
};

/* Where a message came from. */
enum fleet_from {
	FLEET_FROM_PUBSUB = 0,   /* a PUBLISH payload */
	FLEET_FROM_CATCHUP = 1,  /* a catch-up key, after a (re)subscribe */
	FLEET_FROM_RECHECK = 2   /* a catch-up key, periodic re-read
	                            (FLEET_CATCHUP_MS): not counted in
	                            received, its refusals neither counted
	                            nor logged (they were on first sight) */
};

/* @self: this host's id; @from: enum fleet_from. Returns an enum
 * fleet_outcome. */
int fleet_apply(brk_segment *seg, const char *self, const char *buf,
		size_t len, uint64_t now_wall_ms, int from);

#endif
