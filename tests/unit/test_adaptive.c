/*
 * test_adaptive.c - max_concurrent = auto (lib/src/adaptive.c, issue 25)
 * on the fake clock: the learned limit falls when latency rises (not
 * below min_concurrent), rises back when it falls (not above
 * max_concurrent), does not grow while app-limited, re-measures its
 * baseline after a persistent latency step, is one limit for every
 * process of the host (two attaches feed it), and reads garbage words
 * clamped. Plus the settings: validation, defaults, field names.
 *
 * Calls are driven in rounds: up to @want permits at once (as many as
 * the limit admits), each held @lat ms, then released as successes; a
 * window closes after >= 100 ms and >= 10 samples.
 */
#include "layout.h"
#include "internal.h"
#include "adaptive.h"
#include "bulkhead_queue.h"
#include "fixture.h"

UT_GROUP_FIXTURES("adaptive", 8)

static uint64_t *ctl_of(struct ut *u, brk_breaker *b)
{
	uint64_t *c = brk__permit_ctl(u->seg, brk__brec(b));

	assert_non_null(c);
	return c;
}

/* The limit as stored (not clamped by the read side). */
static double raw_limit(struct ut *u, brk_breaker *b)
{
	return (double)(uatomic_read(&ctl_of(u, b)[BRK__AC_LIMIT]) & 0xffffu) /
	       BRK__AC_LIMIT_FP;
}

/* The baseline as stored: the min filter's smaller nonzero half. */
static double raw_long_us(struct ut *u, brk_breaker *b)
{
	struct brk__ac a;

	brk__ac_decode(0, uatomic_read(&ctl_of(u, b)[BRK__AC_LONG]), 1, 64, &a);
	return a.long_us;
}

/* Windows closed, mod 256 (WIN's counter). */
static uint32_t windows_seen(struct ut *u, brk_breaker *b)
{
	return BRK__AC_WIN_CLOSED(uatomic_read(&ctl_of(u, b)[BRK__AC_WIN]));
}

static brk_breaker *auto_breaker(struct ut *u, const char *name,
				 uint32_t min, uint32_t max)
{
	struct brk_config c;

	ut_cfg(&c);
	c.concurrency_auto = 1;
	c.min_concurrent = min;
	c.max_concurrent = max;
	return ut_breaker(u, name, &c);
}

/* One round: up to @want permits (fewer if the limit refuses), held
 * @lat_ms. Returns how many were admitted. */
static uint32_t round_of(struct ut *u, brk_breaker *b, uint32_t want,
			 uint64_t lat_ms)
{
	brk_permit p[BRK_MAX_CONCURRENT];
	uint32_t k = 0, i;

	while (k < want && k < BRK_MAX_CONCURRENT &&
	       brk_acquire(b, &p[k], NULL) == 0)
		k++;
	ut_advance_ms(u, lat_ms);
	for (i = 0; i < k; i++)
		ut_release_ok(&p[i], BRK_SUCCESS, 0);
	return k;
}

/* Rounds until @n more windows have closed (a round closes at most one:
 * its releases share one instant). */
static void drive(struct ut *u, brk_breaker *b, uint32_t want, uint64_t lat_ms,
		  uint32_t n)
{
	uint32_t seen = 0, guard = 0;

	while (seen < n) {
		uint32_t w0 = windows_seen(u, b);
		round_of(u, b, want, lat_ms);
		seen += (windows_seen(u, b) - w0) & 0xffu;
		assert_true(++guard < 100000);
	}
}

/* Rounds for @ms of the fake clock. */
static void drive_ms(struct ut *u, brk_breaker *b, uint32_t want,
		     uint64_t lat_ms, uint64_t ms)
{
	uint64_t end = ut_now_ns(u) + ms * 1000000ull;

	while (ut_now_ns(u) < end)
		round_of(u, b, want, lat_ms);
}

