/*
 * test_outcome.c - how `bctl exec` judges a finished command: the order of
 * the rules in bctl_outcome.h, and the exit status it passes on.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "bctl_outcome.h"
#include "breaker.h"
#include "cli_util.h"

#define EXITED(c) ((c) << 8)      /* a waitpid() status for exit(c) */
#define KILLED(s) (s)             /* ... for death by signal s */

static uint8_t healthy[CLI_CODE_SET_BYTES], ignore[CLI_CODE_SET_BYTES];

static struct exec_verdict judge(int status, bool timed_out, bool intr,
				 const struct scan_result *scan)
{
	struct scan_result none;
	struct exec_facts f;
	struct exec_verdict v;

	scan_result_init(&none);
	f = (struct exec_facts){ status, timed_out, intr, scan ? scan : &none,
				 healthy, ignore };
	bctl_verdict(&f, &v);
	return v;
}

static int setup(void **state)
{
	(void)state;
	memset(healthy, 0, sizeof(healthy));
	memset(ignore, 0, sizeof(ignore));
	assert_int_equal(parse_code_set("3,10-12", healthy), 0);
	assert_int_equal(parse_code_set("4", ignore), 0);
	return 0;
}

static void exit_codes_map_to_outcomes(void **state)
{
	(void)state;
	assert_true(WIFEXITED(EXITED(3)) && WEXITSTATUS(EXITED(3)) == 3);
	assert_int_equal(judge(EXITED(0), false, false, NULL).outcome, BRK_SUCCESS);
	assert_int_equal(judge(EXITED(3), false, false, NULL).outcome,
			 BRK_HEALTHY_ERROR);
	assert_int_equal(judge(EXITED(11), false, false, NULL).outcome,
			 BRK_HEALTHY_ERROR);
	assert_int_equal(judge(EXITED(4), false, false, NULL).outcome,
			 BRK_REJECTED_REQUEST);
	assert_int_equal(judge(EXITED(1), false, false, NULL).outcome, BRK_FAILURE);
	assert_int_equal(judge(EXITED(1), false, false, NULL).reason,
			 BRK_REASON_OTHER);
	assert_int_equal(judge(KILLED(SIGSEGV), false, false, NULL).outcome,
			 BRK_FAILURE);
}

static void rate_limit_or_overload_signs_win_over_the_exit_code(void **state)
{
	struct scan_result s;
	struct exec_verdict v;

	(void)state;
	scan_result_init(&s);
	scan_line("Retry-After: 2", 14, &s);
	v = judge(EXITED(0), false, false, &s);
	assert_int_equal(v.outcome, BRK_FAILURE);
	assert_int_equal(v.reason, BRK_REASON_RATE_LIMITED);
	assert_int_equal(v.retry_after_ms, 2000);

	scan_line("HTTP/1.1 503 Service Unavailable", 32, &s);
	v = judge(EXITED(3), false, false, &s); /* healthy code, but 503 */
	assert_int_equal(v.reason, BRK_REASON_OVERLOADED);
	assert_int_equal(v.retry_after_ms, 2000);

	scan_line("HTTP/2 429", 10, &s);
	v = judge(EXITED(0), false, true, &s);
	assert_int_equal(v.outcome, BRK_FAILURE);
	assert_int_equal(v.reason, BRK_REASON_RATE_LIMITED);
}

static void timeout_is_a_failure_interrupt_is_cancelled(void **state)
{
	struct scan_result s;
	struct exec_verdict v;
	struct exec_facts f = { KILLED(SIGTERM), true, false, NULL, NULL, NULL };

	(void)state;
	scan_result_init(&s);
	scan_line("HTTP/2 429", 10, &s);
	v = judge(KILLED(SIGTERM), true, false, &s);
	assert_int_equal(v.outcome, BRK_FAILURE);
	assert_int_equal(v.reason, BRK_REASON_TIMEOUT);
	assert_int_equal(bctl_exit_status(&f), 124);

	v = judge(KILLED(SIGINT), false, true, NULL);
	assert_int_equal(v.outcome, BRK_CANCELLED);
	v = judge(EXITED(0), false, true, NULL);
	assert_int_equal(v.outcome, BRK_SUCCESS);
}

static void bctl_exits_with_the_commands_status(void **state)
{
	struct exec_facts f = { EXITED(3), false, false, NULL, NULL, NULL };

	(void)state;
	assert_int_equal(bctl_exit_status(&f), 3);
	f.status = KILLED(SIGKILL);
	assert_int_equal(bctl_exit_status(&f), 128 + SIGKILL);
	f.status = EXITED(0);
	assert_int_equal(bctl_exit_status(&f), 0);
}

static void exit_code_sets_parse_and_bad_ones_are_refused(void **state)
{
	uint8_t set[CLI_CODE_SET_BYTES] = { 0 };

	(void)state;
	assert_int_equal(parse_code_set("0,255,7-9", set), 0);
	assert_true(code_set_has(set, 0) && code_set_has(set, 255));
	assert_true(code_set_has(set, 8) && !code_set_has(set, 10));
	assert_int_equal(parse_code_set("", set), -EINVAL);
	assert_int_equal(parse_code_set("256", set), -EINVAL);
	assert_int_equal(parse_code_set("5-3", set), -EINVAL);
	assert_int_equal(parse_code_set("1,,2", set), -EINVAL);
	assert_int_equal(parse_code_set("-1", set), -EINVAL);
	assert_int_equal(parse_code_set("3-", set), -EINVAL);
	assert_int_equal(parse_code_set(" 3", set), -EINVAL);
	assert_false(code_set_has(set, -1));
	assert_false(code_set_has(set, 256));
}

static void uint_arguments_range_checked(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse_uint_arg("42", 1, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_uint_arg("0", 1, 100, &v), -ERANGE);
	assert_int_equal(parse_uint_arg("101", 1, 100, &v), -ERANGE);
	assert_int_equal(parse_uint_arg("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint_arg("+1", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint_arg(" 1", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint_arg("1 ", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint_arg("1x", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint_arg("", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint_arg("99999999999999999999999", 0, UINT64_MAX, &v),
			 -ERANGE);
	assert_int_equal(parse_uint_arg_base("0755", 8, 0, 0777, &v), 0);
	assert_int_equal(v, 0755);
	assert_int_equal(parse_uint_arg_base("0800", 8, 0, 0777, &v), -EINVAL);
}

static void event_times_format_as_utc_iso8601_ms(void **state)
{
	char buf[40];

	(void)state;
	assert_int_equal(cli_format_time(1714557600123ull, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2024-05-01T10:00:00.123Z");
	assert_int_equal(cli_format_time(0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
	assert_int_equal(cli_format_time(UINT64_MAX, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(cli_format_time(0, buf, 10), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(exit_codes_map_to_outcomes, setup),
		cmocka_unit_test_setup(rate_limit_or_overload_signs_win_over_the_exit_code, setup),
		cmocka_unit_test_setup(timeout_is_a_failure_interrupt_is_cancelled, setup),
		cmocka_unit_test(bctl_exits_with_the_commands_status),
		cmocka_unit_test(exit_code_sets_parse_and_bad_ones_are_refused),
		cmocka_unit_test(uint_arguments_range_checked),
		cmocka_unit_test(event_times_format_as_utc_iso8601_ms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
