/*
 * call.c - brk_call(): acquire, run the caller's function, release with
 * its result, so no code path passes the gate without reporting.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "ident.h"
#include "internal.h"

/* brk_acquire(), sleeping out the refusals of the breaker's implicit pace
 * (cause BRK_CAUSE_PACED: the next token of the learned rate) up to its
 * max_wait_ms in all, as brk_admit() sleeps a pace: with the default
 * clock only (an injected clock never sleeps: the refusal is returned
 * with its wait_ms, as everywhere). Issue 21: brk_call() keeps the
 * upstream's allowance with no configuration. */
static int acquire_paced(brk_breaker *b, brk_permit *p, struct brk_refusal *why)
{
	struct brk_refusal w;
	uint64_t left = UINT64_MAX;
	int rc, i;

	if (!why)
		why = &w;
	for (i = 0; i < 1000; i++) {
		struct timespec ts;

		rc = brk_acquire(b, p, why);
		if (rc != -BRK_ECOOLING || why->cause != BRK_CAUSE_PACED ||
		    b->seg->clock != brk__monotonic_ns)
			return rc;
		if (left == UINT64_MAX)
			left = brk__cfg_ms(brk__brec(b), BRK__CFG_MAX_WAIT_MS);
		if (why->wait_ms > left)
			return rc;
		left -= why->wait_ms;
		ts.tv_sec = (time_t)(why->wait_ms / 1000u);
		ts.tv_nsec = (long)(why->wait_ms % 1000u) * 1000000L;
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	return rc;
}

int brk_call(brk_breaker *b, brk_call_fn fn, void *ctx,
	     struct brk_refusal *why, int *release_rc)
{
	struct brk_result res;
	brk_permit p;
	int rc, rrc;

	if (!fn)
		return -EINVAL;
	rc = acquire_paced(b, &p, why);
	if (rc)
		return rc;
	memset(&res, 0, sizeof(res));
	rc = fn(ctx, &res);
	if (res.outcome == 0) {
		res.outcome = rc == 0 ? BRK_SUCCESS : BRK_FAILURE;
		res.reason = rc == 0 ? BRK_REASON_NONE : BRK_REASON_OTHER;
	}
	rrc = brk_release(&p, res.outcome, res.reason, res.retry_after_ms);
	if (release_rc)
		*release_rc = rrc;
	return rc;
}
