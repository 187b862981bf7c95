/*
 * pace_ticket.c - fair waits on a pace (breaker.h "Fair waits", issue
 * 25; docs/design/pacing.md "Fair waits"): reservations on the GCRA TAT.
 *
 * Algorithm: Go's golang.org/x/time/rate Limiter.Reserve (and Guava's
 * RateLimiter.acquire, which pays for a permit by sleeping) on the GCRA
 * of gcra_core.c: a reservation is a take whose slot may be in the
 * future, slot = max(now, TAT + T - tau), TAT += T by one CAS. The CAS
 * order is the arrival order, host-wide. The queue lives in the TAT
 * alone: a ticket is the caller's (process memory), so a dead waiter
 * leaves one unused interval and nothing to clean up.
 *
 * A cut (pace.c cut_stored, brk__pace_implicit_start) re-spaces the queue
 * at the new rate (brk__pace_respace()); a ticket notices the changed cut
 * word in brk_ticket_check() and moves its slot the same way.
 */
#include <string.h>

#include "abi.h"
#include "fresh.h"
#include "limits.h"
#include "pace_curve.h"

#define TK_MAGIC 0x544b0000u     /* "TK": a ticket this library filled */
#define TK_RESERVED 1u           /* holds a reservation */
#define TK_NORMAL_TAT 2u         /* on the normal TAT (reserve_pct > 0) */
#define TK_PACED 4u              /* the bucket is a pace (has cut words) */
#define TK_HIGH 8u               /* high priority (counted as such) */

/* private_ words */
enum { TK_STATE, TK_TAT_END, TK_NEED, TK_CUT, TK_CUTS, TK_HANDLE, TK_SEQ, TK_MADE };

#define SEQ_BITS 40u
#define SEQ_MASK ((1ULL << SEQ_BITS) - 1u)
#define CUTQ_MAKE(ms, seq) (((uint64_t)(ms) & 0xffffffu) << SEQ_BITS | ((seq) & SEQ_MASK))
#define CUTQ_TAG(w) ((w) >> SEQ_BITS)
#define CUTQ_SEQ(w) ((w) & SEQ_MASK)

int brk_ticket_init_sz(struct brk_ticket *t, size_t size)
{
	if (!t || size < BRK_TICKET_SIZE_VER0 || size > BRK_STRUCT_SIZE_MAX ||
	    size % 8u)
		return -EINVAL;
	memset(t, 0, size);
	t->size = (uint32_t)size;
	return 0;
}

static int tk_size_ok(const struct brk_ticket *t)
{
	uint32_t z = t->size ? t->size : BRK_TICKET_SIZE_VER0;

	return z >= BRK_TICKET_SIZE_VER0 && z <= BRK_STRUCT_SIZE_MAX && z % 8u == 0;
}

static uint64_t cut_ns(const brk_segment *s, uint64_t cut_ms)
{
	return brk__sat_add(s->epoch_ns, brk__ms_to_ns(cut_ms));
}

/* The interval of the TAT word a reservation uses, for the decoded pace
 * @p at @ms: the learned T, or the normal T on the normal word. */
static uint64_t word_t(const struct brk__pace *p, uint64_t ms, int normal)
{
	uint64_t t = brk__pace_rate_t(p, ms);

	return normal ? brk__pace_normal_t(t, p->reserve_pct) : t;
}

/* The settings as they are now: words parsed (1: plain bucket). */
static int tk_load(const struct brk__record *r, uint64_t cut_w, struct brk__pace *p)
{
	return brk__pace_parse(uatomic_read(&brk__xw(r)[BRK__BK_CFG]),
			       uatomic_read(&brk__xw(r)[BRK__BK_PACE]), cut_w, p);
}

/* The interval of a reservation on a pace's word whose TAT is @old at
 * @now: the rate AT ITS SLOT, not now. A take at x passes when
 * TAT - (burst - 1) x T(x) <= x (gcra_core.c), so a queued slot y is the
 * fixed point y = old - (burst - 1) x T(y), and T(y) the interval after
 * it, as a take-and-retry at y would have used. Between cuts the rate
 * only grows (pace_curve.c: hold, then probe), so T(y) <= T(now) and the
 * iteration from T(now) falls to the fixed point (a few steps are within
 * ns of it; a step short errs slower). Without it a queue reserved during
 * a hold went out at the held rate for a queue's length after the probe
 * began: the probe reached the ceiling before a faster request was sent,
 * and the pace never heard the upstream's limit. */
