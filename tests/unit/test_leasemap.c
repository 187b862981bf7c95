/*
 * test_leasemap.c - the lease map (docs/design/lifecycle.md "Lease registry"):
 * a claim marks its record, brk_reclaim() visits only marked records and
 * unmarks one found empty, a scanner running between a claim's steps
 * (the test variant's BRK__HOOK, lib/src/killpoint.h) leaves a held lease
 * marked, the backstop sweep finds a lease left unmarked, the slice
 * follows the supervisor's interval, and owner checks are cached per pid
 * for one scan. On the fake clock; children only to leave dead owners.
 *
 * Linked with libbreaker_hooks (the claim-step hook compiled in).
 */
#include <signal.h>
#include <sys/wait.h>

#include "fixture.h"
#include "internal.h"
#include "killpoint.h"

UT_GROUP_FIXTURES("lmap", 256)

/* Fork a child that takes one permit on each of @b[0..n) and exits
 * holding them. Returns its pid (reaped). */
static pid_t child_dies_holding(brk_breaker **b, int n)
{
	pid_t pid;
	int st = 0;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (int k = 0; k < n; k++) {
			brk_permit p;
			if (brk_acquire(b[k], &p, NULL) != 0)
				_exit(10 + k);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	return pid;
}

/* @n breakers "r/<k>" with a bulkhead of 10. */
static void breakers(struct ut *u, brk_breaker **b, int n)
{
	struct brk_config c;
	char name[32];

	ut_cfg(&c);
	c.max_concurrent = 10;
	for (int k = 0; k < n; k++) {
		snprintf(name, sizeof name, "r/%d", k);
		b[k] = ut_breaker(u, name, &c);
	}
}

static int l1_bit(brk_segment *s, uint32_t ref)
{
	return (int)((brk__lmap_l1(s, ref / 64u / 64u) >> (ref / 64u % 64u)) & 1u);
}

static void reclaim_ok(brk_segment *s, struct brk_reclaim_stats *st)
{
	ut_rc(0, brk_reclaim(s, st));
}

/* The sweep's slice at the default interval: index slots it looks at
 * (at most that many records), for an index of @n slots. */
static uint64_t slice(uint64_t n)
{
	return (n * 100u + 600000u - 1) / 600000u;
}

/* How far one scan moves the sweep's cursor through @s's index. */
static uint64_t cursor_step(brk_segment *s)
{
	struct brk_reclaim_stats st;
	uint64_t c0 = uatomic_read(&s->hdr->sweep_cursor) % s->index_slots, c1;

	reclaim_ok(s, &st);
	c1 = uatomic_read(&s->hdr->sweep_cursor);
	return (c1 + s->index_slots - c0) % s->index_slots;
}

static void claim_marks_record(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[40];
	brk_permit p;

	breakers(u, b, 40);
	for (int k = 0; k < 40; k++)
		assert_false(brk__lmap_test(u->seg, brk__bidx(b[k])));
	ut_acquire_ok(b[33], &p);
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[33])));
	assert_true(l1_bit(u->seg, brk__bidx(b[33])));
	for (int k = 0; k < 40; k++)
		if (k != 33)
			assert_false(brk__lmap_test(u->seg, brk__bidx(b[k])));
	/* the scan visits the marked record (and its sweep slice), not 40 */
	reclaim_ok(u->seg, &st);
	assert_true(u->seg->reclaim_visits <= 1 + slice(u->seg->index_slots));
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[33]))); /* held: kept */
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* A probe claim marks too (the probe slots are leases as well). */
static void probe_claim_marks_record(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_breaker *b;
	brk_permit p;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, 3);
	/* the failed calls had no lease to claim: nothing marked */
	assert_false(brk__lmap_test(u->seg, brk__bidx(b)));
	ut_advance_ms(u, 1000);
	ut_acquire_ok(b, &p); /* the half-open probe */
	assert_true(brk__lmap_test(u->seg, brk__bidx(b)));
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

