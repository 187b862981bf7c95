/*
 * test_config_update.c - brk_breaker_update(): only the given settings are
 * written, concurrent updates of different settings all take effect, a
 * combination made invalid by a concurrent update is withdrawn, and the
 * brk_config_field_* helpers (issue 9: `bctl config` rewrote every
 * setting, so one of two concurrent changes was lost).
 */
#include <pthread.h>

#include "fixture.h"

#include "internal.h" /* private: a handle's record, its stored words */

UT_GROUP_FIXTURES("cfgupd", 16)

static struct brk_config stored(brk_breaker *b)
{
	struct brk_info i;

	ut_info(b, &i);
	return i.config;
}

/* Field by field: struct brk_config has padding (after failure_rate_pct,
 * min_calls, slow_rate_pct ...), whose bytes a copy need not keep, so a
 * memcmp of two configs fails at -O2 (issue 22: the release build). The
 * reserved members are padding too; size is compared. */
static void assert_config_equal(const struct brk_config *a,
				const struct brk_config *b)
{
#define CFG_EQ(f) assert_int_equal(a->f, b->f)
	CFG_EQ(size);
	CFG_EQ(failure_threshold);
	CFG_EQ(failure_rate_pct);
	CFG_EQ(window_ms);
	CFG_EQ(min_calls);
	CFG_EQ(slow_call_ms);
	CFG_EQ(slow_rate_pct);
	CFG_EQ(open_ms);
	CFG_EQ(max_open_ms);
	CFG_EQ(half_open_probes);
	CFG_EQ(success_threshold);
	CFG_EQ(probe_timeout_ms);
	CFG_EQ(max_wait_ms);
	CFG_EQ(max_concurrent);
	CFG_EQ(min_distinct_processes);
	CFG_EQ(reserve_pct);
	CFG_EQ(hold_histogram);
	CFG_EQ(fleet);
	CFG_EQ(fleet_probe);
	CFG_EQ(implicit_pace);
	CFG_EQ(concurrency_auto);
	CFG_EQ(min_concurrent);
#undef CFG_EQ
	/* a member added to the struct must be added above */
	_Static_assert(sizeof(struct brk_config) == BRK_CONFIG_SIZE_VER5,
		       "compare the new members of struct brk_config");
}

/* A config whose every setting is garbage (invalid), to prove that only
 * the members named in @fields are read. The size member says which
 * struct the caller has (breaker.h "Growing structs"), so it is kept. */
static void garbage(struct brk_config *c)
{
	memset(c, 0xff, sizeof *c);
	c->size = sizeof *c;
}

/* The bug: operator A reads the settings, operator B changes another one,
 * A writes its change. A's stale copy of B's setting must not be written
 * back. */
static void update_keeps_a_concurrent_change_of_another_setting(void **state)
{
	struct ut *u = *state;
	struct brk_config base, a, bb;
	brk_segment *other = ut_attach_other(u, NULL);
	brk_breaker *ba, *bo;
	const char *what = "x";

	ut_cfg(&base);
	ba = ut_breaker(u, "upd/api", &base);
	bo = ut_breaker_on(other, "upd/api", NULL);
	a = stored(ba);                  /* A reads (a snapshot) */
	bb = stored(bo);                 /* B reads */
	bb.success_threshold = 4;
	ut_rc(0, brk_breaker_update(bo, &bb, BRK_CFG_SUCCESS_THRESHOLD, &what));
	assert_null(what);
	a.failure_threshold = 9;         /* A's copy still says success 1 */
	ut_rc(0, brk_breaker_update(ba, &a, BRK_CFG_FAILURE_THRESHOLD, NULL));
	a = stored(ba);
	assert_int_equal(a.failure_threshold, 9);
	assert_int_equal(a.success_threshold, 4); /* B's change survived */
	/* the old whole-config write loses it, which is what bctl did */
	bb.failure_threshold = 3;
	ut_rc(0, brk_breaker_configure(bo, &bb));
	assert_int_equal(stored(ba).failure_threshold, 3);
	brk_detach(other);
}

