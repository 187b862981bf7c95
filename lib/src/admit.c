/*
 * admit.c - brk_admit(): a job through the breaker, the pace and the
 * retry budget in one fixed order (breaker.h "Admission"), sleeping where
 * it may; brk_admit_release(): the answer to each of them; the stable
 * reason codes. Calls down into acquire.c (brk__acquire_prio), release.c,
 * bulkhead_queue.c (a full bulkhead's wait), pace.c, gcra.c and
 * budget.c; nothing calls back up.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "abi.h"
#include "bulkhead_queue.h"
#include "ident.h"
#include "internal.h"
#include "limits.h"

/* brk_admission.flags_ */
#define ADM_GO 1u       /* a GO admission, not yet released */
#define ADM_PERMIT 2u   /* holds a breaker permit */
#define ADM_PACE 4u     /* took a token of the bucket given as pace */
#define ADM_PACED 8u    /* ... and that bucket is a pace (it learns) */

/* Bounds the sleep-and-ask-again loops: each round sleeps a positive
 * wait out of max_wait_ms, so this is only a guard against a gate that
 * answers "wait 1 ms" forever. */
#define ADMIT_ROUNDS 64

_Static_assert(sizeof(struct brk_admit_req) == BRK_ADMIT_REQ_SIZE_VER1,
	       "brk_admit_req");
_Static_assert(sizeof(struct brk_admission) == 256, "brk_admission: fixed size");

const char *brk_admit_code_name(int code)
{
	static const char *const n[] = {
		[BRK_ADMIT_GO] = "GO",
		[BRK_ADMIT_EXPIRED] = "EXPIRED",
		[BRK_ADMIT_BREAKER_OPEN] = "BREAKER_OPEN",
		[BRK_ADMIT_COOLING] = "COOLING",
		[BRK_ADMIT_RATE_LIMITED] = "RATE_LIMITED",
		[BRK_ADMIT_BULKHEAD_FULL] = "BULKHEAD_FULL",
		[BRK_ADMIT_DEFERRED] = "DEFERRED",
		[BRK_ADMIT_CONTENDED] = "CONTENDED",
	};
	if (code < BRK_ADMIT_GO || code > BRK_ADMIT_CONTENDED)
		return "UNKNOWN";
	return n[code];
}

const char *brk_outcome_code(int outcome, int reason)
{
	static const char *const fail[BRK_REASON_COUNT] = {
		[BRK_REASON_NONE] = "UPSTREAM_FAILED",
		[BRK_REASON_TIMEOUT] = "UPSTREAM_TIMEOUT",
		[BRK_REASON_CONNECT] = "UPSTREAM_UNREACHABLE",
		[BRK_REASON_SERVER_ERROR] = "UPSTREAM_ERROR",
		[BRK_REASON_OVERLOADED] = "UPSTREAM_OVERLOADED",
		[BRK_REASON_RATE_LIMITED] = "UPSTREAM_RATE_LIMITED",
		[BRK_REASON_OTHER] = "UPSTREAM_FAILED",
	};

	switch (outcome) {
	case BRK_SUCCESS:
		return "OK";
	case BRK_FAILURE:
		if (reason < 0 || reason >= BRK_REASON_COUNT)
			return "UNKNOWN";
		return fail[reason];
	case BRK_HEALTHY_ERROR:
		return "BUSINESS_ERROR";
	case BRK_REJECTED_REQUEST:
		return "SCHEMA_REJECTED";
	case BRK_CANCELLED:
		return "CANCELLED";
	case BRK_THROTTLED:
		return "THROTTLED";
	default:
		return "UNKNOWN";
	}
}

static uint64_t ms_ceil(uint64_t ns)
{
	return ns / 1000000u + (ns % 1000000u != 0);
}

static brk_segment *seg_of(const void *handle)
{
	/* buckets and budgets are breaker handles of another kind (gcra.c,
	 * budget.c) */
	return handle ? ((const brk_breaker *)handle)->seg : NULL;
}

/* The running admission: what was asked, what is held, the clock. */
struct run {
	struct brk_admit_req q;
	struct brk_admission *adm;
	brk_segment *seg;
	int real;            /* the default clock: sleep for real */
	uint64_t now;        /* segment clock, ns */
	uint64_t start;
	uint64_t slept_ns;
	int acq_flags;       /* OR-ed into step 2's priority (BRK__ACQ_*) */
};