static void released_record_unmarked_by_scan(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[3];
	brk_permit p;

	breakers(u, b, 3);
	ut_acquire_ok(b[1], &p);
	ut_release_ok(&p, BRK_SUCCESS, 0);
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[1]))); /* release never clears */
	reclaim_ok(u->seg, &st);
	assert_false(brk__lmap_test(u->seg, brk__bidx(b[1])));
	assert_int_equal(brk__lmap_l1(u->seg, 0), 0); /* level 1 follows */
	/* an idle segment: the next scan visits the sweep slice only */
	reclaim_ok(u->seg, &st);
	assert_true(u->seg->reclaim_visits <= slice(u->seg->index_slots));
	/* the next claim marks it again */
	ut_acquire_ok(b[1], &p);
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[1])));
	assert_true(l1_bit(u->seg, brk__bidx(b[1])));
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* Past the first level-1 word (refs from 4096 on): both levels line up. */
static void second_level1_word(void **state)
{
	struct ut *u = ut_new("lmap2", 600, 0);
	struct brk_reclaim_stats st;
	struct brk_config c;
	brk_breaker *b = NULL;
	brk_permit p;
	char name[32];

	(void)state;
	assert_int_equal(u->seg->lmap_l1_words, 2);
	ut_cfg(&c);
	c.max_concurrent = 1;
	for (int k = 0; !b || brk__bidx(b) < 4100; k++) {
		snprintf(name, sizeof name, "r/%d", k);
		b = ut_breaker(u, name, &c);
	}
	ut_acquire_ok(b, &p);
	assert_int_equal(brk__lmap_l1(u->seg, 0), 0);
	assert_int_equal(brk__lmap_l1(u->seg, 1), 1ULL << (brk__bidx(b) / 64 - 64));
	reclaim_ok(u->seg, &st);
	assert_true(u->seg->reclaim_visits <= 1 + slice(u->seg->index_slots));
	ut_release_ok(&p, BRK_SUCCESS, 0);
	reclaim_ok(u->seg, &st);
	assert_int_equal(brk__lmap_l1(u->seg, 1), 0);
	ut_free(u);
}

/* ---- a scanner between the steps of a claim --------------------------- */
static int hook_at;          /* enum brk__hook to scan at; 0: none */
static int hook_ran;
static brk_segment *hook_seg; /* the scanner's own handle ("breakerd") */

static void scan_hook(int id, struct brk_segment *seg, uint32_t ref)
{
	struct brk_reclaim_stats st;

	(void)seg;
	if (id != hook_at)
		return;
	hook_at = 0; /* once: the retry after a refusal claims unhooked */
	hook_ran++;
	assert_true(brk__lmap_test(hook_seg, ref)); /* marked before the claim */
	ut_rc(0, brk_reclaim(hook_seg, &st));
}

/* The scanner finds the record empty (our claim has not happened yet)
 * and unmarks it; the claim's re-mark after its CAS puts the bit back. */
static void scan_before_claim_is_undone_by_remark(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[2];
	brk_permit p;

	breakers(u, b, 2);
	hook_seg = ut_attach_other(u, NULL);
	hook_at = BRK__HOOK_MARKED;
	hook_ran = 0;
	brk__test_hook = scan_hook;
	ut_acquire_ok(b[1], &p);
	brk__test_hook = NULL;
	assert_int_equal(hook_ran, 1);
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[1])));
	assert_true(l1_bit(u->seg, brk__bidx(b[1])));
	reclaim_ok(hook_seg, &st); /* and the scan keeps it: held */
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[1])));
	ut_release_ok(&p, BRK_SUCCESS, 0);
	brk_detach(hook_seg);
}

/* The scanner runs after the claim's CAS, before its re-mark: it sees the
 * slot held and keeps the bit (the other side of the same argument). */
static void scan_after_claim_keeps_mark(void **state)
{
	struct ut *u = *state;
	brk_breaker *b[2];
	brk_permit p;

	breakers(u, b, 2);
	hook_seg = ut_attach_other(u, NULL);
	hook_at = BRK__HOOK_CLAIMED;
	hook_ran = 0;
	brk__test_hook = scan_hook;
	ut_acquire_ok(b[0], &p);
	brk__test_hook = NULL;
	assert_int_equal(hook_ran, 1);
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[0])));
	ut_release_ok(&p, BRK_SUCCESS, 0);
	brk_detach(hook_seg);
}

/* ---- the backstop sweep ------------------------------------------------ */
/* A dead owner's lease whose bit is clear (the window the sweep covers:
 * killed between claim and re-mark while a scanner unmarked the record)
 * is found within one rotation, reclaimed, and only it. */
static void sweep_finds_unmarked_dead_lease(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[20];
	struct brk_info i;
	unsigned calls = 0, freed = 0;

	breakers(u, b, 20);
	(void)child_dies_holding(&b[13], 1);
	brk__lmap_clear(u->seg, brk__bidx(b[13]));
	brk__lmap_settle(u->seg, brk__bidx(b[13]) / 64u);
	assert_int_equal(brk__lmap_l1(u->seg, 0), 0);
	while (freed == 0 && calls < u->seg->index_slots) { /* slice 1 */
		reclaim_ok(u->seg, &st);
		freed += st.dead_owner;
		calls++;
	}
	assert_int_equal(freed, 1);
	ut_info(b[13], &i);
	assert_int_equal(i.in_flight, 0);
	assert_int_equal(i.counters.reclaimed, 1);
}

