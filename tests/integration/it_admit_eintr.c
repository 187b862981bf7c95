/*
 * it_admit_eintr.c - what a signal does to brk_admit()'s sleeps on the
 * real clock (breaker.h "Sleeping and clocks", docs/design/limits.md
 * "Admission"): a signal whose handler runs ends the sleep with -EINTR
 * (adm.code -1), and what was taken is given back; a blocked signal does
 * not wake it. Before, breaker.h and limits.md said the sleeps were
 * "resumed after a signal"; the code (admit.c sleep_until(),
 * bulkhead_queue.c brk__bq_wait()) returns -EINTR, and the callers (bctl
 * exec, the Python binding) rely on that.
 *
 *  1. a_handler_ends_a_pace_wait_and_gives_the_slot_back: a 1/s pace
 *     whose token was just taken; brk_admit() (max_wait 5 s) sleeps toward
 *     the next slot, SIGUSR1 (handler, no SA_RESTART) comes 150 ms in:
 *     -EINTR at once; the slot was given back, so the next brk_admit()
 *     gets that same slot (about 1 s after the take, not 2 s).
 *  2. a_handler_ends_a_bulkhead_queue_wait: max_concurrent 1 held by the
 *     test; brk_admit() (max_wait 5 s) waits in the queue; SIGUSR1: -EINTR
 *     at once, the queue empty again (brk_info.queued 0), nothing held.
 *  3. a_handler_ends_a_cooling_wait: a breaker tripped for 2 s; brk_admit()
 *     (max_wait 5 s) sleeps it out; SIGUSR1: -EINTR, nothing held.
 *  4. a_blocked_signal_does_not_end_the_wait: as 1 with SIGUSR1 blocked:
 *     admitted at the slot (the signal stays pending, its handler runs
 *     once it is unblocked).
 *  5. sa_restart_does_not_resume_a_wait: a handler installed with
 *     SA_RESTART ends them as well: clock_nanosleep() is never restarted
 *     after a handler, and the queue's FUTEX_WAIT has a timeout (the
 *     10 ms poll), which the kernel does not restart after a handler
 *     either (-ERESTART_RESTARTBLOCK); measured here, as signal(7) lists
 *     FUTEX_WAIT among the restarted calls without that distinction.
 * The signal comes from a forked child (kill(getppid())) so that it is the
 * test's one thread that takes it. Generous bounds (a loaded 2-core host).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void handler(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = flags;
	sigaction(SIGUSR1, &sa, NULL);
	handled = 0;
}

/* a child that sends SIGUSR1 to the test @arg ms from now */
static int signaller(int idx, void *arg)
{
	(void)idx;
	it_sleep_ms((unsigned)(uintptr_t)arg);
	kill(getppid(), SIGUSR1);
	return 0;
}

static pid_t signal_in(unsigned ms)
{
	return it_fork(signaller, 0, (void *)(uintptr_t)ms);
}

static uint64_t ms_since(uint64_t t0)
{
	return (it_now_ns() - t0) / 1000000u;
}

static brk_bucket *pace(brk_segment *seg, const char *name)
{
	struct brk_pace_config pc;
	brk_bucket *k = NULL;

	brk_pace_config_init(&pc);
	pc.ceiling_per_s = 1;
	pc.burst = 1;
	if (brk_pace_get(seg, name, &pc, &k) != 0)
		CHECK(0, "brk_pace_get %s", name);
	return k;
}

static brk_breaker *breaker(brk_segment *seg, const char *name, uint32_t mc)
{
	struct brk_config c;
	brk_breaker *b = NULL;

	brk_config_init(&c);
	c.max_concurrent = mc;
	c.implicit_pace = 0;
	if (brk_breaker_get(seg, name, &c, &b) != 0)
		CHECK(0, "brk_breaker_get %s", name);
	return b;
}

static void req_init(struct brk_admit_req *q, brk_breaker *b, brk_bucket *k,
		     uint64_t max_wait_ms)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->breaker = b;
	q->pace = k;
	q->max_wait_ms = max_wait_ms;
}

