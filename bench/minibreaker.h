/*
 * minibreaker.h - a fair minimal circuit breaker behind a mutex, the
 * logic both mutex baselines share (baselines_mutex.c).
 *
 * It does what sony/gobreaker's beforeRequest/afterRequest do, under one
 * lock each: read the clock (for the open-until and cool-until deadlines),
 * check the state, count the call; on release, read the clock, check the
 * generation, count the outcome and reset the consecutive failures. No
 * bulkhead, no events, no leases: the least a breaker must do, so the
 * comparison flatters the baseline rather than breakerd.
 *
 * The mutex is whatever the caller initialised: a default in-process
 * mutex, or a PTHREAD_PROCESS_SHARED robust one in shm. A robust mutex
 * whose holder died returns EOWNERDEAD: the state it protects may be half
 * updated; we mark it consistent and go on (that is all a robust mutex
 * offers: it tells you, it does not repair).
 */
#ifndef BENCH_MINIBREAKER_H
#define BENCH_MINIBREAKER_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

enum { MB_CLOSED, MB_OPEN, MB_HALF_OPEN };

struct minibreaker {
	pthread_mutex_t mu;
	int state;
	uint32_t gen;
	uint64_t open_until_ns, cool_until_ns;
	uint64_t consecutive_failures, threshold, open_ns;
	uint64_t allowed, rejected, successes, failures, stale;
} __attribute__((aligned(128)));

static inline uint64_t mb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void mb_lock(struct minibreaker *b)
{
	if (pthread_mutex_lock(&b->mu) == EOWNERDEAD)
		pthread_mutex_consistent(&b->mu);
}

static inline void mb_init_state(struct minibreaker *b)
{
	b->state = MB_CLOSED;
	b->threshold = 5;
	b->open_ns = 60000000000ull;
}

/* 0 (admitted, *gen set) or -1 (refused). */
static inline int mb_acquire(struct minibreaker *b, uint32_t *gen)
{
	uint64_t now;
	int rc = 0;

	mb_lock(b);
	now = mb_now();
	if (b->state == MB_OPEN && now >= b->open_until_ns) {
		b->state = MB_HALF_OPEN;
		b->gen++;
	}
	if (b->state == MB_OPEN || b->cool_until_ns > now) {
		b->rejected++;
		rc = -1;
	} else {
		b->allowed++;
		*gen = b->gen;
	}
	pthread_mutex_unlock(&b->mu);
	return rc;
}

/* 0 (counted) or -1 (stale). */
static inline int mb_release(struct minibreaker *b, uint32_t gen, int ok)
{
	uint64_t now;
	int rc = 0;

	mb_lock(b);
	now = mb_now();
	if (gen != b->gen) {
		b->stale++;
		rc = -1;
	} else if (ok) {
		b->successes++;
		b->consecutive_failures = 0;
		if (b->state == MB_HALF_OPEN) {
			b->state = MB_CLOSED;
			b->gen++;
		}
	} else {
		b->failures++;
		if (b->state == MB_HALF_OPEN ||
		    ++b->consecutive_failures >= b->threshold) {
			b->state = MB_OPEN;
			b->open_until_ns = now + b->open_ns;
			b->gen++;
		}
	}
	pthread_mutex_unlock(&b->mu);
	return rc;
}

#endif /* BENCH_MINIBREAKER_H */
