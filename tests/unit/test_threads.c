/*
 * test_threads.c - 8 pthreads on one breaker: counters add up exactly,
 * the bulkhead is never over-admitted, exactly half_open_probes probes
 * are admitted to threads racing at the same instant.
 *
 * ThreadSanitizer: the test itself is race-free. Shared test state is the
 * fake clock (atomic loads/stores), the random source (atomic add), the
 * holder counter (atomic add) and per-thread result slots read only after
 * pthread_join / pthread_barrier_wait (both synchronise). The library's
 * liburcu uatomic_* are inline asm that TSan does not see: reports inside
 * lib/ are the library's to suppress or fix, not this test's.
 */
#include <pthread.h>

#include "fixture.h"

UT_GROUP_FIXTURES("thr", 0)

#define NTHREADS 8
#define NOPS 100000

struct hammer {
	brk_breaker *b;
	pthread_barrier_t *start;
	unsigned ops;
	int *holders;     /* bulkhead test: callers inside at once */
	uint32_t limit;   /* bulkhead limit, 0: none */
	/* results, read after join */
	uint64_t ok, full, other, release_err, over_limit;
};

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;

	pthread_barrier_wait(h->start);
	for (unsigned k = 0; k < h->ops; k++) {
		brk_permit p;
		int rc = brk_acquire(h->b, &p, NULL);
		if (rc == -BRK_EFULL) {
			h->full++;
			continue;
		}
		if (rc != 0) {
			h->other++;
			continue;
		}
		h->ok++;
		if (h->holders) {
			int now = __atomic_add_fetch(h->holders, 1, __ATOMIC_ACQ_REL);
			if (h->limit && (uint32_t)now > h->limit)
				h->over_limit++;
			__atomic_sub_fetch(h->holders, 1, __ATOMIC_ACQ_REL);
		}
		if (brk_release(&p, BRK_SUCCESS, 0, 0) != 0)
			h->release_err++;
	}
	return NULL;
}

static void run_hammer(brk_breaker *b, unsigned ops, uint32_t limit,
		       struct hammer *h)
{
	pthread_t t[NTHREADS];
	pthread_barrier_t start;
	int holders = 0;

	assert_int_equal(pthread_barrier_init(&start, NULL, NTHREADS), 0);
	for (int k = 0; k < NTHREADS; k++) {
		memset(&h[k], 0, sizeof h[k]);
		h[k].b = b;
		h[k].start = &start;
		h[k].ops = ops;
		h[k].holders = limit ? &holders : NULL;
		h[k].limit = limit;
		assert_int_equal(pthread_create(&t[k], NULL, hammer_fn, &h[k]), 0);
	}
	for (int k = 0; k < NTHREADS; k++)
		assert_int_equal(pthread_join(t[k], NULL), 0);
	pthread_barrier_destroy(&start);
}

/* 8 x 100k acquire + release(success): allowed == successes == 800k. */
static void counters_add_up(void **state)
{
	struct ut *u = *state;
	struct hammer h[NTHREADS];
	struct brk_info i;
	brk_breaker *b = ut_breaker(u, "svc", NULL);
	uint64_t ok = 0, bad = 0;

	run_hammer(b, NOPS, 0, h);
	for (int k = 0; k < NTHREADS; k++) {
		ok += h[k].ok;
		bad += h[k].other + h[k].full + h[k].release_err;
	}
	assert_int_equal(bad, 0);
	assert_int_equal(ok, (uint64_t)NTHREADS * NOPS);
	ut_info(b, &i);
	assert_int_equal(i.counters.allowed, (uint64_t)NTHREADS * NOPS);
	assert_int_equal(i.counters.successes, (uint64_t)NTHREADS * NOPS);
	assert_int_equal(i.counters.failures, 0);
	assert_int_equal(i.counters.stale, 0);
	assert_int_equal(i.state, BRK_CLOSED);
}

/* Bulkhead of 4 under 8 threads: never more than 4 inside; every
 * attempt is either admitted or -BRK_EFULL; counters match. */
static void bulkhead_never_over_admits(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct hammer h[NTHREADS];
	struct brk_info i;
	brk_breaker *b;
	uint64_t ok = 0, full = 0, bad = 0, over = 0;
	const unsigned ops = NOPS / 4;

	ut_cfg(&c);
	c.max_concurrent = 4;
	b = ut_breaker(u, "svc", &c);
	run_hammer(b, ops, 4, h);
	for (int k = 0; k < NTHREADS; k++) {
		ok += h[k].ok;
		full += h[k].full;
		over += h[k].over_limit;
		bad += h[k].other + h[k].release_err;
	}
	assert_int_equal(bad, 0);
	assert_int_equal(over, 0);
	assert_int_equal(ok + full, (uint64_t)NTHREADS * ops);
	ut_info(b, &i);
	assert_int_equal(i.counters.allowed, ok);
	assert_int_equal(i.counters.rejected_full, full);
	assert_int_equal(i.counters.successes, ok);
	assert_int_equal(i.in_flight, 0);
	assert_int_equal(i.n_leases, 0);
}