static void settings_are_validated_and_named(void **state)
{
	struct brk_config c;
	const char *what = NULL;
	uint64_t f = 0;

	(void)state;
	brk_config_init(&c);
	assert_int_equal(c.concurrency_auto, 0);
	assert_int_equal(c.min_concurrent, BRK_DEFAULT_MIN_CONCURRENT);
	c.concurrency_auto = 2;
	ut_rc(-EINVAL, brk_config_validate(&c, &what));
	assert_string_equal(what, "concurrency_auto");
	c.concurrency_auto = 1;
	c.max_concurrent = 4;
	c.min_concurrent = 5; /* min above max */
	ut_rc(-EINVAL, brk_config_validate(&c, &what));
	assert_string_equal(what, "min_concurrent");
	c.min_concurrent = 0;
	ut_rc(-EINVAL, brk_config_validate(&c, &what));
	assert_string_equal(what, "min_concurrent");
	c.min_concurrent = 4;
	ut_rc(0, brk_config_validate(&c, &what));
	c.max_concurrent = 0; /* auto: BRK_MAX_CONCURRENT */
	c.min_concurrent = BRK_MAX_CONCURRENT;
	ut_rc(0, brk_config_validate(&c, &what));
	c.min_concurrent = BRK_MAX_CONCURRENT + 1;
	ut_rc(-EINVAL, brk_config_validate(&c, &what));
	/* without auto, min_concurrent is kept but not read */
	c.concurrency_auto = 0;
	c.max_concurrent = 2;
	c.min_concurrent = 9;
	ut_rc(0, brk_config_validate(&c, &what));
	ut_rc(0, brk_config_field_lookup("concurrency_auto", &f));
	assert_int_equal(f, BRK_CFG_CONCURRENCY_AUTO);
	ut_rc(0, brk_config_field_lookup("min_concurrent", &f));
	assert_int_equal(f, BRK_CFG_MIN_CONCURRENT);
	assert_string_equal(brk_config_field_name(BRK_CFG_MIN_CONCURRENT),
			    "min_concurrent");
}

/* An older caller's struct (VER4) gets min_concurrent's default. */
static void an_older_config_gets_the_min_concurrent_default(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	c.size = BRK_CONFIG_SIZE_VER4;
	c.concurrency_auto = 1; /* beyond the caller's size: not read */
	c.min_concurrent = 0;
	b = ut_breaker(u, "old", &c);
	ut_info(b, &i);
	assert_int_equal(i.config.concurrency_auto, 0);
	assert_int_equal(i.config.min_concurrent, BRK_DEFAULT_MIN_CONCURRENT);
}

/* auto with max_concurrent 0: a bulkhead of BRK_MAX_CONCURRENT slots
 * whose bound is the initial limit (4); brk_info reports it. */
static void auto_starts_at_the_initial_limit(void **state)
{
	struct ut *u = *state;
	brk_permit p[6];
	struct brk_info i;
	brk_breaker *b = auto_breaker(u, "svc", 1, 0);
	int k;

	for (k = 0; k < 4; k++)
		ut_acquire_ok(b, &p[k]);
	ut_rc(-BRK_EFULL, ut_try(b));
	ut_info(b, &i);
	assert_true(i.concurrency_limit == 4.0);
	assert_int_equal(i.in_flight, 4);
	for (k = 0; k < 4; k++)
		ut_release_ok(&p[k], BRK_SUCCESS, 0);
	/* a static bulkhead reports its max_concurrent */
	{
		struct brk_config c;
		ut_cfg(&c);
		c.max_concurrent = 7;
		ut_info(ut_breaker(u, "static", &c), &i);
		assert_true(i.concurrency_limit == 7.0);
	}
}

static void the_limit_falls_when_latency_rises_and_not_below_min(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 6, 32);
	double before;

	drive(u, b, 64, 10, 40); /* saturated at 10 ms: grows */
	before = raw_limit(u, b);
	assert_true(before > 8.0);
	drive(u, b, 64, 80, 3); /* latency x8 */
	assert_true(raw_limit(u, b) < before);
	drive(u, b, 64, 80, 15); /* (within the min filter's 5..10 s) */
	/* the gradient's floor (0.5) alone would settle near 2 */
	assert_true(raw_limit(u, b) == 6.0);
	assert_int_equal(round_of(u, b, 64, 80), 6);
}

