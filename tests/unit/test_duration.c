/*
 * test_duration.c - brk_parse_duration: "250ms", "30s", "5m", "2h", "1d",
 * "1500us" (rounded up); a bare number, negative, garbage -> -EINVAL;
 * above BRK_MAX_DURATION_MS -> -ERANGE.
 */
#include "fixture.h"

struct good {
	const char *s;
	uint64_t ms;
};

static void parses_units(void **state)
{
	const struct good g[] = {
		{ "250ms", 250 },
		{ "30s", 30000 },
		{ "5m", 300000 },
		{ "2h", 7200000 },
		{ "1d", 86400000 },
		{ "1ms", 1 },
		{ "0ms", 0 },
		{ "0s", 0 },
		{ "1500us", 2 },
		{ "1000us", 1 },
		{ "1us", 1 },
		{ "999us", 1 },
		{ "1001us", 2 },
		{ "100000s", 100000000 },
		{ "3000d", 3000ULL * 86400000 },
		{ "274877906943ms", BRK_MAX_DURATION_MS },
	};
	(void)state;
	for (size_t k = 0; k < sizeof g / sizeof g[0]; k++) {
		uint64_t ms = 0xdeadbeef;
		int rc = brk_parse_duration(g[k].s, &ms);
		if (rc != 0 || ms != g[k].ms)
			fprintf(stderr, "\"%s\": rc %d ms %" PRIu64 ", want %" PRIu64 "\n",
				g[k].s, rc, ms, g[k].ms);
		assert_int_equal(rc, 0);
		assert_int_equal(ms, g[k].ms);
	}
}

static void rejects_garbage(void **state)
{
	const char *bad[] = {
		"5", "0", "", "ms", "s", "-5s", "-0s", "5 s", " 5s", "5s ",
		"5parsecs", "5sec", "5msec", "5mss", "s5", "5x", "0x10s",
		"1e3ms", "5ms5", "5m30s", "+", "-", "--5s", "5\n", "5s\n",
		"\t5s", "5\xc2\xb5s", "5.s", "ms5", "5h5",
	};
	(void)state;
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		uint64_t ms = 777;
		int rc = brk_parse_duration(bad[k], &ms);
		if (rc != -EINVAL)
			fprintf(stderr, "\"%s\": rc %d (%s) ms %" PRIu64 "\n",
				bad[k], rc, brk_strerror(rc), ms);
		assert_int_equal(rc, -EINVAL);
	}
}

/* Above the maximum: -ERANGE (an overflow of the arithmetic itself may
 * be reported as -EINVAL, as the header allows: "an overflow is -EINVAL
 * (-ERANGE above BRK_MAX_DURATION_MS)"); never a wrapped small value. */
static void rejects_out_of_range(void **state)
{
	const char *range[] = {
		"274877906944ms", "4000d", "100000000h", "274877907s",
	};
	const char *huge[] = {
		"99999999999999999999h", "18446744073709551615ms",
		"18446744073709551616ms", "99999999999999999999999999999999s",
		"18446744073709551615d", "5124095576030431d",
	};
	(void)state;
	for (size_t k = 0; k < sizeof range / sizeof range[0]; k++) {
		uint64_t ms = 0;
		int rc = brk_parse_duration(range[k], &ms);
		if (rc != -ERANGE)
			fprintf(stderr, "\"%s\": rc %d ms %" PRIu64 "\n", range[k],
				rc, ms);
		assert_int_equal(rc, -ERANGE);
	}
	for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++) {
		uint64_t ms = 0;
		int rc = brk_parse_duration(huge[k], &ms);
		if (rc != -ERANGE && rc != -EINVAL)
			fprintf(stderr, "\"%s\": rc %d ms %" PRIu64 "\n", huge[k],
				rc, ms);
		assert_true(rc == -ERANGE || rc == -EINVAL);
	}
}

static void null_arguments(void **state)
{
	uint64_t ms;
	(void)state;
	assert_int_equal(brk_parse_duration(NULL, &ms), -EINVAL);
	assert_int_equal(brk_parse_duration("5s", NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_units),
		cmocka_unit_test(rejects_garbage),
		cmocka_unit_test(rejects_out_of_range),
		cmocka_unit_test(null_arguments),
	};
	return cmocka_run_group_tests_name("duration", tests, NULL, NULL);
}
