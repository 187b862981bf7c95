/*
 * fleet_wait.c - interruptible sleeps and the reconnect backoff.
 */
#include "fleet_wait.h"
#include "fleet_conf.h" /* FLEET_BACKOFF_MIN_MS, FLEET_BACKOFF_MAX_MS */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "breaker.h"
#include "logfmt.h"

int fleet_sleep(atomic_int *stop, uint64_t ms)
{
	struct timespec ts;
	uint64_t step;

	while (!atomic_load(stop)) {
		if (ms == 0)
			return 0;
		step = ms < FLEET_STOP_MS ? ms : FLEET_STOP_MS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(step * 1000000u);
		nanosleep(&ts, NULL);
		ms -= step;
	}
	return 1;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t fleet_backoff(uint32_t attempt, const char *who, const char *err)
{
	/* per thread: the publisher and the subscriber each call it */
	static _Thread_local uint64_t last_log_ms, left_out;
	static _Thread_local char last_err[256];
	struct logline l;
	uint64_t ms, now = mono_ms();
	uint32_t a = attempt > 16 ? 16 : attempt;

	ms = brk_backoff_ms(BRK_JITTER_EQUAL, FLEET_BACKOFF_MIN_MS,
			    FLEET_BACKOFF_MAX_MS, a, 0, NULL, NULL);
	if (ms < FLEET_BACKOFF_MIN_MS) /* equal jitter's first draws: 50-100 */
		ms = FLEET_BACKOFF_MIN_MS;
	if (attempt != 0 && now - last_log_ms < FLEET_RECONNECT_LOG_MS &&
	    strncmp(err ? err : "", last_err, sizeof(last_err) - 1) == 0) {
		left_out++;
		return ms;
	}
	last_log_ms = now;
	snprintf(last_err, sizeof(last_err), "%s", err ? err : "");
	ll_begin(&l, "warn", "fleet link");
	ll_str(&l, "fleet", "reconnect");
	ll_str(&l, "conn", who);
	ll_u64(&l, "attempt", (uint64_t)attempt + 1);
	ll_u64(&l, "in_ms", ms);
	if (attempt != 0 && left_out)
		ll_u64(&l, "suppressed", left_out);
	if (err)
		ll_str(&l, "err", err);
	ll_end(&l);
	left_out = 0;
	return ms;
}
