/*
 * pace.c - paced buckets: a GCRA bucket whose rate is learned from the
 * upstream's rate-limit answers (breaker.h "Pacing (learned rate)";
 * docs/design/pacing.md "Pacing (learned rate)").
 *
 * Words (layout.h enum brk__bucket_ext): the settings word holds the
 * CEILING's interval and the burst (so a pace is a bucket to every plain
 * bucket call), BRK__BK_PACE the PACED bit, reserve and floor interval,
 * BRK__BK_CUT the last cut (ms, w_max). The rate is a pure function of
 * those and the clock (pace_curve.c); a take CASes only TAT words; a
 * report CASes the cut word (LIMITED) or the estimate word (OK).
 *
 * Calls: gcra_core.c (the GCRA primitive), pace_curve.c (arithmetic),
 * the record index and events; never gcra.c, which calls here.
 */
#include <math.h>
#include <string.h>

#include "abi.h"
#include "fresh.h"
#include "limits.h"
#include "ident.h"
#include "killpoint.h"
#include "pace_curve.h"

static void pace_load(const struct brk__record *r, uint64_t w[3])
{
	w[0] = uatomic_read(&brk__xw(r)[BRK__BK_CFG]);
	w[1] = uatomic_read(&brk__xw(r)[BRK__BK_PACE]);
	w[2] = uatomic_read(&brk__xw(r)[BRK__BK_CUT]);
}

int brk_pace_config_init_sz(struct brk_pace_config *c, size_t size)
{
	if (!c || size < BRK_PACE_CONFIG_SIZE_VER0 || size > BRK_STRUCT_SIZE_MAX)
		return -EINVAL;
	memset(c, 0, size);
	c->size = (uint32_t)size;
	c->burst = BRK_PACE_DEFAULT_BURST;
	c->reserve_pct = BRK_PACE_DEFAULT_RESERVE_PCT;
	return 0;
}

/* The caller's config, with defaults for fields beyond its size. */
static int pace_config_in(const struct brk_pace_config *c, struct brk_pace_config *k)
{
	size_t usize;

	if (!c)
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	k->burst = BRK_PACE_DEFAULT_BURST;
	usize = c->size ? c->size : BRK_PACE_CONFIG_SIZE_VER0;
	return brk__struct_in(k, sizeof(*k), c, usize);
}

static double default_floor(double ceiling)
{
	double f = ceiling / BRK_PACE_DEFAULT_FLOOR_DIV;

	return f < BRK_BUCKET_MIN_RATE ? BRK_BUCKET_MIN_RATE : f;
}

/* Words from settings: -EINVAL naming nothing (the doc names the bounds). */
static int pace_words(double ceiling, double floor, uint32_t burst,
		      uint32_t reserve, uint32_t fleet, uint64_t *cfg, uint64_t *pace)
{
	uint64_t ct = brk__interval_ns(ceiling), ft;

	if (ct == 0 || burst < 1 || burst > BRK_BUCKET_MAX_BURST ||
	    reserve > BRK_PACE_MAX_RESERVE_PCT || fleet > 1)
		return -EINVAL;
	if (floor == 0.0)
		floor = default_floor(ceiling);
	ft = brk__interval_ns(floor);
	if (ft == 0 || !(floor <= ceiling) || ft < ct)
		return -EINVAL;
	*cfg = BRK__BKC_MAKE(ct, burst);
	*pace = BRK__PC_MAKE(ft, reserve) | (fleet ? BRK__PC_FLEET : 0);
	return 0;
}

