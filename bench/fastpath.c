/*
 * fastpath.c - `breakerd-bench --callgrind-op N`: one process, no
 * baselines, no workers. Attach (creating a private segment), get one
 * breaker, do BENCH_FAST_WARMUP acquire+release pairs, then N more, then
 * unlink. Everything but the N pairs is the same for every N, so
 * bench/callgrind.sh runs it under callgrind with two values of N and
 * divides the difference in instructions by the difference in N, and
 * runs it under `strace -c -f` with N = 1e5 and 1e6 to show that the
 * syscall count does not grow with N. With BENCH_HOLD_HISTOGRAM=1 in
 * the environment the breaker has hold_histogram on (the cost of the
 * permit hold-time histogram); otherwise the defaults.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breaker.h"
#include "bench.h"

#define BENCH_FAST_WARMUP 1000u

static int pairs(brk_breaker *b, uint64_t n)
{
	brk_permit p;
	uint64_t i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		if (brk_acquire(b, &p, NULL) != 0) {
			bad++;
			continue;
		}
		if (brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0) != 0)
			bad++;
	}
	return bad;
}

/** bench_fastpath - see above. Returns 0, or 1 if any op failed. */
int bench_fastpath(const char *shm_name, uint64_t ops)
{
	struct brk_attach_opts o;
	struct brk_config c;
	const char *hold = getenv("BENCH_HOLD_HISTOGRAM");
	const char *mc = getenv("BENCH_MAX_CONCURRENT"); /* a bulkhead of N */
	/* 1: max_concurrent auto (the learned limit, adaptive.c) */
	const char *ac = getenv("BENCH_CONCURRENCY_AUTO");
	brk_segment *seg;
	brk_breaker *b;
	int rc, bad;

	brk_attach_opts_init(&o);
	o.shm_name = shm_name;
	o.capacity = 16;
	rc = brk_attach(&o, &seg);
	if (rc) {
		fprintf(stderr, "breakerd-bench: attach %s: %s\n", shm_name,
			brk_strerror(rc));
		return 1;
	}
	brk_config_init(&c);
	c.hold_histogram = hold && strcmp(hold, "1") == 0;
	c.max_concurrent = mc ? (uint32_t)strtoul(mc, NULL, 10) : 0;
	c.concurrency_auto = ac && strcmp(ac, "1") == 0;
	rc = brk_breaker_get(seg, "bench/fast", &c, &b);
	if (rc) {
		fprintf(stderr, "breakerd-bench: breaker: %s\n", brk_strerror(rc));
		brk_detach(seg);
		brk_segment_unlink(shm_name);
		return 1;
	}
	bad = pairs(b, BENCH_FAST_WARMUP);
	bad += pairs(b, ops);
	brk_detach(seg);
	brk_segment_unlink(shm_name);
	printf("fastpath: %llu acquire+release after %u warm-up, %d failed%s%s\n",
	       (unsigned long long)ops, BENCH_FAST_WARMUP, bad,
	       c.hold_histogram ? " (hold_histogram on)" : "",
	       c.concurrency_auto ? " (learned bulkhead)" :
	       c.max_concurrent ? " (bulkhead)" : "");
	return bad ? 1 : 0;
}