/* ---- exactly N probes --------------------------------------------------- */

struct racer {
	brk_breaker *b;
	pthread_barrier_t *go, *done;
	unsigned rounds;
	/* per round: did this thread get a probe? written by the thread
	 * before the `done` barrier, read by main after it */
	int got[256];
	brk_permit p[256];
	int bad_rc;
};

static void *racer_fn(void *arg)
{
	struct racer *r = arg;

	for (unsigned k = 0; k < r->rounds; k++) {
		int rc;
		pthread_barrier_wait(r->go);
		rc = brk_acquire(r->b, &r->p[k], NULL);
		r->got[k] = rc == 0;
		if (rc != 0 && rc != -BRK_EOPEN)
			r->bad_rc = rc;
		pthread_barrier_wait(r->done);
	}
	return NULL;
}

static void exactly_n_probes(struct ut *u, uint32_t probes)
{
	struct brk_config c;
	struct brk_info i;
	struct racer r[NTHREADS];
	pthread_t t[NTHREADS];
	pthread_barrier_t go, done;
	brk_breaker *b;
	const unsigned rounds = 200;

	ut_cfg(&c);
	c.half_open_probes = probes;
	c.failure_threshold = 1;
	c.open_ms = 1000;
	c.max_open_ms = 1000;
	b = ut_breaker(u, "svc", &c);
	ut_call(b, BRK_FAILURE, 0);

	assert_int_equal(pthread_barrier_init(&go, NULL, NTHREADS + 1), 0);
	assert_int_equal(pthread_barrier_init(&done, NULL, NTHREADS + 1), 0);
	for (int k = 0; k < NTHREADS; k++) {
		memset(&r[k], 0, sizeof r[k]);
		r[k].b = b;
		r[k].go = &go;
		r[k].done = &done;
		r[k].rounds = rounds;
		assert_int_equal(pthread_create(&t[k], NULL, racer_fn, &r[k]), 0);
	}
	for (unsigned k = 0; k < rounds; k++) {
		unsigned admitted = 0;
		/* open, cooling over: the racers find it half-open-able */
		ut_advance_ms(u, 1000);
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&done);
		for (int j = 0; j < NTHREADS; j++)
			admitted += (unsigned)r[j].got[k];
		if (admitted != probes)
			fail_msg("round %u: %u probes admitted, want %u", k,
				 admitted, probes);
		ut_info(b, &i);
		assert_int_equal(i.state, BRK_HALF_OPEN);
		assert_int_equal(i.probes_in_flight, probes);
		/* every probe fails: open again for 1000 ms (capped) */
		for (int j = 0; j < NTHREADS; j++)
			if (r[j].got[k]) {
				int rc = brk_release(&r[j].p[k], BRK_FAILURE, 0, 0);
				/* the first failed probe re-opens; the others'
				 * verdicts belong to the same generation and may
				 * be counted or stale, never an error */
				assert_true(rc == 0 || rc == -BRK_ESTALE);
			}
		ut_info(b, &i);
		assert_int_equal(i.state, BRK_OPEN);
		assert_int_equal(i.probes_in_flight, 0);
	}
	for (int k = 0; k < NTHREADS; k++) {
		assert_int_equal(pthread_join(t[k], NULL), 0);
		assert_int_equal(r[k].bad_rc, 0);
	}
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&done);
	ut_info(b, &i);
	assert_int_equal(i.counters.probes, (uint64_t)rounds * probes);
}

static void exactly_one_probe(void **state) { exactly_n_probes(*state, 1); }
static void exactly_three_probes(void **state) { exactly_n_probes(*state, 3); }

/* Concurrent get-or-create of one name: one record (docs/design/segment.md
 * "The segment": "so
 * concurrent get-or-create of the same name from many processes yields
 * exactly one record"). A lost creation race must not burn a record slot:
 * with capacity 4 and 4 names, 8 racing threads must all succeed. */
#define RACE_NAMES 4
#define RACE_ROUNDS 200

struct getter {
	brk_segment *seg;
	pthread_barrier_t *start;
	int rc[RACE_ROUNDS][RACE_NAMES];
	uint32_t index[RACE_ROUNDS][RACE_NAMES];
	unsigned shift;
	unsigned rounds;
};

