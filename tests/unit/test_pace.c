/*
 * test_pace.c - paced buckets (breaker.h "Pacing (learned rate)") on the
 * injected fake clock: the curve alone, the one-cut-per-round-trip rule,
 * the cut base, floor and ceiling, the priority reserve over a long flood,
 * settings validation, hostile pace words, plain buckets through the pace
 * calls, and a threads race (suite threads, run under TSan).
 */
#include <math.h>
#include <pthread.h>

#include "fixture.h"

#include "fixture_layout.h" /* private: to corrupt words by hand */
#include "internal.h"
#include "pace_curve.h"

UT_GROUP_FIXTURES("pace", 64)

static brk_bucket *pace(struct ut *u, const char *name, double ceiling,
			double floor, uint32_t burst, uint32_t reserve)
{
	struct brk_pace_config c;
	brk_bucket *k = NULL;

	ut_rc(0, brk_pace_config_init(&c));
	c.ceiling_per_s = ceiling;
	c.floor_per_s = floor;
	if (burst)
		c.burst = burst;
	c.reserve_pct = reserve;
	ut_rc(0, brk_pace_get(u->seg, name, &c, &k));
	assert_non_null(k);
	return k;
}

static struct brk_bucket_info info(brk_bucket *k)
{
	struct brk_bucket_info bi;

	ut_rc(0, brk_bucket_info(k, &bi));
	return bi;
}

/* Take one now (must succeed) and return its taken_at. */
static uint64_t take1(brk_bucket *k)
{
	uint64_t at = 0, nb = 0;

	ut_rc(0, brk_pace_take(k, BRK_PRIORITY_HIGH, &at, &nb));
	return at;
}

#define NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* ---- the curve alone --------------------------------------------------- */

/* Issue 21: the rate holds at BRK_PACE_HOLD_GAIN x the limit found for
 * the hold (30 requests' worth, 2 .. 10 s), then probes, doubling every
 * BRK_PACE_PROBE_DOUBLE_MS; a growing pace has no hold and doubles every
 * BRK_PACE_GROW_DOUBLE_MS. */
static void curve_holds_under_the_limit_then_probes_and_clamps(void **state)
{
	(void)state;
	NEAR(brk__pace_hold_s(10.0), 3.0, 1e-12);   /* 30 requests at 10/s */
	NEAR(brk__pace_hold_s(100.0), 2.0, 1e-12);  /* at least 2 s */
	NEAR(brk__pace_hold_s(1.0), 10.0, 1e-12);   /* at most 10 s */
	NEAR(brk__pace_hold_s(NAN), 2.0, 1e-12);
	/* holding: 0.97 x the limit, for the whole hold */
	NEAR(brk__pace_curve(10.0, 0, 0.0, 0.1, 1000.0), 9.7, 1e-9);
	NEAR(brk__pace_curve(10.0, 0, 2.99, 0.1, 1000.0), 9.7, 1e-9);
	/* probing: doubling every 0.5 s after it */
	NEAR(brk__pace_curve(10.0, 0, 3.5, 0.1, 1000.0), 19.4, 1e-9);
	NEAR(brk__pace_curve(10.0, 0, 4.0, 0.1, 1000.0), 38.8, 1e-9);
	/* growing: no hold, doubling every 0.5 s from the start */
	NEAR(brk__pace_curve(10.0, 1, 0.0, 0.1, 1000.0), 9.7, 1e-9);
	NEAR(brk__pace_curve(10.0, 1, 0.5, 0.1, 1000.0), 19.4, 1e-9);
	/* clamps: below the floor, above the ceiling, never NaN */
	NEAR(brk__pace_curve(1.0, 0, 0.0, 0.99, 1000.0), 0.99, 0);
	NEAR(brk__pace_curve(10.0, 0, 100.0, 0.1, 50.0), 50.0, 0);
	NEAR(brk__pace_curve(10.0, 0, -5.0, 0.1, 50.0), 9.7, 1e-9);
	NEAR(brk__pace_curve(0.0, 0, 0.0, 0.1, 50.0), 50.0, 0);   /* never cut */
	NEAR(brk__pace_curve(NAN, 0, 1.0, 0.1, 50.0), 50.0, 0);
	NEAR(brk__pace_curve(10.0, 0, NAN, 0.1, 50.0), 9.7, 1e-9);
	NEAR(brk__pace_curve(10.0, 0, INFINITY, 0.1, 50.0), 50.0, 0);
	NEAR(brk__pace_curve(10.0, 1, 1e5, 0.1, 50.0), 50.0, 0);
}

/* The limit a cut stores (pure): a probe's cut never lowers it; a cut
 * while holding stores the accepted rate; growing while a probe finds
 * 25 % more. */
static void cut_limit_by_phase(void **state)
{
	struct brk__pace p;
	int grow = -1;

	(void)state;
	memset(&p, 0, sizeof(p));
	/* the first cut, no success known: 0.7 x the rate, growing */
	NEAR(brk__pace_cut_limit(&p, 100.0, 0.0, 0.0, 1, &grow), 70.0, 1e-9);
	assert_int_equal(grow, 1);
	/* the first cut with 20 successes in the last second: 0.9 x that */
	NEAR(brk__pace_cut_limit(&p, 100.0, 0.0, 20.0, 1, &grow), 18.0, 1e-9);
	assert_int_equal(grow, 1);
	p.w_max = 10.0;
	/* probing: at least the limit held under, or the cycle's accepted
	 * rate (the last second's is not used: it holds the burst the hold
	 * left the upstream) */
	NEAR(brk__pace_cut_limit(&p, 12.0, 10.5, 12.0, 1, &grow), 10.5, 1e-9);
	assert_int_equal(grow, 0);
	NEAR(brk__pace_cut_limit(&p, 12.0, 9.0, 12.0, 1, &grow), 10.0, 1e-9);
	NEAR(brk__pace_cut_limit(&p, 20.0, 0.0, 5.0, 1, &grow), 10.0, 1e-9);
	assert_int_equal(grow, 0);
	/* ... never above the rate sent */
	NEAR(brk__pace_cut_limit(&p, 11.0, 30.0, 30.0, 1, &grow), 11.0, 1e-9);
	/* a probe that found 25 % more keeps growing */
	NEAR(brk__pace_cut_limit(&p, 40.0, 16.0, 16.0, 1, &grow), 16.0, 1e-9);
	assert_int_equal(grow, 1);
	/* growing: also 0.9 x the last second (a short cycle) */
	p.grow = 1;
	NEAR(brk__pace_cut_limit(&p, 40.0, 0.0, 20.0, 1, &grow), 18.0, 1e-9);
	assert_int_equal(grow, 1);
	NEAR(brk__pace_cut_limit(&p, 40.0, 0.0, 11.0, 1, &grow), 10.0, 1e-9);
	assert_int_equal(grow, 0);
	p.grow = 0;
	/* holding: the accepted rate; none known: 0.7 x the rate */
	NEAR(brk__pace_cut_limit(&p, 9.7, 4.0, 6.0, 0, &grow), 4.0, 1e-9);
	assert_int_equal(grow, 0);
	NEAR(brk__pace_cut_limit(&p, 9.7, 0.0, 0.0, 0, &grow), 0.7 * 9.7, 1e-9);
	/* holding, all sent was accepted (a transient 429): the limit stays */
	NEAR(brk__pace_cut_limit(&p, 9.7, 12.0, 0.0, 0, &grow), 10.0, 1e-9);
	NEAR(brk__pace_cut_limit(&p, 9.7, 9.9, 0.0, 0, &grow), 9.9, 1e-9);
	/* holding, under a second since the last cut: 0.9 x min(last
	 * second, rate) */
	NEAR(brk__pace_cut_limit(&p, 9.7, 0.0, 8.0, 0, &grow), 7.2, 1e-9);
	NEAR(brk__pace_cut_limit(&p, 9.7, 0.0, 12.0, 0, &grow), 0.9 * 9.7, 1e-9);
}

