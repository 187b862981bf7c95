/*
 * test_health.c - health states of a name and its subtree (breaker.h
 * "Health states"; docs/design/observability.md "Health states"), on the fake
 * clock: each state, the precedence, the subtree rule, since-when, one event
 * per transition whoever evaluates, the fallback flag, and a stored word that
 * is not to be trusted.
 */
#include <pthread.h>

#include "fixture_layout.h"

UT_GROUP_FIXTURES("health", 0)

static struct brk_health health_of(brk_segment *seg, const char *name)
{
	struct brk_health h;

	memset(&h, 0xa5, sizeof h);
	ut_rc(0, brk_health(seg, name, &h));
	assert_int_equal(h.size, sizeof h);
	return h;
}

static void assert_health(brk_segment *seg, const char *name, int state,
			  int code, const char *by)
{
	struct brk_health h = health_of(seg, name);

	if (h.state != state || h.code != code || strcmp(h.by, by) != 0)
		fprintf(stderr, "%s: %s %s by %s, want %s %s by %s\n", name,
			brk_health_state_name(h.state),
			brk_health_code_name(h.code), h.by,
			brk_health_state_name(state), brk_health_code_name(code),
			by);
	assert_int_equal(h.state, state);
	assert_int_equal(h.code, code);
	assert_string_equal(h.by, by);
}

/* The health events from *@cursor on: from -> to pairs into @from/@to. */
static size_t health_events(brk_segment *seg, uint64_t *cursor, int *from,
			    int *to, size_t max)
{
	struct brk_event ev[64];
	size_t n = ut_events(seg, cursor, ev, 64, NULL), k = 0, i;

	for (i = 0; i < n; i++) {
		if (ev[i].reason != BRK_EV_HEALTH)
			continue;
		assert_true(k < max);
		from[k] = ev[i].from;
		to[k] = ev[i].to;
		assert_string_equal(brk_event_reason_name(ev[i].reason), "health");
		k++;
	}
	return k;
}

static void release_retry_after(brk_breaker *b, int64_t ms)
{
	brk_permit p;

	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, ms));
}

static void live_when_nothing_refuses_and_since_counts(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_health h;

	ut_cfg(&c);
	ut_breaker(u, "svc", &c);
	assert_health(u->seg, "svc", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "svc");
	ut_advance_ms(u, 750);
	h = health_of(u->seg, "svc");
	assert_int_equal(h.since_age_ms, 750);
	assert_int_equal(h.children, 0);
	assert_string_equal(brk_health_state_name(BRK_HEALTH_LIVE), "live");
	assert_string_equal(brk_health_state_name(BRK_HEALTH_DELAYED), "delayed");
	assert_string_equal(brk_health_state_name(BRK_HEALTH_PARTIAL), "partial");
	assert_string_equal(brk_health_state_name(BRK_HEALTH_UNAVAILABLE), "unavailable");
	assert_string_equal(brk_health_state_name(BRK_HEALTH_FALLBACK), "fallback");
	assert_string_equal(brk_health_state_name(5), "unknown");
	assert_string_equal(brk_health_state_name(-1), "unknown");
	assert_string_equal(brk_health_code_name(BRK_HEALTH_CODE_PARTIAL), "PARTIAL");
	assert_string_equal(brk_health_code_name(1), "unknown");
}

/* Open -> unavailable, since the transition; past the deadline the next
 * caller probes: no longer unavailable. */
static void open_is_unavailable_since_it_opened(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_health h;
	brk_breaker *b;
	uint64_t cur = 1;
	int from[8], to[8];

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	health_of(u->seg, "svc");
	ut_fail_n(b, 3);
	ut_advance_ms(u, 200);
	h = health_of(u->seg, "svc");
	assert_int_equal(h.state, BRK_HEALTH_UNAVAILABLE);
	assert_int_equal(h.code, BRK_HEALTH_CODE_BREAKER_OPEN);
	assert_int_equal(h.since_age_ms, 0); /* noticed now: since now */
	ut_advance_ms(u, 300);
	assert_int_equal(health_of(u->seg, "svc").since_age_ms, 300);
	ut_advance_ms(u, 600); /* past open_ms 1000 */
	assert_health(u->seg, "svc", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "svc");
	assert_int_equal(health_events(u->seg, &cur, from, to, 8), 2);
	assert_int_equal(from[0], BRK_HEALTH_LIVE);
	assert_int_equal(to[0], BRK_HEALTH_UNAVAILABLE);
	assert_int_equal(from[1], BRK_HEALTH_UNAVAILABLE);
	assert_int_equal(to[1], BRK_HEALTH_LIVE);
}

