/*
 * fleet_probe.h - one probe for the whole fleet (breakers with fleet = 1
 * and fleet_probe = 1): breakerd's election thread (fleet_probe.c).
 *
 * The thread tails the segment's event ring (its own cursor, like
 * follow.c) for opens of fleet_probe breakers, whatever their origin
 * (this host's or a peer's applied by the link), and keeps their
 * open-until in a bounded table. FLEET_PROBE_LEAD_MS before a cooling
 * period ends it runs, on its own Redis connection,
 *   SET <channel>:probe:<name> <host-id> NX PX <remaining + probe_timeout_ms>
 * (the prefix <channel>: of every key the link writes: one ACL key
 * pattern, README "Across hosts: the fleet link").
 * OK (or the key already names this host): this host's workers probe as
 * usual when the cooling ends. nil: GET the holder, then
 * brk_set_origin(holder) and brk_trip_extend(remaining + probe_timeout_ms):
 * this host's workers stay open until the winner's verdict arrives through
 * the link ("close" or "open"); without a verdict by then its own cooling
 * ends and it probes itself. A Redis error: no election this period (each
 * host probes on its own: local protection), reconnect with jitter.
 * docs/design.md "Fleet link" / "One probe for the fleet".
 */
#ifndef BREAKERD_FLEET_PROBE_H
#define BREAKERD_FLEET_PROBE_H

#include "fleet_conf.h"

/*
 * How long before a cooling period ends the election runs (ms).
 * It must exceed the time a loser needs to hold its breaker open before
 * its own workers can move it to half_open: the thread's tick
 * (FLEET_PROBE_TICK_MS), the SET NX and GET round trips (under 1 ms on
 * loopback, a few ms across a data centre, FLEET_IO_TIMEOUT_MS at worst,
 * when the election is void anyway) and the scheduling delay of a loaded
 * host (tens of ms on a busy 2-core machine) - so 200 ms, with room.
 * It must stay below the shortest cooling period in use, or the election
 * runs at the open itself (a breaker with open_ms <= 200 elects at once:
 * still one prober, held from the start). Cooling periods are seconds in
 * practice (BRK_DEFAULT_OPEN_MS 60 s).
 */
#define FLEET_PROBE_LEAD_MS 200u
/* The thread's period: how often it drains events and checks deadlines. */
#define FLEET_PROBE_TICK_MS 10u
/* Fleet probe breakers tracked at once (open or half-open); the closed
 * ones are evicted, and when full an open of a new one is logged and not
 * elected (its host probes on its own). */
#define FLEET_PROBE_MAX 256u

/*
 * fleet_probe_start - start the election thread for segment @shm_name
 * with the link settings @c (copied). The thread attaches the segment
 * itself and opens its own Redis connection (fleet_connect()); an
 * unreachable Redis is not an error here (retried with jitter).
 * Returns 0, -EALREADY (running), -ENOMEM, or a pthread_create error.
 * Not thread-safe against fleet_probe_stop() (call both from main).
 */
int fleet_probe_start(const struct fleet_conf *c, const char *shm_name);

/* fleet_probe_stop - stop and join the thread (within one tick plus at
 * most one Redis timeout); detaches and frees everything. No-op when not
 * running. */
void fleet_probe_stop(void);

#endif