static void float24_rounds_down_and_keeps_15_bits(void **state)
{
	static const double v[] = { 1e-4, 0.7, 5.0, 7.5, 20.0, 333.3, 1e9 };
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		double d = brk__pace_f24_decode(brk__pace_f24_encode(v[i]));

		assert_true(d <= v[i]);
		assert_true(d >= v[i] * (1.0 - 1.0 / 32768.0));
	}
	assert_int_equal(brk__pace_f24_encode(0.0), 0);
	assert_int_equal(brk__pace_f24_encode(-1.0), 0);
	assert_int_equal(brk__pace_f24_encode(NAN), 0);
	NEAR(brk__pace_f24_decode(0), 0.0, 0);
	/* NaN and infinity patterns decode as invalid */
	assert_true(brk__pace_f24_decode(0x7fc000u) < 0.0);
	assert_true(brk__pace_f24_decode(0x7f8000u) < 0.0);
}

static void estimate_slides_over_one_second(void **state)
{
	uint64_t w = 0;
	unsigned i;

	(void)state;
	for (i = 0; i < 10; i++)
		w = brk__pace_est_add(w, 5000);
	NEAR(brk__pace_est(w, 5000), 10.0, 0);
	NEAR(brk__pace_est(w, 5999), 10.0, 0);
	/* next slot: the old one weighs by what is left of the window */
	NEAR(brk__pace_est(w, 6250), 7.5, 1e-9);
	w = brk__pace_est_add(w, 6250);
	NEAR(brk__pace_est(w, 6250), 1.0 + 7.5, 1e-9);
	/* two slots later: nothing */
	NEAR(brk__pace_est(w, 8000), 0.0, 0);
	w = brk__pace_est_add(w, 9000);
	NEAR(brk__pace_est(w, 9000), 1.0, 0);
	/* saturates at 65535 */
	for (i = 0; i < 70000; i++)
		w = brk__pace_est_add(w, 9000);
	NEAR(brk__pace_est(w, 9000), 65535.0, 0);
}

/* ---- cuts ---------------------------------------------------------------- */

static void new_pace_runs_at_its_ceiling_with_the_defaults(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 100.0, 0.0, 0, 0);
	struct brk_bucket_info bi = info(k);
	uint64_t at, nb;

	assert_int_equal(bi.paced, 1);
	NEAR(bi.ceiling_per_s, 100.0, 1e-9);
	NEAR(bi.floor_per_s, 1.0, 1e-9);       /* ceiling / 100 */
	NEAR(bi.learned_per_s, 100.0, 1e-9);
	NEAR(bi.rate_per_s, 100.0, 1e-9);
	assert_int_equal(bi.burst, BRK_PACE_DEFAULT_BURST);
	assert_int_equal(bi.reserve_pct, 0);
	assert_true(bi.last_cut_age_ms == UINT64_MAX);
	assert_true(bi.last_denied_age_ms == UINT64_MAX);
	NEAR(bi.w_max_per_s, 0.0, 0);
	/* burst 2 at once, then one per 10 ms */
	ut_rc(0, brk_pace_take(k, BRK_PRIORITY_NORMAL, &at, &nb));
	assert_int_equal(at, ut_now_ns(u));
	ut_rc(0, brk_pace_take(k, BRK_PRIORITY_NORMAL, &at, &nb));
	ut_rc(-BRK_ENOTOKENS, brk_pace_take(k, BRK_PRIORITY_NORMAL, &at, &nb));
	assert_int_equal(nb, ut_now_ns(u) + 10 * UT_NS_PER_MS);
	ut_advance_ms(u, 3);
	bi = info(k);
	assert_int_equal(bi.last_denied_age_ms, 3);
	assert_int_equal(bi.denied, 1);
	assert_int_equal(bi.taken, 2);
}

static void eight_in_flight_429s_cut_once(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 1000.0, 0.0, 8, 0);
	uint64_t at[8], late;
	struct brk_bucket_info bi;
	unsigned i;
	int cuts = 0;

	for (i = 0; i < 8; i++) {
		at[i] = take1(k);
		ut_advance_ms(u, 1);
	}
	ut_advance_ms(u, 50); /* the answers arrive */
	for (i = 0; i < 8; i++) {
		int rc = brk_pace_report(k, at[i], BRK_PACE_LIMITED, 1000);

		assert_true(rc == 0 || rc == 1);
		cuts += rc;
	}
	assert_int_equal(cuts, 1);
	bi = info(k);
	assert_int_equal(bi.cuts, 1);
	assert_int_equal(bi.limited, 8);
	/* no success known: 0.7 x the rate, held at 0.97 x that */
	NEAR(bi.w_max_per_s, 700.0, 0.05);
	NEAR(bi.learned_per_s, 679.0, 0.05);
	assert_int_equal(bi.last_cut_age_ms, 0);
	/* a request taken after the cut, at the new rate, cuts again */
	ut_advance_ms(u, 10);
	late = take1(k);
	ut_advance_ms(u, 20);
	ut_rc(1, brk_pace_report(k, late, BRK_PACE_LIMITED, 0));
	bi = info(k);
	assert_int_equal(bi.cuts, 2);
	/* the first cut was growing: this probe's cut keeps the limit (it
	 * found nothing more) and holds under it */
	NEAR(bi.w_max_per_s, 700.0, 0.05);
	NEAR(bi.learned_per_s, 679.0, 0.05);
	/* the early ones, answered late, still change nothing */
	ut_rc(0, brk_pace_report(k, at[0], BRK_PACE_LIMITED, 0));
	assert_int_equal(info(k).cuts, 2);
}