static void the_limit_rises_back_when_latency_falls_and_not_above_max(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 1, 12);
	double low;
	uint32_t k;

	drive(u, b, 64, 10, 20);
	drive(u, b, 64, 80, 20);
	low = raw_limit(u, b);
	assert_true(low < 7.0);
	drive(u, b, 64, 10, 10);
	assert_true(raw_limit(u, b) > low);
	for (k = 0; k < 60; k++) {
		drive(u, b, 64, 10, 1);
		assert_true(raw_limit(u, b) <= 12.0);
	}
	assert_true(raw_limit(u, b) == 12.0);
	assert_int_equal(round_of(u, b, 64, 10), 12);
}

/* The baseline is a no-load estimate: the smallest sample of a window
 * (the requests that did not queue), not the window's mean, and the
 * smallest such over the filter's periods. */
static void the_baseline_is_the_windows_minimum_not_their_mean(void **state)
{
	struct brk__ac a = { .limit = 8 };

	(void)state;
	brk__ac_step(&a, 30000, 20000, 8, 100, 1, 64);
	assert_true(a.long_us == 20000.0);
	assert_true(a.recent_us == 30000);
	/* a later window with a higher minimum does not raise it */
	brk__ac_step(&a, 45000, 25000, 8, 200, 1, 64);
	assert_true(a.long_us == 20000.0);
	/* gradient = 1.0 x 20000 / 45000 < 1: the limit fell */
	assert_true(a.limit < 8.0);
	/* a lower one lowers it at once */
	brk__ac_step(&a, 19000, 18000, 8, 300, 1, 64);
	assert_true(a.long_us == 18000.0);
	/* without a minimum (0) or one above the mean: the mean */
	a = (struct brk__ac){ .limit = 8 };
	brk__ac_step(&a, 30000, 0, 8, 100, 1, 64);
	assert_true(a.long_us == 30000.0);
	a = (struct brk__ac){ .limit = 8 };
	brk__ac_step(&a, 30000, 40000, 8, 100, 1, 64);
	assert_true(a.long_us == 30000.0);
}

/* Through the shm words: every release lowers the open window's minimum,
 * and the closer hands it to the filter (one window: 10 ms and 30 ms
 * holds, baseline 10 ms, recent the 20 ms mean). */
static void the_window_minimum_reaches_the_baseline_through_shm(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 1, 64);
	struct brk_info i;
	brk_permit p[2];
	uint32_t k, w0;

	round_of(u, b, 1, 20); /* opens the first window */
	w0 = windows_seen(u, b);
	for (k = 0; k < 5; k++) {
		ut_acquire_ok(b, &p[0]);
		ut_acquire_ok(b, &p[1]);
		ut_advance_ms(u, 10);
		ut_release_ok(&p[0], BRK_SUCCESS, 0);
		ut_advance_ms(u, 20);
		ut_release_ok(&p[1], BRK_SUCCESS, 0);
	}
	assert_int_equal(windows_seen(u, b), w0 + 1);
	ut_info(b, &i);
	assert_true(i.latency_baseline_us == 10000);
	assert_true(i.latency_recent_us >= 19000 && i.latency_recent_us <= 21000);
}

/* The min filter's expiry, pure: a persistent step up of the latency
 * (every window's minimum) is the new baseline after two periods, and not
 * before one; the old minimum lives on in the previous half meanwhile. */
