/*
 * test_core_fixes.c - regression tests of the breaker core's correctness
 * bugs (issue 9): tags that wrapped, a clock that stopped, a hung probe
 * kept, a reset that broke the bulkhead, slow probes that closed, a
 * counted probe release reported stale, and a segment of an older layout.
 *
 * Each test is named after the behaviour it holds. Fake clock, no sleep.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "internal.h"
#include "layout.h"
#include "fixture.h"

UT_GROUP_FIXTURES("corefix", 0)

#define SEC 1000ULL
#define HOUR (3600ULL * SEC)
#define YEAR (365ULL * 24 * HOUR)

/* One probe cycle of a breaker with open_ms = @open: cool, probe, report. */
static void probe_cycle(struct ut *u, brk_breaker *b, uint64_t open_ms,
			int outcome)
{
	brk_permit p;

	ut_advance_ms(u, open_ms);
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, outcome, outcome == BRK_FAILURE ?
			      BRK_REASON_SERVER_ERROR : BRK_REASON_NONE);
}

/* ---- 1. tags that wrap -------------------------------------------------- */

/*
 * 10-minute window, 50 %, min_calls 10, open 5 s: 8 calls with 4
 * failures, then 85 trip -> probe -> close cycles 7 s apart and one reset
 * (256 transitions, still inside the window): the old 8-bit generation
 * tag made the 8 calls count again, so 2 failures opened the breaker.
 */
static void window_ignores_data_256_generations_old(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	c.failure_threshold = 1000;
	c.failure_rate_pct = 50;
	c.window_ms = 600 * SEC;
	c.min_calls = 10;
	c.open_ms = 5 * SEC;
	c.max_open_ms = 5 * SEC;
	b = ut_breaker(u, "svc", &c);
	for (int k = 0; k < 8; k++)
		ut_call(b, k < 4 ? BRK_FAILURE : BRK_SUCCESS, BRK_REASON_TIMEOUT);
	for (int k = 0; k < 85; k++) {
		ut_rc(0, brk_trip(b, 5 * SEC));
		probe_cycle(u, b, 7 * SEC, BRK_SUCCESS);
		assert_int_equal(ut_state(b), BRK_CLOSED);
	}
	ut_rc(0, brk_reset(b));
	ut_info(b, &i);
	assert_int_equal(i.counters.transitions, 85 * 3);
	assert_int_equal(i.window_calls, 0);
	ut_fail_n(b, 2);
	ut_info(b, &i);
	assert_int_equal(i.window_calls, 2);
	assert_int_equal(i.state, BRK_CLOSED);
}

/*
 * Window 10 s (10 buckets of 1 s), min_calls 4, 50 %: 3 failures, then
 * nothing for 327,680 s (3.8 days, lcm(10, 2^16) bucket epochs: the old
 * 16-bit epoch tag of the same bucket came round), then 1 success: the 3
 * old failures must not count again.
 */
static void window_ignores_bucket_327680_epochs_old(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	c.failure_threshold = 1000;
	c.failure_rate_pct = 50;
	c.window_ms = 10 * SEC;
	c.min_calls = 4;
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 327680 * SEC);
	ut_call(b, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.window_calls, 1);
	assert_int_equal(i.window_failures, 0);
	assert_int_equal(i.state, BRK_CLOSED);
}

/*
 * failure_threshold 3: 2 failures, then 2^18 resets, then 1 failure. The
 * old 18-bit tag of the consecutive-failure count came round and the old
 * 2 counted again: one failure opened the breaker.
 */
static void consecutive_failures_not_revived_after_2_18_resets(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 2);
	for (uint32_t k = 0; k < (1u << 18); k++)
		if (brk_reset(b) != 0)
			fail_msg("reset %u failed", k);
	ut_fail_n(b, 1);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 1);
}

/*
 * success_threshold 3, open = max_open = 1 s: 2 probe successes, then
 * 2^17 failed probes (36 h of probing, 2^18 generations), then 1 probe
 * success. The old 18-bit tag of the half-open success count came round:
 * the breaker closed on 1 success of the current half-open period.
 */