static void ancestor_open_makes_name_unavailable(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *pay;

	ut_cfg(&c);
	pay = ut_breaker(u, "pay", &c);
	ut_breaker(u, "pay/eu", &c);
	ut_breaker(u, "pay/eu/card", &c);
	ut_rc(0, brk_trip(pay, 5000));
	assert_health(u->seg, "pay/eu/card", BRK_HEALTH_UNAVAILABLE,
		      BRK_HEALTH_CODE_BREAKER_OPEN, "pay");
	assert_health(u->seg, "pay", BRK_HEALTH_UNAVAILABLE,
		      BRK_HEALTH_CODE_BREAKER_OPEN, "pay");
	ut_rc(0, brk_reset(pay));
	assert_health(u->seg, "pay/eu/card", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO,
		      "pay/eu/card");
}

/* A child open (NAME/... or NAME:...) -> partial; "payments" is not in
 * the subtree of "pay". */
static void child_open_is_partial(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_health h;
	brk_breaker *card, *other;
	brk_bucket *k;

	ut_cfg(&c);
	ut_breaker(u, "pay", &c);
	ut_breaker(u, "pay/eu", &c);
	card = ut_breaker(u, "pay:card", &c);
	other = ut_breaker(u, "payments", &c);
	ut_rc(0, brk_bucket_get(u->seg, "pay/eu:rl", 10.0, 5, &k));
	ut_rc(0, brk_trip(other, 5000));
	h = health_of(u->seg, "pay");
	assert_int_equal(h.state, BRK_HEALTH_LIVE);
	assert_int_equal(h.children, 3); /* pay/eu, pay:card, pay/eu:rl */
	assert_int_equal(h.children_unavailable, 0);
	ut_rc(0, brk_trip(card, 5000));
	h = health_of(u->seg, "pay");
	assert_int_equal(h.state, BRK_HEALTH_PARTIAL);
	assert_int_equal(h.code, BRK_HEALTH_CODE_PARTIAL);
	assert_string_equal(h.by, "pay:card");
	assert_int_equal(h.children_unavailable, 1);
	/* the sibling is not affected */
	assert_health(u->seg, "pay/eu", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "pay/eu");
}

/* A shared cool-until on NAME or an ancestor -> delayed. */
static void cooling_is_delayed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *api;

	ut_cfg(&c);
	c.failure_threshold = 100;
	api = ut_breaker(u, "api", &c);
	ut_breaker(u, "api/v1", &c);
	release_retry_after(api, 2000);
	assert_health(u->seg, "api", BRK_HEALTH_DELAYED, BRK_HEALTH_CODE_COOLING, "api");
	assert_health(u->seg, "api/v1", BRK_HEALTH_DELAYED, BRK_HEALTH_CODE_COOLING,
		      "api");
	ut_advance_ms(u, 2001);
	assert_health(u->seg, "api/v1", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "api/v1");
}

/* fallback > unavailable > partial > delayed > live. */
static void precedence_holds(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *a, *ab;

	ut_cfg(&c);
	c.failure_threshold = 100;
	a = ut_breaker(u, "a", &c);
	ab = ut_breaker(u, "a/b", &c);
	release_retry_after(a, 5000);
	ut_rc(0, brk_trip(ab, 5000));
	/* a cooling (delayed) and a child open (partial): partial */
	assert_health(u->seg, "a", BRK_HEALTH_PARTIAL, BRK_HEALTH_CODE_PARTIAL, "a/b");
	/* a/b itself: open beats its ancestor's cooling */
	assert_health(u->seg, "a/b", BRK_HEALTH_UNAVAILABLE,
		      BRK_HEALTH_CODE_BREAKER_OPEN, "a/b");
	ut_rc(0, brk_trip(a, 5000));
	assert_health(u->seg, "a", BRK_HEALTH_UNAVAILABLE,
		      BRK_HEALTH_CODE_BREAKER_OPEN, "a");
	ut_rc(0, brk_set_fallback(u->seg, "a", 1));
	assert_health(u->seg, "a", BRK_HEALTH_FALLBACK, BRK_HEALTH_CODE_FALLBACK, "a");
	/* the flag is NAME's own: a/b is still unavailable, by "a" */
	assert_health(u->seg, "a/b", BRK_HEALTH_UNAVAILABLE,
		      BRK_HEALTH_CODE_BREAKER_OPEN, "a");
}