#define TK_SLOT_ITER 4
static uint64_t slot_t(const brk_segment *s, const struct brk__pace *p, int normal,
		       uint64_t old, uint64_t now)
{
	uint64_t t = word_t(p, brk__rel_ms(s, now), normal);
	int i;

	for (i = 0; i < TK_SLOT_ITER; i++) {
		unsigned __int128 back = (unsigned __int128)(p->burst - 1u) * t;
		uint64_t y, tn;

		if (old <= now || back >= old - now)
			y = now; /* no queue: the slot is now */
		else
			y = old - (uint64_t)back;
		if (y <= now)
			break;
		tn = word_t(p, brk__rel_ms(s, y), normal);
		if (tn >= t)
			break;
		t = tn;
	}
	return t;
}

/*
 * Reserve one slot on @tat no later than now + @horizon: 0 (*@at the
 * slot, *@end the TAT written, *@t_used its interval), or -BRK_ENOTOKENS
 * (*@at when it would have been; nothing written), or -BRK_ECONTENDED.
 * The interval: @t (tolerance @tau) on a plain bucket (@p NULL), else the
 * rate of the pace @p at the slot (slot_t()). The CAS loop retries
 * against the TAT another writer moved, as brk__gcra_take() (bounded by
 * BRK__GCRA_CONTEND_NS).
 */
static int reserve_on(brk_segment *s, uint64_t *tat, const struct brk__pace *p,
		      int normal, uint64_t t, uint64_t tau, uint64_t horizon,
		      uint64_t *at, uint64_t *end, uint64_t *t_used)
{
	uint64_t give_up = 0;

	for (;;) {
		uint64_t old = uatomic_read(tat), now = brk__now(s), base, nw, slot;

		if (p) {
			t = slot_t(s, p, normal, old, now);
			tau = brk__pace_tau(t, p->burst);
		}
		base = old > now ? old : now;
		nw = brk__sat_add(base, t);
		slot = nw - now > tau ? nw - tau : now;
		*at = slot;
		*t_used = t;
		if (nw == UINT64_MAX || slot - now > horizon)
			return -BRK_ENOTOKENS;
		if (uatomic_cmpxchg(tat, old, nw) == old) {
			*end = nw;
			return 0;
		}
		if (give_up == 0)
			give_up = brk__sat_add(now, BRK__GCRA_CONTEND_NS);
		else if (now >= give_up)
			return -BRK_ECONTENDED;
		caa_cpu_relax();
	}
}

/* Reserve for @t on the word @prio picks; fills the private words. */
static int tk_reserve(brk_breaker *b, int priority, uint64_t horizon,
		      struct brk_ticket *t, int force_shared)
{
	brk_segment *s = b->seg;
	struct brk__record *r = brk__brec(b);
	uint64_t cuts = uatomic_read(&brk__xw(r)[BRK__BK_CUTS]);
	uint64_t cut_w = uatomic_read(&brk__xw(r)[BRK__BK_CUT]);
	uint64_t tt, tau, at = 0, end = 0, ms, cap;
	struct brk__pace p;
	uint32_t st = TK_MAGIC | TK_RESERVED;
	int rc, normal;

	rc = tk_load(r, cut_w, &p);
	if (rc < 0)
		return rc;
	cap = brk__ms_to_ns(BRK_PACE_MAX_HORIZON_MS);
	if (horizon > cap)
		horizon = cap;
	ms = brk__rel_ms(s, brk__now(s));
	if (rc == 1) { /* plain: one TAT at the settings' rate */
		normal = 0;
		tt = p.ceil_t;
		tau = tt * p.burst;
	} else {
		st |= TK_PACED;
		normal = !force_shared && priority == BRK_PRIORITY_NORMAL &&
			 p.reserve_pct > 0;
		tt = word_t(&p, ms, normal);
		tau = brk__pace_tau(tt, p.burst);
		if (priority == BRK_PRIORITY_HIGH)
			st |= TK_HIGH;
	}
	if (normal)
		st |= TK_NORMAL_TAT;
	if (st & TK_PACED)
		brk__pace_heal_far(s, r, &p);
	rc = reserve_on(s, &brk__xw(r)[normal ? BRK__BK_TAT_NORMAL : BRK__BK_TAT],
			(st & TK_PACED) ? &p : NULL, normal, tt, tau, horizon, &at,
			&end, &tt);
	t->at_ns = at;
	if (rc) {
		if (rc == -BRK_ENOTOKENS) {
			uatomic_inc(&brk__xw(r)[BRK__BK_DENIED]);
			if (st & TK_PACED)
				uatomic_set(&brk__xw(r)[BRK__BK_LAST_DENIED_MS], ms + 1u);
		}
		t->private_[TK_STATE] = 0;
		return rc;
	}
	t->priority = (uint32_t)priority;
	t->taken_at_ns = 0;
	t->private_[TK_STATE] = st;
	t->private_[TK_TAT_END] = end;
	t->private_[TK_NEED] = tt;
	t->private_[TK_CUT] = cut_w;
	t->private_[TK_CUTS] = cuts;
	t->private_[TK_HANDLE] = (uint64_t)(uintptr_t)b;
	/* its number in the shared queue: a cut re-spaces by it */
	t->private_[TK_SEQ] = (st & TK_PACED) && !normal
				      ? uatomic_add_return(&brk__xw(r)[BRK__BK_RESV], 1u)
				      : 0;
	return 0;
}

