/*
 * test_layout.c - layout version 4 (lib/src/layout.h): records sized by
 * kind in an arena of 64-byte units, extension blocks allocated when a
 * setting needs them (at creation or by an update), a full arena, corrupt
 * refs and links (a link into another record is refused: owner tags,
 * layout 4), and the refusal of a layout-2 segment.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "internal.h"
#include "fixture_layout.h"

UT_GROUP_FIXTURES("layout", 64)

static uint64_t arena_used(brk_segment *s)
{
	struct brk_segment_info si;

	assert_int_equal(brk_segment_info(s, &si), 0);
	return si.arena_used_bytes;
}

static uint32_t record_bytes(brk_breaker *b)
{
	struct brk_info *i = malloc(sizeof *i);
	uint32_t n;

	assert_non_null(i);
	ut_info(b, i);
	n = i->record_bytes;
	free(i);
	return n;
}

/* The packed settings: every field inside its word, no two overlapping,
 * each wide enough for its public bound, and the window rules' word as
 * brk__window_active() reads it. */
static void packed_settings_fit_and_never_overlap(void **state)
{
	const uint64_t bound[BRK__CFG_COUNT] = {
		[BRK__CFG_FAILURE_THRESHOLD] = BRK_MAX_FAILURE_THRESHOLD,
		[BRK__CFG_FAILURE_RATE] = 100,
		[BRK__CFG_WINDOW_MS] = BRK_MAX_DURATION_MS,
		[BRK__CFG_MIN_CALLS] = BRK_MAX_MIN_CALLS,
		[BRK__CFG_SLOW_CALL_MS] = BRK_MAX_DURATION_MS,
		[BRK__CFG_SLOW_RATE] = 100,
		[BRK__CFG_OPEN_MS] = BRK_MAX_DURATION_MS,
		[BRK__CFG_MAX_OPEN_MS] = BRK_MAX_DURATION_MS,
		[BRK__CFG_HALF_OPEN_PROBES] = BRK_MAX_PROBES,
		[BRK__CFG_SUCCESS_THRESHOLD] = BRK_MAX_SUCCESS_THRESHOLD,
		[BRK__CFG_PROBE_TIMEOUT_MS] = BRK_MAX_DURATION_MS,
		[BRK__CFG_MAX_WAIT_MS] = BRK_MAX_DURATION_MS,
		[BRK__CFG_MAX_CONCURRENT] = BRK_MAX_CONCURRENT,
		[BRK__CFG_MIN_DISTINCT] = BRK_MAX_QUORUM,
		[BRK__CFG_RESERVE_PCT] = BRK_MAX_RESERVE_PCT,
	};
	uint64_t used[BRK__CFG_WORDS] = { 0 };
	struct brk__cfg_field rate = brk__cfg_pos(BRK__CFG_FAILURE_RATE);
	struct brk__cfg_field slow = brk__cfg_pos(BRK__CFG_SLOW_CALL_MS);
	int k;

	(void)state;
	for (k = 0; k < BRK__CFG_COUNT; k++) {
		struct brk__cfg_field f = brk__cfg_pos((enum brk__cfg)k);
		uint64_t m;

		assert_true(f.word < BRK__CFG_WORDS);
		assert_true(f.bits >= 1 && f.shift + f.bits <= 64);
		assert_true(bound[k] <= (1ULL << f.bits) - 1);
		m = (f.bits == 64 ? ~0ULL : ((1ULL << f.bits) - 1)) << f.shift;
		assert_int_equal(used[f.word] & m, 0);
		used[f.word] |= m;
	}
	assert_int_equal(rate.word, BRK__CFG_WINDOW_WORD);
	assert_int_equal(slow.word, BRK__CFG_WINDOW_WORD);
	assert_int_equal(rate.shift, BRK__CFG_WINDOW_SHIFT);
	assert_int_equal(slow.shift, rate.shift + rate.bits);
	assert_int_equal(slow.shift + slow.bits, 64);
	assert_int_equal(brk__cfg_pos(BRK__CFG_MAX_CONCURRENT).shift +
			 brk__cfg_pos(BRK__CFG_MAX_CONCURRENT).bits, 64);
}

/* The core record is 7 units; a bulkhead of 10 adds a primary block of
 * 10 permit slots (5 units); nothing else is allocated. */