static void a_handler_ends_a_pace_wait_and_gives_the_slot_back(brk_segment *seg)
{
	brk_bucket *k = pace(seg, "p/intr");
	struct brk_admit_req q;
	struct brk_admission a;
	uint64_t t0, dt;
	pid_t kid;
	int rc;

	if (!k)
		return;
	handler(0);
	req_init(&q, NULL, k, 0);
	rc = brk_admit(&q, &a);
	CHECK(rc == 0, "the first token at once (%s)", brk_strerror(rc));
	t0 = it_now_ns();
	req_init(&q, NULL, k, 5000);
	kid = signal_in(150);
	rc = brk_admit(&q, &a);
	dt = ms_since(t0);
	it_wait(kid, 5000, NULL);
	CHECK(rc == -EINTR && a.code == -1 && handled == 1,
	      "a handled signal ends the pace wait: -EINTR, code -1 (%s, code "
	      "%d, handled %d)", brk_strerror(rc), a.code, (int)handled);
	CHECK(dt >= 100 && dt < 800, "... when the signal came, not at the slot "
	      "(%llu ms; the slot was ~1000 ms away)", (unsigned long long)dt);
	rc = brk_admit(&q, &a);
	dt = ms_since(t0);
	CHECK(rc == 0 && dt >= 700 && dt < 1600,
	      "the slot was given back: the next admit gets it, ~1 s after the "
	      "take, not ~2 s (%s, %llu ms)", brk_strerror(rc),
	      (unsigned long long)dt);
}

static void a_handler_ends_a_bulkhead_queue_wait(brk_segment *seg)
{
	brk_breaker *b = breaker(seg, "b/intr", 1);
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_refusal why;
	struct brk_info i;
	brk_permit held;
	uint64_t t0, dt;
	pid_t kid;
	int rc;

	if (!b)
		return;
	handler(0);
	rc = brk_acquire(b, &held, &why);
	CHECK(rc == 0, "the test holds the only permit (%s)", brk_strerror(rc));
	req_init(&q, b, NULL, 5000);
	t0 = it_now_ns();
	kid = signal_in(150);
	rc = brk_admit(&q, &a);
	dt = ms_since(t0);
	it_wait(kid, 5000, NULL);
	CHECK(rc == -EINTR && a.code == -1 && handled == 1,
	      "a handled signal ends the queue wait: -EINTR, code -1 (%s, code "
	      "%d, handled %d)", brk_strerror(rc), a.code, (int)handled);
	CHECK(dt >= 100 && dt < 2000, "... when the signal came, not at "
	      "max_wait (%llu ms)", (unsigned long long)dt);
	it_info(b, &i);
	CHECK(i.queued == 0 && i.in_flight == 1, "it left the queue and holds "
	      "nothing (queued %llu, in_flight %u)", (unsigned long long)i.queued,
	      i.in_flight);
	brk_release(&held, BRK_SUCCESS, BRK_REASON_NONE, 0);
}

static void a_handler_ends_a_cooling_wait(brk_segment *seg)
{
	brk_breaker *b = breaker(seg, "c/intr", 0);
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_info i;
	uint64_t t0, dt;
	pid_t kid;
	int rc;

	if (!b)
		return;
	handler(0);
	rc = brk_trip(b, 2000);
	CHECK(rc == 0, "tripped for 2 s (%s)", brk_strerror(rc));
	req_init(&q, b, NULL, 5000);
	t0 = it_now_ns();
	kid = signal_in(150);
	rc = brk_admit(&q, &a);
	dt = ms_since(t0);
	it_wait(kid, 5000, NULL);
	CHECK(rc == -EINTR && a.code == -1 && handled == 1 && dt < 1500,
	      "a handled signal ends the open breaker's wait: -EINTR (%s, code "
	      "%d, handled %d, %llu ms)", brk_strerror(rc), a.code,
	      (int)handled, (unsigned long long)dt);
	it_info(b, &i);
	CHECK(i.in_flight == 0 && i.probes_in_flight == 0, "nothing held "
	      "(in_flight %u, probes %u)", i.in_flight, i.probes_in_flight);
}