int brk_pace_get(brk_segment *seg, const char *name,
		 const struct brk_pace_config *c, brk_bucket **out)
{
	struct brk_pace_config k;
	uint64_t cfg, pace;
	brk_breaker *b;
	struct brk__record *r;
	int rc;

	if (!seg || !out)
		return -EINVAL;
	rc = pace_config_in(c, &k);
	if (rc)
		return rc;
	if (k.burst == 0)
		k.burst = BRK_PACE_DEFAULT_BURST; /* a hand-zeroed config */
	rc = pace_words(k.ceiling_per_s, k.floor_per_s, k.burst, k.reserve_pct,
			k.fleet, &cfg, &pace);
	if (rc)
		return rc;
	{
		struct brk__init init = { NULL, 2, { { BRK__BK_PACE, pace },
						     { BRK__BK_CFG, cfg } } };

		rc = brk__handle(seg, name, 1, BRK_KIND_BUCKET, &init, &b);
	}
	if (rc)
		return rc;
	r = brk__brec(b);
	/* a creator that died before publishing left both words 0: fill them
	 * (the pace word first, so no taker sees a plain bucket) */
	if (!seg->readonly && uatomic_read(&brk__xw(r)[BRK__BK_CFG]) == 0) {
		(void)uatomic_cmpxchg(&brk__xw(r)[BRK__BK_PACE], 0, pace);
		(void)uatomic_cmpxchg(&brk__xw(r)[BRK__BK_CFG], 0, cfg);
	}
	if (!(uatomic_read(&brk__xw(r)[BRK__BK_PACE]) & BRK__PC_PACED))
		return -EMEDIUMTYPE; /* a plain bucket of that name */
	*out = (brk_bucket *)(void *)b;
	return 0;
}

/*
 * Write the settings word @cfg and the pace word @pace (read as w[0],
 * w[1]) with two CASes, in the order that keeps the pair valid after each
 * (floor interval >= ceiling interval): a take, report or info between
 * them would otherwise find the pace corrupt (raising ceiling and floor
 * together, the new floor with the old ceiling). The settings word first
 * when the old floor is not faster than the new ceiling, else the pace
 * word: one of the two always is (old floor < new ceiling <= new floor
 * means the new floor is slower than the old ceiling). 0, or -1 if a CAS
 * lost (re-read and redo).
 */
static int update_words(struct brk__record *r, const uint64_t w[3], uint64_t cfg,
			uint64_t pace)
{
	int cfg_first = BRK__PC_FLOOR_T(w[1]) >= BRK__BKC_T(cfg);
	uint64_t *cw = &brk__xw(r)[BRK__BK_CFG], *pw = &brk__xw(r)[BRK__BK_PACE];
	uint64_t *first = cfg_first ? cw : pw, *second = cfg_first ? pw : cw;
	uint64_t fo = cfg_first ? w[0] : w[1], fn = cfg_first ? cfg : pace;
	uint64_t so = cfg_first ? w[1] : w[0], sn = cfg_first ? pace : cfg;

	if (fn != fo && uatomic_cmpxchg(first, fo, fn) != fo)
		return -1;
	BRK__HOOK(BRK__HOOK_PACE_HALF, NULL, 0);
	if (sn != so && uatomic_cmpxchg(second, so, sn) != so)
		return -1;
	return 0;
}

static int pace_update_locked(brk_breaker *b, const struct brk_pace_config *c,
			      unsigned fields);

int brk_pace_update(brk_bucket *k, const struct brk_pace_config *c, unsigned fields)
{
	const unsigned all = BRK_PACE_F_CEILING | BRK_PACE_F_FLOOR |
			     BRK_PACE_F_BURST | BRK_PACE_F_RESERVE |
			     BRK_PACE_F_FLEET;
	brk_breaker *b = brk__bk_h(k);
	struct brk_pace_config in;
	int rc;

	if (!k || (fields & ~all))
		return -EINVAL;
	rc = pace_config_in(c, &in);
	if (rc)
		return rc;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	if (fields == 0)
		return 0;
	/* Updaters one at a time: each checks its values against the other
	 * word as it reads it and may write only its own word, so two of them
	 * (a ceiling-only and a floor-only one) could both succeed and leave
	 * the floor above the ceiling, the pace corrupt for good. Updates are
	 * rare (an operator, a deploy); takes never wait for the lock, and
	 * update_words() keeps every state they can see valid. */
	rc = brk__index_lock(b->seg);
	if (rc)
		return rc;
	rc = pace_update_locked(b, &in, fields);
	brk__index_unlock(b->seg);
	return rc;
}

