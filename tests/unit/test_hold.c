/*
 * test_hold.c - the permit hold-time histogram (lib/src/hold.c, the hold
 * word of layout.h, the free stamp of alloc.c) on the fake clock: the
 * bucket bounds, which releases count, the lazily linked block, no room,
 * corrupt hold words, and retirement and reuse of the record; and that
 * it is opt-in (hold_histogram): off, a call reads no clock and links no
 * block.
 */
#include <pthread.h>

#include "layout.h"
#include "internal.h"
#include "fixture.h"

UT_GROUP_FIXTURES("hold", 8)

#define US 1000ULL /* ns */

static void hold_info(brk_breaker *b, struct brk_hold_info *h)
{
	struct brk_info *i = malloc(sizeof *i);

	assert_non_null(i);
	ut_info(b, i);
	*h = i->hold;
	free(i);
}

/* A breaker with hold_histogram on (@c: further settings, or NULL). */
static brk_breaker *hb(struct ut *u, const char *name, struct brk_config *c)
{
	struct brk_config d;

	if (!c) {
		ut_cfg(&d);
		c = &d;
	}
	c->hold_histogram = 1;
	return ut_breaker(u, name, c);
}

static uint64_t clock_reads(struct ut *u)
{
	return __atomic_load_n(&u->clk.reads, __ATOMIC_RELAXED);
}

/* One call that holds its permit @ns of the fake clock. */
static void held(struct ut *u, brk_breaker *b, uint64_t ns, int outcome)
{
	brk_permit p;

	ut_acquire_ok(b, &p);
	ut_advance_ns(u, ns);
	ut_release_ok(&p, outcome, 0);
}

/* The bounds are Prometheus' default buckets, inclusive, then +Inf. */
static void bounds_are_prometheus_default_buckets(void **state)
{
	static const uint64_t want[] = { 5000, 10000, 25000, 50000, 100000, 250000,
					 500000, 1000000, 2500000, 5000000, 10000000 };
	unsigned i;

	(void)state;
	for (i = 0; i < 11; i++)
		assert_int_equal(brk_hold_bound_us(i), want[i]);
	assert_true(brk_hold_bound_us(11) == UINT64_MAX);
	assert_true(brk_hold_bound_us(400) == UINT64_MAX);
}

/* No release, no block: a new breaker costs its 7 units and says NONE. */
static void no_release_no_histogram(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "quiet", NULL);
	struct brk_hold_info h;
	struct brk_info *i = malloc(sizeof *i);
	brk_permit p;

	assert_non_null(i);
	ut_acquire_ok(b, &p); /* held, not released yet */
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_NONE);
	assert_int_equal(h.buckets, BRK_HOLD_BUCKETS);
	assert_int_equal(h.count, 0);
	ut_info(b, i);
	assert_int_equal(i->record_bytes, 448);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_info(b, i);
	assert_int_equal(i->record_bytes, 448 + 128); /* the block, linked */
	free(i);
}

/* Each hold lands in the first bucket whose bound it does not exceed. */
static void holds_land_in_their_buckets(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "svc", NULL);
	struct brk_hold_info h;

	held(u, b, 5000 * US, BRK_SUCCESS);       /* = .005 s: bucket 0 */
	held(u, b, 5001 * US, BRK_SUCCESS);       /* 1 µs above: bucket 1 */
	held(u, b, 5000 * US + 999, BRK_SUCCESS); /* µs resolution: bucket 0 */
	held(u, b, 0, BRK_SUCCESS);               /* zero: bucket 0 */
	held(u, b, 300000 * US, BRK_FAILURE);     /* .3 s: (.25, .5] = 6 */
	held(u, b, 10000000 * US, BRK_SUCCESS);   /* = 10 s: bucket 10 */
	held(u, b, 10000001 * US, BRK_CANCELLED); /* above: +Inf */
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_RECORDED);
	assert_int_equal(h.count, 7);
	assert_int_equal(h.bucket[0], 3);
	assert_int_equal(h.bucket[1], 1);
	assert_int_equal(h.bucket[6], 1);
	assert_int_equal(h.bucket[10], 1);
	assert_int_equal(h.bucket[11], 1);
	assert_int_equal(h.sum_us, 5000 + 5001 + 5000 + 0 + 300000 + 10000000 + 10000001);
}

