/*
 * test_names_config.c - names, settings, get-or-create (late declarer),
 * a full table, attach options, and the small string helpers.
 */
#include "fixture.h"

UT_GROUP_FIXTURES("names", 0)

static void breaker_names_follow_the_charset_and_slash_rules(void **state)
{
	char n63[64], n64[65], n200[201];
	const char *bad[] = {
		"", "a*b", "a b", " a", "a\n", "a\tb", "caf\xc3\xa9", "\xff",
		"/a", "a/", "a//b", "/", "//", "a/b/", "a\\b", "a,b", "a;b",
		"a\"b", "a'b", "a%b", "a@b", "a#b", "a?b", "a=b",
	};
	const char *good[] = {
		"a", "Z", "0", "exchange/history/eu", "a.b_c:d-e", "A-Z.09_:x",
		"a/b", "svc-1.eu:443",
	};

	(void)state;
	memset(n63, 'x', 63);
	n63[63] = '\0';
	memset(n64, 'x', 64);
	n64[64] = '\0';
	memset(n200, 'y', 200);
	n200[200] = '\0';

	ut_rc(0, brk_name_validate(n63));
	ut_rc(-ENAMETOOLONG, brk_name_validate(n64));
	ut_rc(-ENAMETOOLONG, brk_name_validate(n200));
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		int rc = brk_name_validate(bad[k]);
		if (rc != -EINVAL)
			fprintf(stderr, "name \"%s\": %d\n", bad[k], rc);
		assert_int_equal(rc, -EINVAL);
	}
	for (size_t k = 0; k < sizeof good / sizeof good[0]; k++)
		ut_rc(0, brk_name_validate(good[k]));
}

/* brk_breaker_get/find apply the same rules and create nothing. */
static void get_rejects_bad_names(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = NULL;
	char n64[65], n63[64];

	memset(n64, 'q', 64);
	n64[64] = '\0';
	memset(n63, 'q', 63);
	n63[63] = '\0';
	ut_rc(-EINVAL, brk_breaker_get(u->seg, "", NULL, &b));
	ut_rc(-EINVAL, brk_breaker_get(u->seg, "a*", NULL, &b));
	ut_rc(-EINVAL, brk_breaker_get(u->seg, "a//b", NULL, &b));
	ut_rc(-EINVAL, brk_breaker_get(u->seg, "/a", NULL, &b));
	ut_rc(-EINVAL, brk_breaker_get(u->seg, "a/", NULL, &b));
	ut_rc(-ENAMETOOLONG, brk_breaker_get(u->seg, n64, NULL, &b));
	ut_rc(-EINVAL, brk_breaker_find(u->seg, "a b", &b));
	ut_rc(-ENAMETOOLONG, brk_breaker_find(u->seg, n64, &b));
	assert_int_equal(brk_record_count(u->seg), 0);

	ut_rc(0, brk_breaker_get(u->seg, n63, NULL, &b));
	assert_string_equal(brk_breaker_name(b), n63);
	assert_int_equal(brk_record_count(u->seg), 1);
	ut_rc(-ENOENT, brk_breaker_find(u->seg, "absent", &b));
	ut_rc(0, brk_breaker_find(u->seg, n63, &b));
}

struct bad_cfg {
	const char *what;
	void (*apply)(struct brk_config *c);
};

static void set_ft0(struct brk_config *c) { c->failure_threshold = 0; }
static void set_hop0(struct brk_config *c) { c->half_open_probes = 0; }
static void set_hop9(struct brk_config *c) { c->half_open_probes = 9; }
static void set_mc65(struct brk_config *c) { c->max_concurrent = 65; }
static void set_fr101(struct brk_config *c) { c->failure_rate_pct = 101; }
static void set_st0(struct brk_config *c) { c->success_threshold = 0; }
static void set_st_big(struct brk_config *c) { c->success_threshold = 1000001; }
static void set_open0(struct brk_config *c) { c->open_ms = 0; }
static void set_pt0(struct brk_config *c) { c->probe_timeout_ms = 0; }
static void set_sr0(struct brk_config *c) { c->slow_call_ms = 100; c->slow_rate_pct = 0; }
static void set_sr101(struct brk_config *c) { c->slow_call_ms = 100; c->slow_rate_pct = 101; }

