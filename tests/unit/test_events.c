/*
 * test_events.c - every transition is appended to the segment's event
 * ring, in order (seq, name, from, to, reason, value); the reader reports
 * exactly how many wanted events were overwritten.
 */
#include "layout.h"
#include "fixture.h"

UT_GROUP_FIXTURES("ev", 0)

struct want {
	int from, to, reason;
	uint64_t value; /* UINT64_MAX: any */
};

static void check_events(const struct brk_event *ev, size_t n,
			 const struct want *w, size_t nw, const char *name,
			 uint64_t first_seq)
{
	for (size_t k = 0; k < n && k < nw; k++)
		if (ev[k].from != w[k].from || ev[k].to != w[k].to ||
		    ev[k].reason != w[k].reason ||
		    (w[k].value != UINT64_MAX && ev[k].value != w[k].value))
			fprintf(stderr, "event %zu: %s %s->%s value %" PRIu64
				", want %s %s->%s value %" PRIu64 "\n", k,
				brk_event_reason_name(ev[k].reason),
				brk_state_name(ev[k].from), brk_state_name(ev[k].to),
				ev[k].value, brk_event_reason_name(w[k].reason),
				brk_state_name(w[k].from), brk_state_name(w[k].to),
				w[k].value);
	assert_int_equal(n, nw);
	for (size_t k = 0; k < n; k++) {
		assert_int_equal(ev[k].seq, first_seq + k);
		assert_string_equal(ev[k].name, name);
		assert_int_equal(ev[k].pid, getpid());
		assert_int_equal(ev[k].from, w[k].from);
		assert_int_equal(ev[k].to, w[k].to);
		assert_int_equal(ev[k].reason, w[k].reason);
		if (w[k].value != UINT64_MAX)
			assert_int_equal(ev[k].value, w[k].value);
	}
}

/* The whole life of a breaker, in order. */
static void transitions_in_order(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	struct brk_event ev[64];
	brk_permit p;
	brk_breaker *b;
	uint64_t cur = 1, lost = 99, t_open;
	size_t n;
	const struct want w[] = {
		{ BRK_CLOSED, BRK_OPEN, BRK_EV_THRESHOLD, 1000 },
		{ BRK_OPEN, BRK_HALF_OPEN, BRK_EV_COOLED, UINT64_MAX },
		{ BRK_HALF_OPEN, BRK_OPEN, BRK_EV_PROBE_FAILED, 2000 },
		{ BRK_OPEN, BRK_HALF_OPEN, BRK_EV_COOLED, UINT64_MAX },
		{ BRK_HALF_OPEN, BRK_CLOSED, BRK_EV_PROBE_OK, UINT64_MAX },
		{ BRK_CLOSED, BRK_OPEN, BRK_EV_TRIP, 7000 },
		{ BRK_OPEN, BRK_CLOSED, BRK_EV_RESET, UINT64_MAX },
		{ BRK_CLOSED, BRK_OPEN, BRK_EV_RETRY_AFTER, 400000 },
		{ BRK_OPEN, BRK_CLOSED, BRK_EV_RESET, UINT64_MAX },
		{ BRK_CLOSED, BRK_CLOSED, BRK_EV_COOL_UNTIL, UINT64_MAX },
	};

	ut_cfg(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "life/one", &c);
	assert_int_equal(ut_events_written(u->seg), 0);
	assert_int_equal(brk_events_read(u->seg, &cur, ev, 64, &lost), 0);
	assert_int_equal(lost, 0);
	assert_int_equal(cur, 1);

	ut_advance_ms(u, 10);
	t_open = ut_clock_get(&u->clk);
	ut_fail_n(b, 3);                                    /* threshold */
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);                               /* cooled */
	ut_release_ok(&p, BRK_FAILURE, 0);                  /* probe failed */
	ut_advance_ms(u, 2000);
	ut_acquire_ok(b, &p);                               /* cooled */
	ut_release_ok(&p, BRK_SUCCESS, 0);                  /* probe ok */
	ut_rc(0, brk_trip(b, 7000));                        /* trip */
	ut_rc(-EALREADY, brk_trip(b, 9000));                /* nothing */
	ut_rc(0, brk_reset(b));                             /* reset */
	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 400000));
	ut_rc(0, brk_reset(b));                             /* reset */
	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 9000));

	n = ut_events(u->seg, &cur, ev, 64, &lost);
	check_events(ev, n, w, sizeof w / sizeof w[0], "life/one", 1);
	assert_int_equal(lost, 0);
	assert_int_equal(cur, n + 1);
	assert_int_equal(ev[0].mono_ns, t_open);
	assert_true(ev[0].wall_ms > 1600000000000ULL); /* after 2020 */
	for (size_t k = 1; k < n; k++)
		assert_true(ev[k].mono_ns >= ev[k - 1].mono_ns);
	assert_int_equal(ut_events_written(u->seg), n);

	/* counters.transitions counts the events with from != to */
	ut_info(b, &i);
	assert_int_equal(i.counters.transitions, 9);

	/* nothing more to read; a second reader from 1 sees the same */
	assert_int_equal(brk_events_read(u->seg, &cur, ev, 64, &lost), 0);
	assert_int_equal(lost, 0);
	cur = 1;
	assert_int_equal(brk_events_read(u->seg, &cur, ev, 3, &lost), 3);
	assert_int_equal(cur, 4);
	assert_int_equal(ev[2].reason, BRK_EV_PROBE_FAILED);
	assert_int_equal(brk_events_read(u->seg, &cur, ev, 0, &lost), 0);
	assert_int_equal(cur, 4);
}