static void half_open_successes_not_revived_after_2_18_generations(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	brk_permit p;

	ut_cfg(&c);
	c.open_ms = 1 * SEC;
	c.max_open_ms = 1 * SEC;
	c.success_threshold = 3;
	c.probe_timeout_ms = 10 * SEC;
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 1 * SEC);
	ut_call(b, BRK_SUCCESS, 0);
	ut_call(b, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.half_open_successes, 2);
	ut_call(b, BRK_FAILURE, BRK_REASON_TIMEOUT); /* -> open */
	for (uint32_t k = 1; k < (1u << 17); k++) {
		ut_advance_ms(u, 1 * SEC);
		if (brk_acquire(b, &p, NULL) != 0 ||
		    brk_release(&p, BRK_FAILURE, BRK_REASON_TIMEOUT, 0) != 0)
			fail_msg("probe %u", k);
	}
	ut_advance_ms(u, 1 * SEC);
	ut_call(b, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.half_open_successes, 1);
}

/* ---- 2. a clock that stops ---------------------------------------------- */

/*
 * At segment age @age_ms (fake clock set to creation + age): a trip of
 * 60 s refuses for exactly 60 s, a threshold open cools for open_ms, a
 * hung probe expires after probe_timeout_ms. The old 38-bit deadline
 * saturated after 8.7 years: brk_trip returned 0 and the next caller was
 * admitted at once.
 */
static void deadlines_hold_at_age(struct ut *u, uint64_t age_ns)
{
	struct brk_config c;
	struct brk_refusal why;
	struct brk_info i;
	brk_breaker *b;
	brk_permit p, q;

	ut_clock_set(&u->clk, UT_CLOCK_START_NS + age_ns);
	ut_cfg(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_trip(b, 60 * SEC));
	ut_rc(-EALREADY, brk_trip(b, 60 * SEC));
	memset(&why, 0, sizeof why);
	ut_rc(-BRK_EOPEN, brk_acquire(b, &p, &why));
	assert_true(why.wait_ms >= 60 * SEC);
	assert_int_equal(ut_open_remaining(b), 60 * SEC);
	ut_advance_ms(u, 60 * SEC - 1);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_advance_ms(u, 1);
	ut_acquire_ok(b, &p); /* the probe */
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_advance_ms(u, c.probe_timeout_ms - 1);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_advance_ms(u, 1);
	ut_rc(-BRK_EOPEN, brk_acquire(b, &q, NULL)); /* reclaims p: failed */
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.counters.reclaimed, 1);
	assert_int_equal(i.open_remaining_ms, 2 * c.open_ms);
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0));
	ut_advance_ms(u, 2 * c.open_ms);
	ut_call(b, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
	ut_fail_n(b, c.failure_threshold);
	assert_int_equal(ut_state(b), BRK_OPEN);
	assert_int_equal(ut_open_remaining(b), c.open_ms);

	/* the window at that age: old calls expire, current ones count */
	c.failure_threshold = 1000;
	c.failure_rate_pct = 50;
	c.window_ms = 10 * SEC;
	c.min_calls = 4;
	b = ut_breaker(u, "win", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 10 * SEC);
	ut_call(b, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.window_calls, 1);
	ut_call(b, BRK_SUCCESS, 0);
	ut_fail_n(b, 2);
	assert_int_equal(ut_state(b), BRK_OPEN);
}

static void deadlines_hold_at_segment_age_8_7_years(void **state)
{
	/* 2^38 ms (8.71 y) and a day more */
	deadlines_hold_at_age(*state, ((1ULL << 38) + 24 * HOUR) * UT_NS_PER_MS);
}

static void deadlines_hold_at_segment_age_100_years(void **state)
{
	deadlines_hold_at_age(*state, 100 * YEAR * UT_NS_PER_MS);
}

static void deadlines_hold_near_clock_end(void **state)
{
	/* the clock 10 minutes short of UINT64_MAX ns (584 years) */
	deadlines_hold_at_age(*state, UINT64_MAX - UT_CLOCK_START_NS -
					      600 * SEC * UT_NS_PER_MS);
}

/* ---- 3. a hung probe kept ----------------------------------------------- */

