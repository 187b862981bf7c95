/*
 * it_retire_handle.c - a handle kept across a retirement, across
 * processes (issue 10, scope 3).
 *
 * Process A takes a handle to "svc" (get-or-create, failure_threshold 9)
 * and makes a call. Process B retires "svc", moves its own clock past the
 * quarantine, creates "other" - which gets svc's old slot - and makes
 * exactly 3 calls on it. Then A calls through its old handle: it notices
 * (the head word's generation changed), re-resolves "svc" to a fresh
 * record created with its original settings, and never writes into
 * "other": other's counters are exactly B's 3 calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

struct page {
	int phase;
	/* A's view after its calls */
	int a_rc[4];
	char a_name[64];
	uint32_t a_index, a_threshold;
	uint64_t a_allowed, a_successes, a_failures;
	/* B's */
	int b_retire, b_other;
	uint32_t b_old_index, b_other_index;
};

static struct page *pg;
static const char *shm;

static void wait_phase(int want)
{
	while (__atomic_load_n(&pg->phase, __ATOMIC_ACQUIRE) < want)
		it_sleep_ms(2);
}

static void set_phase(int v)
{
	__atomic_store_n(&pg->phase, v, __ATOMIC_RELEASE);
}

static int a_main(int idx, void *arg)
{
	brk_segment *seg = it_attach(shm, 8);
	struct brk_config c;
	struct brk_info in;
	brk_breaker *b;
	brk_permit p;

	(void)idx;
	(void)arg;
	brk_config_init(&c);
	c.failure_threshold = 9;
	if (brk_breaker_get(seg, "svc", &c, &b) != 0)
		return 1;
	if (brk_acquire(b, &p, NULL) != 0 || brk_release(&p, BRK_SUCCESS, 0, 0) != 0)
		return 1;
	set_phase(1);
	wait_phase(2);
	/* through the old handle */
	pg->a_rc[0] = brk_acquire(b, &p, NULL);
	pg->a_rc[1] = brk_release(&p, BRK_SUCCESS, 0, 0);
	pg->a_rc[2] = brk_acquire(b, &p, NULL);
	pg->a_rc[3] = brk_release(&p, BRK_FAILURE, BRK_REASON_OTHER, 0);
	if (brk_breaker_info(b, &in) == 0) {
		memcpy(pg->a_name, in.name, sizeof pg->a_name);
		pg->a_index = in.index;
		pg->a_threshold = in.config.failure_threshold;
		pg->a_allowed = in.counters.allowed;
		pg->a_successes = in.counters.successes;
		pg->a_failures = in.counters.failures;
	}
	set_phase(3);
	brk_detach(seg);
	return 0;
}

/* B's clock: the system's, plus an offset B moves. */
static uint64_t b_offset_ns;
static uint64_t b_clock(void *ctx)
{
	(void)ctx;
	return brk_monotonic_ns(NULL) + __atomic_load_n(&b_offset_ns, __ATOMIC_ACQUIRE);
}

static int b_main(int idx, void *arg)
{
	struct brk_attach_opts o;
	brk_segment *seg = NULL;
	brk_breaker *f, *x;
	struct brk_info in;
	int k;

	(void)idx;
	(void)arg;
	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.flags = BRK_ATTACH_NOCREATE;
	o.clock = b_clock;
	if (brk_attach(&o, &seg) != 0)
		return 1;
	if (brk_breaker_find(seg, "svc", &f) != 0 || brk_breaker_info(f, &in) != 0)
		return 1;
	pg->b_old_index = in.index;
	pg->b_retire = brk_retire(seg, "svc", 0);
	__atomic_store_n(&b_offset_ns,
			 (BRK_RETIRE_QUARANTINE_MS + 1000ull) * 1000000ull,
			 __ATOMIC_RELEASE);
	pg->b_other = brk_breaker_get(seg, "other", NULL, &x);
	if (pg->b_other != 0 || brk_breaker_info(x, &in) != 0)
		return 1;
	pg->b_other_index = in.index;
	for (k = 0; k < 3; k++) {
		brk_permit p;
		if (brk_acquire(x, &p, NULL) != 0)
			return 1;
		brk_release(&p, k == 2 ? BRK_FAILURE : BRK_SUCCESS,
			    k == 2 ? BRK_REASON_OTHER : 0, 0);
	}
	brk_detach(seg);
	return 0;
}

int main(void)
{
	brk_segment *seg;
	brk_breaker *x, *s;
	struct brk_info in;
	pid_t a, b;
	int st;

	it_init("retire_handle", 60);
	shm = it_segment(NULL);
	pg = it_shared(sizeof *pg);
	seg = it_attach(shm, 8);
	a = it_fork(a_main, 0, NULL);
	wait_phase(1);
	b = it_fork(b_main, 1, NULL);
	CHECK(it_wait(b, 20000, &st) == 0 && st == 0, "B retired svc and used other");
	CHECK(pg->b_retire == 0, "B: brk_retire(svc) = %d", pg->b_retire);
	CHECK(pg->b_other_index == pg->b_old_index,
	      "other took svc's old slot (%u == %u) after the quarantine",
	      pg->b_other_index, pg->b_old_index);
	set_phase(2);
	CHECK(it_wait(a, 20000, &st) == 0 && st == 0, "A's calls through its old handle");
	CHECK(pg->a_rc[0] == 0 && pg->a_rc[1] == 0 && pg->a_rc[2] == 0 &&
	      pg->a_rc[3] == 0, "A: acquire/release through the old handle: %d %d %d %d",
	      pg->a_rc[0], pg->a_rc[1], pg->a_rc[2], pg->a_rc[3]);
	CHECK(strcmp(pg->a_name, "svc") == 0 && pg->a_index != pg->b_old_index,
	      "A's handle re-resolved to a fresh svc (slot %u, not %u)",
	      pg->a_index, pg->b_old_index);
	CHECK(pg->a_allowed == 2 && pg->a_successes == 1 && pg->a_failures == 1,
	      "the fresh svc counts only A's 2 calls since (allowed %llu)",
	      (unsigned long long)pg->a_allowed);
	CHECK(pg->a_threshold == 9, "re-created with A's original settings "
	      "(failure_threshold %u)", pg->a_threshold);
	memset(&in, 0, sizeof in);
	st = brk_breaker_find(seg, "other", &x);
	if (st == 0)
		st = brk_breaker_info(x, &in);
	CHECK(st == 0 && in.counters.allowed == 3 && in.counters.successes == 2 &&
	      in.counters.failures == 1 && strcmp(in.name, "other") == 0,
	      "other's counters are exactly B's 3 calls (allowed %llu, "
	      "successes %llu, failures %llu)",
	      (unsigned long long)in.counters.allowed,
	      (unsigned long long)in.counters.successes,
	      (unsigned long long)in.counters.failures);
	CHECK(brk_breaker_find(seg, "svc", &s) == 0 && brk_breaker_info(s, &in) == 0 &&
	      in.index == pg->a_index, "a third process finds the fresh svc");
	brk_detach(seg);
	return it_finish();
}
