/*
 * fleet_link.h - breakerd's fleet link through Redis (docs/design/fleet.md "Fleet
 * link"): a publisher thread (fleet_pub.h) sends this host's decisions on
 * fleet-wide records, a subscriber thread (fleet_sub.h) applies the peers'
 * (fleet_apply.h); each thread has its own Redis connection and its own
 * attach of the segment. The link's status (fleet_report.h) is reported
 * in the segment header. Redis being down never stops breakerd nor its
 * scan loop: the threads reconnect with jittered backoff.
 */
#ifndef BREAKERD_FLEET_LINK_H
#define BREAKERD_FLEET_LINK_H

#include "fleet_conf.h"

struct fleet_link;

/* Start the link on the segment @c->shm_name (@c is copied). Call after
 * the signals are blocked (the threads inherit the mask). Returns the
 * link or NULL (out of memory, no thread, the segment cannot be
 * attached: logged). */
struct fleet_link *fleet_start(const struct fleet_conf *c);

/* Stop the threads (within about FLEET_STOP_MS + a Redis I/O timeout),
 * report state OFF, free. NULL: nothing. */
void fleet_stop(struct fleet_link *fl);

#endif
