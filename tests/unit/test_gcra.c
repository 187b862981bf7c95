/*
 * test_gcra.c - GCRA buckets on a fake clock: exact burst and rate,
 * not-before times, validation, rescaling on configure, saturation near
 * the top of the clock, hostile settings words, listing.
 */
#include "fixture.h"

#include "fixture_layout.h" /* private: to corrupt words by hand */

UT_GROUP_FIXTURES("gcra", 64)

#define T200 (5 * UT_NS_PER_MS) /* 200/s */

static brk_bucket *bucket(struct ut *u, const char *name, double rate,
			  uint32_t burst)
{
	brk_bucket *k = NULL;

	ut_rc(0, brk_bucket_get(u->seg, name, rate, burst, &k));
	assert_non_null(k);
	return k;
}

/* How many single tokens are granted right now (until the first refusal). */
static unsigned drain(brk_bucket *k, uint64_t *nb)
{
	unsigned n = 0;
	int rc;

	while ((rc = brk_bucket_take(k, 1, nb)) == 0)
		n++;
	assert_int_equal(rc, -BRK_ENOTOKENS);
	return n;
}

/* ---- exactness ------------------------------------------------------- */

static void new_bucket_grants_its_burst_then_one_per_interval(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "api/eu", 200.0, 20);
	uint64_t t0 = ut_now_ns(u), nb = 0;
	unsigned granted = 0, step;

	/* a new bucket is full: exactly 20 at once */
	assert_int_equal(drain(k, &nb), 20);
	assert_int_equal(nb, t0 + T200);
	/* then exactly one per 5 ms: 200 more by t0 + 1 s */
	for (step = 1; step <= 200; step++) {
		ut_set_ns(u, t0 + step * T200 - 1);
		ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, &nb));
		assert_int_equal(nb, t0 + step * T200);
		ut_set_ns(u, t0 + step * T200);
		granted += drain(k, &nb);
	}
	assert_int_equal(granted, 200);
	assert_int_equal(ut_now_ns(u), t0 + UT_NS_PER_S);
}

static void bucket_loses_no_grant_and_never_refills_past_burst(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "b", 200.0, 20);
	uint64_t nb, t0 = ut_now_ns(u);
	unsigned total = drain(k, &nb), i;

	/* take every 1 ms for 1 s: every grant accounted, none lost */
	for (i = 1; i <= 1000; i++) {
		ut_set_ns(u, t0 + i * UT_NS_PER_MS);
		total += drain(k, &nb);
	}
	assert_int_equal(total, 220);
	/* idle for 10 s: full again, never more than the burst */
	ut_advance_ns(u, 10 * UT_NS_PER_S);
	assert_int_equal(drain(k, &nb), 20);
}

static void take_n_refused_until_n_intervals_then_granted(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "n", 200.0, 20);
	uint64_t nb, t0 = ut_now_ns(u);

	ut_rc(0, brk_bucket_take(k, 20, &nb));
	assert_int_equal(nb, t0); /* granted: "now" */
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 5, &nb));
	assert_int_equal(nb, t0 + 5 * T200);
	ut_set_ns(u, nb - 1);
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 5, &nb));
	assert_int_equal(nb, t0 + 5 * T200);
	ut_set_ns(u, nb);
	ut_rc(0, brk_bucket_take(k, 5, NULL));
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, NULL));
	/* n == burst on a full bucket */
	ut_advance_ns(u, 20 * T200);
	ut_rc(0, brk_bucket_take(k, 20, NULL));
	/* n > burst could never succeed */
	ut_advance_ns(u, UT_NS_PER_S);
	ut_rc(-EINVAL, brk_bucket_take(k, 21, &nb));
	ut_rc(-EINVAL, brk_bucket_take(k, 0, &nb));
	ut_rc(-EINVAL, brk_bucket_take(k, UINT32_MAX, &nb));
	ut_rc(-EINVAL, brk_bucket_take(NULL, 1, &nb));
}