/* Every release by the permit's own process counts, whatever its verdict
 * (a stale one too: the call did hold the permit); a second release of
 * the same permit does not. */
static void stale_release_counts_hold_double_release_does_not(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "stale", NULL);
	struct brk_hold_info h;
	brk_permit p;

	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 20);
	ut_rc(0, brk_reset(b)); /* a new generation: the release is stale */
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0));
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0)); /* twice */
	hold_info(b, &h);
	assert_int_equal(h.count, 1);
	assert_int_equal(h.bucket[2], 1); /* 20 ms: (.01, .025] */
	assert_int_equal(h.sum_us, 20000);
}

/* A bulkhead permit's hold counts like any other. */
static void bulkhead_permit_hold_counts(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_hold_info h;
	brk_breaker *b;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = hb(u, "bulk", &c);
	held(u, b, 70 * 1000 * US, BRK_SUCCESS);
	hold_info(b, &h);
	assert_int_equal(h.count, 1);
	assert_int_equal(h.bucket[4], 1); /* 70 ms: (.05, .1] */
}

/* Without room left beyond what cores and other blocks may need, nothing
 * is allocated, the word says NOROOM and later releases allocate
 * nothing either. */
static void no_room_records_nothing_and_says_so(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "full", NULL);
	struct brk_hold_info h;
	uint64_t next;

	/* leave exactly the reserve: 1024 / 2 units of extension room and
	 * 7 units for each of the 7 records still to come */
	next = u->seg->arena_units - (512u + 7u * 7u) - 1u;
	uatomic_set(&u->seg->hdr->arena_next, next);
	held(u, b, 1000 * US, BRK_SUCCESS);
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_NOROOM);
	assert_int_equal(h.count, 0);
	assert_int_equal(uatomic_read(&u->seg->hdr->arena_next), next);
	held(u, b, 1000 * US, BRK_SUCCESS);
	assert_int_equal(uatomic_read(&u->seg->hdr->arena_next), next);
	/* one unit more room and a new breaker gets its block */
	uatomic_set(&u->seg->hdr->arena_next, next - 1u - 7u);
	b = hb(u, "roomy", NULL);
	held(u, b, 1000 * US, BRK_SUCCESS);
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_RECORDED);
	assert_int_equal(h.count, 1);
}

/* A hold word read from shm is untrusted: a link outside the arena or a
 * word of no known form writes nothing anywhere and reads as no block. */
static void corrupt_hold_word_writes_nothing(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "bad", NULL);
	struct brk__record *r = brk__brec(b);
	struct brk_hold_info h;
	uint64_t next = uatomic_read(&u->seg->hdr->arena_next);

	uatomic_set(&r->hold, BRK__HOLD_MAKE(u->seg->arena_units - 1u)); /* runs off the end */
	held(u, b, 1000 * US, BRK_SUCCESS);
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_NONE);
	uatomic_set(&r->hold, BRK__HOLD_LINK | (1ULL << 30) | 5u); /* not a link */
	held(u, b, 1000 * US, BRK_SUCCESS);
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_NONE);
	assert_true(uatomic_read(&r->hold) == (BRK__HOLD_LINK | (1ULL << 30) | 5u));
	uatomic_set(&r->hold, 0x1234); /* a stamp-like word: not a link either */
	held(u, b, 1000 * US, BRK_SUCCESS);
	assert_true(uatomic_read(&r->hold) == 0x1234);
	assert_int_equal(uatomic_read(&u->seg->hdr->arena_next), next); /* nothing allocated */
}

/* Retirement keeps the block in the free stamp (with the free time), the
 * quarantine still holds, and the next owner of the run starts from an
 * empty histogram in the same block. */
