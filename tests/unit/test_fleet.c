/*
 * test_fleet.c - the library side of the fleet link (breaker.h "Fleet
 * link") on the fake clock: host ids, the origin of events (peer table,
 * per thread and handle, a reused or corrupt slot reads "?"),
 * brk_trip_extend() from every state, brk_cool_for() never lowering,
 * brk_pace_cut() clamping, and the link status area (round trip,
 * BRK_EV_FLEET_LINK on a state change, hostile words -> -BRK_ECORRUPT,
 * a dead writer reads OFF).
 */
#include <sys/wait.h>

#include "fixture_layout.h"

UT_GROUP_FIXTURES("fleet", 64)

/* The segment's header, mapped a second time, writable (munmap 4096). */
static struct brk__header *hdr_map(struct ut *u)
{
	int fd = shm_open(u->shm, O_RDWR, 0);
	void *m;

	assert_true(fd >= 0);
	m = mmap(NULL, BRK__HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(m != MAP_FAILED);
	return m;
}

/* The last event written, read by a VER1 caller. */
static struct brk_event last_event(struct ut *u)
{
	struct brk_event ev;
	uint64_t cur = ut_events_written(u->seg);

	assert_true(cur > 0);
	assert_int_equal(brk_events_read(u->seg, &cur, &ev, 1, NULL), 1);
	return ev;
}

static void host_ids_are_validated(void **state)
{
	char id[BRK_HOST_ID_MAX + 2];

	(void)state;
	ut_rc(0, brk_host_id_validate("web-1.example_pod"));
	ut_rc(0, brk_host_id_validate("A"));
	ut_rc(-EINVAL, brk_host_id_validate(NULL));
	ut_rc(-EINVAL, brk_host_id_validate(""));
	ut_rc(-EINVAL, brk_host_id_validate("web 1"));
	ut_rc(-EINVAL, brk_host_id_validate("web/1"));
	ut_rc(-EINVAL, brk_host_id_validate("h\xc3\xa9"));
	memset(id, 'h', sizeof(id));
	id[BRK_HOST_ID_MAX] = '\0';
	ut_rc(0, brk_host_id_validate(id));
	id[BRK_HOST_ID_MAX] = 'h';
	id[BRK_HOST_ID_MAX + 1] = '\0';
	ut_rc(-ENAMETOOLONG, brk_host_id_validate(id));
}

static void origin_round_trips_through_the_event_ring(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_event ev;
	brk_segment *other;
	brk_breaker *b, *b2;

	ut_cfg(&c);
	b = ut_breaker(u, "svc/a", &c);
	ut_rc(0, brk_trip(b, 5000));
	ev = last_event(u);
	assert_string_equal(ev.origin, "");

	ut_rc(0, brk_set_origin(u->seg, "host-b"));
	ut_rc(0, brk_reset(b));
	ev = last_event(u);
	assert_int_equal(ev.reason, BRK_EV_RESET);
	assert_string_equal(ev.origin, "host-b");
	assert_string_equal(ev.name, "svc/a");

	/* another handle on the same thread is unaffected */
	other = ut_attach_other(u, NULL);
	b2 = ut_breaker_on(other, "svc/a", &c);
	ut_rc(0, brk_trip(b2, 5000));
	ev = last_event(u);
	assert_string_equal(ev.origin, "");

	/* the same id again takes the same slot; another id another */
	ut_rc(0, brk_set_origin(u->seg, "host-c"));
	ut_rc(0, brk_reset(b));
	assert_string_equal(last_event(u).origin, "host-c");
	ut_rc(0, brk_set_origin(u->seg, "host-b"));
	ut_rc(0, brk_trip(b, 10));
	assert_string_equal(last_event(u).origin, "host-b");

	/* NULL and "": this host's own again */
	ut_rc(0, brk_set_origin(u->seg, NULL));
	ut_rc(0, brk_reset(b));
	assert_string_equal(last_event(u).origin, "");
	ut_rc(0, brk_set_origin(u->seg, "host-b"));
	ut_rc(0, brk_set_origin(u->seg, ""));
	ut_rc(0, brk_trip(b, 10));
	assert_string_equal(last_event(u).origin, "");

	/* bad input changes nothing */
	ut_rc(-EINVAL, brk_set_origin(NULL, "host-b"));
	ut_rc(-EINVAL, brk_set_origin(u->seg, "bad id"));
	ut_rc(0, brk_reset(b));
	assert_string_equal(last_event(u).origin, "");
	brk_detach(other);
}

/* A handle with an origin that is detached takes its origin along: a
 * new handle (maybe at the same address) starts local. */
static void detach_forgets_the_threads_origin(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_segment *other;
	brk_breaker *b;
	int k;

	ut_cfg(&c);
	for (k = 0; k < 20; k++) { /* more handles than the thread's table */
		other = ut_attach_other(u, NULL);
		ut_rc(0, brk_set_origin(other, "peer"));
		brk_detach(other);
	}
	other = ut_attach_other(u, NULL);
	b = ut_breaker_on(other, "svc/d", &c);
	ut_rc(0, brk_trip(b, 100));
	assert_string_equal(last_event(u).origin, "");
	brk_detach(other);
}

static void a_reused_peer_slot_reads_a_question_mark(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_event ev[2];
	uint64_t cur;
	brk_breaker *b;
	char id[32];
	unsigned k;

	ut_cfg(&c);
	b = ut_breaker(u, "svc/r", &c);
	ut_rc(0, brk_set_origin(u->seg, "first"));
	ut_rc(0, brk_trip(b, 100));
	cur = ut_events_written(u->seg);
	/* BRK_FLEET_PEERS other hosts, each named later: "first" is the
	 * least recently named and its slot is reused */
	for (k = 0; k < BRK_FLEET_PEERS; k++) {
		ut_advance_ms(u, 1);
		snprintf(id, sizeof(id), "peer-%u", k);
		ut_rc(0, brk_set_origin(u->seg, id));
	}
	ut_rc(0, brk_reset(b));
	assert_int_equal(brk_events_read(u->seg, &cur, ev, 2, NULL), 2);
	assert_int_equal(ev[0].reason, BRK_EV_TRIP);
	assert_string_equal(ev[0].origin, "?");
	assert_int_equal(ev[1].reason, BRK_EV_RESET);
	assert_string_equal(ev[1].origin, id);
}

static void a_corrupt_origin_reads_a_question_mark(void **state)
{
	struct ut *u = *state;
	struct brk__header *h = hdr_map(u);
	struct brk__event *evs;
	struct brk_config c;
	struct brk_event ev;
	brk_breaker *b;
	uint64_t seq, cur;
	void *map;
	size_t len;
	uint64_t *w;

	ut_cfg(&c);
	b = ut_breaker(u, "svc/x", &c);
	ut_rc(0, brk_set_origin(u->seg, "host-x"));
	ut_rc(0, brk_trip(b, 100));
	seq = ut_events_written(u->seg);
	/* the whole segment, mapped a second time */
	w = ut_record_ext(u, "svc/x", BRK_KIND_BREAKER, &map, &len);
	(void)w;
	evs = (struct brk__event *)(void *)((uint8_t *)map + h->events_offset);
	cur = seq;
	assert_int_equal(brk_events_read(u->seg, &cur, &ev, 1, NULL), 1);
	assert_string_equal(ev.origin, "host-x");

	/* a slot reference out of range */
	evs[(seq - 1) % h->event_slots].pad[BRK__EV_ORIGIN] =
		BRK__ORIGIN_MAKE(BRK_FLEET_PEERS + 7u, 1u);
	cur = seq;
	assert_int_equal(brk_events_read(u->seg, &cur, &ev, 1, NULL), 1);
	assert_string_equal(ev.origin, "?");
	/* slot + 1 = 0xff */
	evs[(seq - 1) % h->event_slots].pad[BRK__EV_ORIGIN] = 0xffu;
	cur = seq;
	assert_int_equal(brk_events_read(u->seg, &cur, &ev, 1, NULL), 1);
	assert_string_equal(ev.origin, "?");
	/* the right slot, but its check no longer matches its name */
	evs[(seq - 1) % h->event_slots].pad[BRK__EV_ORIGIN] = BRK__ORIGIN_MAKE(0u, 1u);
	cur = seq;
	assert_int_equal(brk_events_read(u->seg, &cur, &ev, 1, NULL), 1);
	assert_string_equal(ev.origin, "host-x");
	h->peers[0].name[0] ^= 0x20; /* "Host-x" */
	cur = seq;
	assert_int_equal(brk_events_read(u->seg, &cur, &ev, 1, NULL), 1);
	assert_string_equal(ev.origin, "?");
	/* a name without its NUL and a forged check: not a host id */
	memset(h->peers[0].name, 'a', sizeof(h->peers[0].name));
	h->peers[0].name[7] = 0x2061616161616161ULL; /* a space, no NUL */
	cur = seq;
	assert_int_equal(brk_events_read(u->seg, &cur, &ev, 1, NULL), 1);
	assert_string_equal(ev.origin, "?");
	/* a slot being claimed */
	h->peers[0].word = BRK__PEER_MAKE(1u, BRK__PEER_CLAIMING);
	cur = seq;
	assert_int_equal(brk_events_read(u->seg, &cur, &ev, 1, NULL), 1);
	assert_string_equal(ev.origin, "?");
	munmap(map, len);
	munmap(h, BRK__HEADER_SIZE);
}

/* A caller compiled before origin existed gets the VER0 struct only. */
static void ver0_event_readers_get_no_origin_bytes(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	unsigned char buf[2 * BRK_EVENT_SIZE_VER0 + 16];
	uint64_t cur = 1;
	brk_breaker *b;
	int reason;

	ut_cfg(&c);
	b = ut_breaker(u, "svc/v", &c);
	ut_rc(0, brk_set_origin(u->seg, "host-v"));
	ut_rc(0, brk_trip(b, 100));
	ut_rc(0, brk_reset(b));
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(brk_events_read_sz(u->seg, &cur, (struct brk_event *)(void *)buf,
					    2, NULL, BRK_EVENT_SIZE_VER0), 2);
	memcpy(&reason, buf + BRK_EVENT_SIZE_VER0 + offsetof(struct brk_event, reason),
	       sizeof(reason));
	assert_int_equal(reason, BRK_EV_RESET);
	for (size_t k = 2 * BRK_EVENT_SIZE_VER0; k < sizeof(buf); k++)
		assert_int_equal(buf[k], 0xa5);
	assert_int_equal(sizeof(struct brk_event), BRK_EVENT_SIZE_VER1);
}

static void set_origin_on_a_read_only_handle_is_erofs(void **state)
{
	struct ut *u = *state;
	brk_segment *ro = ut_attach_clock(u, NULL, 1);

	ut_rc(-EROFS, brk_set_origin(ro, "host-r"));
	ut_rc(0, brk_set_origin(ro, NULL));
	brk_detach(ro);
}

/* ---- brk_trip_extend ------------------------------------------------- */

static void trip_extend_opens_a_closed_breaker(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_event ev;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "ext/closed", &c);
	ut_rc(0, brk_trip_extend(b, 4000));
	assert_int_equal(ut_state(b), BRK_OPEN);
	assert_int_equal(ut_open_remaining(b), 4000);
	ev = last_event(u);
	assert_int_equal(ev.reason, BRK_EV_TRIP);
	assert_int_equal(ev.from, BRK_CLOSED);
	assert_int_equal(ev.value, 4000);
	ut_rc(-BRK_EOPEN, ut_try(b));
}

