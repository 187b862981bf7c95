/*
 * test_iter.c - brk_record_next() and brk_record_next_brief(): every
 * published record once, in name-index order; empty and tombstone slots
 * skipped; a corrupt slot reported with the cursor past it; a concurrent
 * creator never breaks a walk.
 */
#include <pthread.h>

#include "internal.h"
#include "fixture.h"

UT_GROUP_FIXTURES("iter", 512)

/* Walk with the brief form: how many records, each name once in @seen
 * (names "n/<i>" with i < @max), corrupt slots in *@bad. */
static unsigned walk(brk_segment *seg, unsigned char *seen, unsigned max,
		     unsigned *bad)
{
	struct brk_record_brief b;
	uint64_t cur = 0, last = 0;
	unsigned n = 0;
	int rc;

	*bad = 0;
	while ((rc = brk_record_next_brief(seg, &cur, &b)) != -ENOENT) {
		assert_true(cur > last); /* the cursor only moves forward */
		last = cur;
		if (rc == -BRK_ECORRUPT) {
			(*bad)++;
			continue;
		}
		assert_int_equal(rc, 0);
		n++;
		if (seen && strncmp(b.name, "n/", 2) == 0) {
			unsigned i = (unsigned)strtoul(b.name + 2, NULL, 10);
			assert_true(i < max);
			assert_int_equal(seen[i], 0); /* once */
			seen[i] = 1;
		}
	}
	return n;
}

static void iter_empty_segment_ends_at_once(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = calloc(1, sizeof *i);
	struct brk_record_brief b;
	uint64_t cur = 0;

	assert_non_null(i);
	ut_rc(-ENOENT, brk_record_next(u->seg, &cur, i));
	ut_rc(-ENOENT, brk_record_next(u->seg, &cur, i)); /* and stays there */
	cur = 0;
	ut_rc(-ENOENT, brk_record_next_brief(u->seg, &cur, &b));
	free(i);
}

static void iter_one_breaker_full_and_brief(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = calloc(1, sizeof *i);
	struct brk_record_brief b;
	struct brk_config c;
	brk_breaker *br;
	uint64_t cur = 0;
	uint32_t ref;

	assert_non_null(i);
	ut_cfg(&c);
	br = ut_breaker(u, "svc/a", &c);
	ut_rc(0, brk_record_next(u->seg, &cur, i));
	assert_string_equal(i->name, "svc/a");
	assert_int_equal(i->kind, BRK_KIND_BREAKER);
	assert_int_equal(i->state, BRK_CLOSED);
	assert_int_equal(i->counters.allowed, 0);
	assert_true(i->last_change_age_ms == UINT64_MAX); /* never changed */
	assert_int_equal(i->record_bytes, BRK__BREAKER_UNITS * BRK__UNIT);
	ut_rc(-ENOENT, brk_record_next(u->seg, &cur, i));

	/* a transition stamps last_change_ms; its age follows the clock
	 * (not in the epoch's first ms, which is stored as 1: 0 is never) */
	ut_advance_ms(u, 10);
	ut_fail_n(br, c.failure_threshold);
	ut_advance_ms(u, 250);
	cur = 0;
	ut_rc(0, brk_record_next_brief(u->seg, &cur, &b));
	assert_string_equal(b.name, "svc/a");
	assert_int_equal(b.kind, BRK_KIND_BREAKER);
	assert_int_equal(b.state, BRK_OPEN);
	assert_int_equal(b.mode, BRK_MODE_NORMAL);
	assert_int_equal(b.last_change_age_ms, 250);
	ref = b.index;
	ut_rc(-ENOENT, brk_record_next_brief(u->seg, &cur, &b));
	cur = 0;
	ut_rc(0, brk_record_next(u->seg, &cur, i));
	assert_int_equal(i->last_change_age_ms, 250);
	assert_int_equal(i->index, ref); /* the same record both ways */
	free(i);
}

