/*
 * pace_strat.c - the strategies of the pacing benchmark (pace.h): what a
 * worker does before it sends and after the answer. Public API only.
 *
 * aimd (per-process) and pacing (shared) run the same learned-rate pace
 * (brk_pace_take()/brk_pace_report(), breaker.h "Pacing (learned rate)"):
 * aimd in a private segment of each worker (nobody else sees its cuts),
 * pacing in the shared segment; pacing (fair) the shared pace again, but
 * waiting by reservation (brk_pace_reserve()/brk_ticket_check(), breaker.h
 * "Fair waits") instead of take, sleep, take again.
 */
#include "pace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PACE_REFUSED_PAUSE_NS 10000000ull /* no wait known: 10 ms */

static const char *const names[PACE_NSTRATEGIES] = {
	"none", "retry-after", "aimd (per process)", "cooling (breaker)",
	"pacing (shared)", "pacing (fair)"
};

const char *pace_strategy_name(int s)
{
	return s >= 0 && s < PACE_NSTRATEGIES ? names[s] : "?";
}

uint64_t pace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void pace_sleep_until(uint64_t abs_ns)
{
	struct timespec ts = { (time_t)(abs_ns / 1000000000ull),
			       (long)(abs_ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static int open_seg(const char *name, brk_segment **out)
{
	struct brk_attach_opts o;

	brk_attach_opts_init(&o);
	o.shm_name = name;
	o.capacity = 64;
	return brk_attach(&o, out);
}

/* The pace of this strategy: shared, or a private one (aimd). */
static int open_pace(struct pace_ctx *c, brk_segment *seg)
{
	struct brk_pace_config pc;

	brk_pace_config_init(&pc);
	pc.ceiling_per_s = c->p->ceiling;
	return brk_pace_get(seg, c->strategy == PACE_FAIR ? "bench/pace-fair"
							   : "bench/pace",
			    &pc, &c->k);
}

int pace_ctx_open(struct pace_ctx *c)
{
	char name[64];
	int rc;

	if (c->strategy == PACE_COOLING) {
		rc = open_seg(c->p->shm, &c->seg);
		return rc ? rc : brk_breaker_get(c->seg, "bench/cooling", NULL,
						 &c->b);
	}
	if (c->strategy == PACE_SHARED || c->strategy == PACE_FAIR) {
		rc = open_seg(c->p->shm, &c->seg);
		return rc ? rc : open_pace(c, c->seg);
	}
	if (c->strategy == PACE_AIMD) {
		snprintf(name, sizeof(name), "%s-own%d", c->p->shm, c->worker);
		brk_segment_unlink(name);
		rc = open_seg(name, &c->own);
		return rc ? rc : open_pace(c, c->own);
	}
	return 0;
}

void pace_ctx_close(struct pace_ctx *c)
{
	char name[64];

	if (c->own) {
		brk_detach(c->own);
		snprintf(name, sizeof(name), "%s-own%d", c->p->shm, c->worker);
		brk_segment_unlink(name);
	}
	if (c->seg)
		brk_detach(c->seg);
}

/* Take from the pace, sleeping to brk_bucket_wake_ns() between tries. */
static int take(struct pace_ctx *c, uint64_t end_ns)
{
	uint64_t nb = 0, wake;
	int rc;

	for (;;) {
		rc = brk_pace_take(c->k, BRK_PRIORITY_NORMAL, &c->taken_at_ns,
				   &nb);
		if (rc == 0)
			return 0;
		if (rc == -BRK_ECONTENDED)
			continue;
		if (rc != -BRK_ENOTOKENS)
			return rc;
		wake = brk_bucket_wake_ns(c->k, nb);
		if (wake >= end_ns)
			return 1;
		pace_sleep_until(wake);
	}
}

/* Reserve the next slot (within the window), sleep to it, check; again
 * if a cut moved it. */
static int reserve(struct pace_ctx *c, uint64_t end_ns)
{
	struct brk_ticket t;
	uint64_t now = pace_now_ns();
	int rc;

	brk_ticket_init(&t);
	rc = brk_pace_reserve(c->k, BRK_PRIORITY_NORMAL,
			      end_ns > now ? end_ns - now : 0, &t);
	if (rc == -BRK_ENOTOKENS)
		return 1; /* the slot is past the window */
	while (rc >= 0) {
		if (t.at_ns >= end_ns) {
			brk_ticket_cancel(c->k, &t);
			return 1;
		}
		if (t.at_ns > pace_now_ns())
			pace_sleep_until(t.at_ns);
		rc = brk_ticket_check(c->k, &t);
		if (rc == 0) {
			c->taken_at_ns = t.taken_at_ns;
			return 0;
		}
	}
	brk_ticket_cancel(c->k, &t);
	return rc;
}

/* Acquire a permit of the shared breaker, sleeping out its waits. */
static int acquire(struct pace_ctx *c, uint64_t end_ns)
{
	struct brk_refusal why;
	uint64_t wake;
	int rc;

	for (;;) {
		memset(&why, 0, sizeof(why));
		rc = brk_acquire(c->b, &c->permit, &why);
		if (rc == 0)
			return 0;
		if (!brk_is_refusal(rc))
			return rc;
		wake = pace_now_ns() + (why.wait_ms ? why.wait_ms * 1000000ull :
					PACE_REFUSED_PAUSE_NS);
		if (wake >= end_ns)
			return 1;
		pace_sleep_until(wake);
	}
}

int pace_before(struct pace_ctx *c, uint64_t end_ns)
{
	switch (c->strategy) {
	case PACE_RETRY_AFTER:
		if (c->sleep_until_ns >= end_ns)
			return 1;
		if (c->sleep_until_ns > pace_now_ns())
			pace_sleep_until(c->sleep_until_ns);
		return 0;
	case PACE_AIMD:
	case PACE_SHARED:
		return take(c, end_ns);
	case PACE_FAIR:
		return reserve(c, end_ns);
	case PACE_COOLING:
		return acquire(c, end_ns);
	}
	return 0;
}

void pace_after(struct pace_ctx *c, const struct brk_result *res)
{
	int limited = res->outcome == BRK_FAILURE &&
		      (res->reason == BRK_REASON_RATE_LIMITED ||
		       res->reason == BRK_REASON_OVERLOADED);

	switch (c->strategy) {
	case PACE_RETRY_AFTER:
		if (limited && res->retry_after_ms > 0)
			c->sleep_until_ns = pace_now_ns() +
				(uint64_t)res->retry_after_ms * 1000000ull;
		return;
	case PACE_COOLING:
		brk_release(&c->permit, res->outcome, res->reason,
			    res->retry_after_ms);
		return;
	case PACE_AIMD:
	case PACE_SHARED:
	case PACE_FAIR:
		brk_pace_report(c->k, c->taken_at_ns,
				brk_pace_signal_of(res->outcome, res->reason,
						   res->retry_after_ms),
				res->retry_after_ms);
		return;
	}
}
