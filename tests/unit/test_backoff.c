/*
 * test_backoff.c - exponential backoff with jitter (Brooker, AWS 2015):
 * bounds for every attempt 0..2000 and UINT32_MAX with extreme bases,
 * caps and random words; the mean of each jitter over 100k samples
 * against its formula; the internal generator (and its reseeding in a
 * fork()ed child); names.
 */
#include <sys/wait.h>

#include "fixture.h"

static uint64_t const_fn(void *ctx)
{
	return *(uint64_t *)ctx;
}

/* min(cap, base * 2^attempt) computed independently (128-bit). */
static uint64_t expect_v(uint64_t base, uint64_t cap, uint32_t attempt)
{
	unsigned __int128 v;

	if (base == 0)
		return 0;
	if (attempt >= 64)
		return cap;
	v = (unsigned __int128)base << attempt;
	return v > cap ? cap : (uint64_t)v;
}

static void check_one(int jitter, uint64_t base, uint64_t cap, uint32_t att,
		      uint64_t prev, brk_random_fn fn, void *ctx)
{
	uint64_t r = brk_backoff_ms(jitter, base, cap, att, prev, fn, ctx);
	uint64_t v = expect_v(base, cap, att);

	if (r > cap)
		fprintf(stderr, "jitter %d base %" PRIu64 " cap %" PRIu64
			" attempt %u prev %" PRIu64 ": %" PRIu64 "\n", jitter,
			base, cap, att, prev, r);
	assert_true(r <= cap);
	if (cap <= (uint64_t)INT64_MAX)
		assert_true((int64_t)r >= 0);
	switch (jitter) {
	case BRK_JITTER_FULL:
		assert_true(r <= v);
		break;
	case BRK_JITTER_DECORRELATED: {
		uint64_t p = prev ? prev : base;
		unsigned __int128 hi = (unsigned __int128)p * 3;
		uint64_t lo = base < cap ? base : cap;

		if (hi < base)
			hi = base;
		if (hi > cap)
			hi = cap;
		assert_true(r >= lo);
		assert_true(r <= (uint64_t)hi);
		break;
	}
	default: /* equal, and unknown values treated as equal */
		assert_true(r >= v / 2);
		assert_true(r <= v);
		break;
	}
}

static void backoff_stays_within_base_and_cap(void **state)
{
	const int jitters[] = { BRK_JITTER_EQUAL, BRK_JITTER_FULL,
				BRK_JITTER_DECORRELATED, 7, -1 };
	const uint64_t bases[] = { 0, 1, 3, 100, 1000, 1ULL << 40,
				   UINT64_MAX / 3, UINT64_MAX };
	const uint64_t caps[] = { 0, 1, 1000, 30000, 1ULL << 62, UINT64_MAX };
	uint64_t words[] = { 0, UINT64_MAX, 1ULL << 63 };
	uint64_t seed = 42;
	size_t j, b, c, w;
	uint32_t a;

	(void)state;
	for (j = 0; j < 5; j++)
		for (b = 0; b < 8; b++)
			for (c = 0; c < 6; c++) {
				const uint64_t prevs[] = { 0, 1, bases[b], caps[c],
							   UINT64_MAX };
				for (a = 0; a <= 2001; a++) {
					uint32_t att = a == 2001 ? UINT32_MAX : a;
					size_t p = a % 5;

					check_one(jitters[j], bases[b], caps[c], att,
						  prevs[p], ut_random_fn, &seed);
					w = a % 3;
					check_one(jitters[j], bases[b], caps[c], att,
						  prevs[p], const_fn, &words[w]);
				}
				check_one(jitters[j], bases[b], caps[c],
					  UINT32_MAX - 1, UINT64_MAX, NULL, NULL);
			}
	/* the extremes of the random word reach both ends */
	assert_int_equal(brk_backoff_ms(BRK_JITTER_FULL, 100, 10000, 3, 0,
					const_fn, &words[0]), 0);
	assert_int_equal(brk_backoff_ms(BRK_JITTER_FULL, 100, 10000, 3, 0,
					const_fn, &words[1]), 800);
	assert_int_equal(brk_backoff_ms(BRK_JITTER_EQUAL, 100, 10000, 3, 0,
					const_fn, &words[0]), 400);
	assert_int_equal(brk_backoff_ms(BRK_JITTER_EQUAL, 100, 10000, 3, 0,
					const_fn, &words[1]), 800);
	assert_int_equal(brk_backoff_ms(BRK_JITTER_EQUAL, 100, 10000, 2000, 0,
					const_fn, &words[1]), 10000);
	assert_int_equal(brk_backoff_ms(BRK_JITTER_EQUAL, 100, 10000,
					UINT32_MAX, 0, const_fn, &words[0]), 5000);
	assert_int_equal(brk_backoff_ms(BRK_JITTER_DECORRELATED, 100, 10000, 0,
					0, const_fn, &words[0]), 100);
	assert_int_equal(brk_backoff_ms(BRK_JITTER_DECORRELATED, 100, 10000, 0,
					0, const_fn, &words[1]), 300);
	assert_int_equal(brk_backoff_ms(BRK_JITTER_DECORRELATED, 100, 10000, 0,
					UINT64_MAX, const_fn, &words[1]), 10000);
	/* 3 * prev below base: base */
	assert_int_equal(brk_backoff_ms(BRK_JITTER_DECORRELATED, 100, 10000, 0,
					10, const_fn, &words[1]), 100);
	/* base above cap */
	assert_int_equal(brk_backoff_ms(BRK_JITTER_DECORRELATED, 500, 100, 0,
					0, const_fn, &words[0]), 100);
	assert_int_equal(brk_backoff_ms(BRK_JITTER_FULL, 500, 100, 0, 0,
					const_fn, &words[1]), 100);
}