static void a_breaker_without_bulkhead_uses_7_units(void **state)
{
	struct ut *u = *state;
	struct brk_segment_info si;
	struct brk_config c;
	brk_breaker *b;
	uint64_t before;

	assert_int_equal(brk_segment_info(u->seg, &si), 0);
	assert_int_equal(si.unit_bytes, 64);
	assert_int_equal(si.arena_bytes, (64u * 7u + 1024u) * 64u); /* the default */
	assert_int_equal(si.record_size, 448);
	ut_cfg(&c);
	before = arena_used(u->seg);
	b = ut_breaker(u, "plain", &c);
	assert_int_equal(record_bytes(b), 448);
	assert_int_equal(arena_used(u->seg) - before, 448);
	assert_int_equal(sizeof(struct brk__record), 448);

	c.max_concurrent = 10;
	before = arena_used(u->seg);
	b = ut_breaker(u, "bulk10", &c);
	assert_int_equal(record_bytes(b), (7 + 5 + 2) * 64); /* + its control and tag units (layouts 5, 4) */
	assert_int_equal(arena_used(u->seg) - before, (7 + 5 + 2) * 64);
	assert_int_equal(brk_record_count(u->seg), 2);
	assert_int_equal(brk_segment_info(u->seg, &si), 0);
	assert_int_equal(si.live_records, 2);
}

static int acquire_n(brk_breaker *b, brk_permit *p, int n)
{
	int k;

	for (k = 0; k < n; k++)
		if (brk_acquire(b, &p[k], NULL) != 0)
			break;
	return k;
}

/* max_concurrent 4 -> 40 by update: the overflow block (64 - 4 slots) is
 * linked before the setting is written; exactly 40 are admitted, counted
 * across both blocks, and a dead holder in the overflow is reclaimed. */
static void raising_max_concurrent_links_an_overflow_block(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = malloc(sizeof *i);
	struct brk_reclaim_stats st;
	struct brk_config c, g;
	brk_permit p[48];
	brk_breaker *b;
	int k;

	assert_non_null(i);
	ut_cfg(&c);
	c.max_concurrent = 4;
	b = ut_breaker(u, "grow", &c);
	assert_int_equal(record_bytes(b), (7 + 2 + 2) * 64); /* + its control and tag units (layouts 5, 4) */
	assert_int_equal(acquire_n(b, p, 5), 4);
	brk_config_init(&g);
	g.max_concurrent = 40;
	ut_rc(0, brk_breaker_update(b, &g, BRK_CFG_MAX_CONCURRENT, NULL));
	assert_int_equal(record_bytes(b), (7 + 2 + 2 + 30 + 2) * 64);
	assert_int_equal(BRK__PR_P_SLOTS(brk__brec(b)->permit_refs), 4);
	assert_int_equal(BRK__PR_O_SLOTS(brk__brec(b)->permit_refs), 60);
	assert_int_equal(acquire_n(b, p + 4, 40), 36); /* 40 in all */
	ut_info(b, i);
	assert_int_equal(i->in_flight, 40);
	assert_int_equal(i->n_leases, 40);
	/* a holder in the overflow block dies: reclaimed like any other */
	{
		struct brk__lease *l = brk__permit_at(u->seg, brk__brec(b), p[39].permit_slot_);

		assert_non_null(l);
		assert_true(p[39].permit_slot_ >= 4);
		uatomic_set(&l->owner, BRK__TOK_MAKE(0x3ffffe, 0, 1));
		uatomic_set(&l->start, 0);
	}
	ut_rc(0, brk_reclaim(u->seg, &st));
	assert_int_equal(st.dead_owner, 1);
	ut_info(b, i);
	assert_int_equal(i->in_flight, 39);
	for (k = 0; k < 39; k++)
		ut_release_ok(&p[k], BRK_SUCCESS, 0);
	ut_info(b, i);
	assert_int_equal(i->in_flight, 0);
	/* lowering and raising again needs no new block */
	g.max_concurrent = 64;
	ut_rc(0, brk_breaker_update(b, &g, BRK_CFG_MAX_CONCURRENT, NULL));
	assert_int_equal(record_bytes(b), (7 + 2 + 2 + 30 + 2) * 64);
	assert_int_equal(acquire_n(b, p, 48), 48);
	for (k = 0; k < 48; k++)
		ut_release_ok(&p[k], BRK_SUCCESS, 0);
	free(i);
}

