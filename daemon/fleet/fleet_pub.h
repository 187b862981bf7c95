/*
 * fleet_pub.h - the fleet link's publisher thread: tails the event ring
 * from its head at start (its own cursor, as follow.c does), and for each
 * decision on a fleet-wide record that this host made (origin "") sends
 * one message (PUBLISH <channel> <json>) and keeps the catch-up key
 * <channel>:state:<name> (SET ... PX / DEL). At its first connect it
 * publishes a snapshot of the fleet breakers open, cooling or forced now;
 * after a reconnect it sends the decisions made while the link was down,
 * in order from its cursor (expired opens skipped; an event whose send
 * failed is read again), and the snapshot only if the ring lost events.
 */
#ifndef BREAKERD_FLEET_PUB_H
#define BREAKERD_FLEET_PUB_H

#include <stdatomic.h>
#include <stdint.h>

#include "fleet_conf.h"

#define FLEET_PACE_KEY_MS 60000u   /* a pace_cut's catch-up key lives this long */
#define FLEET_PING_MS 500u         /* idle: a PING this often (see a loss) */

struct fleet_pub {
	const struct fleet_conf *c;
	brk_segment *seg;          /* the thread's own attach */
	atomic_int *stop;
	uint64_t seq;              /* messages numbered 1, 2, ... */
	uint64_t boot;             /* this run's start, wall ms (v2 "boot") */
};

/* A forced mode this host set on a fleet breaker is re-announced every
 * max_open_ms / 3 (within these bounds) while it holds: the peers time
 * it out max_open_ms after the last one (fleet_apply_expire()). */
#define FLEET_REANNOUNCE_MIN_MS 250u
#define FLEET_REANNOUNCE_MAX_MS 30000u
#define FLEET_OWN_FORCE_SLOTS 1024u

/* The thread's body (pthread_create): runs until *stop. */
void *fleet_pub_main(void *arg);

#endif