static int refuse(struct run *r, int rc, int code, uint64_t wait_ms,
		  const char *by)
{
	struct brk_admission *a = r->adm;

	a->code = code;
	a->wait_ms = wait_ms;
	if (by) {
		strncpy(a->by, by, BRK_NAME_MAX);
		a->by[BRK_NAME_MAX] = '\0';
	}
	return rc;
}

/* Give back the breaker permit of step 2 (no verdict). */
static void drop_permit(struct run *r)
{
	if (r->adm->flags_ & ADM_PERMIT)
		brk_release(&r->adm->permit, BRK_CANCELLED, BRK_REASON_NONE, 0);
	r->adm->flags_ &= ~ADM_PERMIT;
}

/* May the job wait @wait_ns more from now? (max_wait_ms left, deadline) */
static int fits_max_wait(const struct run *r, uint64_t wait_ns)
{
	uint64_t max = brk__ms_to_ns(r->q.max_wait_ms);

	return wait_ns > 0 && r->slept_ns <= max && wait_ns <= max - r->slept_ns;
}

static int past_deadline(const struct run *r, uint64_t wait_ns)
{
	return r->q.deadline_ns && brk__sat_add(r->now, wait_ns) > r->q.deadline_ns;
}

/* Sleep until @until_ns on the segment clock (the default clock only). */
/* Returns 0, or -EINTR: a signal handler ran (the caller gives up, holding
 * nothing, so that Ctrl-C in a Python caller is not held up by the wait). */
static int sleep_until(struct run *r, uint64_t until_ns)
{
	struct timespec ts = { (time_t)(until_ns / 1000000000u),
			       (long)(until_ns % 1000000000u) };
	int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

	r->now = brk__now(r->seg);
	r->slept_ns = r->now > r->start ? r->now - r->start : 0;
	return rc == EINTR ? -EINTR : 0;
}

/* Step 1: the wait the job faces now, without asking any gate (@bi: the
 * pace's snapshot, NULL without a pace). */
static uint64_t wait_now(const struct run *r, const struct brk_bucket_info *bi,
			 const char **by)
{
	uint64_t wait = 0;

	if (r->q.breaker) {
		struct brk__record *rec = brk__brec(r->q.breaker);
		uint64_t w = uatomic_read(&rec->state);
		uint64_t cu = brk__cool_until_now(rec, r->now, 0);
		uint64_t rel = brk__rel_ms(r->seg, r->now);

		if (BRK__ST_STATE(w) == BRK_OPEN) {
			uint64_t until = brk__open_until_now(rec, w, rel, 0);
			if (until > rel)
				wait = brk__ms_to_ns(until - rel > BRK_MAX_DURATION_MS
							     ? BRK_MAX_DURATION_MS
							     : until - rel);
		} else if (cu > r->now) {
			wait = cu - r->now;
			if (wait > brk__ms_to_ns(BRK_MAX_DURATION_MS))
				wait = brk__ms_to_ns(BRK_MAX_DURATION_MS);
		}
		if (wait) {
			*by = brk_breaker_name(r->q.breaker);
			return wait;
		}
	}
	if (bi && bi->configured && bi->tokens < 1.0 && bi->rate_per_s > 0) {
		double ns = (1.0 - bi->tokens) * 1e9 / bi->rate_per_s;

		wait = ns >= 1e18 ? UINT64_MAX : (uint64_t)ns;
		if ((double)wait < ns)
			wait++; /* round up */
		*by = brk_bucket_name(r->q.pace);
	}
	return wait;
}

static int breaker_code(int rc)
{
	switch (rc) {
	case -BRK_EOPEN:
		return BRK_ADMIT_BREAKER_OPEN;
	case -BRK_ECOOLING:
		return BRK_ADMIT_COOLING;
	case -BRK_EFULL:
		return BRK_ADMIT_BULKHEAD_FULL;
	case -BRK_ECONTENDED:
		return BRK_ADMIT_CONTENDED;
	default:
		return -1;
	}
}

/* May step 2 wait in the bulkhead's queue? On the default clock only
 * (an injected clock never sleeps) and with some of max_wait_ms left. */
static int may_queue(const struct run *r)
{
	return r->real && r->q.max_wait_ms > 0 && fits_max_wait(r, 1);
}

/* The estimated wait for a bulkhead permit: the job's place (behind the
 * queue; high priority passes it; 1 when a permit is free) x mean hold
 * time / permits; 0 unknown (brk__bq_estimate_ns()). */