static int pace_update_locked(brk_breaker *b, const struct brk_pace_config *c,
			      unsigned fields)
{
	const struct brk_pace_config in = *c;
	struct brk__record *r = brk__brec(b);
	int i, rc;

	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t w[3], cfg, pace;
		struct brk__pace p;
		double ceiling, floor;
		uint32_t burst, reserve, fleet;

		pace_load(r, w);
		BRK__HOOK(BRK__HOOK_PACE_READ, NULL, 0);
		rc = brk__pace_parse(w[0], w[1], 0, &p);
		if (rc == 1)
			return -EMEDIUMTYPE;
		if (rc)
			return rc;
		ceiling = fields & BRK_PACE_F_CEILING ? in.ceiling_per_s : 1e9 / (double)p.ceil_t;
		floor = fields & BRK_PACE_F_FLOOR ? in.floor_per_s : 1e9 / (double)p.floor_t;
		burst = fields & BRK_PACE_F_BURST ? in.burst : p.burst;
		reserve = fields & BRK_PACE_F_RESERVE ? in.reserve_pct : p.reserve_pct;
		fleet = fields & BRK_PACE_F_FLEET ? in.fleet : p.fleet;
		if ((fields & BRK_PACE_F_CEILING) && !(fields & BRK_PACE_F_FLOOR) &&
		    floor > ceiling)
			floor = default_floor(ceiling); /* kept floor above: follow */
		rc = pace_words(ceiling, floor, burst, reserve, fleet, &cfg, &pace);
		if (rc)
			return rc;
		if (!(fields & BRK_PACE_F_FLOOR) && !(fields & BRK_PACE_F_CEILING))
			pace = (pace & ~BRK__BKC_T_MAX) | p.floor_t; /* exact */
		if (!(fields & (BRK_PACE_F_CEILING | BRK_PACE_F_BURST)))
			cfg = w[0];
		else if (!(fields & BRK_PACE_F_CEILING))
			cfg = BRK__BKC_MAKE(p.ceil_t, burst);
		if (update_words(r, w, cfg, pace) != 0) {
			caa_cpu_relax();
			continue; /* the first may be the new one already: redo */
		}
		/* a ceiling raised keeps the TAT: the slots reserved at the
		 * old rate stay where they are (tickets are the callers'), and
		 * a rescaled TAT would put new reservations between them, over
		 * the new ceiling (pacing.md "Fair waits"); a lower ceiling or
		 * another burst rescales what is owed */
		if (cfg != w[0] && BRK__BKC_T(cfg) >= p.ceil_t)
			return brk__gcra_rescale(b->seg, &brk__xw(r)[BRK__BK_TAT], p.ceil_t,
						 brk__pace_tau(p.ceil_t, p.burst),
						 BRK__BKC_T(cfg),
						 brk__pace_tau(BRK__BKC_T(cfg), burst),
						 brk__ms_to_ns(BRK_PACE_MAX_HORIZON_MS));
		return 0;
	}
	return -BRK_ECONTENDED;
}

/* Give back one normal-priority take: TAT_NORMAL -= need, never below now.
 * A lost give-back errs towards fewer takes. */
static void give_back(brk_segment *s, uint64_t *tat, uint64_t need)
{
	int i;

	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(tat), now = brk__now(s), nw;

		if (old <= now)
			return;
		nw = old - now > need ? old - need : now;
		if (uatomic_cmpxchg(tat, old, nw) == old)
			return;
		caa_cpu_relax();
	}
}

uint64_t brk__pace_t_now(brk_segment *s, const struct brk__record *r)
{
	struct brk__pace p;
	uint64_t w[3];
	int rc;

	pace_load(r, w);
	rc = brk__pace_parse(w[0], w[1], w[2], &p);
	if (rc < 0)
		return 0;
	if (rc == 1)
		return p.ceil_t;
	return brk__pace_rate_t(&p, brk__rel_ms(s, brk__now(s)));
}

