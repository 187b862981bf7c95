/*
 * fleet_own.h - this host's own catch-up keys that no longer hold: a
 * decision this host published (its key still in Redis, from this run or
 * the previous one) undone here while the link could not say so, e.g. a
 * `bctl reset` made while breakerd was stopped (the ring's events from
 * before the link starts are not sent). The publisher sends what holds
 * now in their place (docs/design/fleet.md "Fleet link", own stale keys).
 */
#ifndef BREAKERD_FLEET_OWN_H
#define BREAKERD_FLEET_OWN_H

#include <stdatomic.h>

#include "breaker.h"
#include "fleet_conf.h"
#include "fleet_msg.h"

/*
 * fleet_own_undone - SCAN <channel>:state:* on @rc (at most
 * FLEET_SCAN_MAX_KEYS keys) and, for each key with host c->host_id whose
 * decision no longer holds on @seg, call @fix(@ctx, &m) with the message
 * to send now (kind and name set; the caller stamps host, seq, sent_ms):
 *   open / cool_until: the breaker is closed, in normal mode, not
 *     cooling, and its last state change here is after the key's sent_ms
 *     (fleet_apply.c's staleness rule, from our side) -> FLEET_RESET;
 *   forced (not normal): the mode here is another -> FLEET_FORCED with
 *     the mode here.
 * A pace_cut key is left to expire (60 s). A key that is not ours, does
 * not decode, or names a record that is not a fleet breaker here is left
 * alone. Stops early when *@stop is set or @fix returns non-zero (that
 * value is returned). Returns 0, or -EIO with @err (fleet_cmd_err()).
 * Publisher thread only.
 */
int fleet_own_undone(redisContext *rc, const struct fleet_conf *c,
		     brk_segment *seg, atomic_int *stop,
		     int (*fix)(void *ctx, struct fleet_msg *m), void *ctx,
		     char *err, size_t errlen);

#endif
