/*
 * worker.c - the loop of one forked worker process.
 *
 * Every --interval the worker makes one call: a GET to the upstream, and
 * on failure up to --retries immediate retries (the common client-side
 * habit). In run A each attempt goes straight to the upstream; in run B
 * each attempt goes through brk_call() on the shared breaker, and a
 * refusal ends the call (refusals must not be retried at once).
 * Figures go to this worker's slot of a MAP_SHARED page.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "demo_api.h"

struct worker {
	const struct demo_opts *o;
	const struct schedule *s;
	void *req;
	brk_segment *seg;
	brk_breaker *b;           /* NULL in run A */
	struct worker_stats *st;
};

/* brk_call()'s function: one HTTP attempt, outcome reported in @res. */
struct guarded {
	struct worker *w;
	struct reply r;
};

static int guarded_call(void *ctx, struct brk_result *res)
{
	struct guarded *g = ctx;

	request_do(g->w->req, &g->r);
	res->outcome = g->r.outcome;
	res->reason = g->r.reason;
	res->retry_after_ms = g->r.retry_after_ms;
	return g->r.outcome == BRK_SUCCESS ||
	       g->r.outcome == BRK_HEALTHY_ERROR ? 0 : 1;
}

/* Count an answered attempt. Returns 0 done, 1 retryable failure. */
static int note_reply(struct worker *w, const struct reply *r)
{
	uint64_t now;

	if (r->outcome != BRK_SUCCESS && r->outcome != BRK_HEALTHY_ERROR) {
		w->st->failures++;
		return r->outcome == BRK_FAILURE;
	}
	w->st->successes++;
	now = demo_now_ns();
	if (!w->st->first_ok_ns && now >= w->s->recovered_ns)
		w->st->first_ok_ns = now;
	return 0;
}

/* One attempt. Returns 0 done, 1 retryable failure, -1 refused. */
static int attempt(struct worker *w, int is_retry)
{
	struct guarded g = { .w = w };
	int rc, rel = 0;

	if (!w->b) {
		request_do(w->req, &g.r);
	} else {
		rc = brk_call(w->b, guarded_call, &g, NULL, &rel);
		if (rc < 0) {
			if (brk_is_refusal(rc) || rc == -BRK_ECONTENDED)
				w->st->refused++;
			else
				w->st->errors++;
			return -1;
		}
		if (rel == -BRK_ESTALE)
			w->st->stale++;
	}
	w->st->attempts++;
	w->st->retries += is_retry ? 1 : 0;
	return note_reply(w, &g.r);
}

static void one_call(struct worker *w)
{
	unsigned i;

	w->st->calls++;
	for (i = 0; i <= w->o->retries; i++)
		if (attempt(w, i > 0) <= 0)
			break;
}

static void sleep_until(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000u),
		.tv_nsec = (long)(ns % 1000000000u),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* Paced loop: calls at start + offset + k * interval, no catch-up bursts. */
static void call_loop(struct worker *w, unsigned idx)
{
	uint64_t step = w->o->interval_ms * 1000000u;
	uint64_t next = w->s->start_ns + step * idx / w->o->workers;
	uint64_t now;

	while (next < w->s->end_ns) {
		sleep_until(next);
		one_call(w);
		next += step;
		now = demo_now_ns();
		if (next < now)
			next = now;
	}
}

static int attach_breaker(struct worker *w, const struct breaker_target *bt)
{
	struct brk_attach_opts ao;
	char err[256] = "";
	int rc;

	brk_attach_opts_init(&ao);
	ao.shm_name = bt->shm_name;
	ao.flags = BRK_ATTACH_NOCREATE;
	ao.errbuf = err;
	ao.errbuf_len = sizeof(err);
	rc = brk_attach(&ao, &w->seg);
	if (rc == 0)
		rc = brk_breaker_get(w->seg, bt->name, bt->cfg, &w->b);
	if (rc)
		fprintf(stderr, "breakerd-demo: worker %d: %s: %s %s\n",
			(int)getpid(), bt->shm_name, brk_strerror(rc), err);
	return rc;
}

/**
 * worker_main - body of worker @idx (a forked child): run the paced loop
 * until the schedule's end. @bt NULL: no breaker (run A).
 * Returns 0, or a negative code (message printed). Watched by alarm().
 */
int worker_main(const struct demo_opts *o, const struct schedule *s,
		const struct upstream *up, const struct breaker_target *bt,
		unsigned idx, struct worker_stats *st)
{
	struct worker w = { .o = o, .s = s, .st = st };
	uint64_t run_s = (s->end_ns - s->start_ns) / 1000000000u;
	int rc = 0;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm((unsigned)run_s + DEMO_WATCHDOG_SLACK_S);
	memset(st, 0, sizeof(*st));
	if (bt && (rc = attach_breaker(&w, bt)) != 0)
		goto out;
	w.req = request_new(up->url);
	if (!w.req) {
		rc = -ENOMEM;
		goto out;
	}
	call_loop(&w, idx);
	st->done = 1;
	request_free(w.req);
out:
	brk_detach(w.seg);
	return rc;
}