/* A breaker made without a bulkhead gets its primary block by update. */
static void a_bulkhead_added_by_update_gets_a_primary_block(void **state)
{
	struct ut *u = *state;
	struct brk_config c, g;
	brk_permit p[8];
	brk_breaker *b;
	int k;

	ut_cfg(&c);
	b = ut_breaker(u, "later", &c);
	assert_int_equal(record_bytes(b), 448);
	brk_config_init(&g);
	g.max_concurrent = 3;
	ut_rc(0, brk_breaker_update(b, &g, BRK_CFG_MAX_CONCURRENT, NULL));
	assert_int_equal(record_bytes(b), (7 + 2 + 2) * 64); /* + its control and tag units (layouts 5, 4) */
	assert_int_equal(acquire_n(b, p, 8), 3);
	for (k = 0; k < 3; k++)
		ut_release_ok(&p[k], BRK_SUCCESS, 0);
}

/* half_open_probes 1 -> 3 by update: probe0 and the probe extension
 * admit exactly 3 probes. */
static void raising_half_open_probes_admits_exactly_that_many(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = malloc(sizeof *i);
	struct brk_config c, g;
	brk_permit p[5];
	brk_breaker *b;
	int k;

	assert_non_null(i);
	ut_cfg(&c);
	b = ut_breaker(u, "probes", &c);
	assert_int_equal(record_bytes(b), 448);
	brk_config_init(&g);
	g.half_open_probes = 3;
	ut_rc(0, brk_breaker_update(b, &g, BRK_CFG_HALF_OPEN_PROBES, NULL));
	assert_int_equal(record_bytes(b), 448 + 4 * 64);
	ut_fail_n(b, 3);
	assert_int_equal(ut_state(b), BRK_OPEN);
	ut_advance_ms(u, 1000);
	assert_int_equal(acquire_n(b, p, 5), 3);
	for (k = 0; k < 3; k++)
		assert_true(p[k].token_ != 0);
	ut_info(b, i);
	assert_int_equal(i->state, BRK_HALF_OPEN);
	assert_int_equal(i->probes_in_flight, 3);
	ut_rc(-BRK_EOPEN, brk_acquire(b, &p[3], NULL));
	for (k = 0; k < 3; k++)
		(void)brk_release(&p[k], BRK_SUCCESS, 0, 0);
	assert_int_equal(ut_state(b), BRK_CLOSED);
	free(i);
}

/* failure_rate_pct enabled by update: the window block is linked and the
 * rate rule opens the breaker; before, no window words exist. */
static void enabling_failure_rate_by_update_starts_the_window(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = malloc(sizeof *i);
	struct brk_config c, g;
	brk_breaker *b;

	assert_non_null(i);
	ut_cfg(&c);
	c.failure_threshold = 100;
	b = ut_breaker(u, "rate", &c);
	assert_null(brk__window_words(u->seg, brk__brec(b)));
	ut_call(b, BRK_SUCCESS, 0);
	ut_info(b, i);
	assert_int_equal(i->window_calls, 0); /* no window rule, no window */
	brk_config_init(&g);
	g.failure_rate_pct = 50;
	g.min_calls = 4;
	ut_rc(0, brk_breaker_update(b, &g, BRK_CFG_FAILURE_RATE_PCT | BRK_CFG_MIN_CALLS,
				    NULL));
	assert_non_null(brk__window_words(u->seg, brk__brec(b)));
	assert_int_equal(record_bytes(b), 448 + 4 * 64);
	ut_call(b, BRK_SUCCESS, 0);
	ut_call(b, BRK_FAILURE, 0);
	ut_call(b, BRK_SUCCESS, 0);
	ut_info(b, i);
	assert_int_equal(i->window_calls, 3);
	assert_int_equal(i->window_failures, 1);
	assert_int_equal(i->state, BRK_CLOSED);
	ut_call(b, BRK_FAILURE, 0); /* 2 of 4: 50 % */
	assert_int_equal(ut_state(b), BRK_OPEN);
	free(i);
}

/* The arena fills: -ENOSPC with a message that says so and how to make it
 * bigger; every record made before is intact; an update that needs a
 * block writes nothing. */