static void a_persistent_step_is_the_new_baseline_after_two_periods(void **state)
{
	struct brk__ac a = { .limit = 8 };
	uint64_t t;

	(void)state;
	/* 10 ms until 4.9 s, the step at 4.9 s (late in period 0) */
	for (t = 100; t < 4900; t += 100)
		brk__ac_step(&a, 10000, 10000, 8, t, 1, 64);
	assert_true(a.long_us == 10000.0);
	for (; t < BRK__AC_PERIOD_MS + 4900; t += 100) {
		brk__ac_step(&a, 40000, 40000, 8, t, 1, 64);
		/* not before one period: still the old minimum */
		assert_true(a.long_us == 10000.0);
	}
	for (; t < 2 * BRK__AC_PERIOD_MS; t += 100)
		brk__ac_step(&a, 40000, 40000, 8, t, 1, 64);
	assert_true(a.long_us == 10000.0); /* period 1: prev = period 0's */
	brk__ac_step(&a, 40000, 40000, 8, t, 1, 64); /* period 2 begins */
	assert_true(a.long_us == 40000.0);
	/* the last old sample at the start of a period: it lives until the
	 * end of the next one, just under two periods */
	a = (struct brk__ac){ .limit = 8 };
	brk__ac_step(&a, 10000, 10000, 8, 3 * BRK__AC_PERIOD_MS, 1, 64);
	for (t = 3 * BRK__AC_PERIOD_MS + 100; t < 5 * BRK__AC_PERIOD_MS; t += 100) {
		brk__ac_step(&a, 40000, 40000, 8, t, 1, 64);
		assert_true(a.long_us == 10000.0);
	}
	brk__ac_step(&a, 40000, 40000, 8, t, 1, 64);
	assert_true(a.long_us == 40000.0);
	/* a gap of two periods or more keeps nothing */
	brk__ac_step(&a, 50000, 50000, 8, t + 2 * BRK__AC_PERIOD_MS, 1, 64);
	assert_true(a.long_us == 50000.0);
}

/* A transient queue (seconds of slow windows, shorter than a period)
 * does not raise the baseline: the limit it cut grows back once it is
 * gone, from the same no-load estimate. Through the shm words. */
static void a_transient_queue_does_not_raise_the_baseline(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 1, 64);
	double base, low;

	drive(u, b, 64, 10, 20);
	base = raw_long_us(u, b);
	assert_true(base >= 9900.0 && base <= 10100.0);
	drive_ms(u, b, 64, 80, 4000);
	assert_true(raw_long_us(u, b) == base);
	low = raw_limit(u, b);
	drive(u, b, 64, 10, 10);
	assert_true(raw_long_us(u, b) == base);
	assert_true(raw_limit(u, b) > low);
}

static void no_growth_while_app_limited(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 1, 32);

	/* one call at a time against a limit of 4: 1 < 4 / 2 */
	drive(u, b, 1, 10, 50);
	assert_true(raw_limit(u, b) == 4.0);
	/* two at a time is not app-limited: it grows */
	drive(u, b, 2, 10, 5);
	assert_true(raw_limit(u, b) > 4.0);
}

/* App-limited is no growth, not no change: an upstream that slows down
 * while the callers are few still cuts the limit. */
static void an_app_limited_limit_still_falls(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 1, 32);

	drive(u, b, 1, 10, 20);
	assert_true(raw_limit(u, b) == 4.0);
	drive(u, b, 1, 80, 5);
	assert_true(raw_limit(u, b) < 3.5);
}

/* After a persistent latency step up (the upstream is slower for good,
 * not queueing), the baseline follows within two periods of the min
 * filter (BRK__AC_PERIOD_MS), and the limit, cut at first, grows again
 * instead of staying low: the re-measure, with no pin and no burst of
 * refusals (the limit never drops below what the cut left). */
static void the_baseline_is_re_measured_after_a_persistent_step(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 1, 64);
	double peak, cut;

	drive(u, b, 64, 10, 40);
	peak = raw_limit(u, b);
	drive(u, b, 64, 40, 10);
	cut = raw_limit(u, b);
	assert_true(cut < peak * 0.6);
	assert_true(raw_long_us(u, b) < 11000.0);
	drive_ms(u, b, 64, 40, 2 * BRK__AC_PERIOD_MS);
	assert_true(raw_long_us(u, b) > 36000.0);
	drive(u, b, 64, 40, 40);
	assert_true(raw_limit(u, b) > 2 * cut);
}

/* Two attaches of one segment (two processes) feed one limit: a window
 * needs 10 samples; five from each close it. */
