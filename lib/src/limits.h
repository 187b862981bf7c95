/*
 * limits.h - private declarations shared by gcra.c (buckets), budget.c
 * (retry budgets) and info.c: the GCRA primitive on one TAT word.
 *
 * Public brk_bucket / brk_budget handles are the same allocation as a
 * brk_breaker handle (made by brk__handle() with the record kind checked);
 * struct brk_bucket and struct brk_budget are never defined, so the public
 * types stay distinct and a pointer is only ever converted back here.
 */
#ifndef BRK_LIMITS_H
#define BRK_LIMITS_H

#include "internal.h"

static inline brk_breaker *brk__bk_h(brk_bucket *k)
{
	return (brk_breaker *)(void *)k;
}

static inline const brk_breaker *brk__bk_ch(const brk_bucket *k)
{
	return (const brk_breaker *)(const void *)k;
}

static inline brk_breaker *brk__bg_h(brk_budget *g)
{
	return (brk_breaker *)(void *)g;
}

static inline const brk_breaker *brk__bg_ch(const brk_budget *g)
{
	return (const brk_breaker *)(const void *)g;
}

static inline uint64_t brk__sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* T from a rate in tokens/s: round(1e9 / rate). 0 if out of range. */
uint64_t brk__interval_ns(double rate_per_s);

/*
 * One GCRA take of @n tokens (n * T <= tau assumed by the caller) on the
 * TAT word @tat with interval @t and tolerance @tau (both in ns).
 * Returns 0 (CAS done), -BRK_ENOTOKENS (nothing written; *not_before set),
 * -BRK_ECONTENDED.
 */
int brk__gcra_take(brk_segment *s, uint64_t *tat, uint64_t t, uint64_t tau,
		   uint32_t n, uint64_t *now_out, uint64_t *not_before);

/*
 * Rescale the TAT after the interval changed from @t_old to @t_new (and
 * the tolerance to @tau_new): TAT' = now + min(min(TAT - now,
 * tau_old + cap) * t_new / t_old, tau_new + cap), saturating; a pace
 * passes cap = BRK_PACE_MAX_HORIZON_MS in ns (its queue of reservations
 * is kept), plain buckets and budgets 0.
 * Returns 0 or -BRK_ECONTENDED.
 */
int brk__gcra_rescale(brk_segment *s, uint64_t *tat, uint64_t t_old,
		      uint64_t tau_old, uint64_t t_new, uint64_t tau_new,
		      uint64_t cap);

/* Tokens available at @now (0 .. tau / t), and ns until full. */
double brk__gcra_tokens(uint64_t tat, uint64_t now, uint64_t t, uint64_t tau,
			uint64_t *full_in_ns);

/* Snapshot helpers for info.c (the record is already known to be of the
 * right kind; @name is its validated name). */
int brk__bucket_fill(brk_segment *s, const struct brk__record *r,
		     const char *name, struct brk_bucket_info *out);
int brk__budget_fill(brk_segment *s, const struct brk__record *r,
		     const char *name, struct brk_budget_info *out);

/* ---- paced buckets (pace.c) ---- */
/* Take @n tokens from bucket @b (fresh, writable) at its rate: the
 * learned one for a pace (enum brk_priority), the settings' for a plain
 * bucket. Errors as brk_pace_take(); -EINVAL for n == 0 or n > burst. */
int brk__pace_take(brk_breaker *b, int priority, uint32_t n,
		   uint64_t *taken_at_ns, uint64_t *not_before_ns);
/* pace_ticket.c: a pace's TAT words (@p decoded) more than a legitimate
 * queue ahead of now are garbage (a hostile or broken writer): each is
 * healed, by one CAS, to now + that bound, so a take is refused for at
 * most the queue a reservation horizon can hold, not for years. The
 * bound: reservations reach now + BRK_PACE_MAX_HORIZON_MS + tau at an
 * interval >= the ceiling's; a cut re-spaces each of those slots at most
 * the floor's interval apart (the normal share's, which is wider). */
struct brk__pace;
void brk__pace_heal_far(brk_segment *s, struct brk__record *r,
			const struct brk__pace *p);
/* pace_ticket.c (breaker.h "Fair waits"): the TAT after a cut at @c (ns)
 * from interval @t_old to @t_new: the q = ceil((old - tau_old - c) /
 * t_old) slots reserved after c re-spaced, c + tau_new + q * t_new, and
 * at least @floor_tat. Pure. */
uint64_t brk__pace_respace(uint64_t old, uint64_t c, uint64_t t_old,
			   uint64_t tau_old, uint64_t t_new, uint64_t tau_new,
			   uint64_t floor_tat);
/* pace_ticket.c: the number of reservations a cut at @cut_ms (ns @c)
 * re-spaces on the shared TAT @old (interval @t_old, tolerance @tau_old
 * before the cut): those not gone by number, at most the TAT's distance
 * allows; stores BRK__BK_CUTQ (the number before the first of them), by
 * which each ticket finds its place. */
uint64_t brk__pace_cut_queue(struct brk__record *r, uint64_t cut_ms, uint64_t old,
			     uint64_t c, uint64_t t_old, uint64_t tau_old);
/* The interval in ns a take would use now (0: words corrupt or unset). */
uint64_t brk__pace_t_now(brk_segment *s, const struct brk__record *r);
/* Fill the pace fields of @out (and rate, interval, tokens at the learned
 * rate) if @r is paced; 0 for a plain bucket (nothing written). */
int brk__pace_fill(brk_segment *s, const struct brk__record *r,
		   struct brk_bucket_info *out);

/* ---- implicit paces (pace.c, implicit.c; breaker.h "Implicit pace") ---- */
/* Find (or with @create make, flagged implicit, with @fleet) the pace
 * @name; -EMEDIUMTYPE for a plain bucket of that name. */
int brk__pace_implicit_get(brk_segment *seg, const char *name, int create,
			   uint32_t fleet, brk_bucket **out);
/* The first cut of a never-cut implicit pace: GROWING from
 * BRK_PACE_IMPLICIT_START, one interval to the first token. 1 if this
 * call started it, 0 if it was started (or is declared), or an error. */
int brk__pace_implicit_start(brk_bucket *k);

/* acquire.c, closed state, when the breaker's HAS_PACE bit is set: take
 * a token from its implicit pace. 0 (taken: *@taken_at, or no usable
 * pace), or -BRK_ENOTOKENS with *@wait_ns until the (jittered) token. */
int brk__ipace_acquire(brk_breaker *b, uint64_t *taken_at, uint64_t *wait_ns);
/* brk_admit(): the breaker's implicit pace when acquire would take from
 * it (implicit_pace on, HAS_PACE set, the pace found): 0 and *@out, else
 * -ENOENT. */
int brk__ipace_admit(brk_breaker *b, brk_bucket **out);
/* release.c: a rate-limit answer makes or cuts the implicit pace and
 * turns *@outcome into BRK_THROTTLED; a success is reported to it. */
void brk__ipace_release(brk_breaker *b, uint64_t taken_at, int *outcome,
			int reason, int64_t retry_after_ms);
/* info.c: the learned rate of breaker @name's implicit pace, 0 if none. */
double brk__ipace_rate(brk_segment *s, const char *name);

#endif /* BRK_LIMITS_H */