/* Fallback wins, is recorded at once (one event), clears back. */
static void fallback_wins_and_clears(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;
	brk_bucket *k;
	uint64_t cur;
	int from[8], to[8];

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_trip(b, 60000));
	health_of(u->seg, "svc");
	cur = ut_events_written(u->seg) + 1;
	ut_rc(0, brk_set_fallback(u->seg, "svc", 1));
	ut_rc(-EALREADY, brk_set_fallback(u->seg, "svc", 1));
	assert_int_equal(health_events(u->seg, &cur, from, to, 8), 1);
	assert_int_equal(from[0], BRK_HEALTH_UNAVAILABLE);
	assert_int_equal(to[0], BRK_HEALTH_FALLBACK);
	ut_advance_ms(u, 40);
	assert_int_equal(health_of(u->seg, "svc").since_age_ms, 40);
	ut_rc(0, brk_set_fallback(u->seg, "svc", 0));
	ut_rc(-EALREADY, brk_set_fallback(u->seg, "svc", 0));
	assert_health(u->seg, "svc", BRK_HEALTH_UNAVAILABLE,
		      BRK_HEALTH_CODE_BREAKER_OPEN, "svc");
	assert_int_equal(health_events(u->seg, &cur, from, to, 8), 1);
	assert_int_equal(from[0], BRK_HEALTH_FALLBACK);
	assert_int_equal(to[0], BRK_HEALTH_UNAVAILABLE);
	/* the flag lives on a breaker */
	ut_rc(0, brk_bucket_get(u->seg, "rl", 10.0, 5, &k));
	ut_rc(-EMEDIUMTYPE, brk_set_fallback(u->seg, "rl", 1));
	ut_rc(-ENOENT, brk_set_fallback(u->seg, "nope", 1));
	ut_rc(-EINVAL, brk_set_fallback(u->seg, "bad name", 1));
	ut_rc(-EINVAL, brk_set_fallback(NULL, "svc", 1));
}

/* Two handles ("two processes") evaluate the same transitions many times:
 * exactly one event per transition. */
static void one_event_per_transition_whoever_evaluates(void **state)
{
	struct ut *u = *state;
	struct ut_rand r2 = { 99 };
	brk_segment *other = ut_attach_other(u, &r2);
	struct brk_config c;
	brk_breaker *b;
	uint64_t cur;
	int from[16], to[16], i;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_breaker(u, "svc/x", &c);
	cur = ut_events_written(u->seg) + 1;
	for (i = 0; i < 5; i++) {
		health_of(u->seg, "svc");
		health_of(other, "svc");
	}
	ut_rc(0, brk_trip(b, 1000));
	for (i = 0; i < 5; i++) {
		health_of(other, "svc");
		health_of(u->seg, "svc");
	}
	ut_advance_ms(u, 1001);
	for (i = 0; i < 5; i++) {
		health_of(u->seg, "svc");
		health_of(other, "svc");
	}
	/* svc/x is evaluated too but never changes: no event of its own */
	health_of(other, "svc/x");
	assert_int_equal(health_events(u->seg, &cur, from, to, 16), 2);
	assert_int_equal(to[0], BRK_HEALTH_UNAVAILABLE);
	assert_int_equal(to[1], BRK_HEALTH_LIVE);
	brk_detach(other);
}

static void unknown_name_is_enoent(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_health h;

	ut_cfg(&c);
	ut_breaker(u, "pay", &c);
	ut_rc(-ENOENT, brk_health(u->seg, "nope", &h));
	ut_rc(-ENOENT, brk_health(u->seg, "pa", &h)); /* a prefix is no subtree */
	ut_rc(-ENOENT, brk_health(u->seg, "pay/eu", &h)); /* an ancestor alone */
	ut_rc(-EINVAL, brk_health(u->seg, "", &h));
	ut_rc(-EINVAL, brk_health(u->seg, "a//b", &h));
	ut_rc(-EINVAL, brk_health(u->seg, NULL, &h));
	ut_rc(-EINVAL, brk_health(NULL, "pay", &h));
	ut_rc(-EINVAL, brk_health_sz(u->seg, "pay", &h, 3));
}