/* Report @n successes, one every @step_ms (the clock moves on after each). */
static void oks(struct ut *u, brk_bucket *k, unsigned n, unsigned step_ms)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		ut_rc(0, brk_pace_report(k, brk_now_ns(u->seg), BRK_PACE_OK, 0));
		ut_advance_ms(u, step_ms);
	}
}

/* The new-user trial: idle 386 s, the first 429 cut a 3 r/s pace to its
 * floor (0.5/s), because the successes since the last cut were averaged
 * over the idle spell. */
static void an_idle_spell_is_no_evidence_of_a_lower_limit(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "idle", 50.0, 0.0, 0, 0);

	double found;

	oks(u, k, 5, 20);
	ut_rc(1, brk_pace_report(k, brk_now_ns(u->seg), BRK_PACE_LIMITED, 0));
	oks(u, k, 25, 200); /* 5/s for 5 s */
	ut_rc(1, brk_pace_report(k, brk_now_ns(u->seg), BRK_PACE_LIMITED, 0));
	found = info(k).w_max_per_s;
	assert_true(found >= 5.0 && found <= 6.3); /* 1.25 x the 5/s at most */
	ut_advance_ms(u, 300000); /* idle */
	oks(u, k, 10, 200);      /* 5/s again for 2 s */
	ut_rc(1, brk_pace_report(k, brk_now_ns(u->seg), BRK_PACE_LIMITED, 0));
	/* a probe's cut (long past the hold) never lowers the limit */
	assert_true(info(k).w_max_per_s >= found - 0.01);
}

/* The new-user trial against 3 r/s, burst 2: w_max fell at every cut
 * (3.00 -> 2.39 -> 2.20 -> ... -> 1.91) because the cut started from 0.85
 * x the accepted rate, which itself followed the last plateau down. The
 * accepted rate of a cycle is the upstream's rate: the cut starts there. */
static void the_cut_base_holds_at_the_accepted_rate_cycle_after_cycle(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "cycles", 50.0, 0.0, 0, 0);
	int cycle;

	oks(u, k, 3, 100);
	ut_rc(1, brk_pace_report(k, brk_now_ns(u->seg), BRK_PACE_LIMITED, 0));
	for (cycle = 0; cycle < 5; cycle++) {
		oks(u, k, 15, 333); /* 3/s for 5 s */
		ut_rc(1, brk_pace_report(k, brk_now_ns(u->seg), BRK_PACE_LIMITED, 0));
		/* the first cut guessed 1.25 x 3 (growing); from then on each
		 * cut comes while holding above 3/s and stores the accepted
		 * rate, 3/s, cycle after cycle */
		if (cycle == 0)
			assert_true(info(k).w_max_per_s <= 3.76);
		else
			NEAR(info(k).w_max_per_s, 3.0, 0.05);
	}
}

/* The cut word holds ms, taken_at ns: two requests sent in the same ms
 * as the 429 that cut (on loopback a round trip is well under 1 ms), the
 * second before the cut, must not cut again: its answer is to a request
 * sent at the old rate (one cut per round trip). */
static void a_429_for_a_request_sent_before_the_cut_in_its_ms_is_ignored(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 1000.0, 0.0, 8, 0);
	uint64_t a, b;

	ut_advance_ns(u, 100 * 1000); /* x.1 ms */
	a = take1(k);
	ut_advance_ns(u, 100 * 1000); /* x.2 ms */
	b = take1(k);
	ut_advance_ns(u, 100 * 1000); /* x.3 ms: a's 429 arrives and cuts */
	ut_rc(1, brk_pace_report(k, a, BRK_PACE_LIMITED, 0));
	ut_advance_ns(u, 200 * 1000); /* x.5 ms: b's 429, sent before the cut */
	ut_rc(0, brk_pace_report(k, b, BRK_PACE_LIMITED, 0));
	assert_int_equal(info(k).cuts, 1);
	NEAR(info(k).learned_per_s, 679.0, 0.05);
	/* a request taken after the cut, answered 429, cuts again */
	ut_advance_ms(u, 2);
	ut_rc(1, brk_pace_report(k, take1(k), BRK_PACE_LIMITED, 0));
	assert_int_equal(info(k).cuts, 2);
}

/* Trying to break it: a taken_at after now (or UINT64_MAX) was "taken at
 * the current rate" and cut every time, driving a pace to its floor. */
static void a_limited_report_taken_in_the_future_is_refused(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "future", 100.0, 0.0, 0, 0);
	uint64_t now = brk_now_ns(u->seg);

	ut_rc(-EINVAL, brk_pace_report(k, now + 1000000u, BRK_PACE_LIMITED, 0));
	ut_rc(-EINVAL, brk_pace_report(k, UINT64_MAX, BRK_PACE_LIMITED, 0));
	assert_int_equal(info(k).cuts, 0);
	assert_int_equal(info(k).limited, 0);
	NEAR(info(k).learned_per_s, 100.0, 1e-9);
	ut_rc(1, brk_pace_report(k, now, BRK_PACE_LIMITED, 0)); /* now: fine */
}

static void cut_starts_from_the_accepted_rate_when_it_is_lower(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 100.0, 0.0, 0, 0);
	struct brk_bucket_info bi;
	uint64_t at = take1(k);
	unsigned i;

	for (i = 0; i < 20; i++)
		ut_rc(0, brk_pace_report(k, at, BRK_PACE_OK, 0));
	NEAR(info(k).accepted_per_s, 20.0, 0);
	ut_rc(1, brk_pace_report(k, at, BRK_PACE_LIMITED, 0));
	bi = info(k);
	NEAR(bi.w_max_per_s, 18.0, 1e-3);     /* 0.9 x the last second's 20 */
	NEAR(bi.learned_per_s, 17.46, 1e-3);
	assert_int_equal(bi.ok, 20);
	/* a probe's cut with no success since: the limit stays */
	ut_advance_ms(u, 2100);
	at = take1(k);
	ut_rc(1, brk_pace_report(k, at, BRK_PACE_LIMITED, 0));
	bi = info(k);
	NEAR(bi.accepted_per_s, 0.0, 0);
	NEAR(bi.w_max_per_s, 18.0, 1e-3);
	/* a cut while holding (the hold of 18/s is 2 s): 15 successes in
	 * the 1.5 s since the last cut, the accepted rate 10/s, below the
	 * 17.46/s held: the limit is 10 */
	for (i = 0; i < 15; i++) {
		ut_rc(0, brk_pace_report(k, at, BRK_PACE_OK, 0));
		ut_advance_ms(u, 100);
	}
	ut_rc(1, brk_pace_report(k, take1(k), BRK_PACE_LIMITED, 0));
	NEAR(info(k).w_max_per_s, 10.0, 0.02);
	/* ... once that window is BRK_PACE_EST_MIN_MS long; 0.5 s after,
	 * 0.9 x the sliding second, never above 0.9 x the rate held */
	for (i = 0; i < 5; i++) {
		ut_rc(0, brk_pace_report(k, at, BRK_PACE_OK, 0));
		ut_advance_ms(u, 100);
	}
	ut_rc(1, brk_pace_report(k, take1(k), BRK_PACE_LIMITED, 0));
	assert_true(info(k).w_max_per_s <= 0.9 * 9.7 + 0.01 && info(k).w_max_per_s >= 4.0);
}