static void retire_keeps_block_reuse_clears_it(void **state)
{
	struct ut *u = *state;
	struct brk__record *r;
	struct brk_hold_info h;
	brk_breaker *b = hb(u, "old", NULL), *x = NULL;
	struct brk_config on;
	uint32_t ref, href;
	uint64_t stamp, next;

	ut_cfg(&on);
	on.hold_histogram = 1;
	held(u, b, 30 * 1000 * US, BRK_SUCCESS);
	r = brk__brec(b);
	ref = brk__bidx(b);
	href = BRK__HOLD_REF(uatomic_read(&r->hold));
	assert_true(href != 0);
	ut_rc(0, brk_retire(u->seg, "old", 0));
	stamp = uatomic_read(&r->hold);
	assert_false(stamp & BRK__HOLD_LINK); /* never read as a link */
	assert_int_equal(BRK__FREE_STAMP_REF(stamp), href);
	assert_int_equal(BRK__FREE_STAMP_MS1(stamp),
			 brk__rel_ms(u->seg, ut_now_ns(u)) + 1u);
	/* a new name may not take the run before the quarantine is over */
	uatomic_set(&u->seg->hdr->arena_next, u->seg->arena_units);
	ut_rc(-ENOSPC, brk_breaker_get(u->seg, "new", &on, &x));
	ut_advance_ms(u, BRK_RETIRE_QUARANTINE_MS);
	ut_rc(0, brk_breaker_get(u->seg, "new", &on, &x));
	assert_int_equal(brk__bidx(x), ref);
	assert_true(uatomic_read(&r->hold) == BRK__HOLD_MAKE(href));
	hold_info(x, &h);
	assert_int_equal(h.state, BRK_HOLD_RECORDED);
	assert_int_equal(h.count, 0);
	assert_int_equal(h.sum_us, 0);
	next = uatomic_read(&u->seg->hdr->arena_next);
	held(u, x, 1000 * US, BRK_SUCCESS);
	hold_info(x, &h);
	assert_int_equal(h.count, 1);
	assert_int_equal(h.bucket[0], 1);
	assert_int_equal(uatomic_read(&u->seg->hdr->arena_next), next); /* same block */
}

/* A record retired with NOROOM gets a fresh chance when reused. */
static void reuse_after_noroom_starts_over(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "nr", NULL), *x = NULL;
	struct brk__record *r = brk__brec(b);
	struct brk_hold_info h;
	struct brk_config on;

	uatomic_set(&r->hold, BRK__HOLD_NOROOM);
	ut_rc(0, brk_retire(u->seg, "nr", 0));
	assert_int_equal(BRK__FREE_STAMP_REF(uatomic_read(&r->hold)), 0);
	ut_advance_ms(u, BRK_RETIRE_QUARANTINE_MS);
	ut_cfg(&on);
	on.hold_histogram = 1;
	ut_rc(0, brk_breaker_get(u->seg, "nr2", &on, &x));
	assert_int_equal(brk__bidx(x), brk__bidx(b));
	assert_true(uatomic_read(&r->hold) == 0);
	held(u, x, 1000 * US, BRK_SUCCESS);
	hold_info(x, &h);
	assert_int_equal(h.state, BRK_HOLD_RECORDED);
	assert_int_equal(h.count, 1);
}

/* An older caller's brk_info (VER2 size) gets no hold member, and the
 * library writes nothing past it. */
static void ver2_caller_gets_no_hold(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "v2", NULL);
	unsigned char *buf = malloc(BRK_INFO_SIZE_VER3);
	size_t k;

	assert_non_null(buf);
	held(u, b, 1000 * US, BRK_SUCCESS);
	memset(buf, 0x5a, BRK_INFO_SIZE_VER3);
	ut_rc(0, brk_breaker_info_sz(b, (struct brk_info *)(void *)buf, BRK_INFO_SIZE_VER2));
	for (k = BRK_INFO_SIZE_VER2; k < BRK_INFO_SIZE_VER3; k++)
		assert_int_equal(buf[k], 0x5a);
	free(buf);
}