static void bucket_info_reports_settings_tokens_and_counters(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "info", 200.0, 20);
	struct brk_bucket_info bi;
	uint64_t nb;

	memset(&bi, 0xa5, sizeof bi);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_string_equal(bi.name, "info");
	assert_int_equal(bi.configured, 1);
	assert_int_equal(bi.burst, 20);
	assert_int_equal(bi.interval_ns, T200);
	assert_true(fabs(bi.rate_per_s - 200.0) < 1e-9);
	assert_true(fabs(bi.tokens - 20.0) < 1e-9);
	assert_int_equal(bi.full_in_ns, 0);
	assert_int_equal(bi.taken + bi.denied + bi.tokens_taken, 0);

	ut_rc(0, brk_bucket_take(k, 15, &nb));
	ut_rc(0, brk_bucket_take(k, 5, &nb));
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, &nb));
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 3, &nb));
	ut_advance_ns(u, T200 / 2);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_true(fabs(bi.tokens - 0.5) < 1e-9);
	assert_int_equal(bi.full_in_ns, 20 * T200 - T200 / 2);
	assert_int_equal(bi.taken, 2);
	assert_int_equal(bi.denied, 2);
	assert_int_equal(bi.tokens_taken, 20);
	assert_string_equal(brk_bucket_name(k), "info");
	ut_rc(-EINVAL, brk_bucket_info(NULL, &bi));
	ut_rc(-EINVAL, brk_bucket_info(k, NULL));
}

/*
 * A full bucket reports exactly burst tokens, never more: with a long
 * interval and a big burst, T * burst is above 2^53 and dividing the two
 * as doubles gave burst + 1e-10 (found by tests/fuzz/fuzz_segment). Legal
 * settings: 1.23456e-4/s (T = 8100051840332 ns), burst 999990.
 */
static void full_bucket_reports_at_most_burst_tokens(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "slowbig", 1.23456e-4, 999990);
	struct brk_bucket_info bi;
	uint64_t nb;

	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.burst, 999990);
	if (!(bi.tokens <= 999990.0))
		fail_msg("full bucket: %.10f tokens > burst 999990", bi.tokens);
	assert_true(bi.tokens == 999990.0);
	ut_rc(0, brk_bucket_take(k, 1, &nb));
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_true(bi.tokens == 999989.0);
	ut_advance_ns(u, bi.interval_ns / 2);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_true(bi.tokens > 999989.0 && bi.tokens < 999990.0);
}

/* ---- validation -------------------------------------------------------- */

static void bad_rate_or_burst_is_einval_and_creates_nothing(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = NULL;
	const double bad_rates[] = { 0.0, -1.0, -0.0, NAN, INFINITY, -INFINITY,
				     1e12, 1e9 * 1.0001, 1e-9, 9e-5, -1e-300 };
	const uint32_t bad_bursts[] = { 0, 1000001, 1000000000u, UINT32_MAX };
	size_t i;

	for (i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++)
		ut_rc(-EINVAL, brk_bucket_get(u->seg, "x", bad_rates[i], 10, &k));
	for (i = 0; i < sizeof bad_bursts / sizeof bad_bursts[0]; i++)
		ut_rc(-EINVAL, brk_bucket_get(u->seg, "x", 10.0, bad_bursts[i], &k));
	ut_rc(-EINVAL, brk_bucket_get(u->seg, "x", 1e12, 1000000000u, &k));
	assert_null(k);
	/* nothing was created by the refused calls */
	ut_rc(-ENOENT, brk_bucket_find(u->seg, "x", &k));
	ut_rc(-EINVAL, brk_bucket_get(u->seg, "bad name", 10.0, 10, &k));
	ut_rc(-EINVAL, brk_bucket_get(NULL, "x", 10.0, 10, &k));
	ut_rc(-EINVAL, brk_bucket_get(u->seg, "x", 10.0, 10, NULL));

	/* the edges are valid */
	ut_rc(0, brk_bucket_get(u->seg, "max", BRK_BUCKET_MAX_RATE,
				 BRK_BUCKET_MAX_BURST, &k));
	ut_rc(0, brk_bucket_take(k, BRK_BUCKET_MAX_BURST, NULL));
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, NULL));
	ut_rc(0, brk_bucket_get(u->seg, "min", BRK_BUCKET_MIN_RATE,
				 BRK_BUCKET_MAX_BURST, &k));
	ut_rc(0, brk_bucket_take(k, BRK_BUCKET_MAX_BURST, NULL));
	ut_rc(0, brk_bucket_get(u->seg, "one", 1.0, 1, &k));

	for (i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++)
		ut_rc(-EINVAL, brk_bucket_configure(k, bad_rates[i], 1));
	ut_rc(-EINVAL, brk_bucket_configure(k, 1.0, 0));
	ut_rc(-EINVAL, brk_bucket_configure(NULL, 1.0, 1));
}