static void a_cut_empties_the_bucket_at_the_new_rate(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 100.0, 0.0, 4, 0);
	uint64_t nb, t_new;

	ut_rc(1, brk_pace_report(k, take1(k), BRK_PACE_LIMITED, 0));
	/* 3 of the 4-token burst were left; after the cut none is: a burst
	 * now would go straight into the limit that just said 429 */
	ut_rc(-BRK_ENOTOKENS, brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb));
	t_new = info(k).interval_ns;
	NEAR(t_new, 1e9 / (0.97 * 70.0), 2);
	assert_true(nb >= ut_now_ns(u) + t_new - 1 && nb <= ut_now_ns(u) + t_new + 1);
	/* the first cut grows fast: tau shrinks with T, so the not-before
	 * (at the rate of the take) can be early by burst x dT and a refused
	 * retry waits again (design "No reservation"); within two intervals */
	{
		uint64_t t0 = ut_now_ns(u);
		int tries = 0, rc;

		do {
			ut_set_ns(u, nb + UT_NS_PER_MS);
			rc = brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb);
		} while (rc == -BRK_ENOTOKENS && ++tries < 5);
		ut_rc(0, rc);
		assert_true(ut_now_ns(u) - t0 <= 2 * t_new);
	}
}

static void floor_holds_and_growth_stops_at_the_ceiling(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 100.0, 10.0, 0, 0);
	struct brk_bucket_info bi;
	unsigned i;

	for (i = 0; i < 30; i++) {
		uint64_t at;

		ut_advance_ms(u, 200);
		at = take1(k);
		ut_rc(1, brk_pace_report(k, at, BRK_PACE_LIMITED, 0));
		bi = info(k);
		assert_true(bi.learned_per_s >= 10.0);
	}
	NEAR(info(k).learned_per_s, 10.0, 1e-9);
	NEAR(info(k).interval_ns, 100 * UT_NS_PER_MS, 1);
	/* the take really is at the floor's spacing: 2 now, next in 100 ms */
	ut_advance_ms(u, 1);
	{
		uint64_t nb;

		while (brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb) == 0)
			;
		assert_true(nb - ut_now_ns(u) <= 100 * UT_NS_PER_MS);
		assert_true(nb - ut_now_ns(u) >= 90 * UT_NS_PER_MS);
	}
	/* growth: the limit 10 (the floor) held (at the floor) for its 3 s
	 * hold, then probing above it, clamped at the ceiling after long
	 * enough */
	ut_advance_ms(u, 1000);
	NEAR(info(k).learned_per_s, 10.0, 0.05);
	ut_advance_ms(u, 3000);
	assert_true(info(k).learned_per_s > 14.0);
	ut_advance_ms(u, 60000);
	NEAR(info(k).learned_per_s, 100.0, 0);
	assert_true(info(k).last_cut_age_ms >= 60000);
}

/* ---- the rule against a modelled upstream (issue 21) ------------------- */

/* nginx limit_req, nodelay, ms resolution (ngx_http_limit_req_module.c,
 * as bench/pace_sim.py): excess in milli-requests. */
struct upstream {
	uint64_t rate_milli, burst_milli, excess, last_ms;
	int seen;
};

static int upstream_answer(struct upstream *g, uint64_t now_ms)
{
	uint64_t ms = g->seen ? now_ms - g->last_ms : 0, leak;
	uint64_t excess;

	leak = g->rate_milli * ms / 1000u;
	excess = (g->excess > leak ? g->excess - leak : 0) + 1000u;
	if (excess > g->burst_milli)
		return 429;
	g->excess = excess;
	g->last_ms = now_ms;
	g->seen = 1;
	return 200;
}

struct drive {
	uint64_t sent, ok, limited, cuts0;
	double max_rate, min_rate;
};

/* @workers workers for @ms ms of the fake clock, 2 ms round trips: each
 * takes (waiting to brk_bucket_wake_ns() when refused), sends, and
 * reports the answer with the token's time. Counts from @count_from_ms. */
static void drive(struct ut *u, brk_bucket *k, struct upstream *g, unsigned workers,
		  uint64_t ms, uint64_t count_from_ms, struct drive *d)
{
	uint64_t wake[8] = { 0 }, answer_at[8] = { 0 }, taken[8] = { 0 };
	int code[8] = { 0 };
	uint64_t t, start = ut_now_ns(u);
	unsigned w;

	memset(d, 0, sizeof(*d));
	d->min_rate = 1e18;
	for (t = 0; t < ms; t++) {
		uint64_t now = ut_now_ns(u);
		double r = info(k).learned_per_s;

		if (t >= count_from_ms) {
			if (r > d->max_rate)
				d->max_rate = r;
			if (r < d->min_rate)
				d->min_rate = r;
		}
		for (w = 0; w < workers; w++) {
			uint64_t nb = 0, at = 0;

			if (answer_at[w] && now >= answer_at[w]) {
				answer_at[w] = 0;
				ut_rc(code[w] == 200 || code[w] == 429 ? 0 : -1, 0);
				if (brk_pace_report(k, taken[w], code[w] == 200 ?
						    BRK_PACE_OK : BRK_PACE_LIMITED, 0) == 1 && getenv("DRIVE_DEBUG"))
					fprintf(stderr, "  cut at %lu ms: w %.2f rate %.2f acc %.2f\n", (unsigned long)t, info(k).w_max_per_s, info(k).learned_per_s, info(k).accepted_per_s);
				if (t >= count_from_ms) {
					d->sent++;
					d->ok += code[w] == 200;
					d->limited += code[w] == 429;
				}
			}
			if (answer_at[w] || now < wake[w])
				continue;
			if (brk_pace_take(k, BRK_PRIORITY_NORMAL, &at, &nb) == 0) {
				taken[w] = at;
				code[w] = upstream_answer(g, (now - start) / UT_NS_PER_MS + 1);
				answer_at[w] = now + 2 * UT_NS_PER_MS;
			} else {
				wake[w] = brk_bucket_wake_ns(k, nb);
			}
		}
		ut_advance_ms(u, 1);
	}
}

/* Found 10/s (burst 5): from then on the rate holds just under it - at
 * least 95 % of the allowance taken, at most 5 % of the requests 429 -
 * and probes above it only briefly: a few cuts a minute, not one a
 * second (the CUBIC sawtooth cut to 0.7 and averaged well below). */