int brk_pace_reserve(brk_bucket *k, int priority, uint64_t horizon_ns,
		     struct brk_ticket *t)
{
	brk_breaker *b = brk__bk_h(k);
	int rc;

	if (!k || !t || !tk_size_ok(t) ||
	    (priority != BRK_PRIORITY_NORMAL && priority != BRK_PRIORITY_HIGH))
		return -EINVAL;
	if ((t->private_[TK_STATE] & ~0xffffu) == TK_MAGIC &&
	    (t->private_[TK_STATE] & TK_RESERVED))
		return -EINVAL; /* still holds one: check or cancel it first */
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	rc = tk_reserve(b, priority, horizon_ns, t, 0);
	if (rc == 0)
		t->private_[TK_MADE] = brk__now(b->seg); /* tk_done() */
	return rc;
}

static int tk_held(const brk_breaker *b, const struct brk_ticket *t)
{
	uint64_t st = t->private_[TK_STATE];

	return (st & ~0xffffu) == TK_MAGIC && (st & TK_RESERVED) &&
	       t->private_[TK_HANDLE] == (uint64_t)(uintptr_t)b;
}

/* Give the slot back if the TAT is still the value the ticket wrote. */
static int give_back_last(struct brk__record *r, const struct brk_ticket *t)
{
	uint64_t *tat = &brk__xw(r)[t->private_[TK_STATE] & TK_NORMAL_TAT
					    ? BRK__BK_TAT_NORMAL : BRK__BK_TAT];
	uint64_t end = t->private_[TK_TAT_END], need = t->private_[TK_NEED];

	return end >= need && uatomic_cmpxchg(tat, end, end - need) == end;
}

/*
 * The cut word changed from the ticket's: move its slot as the cut moved
 * the queue (brk__pace_respace): position i = ceil((slot - c) / T_own),
 * T_own the interval it reserved with, new slot c + i x T_new. Between
 * cuts the rate only grows, so a later reservation's T is at most an
 * earlier one's and positions stay distinct and in order; with T_own
 * (not the rate at the cut, the smallest) a queue reserved while the rate
 * grew keeps few gaps. 0 (moved, or nothing to move), 1 (two cuts or more
 * since the reservation: reserve again at the end), <0.
 */
static int tk_follow_cut(brk_breaker *b, struct brk_ticket *t, uint64_t cut_w)
{
	struct brk__record *r = brk__brec(b);
	uint64_t cuts = uatomic_read(&brk__xw(r)[BRK__BK_CUTS]);
	int normal = (t->private_[TK_STATE] & TK_NORMAL_TAT) != 0;
	struct brk__pace pn;
	uint64_t c_ms, c, t_old = t->private_[TK_NEED], t_new;
	int rc;

	rc = tk_load(r, cut_w, &pn);
	if (rc)
		return rc < 0 ? rc : -BRK_ECORRUPT;
	c_ms = BRK__CUT_MS(cut_w);
	c = cut_ns(b->seg, c_ms);
	t_new = word_t(&pn, c_ms, normal);
	if (t->private_[TK_SEQ]) {
		/* the cut's queue head (brk__pace_cut_queue): position by
		 * number, exact whatever the spacing and however many cuts */
		uint64_t w = uatomic_read(&brk__xw(r)[BRK__BK_CUTQ]);

		if (CUTQ_TAG(w) == (c_ms & 0xffffffu)) {
			int64_t i = (int64_t)(((t->private_[TK_SEQ] - CUTQ_SEQ(w)) & SEQ_MASK)
					      << (64u - SEQ_BITS)) >> (64u - SEQ_BITS);
			/* its place by time (at T_own: an over-count, as the
			 * slots before it were at least T_own apart) bounds its
			 * place by number: a larger one is a garbage word */
			uint64_t i_time = t->at_ns > c && t_old
						  ? (t->at_ns - c + t_old - 1u) / t_old : 0;

			if (i > 0 && (uint64_t)i > i_time)
				i = (int64_t)i_time;
			if (i > 0) {
				unsigned __int128 a = (unsigned __int128)(uint64_t)i * t_new + c;

				t->at_ns = a > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)a;
				t->private_[TK_TAT_END] =
					brk__sat_add(t->at_ns, brk__pace_tau(t_new, pn.burst));
				t->private_[TK_NEED] = t_new;
			} else {
				t->private_[TK_TAT_END] = 0; /* due before the cut */
			}
			t->private_[TK_CUT] = cut_w;
			t->private_[TK_CUTS] = cuts;
			return 0;
		}
	}
	if (cuts - t->private_[TK_CUTS] != 1u)
		return 1;
	if (t->at_ns > c && t_old) {
		uint64_t i = (t->at_ns - c + t_old - 1u) / t_old;
		unsigned __int128 a = (unsigned __int128)i * t_new + c;

		t->at_ns = a > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)a;
		t->private_[TK_TAT_END] =
			brk__sat_add(t->at_ns, brk__pace_tau(t_new, pn.burst));
		t->private_[TK_NEED] = t_new;
	} else {
		t->private_[TK_TAT_END] = 0; /* due before the cut: not queued */
	}
	t->private_[TK_CUT] = cut_w;
	t->private_[TK_CUTS] = cuts;
	return 0;
}