static void trip_extend_lengthens_an_open_breaker_never_shortens(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	uint64_t written;

	ut_cfg(&c);
	b = ut_breaker(u, "ext/open", &c);
	ut_fail_n(b, 3); /* open for 1000 ms (level 0) */
	ut_advance_ms(u, 200);
	written = ut_events_written(u->seg);
	ut_rc(-EALREADY, brk_trip_extend(b, 500));
	ut_rc(-EALREADY, brk_trip_extend(b, 800)); /* ends exactly then */
	assert_int_equal(ut_events_written(u->seg), written);
	assert_int_equal(ut_open_remaining(b), 800);
	ut_rc(0, brk_trip_extend(b, 3000));
	assert_int_equal(ut_open_remaining(b), 3000);
	assert_int_equal(last_event(u).from, BRK_OPEN);
	assert_int_equal(last_event(u).to, BRK_OPEN);
	assert_int_equal(last_event(u).value, 3000);
	ut_advance_ms(u, 2999);
	ut_rc(-BRK_EOPEN, ut_try(b));
	ut_advance_ms(u, 1);
	ut_info(b, &i);
	assert_int_equal(i.cooling_level, 0); /* the cooling level is not changed */
	ut_rc(0, ut_try(b)); /* the probe */
}

static void trip_extend_ends_a_half_open_breakers_probes(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_permit probe;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "ext/half", &c);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &probe);
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_rc(0, brk_trip_extend(b, 2000));
	assert_int_equal(ut_state(b), BRK_OPEN);
	assert_int_equal(last_event(u).from, BRK_HALF_OPEN);
	ut_info(b, &i);
	assert_int_equal(i.cooling_level, 0);
	/* the probe is stale: its success closes nothing */
	ut_rc(-BRK_ESTALE, brk_release(&probe, BRK_SUCCESS, 0, 0));
	assert_int_equal(ut_state(b), BRK_OPEN);
}