int brk__pace_take(brk_breaker *b, int priority, uint32_t n,
		   uint64_t *taken_at_ns, uint64_t *not_before_ns)
{
	brk_segment *s = b->seg;
	struct brk__record *r = brk__brec(b);
	uint64_t w[3], t, tau, now = 0, nb = 0;
	struct brk__pace p;
	int rc, paced;

	pace_load(r, w);
	rc = brk__pace_parse(w[0], w[1], w[2], &p);
	if (rc < 0)
		return rc;
	paced = rc == 0;
	if (n == 0 || n > p.burst)
		return -EINVAL;
	if (paced) {
		brk__pace_heal_far(s, r, &p);
		t = brk__pace_rate_t(&p, brk__rel_ms(s, brk__now(s)));
		tau = brk__pace_tau(t, p.burst);
	} else {
		t = p.ceil_t; /* plain: the settings word's T */
		tau = t * p.burst;
		priority = BRK_PRIORITY_HIGH; /* one TAT */
	}
	if (paced && priority == BRK_PRIORITY_NORMAL && p.reserve_pct > 0) {
		uint64_t tn = brk__pace_normal_t(t, p.reserve_pct);

		rc = brk__gcra_take(s, &brk__xw(r)[BRK__BK_TAT_NORMAL], tn,
				    brk__pace_tau(tn, p.burst), n, &now, &nb);
		if (rc == 0) {
			rc = brk__gcra_take(s, &brk__xw(r)[BRK__BK_TAT], t, tau, n,
					    &now, &nb);
			if (rc)
				give_back(s, &brk__xw(r)[BRK__BK_TAT_NORMAL],
					  (uint64_t)n * tn);
		}
	} else {
		rc = brk__gcra_take(s, &brk__xw(r)[BRK__BK_TAT], t, tau, n, &now, &nb);
	}
	if (rc == 0) {
		uatomic_inc(&brk__xw(r)[BRK__BK_TAKEN]);
		(void)uatomic_add_return(&brk__xw(r)[BRK__BK_TOKENS], (uint64_t)n);
		if (paced && priority == BRK_PRIORITY_HIGH)
			uatomic_inc(&brk__xw(r)[BRK__BK_HIGH]);
		if (taken_at_ns)
			*taken_at_ns = now;
	} else {
		uatomic_inc(&brk__xw(r)[BRK__BK_DENIED]);
		if (paced)
			uatomic_set(&brk__xw(r)[BRK__BK_LAST_DENIED_MS],
				    brk__rel_ms(s, now) + 1u);
	}
	if (not_before_ns)
		*not_before_ns = nb;
	return rc;
}

int brk_pace_take(brk_bucket *k, int priority, uint64_t *taken_at_ns,
		  uint64_t *not_before_ns)
{
	brk_breaker *b = brk__bk_h(k);

	if (!k || (priority != BRK_PRIORITY_NORMAL && priority != BRK_PRIORITY_HIGH))
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	return brk__pace_take(b, priority, 1, taken_at_ns, not_before_ns);
}

/* One success into both estimates (bounded CAS loops; a lost one counts
 * one success less: a lower estimate, a deeper cut, never more takes). */
static void est_add(struct brk__record *r, uint64_t now_ms)
{
	uint64_t *ew = &brk__xw(r)[BRK__BK_EST], *sw = &brk__xw(r)[BRK__BK_SINCE];
	uint64_t cut = uatomic_read(&brk__xw(r)[BRK__BK_CUT]);
	int i, idle = 0;

	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(ew);

		if (uatomic_cmpxchg(ew, old, brk__pace_est_add(old, now_ms)) == old) {
			idle = brk__pace_idle(old, now_ms);
			break;
		}
		caa_cpu_relax();
	}
	if (cut == 0)
		return; /* never cut: nothing to count since */
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(sw);

		if (uatomic_cmpxchg(sw, old, brk__pace_since_add(old, BRK__CUT_MS(cut),
								   now_ms, idle)) == old)
			return;
		caa_cpu_relax();
	}
}

/* After a cut the bucket is empty at the new rate: TAT >= c + tau, so
 * the next token is one new interval after the cut's time c (its ms,
 * rounded up). Without this the larger tau of the slower rate would hand
 * out a burst at once, straight into the limit that just answered 429
 * (each of those would cut again). Reservations outstanding past c stay
 * queued, re-spaced at the new rate (breaker.h "Fair waits"): the shared
 * TAT and, with a reserve, the normal one. @p: the pace before the cut,
 * @q after it. */
