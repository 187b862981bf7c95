/*
 * call.c - brk_call(): acquire, run the caller's function, release with
 * its result, so no code path passes the gate without reporting.
 */
#include <string.h>

#include "internal.h"

int brk_call(brk_breaker *b, brk_call_fn fn, void *ctx,
	     struct brk_refusal *why, int *release_rc)
{
	struct brk_result res;
	brk_permit p;
	int rc, rrc;

	if (!fn)
		return -EINVAL;
	rc = brk_acquire(b, &p, why);
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
