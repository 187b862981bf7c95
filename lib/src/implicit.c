/*
 * implicit.c - a breaker's implicit pace (breaker.h "Implicit pace",
 * issue 21): the first rate-limit answer a breaker releases as a failure
 * makes the pace NAME:pace (pace.c brk__pace_implicit_get/start), sets
 * the breaker's HAS_PACE bit (layout.h, cfg[2] bit 49) and is counted
 * throttled; from then on the closed breaker's acquire takes a token
 * from that pace first and its releases report to it. The default
 * learns the upstream's rate: no configuration, and rate-limit answers
 * never open the breaker on their own.
 *
 * Cost: a breaker without the bit pays one load and a test on acquire
 * (cfg[2], beside max_concurrent) and on release; one with it pays a
 * pace take (a GCRA CAS) and a report (the estimate's CASes).
 */
#include <string.h>

#include "limits.h"
#include "fresh.h"

static int ipace_name(const brk_breaker *b, char *out)
{
	size_t n = strnlen(b->name, sizeof(b->name)), k = strlen(BRK_PACE_IMPLICIT_SUFFIX);

	if (n + k > BRK_NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(out, b->name, n);
	memcpy(out + n, BRK_PACE_IMPLICIT_SUFFIX, k + 1);
	return 0;
}

/* The breaker's implicit pace handle (cached in the handle), made if
 * @create. 0 or a negative errno (none usable: rate limits stay failures). */
static int ipace_get(brk_breaker *b, int create, brk_bucket **out)
{
	char name[BRK_NAME_MAX + 1];
	brk_bucket *k = uatomic_read(&b->ipace);
	int rc;

	if (k && brk__fresh(brk__bk_h(k)) == 0) {
		*out = k;
		return 0;
	}
	rc = ipace_name(b, name);
	if (rc)
		return rc;
	rc = brk__pace_implicit_get(b->seg, name, create,
				    (uint32_t)brk__cfg(brk__brec(b), BRK__CFG_FLEET), &k);
	if (rc)
		return rc;
	uatomic_set(&b->ipace, k);
	*out = k;
	return 0;
}

static int implicit_on(const brk_breaker *b)
{
	return (uatomic_read(&brk__brec(b)->cfg[BRK__CFG_PACE_WORD]) &
		BRK__CFG_IMPLICIT_BIT) != 0;
}

/* Set the breaker's HAS_PACE bit (a CAS of its config word that keeps
 * every setting; bounded: a lost race with an update is redone by the
 * next rate-limit answer). */
static void has_pace_set(brk_breaker *b)
{
	uint64_t *cw = &brk__brec(b)->cfg[BRK__CFG_PACE_WORD];
	int i;

	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(cw);

		if ((old & BRK__CFG_HAS_PACE) ||
		    uatomic_cmpxchg(cw, old, old | BRK__CFG_HAS_PACE) == old)
			return;
		caa_cpu_relax();
	}
}

int brk__ipace_acquire(brk_breaker *b, uint64_t *taken_at, uint64_t *wait_ns)
{
	brk_bucket *k;
	brk_breaker *kb;
	uint64_t nb = 0, now, wake;
	int rc;

	*taken_at = 0;
	*wait_ns = 0;
	if (!implicit_on(b) || ipace_get(b, 0, &k) != 0)
		return 0; /* off, or the pace is gone: admit as before */
	kb = brk__bk_h(k);
	rc = brk__pace_take(kb, BRK_PRIORITY_NORMAL, 1, taken_at, &nb);
	if (rc == 0 || rc != -BRK_ENOTOKENS)
		return 0; /* taken, or an error of the pace: never refuse for it */
	now = brk__now(b->seg);
	wake = brk_bucket_wake_ns(k, nb);
	*wait_ns = wake > now ? wake - now : 1;
	return -BRK_ENOTOKENS;
}

int brk__ipace_admit(brk_breaker *b, brk_bucket **out)
{
	/* metrics-only admits what the pace refuses: nothing to wait for */
	if (!(uatomic_read(&brk__brec(b)->cfg[BRK__CFG_PACE_WORD]) &
	      BRK__CFG_HAS_PACE) ||
	    uatomic_read(&brk__brec(b)->mode) == BRK_MODE_METRICS_ONLY ||
	    !implicit_on(b) || ipace_get(b, 0, out) != 0)
		return -ENOENT;
	return 0;
}

void brk__ipace_release(brk_breaker *b, uint64_t taken_at, int *outcome,
			int reason, int64_t retry_after_ms)
{
	int sig = brk_pace_signal_of(*outcome, reason, retry_after_ms);
	brk_bucket *k;

	if (sig == BRK_PACE_IGNORE || !implicit_on(b))
		return;
	if (sig == BRK_PACE_OK) {
		if ((uatomic_read(&brk__brec(b)->cfg[BRK__CFG_PACE_WORD]) &
		     BRK__CFG_HAS_PACE) && ipace_get(b, 0, &k) == 0)
			(void)brk_pace_report(k, 0, BRK_PACE_OK, 0);
		return;
	}
	if (b->seg->readonly || ipace_get(b, 1, &k) != 0)
		return; /* no pace to learn it: the answer stays a failure */
	if (brk__pace_implicit_start(k) == 0 && taken_at <= brk__now(b->seg))
		(void)brk_pace_report(k, taken_at, BRK_PACE_LIMITED, retry_after_ms);
	has_pace_set(b);
	*outcome = BRK_THROTTLED;
}

double brk__ipace_rate(brk_segment *s, const char *name)
{
	char pn[BRK_NAME_MAX + 1];
	struct brk_bucket_info bi;
	size_t n = strnlen(name, BRK_NAME_MAX + 1), k = strlen(BRK_PACE_IMPLICIT_SUFFIX);
	brk_bucket *kb;

	if (n + k > BRK_NAME_MAX)
		return 0.0;
	memcpy(pn, name, n);
	memcpy(pn + n, BRK_PACE_IMPLICIT_SUFFIX, k + 1);
	if (brk_bucket_find(s, pn, &kb) != 0 ||
	    brk_bucket_info(kb, &bi) != 0 || !bi.paced)
		return 0.0;
	return bi.learned_per_s;
}