static void partial_update_touches_no_other_setting(void **state)
{
	struct ut *u = *state;
	struct brk_config c, g, after;
	uint64_t before_words[BRK__CFG_COUNT], seq;
	brk_breaker *b;
	struct brk__record *r;
	int i;

	ut_cfg(&c);
	c.failure_rate_pct = 50;
	c.window_ms = 20000;
	c.min_calls = 7;
	c.slow_call_ms = 300;
	c.slow_rate_pct = 60;
	c.max_concurrent = 5;
	c.min_distinct_processes = 2;
	b = ut_breaker(u, "upd/partial", &c);
	r = brk__brec(b);
	for (i = 0; i < BRK__CFG_COUNT; i++)
		before_words[i] = brk__cfg(r, (enum brk__cfg)i);
	seq = r->cfg[BRK__CFG_SEQ];
	garbage(&g);
	g.probe_timeout_ms = 4321;
	ut_rc(0, brk_breaker_update(b, &g, BRK_CFG_PROBE_TIMEOUT_MS, NULL));
	for (i = 0; i < BRK__CFG_COUNT; i++)
		if (i != BRK__CFG_PROBE_TIMEOUT_MS)
			assert_int_equal(brk__cfg(r, (enum brk__cfg)i), before_words[i]);
	assert_int_equal(brk__cfg(r, BRK__CFG_PROBE_TIMEOUT_MS), 4321);
	assert_int_equal(r->cfg[BRK__CFG_SEQ], seq + 1);
	after = stored(b);
	c.probe_timeout_ms = 4321;
	assert_config_equal(&after, &c);
	/* max_concurrent shares its packed word with slow_call_ms,
	 * failure_rate_pct and slow_rate_pct: they stay */
	g.max_concurrent = 6;
	ut_rc(0, brk_breaker_update(b, &g, BRK_CFG_MAX_CONCURRENT, NULL));
	assert_int_equal(brk__cfg(r, BRK__CFG_MAX_CONCURRENT), 6);
	for (i = 0; i < BRK__CFG_COUNT; i++)
		if (i != BRK__CFG_PROBE_TIMEOUT_MS && i != BRK__CFG_MAX_CONCURRENT)
			assert_int_equal(brk__cfg(r, (enum brk__cfg)i), before_words[i]);
	assert_int_equal(r->cfg[BRK__CFG_SEQ], seq + 2);
	after = stored(b);
	c.max_concurrent = 6;
	assert_config_equal(&after, &c);
	seq++;

	/* nothing to do; bad bits; NULL; read-only */
	ut_rc(0, brk_breaker_update(b, &g, 0, NULL));
	ut_rc(-EINVAL, brk_breaker_update(b, &g, BRK_CFG_ALL + 1, NULL));
	ut_rc(-EINVAL, brk_breaker_update(b, NULL, BRK_CFG_OPEN_MS, NULL));
	ut_rc(-EINVAL, brk_breaker_update(NULL, &c, BRK_CFG_OPEN_MS, NULL));
	assert_int_equal(r->cfg[BRK__CFG_SEQ], seq + 1);
	{
		struct brk_attach_opts o;
		brk_segment *ro;
		brk_breaker *rb;

		ut_opts(u, &o, 0);
		o.flags = BRK_ATTACH_READONLY;
		ut_rc(0, brk_attach(&o, &ro));
		ut_rc(0, brk_breaker_find(ro, "upd/partial", &rb));
		ut_rc(-EROFS, brk_breaker_update(rb, &c, BRK_CFG_OPEN_MS, NULL));
		brk_detach(ro);
	}
}

/* Cross-setting rules are checked against the values stored now; an
 * invalid combination writes nothing. */
static void update_validates_against_the_stored_settings(void **state)
{
	struct ut *u = *state;
	struct brk_config c, g;
	brk_breaker *b;
	const char *what = NULL;

	ut_cfg(&c); /* open 1000, max_open 8000 */
	b = ut_breaker(u, "upd/rules", &c);
	garbage(&g);
	g.open_ms = 9000; /* above the stored max_open_ms */
	ut_rc(-EINVAL, brk_breaker_update(b, &g, BRK_CFG_OPEN_MS, &what));
	assert_string_equal(what, "max_open_ms");
	assert_int_equal(stored(b).open_ms, 1000);
	g.max_open_ms = 9000; /* both at once: fine */
	ut_rc(0, brk_breaker_update(b, &g, BRK_CFG_OPEN_MS | BRK_CFG_MAX_OPEN_MS,
				    &what));
	assert_int_equal(stored(b).open_ms, 9000);
	assert_int_equal(stored(b).max_open_ms, 9000);
	g.slow_call_ms = 200; /* the slow rate is 0: no rule to apply */
	ut_rc(-EINVAL, brk_breaker_update(b, &g, BRK_CFG_SLOW_CALL_MS, &what));
	assert_string_equal(what, "slow_rate_pct");
	g.slow_rate_pct = 0;
	g.failure_threshold = 0; /* a bad value of a given setting */
	ut_rc(-EINVAL, brk_breaker_update(b, &g, BRK_CFG_FAILURE_THRESHOLD, &what));
	assert_string_equal(what, "failure_threshold");
	assert_int_equal(stored(b).slow_call_ms, 0);
	assert_int_equal(stored(b).failure_threshold, 3);
}