static void each_out_of_range_setting_is_einval(void **state)
{
	const struct bad_cfg bad[] = {
		{ "failure_threshold", set_ft0 },
		{ "half_open_probes", set_hop0 },
		{ "half_open_probes", set_hop9 },
		{ "max_concurrent", set_mc65 },
		{ "failure_rate_pct", set_fr101 },
		{ "success_threshold", set_st0 },
		{ "success_threshold", set_st_big },
		{ "open_ms", set_open0 },
		{ "probe_timeout_ms", set_pt0 },
		{ "slow_rate_pct", set_sr0 },
		{ "slow_rate_pct", set_sr101 },
	};
	struct brk_config c;
	const char *what;

	(void)state;
	brk_config_init(&c);
	assert_int_equal(c.failure_threshold, BRK_DEFAULT_FAILURE_THRESHOLD);
	assert_int_equal(c.open_ms, BRK_DEFAULT_OPEN_MS);
	assert_int_equal(c.max_open_ms, BRK_DEFAULT_MAX_OPEN_MS);
	assert_int_equal(c.half_open_probes, BRK_DEFAULT_HALF_OPEN_PROBES);
	assert_int_equal(c.success_threshold, BRK_DEFAULT_SUCCESS_THRESHOLD);
	assert_int_equal(c.probe_timeout_ms, BRK_DEFAULT_PROBE_TIMEOUT_MS);
	assert_int_equal(c.max_wait_ms, BRK_DEFAULT_MAX_WAIT_MS);
	assert_int_equal(c.max_concurrent, BRK_DEFAULT_MAX_CONCURRENT);
	assert_int_equal(c.window_ms, BRK_DEFAULT_WINDOW_MS);
	assert_int_equal(c.min_calls, BRK_DEFAULT_MIN_CALLS);
	assert_int_equal(c.failure_rate_pct, 0);
	assert_int_equal(c.slow_call_ms, 0);
	what = "untouched";
	ut_rc(0, brk_config_validate(&c, &what));
	ut_rc(0, brk_config_validate(&c, NULL));

	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		brk_config_init(&c);
		bad[k].apply(&c);
		what = NULL;
		ut_rc(-EINVAL, brk_config_validate(&c, &what));
		assert_non_null(what);
		if (strcmp(what, bad[k].what) != 0)
			fprintf(stderr, "case %zu: what = \"%s\", want \"%s\"\n",
				k, what, bad[k].what);
		assert_string_equal(what, bad[k].what);
		ut_rc(-EINVAL, brk_config_validate(&c, NULL));
	}

	/* max_open_ms < open_ms names one of the two */
	brk_config_init(&c);
	c.open_ms = 5000;
	c.max_open_ms = 4999;
	what = NULL;
	ut_rc(-EINVAL, brk_config_validate(&c, &what));
	assert_non_null(what);
	assert_true(strcmp(what, "max_open_ms") == 0 ||
		    strcmp(what, "open_ms") == 0);

	/* the boundaries are accepted */
	brk_config_init(&c);
	c.half_open_probes = BRK_MAX_PROBES;
	c.max_concurrent = BRK_MAX_CONCURRENT;
	c.failure_rate_pct = 100;
	c.success_threshold = 1000000;
	c.failure_threshold = 1;
	c.open_ms = 1;
	c.max_open_ms = 1;
	c.probe_timeout_ms = 1;
	c.slow_call_ms = 1;
	c.slow_rate_pct = 100;
	ut_rc(0, brk_config_validate(&c, NULL));
	c.failure_rate_pct = 1;
	c.slow_rate_pct = 1;
	c.half_open_probes = 1;
	c.max_concurrent = 0;
	ut_rc(0, brk_config_validate(&c, NULL));
}

/* brk_breaker_get with a bad config creates nothing; configure with a
 * bad one changes nothing. */
static void bad_config_creates_and_changes_nothing(void **state)
{
	struct ut *u = *state;
	struct brk_config c, good;
	struct brk_info i;
	brk_breaker *b = NULL;

	brk_config_init(&c);
	c.failure_threshold = 0;
	ut_rc(-EINVAL, brk_breaker_get(u->seg, "svc", &c, &b));
	assert_int_equal(brk_record_count(u->seg), 0);
	ut_rc(-ENOENT, brk_breaker_find(u->seg, "svc", &b));

	ut_cfg(&good);
	b = ut_breaker(u, "svc", &good);
	ut_rc(-EINVAL, brk_breaker_configure(b, &c));
	ut_info(b, &i);
	assert_int_equal(i.config.failure_threshold, 3);

	good.failure_threshold = 7;
	good.open_ms = 2500;
	ut_fail_n(b, 2);
	ut_rc(0, brk_breaker_configure(b, &good));
	ut_info(b, &i);
	assert_int_equal(i.config.failure_threshold, 7);
	assert_int_equal(i.config.open_ms, 2500);
	assert_int_equal(i.consecutive_failures, 2); /* state kept */
	assert_int_equal(i.counters.failures, 2);
	ut_fail_n(b, 4);
	assert_int_equal(ut_state(b), BRK_CLOSED);
	ut_fail_n(b, 1);
	assert_int_equal(ut_open_remaining(b), 2500);
}

