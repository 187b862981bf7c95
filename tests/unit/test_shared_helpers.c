/*
 * test_shared_helpers.c - the library helpers bctl and breakerd ask for
 * instead of keeping their own copies: brk_shm_name_validate() (the one
 * segment-name rule, also brk_attach()'s), brk_kind_name(),
 * brk_monotonic_ns(), brk_parse_uint() (the one integer parser), and the
 * library's one random generator (ident.c),
 * which a fork()ed child must reseed.
 */
#include <sys/wait.h>

#include "fixture.h"
#include "internal.h"

static void shm_name_accepts_slash_and_1_to_254_bytes(void **state)
{
	char name[BRK_SHM_NAME_MAX + 1];

	(void)state;
	assert_int_equal(brk_shm_name_validate("/breakerd"), 0);
	assert_int_equal(brk_shm_name_validate("/a"), 0);
	assert_int_equal(brk_shm_name_validate("/with space.and-dots_"), 0);
	memset(name, 'x', BRK_SHM_NAME_MAX);
	name[0] = '/';
	name[BRK_SHM_NAME_MAX] = '\0';
	assert_int_equal(strlen(name), 255);
	assert_int_equal(brk_shm_name_validate(name), 0);
}

static void shm_name_refuses_bad_input(void **state)
{
	(void)state;
	assert_int_equal(brk_shm_name_validate(NULL), -EINVAL);
	assert_int_equal(brk_shm_name_validate(""), -EINVAL);
	assert_int_equal(brk_shm_name_validate("/"), -EINVAL);
	assert_int_equal(brk_shm_name_validate("breakerd"), -EINVAL);
	assert_int_equal(brk_shm_name_validate("bad name"), -EINVAL);
	assert_int_equal(brk_shm_name_validate("/a/b"), -EINVAL);
	assert_int_equal(brk_shm_name_validate("/a/"), -EINVAL);
	assert_int_equal(brk_shm_name_validate("//"), -EINVAL);
}