#define SAMPLES 100000

static double mean_of(int jitter, uint64_t base, uint64_t cap, uint32_t att,
		      uint64_t prev, brk_random_fn fn, void *ctx)
{
	double sum = 0;
	int i;

	for (i = 0; i < SAMPLES; i++)
		sum += (double)brk_backoff_ms(jitter, base, cap, att, prev, fn, ctx);
	return sum / SAMPLES;
}

static void near(double got, double want, const char *what)
{
	double err = fabs(got - want) / want;

	if (err > 0.05)
		fprintf(stderr, "%s: mean %.2f, want %.2f (%.1f%%)\n", what, got,
			want, err * 100);
	assert_true(err <= 0.05);
}

/* E[min(cap, U)] for U uniform over the integers lo..hi, exactly. */
static double capped_uniform_mean(uint64_t lo, uint64_t hi, uint64_t cap)
{
	double s = 0;
	uint64_t u;

	for (u = lo; u <= hi; u++)
		s += (double)(u < cap ? u : cap);
	return s / (double)(hi - lo + 1);
}

static void means(brk_random_fn fn, void *ctx)
{
	/* v = 100 * 2^4 = 1600, below the cap */
	near(mean_of(BRK_JITTER_FULL, 100, 30000, 4, 0, fn, ctx), 800.0, "full");
	near(mean_of(BRK_JITTER_EQUAL, 100, 30000, 4, 0, fn, ctx), 1200.0,
	     "equal");
	/* capped: v = cap = 30000 */
	near(mean_of(BRK_JITTER_FULL, 100, 30000, 12, 0, fn, ctx), 15000.0,
	     "full capped");
	near(mean_of(BRK_JITTER_EQUAL, 100, 30000, 12, 0, fn, ctx), 22500.0,
	     "equal capped");
	/* decorrelated, prev = base (or 0): uniform base..3 base, mean 2 base */
	near(mean_of(BRK_JITTER_DECORRELATED, 100, 30000, 0, 100, fn, ctx),
	     200.0, "decorrelated prev=base");
	near(mean_of(BRK_JITTER_DECORRELATED, 100, 30000, 0, 0, fn, ctx),
	     200.0, "decorrelated prev=0");
	/* prev = 1000: uniform 100..3000, mean 1550; capped at 2000 */
	near(mean_of(BRK_JITTER_DECORRELATED, 100, 30000, 0, 1000, fn, ctx),
	     1550.0, "decorrelated prev=1000");
	near(mean_of(BRK_JITTER_DECORRELATED, 100, 2000, 0, 1000, fn, ctx),
	     capped_uniform_mean(100, 3000, 2000), "decorrelated capped");
}

static void backoff_means_match_each_jitter_with_a_seeded_source(void **state)
{
	uint64_t seed = 7;

	(void)state;
	means(ut_random_fn, &seed);
}