static uint64_t full_wait_ns(const struct run *r)
{
	struct brk__record *rec = brk__brec(r->q.breaker);
	uint64_t pos = r->q.priority == BRK_PRIORITY_HIGH
			       ? 1 : brk__bq_queued(r->seg, rec) + 1;

	/* a permit free while others queue: the queue is not what holds
	 * the job up (dead tickets, garbage words: its waiters skip them),
	 * so its place is not believed; the job counts alone. Else every
	 * job whose deadline is shorter than the dead tickets' estimate is
	 * EXPIRED at once, none joins, and nothing ever skips them. */
	if (pos > 1 && brk__permit_free(r->seg, rec, r->q.priority))
		pos = 1;

	return brk__bq_estimate_ns(r->seg, rec, pos, r->q.priority);
}

/* A full bulkhead without a wait (no max_wait_ms, or an injected clock):
 * EXPIRED if the estimated wait passes the deadline, else BULKHEAD_FULL
 * with the estimate as wait_ms (0: unknown). */
static int full_now(struct run *r, const struct brk_refusal *why)
{
	uint64_t est = full_wait_ns(r);

	if (est && past_deadline(r, est))
		return refuse(r, -BRK_EEXPIRED, BRK_ADMIT_EXPIRED, ms_ceil(est),
			      why->by);
	return refuse(r, -BRK_EFULL, BRK_ADMIT_BULKHEAD_FULL, ms_ceil(est),
		      why->by);
}

/* Step 2's wait for a bulkhead permit (docs/design/limits.md "Fair
 * bulkhead waits"): refused EXPIRED at once when the estimated wait
 * (position x mean hold time / permits, brk__bq_estimate_ns(): known
 * only with a hold-time histogram) passes the deadline; else in the
 * queue until max_wait_ms or the deadline, whichever comes first (the
 * deadline: EXPIRED, max_wait_ms: BULKHEAD_FULL). Returns 1 with *@rc
 * the step's answer, or 0 with *@rc a refusal of the breaker met in the
 * queue (open, cooling; @why filled) for step_breaker() to handle, or
 * -EAGAIN (ask again). */
static int queue_wait(struct run *r, struct brk_refusal *why, int *rc)
{
	brk_breaker *b = r->q.breaker;
	const char *name = brk_breaker_name(b);
	uint64_t est = full_wait_ns(r);
	uint64_t until = brk__sat_add(r->start, brk__ms_to_ns(r->q.max_wait_ms));

	if (est && past_deadline(r, est)) {
		*rc = refuse(r, -BRK_EEXPIRED, BRK_ADMIT_EXPIRED, ms_ceil(est), name);
		return 1;
	}
	if (r->q.deadline_ns && r->q.deadline_ns < until)
		until = r->q.deadline_ns;
	*rc = brk__bq_wait(b, &r->adm->permit, why, r->q.priority | r->acq_flags,
			   until);
	r->now = brk__now(r->seg);
	r->slept_ns = r->now > r->start ? r->now - r->start : 0;
	if (*rc == 0) {
		r->adm->flags_ |= ADM_PERMIT;
		return 1;
	}
	if (*rc == -EINTR) {
		*rc = refuse(r, -EINTR, -1, 0, name);
		return 1;
	}
	if (*rc == -BRK_EFULL) {
		r->adm->cause = BRK_CAUSE_FULL;
		if (r->q.deadline_ns && r->now >= r->q.deadline_ns)
			*rc = refuse(r, -BRK_EEXPIRED, BRK_ADMIT_EXPIRED,
				     ms_ceil(est), name);
		else
			*rc = refuse(r, -BRK_EFULL, BRK_ADMIT_BULKHEAD_FULL,
				     ms_ceil(est), name);
		return 1;
	}
	return 0;
}

