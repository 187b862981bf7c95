/*
 * bctl_exec_pace.c - the pace of `bctl exec --pace PACE`. See
 * bctl_exec_pace.h.
 *
 * A refused take writes nothing but the pace's denied counter; the wait
 * is to brk_bucket_wake_ns() (not_before plus a jitter below one
 * interval, so waiters of many processes do not wake together; cut to
 * what is left of --wait when not_before itself fits), and the take is
 * tried again: a wait is never a reservation (a cut in between
 * would otherwise leave a queue spaced at the old rate).
 */
#include "bctl_exec_pace.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#define EXEC_PACE_MAX_TRIES 100000 /* bound on the take/sleep loop */

int exec_sleep_ns(const sigset_t *sigs, uint64_t ns)
{
	struct timespec ts;
	int sig;

	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	do
		sig = sigtimedwait(sigs, NULL, &ts);
	while (sig < 0 && errno == EINTR);
	return sig > 0 ? sig : 0;
}

int exec_pace_open(const struct bctl *g, brk_segment *seg,
		   struct exec_pace *p)
{
	struct brk_bucket_info bi;
	int rc = brk_bucket_find(seg, p->name, &p->k);

	p->seg = seg;
	p->paced = 0;
	if (rc == -ENOENT)
		return cli_error("%s: no pace named '%s' (create it with 'bctl "
				 "pace %s --ceiling R')", cli_q(bctl_shm(g)),
				 cli_q(p->name), cli_q(p->name));
	if (rc == -EMEDIUMTYPE)
		return bctl_wrong_kind(g, seg, p->name, BRK_KIND_BUCKET);
	if (rc < 0)
		return bctl_fail(g, p->name, rc);
	rc = brk_bucket_info(p->k, &bi);
	if (rc < 0)
		return bctl_fail(g, p->name, rc);
	p->paced = bi.paced != 0;
	return 0;
}

static uint64_t ms_up(uint64_t ns)
{
	return ns / 1000000u + (ns % 1000000u != 0);
}

static int pace_refused(const struct exec_pace *p, uint64_t next_ns,
			uint64_t waited_ns)
{
	if (next_ns == UINT64_MAX)
		cli_note("%s: rate limited, no token within the clock's range",
			 p->name);
	else if (p->wait_arg)
		cli_note("%s: rate limited, next token in %" PRIu64 " ms (waited "
			 "%" PRIu64 " ms of --wait %s)", p->name, ms_up(next_ns),
			 waited_ns / 1000000u, cli_q(p->wait_arg));
	else
		cli_note("%s: rate limited, next token in %" PRIu64 " ms (no "
			 "--wait given)", p->name, ms_up(next_ns));
	return BCTL_EXIT_TEMPFAIL;
}

int exec_pace_take(const struct bctl *g, struct exec_pace *p,
		   const sigset_t *sigs, uint64_t *left)
{
	uint64_t nb = 0, now, wake, ns, waited = 0;
	uint64_t left_ns = *left > UINT64_MAX / 1000000u ? UINT64_MAX :
			   *left * 1000000u;
	int i, rc = -BRK_ECONTENDED, sig;

	for (i = 0; i < EXEC_PACE_MAX_TRIES; i++) {
		rc = brk_pace_take(p->k, BRK_PRIORITY_NORMAL, &p->taken_at_ns,
				   &nb);
		if (rc == 0)
			break;
		if (rc == -BRK_ECONTENDED)
			continue;
		if (rc != -BRK_ENOTOKENS)
			return bctl_fail(g, p->name, rc);
		now = brk_now_ns(p->seg);
		ns = nb > now ? nb - now : 0;
		if (nb == UINT64_MAX || ns > left_ns - waited)
			return pace_refused(p, ns, waited);
		/* The jitter spreads the waiters; it never makes a token that
		 * is due within --wait a refusal. */
		wake = brk_bucket_wake_ns(p->k, nb);
		ns = wake > now ? wake - now : 0;
		if (ns > left_ns - waited)
			ns = left_ns - waited;
		if (g->verbose)
			cli_note("%s: rate limited, waiting %" PRIu64 " ms", p->name,
				 ms_up(ns));
		sig = exec_sleep_ns(sigs, ns);
		if (sig)
			return 128 + sig;
		waited += ns;
	}
	if (rc)
		return bctl_fail(g, p->name, rc);
	*left -= waited / 1000000u < *left ? waited / 1000000u : *left;
	return 0;
}

int exec_pace_verdict(const struct exec_pace *p, struct exec_verdict *v)
{
	int sig = brk_pace_signal_of(v->outcome, v->reason, v->retry_after_ms);

	if (sig == BRK_PACE_LIMITED && p->paced)
		v->outcome = BRK_THROTTLED;
	return sig;
}

void exec_pace_report(const struct bctl *g, const struct exec_pace *p,
		      int signal, int64_t retry_after_ms)
{
	int rc = brk_pace_report(p->k, p->taken_at_ns, signal, retry_after_ms);

	if (!g->verbose)
		return;
	if (rc == 1)
		cli_note("%s: rate limit answer: the rate was cut", p->name);
	else if (rc < 0)
		cli_note("%s: report not counted: %s", p->name, brk_strerror(rc));
}
