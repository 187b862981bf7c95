/*
 * test_gcra_contend.c - a GCRA take that loses its CAS race retries
 * against the TAT the winner wrote, however often it loses, until it wins
 * or the bucket refuses it; it never fails from contention alone (issue
 * 21: 25,091 of 1.6 M takes of 8 processes on one bucket gave up after
 * 256 lost CASes with -BRK_ECONTENDED). The test variant of the library
 * (libbreaker_hooks) runs a hook between the take's read of the TAT and
 * its CAS (killpoint.h BRK__HOOK_GCRA_LOADED); there a nested take wins
 * the race, so every loss is deterministic.
 */
#include "fixture.h"
#include "internal.h"
#include "killpoint.h"

UT_GROUP_FIXTURES("gcracont", 16)

static brk_bucket *rival;     /* the nested taker's handle */
static struct ut *world;
static int nesting, losses_left, nested_ok, nested_refused;
static uint64_t advance_ns;   /* fake clock moved per loss */

static void race_hook(int id, struct brk_segment *seg, uint32_t ref)
{
	int rc;

	(void)seg;
	(void)ref;
	if (id != BRK__HOOK_GCRA_LOADED || nesting || losses_left <= 0)
		return;
	nesting = 1;
	losses_left--;
	if (advance_ns)
		ut_advance_ns(world, advance_ns);
	rc = brk_bucket_take(rival, 1, NULL);
	if (rc == 0)
		nested_ok++;
	else if (rc == -BRK_ENOTOKENS)
		nested_refused++;
	nesting = 0;
}

static void race(struct ut *u, int losses, uint64_t adv)
{
	world = u;
	losses_left = losses;
	advance_ns = adv;
	nested_ok = nested_refused = 0;
	brk__test_hook = race_hook;
}

/* 1000 lost races in a row (the old bound was 256): the take still wins
 * once the rivals stop, and every token is accounted for. */
static void a_take_that_loses_the_cas_race_retries_until_it_wins(void **state)
{
	struct ut *u = *state;
	struct brk_bucket_info bi;
	brk_bucket *k;

	ut_rc(0, brk_bucket_get(u->seg, "tb", 1.0, 2000, &k));
	ut_rc(0, brk_bucket_find(u->seg, "tb", &rival));
	race(u, 1000, 0);
	ut_rc(0, brk_bucket_take(k, 1, NULL));
	brk__test_hook = NULL;
	assert_int_equal(nested_ok, 1000);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.taken, 1001);
	assert_int_equal(bi.denied, 0);
}

/* The rivals take the last tokens while it retries: the answer is the
 * bucket's (-BRK_ENOTOKENS with a not-before), not a contention failure. */
static void a_take_whose_rivals_empty_the_bucket_is_refused_not_contended(void **state)
{
	struct ut *u = *state;
	uint64_t nb = 0;
	brk_bucket *k;

	ut_rc(0, brk_bucket_get(u->seg, "tb", 1.0, 300, &k));
	ut_rc(0, brk_bucket_find(u->seg, "tb", &rival));
	race(u, 1000, 0);
	ut_rc(-BRK_ENOTOKENS, brk_bucket_take(k, 1, &nb));
	brk__test_hook = NULL;
	assert_int_equal(nested_ok, 300);
	assert_true(nb > brk_now_ns(u->seg));
}

/* Only a writer that never stops keeps it losing: after
 * BRK__GCRA_CONTEND_NS of the clock it gives up (a hostile segment
 * cannot hang a caller). */
static void a_take_losing_for_its_whole_deadline_gives_up(void **state)
{
	struct ut *u = *state;
	brk_bucket *k;

	ut_rc(0, brk_bucket_get(u->seg, "tb", 1e6, 1000000, &k));
	ut_rc(0, brk_bucket_find(u->seg, "tb", &rival));
	race(u, 1000000, 10 * UT_NS_PER_MS);
	ut_rc(-BRK_ECONTENDED, brk_bucket_take(k, 1, NULL));
	brk__test_hook = NULL;
	/* it gave up once 1 s of losses had passed, not after a count */
	assert_true(nested_ok >= (int)(BRK__GCRA_CONTEND_NS / (10 * UT_NS_PER_MS)));
	assert_true(nested_ok <= (int)(BRK__GCRA_CONTEND_NS / (10 * UT_NS_PER_MS)) + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(a_take_that_loses_the_cas_race_retries_until_it_wins),
		UT_TEST(a_take_whose_rivals_empty_the_bucket_is_refused_not_contended),
		UT_TEST(a_take_losing_for_its_whole_deadline_gives_up),
	};
	return cmocka_run_group_tests_name("gcra_contend", tests, NULL, NULL);
}