static void empty_after_cut(brk_segment *s, struct brk__record *r,
			    const struct brk__pace *p, const struct brk__pace *q,
			    uint64_t now_ms)
{
	uint64_t c = brk__sat_add(s->epoch_ns, brk__ms_to_ns(now_ms));
	uint64_t to = brk__pace_rate_t(p, now_ms), tn = brk__pace_rate_t(q, now_ms);
	int w, i;

	for (w = 0; w < 2; w++) {
		uint64_t *tat = &brk__xw(r)[w ? BRK__BK_TAT_NORMAL : BRK__BK_TAT];
		uint64_t a = w ? brk__pace_normal_t(to, q->reserve_pct) : to;
		uint64_t b = w ? brk__pace_normal_t(tn, q->reserve_pct) : tn;
		uint64_t tau_b = brk__pace_tau(b, q->burst);

		if (w && q->reserve_pct == 0)
			break;
		if (w == 0) {
			/* the shared queue, by number (brk__pace_cut_queue):
			 * exactly its live reservations after c. Counted by
			 * distance at the smallest interval in it: a slot's
			 * interval is the rate at that slot (pace_ticket.c
			 * slot_t()), which only grew from c to the last one */
			uint64_t old = uatomic_read(tat), am = a;
			uint64_t n;

			if (old > c)
				am = brk__pace_rate_t(p, brk__rel_ms(s, old));
			if (am == 0 || am > a)
				am = a;
			n = brk__pace_cut_queue(r, now_ms, old, c, am,
						brk__pace_tau(am, q->burst));
			unsigned __int128 v = (unsigned __int128)n * b +
					      brk__sat_add(c, tau_b);
			uint64_t nw = v > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)v;

			for (i = 0; i < BRK__CAS_TRIES; i++) {
				uint64_t old = uatomic_read(tat);

				if (old == nw || uatomic_cmpxchg(tat, old, nw) == old)
					break;
				caa_cpu_relax();
			}
			continue;
		}
		for (i = 0; i < BRK__CAS_TRIES; i++) {
			uint64_t old = uatomic_read(tat), am = a;
			uint64_t nw;

			/* the smallest interval in the queue, as above */
			if (old > c)
				am = brk__pace_normal_t(brk__pace_rate_t(p, brk__rel_ms(s, old)),
							q->reserve_pct);
			if (am == 0 || am > a)
				am = a;
			nw = brk__pace_respace(old, c, am, brk__pace_tau(am, q->burst), b,
					       tau_b, 0);

			if (old >= nw || uatomic_cmpxchg(tat, old, nw) == old)
				break;
			caa_cpu_relax();
		}
	}
}

/* A cut word @nw was stored at @now_ms: the bucket is empty at the new
 * rate, the cut counted, and the event "pace_cut" written with the rate. */
static void cut_stored(brk_segment *s, struct brk__record *r,
		       const struct brk__pace *p, uint64_t nw, uint64_t now_ms)
{
	struct brk__pace q = *p;
	double nr;

	q.cut_ms = now_ms;
	q.grow = (nw & BRK__CUT_GROW) != 0;
	q.w_max = brk__pace_f24_decode(BRK__CUT_W(nw & ~BRK__CUT_GROW));
	nr = brk__pace_rate(&q, now_ms);
	empty_after_cut(s, r, p, &q, now_ms);
	uatomic_inc(&brk__xw(r)[BRK__BK_CUTS]);
	brk__record_event(s, r, BRK_CLOSED, BRK_CLOSED, BRK_EV_PACE_CUT,
			  brk__self()->pid, (uint64_t)llround(nr * 1e3));
}

static int pace_cut(brk_breaker *b, struct brk__pace *p, uint64_t taken_ms)
{
	brk_segment *s = b->seg;
	struct brk__record *r = brk__brec(b);
	uint64_t *cw = &brk__xw(r)[BRK__BK_CUT];
	double floor = 1e9 / (double)p->floor_t, ceiling = 1e9 / (double)p->ceil_t;
	int i;

	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(cw), now_ms, nw, ew;
		double rate, est, base;
		int grow;

		if (old != 0) {
			p->cut_ms = BRK__CUT_MS(old);
			p->grow = (old & BRK__CUT_GROW) != 0;
			p->w_max = brk__pace_f24_decode(BRK__CUT_W(old & ~BRK__CUT_GROW));
			if (!(p->w_max > 0.0))
				return -BRK_ECORRUPT;
			if (taken_ms < p->cut_ms)
				return 0; /* sent before the last cut: ignored */
		} else {
			p->cut_ms = 0;
			p->grow = 0;
			p->w_max = 0.0;
		}
		/* rounded up: taken_ms (rounded down) >= cut_ms then means
		 * taken at or after the cut, never in its ms before it (on
		 * loopback several requests share a ms; a 429 to one sent
		 * before the cut must not cut again) */
		now_ms = brk__rel_ms(s, brk__sat_add(brk__now(s), 999999u));
		if (now_ms > BRK__CUT_MS_MAX)
			now_ms = BRK__CUT_MS_MAX;
		rate = brk__pace_rate(p, now_ms);
		ew = uatomic_read(&brk__xw(r)[BRK__BK_EST]);
		est = brk__pace_since_est(p, uatomic_read(&brk__xw(r)[BRK__BK_SINCE]),
					  now_ms);
		base = brk__pace_cut_limit(p, rate, est, brk__pace_est(ew, now_ms),
					   brk__pace_probing(p, now_ms), &grow);
		base = brk__pace_clamp(base, floor, ceiling);
		nw = BRK__CUT_MAKE(now_ms, brk__pace_f24_encode(base) |
					   (grow ? BRK__CUT_GROW : 0));
		if (nw == old)
			return 0; /* the same cut, in the same ms */
		if (uatomic_cmpxchg(cw, old, nw) == old) {
			cut_stored(s, r, p, nw, now_ms);
			return 1;
		}
		caa_cpu_relax();
	}
	return -BRK_ECONTENDED;
}