static void a_blocked_signal_does_not_end_the_wait(brk_segment *seg)
{
	brk_bucket *k = pace(seg, "p/blocked");
	struct brk_admit_req q;
	struct brk_admission a;
	sigset_t set, old;
	uint64_t t0, dt;
	pid_t kid;
	int rc;

	if (!k)
		return;
	handler(0);
	req_init(&q, NULL, k, 0);
	rc = brk_admit(&q, &a);
	CHECK(rc == 0, "the first token at once (%s)", brk_strerror(rc));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	req_init(&q, NULL, k, 5000);
	t0 = it_now_ns();
	kid = signal_in(150);
	rc = brk_admit(&q, &a);
	dt = ms_since(t0);
	it_wait(kid, 5000, NULL);
	CHECK(rc == 0 && dt >= 700 && handled == 0,
	      "a blocked signal does not wake it: admitted at the slot (%s, "
	      "%llu ms, handled %d)", brk_strerror(rc), (unsigned long long)dt,
	      (int)handled);
	sigprocmask(SIG_SETMASK, &old, NULL);
	CHECK(handled == 1, "... the pending signal's handler ran once "
	      "unblocked (handled %d)", (int)handled);
}

static void sa_restart_does_not_resume_a_wait(brk_segment *seg)
{
	brk_breaker *b = breaker(seg, "b/restart", 1);
	brk_bucket *k = pace(seg, "p/restart");
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_refusal why;
	struct brk_info i;
	brk_permit held;
	uint64_t t0, dt;
	pid_t kid;
	int rc;

	if (!b || !k)
		return;
	handler(SA_RESTART);
	rc = brk_acquire(b, &held, &why);
	CHECK(rc == 0, "the test holds the only permit (%s)", brk_strerror(rc));
	req_init(&q, b, NULL, 5000);
	t0 = it_now_ns();
	kid = signal_in(150);
	rc = brk_admit(&q, &a);
	dt = ms_since(t0);
	it_wait(kid, 5000, NULL);
	CHECK(rc == -EINTR && handled == 1 && dt < 2000,
	      "SA_RESTART: the queue's timed FUTEX_WAIT is not restarted, the "
	      "wait ends with -EINTR (%s, handled %d, %llu ms)", brk_strerror(rc),
	      (int)handled, (unsigned long long)dt);
	it_info(b, &i);
	CHECK(i.queued == 0 && i.in_flight == 1, "it left the queue (queued "
	      "%llu, in_flight %u)", (unsigned long long)i.queued, i.in_flight);
	brk_release(&held, BRK_SUCCESS, BRK_REASON_NONE, 0);

	req_init(&q, NULL, k, 0);
	rc = brk_admit(&q, &a);
	CHECK(rc == 0, "the first token at once (%s)", brk_strerror(rc));
	handled = 0;
	req_init(&q, NULL, k, 5000);
	kid = signal_in(150);
	rc = brk_admit(&q, &a);
	it_wait(kid, 5000, NULL);
	CHECK(rc == -EINTR && handled == 1, "SA_RESTART: a pace wait's "
	      "clock_nanosleep() ends with -EINTR too (%s, handled %d)",
	      brk_strerror(rc), (int)handled);
}

int main(void)
{
	brk_segment *seg;

	it_init("admit_eintr", 60);
	seg = it_attach(it_segment(NULL), 0);
	a_handler_ends_a_pace_wait_and_gives_the_slot_back(seg);
	a_handler_ends_a_bulkhead_queue_wait(seg);
	a_handler_ends_a_cooling_wait(seg);
	a_blocked_signal_does_not_end_the_wait(seg);
	sa_restart_does_not_resume_a_wait(seg);
	brk_detach(seg);
	return it_finish();
}