/* A name with no breaker record of its own: computed, never stored. */
static void group_name_is_computed_only(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_health h;
	brk_breaker *b;
	uint64_t before;

	ut_cfg(&c);
	b = ut_breaker(u, "grp/a", &c);
	ut_breaker(u, "grp/b", &c);
	h = health_of(u->seg, "grp");
	assert_int_equal(h.state, BRK_HEALTH_LIVE);
	assert_int_equal(h.children, 2);
	assert_true(h.since_age_ms == UINT64_MAX);
	ut_rc(0, brk_trip(b, 5000));
	before = ut_events_written(u->seg);
	assert_health(u->seg, "grp", BRK_HEALTH_PARTIAL, BRK_HEALTH_CODE_PARTIAL, "grp/a");
	assert_int_equal(ut_events_written(u->seg), before);
	ut_rc(-ENOENT, brk_set_fallback(u->seg, "grp", 1));
}

/* A stored word that fails validation is recomputed, not trusted. */
static void corrupt_stored_word_is_recomputed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_health h;
	struct brk_segment_info si;
	struct brk__record *r;
	uint64_t *win, before;
	uint8_t *arena;
	void *map;
	size_t len;

	ut_cfg(&c);
	ut_breaker(u, "svc", &c);
	health_of(u->seg, "svc");
	r = ut_record_at(u, "svc", BRK_KIND_BREAKER, &map, &len);
	assert_int_equal(brk_segment_info(u->seg, &si), 0);
	arena = (uint8_t *)map + brk__arena_offset(si.capacity);
	assert_true(BRK__XR_WINDOW(r->ext_refs) != 0); /* allocated on first use */
	win = (uint64_t *)(void *)(arena + (uint64_t)BRK__XR_WINDOW(r->ext_refs) * BRK__UNIT);
	assert_int_equal(BRK__HW_STATE(win[BRK__WIN_HEALTH]), BRK_HEALTH_LIVE);

	/* an unknown state: recomputed, since now, no event */
	ut_advance_ms(u, 100);
	win[BRK__WIN_HEALTH] = BRK__HW_MAKE(15, 0, 1);
	before = ut_events_written(u->seg);
	h = health_of(u->seg, "svc");
	assert_int_equal(h.state, BRK_HEALTH_LIVE);
	assert_int_equal(h.since_age_ms, 0);
	assert_int_equal(ut_events_written(u->seg), before);
	assert_int_equal(BRK__HW_STATE(win[BRK__WIN_HEALTH]), BRK_HEALTH_LIVE);

	/* "unavailable since the future" is not believed either */
	win[BRK__WIN_HEALTH] = BRK__HW_MAKE(BRK_HEALTH_UNAVAILABLE,
					    BRK_HEALTH_CODE_BREAKER_OPEN,
					    BRK__HW_SINCE_MASK);
	assert_health(u->seg, "svc", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "svc");
	/* an unknown code */
	win[BRK__WIN_HEALTH] = BRK__HW_MAKE(BRK_HEALTH_LIVE, 77, 1);
	assert_health(u->seg, "svc", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "svc");
	assert_int_equal(BRK__HW_CODE(win[BRK__WIN_HEALTH]), BRK_HEALTH_CODE_GO);
	/* a fallback word with stray bits reads as off */
	win[BRK__WIN_FALLBACK] = BRK__FB_ON | (1ULL << 60) | 1u;
	assert_health(u->seg, "svc", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "svc");
	win[BRK__WIN_FALLBACK] = BRK__FB_ON | 1u;
	assert_health(u->seg, "svc", BRK_HEALTH_FALLBACK, BRK_HEALTH_CODE_FALLBACK, "svc");
	assert_int_equal(ut_events_written(u->seg), before + 1);
	munmap(map, len);
}

/* A read-only handle computes: no block, no stored word, no event. */
static void readonly_only_computes(void **state)
{
	struct ut *u = *state;
	brk_segment *ro = ut_attach_clock(u, NULL, 1);
	struct brk_config c;
	struct brk_info i1, i2;
	struct brk_health h;
	brk_breaker *b;
	uint64_t before;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_info(b, &i1);
	ut_rc(0, brk_trip(b, 5000));
	before = ut_events_written(u->seg);
	h = health_of(ro, "svc");
	assert_int_equal(h.state, BRK_HEALTH_UNAVAILABLE);
	assert_true(h.since_age_ms == UINT64_MAX);
	ut_info(b, &i2);
	assert_int_equal(i2.record_bytes, i1.record_bytes); /* no block */
	assert_int_equal(ut_events_written(u->seg), before);
	ut_rc(-EROFS, brk_set_fallback(ro, "svc", 1));
	/* once a writer recorded it, the reader sees the same since */
	health_of(u->seg, "svc");
	ut_advance_ms(u, 25);
	assert_int_equal(health_of(ro, "svc").since_age_ms, 25);
	brk_detach(ro);
}