/* A fleet peer's cut (brk_pace_cut()): the cut word that makes the rate
 * at @now_ms exactly @rate (a cut holds at BRK_PACE_HOLD_GAIN x the limit
 * it stores; not growing), the float24 rounding down so the rate is never
 * above the one asked. */
static int pace_cut_to(brk_breaker *b, struct brk__pace *p, double rate)
{
	brk_segment *s = b->seg;
	struct brk__record *r = brk__brec(b);
	uint64_t *cw = &brk__xw(r)[BRK__BK_CUT];
	double floor = 1e9 / (double)p->floor_t, ceiling = 1e9 / (double)p->ceil_t;
	int i;

	if (rate < floor)
		rate = floor;
	if (rate > ceiling)
		rate = ceiling;
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(cw), now_ms, nw;
		struct brk__pace q = *p;

		if (old != 0) {
			q.cut_ms = BRK__CUT_MS(old);
			q.grow = (old & BRK__CUT_GROW) != 0;
			q.w_max = brk__pace_f24_decode(BRK__CUT_W(old & ~BRK__CUT_GROW));
			if (!(q.w_max > 0.0))
				return -BRK_ECORRUPT;
		} else {
			q.cut_ms = 0;
			q.w_max = 0.0;
		}
		now_ms = brk__rel_ms(s, brk__sat_add(brk__now(s), 999999u));
		if (now_ms > BRK__CUT_MS_MAX)
			now_ms = BRK__CUT_MS_MAX;
		if (brk__pace_rate(&q, now_ms) <= rate)
			return -EALREADY;
		nw = BRK__CUT_MAKE(now_ms, brk__pace_f24_encode(rate / BRK_PACE_HOLD_GAIN));
		if (uatomic_cmpxchg(cw, old, nw) != old) {
			caa_cpu_relax();
			continue;
		}
		cut_stored(s, r, &q, nw, now_ms); /* q: the pace before it */
		return 0;
	}
	return -BRK_ECONTENDED;
}

int brk_pace_cut(brk_bucket *k, uint64_t rate_milli)
{
	brk_breaker *b = brk__bk_h(k);
	struct brk__pace p;
	uint64_t w[3];
	int rc;

	if (!k || rate_milli == 0)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	pace_load(brk__brec(b), w);
	rc = brk__pace_parse(w[0], w[1], 0, &p);
	if (rc == 1)
		return -EMEDIUMTYPE; /* a plain bucket has no learned rate */
	if (rc == -EAGAIN)
		return -BRK_ECORRUPT;
	if (rc)
		return rc;
	return pace_cut_to(b, &p, (double)rate_milli / 1e3);
}

int brk_pace_report(brk_bucket *k, uint64_t taken_at_ns, int signal,
		    int64_t retry_after_ms)
{
	brk_breaker *b = brk__bk_h(k);
	struct brk__record *r;
	struct brk__pace p;
	uint64_t w[3];
	int rc;

	(void)retry_after_ms; /* see the doc comment: a pace does not cool */
	if (!k || signal < BRK_PACE_OK || signal > BRK_PACE_IGNORE)
		return -EINVAL;
	if (b->seg->readonly)
		return -EROFS;
	BRK__FRESH_OR_RETURN(b);
	r = brk__brec(b);
	pace_load(r, w);
	rc = brk__pace_parse(w[0], w[1], 0, &p);
	if (rc == 1)
		return 0; /* a plain bucket learns nothing */
	if (rc)
		return rc;
	if (signal == BRK_PACE_IGNORE)
		return 0;
	if (signal == BRK_PACE_OK) {
		uatomic_inc(&brk__xw(r)[BRK__BK_OK]);
		est_add(r, brk__rel_ms(b->seg, brk__now(b->seg)));
		return 0;
	}
	/* a request is taken before it is answered: a taken_at after now is
	 * a caller's bug, and as "taken at the current rate" it would cut at
	 * will (UINT64_MAX: every time) */
	if (taken_at_ns > brk__now(b->seg))
		return -EINVAL;
	uatomic_inc(&brk__xw(r)[BRK__BK_LIMITED]);
	return pace_cut(b, &p, brk__rel_ms(b->seg, taken_at_ns));
}

