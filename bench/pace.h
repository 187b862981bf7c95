/*
 * pace.h - the pacing benchmark (issue 11): worker processes that call a
 * rate-limited nginx (bench/pace.sh starts it) under one strategy at a
 * time. pace_bench.c runs the strategies and prints the table; pace_strat.c is
 * what each worker does before and after a request.
 */
#ifndef BENCH_PACE_H
#define BENCH_PACE_H

#include <stdint.h>

#include "breaker.h"

#define PACE_MAX_WORKERS 64
#define PACE_MAX_WAITS 200000u /* per worker; later waits are not kept */

enum pace_strategy {
	PACE_NONE = 0,        /* send again at once */
	PACE_RETRY_AFTER,     /* each process sleeps its 429's Retry-After */
	PACE_AIMD,            /* each process its own pace (no sharing) */
	PACE_COOLING,         /* shared breaker: 429 -> rate_limited failure
	                         with Retry-After -> shared cool-until */
	PACE_SHARED,          /* shared pace (learned rate): take, sleep to the
	                         jittered wake time, take again */
	PACE_FAIR,            /* the same pace, fair waits: reserve the next
	                         slot, sleep to it, check (breaker.h "Fair
	                         waits") */
	PACE_NSTRATEGIES
};

struct pace_params {
	const char *url;      /* base URL ending in '/'; strategy i uses zN/ */
	double rate;          /* nginx's limit_req rate, r/s */
	uint32_t burst;       /* nginx's burst */
	uint32_t workers;
	uint32_t seconds;     /* per strategy */
	double ceiling;       /* pace ceiling, r/s */
	const char *shm;      /* the shared segment's name */
};

/* What one worker saw (in the parent's shared page). */
struct pace_slot {
	uint64_t sent, ok, limited, other;
	uint32_t nwaits;
	int32_t rc;
	uint32_t wait_us[PACE_MAX_WAITS]; /* added wait before each send */
};

/* What a strategy needs around one request. */
struct pace_ctx {
	const struct pace_params *p;
	int strategy;
	int worker;
	brk_segment *seg;     /* shared segment (cooling, shared pace) */
	brk_segment *own;     /* private segment (per-process pace) */
	brk_breaker *b;
	brk_bucket *k;
	brk_permit permit;
	uint64_t taken_at_ns;
	uint64_t sleep_until_ns; /* retry_after: no send before this */
};

const char *pace_strategy_name(int s);
uint64_t pace_now_ns(void);
void pace_sleep_until(uint64_t abs_ns);

int pace_before(struct pace_ctx *c, uint64_t end_ns);
/* Before a send: 0 to send now, 1 if the wait would pass @end_ns (the
 * worker stops), or a negative code. */
/* After the answer: its classification (brk_http_classify()). */
void pace_after(struct pace_ctx *c, const struct brk_result *res);
int pace_ctx_open(struct pace_ctx *c);
void pace_ctx_close(struct pace_ctx *c);

#endif /* BENCH_PACE_H */
