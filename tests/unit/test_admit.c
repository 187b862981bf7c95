/*
 * test_admit.c - brk_admit() (breaker.h "Admission"): the fixed order of
 * the gates, the deadline (EXPIRED at once, no sleep), the reserve for
 * high priority (bulkhead and rate), the retry budget, bad requests, and
 * brk_admit_release()'s mapping of a 429 to BRK_THROTTLED when paced.
 *
 * The fake clock is injected, so brk_admit() never sleeps: where it would,
 * it returns the refusal with wait_ms, and the test advances the clock.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("adm", 0)

static brk_bucket *pace(struct ut *u, const char *name, double ceil,
			uint32_t burst, uint32_t reserve)
{
	struct brk_pace_config pc;
	brk_bucket *k = NULL;

	ut_rc(0, brk_pace_config_init(&pc));
	pc.ceiling_per_s = ceil;
	pc.burst = burst;
	pc.reserve_pct = reserve;
	ut_rc(0, brk_pace_get(u->seg, name, &pc, &k));
	return k;
}

static brk_budget *budget(struct ut *u, const char *name, double ratio)
{
	brk_budget *g = NULL;

	ut_rc(0, brk_budget_get(u->seg, name, 0, ratio, &g));
	return g;
}

static void req_init(struct brk_admit_req *q, brk_breaker *b, brk_bucket *k,
		     brk_budget *g)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->breaker = b;
	q->pace = k;
	q->budget = g;
}

/* A Retry-After of @ms cools @b (shared cool-until). */
static void cool(brk_breaker *b, int64_t ms)
{
	brk_permit p;

	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, ms));
}

/* The acceptance: a job with 1 s left is refused EXPIRED at once
 * when the wait is 3 s - nothing asked, nothing counted. */
