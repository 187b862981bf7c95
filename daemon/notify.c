/*
 * notify.c - sd_notify() for breakerd (see notify.h). Errors of
 * sd_notify() are logged once each and never stop the daemon: systemd
 * decides what a missing notification means (a start timeout, a
 * watchdog restart).
 */
#include "notify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "logfmt.h"

#ifdef BREAKERD_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>

static uint64_t watchdog_half_ns;
static int last_error;

static void send_state(const char *what, const char *state)
{
	struct logline l;
	int rc = sd_notify(0, state);

	if (rc < 0 && rc != last_error) {
		ll_begin(&l, "warn", "sd_notify failed");
		ll_str(&l, "message", what);
		ll_str(&l, "error", strerror(-rc));
		ll_end(&l);
	}
	last_error = rc < 0 ? rc : 0;
}

void notify_init(void)
{
	struct logline l;
	uint64_t usec = 0;
	int rc = sd_watchdog_enabled(0, &usec);

	if (rc < 0) {
		ll_begin(&l, "warn", "ignoring a malformed $WATCHDOG_USEC or $WATCHDOG_PID");
		ll_str(&l, "error", strerror(-rc));
		ll_end(&l);
		return;
	}
	if (rc > 0 && usec > 0) {
		watchdog_half_ns = usec / 2 * 1000u;
		if (watchdog_half_ns == 0)
			watchdog_half_ns = 1000u;
	}
}

uint64_t notify_watchdog_interval_ns(void)
{
	return watchdog_half_ns;
}

void notify_ready(const char *shm)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "READY=1\nSTATUS=supervising %s", shm);
	send_state("READY=1", buf);
}

void notify_reloading(void)
{
	struct timespec ts;
	char buf[96];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(buf, sizeof(buf), "RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ull +
			 (unsigned long long)ts.tv_nsec / 1000u);
	send_state("RELOADING=1", buf);
}

void notify_watchdog(void)
{
	send_state("WATCHDOG=1", "WATCHDOG=1");
}

void notify_stopping(void)
{
	send_state("STOPPING=1", "STOPPING=1\nSTATUS=stopping");
}

#else /* built without libsystemd: breakerd never notifies */

void notify_init(void)
{
	struct logline l;

	if (getenv("NOTIFY_SOCKET")) {
		ll_begin(&l, "warn", "$NOTIFY_SOCKET is set but breakerd was "
			 "built without libsystemd: it sends no READY=1 "
			 "(use Type=simple, or rebuild with libsystemd-dev)");
		ll_end(&l);
	}
}

uint64_t notify_watchdog_interval_ns(void)
{
	return 0;
}

void notify_ready(const char *shm)
{
	(void)shm;
}

void notify_reloading(void)
{
}

void notify_watchdog(void)
{
}

void notify_stopping(void)
{
}
#endif