static void tk_done(brk_breaker *b, struct brk_ticket *t, uint64_t now)
{
	struct brk__record *r = brk__brec(b);

	uint64_t cut_w = uatomic_read(&brk__xw(r)[BRK__BK_CUT]);
	uint64_t made = t->private_[TK_MADE];

	t->private_[TK_STATE] &= ~(uint64_t)TK_RESERVED;
	t->taken_at_ns = now;
	/* A ticket reserved before the pace's last cut reports its
	 * reservation's time: it was queued at the rate that cut, and the cut
	 * re-spaced it, so a 429 to it is an answer of before the cut, which
	 * the cut rule ignores (pace.c pace_cut(): take-and-retry's rule for a
	 * token taken before the cut). Else each ticket of the queue a cut
	 * re-spaced into a still-drained upstream cut again, and the rate fell
	 * below the limit (it_pace_nginx: 3.45 learned against nginx's 5,
	 * one run in three). */
	if ((t->private_[TK_STATE] & TK_PACED) && cut_w != 0 && made != 0 &&
	    made < now && brk__rel_ms(b->seg, made) < BRK__CUT_MS(cut_w))
		t->taken_at_ns = made;
	if (t->private_[TK_SEQ]) {
		/* the highest number gone: the dead ones before it are past */
		uint64_t *sw = &brk__xw(r)[BRK__BK_SERVED], seq = t->private_[TK_SEQ];
		int i;

		for (i = 0; i < BRK__CAS_TRIES; i++) {
			uint64_t old = uatomic_read(sw);

			if ((int64_t)(seq - old) <= 0 ||
			    uatomic_cmpxchg(sw, old, seq) == old)
				break;
			caa_cpu_relax();
		}
	}
	uatomic_inc(&brk__xw(r)[BRK__BK_TAKEN]);
	(void)uatomic_add_return(&brk__xw(r)[BRK__BK_TOKENS], 1u);
	if (t->private_[TK_STATE] & TK_HIGH)
		uatomic_inc(&brk__xw(r)[BRK__BK_HIGH]);
}

int brk_ticket_check(brk_bucket *k, struct brk_ticket *t)
{
	brk_breaker *b = brk__bk_h(k);
	struct brk__record *r;
	uint64_t now, st;
	int rc;

	if (!k || !t || !tk_held(b, t))
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	st = t->private_[TK_STATE];
	if (st & TK_PACED) {
		uint64_t cut_w = uatomic_read(&brk__xw(r)[BRK__BK_CUT]);

		if (cut_w != t->private_[TK_CUT]) {
			rc = tk_follow_cut(b, t, cut_w);
			if (rc < 0)
				return rc;
			if (rc == 1) {
				/* two cuts or more: nobody can replay them */
				(void)give_back_last(r, t);
				rc = tk_reserve(b, (int)t->priority, UINT64_MAX, t, 0);
				if (rc)
					return rc == -BRK_ENOTOKENS ? -BRK_ECONTENDED : rc;
			}
		}
	}
	now = brk__now(b->seg);
	if (t->at_ns > now)
		return 1;
	if (st & TK_NORMAL_TAT) {
		/* the normal share's slot: now the shared TAT, for real */
		struct brk__pace p;
		uint64_t tt, nb = 0, at = 0;

		rc = tk_load(r, uatomic_read(&brk__xw(r)[BRK__BK_CUT]), &p);
		if (rc)
			return rc < 0 ? rc : -BRK_ECORRUPT;
		tt = brk__pace_rate_t(&p, brk__rel_ms(b->seg, now));
		rc = brk__gcra_take(b->seg, &brk__xw(r)[BRK__BK_TAT], tt,
				    brk__pace_tau(tt, p.burst), 1, &at, &nb);
		if (rc == 0) {
			tk_done(b, t, at);
			return 0;
		}
		if (rc != -BRK_ENOTOKENS)
			return rc;
		/* high priority used the slot: the next one on the shared TAT */
		rc = tk_reserve(b, (int)t->priority, UINT64_MAX, t, 1);
		if (rc)
			return rc == -BRK_ENOTOKENS ? -BRK_ECONTENDED : rc;
		return t->at_ns > brk__now(b->seg) ? 1 : brk_ticket_check(k, t);
	}
	tk_done(b, t, now);
	return 0;
}