/*
 * half_open_probes 2, no daemon: probe A hangs past probe_timeout_ms;
 * the next acquire must reclaim it as a failed probe although slot 1 is
 * free. Before, B got slot 1, A never counted and B's success closed.
 */
static void expired_probe_reclaimed_while_other_slots_free(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	brk_permit a, p;

	ut_cfg(&c);
	c.half_open_probes = 2;
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, c.open_ms);
	ut_acquire_ok(b, &a);
	ut_advance_ms(u, c.probe_timeout_ms);
	ut_rc(-BRK_EOPEN, brk_acquire(b, &p, NULL));
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.counters.reclaimed, 1);
	assert_int_equal(i.cooling_level, 1);
	ut_rc(-BRK_ESTALE, brk_release(&a, BRK_SUCCESS, 0, 0));
}

/* ---- 4. reset breaks the bulkhead --------------------------------------- */

/*
 * max_concurrent 1, call A in flight: reset (and trip, force-open,
 * disable, reset again) never admits B beside A. A's late release is
 * stale and frees its slot; then B is admitted.
 */
static void reset_keeps_permit_in_flight_counted(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	brk_permit a, p;

	ut_cfg(&c);
	c.max_concurrent = 1;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &a);
	ut_rc(0, brk_reset(b));
	ut_rc(-BRK_EFULL, brk_acquire(b, &p, NULL));
	ut_rc(0, brk_trip(b, 1000));
	ut_rc(0, brk_set_mode(b, BRK_MODE_FORCED_OPEN));
	ut_rc(0, brk_set_mode(b, BRK_MODE_DISABLED));
	ut_rc(0, brk_reset(b));
	ut_rc(0, brk_breaker_configure(b, &c));
	ut_rc(-BRK_EFULL, brk_acquire(b, &p, NULL));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 1);
	ut_rc(-BRK_ESTALE, brk_release(&a, BRK_FAILURE, BRK_REASON_TIMEOUT, 0));
	ut_info(b, &i);
	assert_int_equal(i.in_flight, 0);
	assert_int_equal(i.consecutive_failures, 0);
	ut_acquire_ok(b, &p);
	ut_rc(-BRK_EFULL, ut_try(b));
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/*
 * max_concurrent 2 with A and B out, lowered to 1: A's release must not
 * let C in beside B (B holds a slot beyond the new bound).
 */
static void lowered_max_concurrent_counts_permits_beyond_it(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;
	brk_permit a, bb, p;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "svc", &c);
	ut_acquire_ok(b, &a);
	ut_acquire_ok(b, &bb);
	c.max_concurrent = 1;
	ut_rc(0, brk_breaker_configure(b, &c));
	ut_release_ok(&a, BRK_SUCCESS, 0);
	ut_rc(-BRK_EFULL, brk_acquire(b, &p, NULL));
	ut_release_ok(&bb, BRK_SUCCESS, 0);
	ut_acquire_ok(b, &p);
	ut_rc(-BRK_EFULL, ut_try(b));
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* ---- 5. slow probes ----------------------------------------------------- */

/*
 * slow_call_ms 100 (slow rate 50 %): a probe that reports success after
 * 200 ms is a failed probe: the breaker re-opens with the cooling level
 * raised instead of closing.
 */
static void slow_probe_counts_as_failed_probe(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	brk_permit p;

	ut_cfg(&c);
	c.slow_call_ms = 100;
	c.slow_rate_pct = 50;
	c.min_calls = 100;
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_trip(b, 1000));
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 200);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.cooling_level, 1);
	/* a fast probe still closes it */
	ut_advance_ms(u, i.open_remaining_ms);
	ut_acquire_ok(b, &p);
	ut_advance_ms(u, 99);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
}

/* ---- 6. -BRK_ESTALE after counting -------------------------------------- */

/*
 * The interleaving: probe A's release counts its success (the breaker
 * closes), and before A frees its probe slot another process trips the
 * breaker, it cools, and a new probe B takes A's slot. A's verdict was
 * counted, so its release must return 0 (it returned -BRK_ESTALE) and
 * must leave B's lease alone. The other process runs inside A's release
 * from A's clock: the first clock read after the breaker has closed.
 */