static void *getter_fn(void *arg)
{
	struct getter *g = arg;
	char name[32];

	for (unsigned r = 0; r < g->rounds; r++) {
		pthread_barrier_wait(g->start);
		for (unsigned k = 0; k < RACE_NAMES; k++) {
			unsigned n = (k + g->shift) % RACE_NAMES;
			brk_breaker *b = NULL;
			struct brk_info i;
			snprintf(name, sizeof name, "r%u/n%u", r, n);
			g->rc[r][n] = brk_breaker_get(g->seg, name, NULL, &b);
			g->index[r][n] = UINT32_MAX;
			if (g->rc[r][n] == 0 && brk_breaker_info(b, &i) == 0)
				g->index[r][n] = i.index;
		}
		pthread_barrier_wait(g->start);
	}
	return NULL;
}

/* Returns the number of bad results; *records receives the count. */
static unsigned race_creators(struct ut *u, unsigned rounds, uint32_t *records)
{
	struct getter *g = calloc(NTHREADS, sizeof *g);
	pthread_t t[NTHREADS];
	pthread_barrier_t start;
	brk_segment *segs[NTHREADS];
	unsigned bad = 0;

	assert_non_null(g);
	assert_int_equal(pthread_barrier_init(&start, NULL, NTHREADS + 1), 0);
	for (int k = 0; k < NTHREADS; k++) {
		/* half the threads share the main handle, half have their own
		 * (as another process would) */
#if defined(__SANITIZE_THREAD__)
		/* ThreadSanitizer cannot know that two mappings of one shm
		 * object alias, so synchronisation through the other mapping
		 * is invisible to it: under TSan all threads share one. */
		segs[k] = u->seg;
#else
		segs[k] = (k % 2) ? ut_attach_other(u, NULL) : u->seg;
#endif
		g[k].seg = segs[k];
		g[k].start = &start;
		g[k].shift = (unsigned)k;
		g[k].rounds = rounds;
		assert_int_equal(pthread_create(&t[k], NULL, getter_fn, &g[k]), 0);
	}
	for (unsigned r = 0; r < rounds; r++) {
		pthread_barrier_wait(&start); /* go */
		pthread_barrier_wait(&start); /* done */
	}
	for (int k = 0; k < NTHREADS; k++)
		assert_int_equal(pthread_join(t[k], NULL), 0);
	pthread_barrier_destroy(&start);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned n = 0; n < RACE_NAMES; n++)
			for (int k = 0; k < NTHREADS; k++) {
				if (g[k].rc[r][n] != 0 ||
				    g[k].index[r][n] != g[0].index[r][n]) {
					if (bad++ < 5)
						fprintf(stderr, "round %u name %u thread %d: "
							"rc %d (%s) index %u vs %u\n",
							r, n, k, g[k].rc[r][n],
							brk_strerror(g[k].rc[r][n]),
							g[k].index[r][n],
							g[0].index[r][n]);
				}
			}
	*records = brk_record_count(u->seg);
	if (*records != rounds * RACE_NAMES)
		fprintf(stderr, "%u names created, %u records allocated\n",
			rounds * RACE_NAMES, *records);
	for (int k = 0; k < NTHREADS; k++)
		if (segs[k] != u->seg)
			brk_detach(segs[k]);
	free(g);
	return bad;
}

/* Many rounds of racing creators: one record per name, every time. */
static void concurrent_get_one_record(void **state)
{
	uint32_t records;

	assert_int_equal(race_creators(*state, RACE_ROUNDS, &records), 0);
	assert_int_equal(records, RACE_ROUNDS * RACE_NAMES);
}

/* Capacity exactly the number of names: racing creators never see
 * -ENOSPC (a lost race must not consume a slot). 50 fresh segments. */
static void concurrent_get_full_capacity(void **state)
{
	unsigned failed = 0;

	(void)state;
	for (int k = 0; k < 50; k++) {
		struct ut *u = ut_new("threxact", RACE_NAMES, 0);
		uint32_t records;
		unsigned bad = race_creators(u, 1, &records);
		failed += bad != 0 || records != RACE_NAMES;
		ut_free(u);
	}
	if (failed)
		fprintf(stderr, "%u of 50 races burned a record slot\n", failed);
	assert_int_equal(failed, 0);
}

static int setup_big(void **state)
{
	*state = ut_new("thrbig", RACE_ROUNDS * RACE_NAMES, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(counters_add_up),
		UT_TEST(bulkhead_never_over_admits),
		UT_TEST(exactly_one_probe),
		UT_TEST(exactly_three_probes),
		cmocka_unit_test_setup_teardown(concurrent_get_one_record,
						setup_big, ut_teardown),
		cmocka_unit_test(concurrent_get_full_capacity),
	};
	return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