static void a_full_arena_is_enospc_and_loses_nothing(void **state)
{
	struct ut *u = *state;
	struct brk_attach_opts o;
	struct brk_info *i = malloc(sizeof *i);
	struct brk_config c, g, before;
	const char *what = NULL;
	brk_breaker *b[10], *x = NULL;
	brk_segment *s;
	char name[16];
	int k;

	(void)state;
	assert_non_null(i);
	ut_free(u);
	u = ut_new("layoutfull", 0, 0); /* replaced: created below */
	brk_detach(u->seg);
	brk_segment_unlink(u->shm);
	ut_opts(u, &o, 64);
	o.arena_bytes = BRK_MIN_ARENA_BYTES; /* 64 units: unit 0 + 9 breakers */
	ut_rc(0, brk_attach(&o, &s));
	u->seg = s;
	*state = u;
	ut_cfg(&c);
	for (k = 0; k < 9; k++) {
		snprintf(name, sizeof name, "f%d", k);
		b[k] = ut_breaker(u, name, &c);
		ut_call(b[k], BRK_FAILURE, 0);
	}
	ut_rc(-ENOSPC, brk_breaker_get(s, "f9", &c, &x));
	assert_non_null(strstr(brk_strerror(-ENOSPC), "arena"));
	assert_non_null(strstr(brk_strerror(-ENOSPC), "--arena-mb"));
	ut_rc(-ENOSPC, brk_bucket_get(s, "k", 10.0, 5, (brk_bucket **)&x));
	assert_int_equal(brk_record_count(s), 9);
	ut_rc(-ENOENT, brk_breaker_find(s, "f9", &x));
	/* a setting that needs a block: -ENOSPC, nothing written */
	brk_config_init(&before);
	brk__config_load(brk__brec(b[0]), &before);
	brk_config_init(&g);
	g.max_concurrent = 4;
	g.failure_threshold = 7;
	ut_rc(-ENOSPC, brk_breaker_update(b[0], &g,
					  BRK_CFG_MAX_CONCURRENT | BRK_CFG_FAILURE_THRESHOLD,
					  &what));
	assert_string_equal(what, "arena");
	brk_config_init(&g);
	brk__config_load(brk__brec(b[0]), &g);
	assert_memory_equal(&g, &before, sizeof g);
	for (k = 0; k < 9; k++) {
		snprintf(name, sizeof name, "f%d", k);
		ut_rc(0, brk_breaker_find(s, name, &x));
		ut_info(x, i);
		assert_string_equal(i->name, name);
		assert_int_equal(i->counters.failures, 1);
		assert_int_equal(i->record_bytes, 448);
	}
	free(i);
}

/* Index slot of @ref in the second mapping @map. */
static uint64_t *slot_of(struct ut *u, void *map, uint32_t ref)
{
	uint64_t *idx = (uint64_t *)(void *)((uint8_t *)map + brk__index_offset());
	struct brk_segment_info si;
	uint32_t k, n;

	assert_int_equal(brk_segment_info(u->seg, &si), 0);
	n = brk__index_slots(si.capacity);
	for (k = 0; k < n; k++)
		if (idx[k] && BRK__IDX_REC(idx[k]) == ref + 1)
			return &idx[k];
	fail_msg("no index slot for ref %u", ref);
	return NULL;
}

/* A ref in the index past the arena, into the middle of a run, or at an
 * extension block: -BRK_ECORRUPT from every lookup, never a crash. */
static void a_corrupt_ref_in_the_index_is_ecorrupt(void **state)
{
	struct ut *u = *state;
	struct brk_segment_info si;
	struct brk_config c;
	struct brk_info *i = malloc(sizeof *i);
	brk_breaker *b, *x;
	uint64_t *slot, good;
	uint32_t ref, bad[4];
	void *map;
	size_t len;
	int k;

	assert_non_null(i);
	ut_cfg(&c);
	c.max_concurrent = 6;
	b = ut_breaker(u, "victim", &c);
	ut_info(b, i);
	ref = i->index;
	ut_breaker(u, "other", &c);
	assert_int_equal(brk_segment_info(u->seg, &si), 0);
	(void)ut_record_ext(u, "victim", BRK_KIND_BREAKER, &map, &len);
	slot = slot_of(u, map, ref);
	good = *slot;
	bad[0] = (uint32_t)(si.arena_bytes / 64) + 3; /* past the arena */
	bad[1] = ref + 3;                             /* the middle of its run */
	bad[2] = ref + 7;                             /* its permit block */
	bad[3] = 0xfffffffeu;
	for (k = 0; k < 4; k++) {
		brk_segment *s2;

		*slot = BRK__IDX_MAKE(BRK__IDX_HASH(good), bad[k] + 1);
		s2 = ut_attach_other(u, NULL); /* no cached handle */
		ut_rc(-BRK_ECORRUPT, brk_breaker_find(s2, "victim", &x));
		ut_rc(-BRK_ECORRUPT, brk_breaker_get(s2, "victim", &c, &x));
		ut_rc(0, brk_breaker_find(s2, "other", &x));
		/* by ref: no record starts there (its slot is on another
		 * hash's chain): not a record, whatever the index says */
		ut_rc(-ENOENT, brk_info_at(s2, bad[k], i));
		brk_detach(s2);
	}
	*slot = good;
	{
		brk_segment *s2 = ut_attach_other(u, NULL);
		ut_rc(0, brk_breaker_find(s2, "victim", &x));
		brk_detach(s2);
	}
	munmap(map, len);
	free(i);
}