/* A live lease found unmarked by the sweep is marked again (from then on
 * the marked walk watches it). */
static void sweep_remarks_unmarked_live_lease(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[10];
	brk_permit p;
	unsigned calls = 0;

	breakers(u, b, 10);
	ut_acquire_ok(b[7], &p);
	brk__lmap_clear(u->seg, brk__bidx(b[7]));
	while (!brk__lmap_test(u->seg, brk__bidx(b[7])) && calls < u->seg->index_slots) {
		reclaim_ok(u->seg, &st);
		assert_int_equal(st.dead_owner, 0);
		calls++;
	}
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[7])));
	assert_true(l1_bit(u->seg, brk__bidx(b[7])));
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* The slice follows the supervisor's interval (its heartbeat): at 60 s a
 * pass, 10 passes cover the index (period 10 minutes). */
static void sweep_slice_follows_interval(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[100];
	uint64_t n = u->seg->index_slots;

	breakers(u, b, 100);
	ut_rc(0, brk_heartbeat(u->seg, 60000));
	assert_int_equal(cursor_step(u->seg), (n + 9) / 10);
	ut_rc(0, brk_heartbeat(u->seg, 100));
	assert_int_equal(cursor_step(u->seg), slice(n));
	reclaim_ok(u->seg, &st);
	assert_true(u->seg->reclaim_visits <= slice(n));
	/* an absurd interval in the (untrusted) header: one rotation at most */
	ut_rc(0, brk_heartbeat(u->seg, UINT64_MAX));
	reclaim_ok(u->seg, &st);
	assert_int_equal(u->seg->reclaim_visits, 100);
}

/* A scan while a retirer holds a busy record (its head retired for the
 * moment of the idle check: retire.c puts it back when it finds the
 * lease) keeps the record marked, so breakerd still watches the lease. */
static void scan_during_a_busy_retirement_keeps_the_mark(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[3];
	struct brk__record *r;
	uint64_t head;
	brk_permit p;

	breakers(u, b, 3);
	ut_acquire_ok(b[1], &p);
	r = brk__brec(b[1]);
	head = uatomic_read(&r->head);
	uatomic_set(&r->head, BRK__HEAD_MAKE(BRK__KIND_RETIRED, BRK__HEAD_UNITS(head),
					     BRK__HEAD_GEN(head)));
	reclaim_ok(u->seg, &st);
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[1])));
	uatomic_set(&r->head, head); /* the retirer backs off */
	reclaim_ok(u->seg, &st);
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[1])));
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_rc(0, brk_retire(u->seg, "r/1", 0)); /* retired: its bit goes */
	assert_false(brk__lmap_test(u->seg, brk__bidx(b[1])));
}

/* A stray bit on a unit that only LOOKS like a record being retired (its
 * first word reads as a retired head: a lease token's low byte in a
 * permit block is 0xfe one time in 256, which made
 * stray_bits_and_cursor_are_harmless fail now and then) is cleared: a
 * real retiring record also carries its name's hash. */
static void a_stray_bit_on_a_unit_that_only_looks_retired_is_cleared(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[2];
	struct brk__record *r;
	uint32_t ref;

	breakers(u, b, 2);
	ref = (uint32_t)uatomic_read(&u->seg->hdr->arena_next) + 3u; /* unused */
	assert_true(ref + BRK__BREAKER_UNITS < u->seg->arena_units);
	r = brk__rec(u->seg, ref);
	uatomic_set(&r->hash, 0x1234);
	uatomic_set(&r->head, BRK__HEAD_MAKE(BRK__KIND_RETIRED, BRK__BREAKER_UNITS, 1));
	brk__lmap_mark(u->seg, ref);
	reclaim_ok(u->seg, &st);
	assert_false(brk__lmap_test(u->seg, ref));
	uatomic_set(&r->head, 0);
	uatomic_set(&r->hash, 0);
}

/* Garbage in the segment's map and cursor costs visits, never a crash or
 * a lost lease, and is cleaned up by the scan. */
static void stray_bits_and_cursor_are_harmless(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[5];
	brk_permit p;
	uint32_t k;

	breakers(u, b, 5);
	ut_acquire_ok(b[2], &p);
	for (k = 0; k < u->seg->lmap_l0_words + u->seg->lmap_l1_words; k++)
		uatomic_set(&u->seg->lmap[k], ~0ULL);
	uatomic_set(&u->seg->hdr->sweep_cursor, UINT64_MAX);
	reclaim_ok(u->seg, &st);
	assert_int_equal(st.dead_owner, 0);
	assert_true(brk__lmap_test(u->seg, brk__bidx(b[2])));
	for (k = 0; k < u->seg->lmap_l0_words; k++)
		assert_int_equal(uatomic_read(&u->seg->lmap[k]),
				 k == brk__bidx(b[2]) / 64u ? 1ULL << (brk__bidx(b[2]) % 64u) : 0);
	reclaim_ok(u->seg, &st);
	assert_true(u->seg->reclaim_visits <= 1 + slice(u->seg->index_slots));
	ut_release_ok(&p, BRK_SUCCESS, 0);
}

