/*
 * test_abi.c - structs that grow without breaking callers (breaker.h,
 * "Growing structs").
 *
 * An "old caller" (built against a breaker.h whose struct was shorter) is
 * simulated by passing an explicit smaller size, with garbage in the bytes
 * past it (what the old caller's next stack variable would hold): the
 * library must not read them and must use the defaults. A "newer caller"
 * is a struct embedded in a bigger one with an explicit bigger size: a
 * zero unknown tail is accepted, a non-zero one is refused with -E2BIG and
 * changes nothing. Output structs are written through canary buffers: not
 * one byte past the caller's size may change.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("abi", 0)

#define CANARY 0xa5

static void assert_canary(const void *buf, size_t from, size_t to)
{
	const unsigned char *p = buf;

	for (size_t i = from; i < to; i++) {
		if (p[i] != CANARY)
			fprintf(stderr, "byte %zu written (0x%02x)\n", i, p[i]);
		assert_int_equal(p[i], CANARY);
	}
}

static void assert_zero(const void *buf, size_t from, size_t to)
{
	const unsigned char *p = buf;

	for (size_t i = from; i < to; i++)
		assert_int_equal(p[i], 0);
}

/* The size of a brk_config that ended before max_wait_ms. */
#define OLD_CONFIG_SIZE offsetof(struct brk_config, max_wait_ms)

static void old_config_caller_gets_defaults(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	const char *what = NULL;
	brk_breaker *b;

	assert_int_equal(OLD_CONFIG_SIZE % 8, 0);
	memset(&c, CANARY, sizeof c);
	brk_config_init_sz(&c, OLD_CONFIG_SIZE);
	/* init writes only the old caller's bytes */
	assert_canary(&c, OLD_CONFIG_SIZE, sizeof c);
	assert_int_equal(c.size, OLD_CONFIG_SIZE);
	assert_int_equal(c.failure_threshold, BRK_DEFAULT_FAILURE_THRESHOLD);
	c.failure_threshold = 7;
	c.open_ms = 1234;
	c.max_open_ms = 5000;
	/* past the old size: max_wait_ms, max_concurrent and
	 * min_distinct_processes hold 0xa5... (each out of range if read) */
	ut_rc(0, brk_config_validate(&c, &what));
	b = ut_breaker(u, "old/caller", &c);
	ut_info(b, &i);
	assert_int_equal(i.config.failure_threshold, 7);
	assert_int_equal(i.config.open_ms, 1234);
	assert_int_equal(i.config.max_open_ms, 5000);
	assert_int_equal(i.config.max_wait_ms, BRK_DEFAULT_MAX_WAIT_MS);
	assert_int_equal(i.config.max_concurrent, BRK_DEFAULT_MAX_CONCURRENT);
	assert_int_equal(i.config.min_distinct_processes, 0);

	/* configure reads the old size too */
	c.failure_threshold = 9;
	ut_rc(0, brk_breaker_configure(b, &c));
	ut_info(b, &i);
	assert_int_equal(i.config.failure_threshold, 9);
	assert_int_equal(i.config.max_wait_ms, BRK_DEFAULT_MAX_WAIT_MS);
}

struct newer_config {
	struct brk_config c;
	uint64_t newer[4]; /* settings of a future breaker.h */
};

static void newer_config_caller_with_unknown_fields_is_refused(void **state)
{
	struct ut *u = *state;
	struct newer_config n;
	struct brk_config before;
	struct brk_info i;
	const char *what = NULL;
	brk_breaker *b = NULL;

	memset(&n, CANARY, sizeof n);
	brk_config_init_sz(&n.c, sizeof n);
	assert_int_equal(n.c.size, sizeof n);
	assert_zero(&n, sizeof n.c, sizeof n); /* unknown fields: zero */
	n.c.failure_threshold = 4;
	/* a zero unknown tail is what an unchanged newer caller sends */
	ut_rc(0, brk_config_validate(&n.c, NULL));
	b = ut_breaker(u, "newer/zero", &n.c);
	ut_info(b, &i);
	assert_int_equal(i.config.failure_threshold, 4);
	before = i.config;

	/* a setting this library does not know: refused, nothing changes */
	n.newer[2] = 1;
	n.c.failure_threshold = 11;
	ut_rc(-E2BIG, brk_config_validate(&n.c, &what));
	assert_string_equal(what, "size");
	ut_rc(-E2BIG, brk_breaker_get(u->seg, "newer/set", &n.c, &b));
	ut_rc(-ENOENT, brk_breaker_find(u->seg, "newer/set", &b));
	ut_rc(0, brk_breaker_find(u->seg, "newer/zero", &b));
	ut_rc(-E2BIG, brk_breaker_configure(b, &n.c));
	ut_info(b, &i);
	assert_memory_equal(&i.config, &before, sizeof before);
	assert_non_null(strstr(brk_strerror(-E2BIG), "newer"));
}

