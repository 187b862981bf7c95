/*
 * bctl_exec_pace.c - the pace of `bctl exec --pace PACE`: finding it, the
 * refusal line, and the sleep bctl exec's own waits use. The token itself
 * is taken by brk_admit() (step 3: brk_pace_take() with --priority,
 * sleeping to brk_bucket_wake_ns() while it fits --wait) and the answer
 * reported by brk_admit_release(). See bctl_exec_pace.h.
 */
#include "bctl_exec_pace.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

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

int exec_pace_refused(const struct exec_pace *p, uint64_t wait_ms,
		      uint64_t waited_ns)
{
	/* brk_admit()'s wait to a token that never comes (not_before
	 * UINT64_MAX) is the rest of the clock's range: centuries */
	if (wait_ms >= UINT64_MAX / 2000000u)
		cli_note("%s: rate limited, no token within the clock's range",
			 p->name);
	else if (p->wait_arg)
		cli_note("%s: rate limited, next token in %" PRIu64 " ms (waited "
			 "%" PRIu64 " ms of --wait %s)", p->name, wait_ms,
			 waited_ns / 1000000u, cli_q(p->wait_arg));
	else
		cli_note("%s: rate limited, next token in %" PRIu64 " ms (no "
			 "--wait given)", p->name, wait_ms);
	return BCTL_EXIT_TEMPFAIL;
}

uint64_t exec_pace_cuts(const struct exec_pace *p)
{
	struct brk_bucket_info bi;

	return brk_bucket_info(p->k, &bi) == 0 ? bi.cuts : 0;
}