/* Corrupt extension links are bounds-checked: no slot, no window; never
 * an access outside the arena. */
static void corrupt_extension_links_read_as_no_block(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info *i = malloc(sizeof *i);
	struct brk__record *r;
	brk_breaker *b;
	brk_permit p;
	void *map;
	size_t len;

	assert_non_null(i);
	ut_cfg(&c);
	c.max_concurrent = 2;
	c.failure_rate_pct = 50;
	b = ut_breaker(u, "links", &c);
	r = ut_record_at(u, "links", BRK_KIND_BREAKER, &map, &len);
	r->permit_refs = BRK__PR_MAKE(BRK__PR_REF_MASK, 64, BRK__PR_REF_MASK - 1, 64);
	r->ext_refs = BRK__XR_MAKE(0xfffffff0u, 0xfffffff0u);
	ut_rc(-BRK_EFULL, brk_acquire(b, &p, NULL)); /* no permit slot exists */
	ut_info(b, i);
	assert_int_equal(i->in_flight, 0);
	assert_int_equal(i->record_bytes, 448);
	munmap(map, len);
	free(i);
}

/*
 * Issue 22: a link word (permit_refs, ext_refs) that is in bounds but
 * points into ANOTHER record's blocks or core is refused, not followed:
 * every extension block carries its owner's tag (the owner's ref and the
 * block's kind) and nothing reads or writes through a link whose block
 * does not carry ours. Before, A's acquire claimed a permit slot of B's
 * bulkhead and A's failures counted in B's window.
 */
static void a_link_into_another_record_is_refused_not_followed(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info *ia = malloc(sizeof *ia), *ib = malloc(sizeof *ib);
	struct brk__record *ra, *rb;
	brk_breaker *a, *b;
	brk_permit p, q;
	void *ma, *mb;
	size_t la, lb;
	int rc;

	assert_non_null(ia);
	assert_non_null(ib);
	ut_cfg(&c);
	c.max_concurrent = 2;
	c.half_open_probes = 3;
	c.failure_rate_pct = 50;
	c.min_calls = 1;
	c.failure_threshold = 1000;
	a = ut_breaker(u, "tag/a", &c);
	b = ut_breaker(u, "tag/b", &c);
	ra = ut_record_at(u, "tag/a", BRK_KIND_BREAKER, &ma, &la);
	rb = ut_record_at(u, "tag/b", BRK_KIND_BREAKER, &mb, &lb);
	/* A's links now name B's blocks (a garbage, in-bounds link) */
	ra->permit_refs = rb->permit_refs;
	ra->ext_refs = rb->ext_refs;

	rc = brk_acquire(a, &p, NULL);
	ut_info(b, ib); /* A's permit is out: in whose slot? */
	if (rc == 0)
		(void)brk_release(&p, BRK_FAILURE, BRK_REASON_SERVER_ERROR, 0);
	if (ib->in_flight || ib->window_calls)
		fprintf(stderr, "B's blocks written through A's links: in_flight %u, "
			"window calls %" PRIu64 "\n", ib->in_flight, ib->window_calls);
	assert_int_equal(ib->in_flight, 0);
	assert_int_equal(ib->window_calls, 0);
	/* B still has all of its own permits */
	ut_acquire_ok(b, &p);
	ut_acquire_ok(b, &q);
	ut_rc(0, brk_release(&p, BRK_SUCCESS, 0, 0));
	ut_rc(0, brk_release(&q, BRK_SUCCESS, 0, 0));
	/* A reads its links as "no block" */
	ut_info(a, ia);
	assert_int_equal(ia->record_bytes, 448);

	/* a link into B's core (not a block at all) is refused too */
	ra->permit_refs = BRK__PR_MAKE(ut_ref_of(u->seg, "tag/b"), 2, 0, 0);
	ra->ext_refs = BRK__XR_MAKE(ut_ref_of(u->seg, "tag/b"), ut_ref_of(u->seg, "tag/b"));
	rc = brk_acquire(a, &p, NULL);
	if (rc == 0)
		(void)brk_release(&p, BRK_FAILURE, BRK_REASON_SERVER_ERROR, 0);
	ut_info(b, ib);
	assert_int_equal(ib->state, BRK_CLOSED);
	assert_int_equal(ib->in_flight, 0);
	assert_int_equal(ib->counters.failures, 0);
	munmap(ma, la);
	munmap(mb, lb);
	free(ia);
	free(ib);
}