static void two_processes_feed_one_limit(void **state)
{
	struct ut *u = *state;
	brk_breaker *a = auto_breaker(u, "svc", 1, 32), *b2;
	brk_segment *s2 = ut_attach_other(u, NULL);
	brk_permit pa[5], pb[5];
	struct brk_info i;
	uint32_t w0, k;

	b2 = ut_breaker_on(s2, "svc", NULL);
	round_of(u, a, 1, 1); /* the first sample opens the first window */
	w0 = windows_seen(u, a);
	for (k = 0; k < 2; k++) {
		ut_acquire_ok(a, &pa[k]);
		ut_acquire_ok(b2, &pb[k]);
	}
	/* the limit (4) spans both */
	ut_rc(-BRK_EFULL, ut_try(a));
	ut_rc(-BRK_EFULL, ut_try(b2));
	ut_advance_ms(u, 40);
	for (k = 0; k < 2; k++) {
		ut_release_ok(&pa[k], BRK_SUCCESS, 0);
		ut_release_ok(&pb[k], BRK_SUCCESS, 0);
	}
	for (k = 0; k < 2; k++) { /* 9 samples in 120 ms: still open
				    (and past 100 ms: only the count holds it) */
		ut_acquire_ok(a, &pa[k]);
		ut_acquire_ok(b2, &pb[k]);
		ut_advance_ms(u, 40);
		ut_release_ok(&pa[k], BRK_SUCCESS, 0);
		ut_release_ok(&pb[k], BRK_SUCCESS, 0);
	}
	assert_int_equal(windows_seen(u, a), w0);
	/* the 10th, from the other process, closes it: 5 were its own */
	ut_acquire_ok(b2, &pb[4]);
	ut_advance_ms(u, 40);
	ut_release_ok(&pb[4], BRK_SUCCESS, 0);
	assert_int_equal(windows_seen(u, a), w0 + 1);
	(void)pa[4];
	ut_info(b2, &i);
	assert_true(i.concurrency_limit == raw_limit(u, a));
	assert_true(i.latency_recent_us > 0);
	brk_detach(s2);
}

/* Failures other than timeouts are no samples; timeouts are. */
static void only_answers_and_timeouts_are_samples(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 1, 32);
	uint64_t *ctl = ctl_of(u, b);
	brk_permit p;

	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 5);
	ut_release_ok(&p, BRK_FAILURE, BRK_REASON_CONNECT);
	assert_int_equal(BRK__AC_ACC_COUNT(uatomic_read(&ctl[BRK__AC_ACC])), 0);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 5);
	ut_release_ok(&p, BRK_FAILURE, BRK_REASON_TIMEOUT);
	assert_int_equal(BRK__AC_ACC_COUNT(uatomic_read(&ctl[BRK__AC_ACC])), 1);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 5);
	ut_release_ok(&p, BRK_HEALTHY_ERROR, 0);
	assert_int_equal(BRK__AC_ACC_COUNT(uatomic_read(&ctl[BRK__AC_ACC])), 2);
}

/* The words are untrusted shm: garbage reads clamped, and the next window
 * writes sane values. */
static void a_garbage_ac_word_is_clamped(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 2, 10);
	uint64_t *ctl = ctl_of(u, b);
	struct brk_info i;
	brk_permit p[BRK_MAX_CONCURRENT];
	uint32_t k = 0;

	uatomic_set(&ctl[BRK__AC_LIMIT], ~0ULL);
	uatomic_set(&ctl[BRK__AC_LONG], ~0ULL);
	ut_info(b, &i);
	assert_true(i.concurrency_limit == 10.0);
	assert_true(i.latency_baseline_us <= BRK__AC_RTT_MAX_US);
	assert_true(i.latency_recent_us <= BRK__AC_RTT_MAX_US);
	while (k < BRK_MAX_CONCURRENT && brk_acquire(b, &p[k], NULL) == 0)
		k++;
	assert_int_equal(k, 10);
	while (k)
		ut_release_ok(&p[--k], BRK_SUCCESS, 0);
	uatomic_set(&ctl[BRK__AC_LIMIT], 1); /* 1/256: below min */
	assert_int_equal(round_of(u, b, 64, 10), 2);
	/* a window start in the future and a sample count near overflow */
	uatomic_set(&ctl[BRK__AC_WIN], ~0ULL);
	uatomic_set(&ctl[BRK__AC_ACC], ~0ULL);
	for (k = 0; k < 50; k++)
		round_of(u, b, 64, 10);
	assert_true(BRK__AC_WIN_START(uatomic_read(&ctl[BRK__AC_WIN])) <=
		    brk__rel_ms(u->seg, ut_now_ns(u)) + 1);
	assert_true(raw_limit(u, b) >= 2.0 && raw_limit(u, b) <= 10.0);
	assert_true(raw_long_us(u, b) <= BRK__AC_RTT_MAX_US);
	/* the pure decode, on its own */
	{
		struct brk__ac a;
		brk__ac_decode(0, 0, 3, 9, &a);
		assert_true(a.limit == 4.0);
		brk__ac_decode(0xffff, 0, 3, 9, &a);
		assert_true(a.limit == 9.0);
		brk__ac_decode(1, 0, 3, 9, &a);
		assert_true(a.limit == 3.0);
		assert_int_equal(brk__ac_bound(0xffff, 3, 9), 9);
	}
}