/* ---- threads: real interleavings -------------------------------------- */

#define ROUNDS 100000

static pthread_barrier_t start_line;

struct upd_thread {
	brk_breaker *b;
	uint64_t field;
	uint64_t lo, hi;     /* values written: random in lo..hi */
	uint64_t last;       /* the last value written successfully */
	unsigned ok, invalid, contended;
	int retry;           /* retry a -BRK_ECONTENDED update, as a caller
	                        is told to (the bounded loop may give up
	                        under load: withdrawn, nothing lost) */
};

static void *upd_run(void *arg)
{
	struct upd_thread *t = arg;
	struct brk_config c;
	uint64_t v, seed = t->field * 0x9e3779b97f4a7c15ULL;
	int i, rc;

	pthread_barrier_wait(&start_line);
	for (i = 0; i < ROUNDS; i++) {
		garbage(&c);
		v = t->lo + ut_splitmix64(&seed) % (t->hi - t->lo + 1);
		assert_int_equal(brk_config_field_set(&c, t->field, v), 0);
		rc = brk_breaker_update(t->b, &c, t->field, NULL);
		for (int k = 0; t->retry && rc == -BRK_ECONTENDED && k < 1000; k++) {
			t->contended++;
			rc = brk_breaker_update(t->b, &c, t->field, NULL);
		}
		if (rc == 0) {
			t->ok++;
			t->last = v;
		} else if (rc == -EINVAL) {
			t->invalid++;
		} else {
			assert_int_equal(rc, -BRK_ECONTENDED);
			t->contended++;
		}
	}
	return NULL;
}

static void run_pair(struct upd_thread *a, struct upd_thread *b)
{
	pthread_t ta, tb;

	assert_int_equal(pthread_barrier_init(&start_line, NULL, 2), 0);
	assert_int_equal(pthread_create(&ta, NULL, upd_run, a), 0);
	assert_int_equal(pthread_create(&tb, NULL, upd_run, b), 0);
	assert_int_equal(pthread_join(ta, NULL), 0);
	assert_int_equal(pthread_join(tb, NULL), 0);
	pthread_barrier_destroy(&start_line);
}

/* Two threads (two handles: "processes") change different settings
 * 100000 times each, at once: every update succeeds and both final values
 * are each thread's last. */
static void concurrent_updates_of_different_settings_all_take_effect(void **state)
{
	struct ut *u = *state;
	brk_segment *other = ut_attach_other(u, NULL);
	struct upd_thread a = { NULL, BRK_CFG_FAILURE_THRESHOLD, 1, 1000, 0, 0, 0, 0, 0 };
	struct upd_thread b = { NULL, BRK_CFG_MAX_WAIT_MS, 5, 5000, 0, 0, 0, 0, 0 };
	struct brk_config c;

	ut_cfg(&c);
	a.b = ut_breaker(u, "upd/threads", &c);
	b.b = ut_breaker_on(other, "upd/threads", NULL);
	a.retry = b.retry = 1;
	run_pair(&a, &b);
	if (a.contended || b.contended)
		fprintf(stderr, "gave up and retried: %u + %u\n", a.contended,
			b.contended);
	assert_int_equal(a.ok, ROUNDS);
	assert_int_equal(b.ok, ROUNDS);
	c = stored(a.b);
	assert_int_equal(c.failure_threshold, a.last);
	assert_int_equal(c.max_wait_ms, b.last);
	assert_int_equal(c.open_ms, 1000); /* untouched */
	brk_detach(other);
}

