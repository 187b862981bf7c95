/*
 * notify.h - breakerd's side of systemd's service notification protocol
 * (sd_notify(3), sd_watchdog_enabled(3) of libsystemd), for a unit with
 * Type=notify and, optionally, WatchdogSec=.
 *
 * Built with libsystemd (meson option 'systemd', Debian's libsystemd-dev)
 * these send datagrams to $NOTIFY_SOCKET; without it breakerd builds and
 * never notifies, and notify_init() logs a warning if it was started with
 * $NOTIFY_SOCKET set (a Type=notify unit would time out waiting for it).
 * Without $NOTIFY_SOCKET (not started by systemd) every call does nothing.
 * Single-threaded use only (breakerd's main loop).
 */
#ifndef BREAKERD_NOTIFY_H
#define BREAKERD_NOTIFY_H

#include <stdint.h>

/*
 * notify_init - read $WATCHDOG_USEC/$WATCHDOG_PID (sd_watchdog_enabled())
 * once, before the loop. Logs a warning if they are malformed (then no
 * watchdog) or if breakerd cannot notify at all.
 */
void notify_init(void);

/* notify_watchdog_interval_ns - how often the loop must send WATCHDOG=1:
 * half of $WATCHDOG_USEC in ns, or 0 when no watchdog is asked for. */
uint64_t notify_watchdog_interval_ns(void);

/* notify_ready - READY=1 and a STATUS= line naming @shm. Call once the
 * segment is attached and the first scan is done. */
void notify_ready(const char *shm);

/* notify_reloading - RELOADING=1 with MONOTONIC_USEC= (CLOCK_MONOTONIC
 * now, in µs), as sd_notify(3) asks of a reload (Type=notify-reload and
 * Type=notify alike); on SIGHUP, before the breakers file is read again.
 * notify_ready() follows once the reload is done. */
void notify_reloading(void);

/* notify_watchdog - WATCHDOG=1 (the loop is alive). */
void notify_watchdog(void);

/* notify_stopping - STOPPING=1, on SIGTERM/SIGINT, before cleanup. */
void notify_stopping(void);

#endif /* BREAKERD_NOTIFY_H */