int brk_pace_signal_of(int outcome, int reason, int64_t retry_after_ms)
{
	if (outcome == BRK_SUCCESS || outcome == BRK_HEALTHY_ERROR)
		return BRK_PACE_OK;
	if (outcome == BRK_FAILURE &&
	    (reason == BRK_REASON_RATE_LIMITED ||
	     (reason == BRK_REASON_OVERLOADED && retry_after_ms > 0)))
		return BRK_PACE_LIMITED;
	return BRK_PACE_IGNORE;
}

static uint64_t age_of(uint64_t now_ms, uint64_t then_ms)
{
	return now_ms > then_ms ? now_ms - then_ms : 0;
}

int brk__pace_fill(brk_segment *s, const struct brk__record *r,
		   struct brk_bucket_info *out)
{
	struct brk__pace p;
	uint64_t w[3], now, now_ms, t, ld;
	int rc;

	pace_load(r, w);
	rc = brk__pace_parse(w[0], w[1], w[2], &p);
	if (rc == 1 || rc == -EAGAIN)
		return 0;
	if (rc)
		return rc;
	now = brk__now(s);
	now_ms = brk__rel_ms(s, now);
	t = brk__pace_rate_t(&p, now_ms);
	out->paced = 1;
	out->implicit = p.implicit;
	out->ceiling_per_s = 1e9 / (double)p.ceil_t;
	out->floor_per_s = 1e9 / (double)p.floor_t;
	out->learned_per_s = brk__pace_rate(&p, now_ms);
	out->w_max_per_s = p.w_max;
	out->reserve_pct = p.reserve_pct;
	out->fleet = p.fleet;
	out->last_cut_age_ms = w[2] ? age_of(now_ms, p.cut_ms) : UINT64_MAX;
	out->cuts = uatomic_read(&brk__xw(r)[BRK__BK_CUTS]);
	out->limited = uatomic_read(&brk__xw(r)[BRK__BK_LIMITED]);
	out->ok = uatomic_read(&brk__xw(r)[BRK__BK_OK]);
	out->high_taken = uatomic_read(&brk__xw(r)[BRK__BK_HIGH]);
	ld = uatomic_read(&brk__xw(r)[BRK__BK_LAST_DENIED_MS]);
	out->last_denied_age_ms = ld ? age_of(now_ms, ld - 1u) : UINT64_MAX;
	out->accepted_per_s = brk__pace_est(uatomic_read(&brk__xw(r)[BRK__BK_EST]), now_ms);
	out->rate_per_s = out->learned_per_s;
	out->interval_ns = t;
	out->tokens = brk__gcra_tokens(uatomic_read(&brk__xw(r)[BRK__BK_TAT]), now, t,
				       brk__pace_tau(t, p.burst), &out->full_in_ns);
	return 0;
}

/* ---- implicit paces (breaker.h "Implicit pace"; implicit.c) ------------ */