/* Two threads whose updates are each valid alone but not together (one
 * raises open_ms up to 8000, the other lowers max_open_ms down to 1000):
 * every update is applied, refused (-EINVAL against the stored values) or
 * withdrawn (-BRK_ECONTENDED); when both are done the stored settings obey
 * open_ms <= max_open_ms. */
static void conflicting_concurrent_updates_leave_a_valid_combination(void **state)
{
	struct ut *u = *state;
	brk_segment *other = ut_attach_other(u, NULL);
	struct upd_thread a = { NULL, BRK_CFG_OPEN_MS, 1000, 8000, 0, 0, 0, 0, 0 };
	struct upd_thread b = { NULL, BRK_CFG_MAX_OPEN_MS, 1000, 8000, 0, 0, 0, 0, 0 };
	struct brk__record *r;
	struct brk_config c;

	ut_cfg(&c); /* open 1000, max 8000 */
	a.b = ut_breaker(u, "upd/conflict", &c);
	b.b = ut_breaker_on(other, "upd/conflict", NULL);
	run_pair(&a, &b);
	r = brk__brec(a.b);
	fprintf(stderr, "open: %u ok, %u invalid, %u withdrawn; max_open: %u ok, "
		"%u invalid, %u withdrawn; stored %" PRIu64 " <= %" PRIu64 "\n",
		a.ok, a.invalid, a.contended, b.ok, b.invalid, b.contended,
		brk__cfg(r, BRK__CFG_OPEN_MS), brk__cfg(r, BRK__CFG_MAX_OPEN_MS));
	/* the settings, not the words cfg[6] and cfg[7] (the packed words
	 * min_calls | min_concurrent and the sequence word, which the enum
	 * values index): a stored min_concurrent (bit 30) made cfg[6] large */
	assert_true(brk__cfg(r, BRK__CFG_OPEN_MS) <= brk__cfg(r, BRK__CFG_MAX_OPEN_MS));
	assert_true(a.ok > 0 && b.ok > 0);
	assert_true(a.invalid + b.invalid > 0); /* the rule really bit */
	brk_detach(other);
}

static void config_field_helpers(void **state)
{
	struct brk_config c;
	uint64_t f = 0, v = 0, bit;
	unsigned n = 0;

	(void)state;
	brk_config_init(&c);
	for (bit = 1; bit & BRK_CFG_ALL; bit <<= 1, n++) {
		const char *name = brk_config_field_name(bit);

		assert_non_null(name);
		ut_rc(0, brk_config_field_lookup(name, &f));
		assert_int_equal(f, bit);
		ut_rc(0, brk_config_field_set(&c, bit, 1000 + n));
		ut_rc(0, brk_config_field_get(&c, bit, &v));
		assert_int_equal(v, 1000 + n);
	}
	assert_int_equal(n, 21); /* ... hold_histogram, fleet, fleet_probe,
					 implicit_pace, concurrency_auto, min_concurrent */
	assert_int_equal(c.failure_threshold, 1000);
	assert_int_equal(c.min_distinct_processes, 1013);
	assert_string_equal(brk_config_field_name(BRK_CFG_MAX_OPEN_MS), "max_open_ms");
	assert_null(brk_config_field_name(0));
	assert_null(brk_config_field_name(BRK_CFG_OPEN_MS | BRK_CFG_MAX_OPEN_MS));
	assert_null(brk_config_field_name(BRK_CFG_ALL + 1));
	ut_rc(-EINVAL, brk_config_field_lookup("open", &f));
	ut_rc(-EINVAL, brk_config_field_lookup(NULL, &f));
	ut_rc(-EINVAL, brk_config_field_set(&c, BRK_CFG_MIN_CALLS, 1ULL << 32));
	ut_rc(0, brk_config_field_set(&c, BRK_CFG_OPEN_MS, 1ULL << 32));
	ut_rc(-EINVAL, brk_config_field_get(&c, 3, &v));
	assert_string_equal(brk_config_field_name(BRK_CFG_FLEET), "fleet");
	assert_string_equal(brk_config_field_name(BRK_CFG_FLEET_PROBE), "fleet_probe");
}

/* Issue 13: fleet and fleet_probe are stored in the record (0/1 only),
 * changed alone by brk_breaker_update, and come back in brk_info.config. */