/* A late declarer keeps the first config and the state. */
static void late_declarer_keeps_first(void **state)
{
	struct ut *u = *state;
	struct brk_config first, later;
	struct brk_info i, j;
	brk_segment *other;
	brk_breaker *b, *b2;

	ut_cfg(&first);
	b = ut_breaker(u, "svc", &first);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 200);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);

	brk_config_init(&later);
	later.failure_threshold = 10;
	later.open_ms = 99999;
	later.max_open_ms = 999999;
	later.max_concurrent = 5;
	/* same handle (cached) and another "process" */
	b2 = ut_breaker(u, "svc", &later);
	assert_ptr_equal(b2, b);
	other = ut_attach_other(u, NULL);
	b2 = ut_breaker_on(other, "svc", &later);
	ut_info(b2, &j);
	assert_int_equal(j.index, i.index);
	assert_int_equal(j.config.failure_threshold, 3);
	assert_int_equal(j.config.open_ms, 1000);
	assert_int_equal(j.config.max_concurrent, 0);
	assert_int_equal(j.state, BRK_OPEN);
	assert_int_equal(j.open_remaining_ms, 800);
	assert_int_equal(j.counters.failures, 3);
	assert_int_equal(j.counters.transitions, 1);
	assert_int_equal(brk_record_count(u->seg), 1);
	brk_detach(other);
}

/* Capacity 4: the 5th name is -ENOSPC; the four are intact and usable. */
static void full_segment_refuses_new_records_with_enospc(void **state)
{
	struct ut *u = *state;
	const char *names[] = { "n0", "n1", "n2", "n3" };
	brk_breaker *b[4], *x = NULL;
	struct brk_info i;
	struct brk_config c;
	brk_segment *other;

	ut_cfg(&c);
	for (int k = 0; k < 4; k++)
		b[k] = ut_breaker(u, names[k], &c);
	ut_rc(-ENOSPC, brk_breaker_get(u->seg, "n4", &c, &x));
	ut_rc(-ENOSPC, brk_breaker_get(u->seg, "another/one", NULL, &x));
	assert_int_equal(brk_record_count(u->seg), 4);
	ut_rc(-ENOENT, brk_breaker_find(u->seg, "n4", &x));

	other = ut_attach_other(u, NULL);
	ut_rc(-ENOSPC, brk_breaker_get(other, "n5", &c, &x));
	for (int k = 0; k < 4; k++) {
		brk_breaker *y = ut_breaker_on(other, names[k], NULL);
		ut_call(b[k], BRK_SUCCESS, 0);
		ut_fail_n(y, (unsigned)k);
		ut_info(b[k], &i);
		assert_string_equal(i.name, names[k]);
		assert_int_equal(i.counters.successes, 1);
		assert_int_equal(i.counters.failures, (uint64_t)k);
		assert_int_equal(i.config.failure_threshold, 3);
		assert_int_equal(i.state, k >= 3 ? BRK_OPEN : BRK_CLOSED);
	}
	for (uint32_t k = 0; k < 4; k++) {
		uint32_t ref = ut_ref_nth(u->seg, k);
		ut_rc(0, brk_info_at(u->seg, ref, &i));
		assert_int_equal(i.index, ref);
		assert_int_equal(i.kind, BRK_KIND_BREAKER);
	}
	assert_int_equal(ut_ref_nth(u->seg, 4), UINT32_MAX);
	/* refs that are not the start of a live record */
	ut_rc(-ENOENT, brk_info_at(u->seg, 0, &i));
	ut_rc(-ENOENT, brk_info_at(u->seg, ut_ref_nth(u->seg, 0) + 1, &i));
	ut_rc(-ENOENT, brk_info_at(u->seg, UINT32_MAX, &i));
	brk_detach(other);
}