static void backoff_means_match_each_jitter_with_the_library_source(void **state)
{
	(void)state;
	means(NULL, NULL);
}

static void decorrelated_backoff_at_most_triples_the_previous(void **state)
{
	uint64_t seed = 99, prev = 0, r;
	int i;

	(void)state;
	for (i = 0; i < 10000; i++) {
		r = brk_backoff_ms(BRK_JITTER_DECORRELATED, 10, 5000, (uint32_t)i,
				   prev, ut_random_fn, &seed);
		assert_true(r >= 10 && r <= 5000);
		assert_true(r <= (prev ? prev : 10) * 3);
		prev = r;
	}
}

static void same_seed_same_backoff_unknown_jitter_is_equal(void **state)
{
	uint64_t s1 = 5, s2 = 5, s3 = 5;
	int i;

	(void)state;
	for (i = 0; i < 100; i++) {
		uint64_t a = brk_backoff_ms(BRK_JITTER_EQUAL, 50, 9000,
					    (uint32_t)i, 0, ut_random_fn, &s1);
		uint64_t b = brk_backoff_ms(BRK_JITTER_EQUAL, 50, 9000,
					    (uint32_t)i, 0, ut_random_fn, &s2);
		uint64_t c = brk_backoff_ms(12345, 50, 9000, (uint32_t)i, 0,
					    ut_random_fn, &s3);
		assert_int_equal(a, b);
		assert_int_equal(a, c);
	}
}

/* A fork()ed child must not draw the same jitter as its parent. */
static void forked_child_draws_other_backoff_jitter(void **state)
{
	int fds[2], same = 0, round, status;

	(void)state;
	for (round = 0; round < 4; round++) {
		uint64_t mine, theirs = 0;
		pid_t pid;

		(void)brk_backoff_ms(BRK_JITTER_FULL, 1, UINT64_MAX, 62, 0,
				     NULL, NULL); /* seeded */
		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			uint64_t v = brk_backoff_ms(BRK_JITTER_FULL, 1, UINT64_MAX,
						    62, 0, NULL, NULL);
			_exit(write(fds[1], &v, sizeof v) == sizeof v ? 0 : 1);
		}
		mine = brk_backoff_ms(BRK_JITTER_FULL, 1, UINT64_MAX, 62, 0,
				      NULL, NULL);
		assert_int_equal(read(fds[0], &theirs, sizeof theirs),
				 sizeof theirs);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		close(fds[0]);
		close(fds[1]);
		same += mine == theirs;
	}
	assert_int_equal(same, 0);
}

static void jitter_names_round_trip_and_unknown_is_einval(void **state)
{
	(void)state;
	assert_string_equal(brk_jitter_name(BRK_JITTER_EQUAL), "equal");
	assert_string_equal(brk_jitter_name(BRK_JITTER_FULL), "full");
	assert_string_equal(brk_jitter_name(BRK_JITTER_DECORRELATED),
			    "decorrelated");
	assert_string_equal(brk_jitter_name(9), "unknown");
	assert_int_equal(brk_jitter_parse("equal"), BRK_JITTER_EQUAL);
	assert_int_equal(brk_jitter_parse("full"), BRK_JITTER_FULL);
	assert_int_equal(brk_jitter_parse("decorrelated"),
			 BRK_JITTER_DECORRELATED);
	assert_int_equal(brk_jitter_parse("Full"), -EINVAL);
	assert_int_equal(brk_jitter_parse(""), -EINVAL);
	assert_int_equal(brk_jitter_parse(NULL), -EINVAL);
	assert_int_equal(BRK_JITTER_EQUAL, 0); /* zeroed config = default */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(backoff_stays_within_base_and_cap),
		cmocka_unit_test(backoff_means_match_each_jitter_with_a_seeded_source),
		cmocka_unit_test(backoff_means_match_each_jitter_with_the_library_source),
		cmocka_unit_test(decorrelated_backoff_at_most_triples_the_previous),
		cmocka_unit_test(same_seed_same_backoff_unknown_jitter_is_equal),
		cmocka_unit_test(forked_child_draws_other_backoff_jitter),
		cmocka_unit_test(jitter_names_round_trip_and_unknown_is_einval),
	};
	return cmocka_run_group_tests_name("backoff", tests, NULL, NULL);
}