struct takeover {
	struct ut *u;
	brk_breaker *other;   /* the breaker through the other handle */
	brk_permit probe_b;
	int armed, fired, busy, rc_acquire;
};

static uint64_t takeover_clock(void *ctx)
{
	struct takeover *t = ctx;
	struct brk_info i;

	if (t->armed && !t->busy) {
		t->busy = 1;
		if (brk_breaker_info(t->other, &i) == 0 && i.state == BRK_CLOSED) {
			t->armed = 0;
			t->fired = 1;
			(void)brk_trip(t->other, 1000);
			ut_advance_ms(t->u, 1000);
			t->rc_acquire = brk_acquire(t->other, &t->probe_b, NULL);
		}
		t->busy = 0;
	}
	return ut_clock_fn(&t->u->clk);
}

static void counted_probe_release_returns_0_after_slot_taken_over(void **state)
{
	struct ut *u = *state;
	struct brk_attach_opts o;
	struct takeover t;
	struct brk_config c;
	struct brk_info i;
	brk_segment *hooked = NULL;
	brk_breaker *b;
	brk_permit a;

	memset(&t, 0, sizeof t);
	t.u = u;
	ut_cfg(&c);
	t.other = ut_breaker(u, "svc", &c);
	ut_opts(u, &o, 0);
	o.flags = BRK_ATTACH_NOCREATE;
	o.clock = takeover_clock;
	o.clock_ctx = &t;
	ut_rc(0, brk_attach(&o, &hooked));
	b = ut_breaker_on(hooked, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, c.open_ms);
	ut_acquire_ok(b, &a);
	t.armed = 1;
	ut_rc(0, brk_release(&a, BRK_SUCCESS, 0, 0));
	assert_true(t.fired);
	ut_rc(0, t.rc_acquire);
	ut_info(t.other, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);  /* B's, untouched */
	assert_int_equal(i.counters.successes, 1);
	assert_int_equal(i.counters.stale, 0);
	assert_int_equal(i.counters.reclaimed, 0);
	ut_release_ok(&t.probe_b, BRK_SUCCESS, 0);
	assert_int_equal(ut_state(t.other), BRK_CLOSED);
	brk_detach(hooked);
}

/*
 * The other order of the same race: a reclaimer (breakerd's scan) finds
 * probe A expired while A is counting its verdict. A's success is counted
 * once (A returns 0) and the reclaim counts no failed probe: one verdict
 * per probe. The scan runs from A's second clock read in its release
 * (the slow-call check of the verdict).
 */
struct judging_race {
	struct ut *u;
	brk_segment *other;
	struct brk_reclaim_stats st;
	int armed, reads, fired;
};

static uint64_t judging_clock(void *ctx)
{
	struct judging_race *t = ctx;

	if (t->armed && ++t->reads == 2) {
		t->armed = 0;
		t->fired = 1;
		ut_advance_ms(t->u, 5000); /* past probe_timeout_ms */
		(void)brk_reclaim(t->other, &t->st);
	}
	return ut_clock_fn(&t->u->clk);
}

static void reclaimed_judging_probe_counts_once(void **state)
{
	struct ut *u = *state;
	struct brk_attach_opts o;
	struct judging_race t;
	struct brk_config c;
	struct brk_info i;
	brk_segment *hooked = NULL;
	brk_breaker *b, *other;
	brk_permit a;

	memset(&t, 0, sizeof t);
	t.u = u;
	t.other = u->seg;
	ut_cfg(&c);
	c.success_threshold = 2;
	c.slow_call_ms = 3600 * SEC; /* on, but nothing here is that slow */
	c.slow_rate_pct = 100;
	c.min_calls = 1000;
	other = ut_breaker(u, "svc", &c);
	ut_opts(u, &o, 0);
	o.flags = BRK_ATTACH_NOCREATE;
	o.clock = judging_clock;
	o.clock_ctx = &t;
	ut_rc(0, brk_attach(&o, &hooked));
	b = ut_breaker_on(hooked, "svc", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, c.open_ms);
	ut_acquire_ok(b, &a);
	t.armed = 1;
	ut_rc(0, brk_release(&a, BRK_SUCCESS, 0, 0));
	assert_true(t.fired);
	assert_int_equal(t.st.expired_probe, 1);
	assert_int_equal(t.st.reopened, 0);
	ut_info(other, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.half_open_successes, 1);
	assert_int_equal(i.cooling_level, 0);
	assert_int_equal(i.counters.reclaimed, 1);
	assert_int_equal(i.counters.stale, 0);
	assert_int_equal(i.probes_in_flight, 0);
	ut_call(other, BRK_SUCCESS, 0); /* the second probe closes it */
	assert_int_equal(ut_state(other), BRK_CLOSED);
	brk_detach(hooked);
}