/* Step 2. */
static int step_breaker(struct run *r)
{
	struct brk_admission *a = r->adm;
	struct brk_refusal why;
	int rounds, rc = 0;

	for (rounds = 0; rounds < ADMIT_ROUNDS; rounds++) {
		uint64_t wait_ns;

		/* (a read-only attach writes nothing, not even this count:
		 * its acquire below answers -EROFS) */
		if (rounds == 0 && r->q.priority != BRK_PRIORITY_HIGH &&
		    may_queue(r) && !r->q.breaker->seg->readonly &&
		    brk__bq_queued(r->seg, brk__brec(r->q.breaker)) > 0) {
			/* others wait for a permit: behind them, not past
			 * (counted as full once, as a refused try would be) */
			memset(&why, 0, sizeof(why));
			why.cause = BRK_CAUSE_FULL;
			brk__count(brk__brec(r->q.breaker), BRK__CTR_REJ_FULL);
			rc = -BRK_EFULL;
		} else {
			rc = brk__acquire_prio(r->q.breaker, &a->permit, &why,
					       r->q.priority | r->acq_flags);
		}
		if (rc == 0) {
			a->flags_ |= ADM_PERMIT;
			return 0;
		}
		if (breaker_code(rc) < 0)
			return refuse(r, rc, -1, 0, brk_breaker_name(r->q.breaker));
		a->cause = why.cause;
		if (rc == -BRK_EFULL && !may_queue(r))
			return full_now(r, &why);
		if (rc == -BRK_EFULL) {
			if (queue_wait(r, &why, &rc))
				return rc;
			if (rc == -EAGAIN)
				continue;
			if (breaker_code(rc) < 0)
				return refuse(r, rc, -1, 0,
					      brk_breaker_name(r->q.breaker));
			a->cause = why.cause;
		}
		wait_ns = brk__ms_to_ns(why.wait_ms);
		if (why.wait_ms && past_deadline(r, wait_ns))
			return refuse(r, -BRK_EEXPIRED, BRK_ADMIT_EXPIRED,
				      why.wait_ms, why.by);
		if (!fits_max_wait(r, wait_ns) || !r->real)
			return refuse(r, rc, breaker_code(rc), why.wait_ms, why.by);
		if (sleep_until(r, brk__sat_add(r->now, wait_ns)) == -EINTR)
			return refuse(r, -EINTR, -1, 0, why.by);
	}
	return refuse(r, rc, breaker_code(rc), why.wait_ms, why.by);
}

/* The wait the pace step may reserve ahead: what is left of
 * max_wait_ms and of the deadline (0 with an injected clock: it cannot
 * sleep, so only a token free now). */
/* The longest step 3 may have slept in all: max_wait_ms, or pace_wait_ms
 * when that is longer. */
static uint64_t pace_max_ns(const struct run *r)
{
	uint64_t ms = r->q.pace_wait_ms > r->q.max_wait_ms ? r->q.pace_wait_ms
							 : r->q.max_wait_ms;

	return brk__ms_to_ns(ms);
}

/* May step 3 wait @wait_ns more from now? */
static int fits_pace_wait(const struct run *r, uint64_t wait_ns)
{
	uint64_t max = pace_max_ns(r);

	return wait_ns > 0 && r->slept_ns <= max && wait_ns <= max - r->slept_ns;
}

static uint64_t pace_horizon(const struct run *r)
{
	uint64_t max = pace_max_ns(r), h;

	if (!r->real)
		return 0;
	h = r->slept_ns < max ? max - r->slept_ns : 0;
	if (r->q.deadline_ns) {
		uint64_t d = r->q.deadline_ns > r->now ? r->q.deadline_ns - r->now : 0;

		if (d < h)
			h = d;
	}
	return h;
}

/* A pace refusal or give-up at slot @at: EXPIRED when @at is past the
 * deadline, else RATE_LIMITED with the wait (ticket given back). */
static int pace_refuse(struct run *r, brk_bucket *k, struct brk_ticket *t,
		       uint64_t at)
{
	uint64_t wait = at > r->now ? at - r->now : 0;

	(void)brk_ticket_cancel(k, t);
	drop_permit(r);
	if (past_deadline(r, wait))
		return refuse(r, -BRK_EEXPIRED, BRK_ADMIT_EXPIRED, ms_ceil(wait),
			      brk_bucket_name(k));
	return refuse(r, -BRK_ENOTOKENS, BRK_ADMIT_RATE_LIMITED, ms_ceil(wait),
		      brk_bucket_name(k));
}

/* Step 3: a reservation on pace @k (breaker.h "Fair waits"): the slot
 * comes in arrival order; one past the deadline or max_wait_ms is
 * refused at once, nothing reserved. */