static void the_rate_holds_under_the_limit_it_found(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "hold", 1000.0, 0.1, 0, 0);
	struct upstream g = { 10000, 5000, 0, 0, 0 };
	struct drive d;
	uint64_t cuts0;

	drive(u, k, &g, 4, 10000, 10000, &d); /* learn */
	cuts0 = info(k).cuts;
	drive(u, k, &g, 4, 60000, 0, &d);
	assert_true(d.ok >= (uint64_t)(0.95 * 10 * 60));
	assert_true(d.limited * 100 <= d.sent * 5);
	/* held under it (the limit found: within 10 % of 10/s) */
	assert_true(info(k).w_max_per_s >= 9.0 && info(k).w_max_per_s <= 11.0);
	assert_true(d.min_rate >= 0.85 * 10.0);
	/* probes are rare: at most one cut per hold (3 s) */
	assert_true(info(k).cuts - cuts0 <= 60 / 3 + 1);
}

/* ... and it does probe: with no 429 the rate rises above the limit
 * found within one hold plus a moment, and a limit that rose is found. */
static void the_rate_probes_up_and_finds_a_rise_of_the_limit(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "rise", 1000.0, 0.1, 0, 0);
	struct upstream g = { 4000, 5000, 0, 0, 0 };
	struct drive d;

	drive(u, k, &g, 4, 20000, 20000, &d);
	assert_true(info(k).w_max_per_s >= 3.6 && info(k).w_max_per_s <= 4.4);
	g.rate_milli = 20000; /* the limit rises 4 -> 20 */
	drive(u, k, &g, 4, 15000, 0, &d);
	assert_true(d.max_rate >= 0.9 * 20.0);
	assert_true(info(k).w_max_per_s >= 0.9 * 20.0);
	/* judged from 5 s after the rise: 90 % of the new allowance */
	drive(u, k, &g, 4, 20000, 0, &d);
	assert_true(d.ok >= (uint64_t)(0.90 * 20 * 20));
}

/* A limit that drops 10 -> 4: the next cut comes while holding above it
 * and stores the accepted rate; within 5 s the rate is under 4/0.9. */
static void the_rate_follows_a_drop_of_the_limit(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "drop", 1000.0, 0.1, 0, 0);
	struct upstream g = { 10000, 5000, 0, 0, 0 };
	struct drive d;

	drive(u, k, &g, 4, 20000, 20000, &d);
	g.rate_milli = 4000;
	drive(u, k, &g, 4, 5000, 0, &d);
	assert_true(info(k).learned_per_s <= 4.0 / 0.9 ||
		    info(k).w_max_per_s <= 4.0 / 0.9);
	drive(u, k, &g, 4, 20000, 0, &d);
	assert_true(d.ok >= (uint64_t)(0.95 * 4 * 20));
	assert_true(d.limited * 100 <= d.sent * 10);
}

/* ---- priorities ---------------------------------------------------------- */

static void reserve_keeps_normal_work_to_its_share_over_a_flood(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 100.0, 0.0, 2, 20);
	unsigned normal = 0, high = 0, ms, both = 0;

	/* 10 s of fake time, every ms: normal work takes all it can, then
	 * high work takes what is left */
	for (ms = 0; ms < 10000; ms++) {
		int nr = -1;

		while ((nr = brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, NULL)) == 0)
			normal++;
		assert_int_equal(nr, -BRK_ENOTOKENS);
		while (brk_pace_take(k, BRK_PRIORITY_HIGH, NULL, NULL) == 0) {
			high++;
			both++; /* a high take right after a normal refusal */
		}
		ut_advance_ms(u, 1);
	}
	/* normal <= 0.8 * 100/s * 10 s + burst; all <= 100/s * 10 s + burst */
	assert_true(normal <= 800 + 2);
	assert_true(normal >= 800 - 2);
	assert_true(normal + high <= 1000 + 2);
	assert_true(high >= 200 - 4);
	assert_true(both > 0);
	assert_int_equal(info(k).high_taken, high);
}

static void high_gets_through_while_normal_is_refused(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 100.0, 0.0, 2, 20);
	uint64_t nb;

	ut_rc(0, brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb));
	ut_rc(0, brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb));
	ut_advance_ms(u, 10);
	ut_rc(-BRK_ENOTOKENS, brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb));
	ut_rc(0, brk_pace_take(k, BRK_PRIORITY_HIGH, NULL, &nb));
	/* the refused normal take gave its normal token back: no leak */
	ut_advance_ms(u, 15);
	ut_rc(0, brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb));
}

/* ---- settings ------------------------------------------------------------ */

static void bad_settings_are_einval_and_create_nothing(void **state)
{
	struct ut *u = *state;
	struct brk_pace_config c;
	brk_bucket *k = NULL;
	const struct { double ceil, floor; uint32_t burst, reserve; const char *what; } bad[] = {
		{ 0.0, 0.0, 2, 0, "no ceiling" },
		{ NAN, 0.0, 2, 0, "NaN ceiling" },
		{ 2e9, 0.0, 2, 0, "ceiling above the bucket maximum" },
		{ 1e-5, 0.0, 2, 0, "ceiling below the bucket minimum" },
		{ -5.0, 0.0, 2, 0, "negative ceiling" },
		{ 10.0, 20.0, 2, 0, "floor above the ceiling" },
		{ 10.0, -1.0, 2, 0, "negative floor" },
		{ 10.0, NAN, 2, 0, "NaN floor" },
		{ 10.0, 0.0, BRK_BUCKET_MAX_BURST + 1, 0, "burst too large" },
		{ 10.0, 0.0, 2, 91, "reserve above 90" },
	};
	unsigned i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ut_rc(0, brk_pace_config_init(&c));
		c.ceiling_per_s = bad[i].ceil;
		c.floor_per_s = bad[i].floor;
		c.burst = bad[i].burst;
		c.reserve_pct = bad[i].reserve;
		if (brk_pace_get(u->seg, "p", &c, &k) != -EINVAL)
			fail_msg("%s: not -EINVAL", bad[i].what);
	}
	ut_rc(-ENOENT, brk_bucket_find(u->seg, "p", &k));
	ut_rc(-EINVAL, brk_pace_get(u->seg, "p", NULL, &k));
	ut_rc(-EINVAL, brk_pace_config_init_sz(&c, 8));
	ut_rc(-EINVAL, brk_pace_config_init_sz(NULL, sizeof c));
	/* burst 0 in a hand-zeroed config: the default */
	memset(&c, 0, sizeof c);
	c.ceiling_per_s = 10.0;
	ut_rc(0, brk_pace_get(u->seg, "p", &c, &k));
	assert_int_equal(info(k).burst, BRK_PACE_DEFAULT_BURST);
	/* update: each bad value -EINVAL, nothing changed */
	c.ceiling_per_s = 0.0;
	ut_rc(-EINVAL, brk_pace_update(k, &c, BRK_PACE_F_CEILING));
	c.floor_per_s = 11.0;
	ut_rc(-EINVAL, brk_pace_update(k, &c, BRK_PACE_F_FLOOR));
	c.burst = 0;
	ut_rc(-EINVAL, brk_pace_update(k, &c, BRK_PACE_F_BURST));
	c.reserve_pct = 95;
	ut_rc(-EINVAL, brk_pace_update(k, &c, BRK_PACE_F_RESERVE));
	c.size = sizeof c; /* the hand-zeroed config says VER0: fleet unread */
	c.fleet = 2;
	ut_rc(-EINVAL, brk_pace_update(k, &c, BRK_PACE_F_FLEET));
	assert_int_equal(info(k).fleet, 0);
	ut_rc(-EINVAL, brk_pace_update(k, &c, 1u << 5));
	ut_rc(-EINVAL, brk_pace_update(NULL, &c, BRK_PACE_F_BURST));
	NEAR(info(k).ceiling_per_s, 10.0, 1e-9);
	NEAR(info(k).floor_per_s, 0.1, 1e-9);
	assert_int_equal(info(k).reserve_pct, 0);
	/* bad calls */
	ut_rc(-EINVAL, brk_pace_take(k, 2, NULL, NULL));
	ut_rc(-EINVAL, brk_pace_take(NULL, 0, NULL, NULL));
	ut_rc(-EINVAL, brk_pace_report(k, 0, 0, 0));
	ut_rc(-EINVAL, brk_pace_report(k, 0, 4, 0));
	ut_rc(-EINVAL, brk_pace_report(NULL, 0, BRK_PACE_OK, 0));
}