static void later_bucket_get_keeps_the_first_settings(void **state)
{
	struct ut *u = *state;
	brk_bucket *a = bucket(u, "keep", 200.0, 20), *b;
	brk_segment *other = ut_attach_clock(u, NULL, 0);
	struct brk_bucket_info bi;
	uint64_t nb;

	assert_int_equal(drain(a, &nb), 20);
	/* another process starting later with other settings changes nothing */
	ut_rc(0, brk_bucket_get(other, "keep", 1.0, 1000, &b));
	ut_rc(0, brk_bucket_info(b, &bi));
	assert_int_equal(bi.burst, 20);
	assert_int_equal(bi.interval_ns, T200);
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(b, 1, &nb));
	assert_int_equal(nb, ut_now_ns(u) + T200);
	/* and the two handles share the one TAT */
	ut_advance_ns(u, 4 * T200);
	ut_rc(0, brk_bucket_take(b, 2, NULL));
	ut_rc(0, brk_bucket_take(a, 2, NULL));
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(a, 1, NULL));
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(b, 1, NULL));
	brk_detach(other);
}

static void bucket_name_is_refused_as_breaker_or_budget(void **state)
{
	struct ut *u = *state;
	brk_bucket *k;
	brk_breaker *b;
	brk_budget *g;

	ut_rc(-ENOENT, brk_bucket_find(u->seg, "k", &k));
	(void)bucket(u, "k", 10.0, 1);
	ut_rc(0, brk_bucket_find(u->seg, "k", &k));
	assert_string_equal(brk_bucket_name(k), "k");
	ut_rc(-EMEDIUMTYPE, brk_breaker_get(u->seg, "k", NULL, &b));
	ut_rc(-EMEDIUMTYPE, brk_breaker_find(u->seg, "k", &b));
	ut_rc(-EMEDIUMTYPE, brk_budget_get(u->seg, "k", 10.0, 0.2, &g));
	ut_rc(0, brk_breaker_get(u->seg, "brk", NULL, &b));
	ut_rc(-EMEDIUMTYPE, brk_bucket_get(u->seg, "brk", 10.0, 1, &k));
	ut_rc(-EMEDIUMTYPE, brk_bucket_find(u->seg, "brk", &k));
}

static void readonly_handle_reads_a_bucket_but_cannot_take(void **state)
{
	struct ut *u = *state;
	brk_segment *ro = ut_attach_clock(u, NULL, 1);
	brk_bucket *k;
	struct brk_bucket_info bi;

	(void)bucket(u, "ro", 10.0, 5);
	ut_rc(-EROFS, brk_bucket_get(ro, "absent", 10.0, 5, &k));
	ut_rc(0, brk_bucket_find(ro, "ro", &k));
	ut_rc(-EROFS, brk_bucket_take(k, 1, NULL));
	ut_rc(-EROFS, brk_bucket_configure(k, 1.0, 1));
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.burst, 5);
	brk_detach(ro);
}

