/*
 * fleet_wait.h - the fleet link threads' waits: a sleep that ends early
 * when the stop flag is set, and the jittered reconnect backoff.
 */
#ifndef BREAKERD_FLEET_WAIT_H
#define BREAKERD_FLEET_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

/* Sleep @ms (in FLEET_STOP_MS steps). Returns 1 if *@stop was set. */
int fleet_sleep(atomic_int *stop, uint64_t ms);

/* The wait before reconnect attempt @attempt (0, 1, ...): brk_backoff_ms
 * equal jitter, base FLEET_BACKOFF_MIN_MS, capped at FLEET_BACKOFF_MAX_MS,
 * never below FLEET_BACKOFF_MIN_MS;
 * logs fleet=reconnect in_ms=... with @who and @err. */
uint64_t fleet_backoff(uint32_t attempt, const char *who, const char *err);

#endif