static void shm_name_refuses_256_bytes_as_too_long(void **state)
{
	char name[BRK_SHM_NAME_MAX + 2];
	char big[4096];

	(void)state;
	memset(name, 'x', sizeof(name) - 1);
	name[0] = '/';
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(strlen(name), 256);
	assert_int_equal(brk_shm_name_validate(name), -ENAMETOOLONG);
	memset(big, 'y', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(brk_shm_name_validate(big), -ENAMETOOLONG);
	/* too long is said before a stray '/' far beyond the limit */
	big[3000] = '/';
	assert_int_equal(brk_shm_name_validate(big), -ENAMETOOLONG);
}

/* brk_attach() uses the same rule: what the validator refuses, attach
 * refuses with -EINVAL and creates nothing. */
static void attach_uses_the_same_shm_name_rule(void **state)
{
	char name[BRK_SHM_NAME_MAX + 2], err[1024] = "";
	struct brk_attach_opts o;
	brk_segment *seg = (brk_segment *)0x1;

	(void)state;
	memset(name, 'z', sizeof(name) - 1);
	name[0] = '/';
	name[sizeof(name) - 1] = '\0';
	brk_attach_opts_init(&o);
	o.shm_name = name;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	assert_int_equal(brk_attach(&o, &seg), -EINVAL);
	assert_null(seg);
	assert_non_null(strstr(err, "1-254 characters"));
	o.shm_name = "/a/b";
	assert_int_equal(brk_attach(&o, &seg), -EINVAL);
}

static void parse_uint_accepts_digits_of_the_base(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(brk_parse_uint("42", 10, 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(brk_parse_uint("0", 10, 0, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(brk_parse_uint("0755", 8, 0, 0777, &v), 0);
	assert_int_equal(v, 0755);
	assert_int_equal(brk_parse_uint("ff", 16, 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, 255);
	assert_int_equal(brk_parse_uint("FF", 16, 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, 255);
	assert_int_equal(brk_parse_uint("101", 2, 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(brk_parse_uint("18446744073709551615", 10, 0,
					UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
}

static void parse_uint_refuses_bad_input_and_keeps_out(void **state)
{
	const char *bad[] = { "", "-1", "+1", " 1", "1 ", "1x", "x", "0x1f",
			      "1.5", "1e3" };
	uint64_t v = 7;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		assert_int_equal(brk_parse_uint(bad[k], 10, 0, UINT64_MAX, &v),
				 -EINVAL);
		assert_int_equal(v, 7);
	}
	assert_int_equal(brk_parse_uint(NULL, 10, 0, 1, &v), -EINVAL);
	assert_int_equal(brk_parse_uint("1", 10, 0, 1, NULL), -EINVAL);
	assert_int_equal(brk_parse_uint("1", 1, 0, 1, &v), -EINVAL);
	assert_int_equal(brk_parse_uint("1", 37, 0, 1, &v), -EINVAL);
	assert_int_equal(brk_parse_uint("0800", 8, 0, 0777, &v), -EINVAL);
	assert_int_equal(brk_parse_uint("0x1f", 16, 0, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(v, 7);
}

static void parse_uint_range_and_overflow(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(brk_parse_uint("0", 10, 1, 100, &v), -ERANGE);
	assert_int_equal(brk_parse_uint("101", 10, 1, 100, &v), -ERANGE);
	assert_int_equal(brk_parse_uint("18446744073709551616", 10, 0,
					UINT64_MAX, &v), -ERANGE);
	assert_int_equal(brk_parse_uint("99999999999999999999999", 10, 0,
					UINT64_MAX, &v), -ERANGE);
	/* garbage after the digits is said first, as strtoull() did */
	assert_int_equal(brk_parse_uint("99999999999999999999999x", 10, 0,
					UINT64_MAX, &v), -EINVAL);
	assert_int_equal(v, 7);
	/* durations share the digits: overflow is -ERANGE there too */
	assert_int_equal(brk_parse_duration("99999999999999999999999ms", &v),
			 -ERANGE);
	assert_int_equal(v, 7);
}

/* docs/design/segment.md "The segment": a name is '/' and 1-254 bytes.
 * bctl and breakerd accepted such a 255-byte name and brk_attach() then
 * refused it. */
static void attach_accepts_the_longest_name_the_contract_allows(void **state)
{
	char name[256];
	struct brk_attach_opts o;
	brk_segment *seg = NULL;
	int n;

	(void)state;
	n = snprintf(name, sizeof(name), "/brkut-longname-%d-", (int)getpid());
	memset(name + n, 'n', sizeof(name) - 1 - (size_t)n);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(strlen(name), 255);
	brk_attach_opts_init(&o);
	o.shm_name = name;
	o.capacity = 4;
	assert_int_equal(brk_attach(&o, &seg), 0);
	assert_non_null(seg);
	brk_detach(seg);
	assert_int_equal(brk_segment_unlink(name), 0);
}

static void kind_names(void **state)
{
	(void)state;
	assert_string_equal(brk_kind_name(BRK_KIND_BREAKER), "breaker");
	assert_string_equal(brk_kind_name(BRK_KIND_BUCKET), "bucket");
	assert_string_equal(brk_kind_name(BRK_KIND_BUDGET), "budget");
	assert_string_equal(brk_kind_name(0), "unknown");
	assert_string_equal(brk_kind_name(4), "unknown");
	assert_string_equal(brk_kind_name(-1), "unknown");
}

static void monotonic_clock_never_goes_back(void **state)
{
	uint64_t a, b;
	int i;

	(void)state;
	a = brk_monotonic_ns(NULL);
	assert_true(a > 0);
	for (i = 0; i < 1000; i++) {
		b = brk_monotonic_ns(NULL);
		assert_true(b >= a);
		a = b;
	}
}

/* The default jitter source: a child forked after the parent has drawn
 * must not repeat the parent's next values (ident.c's generator once
 * kept the parent's state in the child). */
static void forked_child_draws_other_random_bits(void **state)
{
	struct brk_segment s;
	uint64_t mine[4], theirs[4];
	int fds[2], st, i;
	pid_t pid;

	(void)state;
	memset(&s, 0, sizeof(s)); /* s.random == NULL: the library's own */
	(void)brk__random(&s);    /* seeded in the parent */
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (i = 0; i < 4; i++)
			theirs[i] = brk__random(&s);
		_exit(write(fds[1], theirs, sizeof(theirs)) == sizeof(theirs) ? 0 : 1);
	}
	close(fds[1]);
	for (i = 0; i < 4; i++)
		mine[i] = brk__random(&s);
	assert_int_equal(read(fds[0], theirs, sizeof(theirs)), sizeof(theirs));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_memory_not_equal(mine, theirs, sizeof(mine));
}

/* Jitter from brk_backoff_ms() comes from the same generator: many draws
 * over a wide range are not all one value. */
static void backoff_uses_the_library_generator(void **state)
{
	uint64_t first, v;
	int i, differ = 0;

	(void)state;
	first = brk_backoff_ms(BRK_JITTER_FULL, 1, UINT64_MAX / 2, 62, 0,
			       NULL, NULL);
	for (i = 0; i < 16; i++) {
		v = brk_backoff_ms(BRK_JITTER_FULL, 1, UINT64_MAX / 2, 62, 0,
				   NULL, NULL);
		differ |= v != first;
		assert_true(v <= (1ULL << 62));
	}
	assert_true(differ);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shm_name_accepts_slash_and_1_to_254_bytes),
		cmocka_unit_test(shm_name_refuses_bad_input),
		cmocka_unit_test(shm_name_refuses_256_bytes_as_too_long),
		cmocka_unit_test(attach_uses_the_same_shm_name_rule),
		cmocka_unit_test(attach_accepts_the_longest_name_the_contract_allows),
		cmocka_unit_test(parse_uint_accepts_digits_of_the_base),
		cmocka_unit_test(parse_uint_refuses_bad_input_and_keeps_out),
		cmocka_unit_test(parse_uint_range_and_overflow),
		cmocka_unit_test(kind_names),
		cmocka_unit_test(monotonic_clock_never_goes_back),
		cmocka_unit_test(forked_child_draws_other_random_bits),
		cmocka_unit_test(backoff_uses_the_library_generator),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