static void config_sizes_that_cannot_be_a_struct_are_einval(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	const char *what = NULL;
	brk_breaker *b = NULL;
	const uint32_t bad[] = { 4, 12, 81, BRK_STRUCT_SIZE_MAX + 8,
				 0xa5a5a5a5u };

	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		brk_config_init(&c);
		c.size = bad[k];
		ut_rc(-EINVAL, brk_config_validate(&c, &what));
		assert_string_equal(what, "size");
		ut_rc(-EINVAL, brk_breaker_get(u->seg, "bad/size", &c, &b));
	}
	ut_rc(-ENOENT, brk_breaker_find(u->seg, "bad/size", &b));

	/* size 0: filled by hand, never through brk_config_init(): read as
	 * the BREAKER_0 struct */
	memset(&c, 0, sizeof c);
	c.failure_threshold = 2;
	c.window_ms = 1000;
	c.open_ms = 100;
	c.max_open_ms = 100;
	c.half_open_probes = 1;
	c.success_threshold = 1;
	c.probe_timeout_ms = 100;
	ut_rc(0, brk_config_validate(&c, NULL));
	ut_rc(0, brk_breaker_get(u->seg, "by/hand", &c, &b));
}

/* brk_info.config carries a size that can be passed straight back. */
static void info_config_round_trips(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	b = ut_breaker(u, "round/trip", NULL);
	ut_info(b, &i);
	assert_int_equal(i.config.size, sizeof(struct brk_config));
	c = i.config;
	c.failure_threshold = 17;
	ut_rc(0, brk_breaker_configure(b, &c));
	ut_info(b, &i);
	assert_int_equal(i.config.failure_threshold, 17);
	assert_int_equal(i.config.open_ms, BRK_DEFAULT_OPEN_MS);
}

/* The size of a brk_attach_opts that ended before errbuf. */
#define OLD_OPTS_SIZE offsetof(struct brk_attach_opts, errbuf)

static void old_attach_opts_caller_gets_defaults(void **state)
{
	struct ut *u = *state;
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	char err[64] = "untouched";

	assert_int_equal(OLD_OPTS_SIZE % 8, 0);
	memset(&o, CANARY, sizeof o);
	brk_attach_opts_init_sz(&o, OLD_OPTS_SIZE);
	assert_canary(&o, OLD_OPTS_SIZE, sizeof o);
	assert_int_equal(o.size, OLD_OPTS_SIZE);
	assert_int_equal(o.gid, -1);
	o.shm_name = "no-slash"; /* refused: errbuf would get a message */
	o.errbuf = err;            /* past the old size: must be ignored */
	o.errbuf_len = sizeof err;
	ut_rc(-EINVAL, brk_attach(&o, &s));
	assert_null(s);
	assert_string_equal(err, "untouched");

	/* the same with the whole struct: the message is written */
	o.size = sizeof o;
	ut_rc(-EINVAL, brk_attach(&o, &s));
	assert_non_null(strstr(err, "no-slash"));

	/* an old caller that has the clock fields: they are used */
	memset(&o, CANARY, sizeof o);
	brk_attach_opts_init_sz(&o, OLD_OPTS_SIZE);
	o.shm_name = u->shm;
	o.flags = BRK_ATTACH_NOCREATE;
	o.clock = ut_clock_fn;
	o.clock_ctx = &u->clk;
	o.random = ut_random_fn;
	o.random_ctx = &u->rnd;
	ut_rc(0, brk_attach(&o, &s));
	assert_int_equal(brk_now_ns(s), ut_clock_get(&u->clk));
	brk_detach(s);
}

struct newer_opts {
	struct brk_attach_opts o;
	uint64_t newer[2];
};

