/*
 * fleet_wait.h - the fleet link threads' waits: a sleep that ends early
 * when the stop flag is set, and the jittered reconnect backoff.
 */
#ifndef BREAKERD_FLEET_WAIT_H
#define BREAKERD_FLEET_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

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

/* Sleep @ms (in FLEET_STOP_MS steps). Returns 1 if *@stop was set. */
int fleet_sleep(atomic_int *stop, uint64_t ms);

/* A failed (re)connect is logged at warn on the first attempt of an
 * outage and when the error changes (a lost connection, then WRONGPASS),
 * else at most once every FLEET_RECONNECT_LOG_MS per thread, the
 * line carrying suppressed=N (the attempts left out since the last one):
 * an outage of hours does not flood the log. */
#define FLEET_RECONNECT_LOG_MS 60000u

/* The wait before reconnect attempt @attempt (0, 1, ...): brk_backoff_ms
 * equal jitter, base FLEET_BACKOFF_MIN_MS, capped at FLEET_BACKOFF_MAX_MS,
 * never below FLEET_BACKOFF_MIN_MS; logs (rate-limited, above; warn)
 * fleet=reconnect attempt= in_ms= [suppressed=] with @who and @err.
 * Thread-safe (the limiter is per thread). */
uint64_t fleet_backoff(uint32_t attempt, const char *who, const char *err);

#endif
