/*
 * bctl_exec_pace.h - `bctl exec --pace PACE`: take from a pace (a paced
 * or plain bucket, breaker.h "Pacing (learned rate)") before CMD runs,
 * waiting at most what is left of --wait, and report CMD's answer to it.
 */
#ifndef BCTL_EXEC_PACE_H
#define BCTL_EXEC_PACE_H

#include <signal.h>
#include <stdint.h>

#include "bctl.h"
#include "bctl_outcome.h"

struct exec_pace {
	const char *name;      /* --pace */
	const char *wait_arg;  /* --wait as given, or NULL */
	brk_segment *seg;
	brk_bucket *k;
	uint64_t taken_at_ns;  /* segment clock: when the token was taken */
	int paced;             /* brk_bucket_info().paced: a real pace */
};

/** exec_sleep_ns - sleep @ns unless a signal of @sigs (blocked) comes
 * first: returns it, or 0. */
int exec_sleep_ns(const sigset_t *sigs, uint64_t ns);

/** exec_pace_open - find the pace @p->name in @seg (never creates: its
 * ceiling is set with `bctl pace`) and whether it is paced (@p->paced) or
 * a plain bucket. 0, or an exit status after printing the error (1:
 * absent, wrong kind, segment error). */
int exec_pace_open(const struct bctl *g, brk_segment *seg,
		   struct exec_pace *p);

/**
 * exec_pace_take - take one token, sleeping to brk_bucket_wake_ns()
 * between tries while the next token is due within *@left ms (what is
 * left of --wait; decremented by the time slept). 0 (taken, taken_at_ns
 * set), 75 after "PACE: rate limited, next token in N ms (waited M ms of
 * --wait DUR)", 128 + signal, or 1 on an error.
 */
int exec_pace_take(const struct bctl *g, struct exec_pace *p,
		   const sigset_t *sigs, uint64_t *left);

/**
 * exec_pace_verdict - what a paced run reports: a rate-limit answer (429,
 * or 503/529 with a Retry-After: brk_pace_signal_of()) is LIMITED; if
 * @p is a real pace (@p->paced) the breaker's outcome becomes
 * BRK_THROTTLED (it counts neither way; the pace's cut replaces the
 * cooling). With a plain bucket the answer stays a rate_limited failure
 * (brk_admit_release()'s rule: only a pace learns from a 429, so only a
 * pace may take it off the breaker). Returns the enum brk_pace_signal.
 */
int exec_pace_verdict(const struct exec_pace *p, struct exec_verdict *v);

/** exec_pace_report - report @signal (exec_pace_verdict()) with the
 * token's taken_at; -v prints a cut. */
void exec_pace_report(const struct bctl *g, const struct exec_pace *p,
		      int signal, int64_t retry_after_ms);

#endif /* BCTL_EXEC_PACE_H */
