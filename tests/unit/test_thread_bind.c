/*
 * test_thread_bind.c - the thread word of a lease bound with
 * brk_permit_bind_thread(), without waiting for a thread to exit (that is
 * tests/integration/it_thread_lease.c): a live binder keeps its lease, a
 * tid whose start time differs (a reused tid) is a dead owner, a thread
 * word left by a previous owner (another nonce) is ignored, and a probe
 * lease is bound too.
 */
#include "fixture.h"

#include "internal.h" /* private: a handle's record */

UT_GROUP_FIXTURES("thrbind", 16)

static uint32_t reclaimed(struct ut *u)
{
	struct brk_reclaim_stats st;

	ut_rc(0, brk_reclaim(u->seg, &st));
	return st.dead_owner;
}

static void reused_tid_of_a_bound_permit_is_a_dead_owner(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk__lease *l;
	brk_breaker *b;
	brk_permit p;
	uint64_t w;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "bind/api", &c);
	ut_acquire_ok(b, &p);
	l = brk__permit_at(u->seg, brk__brec(b), p.permit_slot_);
	assert_non_null(l);
	assert_int_equal(l->thread, 0);
	ut_rc(0, brk_permit_bind_thread(&p));
	w = l->thread;
	assert_int_equal(BRK__THR_TID(w), (int32_t)gettid());
	assert_int_equal(BRK__TAG_NONCE(w), BRK__TOK_NONCE(p.permit_));
	assert_int_equal(reclaimed(u), 0); /* the binder lives */
	ut_rc(0, brk_permit_unbind_thread(&p));
	assert_int_equal(l->thread, 0);
	ut_rc(0, brk_permit_bind_thread(&p));
	/* a previous owner's word (another nonce) means nothing */
	l->thread = BRK__THR_MAKE(BRK__THR_TID(w), BRK__THR_START(w) ^ 1,
				  BRK__TOK_NONCE(p.permit_) ^ 1);
	assert_int_equal(reclaimed(u), 0);
	/* our tid, another start time: the tid was reused, the owner died */
	l->thread = BRK__THR_MAKE(BRK__THR_TID(w), BRK__THR_START(w) ^ 1,
				  BRK__TOK_NONCE(p.permit_));
	assert_int_equal(reclaimed(u), 1);
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0));
	ut_rc(-BRK_ESTALE, brk_permit_bind_thread(&p));
}

static void a_bound_probe_is_reclaimed_as_a_failed_probe(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk__lease *l;
	brk_breaker *b;
	brk_permit p;

	ut_cfg(&c);
	b = ut_breaker(u, "bind/probe", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	assert_true(p.token_ != 0);
	ut_rc(0, brk_permit_bind_thread(&p));
	l = brk__probe_at(u->seg, brk__brec(b), p.probe_slot_);
	assert_non_null(l);
	assert_int_equal(BRK__TAG_NONCE(l->thread), BRK__TOK_NONCE(p.token_));
	assert_int_equal(reclaimed(u), 0);
	l->thread ^= 1ULL << 24; /* the start time differs */
	assert_int_equal(reclaimed(u), 1);
	assert_int_equal(ut_state(b), BRK_OPEN); /* a failed probe */
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0));
}

static void a_permit_without_lease_binds_to_nothing(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = ut_breaker(u, "bind/none", NULL);
	brk_permit p;

	ut_acquire_ok(b, &p); /* closed, no bulkhead: no lease */
	ut_rc(0, brk_permit_bind_thread(&p));
	ut_rc(0, brk_permit_unbind_thread(&p));
	ut_release_ok(&p, BRK_SUCCESS, BRK_REASON_NONE);
	ut_rc(-EINVAL, brk_permit_bind_thread(NULL));
	ut_rc(-EINVAL, brk_permit_unbind_thread(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(reused_tid_of_a_bound_permit_is_a_dead_owner),
		UT_TEST(a_bound_probe_is_reclaimed_as_a_failed_probe),
		UT_TEST(a_permit_without_lease_binds_to_nothing),
	};
	return cmocka_run_group_tests_name("thread_bind", tests, NULL, NULL);
}