/* The bulkhead queue's wait estimate (brk_admit()'s EXPIRED at once)
 * of an auto bulkhead without a hold histogram uses the learned
 * latency: place x the last window's mean / the learned limit. It read
 * brk__ac_read()'s "has a block" (1) as failure and never did (0:
 * unknown) after the merge of issue 25's branches. */
static void an_auto_bulkhead_wait_estimate_uses_the_learned_latency(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = auto_breaker(u, "svc", 1, 32);
	struct brk_info i;
	uint64_t want;

	drive(u, b, 2, 40, 2);
	ut_info(b, &i);
	assert_true(i.latency_recent_us >= 39000 && i.latency_recent_us <= 41000);
	want = 3 * i.latency_recent_us * 1000u / (uint32_t)i.concurrency_limit;
	assert_true(brk__bq_estimate_ns(u->seg, brk__brec(b), 3,
					BRK_PRIORITY_NORMAL) / 1000u ==
		    want / 1000u);
}

/* A breaker without auto never touches the words. */
static void a_static_bulkhead_leaves_the_words_alone(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;
	uint64_t *ctl;
	int k;

	ut_cfg(&c);
	c.max_concurrent = 4;
	b = ut_breaker(u, "static", &c);
	for (k = 0; k < 30; k++)
		round_of(u, b, 4, 10);
	ctl = ctl_of(u, b);
	for (k = BRK__AC_LIMIT; k <= BRK__AC_WIN; k++)
		assert_true(uatomic_read(&ctl[k]) == 0);
}

/* Switching auto on by an update links the bulkhead (max_concurrent 0:
 * BRK_MAX_CONCURRENT slots) and bounds it by the learned limit. */
static void auto_switched_on_by_an_update(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	const char *what = NULL;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	c.concurrency_auto = 1;
	c.min_concurrent = 3;
	ut_rc(0, brk_breaker_update(b, &c, BRK_CFG_CONCURRENCY_AUTO |
				     BRK_CFG_MIN_CONCURRENT, &what));
	assert_int_equal(round_of(u, b, 64, 10), 4);
	c.min_concurrent = 65;
	ut_rc(-EINVAL, brk_breaker_update(b, &c, BRK_CFG_MIN_CONCURRENT, &what));
	assert_string_equal(what, "min_concurrent");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(settings_are_validated_and_named),
		UT_TEST(an_older_config_gets_the_min_concurrent_default),
		UT_TEST(auto_starts_at_the_initial_limit),
		UT_TEST(the_limit_falls_when_latency_rises_and_not_below_min),
		UT_TEST(the_limit_rises_back_when_latency_falls_and_not_above_max),
		cmocka_unit_test(the_baseline_is_the_windows_minimum_not_their_mean),
		UT_TEST(the_window_minimum_reaches_the_baseline_through_shm),
		cmocka_unit_test(a_persistent_step_is_the_new_baseline_after_two_periods),
		UT_TEST(a_transient_queue_does_not_raise_the_baseline),
		UT_TEST(no_growth_while_app_limited),
		UT_TEST(an_app_limited_limit_still_falls),
		UT_TEST(the_baseline_is_re_measured_after_a_persistent_step),
		UT_TEST(two_processes_feed_one_limit),
		UT_TEST(only_answers_and_timeouts_are_samples),
		UT_TEST(a_garbage_ac_word_is_clamped),
		UT_TEST(an_auto_bulkhead_wait_estimate_uses_the_learned_latency),
		UT_TEST(a_static_bulkhead_leaves_the_words_alone),
		UT_TEST(auto_switched_on_by_an_update),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