static void no_tokens_and_deferred_are_refusals_with_a_message(void **state)
{
	(void)state;
	assert_true(brk_is_refusal(-BRK_ENOTOKENS));
	assert_true(brk_is_refusal(-BRK_EDEFERRED));
	assert_false(brk_is_refusal(-EINVAL));
	assert_non_null(strstr(brk_strerror(-BRK_ENOTOKENS), "token"));
	assert_non_null(strstr(brk_strerror(-EMEDIUMTYPE), "budget"));
}

/* ---- configure ----------------------------------------------------------- */

static void raised_rate_repays_owed_tokens_at_the_new_rate(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "raise", 1.0, 10);
	uint64_t nb, t0;
	unsigned got = 0, i;

	assert_int_equal(drain(k, &nb), 10);
	/* empty at 1/s: the next token is 1 s away */
	assert_int_equal(nb, ut_now_ns(u) + UT_NS_PER_S);
	ut_rc(0, brk_bucket_configure(k, 100.0, 10));
	/* redis-cell #54: with the old TAT it would refuse for 10 s; here
	 * the 10 owed tokens stay owed at the new rate: 10 ms per token */
	t0 = ut_now_ns(u);
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, &nb));
	assert_int_equal(nb, t0 + 10 * UT_NS_PER_MS);
	ut_set_ns(u, t0 + 10 * UT_NS_PER_MS);
	ut_rc(0, brk_bucket_take(k, 1, &nb));
	for (i = 1; i <= 100; i++) {
		ut_set_ns(u, t0 + 10 * UT_NS_PER_MS + i * 10 * UT_NS_PER_MS);
		got += drain(k, &nb);
	}
	assert_int_equal(got, 100); /* 100/s, no burst left over */
	/* same settings again: nothing changes */
	ut_rc(0, brk_bucket_configure(k, 100.0, 10));
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, &nb));
}

static void lowered_rate_spaces_owed_tokens_at_the_new_rate(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "lower", 100.0, 10);
	struct brk_bucket_info bi;
	uint64_t nb, t0;

	assert_int_equal(drain(k, &nb), 10);
	t0 = ut_now_ns(u);
	ut_rc(0, brk_bucket_configure(k, 1.0, 10));
	/* still owes 10 tokens, now 1 s each: the first is 1 s away */
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, &nb));
	assert_int_equal(nb, t0 + UT_NS_PER_S);
	ut_set_ns(u, t0 + UT_NS_PER_S);
	ut_rc(0, brk_bucket_take(k, 1, NULL));
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, NULL));
	/* a smaller burst clamps what is owed to one bucket */
	ut_rc(0, brk_bucket_configure(k, 1.0, 2));
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.burst, 2);
	assert_true(bi.full_in_ns <= 2 * UT_NS_PER_S);
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, &nb));
	assert_int_equal(nb, ut_now_ns(u) + UT_NS_PER_S);
	/* a full bucket stays full across a change */
	ut_advance_ns(u, 100 * UT_NS_PER_S);
	ut_rc(0, brk_bucket_configure(k, 1000.0, 50));
	assert_int_equal(drain(k, &nb), 50);
}

static void wake_time_jitter_stays_within_one_interval(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "wake", 200.0, 20);
	uint64_t nb, w, lo = UINT64_MAX, hi = 0;
	double sum = 0;
	int i;

	assert_int_equal(drain(k, &nb), 20);
	for (i = 0; i < 10000; i++) {
		w = brk_bucket_wake_ns(k, nb);
		assert_true(w >= nb && w < nb + T200);
		lo = w < lo ? w : lo;
		hi = w > hi ? w : hi;
		sum += (double)(w - nb);
	}
	/* uniform over one interval: mean T/2, spread over nearly all of it */
	assert_true(fabs(sum / 10000 - T200 / 2.0) < T200 * 0.02);
	assert_true(lo - nb < T200 / 100 && nb + T200 - hi < T200 / 100);
	/* the wake time is no earlier than the token, and it comes */
	ut_set_ns(u, brk_bucket_wake_ns(k, nb));
	ut_rc(0, brk_bucket_take(k, 1, NULL));
	assert_int_equal(brk_bucket_wake_ns(NULL, 123), 123);
	assert_true(brk_bucket_wake_ns(k, UINT64_MAX) == UINT64_MAX);
}

