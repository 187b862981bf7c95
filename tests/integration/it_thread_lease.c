/*
 * it_thread_lease.c - a thread that exits holding a permit (issue 9: the
 * README said permits do not leak when a thread dies; in a live process
 * they did, and by default still do, by design).
 *
 *  1. a permit bound to its thread (brk_permit_bind_thread()) whose thread
 *     exits is reclaimed by brk_reclaim() (breakerd's scan), and its late
 *     release is -BRK_ESTALE;
 *  2. a permit handed over to another thread (not bound) is NOT reclaimed
 *     when the acquiring thread exits, and the new holder's release counts;
 *  3. bound, then unbound before the handover: not reclaimed either;
 *  4. a bound permit of a live thread is kept, and another thread may
 *     release it;
 *  5. without breakerd: a caller refused by the full bulkhead reclaims the
 *     bound permit of an exited thread itself, and is admitted.
 *
 * Real threads and real time: the kernel removes an exited thread from
 * /proc a moment after pthread_join() returns, so reclaim is polled for
 * up to 5 s (it normally succeeds at once).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "proc.h"

struct job {
	brk_breaker *b;
	int bind, unbind;
	int rc_acquire, rc_bind, rc_unbind;
	brk_permit p; /* handed to the main thread */
};

static void *holder(void *arg)
{
	struct job *j = arg;

	j->rc_acquire = brk_acquire(j->b, &j->p, NULL);
	if (j->rc_acquire == 0 && j->bind)
		j->rc_bind = brk_permit_bind_thread(&j->p);
	if (j->rc_acquire == 0 && j->unbind)
		j->rc_unbind = brk_permit_unbind_thread(&j->p);
	return NULL; /* exits holding the permit */
}

static void run_holder(struct job *j, brk_breaker *b, int bind, int unbind)
{
	pthread_t t;

	memset(j, 0, sizeof(*j));
	j->b = b;
	j->bind = bind;
	j->unbind = unbind;
	if (pthread_create(&t, NULL, holder, j) != 0 || pthread_join(t, NULL) != 0) {
		CHECK(0, "pthread_create/join");
		return;
	}
	CHECK(j->rc_acquire == 0, "the thread acquired a permit (%d)", j->rc_acquire);
	CHECK(j->rc_bind == 0 && j->rc_unbind == 0, "bind %d, unbind %d",
	      j->rc_bind, j->rc_unbind);
}

static uint32_t in_flight(brk_breaker *b)
{
	struct brk_info in;

	it_info(b, &in);
	return in.in_flight;
}

/* brk_reclaim() until it frees something or @ms pass; the total freed. */
static uint32_t reclaim_for(brk_segment *seg, unsigned ms)
{
	uint64_t end = it_now_ms() + ms;
	uint32_t freed = 0;

	do {
		struct brk_reclaim_stats st;

		if (brk_reclaim(seg, &st) != 0)
			return freed;
		freed += st.dead_owner;
		if (freed)
			return freed;
		it_sleep_ms(20);
	} while (it_now_ms() < end);
	return freed;
}

static void *releaser(void *arg)
{
	brk_permit *p = arg;

	return (void *)(intptr_t)brk_release(p, BRK_SUCCESS, BRK_REASON_NONE, 0);
}

int main(void)
{
	struct brk_config cfg;
	brk_segment *seg;
	brk_breaker *b, *one;
	struct job j;
	brk_permit mine;
	pthread_t t;
	void *ret;
	int rc = -1;

	it_init("it_thread_lease", 60);
	seg = it_attach(it_segment(NULL), 16);
	brk_config_init(&cfg);
	cfg.max_concurrent = 4;
	if (brk_breaker_get(seg, "thr/api", &cfg, &b) != 0)
		return CHECK(0, "breaker"), brk_detach(seg), it_finish();

	/* 1 */
	run_holder(&j, b, 1, 0);
	CHECK(in_flight(b) == 1, "bound: held while the thread's exit settles");
	CHECK(reclaim_for(seg, 5000) == 1,
	      "bound_permit_of_exited_thread_is_reclaimed");
	CHECK(in_flight(b) == 0, "bound: the bulkhead slot is free again");
	rc = brk_release(&j.p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	CHECK(rc == -BRK_ESTALE, "bound: its late release is stale (%d)", rc);

	/* 2 */
	run_holder(&j, b, 0, 0);
	CHECK(reclaim_for(seg, 500) == 0 && in_flight(b) == 1,
	      "handed_over_permit_is_not_reclaimed (acquiring thread exited)");
	rc = brk_release(&j.p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	CHECK(rc == 0, "handed over: the new holder's release counts (%d)", rc);

	/* 3 */
	run_holder(&j, b, 1, 1);
	CHECK(reclaim_for(seg, 500) == 0 && in_flight(b) == 1,
	      "unbound_before_handover_is_not_reclaimed");
	rc = brk_release(&j.p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	CHECK(rc == 0, "unbound: release counts (%d)", rc);

	/* 4 */
	CHECK(brk_acquire(b, &mine, NULL) == 0, "main thread acquires");
	CHECK(brk_permit_bind_thread(&mine) == 0, "main thread binds");
	CHECK(reclaim_for(seg, 200) == 0 && in_flight(b) == 1,
	      "bound_permit_of_live_thread_is_kept");
	if (pthread_create(&t, NULL, releaser, &mine) == 0 &&
	    pthread_join(t, &ret) == 0)
		CHECK((intptr_t)ret == 0, "another thread releases a bound permit (%d)",
		      (int)(intptr_t)ret);
	CHECK(brk_permit_bind_thread(&mine) == -BRK_ESTALE,
	      "binding a released permit is -BRK_ESTALE");
	CHECK(brk_permit_bind_thread(NULL) == -EINVAL, "bind(NULL) is -EINVAL");

	/* 5: no breakerd, a bulkhead of one */
	cfg.max_concurrent = 1;
	if (brk_breaker_get(seg, "thr/one", &cfg, &one) != 0)
		return CHECK(0, "breaker thr/one"), brk_detach(seg), it_finish();
	run_holder(&j, one, 1, 0);
	{
		uint64_t end = it_now_ms() + 5000;

		do {
			rc = brk_acquire(one, &mine, NULL);
			if (rc != -BRK_EFULL)
				break;
			it_sleep_ms(150); /* callers scan at most every 100 ms */
		} while (it_now_ms() < end);
	}
	CHECK(rc == 0, "caller_reclaims_bound_permit_of_exited_thread (%d)", rc);
	if (rc == 0)
		CHECK(brk_release(&mine, BRK_SUCCESS, BRK_REASON_NONE, 0) == 0,
		      "and its permit counts");
	brk_detach(seg);
	return it_finish();
}