/* Half-open with every probe busy -> unavailable; a free probe slot, or
 * forced states that refuse nothing, are not. */
static void probes_busy_and_forced_states(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;
	brk_permit p;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_rc(0, brk_trip(b, 1000));
	ut_advance_ms(u, 1001);
	ut_acquire_ok(b, &p); /* the probe */
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	assert_health(u->seg, "svc", BRK_HEALTH_UNAVAILABLE,
		      BRK_HEALTH_CODE_BREAKER_OPEN, "svc");
	ut_advance_ms(u, 5001); /* older than probe_timeout: the next caller
	                           reclaims it */
	assert_health(u->seg, "svc", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "svc");
	{
		int rc = brk_release(&p, BRK_CANCELLED, 0, 0);
		assert_true(rc == 0 || rc == -BRK_ESTALE);
	}
	ut_rc(0, brk_reset(b));
	ut_rc(0, brk_set_mode(b, BRK_MODE_FORCED_OPEN));
	assert_health(u->seg, "svc", BRK_HEALTH_UNAVAILABLE,
		      BRK_HEALTH_CODE_BREAKER_OPEN, "svc");
	ut_rc(0, brk_trip(b, 5000));
	ut_rc(0, brk_set_mode(b, BRK_MODE_DISABLED));
	assert_health(u->seg, "svc", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "svc");
}

/* A paced bucket of the subtree refused a take in the last second while
 * its learned rate is below its ceiling -> delayed (RATE_LIMITED); at the
 * ceiling, or a second after the last refusal, it is not. */
static void paced_below_demand_is_delayed(void **state)
{
	struct ut *u = *state;
	struct brk_pace_config pc;
	struct brk_config c;
	brk_bucket *k;
	uint64_t taken = 0, nb = 0, first = 0;
	int rc, i;

	ut_cfg(&c);
	ut_breaker(u, "up", &c);
	brk_pace_config_init(&pc);
	pc.ceiling_per_s = 10.0;
	ut_rc(0, brk_pace_get(u->seg, "up:pace", &pc, &k));
	/* refused at the ceiling: the caller's own limit, not delayed */
	for (i = 0, rc = 0; i < 10 && rc == 0; i++)
		rc = brk_pace_take(k, BRK_PRIORITY_NORMAL, i ? &taken : &first, &nb);
	ut_rc(-BRK_ENOTOKENS, rc);
	assert_health(u->seg, "up", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "up");
	/* a 429: the rate is cut below the ceiling; the next refusal counts */
	ut_rc(1, brk_pace_report(k, first, BRK_PACE_LIMITED, 0));
	ut_advance_ms(u, 1);
	for (i = 0, rc = 0; i < 10 && rc == 0; i++)
		rc = brk_pace_take(k, BRK_PRIORITY_NORMAL, &taken, &nb);
	ut_rc(-BRK_ENOTOKENS, rc);
	assert_health(u->seg, "up", BRK_HEALTH_DELAYED, BRK_HEALTH_CODE_RATE_LIMITED,
		      "up:pace");
	/* the pace's own name is its subtree too */
	assert_health(u->seg, "up:pace", BRK_HEALTH_DELAYED,
		      BRK_HEALTH_CODE_RATE_LIMITED, "up:pace");
	ut_advance_ms(u, 1000); /* no refusal for a second: live again */
	assert_health(u->seg, "up", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "up");
}

/* The handle caches a subtree's membership while the name index is
 * unchanged: a record created or retired afterwards is seen at once, and
 * states are always read live. */
