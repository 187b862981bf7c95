/*
 * fleet_wait.c - interruptible sleeps and the reconnect backoff.
 */
#include "fleet_wait.h"
#include "fleet_conf.h" /* FLEET_BACKOFF_MIN_MS, FLEET_BACKOFF_MAX_MS */

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

uint64_t fleet_backoff(uint32_t attempt, const char *who, const char *err)
{
	struct logline l;
	uint64_t ms;

	if (attempt > 16)
		attempt = 16;
	ms = brk_backoff_ms(BRK_JITTER_EQUAL, FLEET_BACKOFF_MIN_MS,
			    FLEET_BACKOFF_MAX_MS, attempt, 0, NULL, NULL);
	if (ms < FLEET_BACKOFF_MIN_MS) /* equal jitter's first draws: 50-100 */
		ms = FLEET_BACKOFF_MIN_MS;
	ll_begin(&l, "info", "fleet link");
	ll_str(&l, "fleet", "reconnect");
	ll_str(&l, "conn", who);
	ll_u64(&l, "in_ms", ms);
	if (err)
		ll_str(&l, "err", err);
	ll_end(&l);
	return ms;
}