int brk_ticket_cancel(brk_bucket *k, struct brk_ticket *t)
{
	brk_breaker *b = brk__bk_h(k);
	int rc = 0;

	if (!k || !t)
		return -EINVAL;
	if (!tk_held(b, t)) {
		uint64_t st = t->private_[TK_STATE];

		/* a reservation of another pace: not @k's to cancel, and the
		 * ticket stays as it was (it is not finished) */
		return (st & ~0xffffu) == TK_MAGIC && (st & TK_RESERVED) ? -EINVAL : 0;
	}
	if (!b->seg->readonly && brk__fresh(b) == 0)
		rc = give_back_last(brk__brec(b), t);
	t->private_[TK_STATE] &= ~(uint64_t)TK_RESERVED;
	return rc;
}

void brk__pace_heal_far(brk_segment *s, struct brk__record *r,
			const struct brk__pace *p)
{
	int w;

	for (w = 0; w < 2; w++) {
		/* the word's intervals at the ceiling and at the floor */
		uint64_t ct = w ? brk__pace_normal_t(p->ceil_t, p->reserve_pct) : p->ceil_t;
		uint64_t ft = w ? brk__pace_normal_t(p->floor_t, p->reserve_pct) : p->floor_t;
		uint64_t *tat = &brk__xw(r)[w ? BRK__BK_TAT_NORMAL : BRK__BK_TAT];
		uint64_t old = uatomic_read(tat), now = brk__now(s), lim;
		unsigned __int128 q;

		if (ct == 0 || old <= now)
			continue;
		q = (unsigned __int128)brk__ms_to_ns(BRK_PACE_MAX_HORIZON_MS) * ft / ct +
		    2u * (unsigned __int128)brk__pace_tau(ft, p->burst) + ft;
		lim = q > (UINT64_MAX >> 1) ? (UINT64_MAX >> 1) : (uint64_t)q;
		if (old - now > lim)
			(void)uatomic_cmpxchg(tat, old, brk__sat_add(now, lim));
	}
}

uint64_t brk__pace_cut_queue(struct brk__record *r, uint64_t cut_ms, uint64_t old,
			     uint64_t c, uint64_t t_old, uint64_t tau_old)
{
	uint64_t n = uatomic_read(&brk__xw(r)[BRK__BK_RESV]);
	uint64_t served = uatomic_read(&brk__xw(r)[BRK__BK_SERVED]);
	uint64_t q = 0, live = (int64_t)(n - served) > 0 ? n - served : 0;

	/* reserved slots after c by the TAT's distance at the smallest T (an
	 * over-estimate when they were spaced wider) ... */
	if (t_old && old > brk__sat_add(c, tau_old))
		q = (old - tau_old - c + t_old - 1u) / t_old;
	/* ... and by number: reserved, not gone (dead ones included once) */
	if (live < q)
		q = live;
	uatomic_set(&brk__xw(r)[BRK__BK_CUTQ], CUTQ_MAKE(cut_ms, n - q));
	return q;
}

uint64_t brk__pace_respace(uint64_t old, uint64_t c, uint64_t t_old,
			   uint64_t tau_old, uint64_t t_new, uint64_t tau_new,
			   uint64_t floor_tat)
{
	uint64_t nw = floor_tat;

	if (t_old && old > brk__sat_add(c, tau_old)) {
		uint64_t q = (old - tau_old - c + t_old - 1u) / t_old;
		unsigned __int128 v = (unsigned __int128)q * t_new +
				      brk__sat_add(c, tau_new);

		v = v > UINT64_MAX / 2 ? UINT64_MAX / 2 : v;
		if ((uint64_t)v > nw)
			nw = (uint64_t)v;
	}
	return nw;
}