static void trip_extend_clamps_and_refuses_bad_input(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_segment *ro;
	brk_breaker *b, *rb;

	ut_cfg(&c);
	c.max_open_ms = BRK_MAX_DURATION_MS; /* cap of every cooling (issue 22) */
	b = ut_breaker(u, "ext/bad", &c);
	ut_rc(-EINVAL, brk_trip_extend(NULL, 10));
	ut_rc(-EINVAL, brk_trip_extend(b, 0));
	assert_int_equal(ut_state(b), BRK_CLOSED);
	ut_rc(0, brk_trip_extend(b, UINT64_MAX));
	assert_int_equal(ut_open_remaining(b), BRK_MAX_DURATION_MS);
	ut_rc(-EALREADY, brk_trip_extend(b, UINT64_MAX));
	ro = ut_attach_clock(u, NULL, 1);
	ut_rc(0, brk_breaker_find(ro, "ext/bad", &rb));
	ut_rc(-EROFS, brk_trip_extend(rb, 10));
	brk_detach(ro);
}

/* ---- brk_cool_for ------------------------------------------------------ */

static void cool_for_refuses_until_then_and_never_lowers(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	uint64_t written;

	ut_cfg(&c);
	b = ut_breaker(u, "cool/a", &c);
	ut_rc(0, brk_cool_for(b, 2000));
	assert_int_equal(last_event(u).reason, BRK_EV_COOL_UNTIL);
	assert_int_equal(last_event(u).value, 2000);
	ut_rc(-BRK_ECOOLING, ut_try(b));
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 2000);
	written = ut_events_written(u->seg);
	ut_rc(-EALREADY, brk_cool_for(b, 1000)); /* never lowers */
	ut_rc(-EALREADY, brk_cool_for(b, 2000));
	ut_rc(0, brk_cool_for(b, 3000)); /* an extension: no new event */
	assert_int_equal(ut_events_written(u->seg), written);
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 3000);
	ut_advance_ms(u, 3000);
	ut_rc(0, ut_try(b));
	assert_int_equal(ut_state(b), BRK_CLOSED); /* the state is not touched */
}