static void update_changes_only_the_given_settings_and_keeps_the_cut(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 100.0, 5.0, 4, 10);
	struct brk_pace_config c;
	struct brk_bucket_info bi;

	ut_rc(1, brk_pace_report(k, take1(k), BRK_PACE_LIMITED, 0));
	ut_rc(0, brk_pace_config_init(&c));
	c.reserve_pct = 30;
	ut_rc(0, brk_pace_update(k, &c, BRK_PACE_F_RESERVE));
	bi = info(k);
	assert_int_equal(bi.reserve_pct, 30);
	NEAR(bi.ceiling_per_s, 100.0, 1e-9);
	NEAR(bi.floor_per_s, 5.0, 1e-9);
	assert_int_equal(bi.burst, 4);
	NEAR(bi.learned_per_s, 67.9, 0.01);
	c.ceiling_per_s = 50.0;
	ut_rc(0, brk_pace_update(k, &c, BRK_PACE_F_CEILING));
	bi = info(k);
	NEAR(bi.ceiling_per_s, 50.0, 1e-9);
	NEAR(bi.learned_per_s, 50.0, 1e-9); /* clamped to the new ceiling */
	NEAR(bi.floor_per_s, 5.0, 1e-9);
	assert_int_equal(bi.burst, 4);
	assert_int_equal(bi.reserve_pct, 30);
	assert_int_equal(bi.cuts, 1);
	/* a ceiling below the kept floor: the floor follows (default) */
	c.ceiling_per_s = 2.0;
	ut_rc(0, brk_pace_update(k, &c, BRK_PACE_F_CEILING));
	NEAR(info(k).floor_per_s, 0.02, 1e-9);
	c.burst = 9;
	c.floor_per_s = 1.0;
	ut_rc(0, brk_pace_update(k, &c, BRK_PACE_F_BURST | BRK_PACE_F_FLOOR));
	bi = info(k);
	assert_int_equal(bi.burst, 9);
	NEAR(bi.floor_per_s, 1.0, 1e-9);
	NEAR(bi.ceiling_per_s, 2.0, 1e-9);
	assert_int_equal(bi.fleet, 0);
}

/* Issue 13: a pace's fleet setting is stored in its pace word, shown in
 * brk_bucket_info, and changed alone by brk_pace_update (the cut kept). */
static void pace_fleet_is_stored_shown_and_updated_alone(void **state)
{
	struct ut *u = *state;
	struct brk_pace_config c;
	struct brk_bucket_info bi;
	brk_bucket *k;

	ut_rc(0, brk_pace_config_init(&c));
	assert_int_equal(c.fleet, 0);
	c.ceiling_per_s = 100.0;
	c.fleet = 2;
	ut_rc(-EINVAL, brk_pace_get(u->seg, "pf", &c, &k));
	c.fleet = 1;
	c.reserve_pct = 20;
	ut_rc(0, brk_pace_get(u->seg, "pf", &c, &k));
	bi = info(k);
	assert_int_equal(bi.fleet, 1);
	assert_int_equal(bi.reserve_pct, 20);
	ut_rc(1, brk_pace_report(k, take1(k), BRK_PACE_LIMITED, 0));
	c.fleet = 0;
	c.reserve_pct = 90; /* not named: not read */
	ut_rc(0, brk_pace_update(k, &c, BRK_PACE_F_FLEET));
	bi = info(k);
	assert_int_equal(bi.fleet, 0);
	assert_int_equal(bi.reserve_pct, 20);
	assert_int_equal(bi.cuts, 1);
	NEAR(bi.learned_per_s, 67.9, 0.01);
	c.fleet = 1;
	ut_rc(0, brk_pace_update(k, &c, BRK_PACE_F_FLEET));
	c.ceiling_per_s = 50.0;
	ut_rc(0, brk_pace_update(k, &c, BRK_PACE_F_CEILING)); /* keeps fleet */
	bi = info(k);
	assert_int_equal(bi.fleet, 1);
	NEAR(bi.ceiling_per_s, 50.0, 1e-9);
}