/* Buckets and budgets come too, as closed, never-changed records. */
static void iter_many_of_every_kind_each_once(void **state)
{
	struct ut *u = *state;
	unsigned char seen[300] = { 0 };
	struct brk_record_brief b;
	char name[32];
	brk_bucket *k;
	brk_budget *g;
	unsigned i, bad, kinds[4] = { 0 };
	uint64_t cur = 0;
	int rc;

	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "n/%u", i);
		if (i % 3 == 0)
			ut_breaker(u, name, NULL);
		else if (i % 3 == 1)
			ut_rc(0, brk_bucket_get(u->seg, name, 10.0, 5, &k));
		else
			ut_rc(0, brk_budget_get(u->seg, name, 1.0, 0.5, &g));
	}
	assert_int_equal(walk(u->seg, seen, 300, &bad), 300);
	assert_int_equal(bad, 0);
	for (i = 0; i < 300; i++)
		assert_int_equal(seen[i], 1);
	while ((rc = brk_record_next_brief(u->seg, &cur, &b)) == 0) {
		assert_true(b.kind >= 1 && b.kind <= 3);
		kinds[b.kind]++;
		if (b.kind != BRK_KIND_BREAKER) {
			assert_int_equal(b.state, BRK_CLOSED);
			assert_true(b.last_change_age_ms == UINT64_MAX);
		}
	}
	assert_int_equal(rc, -ENOENT);
	assert_int_equal(kinds[1], 100);
	assert_int_equal(kinds[2], 100);
	assert_int_equal(kinds[3], 100);
}

/* The index slot that points at the record named @name. */
static uint32_t slot_of(brk_segment *s, const char *name)
{
	struct brk_record_brief b;
	uint64_t cur = 0;

	while (brk_record_next_brief(s, &cur, &b) == 0)
		if (strcmp(b.name, name) == 0)
			return (uint32_t)(cur - 1);
	fail_msg("%s not listed", name);
	return 0;
}

static void iter_skips_tombstones(void **state)
{
	struct ut *u = *state;
	unsigned bad;
	uint32_t pos;

	ut_breaker(u, "a", NULL);
	ut_breaker(u, "b", NULL);
	pos = slot_of(u->seg, "a");
	u->seg->index[pos] = 0xffffffffffffffffULL; /* "a" retired */
	assert_int_equal(walk(u->seg, NULL, 0, &bad), 1);
	assert_int_equal(bad, 0);
}

/* A slot pointing past the records, and one whose record has another
 * name's hash: each reported once, and the walk goes on to the rest. */
static void iter_reports_corrupt_slot_and_goes_on(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = calloc(1, sizeof *i);
	uint64_t cur, w;
	unsigned bad, n, errors = 0, good = 0;
	uint32_t pa, pb;
	int rc;

	assert_non_null(i);
	ut_breaker(u, "a", NULL);
	ut_breaker(u, "b", NULL);
	ut_breaker(u, "c", NULL);
	pa = slot_of(u->seg, "a");
	pb = slot_of(u->seg, "b");
	w = u->seg->index[pa];
	u->seg->index[pa] = BRK__IDX_MAKE(BRK__IDX_HASH(w), u->seg->capacity + 7);
	w = u->seg->index[pb];
	u->seg->index[pb] = BRK__IDX_MAKE(BRK__IDX_HASH(w) ^ 1u, BRK__IDX_REC(w));
	n = walk(u->seg, NULL, 0, &bad);
	assert_int_equal(n, 1);
	assert_int_equal(bad, 2);
	/* the full form reports the same, with the slot at cursor - 1 */
	cur = 0;
	while ((rc = brk_record_next(u->seg, &cur, i)) != -ENOENT) {
		if (rc == -BRK_ECORRUPT) {
			assert_true(cur - 1 == pa || cur - 1 == pb);
			assert_int_equal(i->name[0], '\0'); /* zeroed */
			errors++;
		} else {
			assert_int_equal(rc, 0);
			assert_string_equal(i->name, "c");
			good++;
		}
	}
	assert_int_equal(errors, 2);
	assert_int_equal(good, 1);
	free(i);
}

static void iter_bad_arguments(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = calloc(1, sizeof *i);
	struct brk_record_brief b;
	uint64_t cur = 0;

	assert_non_null(i);
	ut_rc(-EINVAL, brk_record_next(NULL, &cur, i));
	ut_rc(-EINVAL, brk_record_next(u->seg, NULL, i));
	ut_rc(-EINVAL, brk_record_next_sz(u->seg, &cur, NULL, sizeof *i));
	ut_rc(-EINVAL, brk_record_next_brief(u->seg, NULL, &b));
	/* a cursor past the end is the end */
	cur = UINT64_MAX;
	ut_rc(-ENOENT, brk_record_next_brief(u->seg, &cur, &b));
	free(i);
}

/* An older caller's brk_info (BREAKER_0 size): nothing written past it. */
static void iter_writes_only_the_callers_size(void **state)
{
	struct ut *u = *state;
	size_t z = BRK_INFO_SIZE_VER0;
	unsigned char *buf = malloc(z + 64);
	uint64_t cur = 0;
	size_t k;

	assert_non_null(buf);
	ut_breaker(u, "old", NULL);
	memset(buf, 0x5a, z + 64);
	ut_rc(0, brk_record_next_sz(u->seg, &cur, (struct brk_info *)buf, z));
	assert_string_equal((char *)buf, "old");
	for (k = z; k < z + 64; k++)
		assert_int_equal(buf[k], 0x5a);
	memset(buf, 0x5a, z + 64);
	ut_rc(-ENOENT, brk_record_next_sz(u->seg, &cur, (struct brk_info *)buf, z));
	for (k = 0; k < z; k++)
		assert_int_equal(buf[k], 0);
	assert_int_equal(buf[z], 0x5a);
	free(buf);
}