static void cool_for_is_clamped_to_max_open(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;

	ut_cfg(&c); /* max_open_ms 8000 */
	b = ut_breaker(u, "cool/max", &c);
	ut_rc(-EINVAL, brk_cool_for(b, 0));
	ut_rc(-EINVAL, brk_cool_for(NULL, 10));
	ut_rc(0, brk_cool_for(b, UINT64_MAX));
	ut_info(b, &i);
	assert_int_equal(i.cool_until_remaining_ms, 8000);
	assert_int_equal(last_event(u).value, 8000);
	ut_rc(-EALREADY, brk_cool_for(b, 9000));
}

/* ---- brk_pace_cut -------------------------------------------------------- */

static brk_bucket *a_pace(struct ut *u, const char *name)
{
	struct brk_pace_config c;
	brk_bucket *k = NULL;

	ut_rc(0, brk_pace_config_init(&c));
	c.ceiling_per_s = 100.0;
	c.floor_per_s = 2.0;
	ut_rc(0, brk_pace_get(u->seg, name, &c, &k));
	return k;
}

static double learned(brk_bucket *k)
{
	struct brk_bucket_info bi;

	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.paced, 1);
	return bi.learned_per_s;
}

static void pace_cut_lowers_the_rate_and_clamps(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = a_pace(u, "pace/a"), *plain = NULL;
	struct brk_event ev;
	double r;

	assert_true(learned(k) == 100.0);
	ut_rc(0, brk_pace_cut(k, 40000)); /* 40 tokens/s */
	r = learned(k);
	assert_true(r <= 40.0 && r > 39.9);
	ev = last_event(u);
	assert_int_equal(ev.reason, BRK_EV_PACE_CUT);
	assert_string_equal(ev.name, "pace/a");
	assert_true(ev.value <= 40000 && ev.value > 39900);
	/* the bucket is empty at the new rate */
	ut_rc(-BRK_ENOTOKENS, brk_pace_take(k, BRK_PRIORITY_HIGH, NULL, NULL));
	/* at or above the rate now: left */
	ut_rc(-EALREADY, brk_pace_cut(k, 40000));
	ut_rc(-EALREADY, brk_pace_cut(k, 90000));
	/* below the floor: the floor */
	ut_rc(0, brk_pace_cut(k, 1));
	r = learned(k);
	assert_true(r == 2.0);
	ut_rc(-EALREADY, brk_pace_cut(k, 1));
	/* above the ceiling, on a fresh pace: the ceiling is the rate now */
	ut_rc(-EALREADY, brk_pace_cut(a_pace(u, "pace/b"), 500000));
	/* bad input */
	ut_rc(-EINVAL, brk_pace_cut(NULL, 10));
	ut_rc(-EINVAL, brk_pace_cut(k, 0));
	ut_rc(0, brk_bucket_get(u->seg, "plain/a", 10.0, 5, &plain));
	ut_rc(-EMEDIUMTYPE, brk_pace_cut(plain, 1000));
}