static void one_second_left_wait_three_expired_at_once(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_info i;
	brk_breaker *b;
	uint64_t t0;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	cool(b, 3000);
	req_init(&q, b, NULL, NULL);
	q.deadline_ns = ut_now_ns(u) + UT_NS_PER_S;
	q.max_wait_ms = 5000;
	t0 = ut_now_ns(u);
	ut_rc(-BRK_EEXPIRED, brk_admit(&q, &a));
	assert_int_equal(ut_now_ns(u), t0);
	assert_int_equal(a.code, BRK_ADMIT_EXPIRED);
	assert_string_equal(brk_admit_code_name(a.code), "EXPIRED");
	assert_int_equal(a.wait_ms, 3000);
	assert_string_equal(a.by, "svc");
	ut_info(b, &i);
	assert_int_equal(i.counters.rejected_cooling, 0); /* not asked */
	assert_int_equal(i.counters.allowed, 1);          /* cool()'s call */
	assert_int_equal(i.in_flight, 0);
	ut_rc(-BRK_ESTALE, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
}

/* ... and admitted after the wait when it is 0.5 s. */
static void one_second_left_wait_half_admitted_after_it(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	cool(b, 500);
	req_init(&q, b, NULL, NULL);
	q.deadline_ns = ut_now_ns(u) + UT_NS_PER_S;
	q.max_wait_ms = 5000;
	ut_rc(-BRK_ECOOLING, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_COOLING);
	assert_int_equal(a.cause, BRK_CAUSE_COOLING);
	assert_in_range(a.wait_ms, 500, 625); /* jittered, within max_wait */
	ut_advance_ms(u, a.wait_ms);
	ut_rc(0, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_GO);
	assert_string_equal(a.by, "");
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0); /* no bulkhead: the permit is a token */
	ut_rc(0, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
	ut_rc(-BRK_ESTALE, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.counters.successes, 1);
}

/* The same with the pace's wait: 1 token/s, burst 1, just taken. */
static void deadline_against_the_pace(void **state)
{
	struct ut *u = *state;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_bucket_info bi;
	brk_bucket *k = pace(u, "api", 1.0, 1, 0);
	brk_bucket *k2 = pace(u, "api2", 2.0, 1, 0);

	req_init(&q, NULL, k, NULL);
	q.max_wait_ms = 5000;
	ut_rc(0, brk_admit(&q, &a));
	ut_rc(0, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
	q.deadline_ns = ut_now_ns(u) + UT_NS_PER_S / 2; /* 0.5 s left, wait 1 s */
	ut_rc(-BRK_EEXPIRED, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_EXPIRED);
	assert_string_equal(a.by, "api");
	assert_in_range(a.wait_ms, 999, 1000);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.denied, 0); /* not asked */

	/* 2/s: the wait is 0.5 s, 1 s left: come back in wait_ms, then GO */
	req_init(&q, NULL, k2, NULL);
	q.max_wait_ms = 5000;
	ut_rc(0, brk_admit(&q, &a));
	ut_rc(0, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
	q.deadline_ns = ut_now_ns(u) + UT_NS_PER_S;
	ut_rc(-BRK_ENOTOKENS, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_RATE_LIMITED);
	assert_in_range(a.wait_ms, 500, 1000); /* wake: + jitter below T */
	ut_advance_ms(u, a.wait_ms);
	ut_rc(0, brk_admit(&q, &a));
	assert_true(a.taken_at_ns == ut_now_ns(u));
	ut_rc(0, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
}

/* A wait longer than max_wait_ms (no deadline) is the gate's refusal. */
static void wait_above_max_wait_is_the_gates_refusal(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_admit_req q;
	struct brk_admission a;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3); /* open 1 s */
	req_init(&q, b, NULL, NULL);
	q.max_wait_ms = 0; /* never sleeps */
	ut_rc(-BRK_EOPEN, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_BREAKER_OPEN);
	assert_int_equal(a.cause, BRK_CAUSE_OPEN);
	assert_int_equal(a.wait_ms >= 1000, 1);
}

/* A job several gates would refuse gets the first in the order:
 * EXPIRED, breaker (open, cooling, full), pace, budget. */
static void first_refusal_in_the_fixed_order(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_admit_req q;
	struct brk_admission a, held;
	struct brk_info i;
	struct brk_bucket_info bi;
	brk_breaker *open, *cooling, *full, *fine;
	brk_bucket *k = pace(u, "api", 1.0, 1, 0);
	brk_budget *g = budget(u, "retries", 0.1);
	brk_permit p;

	ut_cfg(&c);
	c.max_concurrent = 1;
	open = ut_breaker(u, "open", &c);
	cooling = ut_breaker(u, "cooling", &c);
	full = ut_breaker(u, "full", &c);
	fine = ut_breaker(u, "fine", &c);
	ut_fail_n(open, 3);
	cool(cooling, 3000);
	ut_acquire_ok(full, &p);
	/* empty the pace; the budget has nothing (retry, no deposits) */
	req_init(&q, NULL, k, NULL);
	ut_rc(0, brk_admit(&q, &held));
	ut_rc(0, brk_admit_release(&held, BRK_SUCCESS, 0, 0));

	req_init(&q, open, k, g);
	q.attempt = BRK_RETRY;
	q.deadline_ns = ut_now_ns(u) + UT_NS_PER_S / 10;
	ut_rc(-BRK_EEXPIRED, brk_admit(&q, &a));
	assert_string_equal(a.by, "open");
	q.deadline_ns = 0;
	ut_rc(-BRK_EOPEN, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_BREAKER_OPEN);
	q.breaker = cooling;
	ut_rc(-BRK_ECOOLING, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_COOLING);
	assert_string_equal(a.by, "cooling");
	q.breaker = full;
	ut_rc(-BRK_EFULL, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_BULKHEAD_FULL);
	assert_int_equal(a.cause, BRK_CAUSE_FULL);
	assert_int_equal(a.wait_ms, 0);
	q.breaker = fine;
	ut_rc(-BRK_ENOTOKENS, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_RATE_LIMITED);
	assert_string_equal(a.by, "api");
	ut_info(fine, &i);
	assert_int_equal(i.in_flight, 0);          /* permit given back */
	assert_int_equal(i.counters.cancelled, 1); /* ... with no verdict */
	ut_advance_ms(u, 1000);
	ut_rc(-BRK_EDEFERRED, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_DEFERRED);
	assert_string_equal(a.by, "retries");
	ut_info(fine, &i);
	assert_int_equal(i.in_flight, 0);
	assert_int_equal(i.counters.cancelled, 2);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.taken, 2); /* the pace token is not given back */
	ut_release_ok(&p, BRK_SUCCESS, 0);
	/* every refusal counted by the record that refused */
	ut_info(open, &i);
	assert_int_equal(i.counters.rejected_open, 1);
	ut_info(cooling, &i);
	assert_int_equal(i.counters.rejected_cooling, 1);
	ut_info(full, &i);
	assert_int_equal(i.counters.rejected_full, 1);
}

/* Retries draw the budget, first attempts deposit. */
static void retries_draw_first_attempts_deposit(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_budget_info gi;
	brk_budget *g = budget(u, "retries", 0.5);
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	req_init(&q, b, NULL, g);
	q.attempt = BRK_RETRY;
	ut_rc(-BRK_EDEFERRED, brk_admit(&q, &a)); /* nothing deposited yet */
	q.attempt = BRK_FIRST_ATTEMPT;
	ut_rc(0, brk_admit(&q, &a));
	ut_rc(0, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
	ut_rc(0, brk_admit(&q, &a));
	ut_rc(0, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
	ut_rc(0, brk_budget_info(g, &gi));
	assert_int_equal(gi.deposits, 2);
	q.attempt = BRK_RETRY;
	ut_rc(0, brk_admit(&q, &a)); /* 2 x 0.5 = one retry */
	ut_rc(0, brk_admit_release(&a, BRK_FAILURE, BRK_REASON_TIMEOUT, 0));
	ut_rc(-BRK_EDEFERRED, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_DEFERRED);
	ut_rc(0, brk_budget_info(g, &gi));
	assert_int_equal(gi.retries, 1);
	assert_int_equal(gi.deferred, 2);
	assert_int_equal(gi.deposits, 2); /* retries deposit nothing */
}

/* 20 % reserved, bulkhead of 10: normal work never holds more than 8,
 * through brk_admit() or brk_acquire(); high priority gets the last 2. */
static void reserve_bulkhead_high_gets_through(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_admit_req q;
	struct brk_admission a[12];
	struct brk_refusal why;
	struct brk_info i;
	brk_breaker *b;
	brk_permit p;
	int k;

	ut_cfg(&c);
	c.max_concurrent = 10;
	c.reserve_pct = 20;
	b = ut_breaker(u, "svc", &c);
	ut_info(b, &i);
	assert_int_equal(i.config.reserve_pct, 20);
	req_init(&q, b, NULL, NULL);
	for (k = 0; k < 8; k++)
		ut_rc(0, brk_admit(&q, &a[k]));
	ut_rc(-BRK_EFULL, brk_admit(&q, &a[8]));
	assert_int_equal(a[8].code, BRK_ADMIT_BULKHEAD_FULL);
	ut_rc(-BRK_EFULL, brk_acquire(b, &p, &why)); /* brk_acquire: normal */
	q.priority = BRK_PRIORITY_HIGH;
	ut_rc(0, brk_admit(&q, &a[8]));
	ut_rc(0, brk_admit(&q, &a[9]));
	ut_rc(-BRK_EFULL, brk_admit(&q, &a[10])); /* all 10 out */
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 10);
	/* one normal permit back: normal may take one again, not two */
	ut_rc(0, brk_admit_release(&a[0], BRK_SUCCESS, 0, 0));
	q.priority = BRK_PRIORITY_NORMAL;
	ut_rc(-BRK_EFULL, brk_admit(&q, &a[0])); /* 9 out >= 8 */
	ut_rc(0, brk_admit_release(&a[8], BRK_SUCCESS, 0, 0));
	ut_rc(-BRK_EFULL, brk_admit(&q, &a[8])); /* 8 out: still full */
	ut_rc(0, brk_admit_release(&a[1], BRK_SUCCESS, 0, 0));
	ut_rc(0, brk_admit(&q, &a[1])); /* 7 out: one more normal */
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 8);
	for (k = 1; k < 8; k++)
		ut_rc(0, brk_admit_release(&a[k], BRK_SUCCESS, 0, 0));
	ut_rc(0, brk_admit_release(&a[9], BRK_SUCCESS, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
}

/* 20 % of a 10/s pace reserved: a flood of normal work (one try per ms
 * for 10 s) gets at most 8/s; high work at 2/s gets every request
 * through meanwhile. (High asks start after 1 s: the flood's first burst
 * at t = 0 spends the shared tolerance too, and the shared TAT regains
 * only 25 ms per normal take - a high take in the first few hundred ms
 * may wait up to one interval.) */
static void reserve_rate_high_gets_through_a_normal_flood(void **state)
{
	struct ut *u = *state;
	struct brk_admit_req nq, hq;
	struct brk_admission a;
	brk_bucket *k = pace(u, "api", 10.0, 2, 20);
	unsigned normal = 0, high = 0, high_asked = 0, ms;

	req_init(&nq, NULL, k, NULL);
	req_init(&hq, NULL, k, NULL);
	hq.priority = BRK_PRIORITY_HIGH;
	for (ms = 0; ms < 10000; ms++) {
		if (brk_admit(&nq, &a) == 0) {
			normal++;
			ut_rc(0, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
		} else {
			assert_int_equal(a.code, BRK_ADMIT_RATE_LIMITED);
		}
		if (ms % 500 == 250 && ms >= 1000) {
			high_asked++;
			if (brk_admit(&hq, &a) != 0)
				fprintf(stderr, "high refused at %u ms: %s wait %llu\n", ms,
					brk_admit_code_name(a.code),
					(unsigned long long)a.wait_ms);
			else {
				high++;
				ut_rc(0, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
			}
		}
		ut_advance_ms(u, 1);
	}
	/* 8/s for 10 s plus the burst */
	assert_in_range(normal, 75, 8 * 10 + 2);
	assert_int_equal(high, high_asked);
	assert_int_equal(high_asked, 18);
}

/* A 429 released through a paced admission is THROTTLED: five in a row
 * leave the breaker closed, the pace is cut; without a pace they open. */
static void paced_429_is_throttled_unpaced_opens(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_info i;
	struct brk_bucket_info bi;
	brk_bucket *k = pace(u, "api", 1000.0, 2, 0);
	brk_bucket *plain;
	brk_breaker *b, *b2, *b3;
	int n;

	ut_cfg(&c);
	c.failure_threshold = 5;
	b = ut_breaker(u, "paced", &c);
	b2 = ut_breaker(u, "unpaced", &c);
	b3 = ut_breaker(u, "plainly", &c);
	req_init(&q, b, k, NULL);
	for (n = 0; n < 5; n++) {
		ut_rc(0, brk_admit(&q, &a));
		ut_rc(0, brk_admit_release(&a, BRK_FAILURE, BRK_REASON_RATE_LIMITED,
					   1000));
		assert_int_equal(a.outcome, BRK_THROTTLED); /* what was recorded */
		ut_advance_ms(u, 10);
	}
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.counters.throttled, 5);
	assert_int_equal(i.cool_until_remaining_ms, 0);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.limited, 5);
	assert_true(bi.cuts >= 1);
	assert_true(bi.learned_per_s < 1000.0);

	/* a plain bucket gates but does not learn: a 429 stays a failure */
	ut_rc(0, brk_bucket_get(u->seg, "plain", 1000.0, 10, &plain));
	req_init(&q, b3, plain, NULL);
	ut_rc(0, brk_admit(&q, &a));
	ut_rc(0, brk_admit_release(&a, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 0));
	assert_int_equal(a.outcome, BRK_FAILURE);
	ut_info(b3, &i);
	assert_int_equal(i.counters.throttled, 0);
	assert_int_equal(i.counters.failures_by_reason[BRK_REASON_RATE_LIMITED], 1);

	req_init(&q, b2, NULL, NULL);
	for (n = 0; n < 5; n++) {
		ut_advance_ms(u, 1000); /* past each cool-until */
		ut_rc(0, brk_admit(&q, &a));
		ut_rc(0, brk_admit_release(&a, BRK_FAILURE, BRK_REASON_RATE_LIMITED,
					   1000));
	}
	ut_info(b2, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.counters.throttled, 0);
}

/* Bad requests: -EINVAL, nothing taken, nothing counted. */
static void bad_requests_take_nothing(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_info i;
	struct brk_bucket_info bi;
	struct brk_budget_info gi;
	struct ut_rand r2 = { 0x1234ULL };
	brk_segment *other = ut_attach_other(u, &r2);
	brk_bucket *k = pace(u, "api", 10.0, 2, 0);
	brk_budget *g = budget(u, "retries", 0.5);
	brk_breaker *b, *b_other;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "svc", &c);
	b_other = ut_breaker_on(other, "svc2", &c);

	ut_rc(-EINVAL, brk_admit(NULL, &a));
	assert_int_equal(a.code, -1);
	req_init(&q, b, k, g);
	ut_rc(-EINVAL, brk_admit(&q, NULL));
	req_init(&q, NULL, NULL, NULL);
	ut_rc(-EINVAL, brk_admit(&q, &a)); /* no record */
	assert_int_equal(a.code, -1);
	req_init(&q, b, k, g);
	q.attempt = 2;
	ut_rc(-EINVAL, brk_admit(&q, &a));
	req_init(&q, b, k, g);
	q.priority = 7;
	ut_rc(-EINVAL, brk_admit(&q, &a));
	req_init(&q, b, k, g);
	q.size = 3;
	ut_rc(-EINVAL, brk_admit(&q, &a));
	req_init(&q, b_other, k, g); /* two segment handles */
	ut_rc(-EINVAL, brk_admit(&q, &a));
	ut_rc(-BRK_ESTALE, brk_admit_release(&a, BRK_SUCCESS, 0, 0));
	ut_rc(-EINVAL, brk_admit_release(NULL, BRK_SUCCESS, 0, 0));

	ut_info(b, &i);
	assert_int_equal(i.counters.allowed, 0);
	assert_int_equal(i.in_flight, 0);
	ut_info(b_other, &i);
	assert_int_equal(i.counters.allowed, 0);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.taken, 0);
	ut_rc(0, brk_budget_info(g, &gi));
	assert_int_equal(gi.deposits, 0);

	/* an unknown outcome at release: the permit is freed, -EINVAL */
	req_init(&q, b, k, g);
	ut_rc(0, brk_admit(&q, &a));
	ut_rc(-EINVAL, brk_admit_release(&a, 99, 0, 0));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
	brk_detach(other);
}

static void names_and_codes(void **state)
{
	(void)state;
	assert_string_equal(brk_admit_code_name(BRK_ADMIT_GO), "GO");
	assert_string_equal(brk_admit_code_name(BRK_ADMIT_BREAKER_OPEN), "BREAKER_OPEN");
	assert_string_equal(brk_admit_code_name(BRK_ADMIT_COOLING), "COOLING");
	assert_string_equal(brk_admit_code_name(BRK_ADMIT_RATE_LIMITED), "RATE_LIMITED");
	assert_string_equal(brk_admit_code_name(BRK_ADMIT_BULKHEAD_FULL), "BULKHEAD_FULL");
	assert_string_equal(brk_admit_code_name(BRK_ADMIT_DEFERRED), "DEFERRED");
	assert_string_equal(brk_admit_code_name(BRK_ADMIT_CONTENDED), "CONTENDED");
	assert_string_equal(brk_admit_code_name(8), "UNKNOWN");
	assert_string_equal(brk_admit_code_name(-1), "UNKNOWN");
	assert_string_equal(brk_outcome_code(BRK_SUCCESS, 0), "OK");
	assert_string_equal(brk_outcome_code(BRK_FAILURE, BRK_REASON_TIMEOUT), "UPSTREAM_TIMEOUT");
	assert_string_equal(brk_outcome_code(BRK_FAILURE, BRK_REASON_CONNECT), "UPSTREAM_UNREACHABLE");
	assert_string_equal(brk_outcome_code(BRK_FAILURE, BRK_REASON_SERVER_ERROR), "UPSTREAM_ERROR");
	assert_string_equal(brk_outcome_code(BRK_FAILURE, BRK_REASON_OVERLOADED), "UPSTREAM_OVERLOADED");
	assert_string_equal(brk_outcome_code(BRK_FAILURE, BRK_REASON_RATE_LIMITED), "UPSTREAM_RATE_LIMITED");
	assert_string_equal(brk_outcome_code(BRK_FAILURE, BRK_REASON_OTHER), "UPSTREAM_FAILED");
	assert_string_equal(brk_outcome_code(BRK_FAILURE, BRK_REASON_NONE), "UPSTREAM_FAILED");
	assert_string_equal(brk_outcome_code(BRK_FAILURE, 99), "UNKNOWN");
	assert_string_equal(brk_outcome_code(BRK_HEALTHY_ERROR, 0), "BUSINESS_ERROR");
	assert_string_equal(brk_outcome_code(BRK_REJECTED_REQUEST, 0), "SCHEMA_REJECTED");
	assert_string_equal(brk_outcome_code(BRK_CANCELLED, 0), "CANCELLED");
	assert_string_equal(brk_outcome_code(BRK_THROTTLED, 0), "THROTTLED");
	assert_string_equal(brk_outcome_code(0, 0), "UNKNOWN");
	assert_string_equal(brk_strerror(-BRK_EEXPIRED),
			    "refused: the deadline would pass before the wait ends");
	assert_true(brk_is_refusal(-BRK_EEXPIRED));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(one_second_left_wait_three_expired_at_once),
		UT_TEST(one_second_left_wait_half_admitted_after_it),
		UT_TEST(deadline_against_the_pace),
		UT_TEST(wait_above_max_wait_is_the_gates_refusal),
		UT_TEST(first_refusal_in_the_fixed_order),
		UT_TEST(retries_draw_first_attempts_deposit),
		UT_TEST(reserve_bulkhead_high_gets_through),
		UT_TEST(reserve_rate_high_gets_through_a_normal_flood),
		UT_TEST(paced_429_is_throttled_unpaced_opens),
		UT_TEST(bad_requests_take_nothing),
		UT_TEST(names_and_codes),
	};
	return cmocka_run_group_tests_name("admit", tests, NULL, NULL);
}