static int step_pace(struct run *r, brk_bucket *k)
{
	struct brk_admission *a = r->adm;
	const char *name = brk_bucket_name(k);
	struct brk_ticket t;
	int rounds, rc;

	(void)brk_ticket_init(&t);
	for (rounds = 0;; rounds++) {
		uint64_t h = pace_horizon(r), cap, ahead;

		rc = brk_pace_reserve(k, r->q.priority, h, &t);
		if (rc != -BRK_ENOTOKENS)
			break;
		/* A slot within this job's wait but past the reservation cap
		 * (BRK_PACE_MAX_HORIZON_MS: a slow pace, a long --wait) is
		 * not refused: sleep until it is within the cap's reach, then
		 * reserve it (the order among such far waiters is the
		 * take-and-retry one). */
		cap = brk__ms_to_ns(BRK_PACE_MAX_HORIZON_MS);
		ahead = t.at_ns > r->now ? t.at_ns - r->now : 0;
		if (!r->real || ahead <= cap || ahead > h || rounds >= ADMIT_ROUNDS)
			return pace_refuse(r, k, &t, t.at_ns);
		if (sleep_until(r, t.at_ns - cap) == -EINTR) {
			drop_permit(r);
			return refuse(r, -EINTR, -1, 0, name);
		}
	}
	for (rounds = 0; rc >= 0 && rounds < ADMIT_ROUNDS; rounds++) {
		if (t.at_ns > r->now && sleep_until(r, t.at_ns) == -EINTR) {
			(void)brk_ticket_cancel(k, &t);
			drop_permit(r);
			return refuse(r, -EINTR, -1, 0, name);
		}
		rc = brk_ticket_check(k, &t);
		r->now = brk__now(r->seg);
		if (rc == 0) {
			a->taken_at_ns = t.taken_at_ns;
			r->now = t.taken_at_ns > r->now ? t.taken_at_ns : r->now;
			return 0;
		}
		/* 1: a cut (or high priority) moved the slot later */
		if (rc == 1 && t.at_ns > r->now &&
		    (past_deadline(r, t.at_ns - r->now) ||
		     !fits_pace_wait(r, t.at_ns - r->now) || !r->real))
			return pace_refuse(r, k, &t, t.at_ns);
	}
	(void)brk_ticket_cancel(k, &t);
	drop_permit(r);
	if (rc >= 0)
		return refuse(r, -BRK_ENOTOKENS, BRK_ADMIT_RATE_LIMITED,
			      ms_ceil(t.at_ns > r->now ? t.at_ns - r->now : 0), name);
	return refuse(r, rc, rc == -BRK_ECONTENDED ? BRK_ADMIT_CONTENDED : -1, 0,
		      name);
}

/* Step 4. */
static int step_budget(struct run *r)
{
	int rc;

	if (r->q.attempt == BRK_FIRST_ATTEMPT) {
		(void)brk_budget_deposit(r->q.budget); /* a lost deposit: fewer retries */
		return 0;
	}
	rc = brk_retry_permitted(r->q.budget);
	if (rc == 0)
		return 0;
	drop_permit(r); /* the pace token stays taken: it would have been sent */
	return refuse(r, rc,
		      rc == -BRK_EDEFERRED ? BRK_ADMIT_DEFERRED
		      : rc == -BRK_ECONTENDED ? BRK_ADMIT_CONTENDED : -1,
		      0, brk_budget_name(r->q.budget));
}

static int check_req(const struct brk_admit_req *req, struct run *r)
{
	brk_segment *s[3];
	int i, n = 0, rc;

	memset(&r->q, 0, sizeof(r->q));
	rc = brk__struct_in(&r->q, sizeof(r->q), req,
			    req->size ? req->size : BRK_ADMIT_REQ_SIZE_VER0);
	if (rc)
		return rc;
	if (r->q.attempt != BRK_FIRST_ATTEMPT && r->q.attempt != BRK_RETRY)
		return -EINVAL;
	if (r->q.priority != BRK_PRIORITY_NORMAL &&
	    r->q.priority != BRK_PRIORITY_HIGH)
		return -EINVAL;
	if (r->q.breaker)
		s[n++] = seg_of(r->q.breaker);
	if (r->q.pace)
		s[n++] = seg_of(r->q.pace);
	if (r->q.budget)
		s[n++] = seg_of(r->q.budget);
	if (n == 0)
		return -EINVAL;
	for (i = 1; i < n; i++)
		if (s[i] != s[0])
			return -EINVAL;
	r->seg = s[0];
	return 0;
}