int brk__pace_implicit_get(brk_segment *seg, const char *name, int create,
			   uint32_t fleet, brk_bucket **out)
{
	uint64_t cfg, pace;
	brk_breaker *b;
	struct brk__record *r;
	int rc;

	if (!create) {
		rc = brk_bucket_find(seg, name, out);
	} else {
		rc = pace_words(BRK_PACE_IMPLICIT_CEILING, BRK_PACE_IMPLICIT_FLOOR,
				BRK_PACE_DEFAULT_BURST, 0, fleet ? 1 : 0, &cfg, &pace);
		if (rc)
			return rc;
		pace |= BRK__PC_IMPLICIT;
		{
			struct brk__init init = { NULL, 2, { { BRK__BK_PACE, pace },
							     { BRK__BK_CFG, cfg } } };

			rc = brk__handle(seg, name, 1, BRK_KIND_BUCKET, &init, &b);
		}
		if (rc == 0) {
			r = brk__brec(b);
			if (!seg->readonly &&
			    uatomic_read(&brk__xw(r)[BRK__BK_CFG]) == 0) {
				(void)uatomic_cmpxchg(&brk__xw(r)[BRK__BK_PACE], 0, pace);
				(void)uatomic_cmpxchg(&brk__xw(r)[BRK__BK_CFG], 0, cfg);
			}
			*out = (brk_bucket *)(void *)b;
		}
	}
	if (rc)
		return rc;
	b = brk__bk_h(*out);
	if (!(uatomic_read(&brk__xw(brk__brec(b))[BRK__BK_PACE]) & BRK__PC_PACED))
		return -EMEDIUMTYPE; /* a plain bucket of that name */
	return 0;
}

int brk__pace_implicit_start(brk_bucket *k)
{
	brk_breaker *b = brk__bk_h(k);
	brk_segment *s = b->seg;
	struct brk__record *r = brk__brec(b);
	uint64_t *cw = &brk__xw(r)[BRK__BK_CUT], *tat = &brk__xw(r)[BRK__BK_TAT];
	uint64_t now, now_ms, nw, t, tn, c, q;
	struct brk__pace p;
	uint64_t w[3];
	int i, rc;

	BRK__FRESH_OR_RETURN(b);
	pace_load(r, w);
	rc = brk__pace_parse(w[0], w[1], w[2], &p);
	if (rc)
		return rc < 0 ? rc : -EMEDIUMTYPE;
	if (w[2] != 0 || !(w[1] & BRK__PC_IMPLICIT))
		return 0; /* started already, or a declared pace: a plain cut */
	now = brk__now(s);
	now_ms = brk__rel_ms(s, brk__sat_add(now, 999999u));
	if (now_ms > BRK__CUT_MS_MAX)
		now_ms = BRK__CUT_MS_MAX;
	nw = BRK__CUT_MAKE(now_ms, brk__pace_f24_encode(BRK_PACE_IMPLICIT_START) |
				   BRK__CUT_GROW);
	if (uatomic_cmpxchg(cw, 0, nw) != 0)
		return 0; /* another process started it */
	p.cut_ms = now_ms;
	p.grow = 1;
	p.w_max = brk__pace_f24_decode(BRK__CUT_W(nw & ~BRK__CUT_GROW));
	/* one interval to the first token (the upstream just said no): a
	 * take at now + t passes when TAT <= now + t + T(now + t), the rate
	 * having grown meanwhile */
	t = brk__pace_rate_t(&p, now_ms);
	t = brk__sat_add(t, brk__pace_rate_t(&p, now_ms + t / 1000000u));
	/* reservations made at the ceiling stay queued, re-spaced at the
	 * start rate (breaker.h "Fair waits") */
	tn = brk__pace_rate_t(&p, now_ms);
	c = brk__sat_add(s->epoch_ns, brk__ms_to_ns(now_ms));
	q = brk__pace_cut_queue(r, now_ms, uatomic_read(tat), c, p.ceil_t,
				brk__pace_tau(p.ceil_t, p.burst));
	for (i = 0; i < BRK__CAS_TRIES; i++) {
		uint64_t old = uatomic_read(tat), want = brk__sat_add(now, t);
		unsigned __int128 v = (unsigned __int128)q * tn +
				      brk__sat_add(c, brk__pace_tau(tn, p.burst));
		uint64_t qw = v > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)v;

		if (q && qw > want) /* none queued: the start rule alone */
			want = qw;
		if (old >= want || uatomic_cmpxchg(tat, old, want) == old)
			break;
		caa_cpu_relax();
	}
	uatomic_inc(&brk__xw(r)[BRK__BK_CUTS]);
	uatomic_inc(&brk__xw(r)[BRK__BK_LIMITED]);
	/* its own reason: the fleet link publishes pace_cut events, and this
	 * start rate is no news of the limit for the other hosts */
	brk__record_event(s, r, BRK_CLOSED, BRK_CLOSED, BRK_EV_PACE_IMPLICIT,
			  brk__self()->pid,
			  (uint64_t)llround(brk__pace_rate(&p, now_ms) * 1e3));
	return 1;
}