static void pace_cut_recovers_along_the_curve(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = a_pace(u, "pace/c");
	double r0, r1;

	ut_rc(0, brk_pace_cut(k, 20000));
	r0 = learned(k);
	ut_advance_ms(u, 10000);
	r1 = learned(k);
	assert_true(r1 > r0); /* a cut, not a new ceiling */
}

/* ---- link status ------------------------------------------------------------ */

static void status(struct brk_fleet_status *st, uint32_t state, uint64_t n)
{
	memset(st, 0, sizeof(*st));
	st->state = state;
	strcpy(st->host_id, "host-a");
	strcpy(st->channel, "breakerd");
	st->state_since_wall_ms = 1700000000000ULL;
	st->last_msg_wall_ms = 1700000000100ULL;
	st->lag_ms = 3;
	st->published = n;
	st->received = n + 1;
	st->applied = n + 2;
	st->ignored = n + 3;
	st->drops[BRK_FLEET_DROP_KIND] = 4;
	st->drops[BRK_FLEET_DROP_MALFORMED] = 1;
	st->dropped = 5;
	st->reconnects = 6;
	st->probe_won = 7;
	st->probe_lost = 8;
}

static void an_old_segment_reads_off(void **state)
{
	struct ut *u = *state;
	struct brk_fleet_status st;

	memset(&st, 0xa5, sizeof(st));
	ut_rc(0, brk_fleet_status(u->seg, &st));
	assert_int_equal(st.state, BRK_FLEET_OFF);
	assert_int_equal(st.pid, 0);
	assert_string_equal(st.host_id, "");
	assert_int_equal(st.published, 0);
	assert_int_equal(brk_fleet_drops(&st, BRK_FLEET_DROP_COUNT - 1), 0);
}

