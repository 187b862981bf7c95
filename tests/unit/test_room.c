/*
 * test_room.c - brk_arena_cost() says what a create or a settings change
 * takes from the arena: exactly what the segment's arena_used_bytes grows
 * by when it is done (bctl apply checks a whole breakers file against the
 * room left with it before it writes anything).
 */
#include "fixture.h"

UT_GROUP_FIXTURES("room", 0)

static uint64_t arena_used(struct ut *u)
{
	struct brk_segment_info si;

	assert_int_equal(brk_segment_info(u->seg, &si), 0);
	return si.arena_used_bytes;
}

/* Create @name with @c; its cost was what the arena gave. */
static void create_costs(struct ut *u, const char *name, const struct brk_config *c)
{
	uint64_t before = arena_used(u), cost = 1;

	if (c)
		assert_int_equal(brk_config_validate(c, NULL), 0);
	ut_rc(0, brk_arena_cost(BRK_KIND_BREAKER, c, NULL, &cost));
	(void)ut_breaker(u, name, c);
	assert_int_equal(arena_used(u) - before, cost);
}

static void arena_cost_of_a_create_is_what_it_takes(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_bucket *k;
	brk_budget *g;
	uint64_t before, cost;

	ut_cfg(&c);
	create_costs(u, "plain", &c);
	c.half_open_probes = 3;
	create_costs(u, "probes", &c);
	ut_cfg(&c);
	c.failure_rate_pct = 50;
	c.window_ms = 10000;
	c.min_calls = 10;
	create_costs(u, "rate", &c);
	ut_cfg(&c);
	c.max_concurrent = 5;
	create_costs(u, "bulk5", &c);
	c.max_concurrent = BRK_MAX_CONCURRENT;
	c.half_open_probes = 2;
	c.slow_call_ms = 100;
	c.slow_rate_pct = 50;
	create_costs(u, "all", &c);
	create_costs(u, "defaults", NULL);
	/* max_concurrent auto (issue 25): a bulkhead of BRK_MAX_CONCURRENT
	 * slots when max_concurrent is 0, of N for auto:N */
	ut_cfg(&c);
	c.concurrency_auto = 1;
	create_costs(u, "auto", &c);
	c.max_concurrent = 6;
	create_costs(u, "auto6", &c);

	before = arena_used(u);
	ut_rc(0, brk_arena_cost(BRK_KIND_BUCKET, NULL, NULL, &cost));
	ut_rc(0, brk_bucket_get(u->seg, "k", 5, 2, &k));
	assert_int_equal(arena_used(u) - before, cost);
	before = arena_used(u);
	ut_rc(0, brk_arena_cost(BRK_KIND_BUDGET, NULL, NULL, &cost));
	ut_rc(0, brk_budget_get(u->seg, "g", 1, 0.1, &g));
	assert_int_equal(arena_used(u) - before, cost);
	assert_true(cost > 0);
}

/* Change @b to @c with brk_breaker_update(); its cost was what the arena
 * gave. */
static void update_costs(struct ut *u, brk_breaker *b, const struct brk_config *c,
			 uint64_t want)
{
	uint64_t before = arena_used(u), cost = 1;

	ut_rc(0, brk_arena_cost(BRK_KIND_BREAKER, c, b, &cost));
	assert_int_equal(cost, want);
	ut_rc(0, brk_breaker_update(b, c, BRK_CFG_ALL, NULL));
	assert_int_equal(arena_used(u) - before, cost);
}

static void arena_cost_of_an_update_is_what_it_takes(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	update_costs(u, b, &c, 0);             /* nothing new */
	c.max_concurrent = 8;
	update_costs(u, b, &c, 6 * 64);        /* 8 permit slots + control + owner tag */
	c.max_concurrent = 4;
	update_costs(u, b, &c, 0);             /* fewer: the block stays */
	c.max_concurrent = 20;
	update_costs(u, b, &c, 30 * 64);       /* the overflow: 64 - 8 slots + control + tag */
	c.max_concurrent = BRK_MAX_CONCURRENT;
	update_costs(u, b, &c, 0);
	c.half_open_probes = 4;
	update_costs(u, b, &c, 4 * 64);        /* the probe block */
	c.half_open_probes = 2;
	update_costs(u, b, &c, 0);
}

static void arena_cost_refuses_bad_input(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_bucket *k;
	uint64_t cost;

	ut_cfg(&c);
	ut_rc(-EINVAL, brk_arena_cost(BRK_KIND_BREAKER, &c, NULL, NULL));
	ut_rc(-EINVAL, brk_arena_cost(0, &c, NULL, &cost));
	ut_rc(-EINVAL, brk_arena_cost(99, &c, NULL, &cost));
	ut_rc(0, brk_bucket_get(u->seg, "k", 5, 2, &k));
	/* a bucket's handle is not a breaker's */
	ut_rc(-EINVAL, brk_arena_cost(BRK_KIND_BREAKER, &c, (brk_breaker *)(void *)k,
				      &cost));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(arena_cost_of_a_create_is_what_it_takes),
		UT_TEST(arena_cost_of_an_update_is_what_it_takes),
		UT_TEST(arena_cost_refuses_bad_input),
	};
	return cmocka_run_group_tests_name("room", tests, NULL, NULL);
}