/* ---- owner checks: once per pid per scan ------------------------------ */
static void owner_checked_once_per_scan(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	brk_breaker *b[12];
	brk_permit p[8];
	pid_t dead;

	breakers(u, b, 12);
	for (int k = 0; k < 8; k++) /* 8 leases of this process */
		ut_acquire_ok(b[k], &p[k]);
	reclaim_ok(u->seg, &st);
	assert_int_equal(u->seg->reclaim_owner_checks, 1);
	assert_int_equal(st.dead_owner, 0);
	/* a dead owner of 4 leases: one cached check, then each lease is
	 * checked again before it is freed */
	dead = child_dies_holding(&b[8], 4);
	assert_true(dead > 0);
	reclaim_ok(u->seg, &st);
	assert_int_equal(st.dead_owner, 4);
	assert_int_equal(u->seg->reclaim_owner_checks, 1 + 1 + 4);
	for (int k = 0; k < 8; k++)
		ut_release_ok(&p[k], BRK_SUCCESS, 0);
}

/* it_kill_steps "breakerd probe lease_start" failed once in CI: breakerd
 * freed a dead worker's probe slot before counting its failed-probe
 * transition, a caller claimed a probe of the same half-open generation
 * in between, and the transition made that probe stale (its release
 * -BRK_ESTALE, the breaker open again). Held here: while the reclaimer is
 * between the two, the slot is still taken. */
static brk_breaker *race_b;
static int race_rc, race_ran;

static void probe_race_hook(int id, struct brk_segment *seg, uint32_t ref)
{
	brk_permit p;

	(void)seg;
	(void)ref;
	if (id != BRK__HOOK_PROBE_RECLAIMING)
		return;
	race_ran++;
	race_rc = brk_acquire(race_b, &p, NULL);
	if (race_rc == 0)
		(void)brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
}

static void a_reclaimed_probe_keeps_its_slot_until_its_verdict(void **state)
{
	struct ut *u = *state;
	struct brk_reclaim_stats st;
	struct brk_config c;
	struct brk_info i;
	brk_permit p;
	int k;

	ut_cfg(&c);
	c.failure_threshold = 1;
	race_b = ut_breaker(u, "ho", &c);
	ut_rc(0, brk_acquire(race_b, &p, NULL));
	ut_release_ok(&p, BRK_FAILURE, BRK_REASON_TIMEOUT);
	ut_advance_ms(u, 1001); /* cooled: the dead child's acquire probes */
	(void)child_dies_holding(&race_b, 1);
	ut_info(race_b, &i);
	assert_int_equal(i.state, BRK_HALF_OPEN);
	assert_int_equal(i.probes_in_flight, 1);
	race_ran = 0;
	brk__test_hook = probe_race_hook;
	for (k = 0; k < 4 && !race_ran; k++)
		reclaim_ok(u->seg, &st);
	brk__test_hook = NULL;
	assert_int_equal(race_ran, 1);
	/* refused while the verdict was being counted: probes busy */
	assert_int_equal(race_rc, -BRK_EOPEN);
	ut_info(race_b, &i);
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.probes_in_flight, 0);
	assert_int_equal(i.counters.stale, 0);
	assert_int_equal(i.counters.reclaimed, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(claim_marks_record),
		UT_TEST(probe_claim_marks_record),
		UT_TEST(released_record_unmarked_by_scan),
		UT_TEST(second_level1_word),
		UT_TEST(scan_before_claim_is_undone_by_remark),
		UT_TEST(scan_after_claim_keeps_mark),
		UT_TEST(sweep_finds_unmarked_dead_lease),
		UT_TEST(sweep_remarks_unmarked_live_lease),
		UT_TEST(sweep_slice_follows_interval),
		UT_TEST(scan_during_a_busy_retirement_keeps_the_mark),
		UT_TEST(stray_bits_and_cursor_are_harmless),
		UT_TEST(a_stray_bit_on_a_unit_that_only_looks_retired_is_cleared),
		UT_TEST(owner_checked_once_per_scan),
		UT_TEST(a_reclaimed_probe_keeps_its_slot_until_its_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