static void status_round_trips_and_state_changes_are_events(void **state)
{
	struct ut *u = *state;
	struct brk_fleet_status in, out;
	struct brk_event ev;
	brk_segment *ro;
	uint64_t written;

	status(&in, BRK_FLEET_CONNECTING, 10);
	in.pid = 1; /* taken from the caller, not the struct */
	ut_rc(0, brk_fleet_report(u->seg, &in));
	ev = last_event(u);
	assert_int_equal(ev.reason, BRK_EV_FLEET_LINK);
	assert_string_equal(ev.name, "");
	assert_int_equal(ev.from, BRK_FLEET_OFF);
	assert_int_equal(ev.to, BRK_FLEET_CONNECTING);
	assert_int_equal(ev.value, 6);
	assert_string_equal(brk_event_reason_name(ev.reason), "fleet_link");

	ro = ut_attach_clock(u, NULL, 1); /* works on a read-only attach */
	memset(&out, 0xa5, sizeof(out));
	ut_rc(0, brk_fleet_status(ro, &out));
	in.pid = getpid();
	assert_memory_equal(&in, &out, sizeof(in));

	/* counters move, the state does not: no event */
	written = ut_events_written(u->seg);
	status(&in, BRK_FLEET_CONNECTING, 11);
	ut_rc(0, brk_fleet_report(u->seg, &in));
	assert_int_equal(ut_events_written(u->seg), written);
	ut_rc(0, brk_fleet_status(ro, &out));
	assert_int_equal(out.published, 11);

	status(&in, BRK_FLEET_CONNECTED, 12);
	ut_rc(0, brk_fleet_report(u->seg, &in));
	ev = last_event(u);
	assert_int_equal(ev.from, BRK_FLEET_CONNECTING);
	assert_int_equal(ev.to, BRK_FLEET_CONNECTED);
	ut_rc(-EROFS, brk_fleet_report(ro, &in));
	brk_detach(ro);
}

static void bad_reports_are_refused_and_lose_nothing(void **state)
{
	struct ut *u = *state;
	struct brk_fleet_status in, out;

	status(&in, BRK_FLEET_CONNECTED, 1);
	ut_rc(0, brk_fleet_report(u->seg, &in));
	status(&in, BRK_FLEET_DOWN + 1, 2);
	ut_rc(-EINVAL, brk_fleet_report(u->seg, &in));
	status(&in, BRK_FLEET_DOWN, 2);
	strcpy(in.host_id, "bad id");
	ut_rc(-EINVAL, brk_fleet_report(u->seg, &in));
	status(&in, BRK_FLEET_DOWN, 2);
	memset(in.channel, 'c', sizeof(in.channel)); /* no NUL */
	ut_rc(-EINVAL, brk_fleet_report(u->seg, &in));
	ut_rc(-EINVAL, brk_fleet_report(NULL, &in));
	ut_rc(-EINVAL, brk_fleet_report_sz(u->seg, NULL, sizeof(in)));
	ut_rc(-EINVAL, brk_fleet_status_sz(u->seg, &out, BRK_FLEET_STATUS_SIZE_VER0 - 8));
	ut_rc(-EINVAL, brk_fleet_status_sz(NULL, &out, sizeof(out)));
	ut_rc(0, brk_fleet_status(u->seg, &out));
	assert_int_equal(out.state, BRK_FLEET_CONNECTED);
	assert_int_equal(out.published, 1);
}

static void corrupt_status_words_are_ecorrupt(void **state)
{
	struct ut *u = *state;
	struct brk__header *h = hdr_map(u);
	struct brk_fleet_status in, out;
	uint64_t save[BRK__FLEET_WORDS];

	status(&in, BRK_FLEET_CONNECTED, 1);
	ut_rc(0, brk_fleet_report(u->seg, &in));
	memcpy(save, h->fleet.words, sizeof(save));

	h->fleet.words[0] = (save[0] & ~0xffffffffULL) | 9u; /* state 9 */
	ut_rc(-BRK_ECORRUPT, brk_fleet_status(u->seg, &out));
	memcpy(h->fleet.words, save, sizeof(save));
	h->fleet.words[0] = (save[0] & 0xffffffffULL) | (0x80000000ULL << 32); /* pid < 0 */
	ut_rc(-BRK_ECORRUPT, brk_fleet_status(u->seg, &out));
	memcpy(h->fleet.words, save, sizeof(save));
	memset(&h->fleet.words[1], 'x', BRK_HOST_ID_MAX + 1); /* host id, no NUL */
	ut_rc(-BRK_ECORRUPT, brk_fleet_status(u->seg, &out));
	memcpy(h->fleet.words, save, sizeof(save));
	((char *)&h->fleet.words[9])[0] = '/'; /* channel "/reakerd" */
	ut_rc(-BRK_ECORRUPT, brk_fleet_status(u->seg, &out));
	memcpy(h->fleet.words, save, sizeof(save));
	ut_rc(0, brk_fleet_status(u->seg, &out));
	assert_string_equal(out.channel, "breakerd");

	/* a writer stuck mid-copy: readers give up; the next report takes
	 * over */
	h->fleet.seq |= 1u;
	ut_rc(-BRK_ECONTENDED, brk_fleet_status(u->seg, &out));
	ut_rc(0, brk_fleet_report(u->seg, &in));
	ut_rc(0, brk_fleet_status(u->seg, &out));
	assert_int_equal(out.state, BRK_FLEET_CONNECTED);
	munmap(h, BRK__HEADER_SIZE);
}