/* ---- layout version ----------------------------------------------------- */

/* A segment of layout version 1 (before issue 9) is refused, -EPROTO,
 * with a message that names both versions and says what to do. */
static void old_layout_segment_refused_with_what_to_do(void **state)
{
	struct ut *u = *state;
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	struct brk__header *h;
	char want[256];
	int fd;

	fd = shm_open(u->shm, O_RDWR, 0);
	assert_true(fd >= 0);
	h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(h != MAP_FAILED);
	close(fd);
	assert_int_equal(h->version, BRK__LAYOUT_VERSION);
	h->version = 1;
	ut_opts(u, &o, 0);
	o.flags = BRK_ATTACH_NOCREATE;
	u->err[0] = '\0';
	ut_rc(-EPROTO, brk_attach(&o, &s));
	assert_null(s);
	fprintf(stderr, "refusal: %s\n", u->err);
	snprintf(want, sizeof want, "layout version 1, this library speaks %u",
		 BRK__LAYOUT_VERSION);
	assert_non_null(strstr(u->err, want));
	assert_non_null(strstr(u->err, "older release"));
	snprintf(want, sizeof want, "rm /dev/shm%s", u->shm);
	assert_non_null(strstr(u->err, want));
	h->version = BRK__LAYOUT_VERSION;
	munmap(h, sizeof *h);
}

/* Rewrite the fixture's segment to layout @old and attach: refused,
 * -EPROTO, naming both versions and what to do; the version is put back. */
static void assert_layout_refused(struct ut *u, uint32_t old)
{
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	struct brk__header *h;
	char want[256];
	int fd;

	fd = shm_open(u->shm, O_RDWR, 0);
	assert_true(fd >= 0);
	h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(h != MAP_FAILED);
	close(fd);
	h->version = old;
	ut_opts(u, &o, 0);
	o.flags = BRK_ATTACH_NOCREATE;
	u->err[0] = '\0';
	ut_rc(-EPROTO, brk_attach(&o, &s));
	assert_null(s);
	snprintf(want, sizeof want, "layout version %u, this library speaks %u",
		 old, BRK__LAYOUT_VERSION);
	assert_non_null(strstr(u->err, want));
	assert_non_null(strstr(u->err, "stop every process using it"));
	h->version = BRK__LAYOUT_VERSION;
	munmap(h, sizeof *h);
}

/* Issue 21 made layout 4 (hold-and-probe cut words, implicit paces): a
 * layout-3 segment (a library before it would run the CUBIC rule on the
 * same words) is refused; and the other way round a layout-3 library
 * refuses this one by the same check. */
static void a_layout_3_segment_is_refused_after_issue_21(void **state)
{
	assert_int_equal(BRK__LAYOUT_VERSION, 5);
	assert_layout_refused(*state, 3);
}

/* Issue 25 made layout 5 (the permit block's control unit: the bulkhead
 * queue and the adaptive limit; pace reservations past tau): a layout-4
 * segment (a library before it would barge past the queue and heal the
 * reservations away) is refused; a layout-4 library refuses this one by
 * the same check. */
static void a_layout_4_segment_is_refused_after_issue_25(void **state)
{
	assert_int_equal(BRK__LAYOUT_VERSION, 5);
	assert_layout_refused(*state, 4);
}

/* ---- found by the spin model (tests/model) ------------------------------ */