#include <pthread.h>

struct race {
	brk_bucket *k;
	brk_budget *g;
	pthread_barrier_t *bar;
	unsigned got, contended;
};

static void *race_take(void *arg)
{
	struct race *r = arg;
	int i, rc;

	pthread_barrier_wait(r->bar);
	for (i = 0; i < 20000; i++) {
		rc = r->k ? brk_bucket_take(r->k, 1 + (unsigned)(i & 1), NULL)
			  : brk_retry_permitted(r->g);
		if (rc == 0)
			r->got += r->k ? 1 + (unsigned)(i & 1) : 1;
		else if (rc == -BRK_ECONTENDED)
			r->contended++;
		else if (rc != -BRK_ENOTOKENS && rc != -BRK_EDEFERRED)
			r->contended += 1000000; /* fails the test below */
	}
	return NULL;
}

/* 8 threads on a frozen clock: exactly the tokens there are, no more. */
static void threads_never_take_more_tokens_than_there_are(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "race", 1000.0, 1000);
	brk_budget *g = NULL;
	pthread_barrier_t bar;
	pthread_t th[8];
	struct race r[8];
	unsigned total, round, i;

	ut_rc(0, brk_budget_get(u->seg, "race-budget", 100.0, 1.0, &g));
	for (round = 0; round < 3; round++) {
		if (round == 2) /* no clock move from here: no decay */
			for (i = 0; i < 500; i++)
				ut_rc(0, brk_budget_deposit(g));
		pthread_barrier_init(&bar, NULL, 8);
		for (i = 0; i < 8; i++) {
			r[i] = (struct race){ round < 2 ? k : NULL,
					      round < 2 ? NULL : g, &bar, 0, 0 };
			assert_int_equal(pthread_create(&th[i], NULL, race_take,
							&r[i]), 0);
		}
		for (total = 0, i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			total += r[i].got;
			assert_true(r[i].contended < 1000000);
		}
		pthread_barrier_destroy(&bar);
		/* bucket: the last token may be out of reach of a take of 2 */
		if (round < 2)
			assert_true(total == 1000 || total == 999);
		else /* budget: the pool's 500 plus the floor's 100 */
			assert_int_equal(total, 600);
		ut_advance_ns(u, 10 * UT_NS_PER_S);
	}
}

/* ---- saturation and hostile words -------------------------------------- */

