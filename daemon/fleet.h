/*
 * fleet.h - breakerd's fleet link through Redis (docs/design.md "Fleet
 * link"): a publisher thread (fleet_pub.h) sends this host's decisions on
 * fleet-wide records, a subscriber thread (fleet_sub.h) applies the peers'
 * (fleet_apply.h); each thread has its own Redis connection and its own
 * attach of the segment. The link's status (fleet_status.h) is reported
 * in the segment header. Redis being down never stops breakerd nor its
 * scan loop: the threads reconnect with jittered backoff.
 */
#ifndef BREAKERD_FLEET_H
#define BREAKERD_FLEET_H

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

/* The fleet probe (fleet_probe.h) won (@won 1) or lost (0) an election:
 * counted in the link's status (probe_won / probe_lost). Thread-safe. */
void fleet_status_probe(int won);

/*
 * The publisher's poll step: how often it looks at the event ring (the
 * ring has no wake-up: a worker's decision is a store in shared memory).
 * A decision reaches the peers FLEET_POLL_MS / 2 later on average, at
 * most FLEET_POLL_MS, plus Redis and the subscriber (well under 1 ms on
 * loopback). Measured on the 2-vCPU guest (release build, loopback Redis,
 * bench/fleet.sh --parts 1 --trips 200 at a random phase; idle: utime +
 * stime of breakerd --fleet over 20 s, connected, no events):
 *   step   trip -> refused p50 / p99 (4 hosts)   idle CPU (of a core)
 *   20 ms   8.5 / 22.8 ms                         0.50 %
 *    5 ms   3.1 /  7.6 ms                         0.90 %
 *    2 ms   1.6 /  5.8 ms                         1.25 %
 *    1 ms   1.1 /  1.9 ms                         2.20 %
 * 5 ms: a quarter of the latency for +0.4 % of a core; below it the
 * idle cost doubles at each step for a gain of 1-2 ms (less than a
 * loaded host's scheduling delay). The publisher's share is about 20 us
 * a poll; the fleet probe's 10 ms tick (0.25 %) is not on the
 * propagation path (its election runs FLEET_PROBE_LEAD_MS early).
 */
#define FLEET_POLL_MS 5u

/* How often the link's waits (the reconnect backoff, the subscriber's
 * poll() for data, which returns as soon as a message comes) look at
 * their stop flag: bounds fleet_stop(), not the propagation. */
#define FLEET_STOP_MS 20u

#endif