/*
 * A caller that read the state word at generation g and was preempted
 * while the breaker moved on to g + 2 must not take a probe slot of
 * g + 2 (its owner would lose the lease and a second probe of g + 2
 * would get in): only free slots and slots of OLDER generations are
 * claimed. Model variant BUG_CLAIM_OTHER_GEN.
 */
static void probe_claim_never_takes_a_newer_generations_slot(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk__record *r;
	struct brk__slots set;
	brk_breaker *b;
	uint32_t g = 5, slot = 99;
	uint64_t newer = BRK__TOK_MAKE(4242, g + 2, 7);
	uint64_t older = BRK__TOK_MAKE(4242, g - 1, 8);

	ut_cfg(&c);
	b = ut_breaker(u, "claim/gen", &c);
	r = brk__brec(b);
	brk__probe_slots(u->seg, r, &set);
	uatomic_set(&r->probe0.owner, newer);
	assert_int_equal(brk__lease_claim(u->seg, brk__bidx(b), &set, 1, g, g, &slot), 0);
	assert_int_equal(uatomic_read(&r->probe0.owner), newer);
	uatomic_set(&r->probe0.owner, older);
	assert_int_not_equal(brk__lease_claim(u->seg, brk__bidx(b), &set, 1, g, g, &slot), 0);
	assert_int_equal(slot, 0);
	/* across the wrap of the 17-bit tag too */
	uatomic_set(&r->probe0.owner, BRK__TOK_MAKE(4242, 1, 9));
	assert_int_equal(brk__lease_claim(u->seg, brk__bidx(b), &set, 1, BRK__TOK_TAG_MASK,
					  BRK__TOK_TAG_MASK, &slot), 0);
	uatomic_set(&r->probe0.owner, 0);
}

/* brk_info.generation_full is the state word's whole 56-bit generation
 * (issue 22: info said only its low 32 bits); generation keeps those 32
 * for callers built before. Past 2^32 and near 2^56 it counts on. */
static void info_generation_reports_all_56_bits(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	struct brk__record *r;
	const uint64_t gens[] = { (1ULL << 32) - 1, (1ULL << 40) + 5,
				  (1ULL << 56) - 2 };

	ut_cfg(&c);
	b = ut_breaker(u, "gen56", &c);
	r = brk__brec(b);
	for (size_t k = 0; k < sizeof gens / sizeof gens[0]; k++) {
		uatomic_set(&r->state, BRK__ST_MAKE(BRK_CLOSED, 0, gens[k]));
		ut_info(b, &i);
		assert_int_equal(i.generation_full, gens[k]);
		assert_int_equal(i.generation, (uint32_t)gens[k]);
		ut_rc(0, brk_trip(b, 1000)); /* one transition: gen + 1 */
		ut_info(b, &i);
		assert_int_equal(i.generation_full, gens[k] + 1);
		ut_rc(0, brk_reset(b));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(info_generation_reports_all_56_bits),
		UT_TEST(window_ignores_data_256_generations_old),
		UT_TEST(window_ignores_bucket_327680_epochs_old),
		UT_TEST(consecutive_failures_not_revived_after_2_18_resets),
		UT_TEST(half_open_successes_not_revived_after_2_18_generations),
		UT_TEST(deadlines_hold_at_segment_age_8_7_years),
		UT_TEST(deadlines_hold_at_segment_age_100_years),
		UT_TEST(deadlines_hold_near_clock_end),
		UT_TEST(expired_probe_reclaimed_while_other_slots_free),
		UT_TEST(reset_keeps_permit_in_flight_counted),
		UT_TEST(lowered_max_concurrent_counts_permits_beyond_it),
		UT_TEST(slow_probe_counts_as_failed_probe),
		UT_TEST(counted_probe_release_returns_0_after_slot_taken_over),
		UT_TEST(reclaimed_judging_probe_counts_once),
		UT_TEST(old_layout_segment_refused_with_what_to_do),
		UT_TEST(a_layout_3_segment_is_refused_after_issue_21),
		UT_TEST(a_layout_4_segment_is_refused_after_issue_25),
		UT_TEST(probe_claim_never_takes_a_newer_generations_slot),
	};
	return cmocka_run_group_tests_name("core_fixes", tests, NULL, NULL);
}
