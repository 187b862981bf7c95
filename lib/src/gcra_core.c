/*
 * gcra_core.c - the GCRA primitive on one TAT word, shared by buckets
 * (gcra.c), paced buckets (pace.c) and retry budgets (budget.c).
 *
 * Algorithm: the Generic Cell Rate Algorithm (ATM Forum, Traffic
 * Management Specification 4.0, 1996), in the "virtual scheduling" form
 * Brandur Leach's redis-cell uses (github.com/brandur/redis-cell,
 * src/cell/mod.rs): one theoretical arrival time (TAT) in ns, an emission
 * interval T and a tolerance tau. A take's CAS loop is not bounded by a
 * count: a lost CAS means another writer moved the TAT (a take that won,
 * a cut, a rescale), so the take retries against the new TAT with a fresh
 * clock until it wins or the bucket refuses it; only a take that keeps
 * losing for BRK__GCRA_CONTEND_NS of the clock (a writer that never
 * stops: a broken or hostile segment) gives up with -BRK_ECONTENDED. A
 * rate limiter must not refuse for contention alone (issue 21: 25,091 of
 * 1.6 M takes of 8 processes on one bucket gave up after 256 tries).
 * The rescale loop stays bounded by BRK__CAS_TRIES. Every try re-reads
 * the clock (a stale `now` after preemption would over-admit by rate *
 * stall). All arithmetic on values read from the segment saturates; the
 * segment is untrusted.
 */
#include <math.h>

#include "killpoint.h"
#include "limits.h"

_Static_assert(BRK__T_LIMIT <= BRK__BKC_T_MAX, "T limit fits the field");
_Static_assert(BRK__T_LIMIT <= UINT64_MAX / (BRK_BUCKET_MAX_BURST + 1ULL),
	       "tau = T * burst never overflows");

uint64_t brk__interval_ns(double rate_per_s)
{
	double t;

	if (!isfinite(rate_per_s) || !(rate_per_s >= BRK_BUCKET_MIN_RATE) ||
	    !(rate_per_s <= BRK_BUCKET_MAX_RATE))
		return 0;
	t = 1e9 / rate_per_s + 0.5; /* 1.5 .. 1e13 + 0.5 */
	if (!(t >= 1.0) || t > 2.0 * (double)BRK__T_LIMIT ||
	    (uint64_t)t > BRK__T_LIMIT)
		return 0;
	return (uint64_t)t;
}

int brk__gcra_take(brk_segment *s, uint64_t *tat, uint64_t t, uint64_t tau,
		   uint32_t n, uint64_t *now_out, uint64_t *not_before)
{
	uint64_t need = (uint64_t)n * t; /* <= tau, checked by the caller */
	uint64_t now = 0, give_up = 0;

	for (;;) {
		uint64_t old, base, nw;

		/* TAT first, then the clock: a process descheduled between the
		 * two reads then only fails its CAS (and retries with a fresh
		 * clock) instead of seeing TAT - now > tau and refusing */
		old = uatomic_read(tat);
		now = brk__now(s);
		base = old > now ? old : now;
		if (base > UINT64_MAX - need) {
			/* the clock's range is exhausted: never */
			*now_out = now;
			*not_before = UINT64_MAX;
			return -BRK_ENOTOKENS;
		}
		nw = base + need;
		if (nw - now > tau) {
			/* earliest t with max(old, t) + need - t <= tau */
			*now_out = now;
			*not_before = nw - tau;
			return -BRK_ENOTOKENS;
		}
		BRK__HOOK(BRK__HOOK_GCRA_LOADED, s, 0);
		if (uatomic_cmpxchg(tat, old, nw) == old) {
			*now_out = now;
			*not_before = now;
			return 0;
		}
		/* lost: someone else moved the TAT; retry against it */
		if (give_up == 0)
			give_up = brk__sat_add(now, BRK__GCRA_CONTEND_NS);
		else if (now >= give_up)
			break;
		caa_cpu_relax();
	}
	*now_out = now;
	*not_before = now;
	return -BRK_ECONTENDED;
}

int brk__gcra_rescale(brk_segment *s, uint64_t *tat, uint64_t t_old,
		      uint64_t tau_old, uint64_t t_new, uint64_t tau_new,
		      uint64_t cap)
{
	int i;

	if (t_old == 0)
		t_old = t_new;
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t now = brk__now(s), old = uatomic_read(tat), d, nw;
		unsigned __int128 q;

		if (old <= now)
			return 0; /* full: nothing owed, nothing to scale */
		d = old - now;
		/* owes more than a bucket (and a pace's reservations'
		 * horizon @cap, breaker.h "Fair waits": a queue is legitimate
		 * up to there): heal */
		if (d > brk__sat_add(tau_old, cap))
			d = brk__sat_add(tau_old, cap);
		/* the tokens owed stay owed; round up (never grants more) */
		q = ((unsigned __int128)d * t_new + (t_old - 1)) / t_old;
		d = q > brk__sat_add(tau_new, cap) ? brk__sat_add(tau_new, cap)
						   : (uint64_t)q;
		nw = brk__sat_add(now, d);
		if (nw == old || uatomic_cmpxchg(tat, old, nw) == old)
			return 0;
		caa_cpu_relax();
	}
	return -BRK_ECONTENDED;
}

double brk__gcra_tokens(uint64_t tat, uint64_t now, uint64_t t, uint64_t tau,
			uint64_t *full_in_ns)
{
	uint64_t d = tat > now ? tat - now : 0;

	if (full_in_ns)
		*full_in_ns = d;
	if (t == 0 || d >= tau)
		return 0.0;
	/* whole tokens in integers, then the fraction: (tau - d) / t as two
	 * doubles rounds above tau / t once T * burst passes 2^53 */
	return (double)((tau - d) / t) + (double)((tau - d) % t) / (double)t;
}