static void a_dead_writers_link_reads_off_with_its_counters(void **state)
{
	struct ut *u = *state;
	struct brk_fleet_status in, out;
	struct brk_event ev;
	int st;
	pid_t child;

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		brk_segment *s = ut_attach_other(u, NULL);
		status(&in, BRK_FLEET_CONNECTED, 40);
		_exit(brk_fleet_report(s, &in) == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ut_rc(0, brk_fleet_status(u->seg, &out));
	assert_int_equal(out.state, BRK_FLEET_OFF);
	assert_int_equal(out.pid, child);
	assert_int_equal(out.published, 40);
	/* a new link starts from off */
	status(&in, BRK_FLEET_CONNECTING, 0);
	ut_rc(0, brk_fleet_report(u->seg, &in));
	ev = last_event(u);
	assert_int_equal(ev.from, BRK_FLEET_OFF);
	assert_int_equal(ev.to, BRK_FLEET_CONNECTING);
}

static void names(void **state)
{
	(void)state;
	assert_string_equal(brk_fleet_state_name(BRK_FLEET_OFF), "off");
	assert_string_equal(brk_fleet_state_name(BRK_FLEET_CONNECTING), "connecting");
	assert_string_equal(brk_fleet_state_name(BRK_FLEET_CONNECTED), "connected");
	assert_string_equal(brk_fleet_state_name(BRK_FLEET_DOWN), "down");
	assert_string_equal(brk_fleet_state_name(4), "unknown");
	assert_string_equal(brk_fleet_state_name(-1), "unknown");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_MALFORMED), "malformed");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_OVERSIZE), "oversize");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_UNKNOWN), "unknown");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_NOT_FLEET), "not_fleet");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_FUTURE), "future");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_EXPIRED), "expired");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_KIND), "kind");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_AUTH), "auth");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_REPLAY), "replay");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_FLOOD), "flood");
	assert_string_equal(brk_fleet_drop_name(BRK_FLEET_DROP_COUNT), "unknown_cause");
	assert_string_equal(brk_fleet_drop_name(-1), "unknown_cause");
	assert_string_equal(brk_event_reason_name(BRK_EV_FLEET_LINK), "fleet_link");
	assert_non_null(strstr(brk_strerror(-EMFILE), "brk_set_origin"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_ids_are_validated),
		UT_TEST(origin_round_trips_through_the_event_ring),
		UT_TEST(detach_forgets_the_threads_origin),
		UT_TEST(a_reused_peer_slot_reads_a_question_mark),
		UT_TEST(a_corrupt_origin_reads_a_question_mark),
		UT_TEST(ver0_event_readers_get_no_origin_bytes),
		UT_TEST(set_origin_on_a_read_only_handle_is_erofs),
		UT_TEST(trip_extend_opens_a_closed_breaker),
		UT_TEST(trip_extend_lengthens_an_open_breaker_never_shortens),
		UT_TEST(trip_extend_ends_a_half_open_breakers_probes),
		UT_TEST(trip_extend_clamps_and_refuses_bad_input),
		UT_TEST(cool_for_refuses_until_then_and_never_lowers),
		UT_TEST(cool_for_is_clamped_to_max_open),
		UT_TEST(pace_cut_lowers_the_rate_and_clamps),
		UT_TEST(pace_cut_recovers_along_the_curve),
		UT_TEST(an_old_segment_reads_off),
		UT_TEST(status_round_trips_and_state_changes_are_events),
		UT_TEST(bad_reports_are_refused_and_lose_nothing),
		UT_TEST(corrupt_status_words_are_ecorrupt),
		UT_TEST(a_dead_writers_link_reads_off_with_its_counters),
		cmocka_unit_test(names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