static void newer_attach_opts_with_unknown_fields_are_refused(void **state)
{
	struct ut *u = *state;
	struct newer_opts n;
	brk_segment *s = NULL;
	char shm[160], err[64] = "untouched";

	snprintf(shm, sizeof shm, "%s-newer", u->shm);
	brk_segment_unlink(shm);
	brk_attach_opts_init_sz(&n.o, sizeof n);
	assert_zero(&n, sizeof n.o, sizeof n);
	n.o.shm_name = shm;
	n.o.clock = ut_clock_fn;
	n.o.clock_ctx = &u->clk;
	n.o.errbuf = err;
	n.o.errbuf_len = sizeof err;
	n.newer[1] = 7;
	ut_rc(-E2BIG, brk_attach(&n.o, &s));
	assert_null(s);
	assert_string_equal(err, "untouched"); /* nothing written */
	ut_rc(-ENOENT, brk_segment_unlink(shm)); /* nothing created */

	n.newer[1] = 0;
	ut_rc(0, brk_attach(&n.o, &s));
	brk_detach(s);
	ut_rc(0, brk_segment_unlink(shm));
}

/* Old callers of output structs: not one byte past their size. */
static void outputs_never_write_past_the_callers_size(void **state)
{
	struct ut *u = *state;
	static unsigned char buf[sizeof(struct brk_info) + 256];
	struct brk_info *i = (struct brk_info *)(void *)buf;
	struct brk_segment_info *si = (struct brk_segment_info *)(void *)buf;
	struct brk_bucket_info *bi = (struct brk_bucket_info *)(void *)buf;
	struct brk_budget_info *gi = (struct brk_budget_info *)(void *)buf;
	const size_t old_info = offsetof(struct brk_info, leases);
	brk_breaker *b;
	brk_bucket *k;
	brk_budget *g;

	b = ut_breaker(u, "out/b", NULL);
	ut_rc(0, brk_bucket_get(u->seg, "out/k", 10.0, 5, &k));
	ut_rc(0, brk_budget_get(u->seg, "out/g", 1.0, 0.5, &g));

	/* older: a prefix */
	memset(buf, CANARY, sizeof buf);
	ut_rc(0, brk_breaker_info_sz(b, i, old_info));
	assert_string_equal(i->name, "out/b");
	assert_int_equal(i->kind, BRK_KIND_BREAKER);
	assert_canary(buf, old_info, sizeof buf);

	memset(buf, CANARY, sizeof buf);
	ut_rc(0, brk_info_at_sz(u->seg, ut_ref_nth(u->seg, 0), i, old_info));
	assert_string_equal(i->name, "out/b");
	assert_canary(buf, old_info, sizeof buf);

	/* newer: the library's struct, then zeros up to the caller's size */
	memset(buf, CANARY, sizeof buf);
	ut_rc(0, brk_breaker_info_sz(b, i, sizeof *i + 128));
	assert_int_equal(i->config.failure_threshold,
			 BRK_DEFAULT_FAILURE_THRESHOLD);
	assert_zero(buf, sizeof *i, sizeof *i + 128);
	assert_canary(buf, sizeof *i + 128, sizeof buf);

	memset(buf, CANARY, sizeof buf);
	ut_rc(0, brk_segment_info_sz(u->seg, si, 8));
	assert_memory_equal(si->shm_name, u->shm, 8);
	assert_canary(buf, 8, sizeof buf);
	memset(buf, CANARY, sizeof buf);
	ut_rc(0, brk_segment_info_sz(u->seg, si, sizeof *si + 16));
	assert_int_equal(si->capacity, 64);
	assert_zero(buf, sizeof *si, sizeof *si + 16);
	assert_canary(buf, sizeof *si + 16, sizeof buf);

	memset(buf, CANARY, sizeof buf);
	ut_rc(0, brk_bucket_info_sz(k, bi, offsetof(struct brk_bucket_info,
						    burst)));
	assert_string_equal(bi->name, "out/k");
	assert_canary(buf, offsetof(struct brk_bucket_info, burst), sizeof buf);
	memset(buf, CANARY, sizeof buf);
	ut_rc(0, brk_bucket_info_sz(k, bi, sizeof *bi + 8));
	assert_int_equal(bi->burst, 5);
	assert_zero(buf, sizeof *bi, sizeof *bi + 8);
	assert_canary(buf, sizeof *bi + 8, sizeof buf);

	memset(buf, CANARY, sizeof buf);
	ut_rc(0, brk_budget_info_sz(g, gi, offsetof(struct brk_budget_info,
						    ratio)));
	assert_string_equal(gi->name, "out/g");
	assert_canary(buf, offsetof(struct brk_budget_info, ratio), sizeof buf);
	memset(buf, CANARY, sizeof buf);
	ut_rc(0, brk_budget_info_sz(g, gi, sizeof *gi + 8));
	assert_true(gi->ratio == 0.5);
	assert_zero(buf, sizeof *gi, sizeof *gi + 8);
	assert_canary(buf, sizeof *gi + 8, sizeof buf);
}

