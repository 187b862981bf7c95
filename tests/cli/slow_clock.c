/*
 * slow_clock.c - an LD_PRELOAD shim for tests/cli/bctl_config_concurrent.sh
 * (never linked into a product): every clock_gettime() sleeps for 0 ..
 * $BRKTEST_SLOW_CLOCK_US microseconds after reading the clock.
 *
 * Why: a bctl command reads a record, then writes it, microseconds apart;
 * two commands started at once by a shell start a millisecond or so apart,
 * so a lost update between them is real but rare. Reading a snapshot
 * reads the clock (brk_breaker_info(), brk_bucket_info() and
 * brk_budget_info() do, after the settings), so this stretches exactly
 * the read-to-write gap and makes the two commands interleave, as they
 * would on a loaded host.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static clock_gettime_fn real;
	static long max_us = -1;
	int rc;

	if (!real)
		real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	if (!real)
		abort();
	rc = real(id, ts);
	if (max_us < 0) {
		const char *e = getenv("BRKTEST_SLOW_CLOCK_US");
		max_us = e ? atol(e) : 0;
	}
	if (rc == 0 && max_us > 0)
		usleep((useconds_t)(((unsigned long)ts->tv_nsec ^
				     ((unsigned long)getpid() << 7)) %
				    (unsigned long)(max_us + 1)));
	return rc;
}