static int setup4(void **state)
{
	*state = ut_new("namesfull", 4, 0);
	return 0;
}

/* A name that exists as another kind: -EMEDIUMTYPE both ways, nothing
 * created, the existing record untouched. */
static void other_kind_is_emediumtype(void **state)
{
#ifdef BRK_BUCKET_MAX_BURST /* the bucket API is there */
	struct ut *u = *state;
	brk_bucket *k = NULL;
	brk_breaker *b = NULL;
	struct brk_info i;

	ut_rc(0, brk_bucket_get(u->seg, "rl", 10.0, 5, &k));
	b = ut_breaker(u, "br", NULL);
	ut_call(b, BRK_FAILURE, 0);
	assert_int_equal(brk_record_count(u->seg), 2);

	ut_rc(-EMEDIUMTYPE, brk_breaker_get(u->seg, "rl", NULL, &b));
	ut_rc(-EMEDIUMTYPE, brk_breaker_find(u->seg, "rl", &b));
	ut_rc(-EMEDIUMTYPE, brk_bucket_get(u->seg, "br", 10.0, 5, &k));
	ut_rc(-EMEDIUMTYPE, brk_bucket_find(u->seg, "br", &k));
	assert_int_equal(brk_record_count(u->seg), 2);
	ut_info(ut_breaker(u, "br", NULL), &i);
	assert_int_equal(i.counters.failures, 1);
	ut_rc(0, brk_info_at(u->seg, ut_ref_nth(u->seg, 0), &i));
	assert_int_equal(i.kind, BRK_KIND_BUCKET);
	assert_string_equal(i.name, "rl");
#else
	(void)state;
	skip();
#endif
}

/* Concurrent-looking get-or-create from two handles gives one record. */
static void two_handles_one_record(void **state)
{
	struct ut *u = *state;
	brk_segment *other = ut_attach_other(u, NULL);
	brk_breaker *a, *b;
	struct brk_info i, j;

	a = ut_breaker(u, "x/y", NULL);
	b = ut_breaker_on(other, "x/y", NULL);
	ut_info(a, &i);
	ut_info(b, &j);
	assert_int_equal(i.index, j.index);
	ut_call(a, BRK_SUCCESS, 0);
	ut_info(b, &j);
	assert_int_equal(j.counters.successes, 1);
	assert_int_equal(brk_record_count(u->seg), 1);
	brk_detach(other);
}

/* Attach options are validated. */
static void bad_attach_options_are_refused_and_attach_nothing(void **state)
{
	struct ut *u = *state;
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	char name[128];

	snprintf(name, sizeof name, "/brkut-absent-%ld", (long)getpid());
	brk_segment_unlink(name);
	ut_opts(u, &o, 0);
	o.shm_name = "no-slash";
	ut_rc(-EINVAL, brk_attach(&o, &s));
	ut_opts(u, &o, BRK_MAX_CAPACITY + 1);
	o.shm_name = name;
	ut_rc(-EINVAL, brk_attach(&o, &s));
	ut_opts(u, &o, 16);
	o.shm_name = name;
	o.mode = 01777;
	ut_rc(-EINVAL, brk_attach(&o, &s));
	ut_opts(u, &o, 16);
	o.shm_name = name;
	o.flags = BRK_ATTACH_NOCREATE;
	ut_rc(-ENOENT, brk_attach(&o, &s));
	o.flags = BRK_ATTACH_READONLY;
	ut_rc(-ENOENT, brk_attach(&o, &s));
	assert_null(s);
	brk_segment_unlink(name);
}

static void shm_name_flag_beats_env_beats_default(void **state)
{
	(void)state;
	unsetenv(BRK_SHM_ENV);
	assert_string_equal(brk_resolve_shm_name(NULL), BRK_DEFAULT_SHM);
	assert_string_equal(brk_resolve_shm_name("/flag"), "/flag");
	setenv(BRK_SHM_ENV, "/fromenv", 1);
	assert_string_equal(brk_resolve_shm_name(NULL), "/fromenv");
	assert_string_equal(brk_resolve_shm_name("/flag"), "/flag");
	setenv(BRK_SHM_ENV, "", 1);
	assert_string_equal(brk_resolve_shm_name(NULL), BRK_DEFAULT_SHM);
	unsetenv(BRK_SHM_ENV);
}