struct creator {
	brk_segment *seg;
	unsigned from, n;
};

static void *create_names(void *arg)
{
	struct creator *c = arg;
	char name[32];
	brk_breaker *b;
	unsigned i;

	for (i = c->from; i < c->from + c->n; i++) {
		snprintf(name, sizeof name, "n/%u", i);
		if (brk_breaker_get(c->seg, name, NULL, &b) != 0)
			return (void *)1;
	}
	return NULL;
}

/* Walks while another thread creates: each walk sees every record that
 * existed before it, each once, and no error. */
static void iter_concurrent_creation(void **state)
{
	struct ut *u = *state;
	struct creator c = { u->seg, 100, 400 };
	unsigned char *seen = calloc(500, 1);
	unsigned i, bad, walks = 0;
	pthread_t t;
	void *res;
	char name[32];

	assert_non_null(seen);
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof name, "n/%u", i);
		ut_breaker(u, name, NULL);
	}
	assert_int_equal(pthread_create(&t, NULL, create_names, &c), 0);
	do {
		unsigned n;

		memset(seen, 0, 500);
		n = walk(u->seg, seen, 500, &bad);
		assert_int_equal(bad, 0);
		assert_true(n >= 100 && n <= 500);
		for (i = 0; i < 100; i++)
			assert_int_equal(seen[i], 1);
		walks++;
	} while (uatomic_read(&u->seg->hdr->live_records) < 500 && walks < 100000);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_null(res);
	memset(seen, 0, 500);
	assert_int_equal(walk(u->seg, seen, 500, &bad), 500);
	free(seen);
}

/* A reset that ends a cooling or a forced mode while the breaker stays
 * closed is a change too: the fleet link's staleness rule reads
 * last_change_age_ms to skip a peer's cool_until or forced sent before
 * it (a reset of a cooling breaker made while the link was down was
 * undone by the old catch-up key: tests/daemon/fleet_cool_reset.sh). */
static void a_reset_that_ends_a_cooling_or_forced_mode_is_a_change(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = calloc(1, sizeof *i);
	struct brk_config c;
	brk_breaker *br;

	assert_non_null(i);
	ut_cfg(&c);
	br = ut_breaker(u, "svc/cool", &c);
	ut_advance_ms(u, 10);
	ut_rc(0, brk_reset(br)); /* nothing to end: no change */
	ut_rc(0, brk_breaker_info(br, i));
	assert_true(i->last_change_age_ms == UINT64_MAX);

	ut_rc(0, brk_cool_for(br, 5000));
	ut_advance_ms(u, 100);
	ut_rc(0, brk_reset(br));
	ut_advance_ms(u, 40);
	ut_rc(0, brk_breaker_info(br, i));
	assert_int_equal(i->state, BRK_CLOSED);
	assert_int_equal(i->cool_until_remaining_ms, 0);
	assert_int_equal(i->last_change_age_ms, 40);

	ut_rc(0, brk_set_mode(br, BRK_MODE_FORCED_OPEN));
	ut_advance_ms(u, 100);
	ut_rc(0, brk_reset(br));
	ut_advance_ms(u, 30);
	ut_rc(0, brk_breaker_info(br, i));
	assert_int_equal(i->mode, BRK_MODE_NORMAL);
	assert_int_equal(i->last_change_age_ms, 30);

	ut_advance_ms(u, 6000); /* an expired cool-until ends nothing */
	ut_rc(0, brk_cool_for(br, 1000));
	ut_advance_ms(u, 2000);
	ut_rc(0, brk_reset(br));
	ut_rc(0, brk_breaker_info(br, i));
	assert_int_equal(i->last_change_age_ms, 8030);
	free(i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(iter_empty_segment_ends_at_once),
		UT_TEST(iter_one_breaker_full_and_brief),
		UT_TEST(iter_many_of_every_kind_each_once),
		UT_TEST(iter_skips_tombstones),
		UT_TEST(iter_reports_corrupt_slot_and_goes_on),
		UT_TEST(iter_bad_arguments),
		UT_TEST(iter_writes_only_the_callers_size),
		UT_TEST(iter_concurrent_creation),
		UT_TEST(a_reset_that_ends_a_cooling_or_forced_mode_is_a_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