/* last_change_age_ms: UINT64_MAX until the first transition, then the age
 * of the last one (written by each transition's winner). */
static void last_change_age_counts_from_the_last_transition(void **state)
{
	struct ut *u = *state;
	struct brk_info *i = malloc(sizeof *i);
	struct brk_config c;
	brk_breaker *b;

	assert_non_null(i);
	ut_cfg(&c);
	b = ut_breaker(u, "age", &c);
	ut_info(b, i);
	assert_true(i->last_change_age_ms == UINT64_MAX);
	ut_advance_ms(u, 100);
	ut_fail_n(b, 3);
	ut_advance_ms(u, 250);
	ut_info(b, i);
	assert_int_equal(i->last_change_age_ms, 250);
	ut_rc(0, brk_reset(b));
	ut_info(b, i);
	assert_int_equal(i->last_change_age_ms, 0);
	free(i);
}

/* arena_bytes out of range: -EINVAL with a message, nothing created. */
static void a_bad_arena_size_is_refused(void **state)
{
	struct ut *u = *state;
	const uint64_t bad[] = { 1, BRK_MIN_ARENA_BYTES - 64, BRK_MAX_ARENA_BYTES + 64 };
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	char shm[160];

	snprintf(shm, sizeof shm, "%s-arena", u->shm);
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		ut_opts(u, &o, 8);
		o.shm_name = shm;
		o.arena_bytes = bad[k];
		ut_rc(-EINVAL, brk_attach(&o, &s));
		assert_non_null(strstr(u->err, "arena"));
	}
	ut_opts(u, &o, 8);
	o.shm_name = shm;
	o.flags = BRK_ATTACH_NOCREATE;
	ut_rc(-ENOENT, brk_attach(&o, &s));
	/* an odd size is rounded down to whole units */
	ut_opts(u, &o, 8);
	o.shm_name = shm;
	o.arena_bytes = 100000;
	ut_rc(0, brk_attach(&o, &s));
	{
		struct brk_segment_info si;
		assert_int_equal(brk_segment_info(s, &si), 0);
		assert_int_equal(si.arena_bytes, 100000 / 64 * 64);
	}
	brk_detach(s);
	brk_segment_unlink(shm);
}

/* A layout-2 segment (written by hand: its header as release 2 wrote it)
 * is refused with -EPROTO and a message that says what to do. */
static void a_layout_2_segment_is_refused_with_what_to_do(void **state)
{
	struct ut *u = *state;
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	char shm[160], path[200];
	/* layout 2, capacity 8: header 4096, index 16 x 8 (page-aligned),
	 * 8 records of 4096, 4096 events of 128 */
	const uint64_t v2_size = 4096 + 4096 + 8 * 4096 + 4096 * 128;
	uint64_t hdr[16] = { 0 };
	int fd;

	snprintf(shm, sizeof shm, "%s-v2", u->shm);
	snprintf(path, sizeof path, "/dev/shm%s", shm);
	fd = shm_open(shm, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)v2_size), 0);
	hdr[0] = BRK__MAGIC;
	hdr[1] = 2u | ((uint64_t)4096 << 32);  /* version | header_size */
	hdr[2] = v2_size;                      /* total_size */
	hdr[3] = 8u | ((uint64_t)4096 << 32);  /* capacity | record_size */
	hdr[4] = 16u | ((uint64_t)4096 << 32); /* index_slots | event_slots */
	hdr[5] = 128u;                         /* event_size */
	hdr[6] = 4096;                         /* index_offset */
	hdr[7] = 8192;                         /* records_offset */
	hdr[8] = 8192 + 8 * 4096;              /* events_offset */
	assert_int_equal(pwrite(fd, hdr, sizeof hdr, 0), (ssize_t)sizeof hdr);
	close(fd);
	ut_opts(u, &o, 0);
	o.shm_name = shm;
	ut_rc(-EPROTO, brk_attach(&o, &s));
	assert_null(s);
	assert_non_null(strstr(u->err, "layout version 2"));
	{
		char want[32];

		snprintf(want, sizeof want, "speaks %u", BRK__LAYOUT_VERSION);
		assert_non_null(strstr(u->err, want));
	}
	assert_non_null(strstr(u->err, "an older"));
	assert_non_null(strstr(u->err, "rm /dev/shm"));
	assert_non_null(strstr(u->err, shm));
	/* nothing was changed: still layout 2, still its size */
	{
		struct stat st;
		uint64_t v = 0;
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal((uint64_t)st.st_size, v2_size);
		assert_int_equal(pread(fd, &v, sizeof v, 8), (ssize_t)sizeof v);
		assert_int_equal((uint32_t)v, 2);
		close(fd);
	}
	brk_segment_unlink(shm);
}

