/*
 * test_retire_threads.c - several threads share one handle while its
 * record is retired again and again (suite threads: run under TSan by
 * tests/run-all.sh). The handle's refresh is atomic loads and stores and
 * one CAS of the view pointer: no data race, every call either counts
 * into a live record of the name or is told its release was stale, and a
 * bulkhead permit taken before a retirement always releases (the record
 * is never retired under it).
 */
#include <pthread.h>

#include "fixture.h"

UT_GROUP_FIXTURES("rthr", 4096)

#define NTHREADS 4
#define NOPS 20000

struct worker {
	brk_breaker *b;
	pthread_barrier_t *start;
	int *stop;
	uint64_t ok, stale, contended, other, release_err;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned k;

	pthread_barrier_wait(w->start);
	for (k = 0; k < NOPS; k++) {
		brk_permit p;
		int rc = brk_acquire(w->b, &p, NULL);

		if (rc == -BRK_EFULL)
			continue;
		if (rc == -BRK_ECONTENDED) {
			/* the record was retired and made anew under each of
			 * the call's re-resolutions (breaker.h brk_acquire():
			 * "a few times, then -BRK_ECONTENDED"): an answer, rare */
			w->contended++;
			continue;
		}
		if (rc != 0) {
			if (!w->other++)
				fprintf(stderr, "acquire: %d %s\n", rc, brk_strerror(rc));
			continue;
		}
		w->ok++;
		rc = brk_release(&p, BRK_SUCCESS, 0, 0);
		if (rc == -BRK_ESTALE)
			w->stale++;
		else if (rc != 0)
			w->release_err++;
	}
	return NULL;
}

static void run(struct ut *u, const char *name, const struct brk_config *c)
{
	brk_breaker *b = ut_breaker(u, name, c);
	struct worker w[NTHREADS];
	pthread_t t[NTHREADS];
	pthread_barrier_t start;
	struct brk_info i;
	uint64_t ok = 0, contended = 0;
	int stop = 0, retired = 0, k, rc;

	pthread_barrier_init(&start, NULL, NTHREADS + 1);
	for (k = 0; k < NTHREADS; k++) {
		memset(&w[k], 0, sizeof w[k]);
		w[k].b = b;
		w[k].start = &start;
		w[k].stop = &stop;
		pthread_create(&t[k], NULL, worker_fn, &w[k]);
	}
	pthread_barrier_wait(&start);
	/* at least 400 tries, and on until one succeeds (with a bulkhead the
	 * threads may hold a permit at every one of the first 400) */
	for (k = 0; k < 400 || (retired == 0 && k < 1000000); k++) {
		rc = brk_retire(u->seg, name, 0);
		assert_true(rc == 0 || rc == -EBUSY || rc == -ENOENT);
		retired += rc == 0;
		if (k % 8 == 0)
			sched_yield();
	}
	for (k = 0; k < NTHREADS; k++) {
		pthread_join(t[k], NULL);
		assert_int_equal(w[k].other, 0);
		assert_int_equal(w[k].release_err, 0);
		ok += w[k].ok;
		contended += w[k].contended;
	}
	pthread_barrier_destroy(&start);
	assert_true(retired > 0);
	/* at most 1 % of the calls (seen under ASan: a few of 80,000) */
	assert_true(contended * 100u <= (uint64_t)NTHREADS * NOPS);
	ut_info(b, &i); /* the handle resolves to a live record */
	assert_string_equal(i.name, name);
	assert_true(i.counters.allowed <= ok);
	assert_int_equal(i.in_flight, 0);
}

static void threads_share_a_handle_across_retirements(void **state)
{
	run(*state, "plain", NULL);
}

static void permits_taken_before_a_retirement_release(void **state)
{
	struct brk_config c;

	brk_config_init(&c);
	c.max_concurrent = 2;
	run(*state, "bulk", &c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(threads_share_a_handle_across_retirements),
		UT_TEST(permits_taken_before_a_retirement_release),
	};
	return cmocka_run_group_tests_name("retire_threads", tests, NULL, NULL);
}