/* A reclaimed probe is recorded (RECLAIM_TIMEOUT) and re-opens. */
static void reclaim_recorded(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_event ev[16];
	brk_permit p;
	brk_breaker *b;
	uint64_t cur;
	size_t n;
	int saw_reclaim = 0, saw_reopen = 0;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);
	cur = ut_events_written(u->seg) + 1;
	ut_advance_ms(u, 5001);
	ut_rc(-BRK_EOPEN, ut_try(b));
	n = ut_events(u->seg, &cur, ev, 16, NULL);
	for (size_t k = 0; k < n; k++) {
		if (ev[k].reason == BRK_EV_RECLAIM_TIMEOUT)
			saw_reclaim = 1;
		if (ev[k].from == BRK_HALF_OPEN && ev[k].to == BRK_OPEN)
			saw_reopen = 1;
		assert_string_equal(ev[k].name, "svc");
	}
	assert_true(saw_reclaim);
	assert_true(saw_reopen);
	(void)p;
}

/* Events are shared: another handle reads what this one wrote. */
static void events_shared_across_handles(void **state)
{
	struct ut *u = *state;
	brk_segment *other = ut_attach_other(u, NULL);
	struct brk_event ev[4];
	uint64_t cur = 1;

	ut_rc(0, brk_trip(ut_breaker(u, "svc", NULL), 1000));
	assert_int_equal(ut_events(other, &cur, ev, 4, NULL), 1);
	assert_int_equal(ev[0].reason, BRK_EV_TRIP);
	assert_string_equal(ev[0].name, "svc");
	brk_detach(other);
}

/* Overrun: more than the ring's slots written; reading from cursor 1
 * reports exactly the overwritten ones as lost, then the rest in order. */
static void ring_overrun_lost_exact(void **state)
{
	struct ut *u = *state;
	brk_breaker *b = ut_breaker(u, "svc", NULL);
	const uint64_t slots = BRK__EVENT_SLOTS;
	const unsigned loops = (unsigned)slots / 2 + 500; /* 2 events each */
	struct brk_event *ev = calloc(slots + 16, sizeof *ev);
	uint64_t cur = 1, lost = 0, written;
	size_t n;

	assert_non_null(ev);
	for (unsigned k = 0; k < loops; k++) {
		ut_rc(0, brk_trip(b, 1000));
		ut_rc(0, brk_reset(b));
	}
	written = ut_events_written(u->seg);
	assert_int_equal(written, 2ULL * loops);

	n = ut_events(u->seg, &cur, ev, slots + 16, &lost);
	assert_int_equal(lost, written - slots);
	assert_int_equal(n, slots);
	assert_int_equal(ev[0].seq, written - slots + 1);
	for (size_t k = 0; k < n; k++) {
		assert_int_equal(ev[k].seq, written - slots + 1 + k);
		assert_int_equal(ev[k].reason,
				 (ev[k].seq % 2) ? BRK_EV_TRIP : BRK_EV_RESET);
	}
	assert_int_equal(cur, written + 1);

	/* in chunks: the first call reports the loss once */
	cur = 1;
	lost = 0;
	{
		uint64_t l2 = 12345;
		int got = brk_events_read(u->seg, &cur, ev, 100, &l2);
		assert_int_equal(got, 100);
		assert_int_equal(l2, written - slots);
		assert_int_equal(ev[0].seq, written - slots + 1);
		got = brk_events_read(u->seg, &cur, ev, 100, &l2);
		assert_int_equal(got, 100);
		assert_int_equal(l2, 0);
	}

	/* a cursor in the middle of the lost range */
	cur = 1000;
	n = ut_events(u->seg, &cur, ev, slots + 16, &lost);
	assert_int_equal(lost, written - slots - 999);
	assert_int_equal(n, slots);

	/* a cursor past the head: nothing, nothing lost */
	cur = written + 50;
	assert_int_equal(brk_events_read(u->seg, &cur, ev, 10, &lost), 0);
	assert_int_equal(lost, 0);
	free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(transitions_in_order),
		UT_TEST(reclaim_recorded),
		UT_TEST(events_shared_across_handles),
		UT_TEST(ring_overrun_lost_exact),
	};
	return cmocka_run_group_tests_name("events", tests, NULL, NULL);
}