static void pace_and_plain_bucket_names_do_not_mix(void **state)
{
	struct ut *u = *state;
	struct brk_pace_config c;
	brk_bucket *plain = NULL, *k = NULL, *again = NULL;
	brk_breaker *b = NULL;
	uint64_t at = 0, nb;
	int i;

	ut_rc(0, brk_bucket_get(u->seg, "plain", 10.0, 3, &plain));
	ut_rc(0, brk_pace_config_init(&c));
	c.ceiling_per_s = 10.0;
	ut_rc(-EMEDIUMTYPE, brk_pace_get(u->seg, "plain", &c, &k));
	ut_rc(0, brk_breaker_get(u->seg, "brk", NULL, &b));
	ut_rc(-EMEDIUMTYPE, brk_pace_get(u->seg, "brk", &c, &k));
	ut_rc(-EMEDIUMTYPE, brk_pace_update(plain, &c, BRK_PACE_F_CEILING));
	/* the pace calls on a plain bucket: its own rate, no learning */
	for (i = 0; i < 3; i++)
		ut_rc(0, brk_pace_take(plain, BRK_PRIORITY_NORMAL, &at, &nb));
	assert_int_equal(at, ut_now_ns(u));
	ut_rc(-BRK_ENOTOKENS, brk_pace_take(plain, BRK_PRIORITY_HIGH, &at, &nb));
	ut_rc(0, brk_pace_report(plain, at, BRK_PACE_LIMITED, 0));
	assert_int_equal(info(plain).paced, 0);
	assert_int_equal(info(plain).limited, 0);
	NEAR(info(plain).rate_per_s, 10.0, 1e-9);
	/* a pace through the plain calls: the learned rate */
	k = pace(u, "api", 100.0, 0.0, 0, 0);
	ut_rc(0, brk_bucket_get(u->seg, "api", 5.0, 1, &again));
	assert_int_equal(info(again).paced, 1);
	ut_rc(1, brk_pace_report(k, take1(k), BRK_PACE_LIMITED, 0));
	while (brk_bucket_take(k, 1, &nb) == 0)
		;
	/* about 70/s now: one token per ~14 ms, not the ceiling's 10 ms */
	/* (+1 ms: the rate grows meanwhile and its tolerance, burst * T,
	 * shrinks with it, so not_before is early by burst * dT) */
	ut_set_ns(u, nb + UT_NS_PER_MS);
	ut_rc(0, brk_bucket_take(k, 1, &nb));
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, &at));
	assert_true(at - nb >= 13 * UT_NS_PER_MS && at - nb <= 15 * UT_NS_PER_MS);
	assert_true(brk_bucket_wake_ns(k, at) < at + 15 * UT_NS_PER_MS);
}

/* A pace's ceiling lives in the plain bucket settings word: a plain
 * bucket update of it (bctl bucket P --rate R) could store a ceiling below
 * the floor, and every later call then found the pace corrupt, with no
 * way back but retiring it. The plain calls refuse a pace instead. */
static void plain_bucket_settings_calls_refuse_a_pace_and_leave_it_whole(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 10.0, 1.0, 0, 0);
	struct brk_bucket_info bi;

	ut_rc(-EMEDIUMTYPE, brk_bucket_update(k, 0.5, 0, BRK_BUCKET_RATE));
	ut_rc(-EMEDIUMTYPE, brk_bucket_configure(k, 0.5, 2));
	ut_rc(-EMEDIUMTYPE, brk_bucket_update(k, 0.0, 5, BRK_BUCKET_BURST));
	bi = info(k);
	assert_true(bi.paced);
	NEAR(bi.ceiling_per_s, 10.0, 1e-9);
	NEAR(bi.floor_per_s, 1.0, 1e-9);
	assert_int_equal(bi.burst, 2);
	take1(k);
}

static void signal_of_maps_outcomes(void **state)
{
	(void)state;
	assert_int_equal(brk_pace_signal_of(BRK_FAILURE, BRK_REASON_RATE_LIMITED, 0),
			 BRK_PACE_LIMITED);
	assert_int_equal(brk_pace_signal_of(BRK_FAILURE, BRK_REASON_OVERLOADED, 1000),
			 BRK_PACE_LIMITED);
	assert_int_equal(brk_pace_signal_of(BRK_FAILURE, BRK_REASON_OVERLOADED, 0),
			 BRK_PACE_IGNORE);
	assert_int_equal(brk_pace_signal_of(BRK_FAILURE, BRK_REASON_TIMEOUT, 1000),
			 BRK_PACE_IGNORE);
	assert_int_equal(brk_pace_signal_of(BRK_SUCCESS, 0, 0), BRK_PACE_OK);
	assert_int_equal(brk_pace_signal_of(BRK_HEALTHY_ERROR, 0, 0), BRK_PACE_OK);
	assert_int_equal(brk_pace_signal_of(BRK_REJECTED_REQUEST, 0, 0), BRK_PACE_IGNORE);
	assert_int_equal(brk_pace_signal_of(BRK_CANCELLED, 0, 0), BRK_PACE_IGNORE);
	assert_int_equal(brk_pace_signal_of(99, 0, 0), BRK_PACE_IGNORE);
}

/* ---- hostile words and events -------------------------------------------- */

static void corrupt_pace_words_are_bounded(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "evil", 100.0, 0.0, 0, 0);
	struct brk_bucket_info bi;
	uint64_t *ext, pace_w, nb;
	void *map;
	size_t len;

	ext = ut_record_ext(u, "evil", BRK_KIND_BUCKET, &map, &len);
	pace_w = ext[BRK__BK_PACE];
	assert_true(pace_w & BRK__PC_PACED);
	/* floor faster than the ceiling, floor T 0, reserve 127, stray bits */
	ext[BRK__BK_PACE] = BRK__PC_MAKE(1000, 0);
	ut_rc(-BRK_ECORRUPT, brk_pace_take(k, 0, NULL, &nb));
	ut_rc(-BRK_ECORRUPT, brk_bucket_take(k, 1, &nb));
	ut_rc(-BRK_ECORRUPT, brk_bucket_info(k, &bi));
	ut_rc(-BRK_ECORRUPT, brk_pace_report(k, 0, BRK_PACE_LIMITED, 0));
	ext[BRK__BK_PACE] = BRK__PC_PACED;
	ut_rc(-BRK_ECORRUPT, brk_pace_take(k, 0, NULL, &nb));
	ext[BRK__BK_PACE] = BRK__PC_MAKE(BRK__PC_FLOOR_T(pace_w), 127);
	ut_rc(-BRK_ECORRUPT, brk_pace_take(k, 0, NULL, &nb));
	ext[BRK__BK_PACE] = pace_w | (1ULL << 55);
	ut_rc(-BRK_ECORRUPT, brk_pace_take(k, 0, NULL, &nb));
	ext[BRK__BK_PACE] = pace_w;
	/* a cut word with NaN / infinity as w_max: corrupt */
	ext[BRK__BK_CUT] = BRK__CUT_MAKE(5, 0x7fc000u);
	ut_rc(-BRK_ECORRUPT, brk_pace_take(k, 0, NULL, &nb));
	ut_rc(-BRK_ECORRUPT, brk_pace_report(k, 0, BRK_PACE_LIMITED, 0));
	ext[BRK__BK_CUT] = BRK__CUT_MAKE(5, 0x7f8000u);
	ut_rc(-BRK_ECORRUPT, brk_pace_take(k, 0, NULL, &nb));
	/* tiny or huge w_max, a cut in the future: clamped, no div by 0 */
	ext[BRK__BK_CUT] = BRK__CUT_MAKE(0, 1u);
	ut_advance_ms(u, 5000);
	ut_rc(0, brk_pace_take(k, 0, NULL, &nb));
	NEAR(info(k).learned_per_s, 1.0, 1e-9);
	ext[BRK__BK_CUT] = BRK__CUT_MAKE(0, 0x7f7fffu);
	NEAR(info(k).learned_per_s, 100.0, 0);
	ext[BRK__BK_CUT] = BRK__CUT_MAKE(BRK__CUT_MS_MAX, brk__pace_f24_encode(50.0));
	NEAR(info(k).learned_per_s, 48.5, 1e-3);
	ut_rc(0, brk_pace_report(k, ut_now_ns(u), BRK_PACE_LIMITED, 0)); /* before it */
	/* an estimate word from the future: no success counted, no crash */
	ext[BRK__BK_EST] = UINT64_MAX;
	bi = info(k);
	assert_true(bi.accepted_per_s >= 0.0 && bi.accepted_per_s <= 65535.0 * 2);
	/* repair: the cut word cleared; update repairs the settings */
	ext[BRK__BK_CUT] = 0;
	ext[BRK__BK_EST] = 0;
	ut_advance_ms(u, 2000); /* the 1/s take's debt drains in real time */
	ut_rc(0, brk_pace_take(k, 0, NULL, &nb));
	munmap(map, len);
}

