/*
 * test_signals.c - the signals of brk_info (issue 11 §5): arrivals
 * (allowed + every rejected cause), completions (releases with a verdict
 * or a cancel; stale ones are not), oldest_in_flight_ms (the age of the
 * oldest bulkhead permit or probe out, from its lease's claim time, on the
 * fake clock), and the struct-growing rule: a caller with the older
 * brk_info size gets exactly its bytes.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("sig", 0)

static void oldest_in_flight_grows_with_the_clock(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p0, p1, p2;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 3;
	b = ut_breaker(u, "svc", &c);
	ut_info(b, &i);
	assert_int_equal(i.oldest_in_flight_ms, 0); /* none out */

	ut_acquire_ok(b, &p0);
	ut_info(b, &i);
	assert_int_equal(i.oldest_in_flight_ms, 0); /* just claimed */
	ut_advance_ms(u, 250);
	ut_acquire_ok(b, &p1);
	ut_advance_ms(u, 100);
	ut_acquire_ok(b, &p2);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 3);
	assert_int_equal(i.oldest_in_flight_ms, 350);
	ut_advance_ms(u, 1000);
	ut_info(b, &i);
	assert_int_equal(i.oldest_in_flight_ms, 1350); /* it keeps growing */

	/* the oldest goes: the next oldest is the age */
	ut_release_ok(&p0, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.oldest_in_flight_ms, 1100);
	ut_release_ok(&p1, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.oldest_in_flight_ms, 1000);
	ut_release_ok(&p2, BRK_FAILURE, BRK_REASON_TIMEOUT);
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
	assert_int_equal(i.oldest_in_flight_ms, 0);
}

static void oldest_in_flight_counts_a_probe(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c); /* no bulkhead: only the probe holds a lease */
	b = ut_breaker(u, "dep", &c);
	ut_fail_n(b, c.failure_threshold);
	assert_int_equal(ut_state(b), BRK_OPEN);
	ut_advance_ms(u, c.open_ms);
	ut_acquire_ok(b, &p); /* the probe */
	ut_advance_ms(u, 420);
	ut_info(b, &i);
	assert_int_equal(i.probes_in_flight, 1);
	assert_int_equal(i.oldest_in_flight_ms, 420);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.oldest_in_flight_ms, 0);
}

static void arrivals_and_completions_add_up(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit p[2], extra;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "mix", &c);
	ut_call(b, BRK_SUCCESS, 0);
	ut_call(b, BRK_HEALTHY_ERROR, 0);
	ut_call(b, BRK_REJECTED_REQUEST, 0);
	ut_call(b, BRK_CANCELLED, 0);
	ut_call(b, BRK_FAILURE, BRK_REASON_CONNECT);
	ut_acquire_ok(b, &p[0]);
	ut_acquire_ok(b, &p[1]);
	ut_rc(-BRK_EFULL, brk_acquire(b, &extra, NULL)); /* refused: full */
	ut_info(b, &i);
	assert_int_equal(i.arrivals, 8);
	assert_int_equal(i.completions, 5);
	assert_int_equal(i.arrivals,
			 i.counters.allowed + i.counters.rejected_open +
				 i.counters.rejected_cooling + i.counters.rejected_full);
	/* arrivals - refusals - completions = the calls out */
	assert_int_equal(i.arrivals - i.counters.rejected_full - i.completions,
			 i.in_flight);

	ut_release_ok(&p[0], BRK_SUCCESS, 0);
	/* a second release is stale: no completion */
	ut_rc(-BRK_ESTALE, brk_release(&p[0], BRK_SUCCESS, 0, 0));
	ut_release_ok(&p[1], BRK_FAILURE, BRK_REASON_SERVER_ERROR);
	ut_info(b, &i);
	assert_int_equal(i.completions, 7);
	assert_int_equal(i.counters.stale, 1);

	/* open (p[1] was the first failure in a row): refusals are
	 * arrivals too */
	ut_fail_n(b, c.failure_threshold - 1);
	assert_int_equal(ut_state(b), BRK_OPEN);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_info(b, &i);
	assert_int_equal(i.arrivals, 8 + c.failure_threshold - 1 + 1);
	assert_int_equal(i.completions, 7 + c.failure_threshold - 1);
	assert_int_equal(i.counters.rejected_open, 1);
}

/* The other kinds carry no signals of their own in brk_info: zeros. */
static void signals_are_zero_for_a_bucket(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = malloc(sizeof *i);
	brk_bucket *k;

	assert_non_null(i);
	ut_rc(0, brk_bucket_get(u->seg, "rl", 10.0, 5, &k));
	ut_rc(0, brk_bucket_take(k, 1, NULL));
	memset(i, 0xa5, sizeof *i);
	ut_rc(0, brk_info_at(u->seg, ut_ref_of(u->seg, "rl"), i));
	/* the plain name assumes the BREAKER_0 size: nothing past it */
	memset(i, 0xa5, sizeof *i);
	ut_rc(0, brk_info_at_sz(u->seg, ut_ref_of(u->seg, "rl"), i, sizeof *i));
	assert_int_equal(i->kind, BRK_KIND_BUCKET);
	assert_int_equal(i->arrivals, 0);
	assert_int_equal(i->completions, 0);
	assert_int_equal(i->oldest_in_flight_ms, 0);
	free(i);
}

/* A caller built with BRK_INFO_SIZE_VER1 gets its 2608 bytes, not a byte
 * more; one with the current size gets the signals. */
static void an_older_caller_gets_only_its_bytes(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	unsigned char *buf = malloc(sizeof(struct brk_info) + 64);
	struct brk_info *i = (struct brk_info *)buf;
	brk_permit p;
	brk_breaker *b;
	size_t k;

	assert_non_null(buf);
	ut_cfg(&c);
	c.max_concurrent = 1;
	b = ut_breaker(u, "old", &c);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 77);
	memset(buf, 0xa5, sizeof(struct brk_info) + 64);
	ut_rc(0, brk_breaker_info_sz(b, i, BRK_INFO_SIZE_VER1));
	for (k = BRK_INFO_SIZE_VER1; k < sizeof(struct brk_info) + 64; k++)
		assert_int_equal(buf[k], 0xa5);
	assert_int_equal(i->in_flight, 1);
	ut_rc(0, brk_breaker_info_sz(b, i, sizeof(*i)));
	assert_int_equal(i->arrivals, 1);
	assert_int_equal(i->completions, 0);
	assert_int_equal(i->oldest_in_flight_ms, 77);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(oldest_in_flight_grows_with_the_clock),
		UT_TEST(oldest_in_flight_counts_a_probe),
		UT_TEST(arrivals_and_completions_add_up),
		UT_TEST(signals_are_zero_for_a_bucket),
		UT_TEST(an_older_caller_gets_only_its_bytes),
	};
	return cmocka_run_group_tests_name("signals", tests, NULL, NULL);
}
