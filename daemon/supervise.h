/*
 * supervise.h - breakerd's main loop.
 *
 * Every interval: brk_reclaim() (free the leases of dead owners and
 * expired probes), brk_heartbeat(), a slice of the retirement sweep if
 * asked (--retire-idle), the health of each --health NAME, then log the events any process recorded (one
 * line per retirement among them). SIGHUP sends RELOADING=1 (notify.h),
 * calls the reload function
 * (supervise_set_reload()), then READY=1 again. SIGTERM and SIGINT end the loop cleanly; they are blocked
 * except while the loop sleeps (ppoll with the unblocked mask), so a
 * signal is never lost between the check of the flag and the sleep.
 */
#ifndef BREAKERD_SUPERVISE_H
#define BREAKERD_SUPERVISE_H

#include <stddef.h>
#include <stdint.h>

#include "breaker.h"

/*
 * supervise_signals_init - install the SIGTERM/SIGINT handlers and block
 * both signals (they are delivered only inside the loop's sleep). Call
 * before attaching, so a signal during start-up is not lost either.
 * Returns 0 or -errno.
 */
int supervise_signals_init(void);

/*
 * supervise_set_reload - call @fn(@arg) from the loop (before its next
 * scan) after each SIGHUP; SIGHUP is blocked like SIGTERM and wakes the
 * sleep. NULL: a SIGHUP does nothing.
 */
void supervise_set_reload(void (*fn)(void *arg), void *arg);

/*
 * supervise_watch - keep a descriptor of @seg's shm object, so that each
 * scan first checks (fstat) that it is still as long as its header says.
 * A truncation that leaves the pages breakerd touches kills no one with
 * SIGBUS; without this check breakerd would go on heartbeating a segment
 * every other process refuses (issue 22's break-it pass). Nothing is
 * watched if the object cannot be opened read-only.
 */
void supervise_watch(brk_segment *seg);

/*
 * supervise_run - run until SIGTERM or SIGINT.
 * @seg:         the attached, writable segment.
 * @interval_ms: scan interval (>= 1).
 * @retire_idle_ms: 0, or retire records idle this long: each scan sweeps
 *               a slice of the name index (brk_retire_idle()) so that
 *               every record is visited at least every retire_idle_ms / 4.
 * @health:      names whose health (brk_health()) each scan evaluates, so
 *               their transitions are recorded (one event each) even if
 *               nobody asks; @n_health of them (0: none).
 * After the first scan it sends READY=1 (notify.h); with a watchdog
 * ($WATCHDOG_USEC) it sends WATCHDOG=1 from the loop every half of it,
 * waking from its sleep for that if the interval is longer. Call
 * notify_init() first.
 * Returns the number of the signal that stopped the loop, or
 * -BRK_ETRUNCATED (logged at warn level) when the segment watched
 * (supervise_watch()) became shorter than its header says.
 */
int supervise_run(brk_segment *seg, uint64_t interval_ms, uint64_t retire_idle_ms,
		  const char *const *health, size_t n_health);

#endif /* BREAKERD_SUPERVISE_H */