static void a_cut_writes_one_event_and_counts_as_activity(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "api", 100.0, 0.0, 0, 0);
	struct brk__record *r;
	struct brk_event ev[16];
	uint64_t cursor = 0, a0, a1;
	void *map;
	size_t len, n, i;
	int found = 0;

	r = ut_record_at(u, "api", BRK_KIND_BUCKET, &map, &len);
	a0 = brk__activity(r, r->head);
	ut_rc(0, brk_pace_report(k, 0, BRK_PACE_OK, 0));
	a1 = brk__activity(r, r->head);
	assert_true(a1 > a0);
	ut_rc(1, brk_pace_report(k, take1(k), BRK_PACE_LIMITED, 0));
	assert_true(brk__activity(r, r->head) > a1 + 1);
	n = ut_events(u->seg, &cursor, ev, 16, NULL);
	assert_true(n > 0);
	for (i = 0; i < n; i++)
		if (ev[i].reason == BRK_EV_PACE_CUT) {
			found++;
			assert_string_equal(ev[i].name, "api");
			/* the limit: 0.9 x the one success of the last
			 * second; the rate 0.97 x that is below the floor 1 */
			assert_int_equal(ev[i].value, 1000);
		}
	assert_int_equal(found, 1);
	assert_string_equal(brk_event_reason_name(BRK_EV_PACE_CUT), "pace_cut");
	munmap(map, len);
}

/* ---- threads ------------------------------------------------------------- */

struct racer {
	struct ut *u;
	brk_bucket *k;
	pthread_barrier_t *bar;
	int priority;
	unsigned got, cuts;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	unsigned i;

	pthread_barrier_wait(r->bar);
	for (i = 0; i < 20000; i++) {
		uint64_t at, nb;
		int rc = brk_pace_take(r->k, r->priority, &at, &nb);

		if (rc == 0) {
			r->got++;
			rc = brk_pace_report(r->k, at,
					     i % 7 == 0 ? BRK_PACE_LIMITED : BRK_PACE_OK, 0);
			assert_true(rc == 0 || rc == 1);
			r->cuts += (unsigned)rc;
		}
		if (i % 16 == 0)
			ut_advance_ns(r->u, 100 * 1000); /* 0.1 ms */
	}
	return NULL;
}

static void threads_race_takes_and_reports_within_the_ceiling(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "race", 1000.0, 0.0, 4, 25);
	pthread_barrier_t bar;
	pthread_t th[4];
	struct racer r[4];
	unsigned i, got = 0, cuts = 0;
	uint64_t t0 = ut_now_ns(u), elapsed;
	struct brk_bucket_info bi;

	pthread_barrier_init(&bar, NULL, 4);
	for (i = 0; i < 4; i++) {
		r[i] = (struct racer){ u, k, &bar, (int)(i & 1), 0, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		got += r[i].got;
		cuts += r[i].cuts;
	}
	pthread_barrier_destroy(&bar);
	elapsed = ut_now_ns(u) - t0;
	bi = info(k);
	assert_int_equal(bi.taken, got);
	assert_int_equal(bi.cuts, cuts);
	assert_true(cuts >= 1);
	/* never more than the ceiling allows */
	assert_true((double)got <= 1000.0 * (double)elapsed / 1e9 + 4 + 1);
	assert_true(bi.learned_per_s >= bi.floor_per_s &&
		    bi.learned_per_s <= bi.ceiling_per_s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(curve_holds_under_the_limit_then_probes_and_clamps),
		UT_TEST(cut_limit_by_phase),
		UT_TEST(the_rate_holds_under_the_limit_it_found),
		UT_TEST(the_rate_probes_up_and_finds_a_rise_of_the_limit),
		UT_TEST(the_rate_follows_a_drop_of_the_limit),
		UT_TEST(float24_rounds_down_and_keeps_15_bits),
		UT_TEST(estimate_slides_over_one_second),
		UT_TEST(new_pace_runs_at_its_ceiling_with_the_defaults),
		UT_TEST(eight_in_flight_429s_cut_once),
		UT_TEST(a_429_for_a_request_sent_before_the_cut_in_its_ms_is_ignored),
		UT_TEST(cut_starts_from_the_accepted_rate_when_it_is_lower),
		UT_TEST(a_limited_report_taken_in_the_future_is_refused),
		UT_TEST(an_idle_spell_is_no_evidence_of_a_lower_limit),
		UT_TEST(the_cut_base_holds_at_the_accepted_rate_cycle_after_cycle),
		UT_TEST(a_cut_empties_the_bucket_at_the_new_rate),
		UT_TEST(floor_holds_and_growth_stops_at_the_ceiling),
		UT_TEST(reserve_keeps_normal_work_to_its_share_over_a_flood),
		UT_TEST(high_gets_through_while_normal_is_refused),
		UT_TEST(bad_settings_are_einval_and_create_nothing),
		UT_TEST(update_changes_only_the_given_settings_and_keeps_the_cut),
		UT_TEST(pace_fleet_is_stored_shown_and_updated_alone),
		UT_TEST(pace_and_plain_bucket_names_do_not_mix),
		UT_TEST(plain_bucket_settings_calls_refuse_a_pace_and_leave_it_whole),
		UT_TEST(signal_of_maps_outcomes),
		UT_TEST(corrupt_pace_words_are_bounded),
		UT_TEST(a_cut_writes_one_event_and_counts_as_activity),
		UT_TEST(threads_race_takes_and_reports_within_the_ceiling),
	};
	return cmocka_run_group_tests_name("pace", tests, NULL, NULL);
}