/* brk_events_read: the caller's element size is the stride. */
static void events_use_the_callers_element_size(void **state)
{
	struct ut *u = *state;
	const size_t old = offsetof(struct brk_event, name); /* seq, times */
	const size_t newer = sizeof(struct brk_event) + 24;
	static unsigned char buf[4 * (sizeof(struct brk_event) + 24)];
	struct brk_event *ev = (struct brk_event *)(void *)buf;
	uint64_t cursor = 1, lost = 99, seq;
	brk_breaker *b;

	b = ut_breaker(u, "ev/b", NULL);
	ut_rc(0, brk_trip(b, 1000));
	ut_rc(0, brk_reset(b));

	memset(buf, CANARY, sizeof buf);
	assert_int_equal(brk_events_read_sz(u->seg, &cursor, ev, 2, &lost, old),
			 2);
	assert_int_equal(lost, 0);
	memcpy(&seq, buf, sizeof seq);
	assert_int_equal(seq, 1);
	memcpy(&seq, buf + old, sizeof seq);
	assert_int_equal(seq, 2);
	assert_canary(buf, 2 * old, sizeof buf);

	cursor = 1;
	memset(buf, CANARY, sizeof buf);
	assert_int_equal(brk_events_read_sz(u->seg, &cursor, ev, 2, NULL,
					    newer), 2);
	for (size_t e = 0; e < 2; e++) {
		const struct brk_event *x =
			(const struct brk_event *)(const void *)(buf + e * newer);
		assert_int_equal(x->seq, e + 1);
		assert_string_equal(x->name, "ev/b");
		assert_zero(buf, e * newer + sizeof *x, (e + 1) * newer);
	}
	assert_canary(buf, 2 * newer, sizeof buf);

	ut_rc(-EINVAL, brk_events_read_sz(u->seg, &cursor, ev, 2, NULL, 0));
}

/* The plain names are real symbols with the BREAKER_0 sizes: for
 * function pointers, dlsym() and ctypes. */
static void plain_names_are_the_ver0_entry_points(void **state)
{
	struct ut *u = *state;
	int (*info_fn)(brk_breaker *, struct brk_info *) = brk_breaker_info;
	void (*init_fn)(struct brk_config *) = brk_config_init;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	memset(&c, CANARY, sizeof c);
	init_fn(&c);
	assert_int_equal(c.size, BRK_CONFIG_SIZE_VER0);
	assert_int_equal(c.failure_threshold, BRK_DEFAULT_FAILURE_THRESHOLD);
	c.failure_threshold = 6;
	b = ut_breaker(u, "plain", &c);
	memset(&i, CANARY, sizeof i);
	ut_rc(0, info_fn(b, &i));
	assert_int_equal(i.config.failure_threshold, 6);
	ut_rc(0, (brk_info_at)(u->seg, ut_ref_nth(u->seg, 0), &i));
	assert_string_equal(i.name, "plain");
}

/* Fixed-size structs: the library zeroes the reserved tail it fills. */
static void refusal_and_reclaim_stats_reserved_tails_are_zeroed(void **state)
{
	struct ut *u = *state;
	struct brk_refusal why;
	struct brk_reclaim_stats st;
	brk_permit p;
	brk_breaker *b;

	b = ut_breaker(u, "fixed", NULL);
	ut_rc(0, brk_trip(b, 1000));
	memset(&why, CANARY, sizeof why);
	ut_rc(-BRK_EOPEN, brk_acquire(b, &p, &why));
	assert_int_equal(why.cause, BRK_CAUSE_OPEN);
	assert_zero(why.reserved_, 0, sizeof why.reserved_);
	memset(&st, CANARY, sizeof st);
	ut_rc(0, brk_reclaim(u->seg, &st));
	assert_int_equal(st.dead_owner, 0);
	assert_zero(st.reserved_, 0, sizeof st.reserved_);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(old_config_caller_gets_defaults),
		UT_TEST(newer_config_caller_with_unknown_fields_is_refused),
		UT_TEST(config_sizes_that_cannot_be_a_struct_are_einval),
		UT_TEST(info_config_round_trips),
		UT_TEST(old_attach_opts_caller_gets_defaults),
		UT_TEST(newer_attach_opts_with_unknown_fields_are_refused),
		UT_TEST(outputs_never_write_past_the_callers_size),
		UT_TEST(events_use_the_callers_element_size),
		UT_TEST(plain_names_are_the_ver0_entry_points),
		UT_TEST(refusal_and_reclaim_stats_reserved_tails_are_zeroed),
	};
	return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