static void bucket_stays_exact_near_the_top_of_the_clock(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "top", 200.0, 20);
	uint64_t nb, start = UINT64_MAX - 2 * UT_NS_PER_S, t;
	unsigned total, i;

	/* near the top, still exact */
	ut_set_ns(u, start);
	assert_int_equal(drain(k, &nb), 20);
	assert_int_equal(nb, start + T200);
	for (total = 0, i = 1; i <= 200; i++) {
		ut_set_ns(u, start + i * T200);
		total += drain(k, &nb);
	}
	assert_int_equal(total, 200);

	/* the last 50 ms of the clock: a TAT never wraps; grants stop where
	 * the TAT would pass UINT64_MAX (not_before UINT64_MAX: "never") */
	k = bucket(u, "top2", 200.0, 20);
	start = UINT64_MAX - 50 * UT_NS_PER_MS;
	ut_set_ns(u, start);
	total = drain(k, &nb);
	assert_int_equal(total, 10); /* start + 10 T == UINT64_MAX */
	assert_int_equal(nb, UINT64_MAX);
	for (t = start; t < UINT64_MAX - T200; ) {
		t += T200;
		ut_set_ns(u, t);
		total += drain(k, &nb);
		assert_true(nb >= t);
	}
	ut_set_ns(u, UINT64_MAX);
	total += drain(k, &nb);
	assert_int_equal(nb, UINT64_MAX);
	assert_true(total <= 20 + 50 / 5); /* GCRA's bound over 50 ms */
	{
		struct brk_bucket_info bi;
		ut_rc(0, brk_bucket_info(k, &bi));
		assert_true(bi.tokens >= 0.0 && bi.tokens <= 20.0);
		assert_int_equal(bi.tokens_taken, total);
	}

	/* a huge bucket at the top: the TAT would pass UINT64_MAX */
	ut_rc(0, brk_bucket_get(u->seg, "huge", BRK_BUCKET_MIN_RATE,
				 BRK_BUCKET_MAX_BURST, &k));
	ut_set_ns(u, UINT64_MAX - UT_NS_PER_S);
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 2, &nb));
	assert_int_equal(nb, UINT64_MAX);
	/* and at 0 */
	ut_set_ns(u, 0);
	ut_rc(0, brk_bucket_get(u->seg, "zero", 200.0, 20, &k));
	assert_int_equal(drain(k, &nb), 20);
	assert_int_equal(nb, T200);
}

static void corrupt_bucket_words_are_ecorrupt_until_reconfigured(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "evil", 200.0, 20);
	struct brk_bucket_info bi;
	struct brk_info *inf = calloc(1, sizeof *inf);
	uint64_t nb, *ext, saved;
	void *map;
	size_t len;

	ext = ut_record_ext(u, "evil", BRK_KIND_BUCKET, &map, &len);
	saved = ext[BRK__BK_CFG];
	assert_int_equal(saved, BRK__BKC_MAKE(T200, 20));

	/* burst 0, T 0, T too large, burst too large: corrupt */
	ext[BRK__BK_CFG] = BRK__BKC_MAKE(T200, 0);
	ut_rc(-BRK_ECORRUPT, brk_bucket_take(k, 1, &nb));
	ut_rc(-BRK_ECORRUPT, brk_bucket_info(k, &bi));
	ext[BRK__BK_CFG] = BRK__BKC_MAKE(0, 20);
	ut_rc(-BRK_ECORRUPT, brk_bucket_take(k, 1, &nb));
	ext[BRK__BK_CFG] = BRK__BKC_MAKE(BRK__BKC_T_MAX, 20);
	ut_rc(-BRK_ECORRUPT, brk_bucket_take(k, 1, &nb));
	ext[BRK__BK_CFG] = BRK__BKC_MAKE(T200, 1048575);
	ut_rc(-BRK_ECORRUPT, brk_bucket_take(k, 1, &nb));
	/* configure repairs a corrupt settings word */
	ut_rc(0, brk_bucket_configure(k, 200.0, 20));
	ut_rc(0, brk_bucket_take(k, 1, &nb));

	/* settings not stored yet (creator between its two steps) */
	ext[BRK__BK_CFG] = 0;
	ut_rc(-EAGAIN, brk_bucket_take(k, 1, &nb));
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.configured, 0);
	ut_rc(0, brk_bucket_get(u->seg, "evil", 200.0, 20, &k));
	ut_rc(0, brk_bucket_take(k, 1, &nb));

	/* a TAT far in the future: refused with a saturated time, never a
	 * wrap; configure heals it to at most one bucket owed */
	ext[BRK__BK_TAT] = UINT64_MAX - 1;
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, &nb));
	assert_int_equal(nb, UINT64_MAX);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_true(bi.tokens == 0.0);
	ut_rc(0, brk_bucket_configure(k, 400.0, 20));
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_true(bi.full_in_ns <= 20 * (T200 / 2));
	ut_advance_ns(u, 20 * (T200 / 2));
	ut_rc(0, brk_bucket_take(k, 20, &nb));

	/* listing fills the bucket member */
	{
		uint32_t k, n = brk_record_count(u->seg), seen = 0;
		for (k = 0; k < n; k++) {
			if (brk_info_at(u->seg, ut_ref_nth(u->seg, k), inf) != 0 ||
			    strcmp(inf->name, "evil") != 0)
				continue;
			seen++;
			assert_int_equal(inf->kind, BRK_KIND_BUCKET);
			assert_string_equal(inf->bucket.name, "evil");
			assert_int_equal(inf->bucket.burst, 20);
			assert_int_equal(inf->bucket.interval_ns, T200 / 2);
			assert_true(inf->bucket.tokens_taken >= 22);
		}
		assert_int_equal(seen, 1);
	}
	free(inf);
	munmap(map, len);
}

