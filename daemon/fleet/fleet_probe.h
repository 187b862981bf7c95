/*
 * fleet_probe.h - one probe for the whole fleet (breakers with fleet = 1
 * and fleet_probe = 1): breakerd's election thread (fleet_probe.c).
 *
 * The thread tails the segment's event ring (its own cursor, like
 * follow.c) for opens of fleet_probe breakers, whatever their origin
 * (this host's or a peer's applied by the link), and keeps their
 * open-until in a bounded table. FLEET_PROBE_LEAD_MS before a cooling
 * period ends it runs, on its own Redis connection,
 *   SET <channel>:probe:<name> <host-id> NX PX <remaining + verdict wait>
 * (the prefix <channel>: of every key the link writes: one ACL key
 * pattern, docs/guide/fleet.md "Redis AUTH and the network").
 * OK (or the key already names this host): this host's workers probe as
 * usual when the cooling ends. nil: GET the holder, then
 * brk_set_origin(holder) and brk_trip_extend(remaining + verdict wait +
 * 2 x FLEET_PROBE_LEAD_MS):
 * this host's workers stay open until the winner's verdict arrives through
 * the link ("close" or "open"); without a verdict by then its own cooling
 * ends and it probes itself. A Redis error: no election this period (each
 * host probes on its own: local protection), reconnect with jitter.
 * docs/design/fleet.md "Fleet link" / "One probe for the fleet".
 */
#ifndef BREAKERD_FLEET_PROBE_H
#define BREAKERD_FLEET_PROBE_H

#include <stdint.h>

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
/* The shortest verdict wait (ms): a winner's first call after its
 * cooling ends may take a moment to come. */
#define FLEET_PROBE_WAIT_MIN_MS 1000u

/*
 * fleet_probe_verdict_wait_ms - how long past the end of its cooling
 * period a loser waits for the winner's verdict (ms), and how long past
 * it the winner's key lives:
 *   min(probe_timeout_ms, max(period_ms, FLEET_PROBE_WAIT_MIN_MS))
 * where period_ms is the cooling period just ending. probe_timeout_ms
 * bounds a probe, so a verdict never comes later than that; but a winner
 * whose workers make no call (idle, or gone) never probes at all, and
 * holding every other host open for probe_timeout_ms (30 s by default,
 * far longer than a cooling period of seconds) for that would cost the
 * fleet more than the probe saves. So a loser is held at most about one
 * more cooling period (at least 1 s, for the winner's first call to
 * come); then the key is gone and the next election picks a host that
 * probes. A probe slower than the wait may meet a second one from the
 * next winner: one extra probe, never one per host. A loser's hold is
 * remaining + the wait + 2 x FLEET_PROBE_LEAD_MS.
 */
static inline uint64_t fleet_probe_verdict_wait_ms(uint64_t probe_timeout_ms,
						   uint64_t period_ms)
{
	uint64_t w = period_ms > FLEET_PROBE_WAIT_MIN_MS ? period_ms
							 : FLEET_PROBE_WAIT_MIN_MS;

	return probe_timeout_ms < w ? probe_timeout_ms : w;
}

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
