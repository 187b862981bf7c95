/*
 * bctl_outcome.c - map how a wrapped command ended to a breaker outcome
 * and an exit status. See bctl_outcome.h for the order of the rules.
 */
#include "bctl_outcome.h"

#include <sys/wait.h>

#include "breaker.h"
#include "cli_util.h"

static void verdict(struct exec_verdict *v, int outcome, int reason)
{
	v->outcome = outcome;
	v->reason = reason;
}

/* The library's verdict on the signs in the output (breaker.h, "HTTP
 * classification"): 1 and the verdict set, or 0 if they give none. */
static int scan_verdict(const struct scan_result *s, struct exec_verdict *v)
{
	struct brk_result res;

	if (!s || brk_http_verdict(0, s->signs, s->retry_after_ms, &res) != 0 ||
	    res.outcome == 0)
		return 0;
	verdict(v, res.outcome, res.reason);
	return 1;
}

void bctl_verdict(const struct exec_facts *f, struct exec_verdict *v)
{
	int exited = WIFEXITED(f->status);
	int code = exited ? WEXITSTATUS(f->status) : -1;

	v->retry_after_ms = 0;
	if (f->scan && (f->scan->signs & BRK_HTTP_SIGN_RETRY_AFTER))
		v->retry_after_ms = f->scan->retry_after_ms;
	if (f->timed_out)
		verdict(v, BRK_FAILURE, BRK_REASON_TIMEOUT);
	else if (scan_verdict(f->scan, v))
		return;
	else if (f->interrupted && code != 0)
		verdict(v, BRK_CANCELLED, BRK_REASON_NONE);
	else if (code == 0)
		verdict(v, BRK_SUCCESS, BRK_REASON_NONE);
	else if (exited && code_set_has(f->healthy, code))
		verdict(v, BRK_HEALTHY_ERROR, BRK_REASON_NONE);
	else if (exited && code_set_has(f->ignore, code))
		verdict(v, BRK_REJECTED_REQUEST, BRK_REASON_NONE);
	else
		verdict(v, BRK_FAILURE, BRK_REASON_OTHER);
}

int bctl_exit_status(const struct exec_facts *f)
{
	if (f->timed_out)
		return 124;
	if (WIFEXITED(f->status))
		return WEXITSTATUS(f->status);
	if (WIFSIGNALED(f->status))
		return 128 + WTERMSIG(f->status);
	return 1;
}