/* Regression (issue 9): changing the rate must not write back a stale
 * burst (and the other way round): only the given setting changes. */
static void bucket_update_changes_only_the_given_setting(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = bucket(u, "upd", 100.0, 10), *other;
	brk_segment *seg2 = ut_attach_clock(u, NULL, 0);
	struct brk_bucket_info bi;

	ut_rc(0, brk_bucket_find(seg2, "upd", &other));
	/* B changes the burst; A then changes the rate with a stale burst
	 * argument (what a read-modify-write would pass): ignored */
	ut_rc(0, brk_bucket_update(other, 0.0, 25, BRK_BUCKET_BURST));
	ut_rc(0, brk_bucket_update(k, 200.0, 10, BRK_BUCKET_RATE));
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.burst, 25);
	assert_int_equal(bi.interval_ns, 5000000);
	ut_rc(0, brk_bucket_update(k, NAN, 0, 0));
	ut_rc(-EINVAL, brk_bucket_update(k, 0.0, 5, BRK_BUCKET_RATE));
	ut_rc(-EINVAL, brk_bucket_update(k, 5.0, 0, BRK_BUCKET_BURST));
	ut_rc(-EINVAL, brk_bucket_update(k, 5.0, 5, 4));
	ut_rc(-EINVAL, brk_bucket_update(NULL, 5.0, 5, BRK_BUCKET_RATE));
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.burst, 25);
	assert_int_equal(bi.interval_ns, 5000000);
	brk_detach(seg2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(bucket_update_changes_only_the_given_setting),
		UT_TEST(new_bucket_grants_its_burst_then_one_per_interval),
		UT_TEST(bucket_loses_no_grant_and_never_refills_past_burst),
		UT_TEST(take_n_refused_until_n_intervals_then_granted),
		UT_TEST(bucket_info_reports_settings_tokens_and_counters),
		UT_TEST(full_bucket_reports_at_most_burst_tokens),
		UT_TEST(bad_rate_or_burst_is_einval_and_creates_nothing),
		UT_TEST(later_bucket_get_keeps_the_first_settings),
		UT_TEST(bucket_name_is_refused_as_breaker_or_budget),
		UT_TEST(readonly_handle_reads_a_bucket_but_cannot_take),
		UT_TEST(no_tokens_and_deferred_are_refusals_with_a_message),
		UT_TEST(raised_rate_repays_owed_tokens_at_the_new_rate),
		UT_TEST(lowered_rate_spaces_owed_tokens_at_the_new_rate),
		UT_TEST(wake_time_jitter_stays_within_one_interval),
		UT_TEST(threads_never_take_more_tokens_than_there_are),
		UT_TEST(bucket_stays_exact_near_the_top_of_the_clock),
		UT_TEST(corrupt_bucket_words_are_ecorrupt_until_reconfigured),
	};
	return cmocka_run_group_tests_name("gcra", tests, NULL, NULL);
}