static void cached_subtree_follows_creates_and_retires(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_health h;
	brk_breaker *a, *z;
	int i;

	ut_cfg(&c);
	a = ut_breaker(u, "grp/a", &c);
	for (i = 0; i < 3; i++) /* cached after the first */
		assert_int_equal(health_of(u->seg, "grp").children, 1);
	ut_rc(0, brk_trip(a, 5000)); /* a state change: no index change */
	assert_health(u->seg, "grp", BRK_HEALTH_PARTIAL, BRK_HEALTH_CODE_PARTIAL, "grp/a");
	ut_rc(0, brk_reset(a));
	assert_health(u->seg, "grp", BRK_HEALTH_LIVE, BRK_HEALTH_CODE_GO, "grp");
	z = ut_breaker(u, "grp:z", &c); /* created: the walk again */
	ut_rc(0, brk_trip(z, 5000));
	h = health_of(u->seg, "grp");
	assert_int_equal(h.children, 2);
	assert_int_equal(h.state, BRK_HEALTH_PARTIAL);
	assert_string_equal(h.by, "grp:z");
	ut_rc(0, brk_reset(z));
	ut_rc(0, brk_retire(u->seg, "grp:z", 0)); /* retired: gone from it */
	h = health_of(u->seg, "grp");
	assert_int_equal(h.children, 1);
	/* more names than the cache holds: each still right */
	for (i = 0; i < 20; i++) {
		char nm[32];
		snprintf(nm, sizeof nm, "n%d/x", i);
		ut_breaker(u, nm, &c);
	}
	for (i = 0; i < 40; i++) {
		char nm[32];
		snprintf(nm, sizeof nm, "n%d", i % 20);
		assert_int_equal(health_of(u->seg, nm).children, 1);
	}
	assert_int_equal(health_of(u->seg, "grp").children, 1);
}

/* Evaluators read the clock at slightly different moments: a since a
 * little ahead of ours is another evaluator's, not corruption (no second
 * event, the word kept). */
static void clock_skew_between_evaluators_is_no_corruption(void **state)
{
	struct ut *u = *state;
	struct ut_clock behind;
	brk_segment *other;
	struct brk_config c;
	struct brk_health h;
	brk_breaker *b;
	uint64_t before;

	ut_advance_ms(u, 5000); /* both clocks past the segment's epoch */
	behind.ns = ut_now_ns(u) - 500 * UT_NS_PER_MS;
	other = ut_attach_clock(u, &behind, 0);
	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	health_of(u->seg, "svc");
	ut_rc(0, brk_trip(b, 60000));
	assert_health(u->seg, "svc", BRK_HEALTH_UNAVAILABLE,
		      BRK_HEALTH_CODE_BREAKER_OPEN, "svc");
	before = ut_events_written(u->seg);
	h = health_of(other, "svc");
	assert_int_equal(h.state, BRK_HEALTH_UNAVAILABLE);
	assert_int_equal(h.since_age_ms, 0);
	assert_int_equal(ut_events_written(u->seg), before);
	ut_advance_ms(u, 10);
	assert_int_equal(health_of(u->seg, "svc").since_age_ms, 10); /* kept */
	brk_detach(other);
}

/* Threads of one process share a handle (and its subtree cache) while
 * another thread creates records: every answer is whole and right. */
struct hthread {
	brk_segment *seg;
	int bad;
};

static void *health_thread(void *arg)
{
	struct hthread *t = arg;
	struct brk_health h;
	int i;

	for (i = 0; i < 300; i++) {
		if (brk_health(t->seg, "th", &h) != 0 || h.children < 4 ||
		    h.children > 4 + 40 || h.state != BRK_HEALTH_LIVE)
			__atomic_add_fetch(&t->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void threads_share_the_subtree_cache(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct hthread t = { u->seg, 0 };
	pthread_t th[4];
	char nm[32];
	int i;

	ut_cfg(&c);
	ut_breaker(u, "th", &c);
	for (i = 0; i < 4; i++) {
		snprintf(nm, sizeof nm, "th/base%d", i);
		ut_breaker(u, nm, &c);
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, health_thread, &t), 0);
	for (i = 0; i < 40; i++) { /* index changes under the readers */
		snprintf(nm, sizeof nm, "th/new%d", i);
		ut_breaker(u, nm, &c);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(t.bad, 0);
	assert_int_equal(health_of(u->seg, "th").children, 44);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(live_when_nothing_refuses_and_since_counts),
		UT_TEST(open_is_unavailable_since_it_opened),
		UT_TEST(ancestor_open_makes_name_unavailable),
		UT_TEST(child_open_is_partial),
		UT_TEST(cooling_is_delayed),
		UT_TEST(precedence_holds),
		UT_TEST(fallback_wins_and_clears),
		UT_TEST(one_event_per_transition_whoever_evaluates),
		UT_TEST(unknown_name_is_enoent),
		UT_TEST(group_name_is_computed_only),
		UT_TEST(corrupt_stored_word_is_recomputed),
		UT_TEST(readonly_only_computes),
		UT_TEST(probes_busy_and_forced_states),
		UT_TEST(paced_below_demand_is_delayed),
		UT_TEST(cached_subtree_follows_creates_and_retires),
		UT_TEST(clock_skew_between_evaluators_is_no_corruption),
		UT_TEST(threads_share_the_subtree_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