/* Off by default: a call of a closed breaker without a slow-call rule
 * reads no clock (as before the histogram existed), links no block and
 * records nothing; on, it reads the clock twice (acquire and release). */
static void off_by_default_no_clock_read_no_block(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = ut_breaker(u, "plain", NULL);
	struct brk_info *i = malloc(sizeof *i);
	uint64_t next = uatomic_read(&u->seg->hdr->arena_next), reads;
	brk_permit p;

	assert_non_null(i);
	ut_info(b, i);
	assert_int_equal(i->config.hold_histogram, 0);
	reads = clock_reads(u);
	ut_acquire_ok(b, &p);
	ut_advance_ns(u, 3000 * US);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(clock_reads(u) - reads, 0);
	ut_call(b, BRK_FAILURE, 0); /* reads the clock (failure_threshold's
				     * open time), and still records nothing */
	assert_true(uatomic_read(&brk__brec(b)->hold) == 0);
	assert_int_equal(uatomic_read(&u->seg->hdr->arena_next), next);
	ut_info(b, i);
	assert_int_equal(i->hold.state, BRK_HOLD_OFF);
	assert_int_equal(i->hold.count, 0);
	assert_int_equal(i->record_bytes, 448);

	b = hb(u, "timed", NULL);
	ut_info(b, i);
	assert_int_equal(i->config.hold_histogram, 1);
	reads = clock_reads(u);
	held(u, b, 3000 * US, BRK_SUCCESS);
	assert_int_equal(clock_reads(u) - reads, 2);
	ut_info(b, i);
	assert_int_equal(i->hold.state, BRK_HOLD_RECORDED);
	assert_int_equal(i->hold.count, 1);
	assert_int_equal(i->record_bytes, 448 + 128);
	free(i);
}

/* Turned off, releases stop recording (and reading the clock) at once,
 * also of permits admitted while it was on; the block and its counts stay
 * (until the record is retired or reused). Turned on again, they count
 * into the same block. */
static void turning_off_stops_recording_keeps_block(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "toggle", NULL);
	struct brk_config c;
	struct brk_hold_info h;
	uint64_t next, reads;
	brk_permit p;

	held(u, b, 2000 * US, BRK_SUCCESS);
	next = uatomic_read(&u->seg->hdr->arena_next);
	ut_acquire_ok(b, &p); /* admitted while on */
	ut_cfg(&c);
	c.hold_histogram = 0;
	ut_rc(0, brk_breaker_update(b, &c, BRK_CFG_HOLD_HISTOGRAM, NULL));
	ut_advance_ns(u, 2000 * US);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	reads = clock_reads(u);
	held(u, b, 2000 * US, BRK_SUCCESS);
	assert_int_equal(clock_reads(u) - reads, 0);
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_RECORDED); /* kept */
	assert_int_equal(h.count, 1);
	assert_int_equal(h.sum_us, 2000);
	c.hold_histogram = 1;
	ut_rc(0, brk_breaker_update(b, &c, BRK_CFG_HOLD_HISTOGRAM, NULL));
	held(u, b, 2000 * US, BRK_SUCCESS);
	hold_info(b, &h);
	assert_int_equal(h.count, 2);
	assert_int_equal(uatomic_read(&u->seg->hdr->arena_next), next); /* same block */
}

/* The setting: 0 or 1 (validated, named for brk_breaker_update() and
 * the settings-file helpers); an older caller's brk_config (VER1 size)
 * gets the default, off. */