static void every_error_code_has_its_own_message(void **state)
{
	const int codes[] = { BRK_EOPEN, BRK_EFULL, BRK_ECOOLING, BRK_EDEFERRED,
			      BRK_ESTALE, BRK_ECORRUPT, BRK_ECONTENDED };
	(void)state;
	for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++) {
		const char *s = brk_strerror(-codes[k]);
		assert_non_null(s);
		assert_true(strlen(s) > 0);
		assert_string_equal(s, brk_strerror(codes[k]));
		for (size_t j = 0; j < k; j++)
			assert_string_not_equal(s, brk_strerror(-codes[j]));
	}
	assert_non_null(brk_strerror(-EINVAL));
	assert_non_null(brk_strerror(0));
	assert_non_null(brk_strerror(-123456));
	assert_non_null(brk_strerror(INT32_MIN));

	assert_true(brk_is_refusal(-BRK_EOPEN));
	assert_true(brk_is_refusal(-BRK_EFULL));
	assert_true(brk_is_refusal(-BRK_ECOOLING));
	assert_true(brk_is_refusal(-BRK_EDEFERRED));
	assert_false(brk_is_refusal(-BRK_ESTALE));
	assert_false(brk_is_refusal(-BRK_ECORRUPT));
	assert_false(brk_is_refusal(0));
	assert_false(brk_is_refusal(-EINVAL));

	assert_string_equal(brk_state_name(BRK_CLOSED), "closed");
	assert_string_equal(brk_state_name(BRK_OPEN), "open");
	assert_string_equal(brk_state_name(BRK_HALF_OPEN), "half_open");
	assert_non_null(brk_state_name(17));
	assert_string_equal(brk_outcome_name(BRK_SUCCESS), "success");
	assert_string_equal(brk_outcome_name(BRK_FAILURE), "failure");
	assert_string_equal(brk_outcome_name(BRK_HEALTHY_ERROR), "healthy_error");
	assert_string_equal(brk_outcome_name(BRK_REJECTED_REQUEST),
			    "rejected_request");
	assert_string_equal(brk_outcome_name(BRK_CANCELLED), "cancelled");
	assert_string_equal(brk_outcome_name(99), "unknown");
	assert_string_equal(brk_outcome_name(0), "unknown");
	assert_string_equal(brk_reason_name(BRK_REASON_TIMEOUT), "timeout");
	assert_string_equal(brk_reason_name(BRK_REASON_CONNECT), "connect");
	assert_string_equal(brk_reason_name(BRK_REASON_SERVER_ERROR),
			    "server_error");
	assert_string_equal(brk_reason_name(BRK_REASON_OVERLOADED), "overloaded");
	assert_string_equal(brk_reason_name(BRK_REASON_RATE_LIMITED),
			    "rate_limited");
	assert_non_null(brk_reason_name(-1));
	assert_non_null(brk_reason_name(BRK_REASON_COUNT));
	assert_string_equal(brk_lease_kind_name(BRK_LEASE_PROBE), "probe");
	assert_string_equal(brk_lease_kind_name(BRK_LEASE_PERMIT), "permit");
	assert_non_null(brk_lease_kind_name(0));
	for (int r = BRK_EV_THRESHOLD; r <= BRK_EV_SLOW_RATE; r++) {
		assert_non_null(brk_event_reason_name(r));
		for (int q = BRK_EV_THRESHOLD; q < r; q++)
			assert_string_not_equal(brk_event_reason_name(r),
						brk_event_reason_name(q));
	}
	assert_non_null(brk_event_reason_name(0));
	assert_non_null(brk_event_reason_name(1000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(breaker_names_follow_the_charset_and_slash_rules),
		UT_TEST(get_rejects_bad_names),
		cmocka_unit_test(each_out_of_range_setting_is_einval),
		UT_TEST(bad_config_creates_and_changes_nothing),
		UT_TEST(late_declarer_keeps_first),
		cmocka_unit_test_setup_teardown(full_segment_refuses_new_records_with_enospc, setup4, ut_teardown),
		UT_TEST(other_kind_is_emediumtype),
		UT_TEST(two_handles_one_record),
		UT_TEST(bad_attach_options_are_refused_and_attach_nothing),
		cmocka_unit_test(shm_name_flag_beats_env_beats_default),
		cmocka_unit_test(every_error_code_has_its_own_message),
	};
	return cmocka_run_group_tests_name("names_config", tests, NULL, NULL);
}
