/*
 * test_pace_update.c - brk_pace_update() writes a pace's two settings
 * words (the plain bucket word with the ceiling, the pace word with the
 * floor) with two CASes; what a concurrent caller sees between them. The
 * test variant of the library (libbreaker_hooks) runs a hook there
 * (killpoint.h BRK__HOOK_PACE_HALF), so the "between" is deterministic.
 */
#include "fixture.h"
#include "internal.h"
#include "killpoint.h"

UT_GROUP_FIXTURES("paceupd", 16)

static brk_bucket *hook_k;
static int hook_ran, hook_take_rc, hook_info_rc;

static void half_hook(int id, struct brk_segment *seg, uint32_t ref)
{
	struct brk_bucket_info bi;
	uint64_t at, nb;

	(void)seg;
	(void)ref;
	if (id != BRK__HOOK_PACE_HALF)
		return;
	hook_ran++;
	hook_take_rc = brk_pace_take(hook_k, BRK_PRIORITY_HIGH, &at, &nb);
	hook_info_rc = brk_bucket_info(hook_k, &bi);
}

static void update_to(brk_bucket *k, double ceiling, double floor)
{
	struct brk_pace_config c;

	ut_rc(0, brk_pace_config_init(&c));
	c.ceiling_per_s = ceiling;
	c.floor_per_s = floor;
	hook_ran = 0;
	hook_take_rc = hook_info_rc = 12345;
	brk__test_hook = half_hook;
	ut_rc(0, brk_pace_update(k, &c, BRK_PACE_F_CEILING | BRK_PACE_F_FLOOR));
	brk__test_hook = NULL;
	assert_int_equal(hook_ran, 1);
}

/* Raising ceiling and floor together (100/50 -> 1000/500): written pace
 * word first, the new floor (2 ms) met the old ceiling (10 ms) and a take
 * in between got -BRK_ECORRUPT; lowering them, the other order. */
static void a_take_between_the_two_words_never_finds_the_pace_corrupt(void **state)
{
	struct ut *u = *state;
	struct brk_pace_config c;
	struct brk_bucket_info bi;

	ut_rc(0, brk_pace_config_init(&c));
	c.ceiling_per_s = 100.0;
	c.floor_per_s = 50.0;
	c.burst = 100;
	ut_rc(0, brk_pace_get(u->seg, "api", &c, &hook_k));
	update_to(hook_k, 1000.0, 500.0);
	assert_true(hook_take_rc == 0 || hook_take_rc == -BRK_ENOTOKENS);
	ut_rc(0, hook_info_rc);
	update_to(hook_k, 100.0, 50.0);
	assert_true(hook_take_rc == 0 || hook_take_rc == -BRK_ENOTOKENS);
	ut_rc(0, hook_info_rc);
	update_to(hook_k, 1e6, 2e5);
	ut_rc(0, hook_info_rc);
	update_to(hook_k, 0.5, 0.01);
	ut_rc(0, hook_info_rc);
	ut_rc(0, brk_bucket_info(hook_k, &bi));
	assert_true(bi.paced);
	assert_true(fabs(bi.ceiling_per_s - 0.5) < 1e-9 && fabs(bi.floor_per_s - 0.01) < 1e-9);
}

static brk_bucket *nested_k;
static int nested_rc;

/* Between the ceiling-only update's read and its write, a floor-only one. */
static void read_hook(int id, struct brk_segment *seg, uint32_t ref)
{
	struct brk_pace_config c;

	(void)seg;
	(void)ref;
	if (id != BRK__HOOK_PACE_READ || !nested_k)
		return;
	brk__test_hook = NULL; /* once, and not in the nested call */
	brk_pace_config_init(&c);
	c.floor_per_s = 50.0;
	nested_rc = brk_pace_update(nested_k, &c, BRK_PACE_F_FLOOR);
	nested_k = NULL;
}

/* Two updaters of different words: 'bctl pace P --ceiling 10' and 'bctl
 * pace P --floor 50' on a 100/1 pace. Each checked its value against the
 * other word as it read it, each wrote only its own word, and neither CAS
 * saw the other's change: ceiling 10 with floor 50 stayed, and every take,
 * info, report and update after it said -BRK_ECORRUPT for good. Updaters
 * now go one at a time (the index lock): the second waits its bounded
 * 2 s for the first, which holds it here, and gives up. */
static void two_updaters_never_leave_the_floor_above_the_ceiling(void **state)
{
	struct ut *u = *state;
	struct brk_pace_config c;
	struct brk_bucket_info bi;
	brk_bucket *k;

	ut_rc(0, brk_pace_config_init(&c));
	c.ceiling_per_s = 100.0;
	c.floor_per_s = 1.0;
	ut_rc(0, brk_pace_get(u->seg, "api", &c, &k));
	ut_rc(0, brk_pace_config_init(&c));
	c.ceiling_per_s = 10.0;
	nested_k = k;
	nested_rc = 12345;
	brk__test_hook = read_hook;
	ut_rc(0, brk_pace_update(k, &c, BRK_PACE_F_CEILING));
	brk__test_hook = NULL;
	assert_null(nested_k); /* the hook ran */
	ut_rc(-BRK_ECONTENDED, nested_rc);
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_true(fabs(bi.ceiling_per_s - 10.0) < 1e-9 && bi.floor_per_s <= bi.ceiling_per_s);
	/* and the floor-only one, asked again, is judged by the new ceiling */
	ut_rc(0, brk_pace_config_init(&c));
	c.floor_per_s = 50.0;
	ut_rc(-EINVAL, brk_pace_update(k, &c, BRK_PACE_F_FLOOR));
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_true(bi.paced);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(a_take_between_the_two_words_never_finds_the_pace_corrupt),
		UT_TEST(two_updaters_never_leave_the_floor_above_the_ceiling),
	};
	return cmocka_run_group_tests_name("pace_update", tests, NULL, NULL);
}