static void fleet_settings_are_stored_validated_and_updated_alone(void **state)
{
	struct ut *u = *state;
	struct brk_config c, got;
	brk_breaker *b;
	const char *what = NULL;

	ut_cfg(&c);
	assert_int_equal(c.fleet, 0);
	assert_int_equal(c.fleet_probe, 0);
	c.fleet = 2;
	ut_rc(-EINVAL, brk_config_validate(&c, &what));
	assert_string_equal(what, "fleet");
	c.fleet = 1;
	c.fleet_probe = 7;
	ut_rc(-EINVAL, brk_config_validate(&c, &what));
	assert_string_equal(what, "fleet_probe");
	c.fleet_probe = 0;
	c.open_ms = 7000;
	c.max_open_ms = 70000;
	b = ut_breaker(u, "fleet/api", &c);
	got = stored(b);
	assert_int_equal(got.fleet, 1);
	assert_int_equal(got.fleet_probe, 0);
	assert_int_equal(got.size, BRK_CONFIG_SIZE_VER5);
	/* only fleet_probe: a garbage config elsewhere is not read */
	garbage(&c);
	c.fleet_probe = 1;
	ut_rc(0, brk_breaker_update(b, &c, BRK_CFG_FLEET_PROBE, &what));
	got = stored(b);
	assert_int_equal(got.fleet, 1);
	assert_int_equal(got.fleet_probe, 1);
	assert_int_equal(got.open_ms, 7000);
	assert_int_equal(got.max_open_ms, 70000);
	/* a bad value: -EINVAL naming it, nothing changed */
	c.fleet = 3;
	ut_rc(-EINVAL, brk_breaker_update(b, &c, BRK_CFG_FLEET, &what));
	assert_string_equal(what, "fleet");
	assert_int_equal(stored(b).fleet, 1);
	c.fleet = 0;
	ut_rc(0, brk_breaker_update(b, &c, BRK_CFG_FLEET, NULL));
	got = stored(b);
	assert_int_equal(got.fleet, 0);
	assert_int_equal(got.fleet_probe, 1);
}

/* Growing structs: a caller built before fleet (brk_config VER2, brk_info
 * VER3) gets config.size VER2 in its info, so copying and passing it back
 * never reads past its struct; a configure by it leaves fleet at the
 * default 0. A current caller (brk_info VER4) gets VER3, so passing the
 * copy back keeps fleet = 1. */
static void info_config_size_follows_the_callers_release(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info *i = calloc(1, sizeof(*i));
	uint64_t seq;
	brk_breaker *b;

	assert_non_null(i);
	ut_cfg(&c);
	c.fleet = 1;
	b = ut_breaker(u, "fleet/sizes", &c);
	ut_rc(0, brk_breaker_info_sz(b, i, BRK_INFO_SIZE_VER3));
	assert_int_equal(i->config.size, BRK_CONFIG_SIZE_VER2);
	ut_rc(0, brk_breaker_info(b, i));
	assert_int_equal(i->config.size, BRK_CONFIG_SIZE_VER5);
	assert_int_equal(i->config.fleet, 1);
	seq = i->config_seq;
	c = i->config;
	ut_rc(0, brk_breaker_configure(b, &c)); /* the copy passed back */
	ut_rc(0, brk_breaker_info(b, i));
	assert_int_equal(i->config.fleet, 1);
	assert_true(i->config_seq > seq);
	/* a VER2 caller's configure: fleet beyond its size -> default 0 */
	c.size = BRK_CONFIG_SIZE_VER2;
	ut_rc(0, brk_breaker_configure(b, &c));
	ut_rc(0, brk_breaker_info(b, i));
	assert_int_equal(i->config.fleet, 0);
	free(i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(update_keeps_a_concurrent_change_of_another_setting),
		UT_TEST(partial_update_touches_no_other_setting),
		UT_TEST(update_validates_against_the_stored_settings),
		UT_TEST(concurrent_updates_of_different_settings_all_take_effect),
		UT_TEST(conflicting_concurrent_updates_leave_a_valid_combination),
		UT_TEST(config_field_helpers),
		UT_TEST(fleet_settings_are_stored_validated_and_updated_alone),
		UT_TEST(info_config_size_follows_the_callers_release),
	};
	return cmocka_run_group_tests_name("config_update", tests, NULL, NULL);
}
