/*
 * bctl_exec_pace.h - `bctl exec --pace PACE`: the pace (a paced or plain
 * bucket, breaker.h "Pacing (learned rate)") that brk_admit() takes a
 * token of before CMD runs, waiting at most what is left of --wait, and
 * that brk_admit_release() reports CMD's answer to.
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
 * exec_pace_refused - "PACE: rate limited, next token in N ms (waited M
 * ms of --wait DUR)" (or "(no --wait given)") for brk_admit()'s
 * RATE_LIMITED refusal: @wait_ms its wait_ms, @waited_ns how long that
 * brk_admit() took. Returns 75.
 */
int exec_pace_refused(const struct exec_pace *p, uint64_t wait_ms,
		      uint64_t waited_ns);

/** exec_pace_cuts - the pace's cuts so far (0 if unreadable): -v says
 * when a release's report cut the rate. */
uint64_t exec_pace_cuts(const struct exec_pace *p);

#endif /* BCTL_EXEC_PACE_H */
