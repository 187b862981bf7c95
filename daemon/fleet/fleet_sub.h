/*
 * fleet_sub.h - the fleet link's subscriber thread: SUBSCRIBE <channel>
 * on its own connection; after each (re)subscribe it reads the catch-up
 * keys (SCAN MATCH <channel>:state:* and GET, on a short second
 * connection) and applies them, then applies each message as it comes
 * (fleet_apply.h). It waits for data with poll(), which wakes as a
 * message comes; the timeout (5 x FLEET_STOP_MS) is only for the stop flag.
 */
#ifndef BREAKERD_FLEET_SUB_H
#define BREAKERD_FLEET_SUB_H

#include <stdatomic.h>

#include "fleet_conf.h"

#define FLEET_SCAN_MAX_KEYS 100000u /* a catch-up reads at most this many */
/* The catch-up keys are read again this often while subscribed, so a
 * record created or declared fleet = on after a peer's decision gets it
 * within this period; only keys new, changed or refused before are
 * applied, and a key older than a local reset is stale (fleet_apply.c).
 * 5 s: within the reconnect backoff's ceiling (FLEET_BACKOFF_MAX_MS), and
 * one short connection + SCAN per host per 5 s costs Redis little. */
#define FLEET_CATCHUP_MS 5000u

struct fleet_sub {
	const struct fleet_conf *c;
	brk_segment *seg;          /* the thread's own attach */
	atomic_int *stop;
};

/* The thread's body (pthread_create): runs until *stop. */
void *fleet_sub_main(void *arg);

#endif