static void hold_histogram_setting_is_a_bool(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	const char *what = NULL;
	uint64_t f = 0;
	brk_breaker *b;

	(void)u;
	ut_cfg(&c);
	c.hold_histogram = 2;
	ut_rc(-EINVAL, brk_config_validate(&c, &what));
	assert_string_equal(what, "hold_histogram");
	ut_rc(0, brk_config_field_lookup("hold_histogram", &f));
	assert_true(f == BRK_CFG_HOLD_HISTOGRAM);
	assert_string_equal(brk_config_field_name(BRK_CFG_HOLD_HISTOGRAM), "hold_histogram");
	c.hold_histogram = 1;
	c.size = BRK_CONFIG_SIZE_VER1; /* a caller from before the setting */
	b = ut_breaker(u, "ver1", &c);
	ut_call(b, BRK_SUCCESS, 0);
	assert_true(uatomic_read(&brk__brec(b)->hold) == 0);
}

/* A breaker that found no room gets another try when the setting is
 * turned on again (brk_breaker_update()). */
static void turning_on_again_retries_after_no_room(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "retry", NULL);
	struct brk_config c;
	struct brk_hold_info h;

	uatomic_set(&brk__brec(b)->hold, BRK__HOLD_NOROOM);
	held(u, b, 1000 * US, BRK_SUCCESS);
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_NOROOM);
	ut_cfg(&c);
	c.hold_histogram = 1;
	ut_rc(0, brk_breaker_update(b, &c, BRK_CFG_HOLD_HISTOGRAM, NULL));
	held(u, b, 1000 * US, BRK_SUCCESS);
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_RECORDED);
	assert_int_equal(h.count, 1);
}

/* Threads racing to release the first permits of one breaker: one block
 * is linked, every loser's run is counted in leaked_units and every hold
 * is counted exactly once (suite threads: run under TSan by run-all). */
#define RACERS 4
#define PER_RACER 200

struct racer {
	brk_breaker *b;
	pthread_barrier_t *go;
};

static void *race(void *arg)
{
	struct racer *x = arg;
	brk_permit p;
	int i;

	pthread_barrier_wait(x->go);
	for (i = 0; i < PER_RACER; i++) {
		if (brk_acquire(x->b, &p, NULL) == 0)
			(void)brk_release(&p, BRK_SUCCESS, 0, 0);
	}
	return NULL;
}

static void first_releases_race_to_one_block(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = hb(u, "race", NULL);
	struct brk_hold_info h;
	pthread_barrier_t go;
	pthread_t t[RACERS];
	struct racer x = { b, &go };
	uint64_t next = uatomic_read(&u->seg->hdr->arena_next);
	uint64_t leaked = uatomic_read(&u->seg->hdr->leaked_units);
	int i;

	pthread_barrier_init(&go, NULL, RACERS);
	for (i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, race, &x), 0);
	for (i = 0; i < RACERS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&go);
	hold_info(b, &h);
	assert_int_equal(h.state, BRK_HOLD_RECORDED);
	assert_int_equal(h.count, RACERS * PER_RACER);
	assert_int_equal(h.bucket[0], RACERS * PER_RACER); /* the clock stood still */
	/* one block linked; each other run taken is a loser's, leaked */
	assert_int_equal(uatomic_read(&u->seg->hdr->arena_next) - next -
			 (uatomic_read(&u->seg->hdr->leaked_units) - leaked),
			 BRK__HOLD_UNITS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(bounds_are_prometheus_default_buckets),
		UT_TEST(no_release_no_histogram),
		UT_TEST(holds_land_in_their_buckets),
		UT_TEST(stale_release_counts_hold_double_release_does_not),
		UT_TEST(bulkhead_permit_hold_counts),
		UT_TEST(no_room_records_nothing_and_says_so),
		UT_TEST(corrupt_hold_word_writes_nothing),
		UT_TEST(retire_keeps_block_reuse_clears_it),
		UT_TEST(reuse_after_noroom_starts_over),
		UT_TEST(ver2_caller_gets_no_hold),
		UT_TEST(first_releases_race_to_one_block),
		UT_TEST(off_by_default_no_clock_read_no_block),
		UT_TEST(turning_off_stops_recording_keeps_block),
		UT_TEST(hold_histogram_setting_is_a_bool),
		UT_TEST(turning_on_again_retries_after_no_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