int brk_admit(const struct brk_admit_req *req, struct brk_admission *adm)
{
	struct brk_bucket_info bi;
	int have_bi = 0;
	struct run r;
	const char *by = NULL;
	uint64_t wait;
	brk_bucket *ipace = NULL;
	int rc;

	if (!adm)
		return -EINVAL;
	memset(adm, 0, sizeof(*adm));
	adm->code = -1;
	if (!req)
		return -EINVAL;
	r.adm = adm;
	rc = check_req(req, &r);
	if (rc)
		return rc;
	r.real = r.seg->clock == brk__monotonic_ns;
	r.now = r.start = brk__now(r.seg);
	r.slept_ns = 0;
	r.acq_flags = 0;
	adm->code = BRK_ADMIT_GO;

	/* 1. EXPIRED (the pace's snapshot also says whether it is a pace) */
	if (r.q.pace && brk_bucket_info(r.q.pace, &bi) == 0)
		have_bi = 1;
	wait = wait_now(&r, have_bi ? &bi : NULL, &by);
	if (past_deadline(&r, wait)) /* also a deadline already gone */
		return refuse(&r, -BRK_EEXPIRED, BRK_ADMIT_EXPIRED, ms_ceil(wait), by);
	/* 2. breaker; without a pace given, the breaker's implicit pace is
	 * not taken from there (acquire's take-or-refuse) but reserved on in
	 * step 3, fairly */
	if (r.q.breaker && !r.q.pace &&
	    brk__ipace_admit(r.q.breaker, &ipace) == 0)
		r.acq_flags |= BRK__ACQ_NO_IPACE;
	if (r.q.breaker && (rc = step_breaker(&r)) != 0)
		return rc;
	/* a probe or an ungated permit: acquire would not have paced it */
	if (ipace && (adm->permit.token_ ||
		      (adm->permit.flags_ & BRK__PERMIT_UNGATED)))
		ipace = NULL;
	/* 3. pace */
	if (r.q.pace && (rc = step_pace(&r, r.q.pace)) != 0)
		return rc;
	if (r.q.pace)
		adm->flags_ |= ADM_PACE;
	if (ipace) {
		if ((rc = step_pace(&r, ipace)) != 0)
			return rc;
		/* the token's time: the implicit pace's cut rule and the
		 * call's duration (brk_release() reports to the pace) */
		adm->permit.start_ns_ = adm->taken_at_ns;
	}
	/* 4. retry budget */
	if (r.q.budget && (rc = step_budget(&r)) != 0)
		return rc;
	/* 5. GO */
	adm->flags_ |= ADM_GO;
	if (have_bi && bi.paced)
		adm->flags_ |= ADM_PACED;
	adm->wait_ms = r.slept_ns / 1000000u;
	/* the library's own storage in the admission (rule 3): the pace to
	 * report to */
	adm->reserved_[0] = (uint64_t)(uintptr_t)r.q.pace;
	return 0;
}

int brk_admit_release(struct brk_admission *adm, int outcome, int reason,
		      int64_t retry_after_ms)
{
	brk_bucket *pace;
	int signal, rc = 0, prc;

	if (!adm)
		return -EINVAL;
	if (!(adm->flags_ & ADM_GO))
		return -BRK_ESTALE;
	adm->flags_ &= ~ADM_GO;
	pace = (adm->flags_ & ADM_PACE)
		       ? (brk_bucket *)(uintptr_t)adm->reserved_[0] : NULL;
	if (outcome < BRK_SUCCESS || outcome > BRK_THROTTLED || reason < 0 ||
	    reason >= BRK_REASON_COUNT) {
		if (adm->flags_ & ADM_PERMIT)
			brk_release(&adm->permit, outcome, reason, 0); /* frees it */
		return -EINVAL;
	}
	signal = outcome == BRK_THROTTLED
			 ? BRK_PACE_LIMITED
			 : brk_pace_signal_of(outcome, reason, retry_after_ms);
	adm->outcome = (adm->flags_ & ADM_PERMIT) && (adm->flags_ & ADM_PACED) &&
				       signal == BRK_PACE_LIMITED
			       ? BRK_THROTTLED
			       : outcome;
	if (adm->flags_ & ADM_PERMIT)
		rc = brk_release(&adm->permit, adm->outcome, reason, retry_after_ms);
	if (pace) {
		prc = brk_pace_report(pace, adm->taken_at_ns, signal, retry_after_ms);
		if (!(adm->flags_ & ADM_PERMIT) && prc < 0)
			rc = prc;
	}
	return rc;
}
