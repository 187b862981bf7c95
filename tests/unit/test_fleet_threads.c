/*
 * test_fleet_threads.c - the fleet link's shared words under threads
 * (suite threads: run under TSan by tests/run-all.sh): readers of the
 * link status never see a torn copy while the link's writer reports,
 * and two threads applying decisions of different peers on one handle
 * each get their own origin in the event ring.
 */
#include <pthread.h>

#include "fixture.h"

UT_GROUP_FIXTURES("fleetthr", 64)

#define REPORTS 200000
#define TRIPS 300

struct shared {
	struct ut *u;
	int stop;
	unsigned long reads;
	int torn;
};

static void fill(struct brk_fleet_status *st, uint64_t n)
{
	unsigned k;

	memset(st, 0, sizeof(*st));
	st->state = BRK_FLEET_CONNECTED;
	snprintf(st->host_id, sizeof(st->host_id), "host-%llu", (unsigned long long)(n % 1000));
	strcpy(st->channel, "breakerd");
	st->published = st->received = st->applied = st->ignored = n;
	st->reconnects = st->probe_won = st->probe_lost = n;
	st->lag_ms = st->state_since_wall_ms = st->last_msg_wall_ms = n;
	for (k = 0; k < BRK_FLEET_DROP_COUNT; k++)
		brk_fleet_drops_add(st, (int)k, n);
	st->dropped = n * BRK_FLEET_DROP_COUNT;
}

/* A consistent copy: every counter is the same report's n. */
static int consistent(const struct brk_fleet_status *st)
{
	uint64_t n = st->published;
	char want[BRK_HOST_ID_MAX + 1];
	unsigned k;

	if (n == 0)
		return st->state == BRK_FLEET_OFF;
	snprintf(want, sizeof(want), "host-%llu", (unsigned long long)(n % 1000));
	if (st->received != n || st->applied != n || st->ignored != n ||
	    st->reconnects != n || st->probe_won != n || st->probe_lost != n ||
	    st->lag_ms != n || st->last_msg_wall_ms != n || st->dropped != n * BRK_FLEET_DROP_COUNT ||
	    strcmp(st->host_id, want) != 0 ||
	    st->state != BRK_FLEET_CONNECTED)
		return 0;
	for (k = 0; k < BRK_FLEET_DROP_COUNT; k++)
		if (brk_fleet_drops(st, (int)k) != n)
			return 0;
	return 1;
}

static void *reader(void *arg)
{
	struct shared *sh = arg;
	struct brk_fleet_status st;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		int rc = brk_fleet_status(sh->u->seg, &st);
		if (rc == -BRK_ECONTENDED)
			continue;
		if (rc != 0 || !consistent(&st))
			__atomic_store_n(&sh->torn, 1, __ATOMIC_RELEASE);
		__atomic_add_fetch(&sh->reads, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void status_readers_never_see_a_torn_report(void **state)
{
	struct ut *u = *state;
	struct shared sh = { .u = u };
	struct brk_fleet_status st;
	pthread_t r[2];
	uint64_t n;

	for (int k = 0; k < 2; k++)
		assert_int_equal(pthread_create(&r[k], NULL, reader, &sh), 0);
	for (n = 1; n <= REPORTS; n++) {
		fill(&st, n);
		ut_rc(0, brk_fleet_report(u->seg, &st));
	}
	__atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
	for (int k = 0; k < 2; k++)
		pthread_join(r[k], NULL);
	fprintf(stderr, "reads %lu torn %d\n", sh.reads, sh.torn);
	assert_int_equal(sh.torn, 0);
	assert_true(sh.reads > 0);
	ut_rc(0, brk_fleet_status(u->seg, &st));
	assert_int_equal(st.published, REPORTS);
}

struct applier {
	struct ut *u;
	const char *host;
	const char *name;
	int rc;
};

static void *apply(void *arg)
{
	struct applier *a = arg;
	struct brk_config c;
	brk_breaker *b = NULL;
	int k;

	ut_cfg(&c);
	a->rc = brk_breaker_get(a->u->seg, a->name, &c, &b);
	if (a->rc == 0)
		a->rc = brk_set_origin(a->u->seg, a->host);
	for (k = 0; k < TRIPS && a->rc == 0; k++) {
		a->rc = brk_trip_extend(b, 1000);
		if (a->rc == 0)
			a->rc = brk_reset(b);
	}
	return NULL;
}

static void two_threads_keep_their_own_origins(void **state)
{
	struct ut *u = *state;
	struct applier a[3] = {
		{ u, "peer-one", "thr/one", 0 },
		{ u, "peer-two", "thr/two", 0 },
		{ u, NULL, "thr/local", 0 },
	};
	static struct brk_event ev[4096];
	pthread_t t[3];
	uint64_t cur = 1, lost = 0;
	size_t n, k, seen[3] = { 0, 0, 0 };

	for (k = 0; k < 3; k++)
		assert_int_equal(pthread_create(&t[k], NULL, apply, &a[k]), 0);
	for (k = 0; k < 3; k++) {
		pthread_join(t[k], NULL);
		ut_rc(0, a[k].rc);
	}
	n = ut_events(u->seg, &cur, ev, 4096, &lost);
	assert_int_equal(lost, 0);
	for (k = 0; k < n; k++) {
		for (size_t j = 0; j < 3; j++) {
			if (strcmp(ev[k].name, a[j].name) != 0)
				continue;
			assert_string_equal(ev[k].origin, a[j].host ? a[j].host : "");
			seen[j]++;
		}
	}
	for (k = 0; k < 3; k++)
		assert_int_equal(seen[k], 2 * TRIPS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(status_readers_never_see_a_torn_report),
		UT_TEST(two_threads_keep_their_own_origins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