/*
 * The layout-4 bump (issue 22: owner tags, permit blocks one unit bigger):
 * a layout-3 segment (a release before it) is refused by this library
 * with what to do, and a segment of a newer layout than ours likewise
 * (what a layout-3 library says of a layout-4 segment: the same code in
 * that release). The header's version is rewritten by hand; nothing else
 * of the segment is touched by the refusal.
 */
static void a_segment_of_another_layout_is_refused_both_ways(void **state)
{
	struct ut *u = *state;
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	char shm[160], path[200], want[240];
	const uint32_t vers[] = { BRK__LAYOUT_VERSION - 1, BRK__LAYOUT_VERSION + 1 };
	const char *who[] = { "an older release", "a newer release" };
	uint64_t word;
	int fd;

	_Static_assert(BRK__LAYOUT_VERSION == 5, "the bump of issue 25");
	snprintf(shm, sizeof shm, "%s-vx", u->shm);
	snprintf(path, sizeof path, "/dev/shm%s", shm);
	ut_opts(u, &o, 0);
	o.shm_name = shm;
	ut_rc(0, brk_attach(&o, &s));
	brk_detach(s);
	for (size_t k = 0; k < 2; k++) {
		fd = open(path, O_RDWR);
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, &word, sizeof word, 8), (ssize_t)sizeof word);
		word = (word & ~0xffffffffULL) | vers[k]; /* version | header_size */
		assert_int_equal(pwrite(fd, &word, sizeof word, 8), (ssize_t)sizeof word);
		close(fd);
		s = NULL;
		u->err[0] = '\0';
		ut_rc(-EPROTO, brk_attach(&o, &s));
		assert_null(s);
		fprintf(stderr, "layout %u: %s\n", vers[k], u->err);
		snprintf(want, sizeof want, "layout version %u, this library speaks %u",
			 vers[k], BRK__LAYOUT_VERSION);
		assert_non_null(strstr(u->err, want));
		assert_non_null(strstr(u->err, who[k]));
		assert_non_null(strstr(u->err, "stop every process using it"));
		snprintf(want, sizeof want, "rm /dev/shm%s", shm);
		assert_non_null(strstr(u->err, want));
	}
	brk_segment_unlink(shm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(packed_settings_fit_and_never_overlap),
		UT_TEST(a_breaker_without_bulkhead_uses_7_units),
		UT_TEST(raising_max_concurrent_links_an_overflow_block),
		UT_TEST(a_bulkhead_added_by_update_gets_a_primary_block),
		UT_TEST(raising_half_open_probes_admits_exactly_that_many),
		UT_TEST(enabling_failure_rate_by_update_starts_the_window),
		UT_TEST(a_full_arena_is_enospc_and_loses_nothing),
		UT_TEST(a_corrupt_ref_in_the_index_is_ecorrupt),
		UT_TEST(corrupt_extension_links_read_as_no_block),
		UT_TEST(last_change_age_counts_from_the_last_transition),
		UT_TEST(a_bad_arena_size_is_refused),
		UT_TEST(a_layout_2_segment_is_refused_with_what_to_do),
		UT_TEST(a_link_into_another_record_is_refused_not_followed),
		UT_TEST(a_segment_of_another_layout_is_refused_both_ways),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
