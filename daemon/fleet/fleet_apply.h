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

/* The trust settings (docs/guide/fleet.md "Trust model"). */
#define FLEET_REPLAY_WINDOW_MS 30000u /* a live (PUBLISH) v2 message sent
                                         longer ago is refused: replay */
#define FLEET_PEER_RATE 100u          /* applied decisions per second and
                                         peer host id (bench/fleet.sh's
                                         trip-and-reset loop sends ~80/s
                                         from one host) ... */
#define FLEET_PEER_BURST 200u         /* ... with this burst */
#define FLEET_ALL_RATE 200u           /* and of all peers together: a
                                         sustained flood needs 20 s to
                                         turn the 4096-event ring over */
#define FLEET_ALL_BURST 400u
#define FLEET_PEER_SLOTS 256u         /* host ids remembered (LRU) */
#define FLEET_FORCE_SLOTS 1024u       /* peers' forced modes timed here */

struct fleet_keys;

/* The link's keys (NULL or none: unsigned v1 accepted) and its allowed
 * peers (@npeers 0: any host id). Before the subscriber starts; the
 * pointers must stay valid. */
void fleet_apply_policy(const struct fleet_keys *keys,
			const char (*peers)[BRK_HOST_ID_MAX + 1],
			unsigned npeers);

/* @self: this host's id; @from: enum fleet_from. Returns an enum
 * fleet_outcome. */
int fleet_apply(brk_segment *seg, const char *self, const char *buf,
		size_t len, uint64_t now_wall_ms, int from);

/*
 * fleet_apply_expire - end the peers' forced modes whose time is up: a
 * forced mode applied from a peer holds for its remaining_ms (v2) or the
 * record's max_open_ms (v1), at most max_open_ms, unless the peer
 * re-announces it; then, if the record's mode is still that one, it goes
 * back to normal (origin: that peer; logged). Subscriber thread only.
 */
void fleet_apply_expire(brk_segment *seg, uint64_t now_wall_ms);

#endif
