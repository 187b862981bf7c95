/*
 * test_retire.c - retirement of idle records (lib/src/retire.c, alloc.c,
 * idxlock.c, refresh.c) on the fake clock: the idle rules, the
 * quarantine and its order, tombstones, re-creation from scratch,
 * generation-tagged handles, the index lock taken from a dead holder, and
 * every bad argument.
 */
#include <sys/wait.h>

#include "layout.h"
#include "internal.h"
#include "ident.h"
#include "fixture.h"

UT_GROUP_FIXTURES("retire", 8)

#define IDLE 60000u

static uint64_t head_of(brk_breaker *b)
{
	return uatomic_read(&brk__brec(b)->head);
}

static void sweep(struct ut *u, struct brk_retire_stats *st)
{
	memset(st, 0, sizeof *st);
	assert_true(brk_retire_idle(u->seg, IDLE, 0, st) >= 0);
}

/* A record is retired only after the sweep saw its counters unchanged for
 * the whole idle time; any call restarts the wait. */
static void idle_sweep_waits_for_quiet_time(void **state)
{
	struct ut *u = *state;
	struct brk_retire_stats st;
	brk_breaker *b = ut_breaker(u, "svc", NULL), *f = NULL;

	ut_call(b, BRK_SUCCESS, 0);
	sweep(u, &st); /* first sight */
	assert_int_equal(st.visited, 1);
	assert_int_equal(st.retired, 0);
	assert_int_equal(st.busy_recent, 1);
	ut_advance_ms(u, IDLE - 1);
	sweep(u, &st);
	assert_int_equal(st.retired, 0);
	assert_int_equal(st.busy_recent, 1);
	ut_call(b, BRK_SUCCESS, 0); /* activity: the wait starts again */
	ut_advance_ms(u, 1);
	sweep(u, &st);
	assert_int_equal(st.retired, 0);
	ut_advance_ms(u, IDLE - 1);
	sweep(u, &st);
	assert_int_equal(st.retired, 0);
	ut_advance_ms(u, 1);
	sweep(u, &st);
	assert_int_equal(st.retired, 1);
	ut_rc(-ENOENT, brk_breaker_find(u->seg, "svc", &f));
	ut_rc(-ENOENT, brk_retire(u->seg, "svc", 0));
}

/* brk_retire with idle_ms > 0 obeys the same watch. */
static void retire_one_with_idle_needs_the_sweep_watch(void **state)
{
	struct ut *u = *state;
	struct brk_retire_stats st;

	(void)ut_breaker(u, "svc", NULL);
	ut_rc(-EBUSY, brk_retire(u->seg, "svc", IDLE)); /* never watched */
	sweep(u, &st);
	ut_advance_ms(u, IDLE / 2);
	ut_rc(-EBUSY, brk_retire(u->seg, "svc", IDLE));
	ut_rc(0, brk_retire(u->seg, "svc", IDLE / 2));
}

/* Not closed, a forced mode, or a lease held: -EBUSY even with idle 0. */
static void busy_records_are_not_retired(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_retire_stats st;
	brk_permit p;
	brk_breaker *b, *o;

	ut_cfg(&c);
	c.max_concurrent = 2;
	b = ut_breaker(u, "bulk", &c);
	ut_acquire_ok(b, &p); /* holds a permit lease */
	ut_rc(-EBUSY, brk_retire(u->seg, "bulk", 0));
	o = ut_breaker(u, "opened", &c);
	ut_rc(0, brk_trip(o, 1000));
	ut_rc(-EBUSY, brk_retire(u->seg, "opened", 0));
	ut_rc(0, brk_reset(o));
	ut_rc(0, brk_set_mode(o, BRK_MODE_DISABLED));
	ut_rc(-EBUSY, brk_retire(u->seg, "opened", 0));
	sweep(u, &st);
	ut_advance_ms(u, IDLE);
	sweep(u, &st);
	assert_int_equal(st.retired, 0);
	assert_int_equal(st.busy_lease, 1);
	assert_int_equal(st.busy_state, 1);
	/* the permit taken before releases cleanly, then it may go */
	ut_release_ok(&p, BRK_SUCCESS, 0);
	ut_rc(0, brk_retire(u->seg, "bulk", 0));
}

/* The fallback flag is an operator's decision ("fallback until bctl
 * fallback NAME off"), and callers in fallback leave the breaker idle:
 * retiring it dropped the flag and the name read live again. */
static void a_breaker_in_fallback_is_not_retired(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_retire_stats st;
	struct brk_health h;

	ut_cfg(&c);
	(void)ut_breaker(u, "shop", &c);
	ut_rc(0, brk_set_fallback(u->seg, "shop", 1));
	ut_rc(-EBUSY, brk_retire(u->seg, "shop", 0));
	sweep(u, &st);
	ut_advance_ms(u, IDLE);
	sweep(u, &st);
	assert_int_equal(st.retired, 0);
	assert_int_equal(st.busy_state, 1);
	ut_rc(0, brk_health(u->seg, "shop", &h));
	assert_int_equal(h.state, BRK_HEALTH_FALLBACK);
	/* off again: an idle breaker like any other */
	ut_rc(0, brk_set_fallback(u->seg, "shop", 0));
	ut_rc(0, brk_retire(u->seg, "shop", 0));
}

/* A probe lease also keeps the record. */
static void probe_lease_keeps_the_record(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	brk_permit p;
	brk_breaker *b;

	ut_cfg(&c);
	b = ut_breaker(u, "svc", &c);
	ut_fail_n(b, c.failure_threshold);
	ut_advance_ms(u, ut_open_remaining(b));
	ut_acquire_ok(b, &p);
	assert_int_equal(ut_state(b), BRK_HALF_OPEN);
	ut_rc(-EBUSY, brk_retire(u->seg, "svc", 0));
	ut_release_ok(&p, BRK_SUCCESS, 0); /* closes */
	ut_rc(0, brk_retire(u->seg, "svc", 0));
}

static void bad_arguments_are_refused(void **state)
{
	struct ut *u = *state;
	struct brk_retire_stats st;
	brk_segment *ro;

	(void)ut_breaker(u, "svc", NULL);
	memset(&st, 0, sizeof st);
	ut_rc(-EINVAL, brk_retire(NULL, "svc", 0));
	ut_rc(-EINVAL, brk_retire(u->seg, NULL, 0));
	ut_rc(-EINVAL, brk_retire(u->seg, "", 0));
	ut_rc(-ENOENT, brk_retire(u->seg, "nope", 0));
	ut_rc(-EINVAL, brk_retire_idle(NULL, IDLE, 0, &st));
	ut_rc(-EINVAL, brk_retire_idle(u->seg, IDLE, 0, NULL));
	ut_rc(-EINVAL, brk_retire_idle(u->seg, 0, 0, &st));
	st.cursor = UINT32_MAX; /* out of range: starts over */
	assert_true(brk_retire_idle(u->seg, IDLE, 0, &st) >= 0);
	assert_int_equal(st.visited, 1);
	ro = ut_attach_clock(u, NULL, 1);
	ut_rc(-EROFS, brk_retire(ro, "svc", 0));
	ut_rc(-EROFS, brk_retire_idle(ro, IDLE, 0, &st));
	brk_detach(ro);
	ut_rc(0, brk_retire(u->seg, "svc", 0)); /* nothing lost */
}

/* Freed slots wait out the quarantine and are reused oldest first. */
static void quarantine_then_oldest_first(void **state)
{
	struct ut *u = *state;
	brk_breaker *b[8], *x = NULL;
	char name[16];
	uint32_t ia, ib;
	int i;

	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof name, "n%d", i);
		b[i] = ut_breaker(u, name, NULL);
	}
	ut_rc(-ENOSPC, brk_breaker_get(u->seg, "more", NULL, &x)); /* capacity */
	/* and no new run left in the arena either: only retired ones */
	u->seg->hdr->arena_next = u->seg->arena_units;
	ia = brk__bidx(b[3]);
	ib = brk__bidx(b[5]);
	ut_rc(0, brk_retire(u->seg, "n3", 0));
	ut_advance_ms(u, 1000);
	ut_rc(0, brk_retire(u->seg, "n5", 0));
	ut_rc(-ENOSPC, brk_breaker_get(u->seg, "x1", NULL, &x));
	ut_advance_ms(u, BRK_RETIRE_QUARANTINE_MS - 1001);
	ut_rc(-ENOSPC, brk_breaker_get(u->seg, "x1", NULL, &x));
	ut_advance_ms(u, 1);
	ut_rc(0, brk_breaker_get(u->seg, "x1", NULL, &x));
	assert_int_equal(brk__bidx(x), ia); /* the oldest */
	ut_rc(-ENOSPC, brk_breaker_get(u->seg, "x2", NULL, &x));
	ut_advance_ms(u, 1000);
	ut_rc(0, brk_breaker_get(u->seg, "x2", NULL, &x));
	assert_int_equal(brk__bidx(x), ib);
	assert_int_equal(brk_record_count(u->seg), 8);
}

/* Names whose chains start at the same index slot. */
static void colliding_names(struct ut *u, char out[][16], int n)
{
	uint32_t mask = u->seg->index_slots - 1, want = 0;
	int found = 0, i;

	for (i = 0; found < n && i < 1000000; i++) {
		char name[16];
		snprintf(name, sizeof name, "c%d", i);
		if (found == 0)
			want = (uint32_t)brk__hash(name) & mask;
		if (((uint32_t)brk__hash(name) & mask) == want)
			memcpy(out[found++], name, sizeof name);
	}
	assert_int_equal(found, n);
}

/* A retired name inside a chain: the entries after it that may live
 * earlier move back into its slot (backward shift), so lookups still find
 * them, the chain stays as short as it was, and the slot that ends it is
 * emptied rather than left a tomb. */
static void retired_slots_are_shifted_back_and_emptied(void **state)
{
	struct ut *u = *state;
	char nm[4][16];
	brk_breaker *b = NULL, *b2, *b3;
	uint32_t mask, p0;

	colliding_names(u, nm, 4);
	mask = u->seg->index_slots - 1;
	p0 = (uint32_t)brk__hash(nm[0]) & mask;
	(void)ut_breaker(u, nm[0], NULL);
	(void)ut_breaker(u, nm[1], NULL);
	b2 = ut_breaker(u, nm[2], NULL);
	ut_rc(0, brk_retire(u->seg, nm[1], 0));
	assert_int_equal(BRK__IDX_REC(u->seg->index[(p0 + 1) & mask]) - 1,
			 brk__bidx(b2)); /* nm[2] moved back */
	assert_true(u->seg->index[(p0 + 2) & mask] == 0);
	ut_rc(0, brk_breaker_find(u->seg, nm[2], &b));
	b3 = ut_breaker(u, nm[3], NULL);
	assert_int_equal(BRK__IDX_REC(u->seg->index[(p0 + 2) & mask]) - 1,
			 brk__bidx(b3));
	ut_rc(0, brk_breaker_find(u->seg, nm[3], &b));
	ut_rc(-ENOENT, brk_breaker_find(u->seg, nm[1], &b));
	b = ut_breaker(u, nm[1], NULL); /* the chain's next free slot */
	assert_int_equal(BRK__IDX_REC(u->seg->index[(p0 + 3) & mask]) - 1,
			 brk__bidx(b));
	ut_rc(0, brk_retire(u->seg, nm[1], 0)); /* the chain's end */
	assert_true(u->seg->index[(p0 + 3) & mask] == 0);
	ut_rc(0, brk_retire(u->seg, nm[3], 0));
	ut_rc(0, brk_retire(u->seg, nm[2], 0));
	ut_rc(0, brk_retire(u->seg, nm[0], 0));
	assert_true(u->seg->index[p0] == 0 && u->seg->index[(p0 + 1) & mask] == 0);
	ut_rc(-ENOENT, brk_breaker_find(u->seg, nm[0], &b));
}

/* A retired name created again starts fresh: closed, counters zero, a new
 * head generation on the reused run and a state generation above the old
 * one; a handle kept across it re-resolves to it. */
static void recreated_name_starts_fresh(void **state)
{
	struct ut *u = *state;
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	uint64_t h0, st0;
	uint32_t idx0;
	int k;

	ut_cfg(&c);
	c.failure_threshold = 7;
	b = ut_breaker(u, "svc", &c);
	for (k = 0; k < 6; k++)
		ut_call(b, BRK_FAILURE, BRK_REASON_OTHER);
	ut_rc(0, brk_trip(b, 1000));
	ut_rc(0, brk_reset(b));
	h0 = head_of(b);
	idx0 = brk__bidx(b);
	st0 = BRK__ST_GEN(uatomic_read(&brk__brec(b)->state));
	ut_rc(0, brk_retire(u->seg, "svc", 0));
	ut_advance_ms(u, BRK_RETIRE_QUARANTINE_MS);
	ut_call(b, BRK_SUCCESS, 0); /* the old handle: re-created */
	assert_int_equal(brk__bidx(b), idx0); /* the same run, reused */
	assert_true(BRK__HEAD_GEN(head_of(b)) == BRK__HEAD_GEN(h0) + 1);
	assert_true(BRK__ST_GEN(uatomic_read(&brk__brec(b)->state)) > st0);
	ut_info(b, &i);
	assert_int_equal(i.state, BRK_CLOSED);
	assert_int_equal(i.consecutive_failures, 0);
	assert_int_equal(i.counters.failures, 0);
	assert_int_equal(i.counters.successes, 1);
	assert_int_equal(i.counters.allowed, 1);
	assert_int_equal(i.config.failure_threshold, 7); /* original settings */
}

/* A handle from a find gets -ENOENT once its record is retired; a get of
 * the same name afterwards creates it again. */
static void found_handle_sees_enoent_after_retirement(void **state)
{
	struct ut *u = *state;
	brk_segment *other = ut_attach_other(u, NULL);
	brk_breaker *f = NULL, *g = NULL;
	brk_permit p;
	struct brk_info i;

	(void)ut_breaker(u, "svc", NULL);
	ut_rc(0, brk_breaker_find(other, "svc", &f));
	ut_rc(0, brk_retire(u->seg, "svc", 0));
	ut_rc(-ENOENT, brk_acquire(f, &p, NULL));
	ut_rc(-BRK_ESTALE, brk_release(&p, BRK_SUCCESS, 0, 0));
	ut_rc(-ENOENT, brk_breaker_info(f, &i));
	ut_rc(0, brk_breaker_get(other, "svc", NULL, &g));
	ut_rc(0, brk_breaker_info(f, &i));
	brk_detach(other);
}

/* The old handle never writes into the record that now carries another
 * name: it re-resolves its own name, the other's counters stay exact. */
static void stale_handle_never_touches_the_reusing_name(void **state)
{
	struct ut *u = *state;
	brk_segment *other = ut_attach_other(u, NULL);
	brk_breaker *old, *x;
	struct brk_info i;
	uint32_t idx;

	old = ut_breaker_on(other, "gone", NULL);
	ut_call(old, BRK_SUCCESS, 0);
	idx = brk__bidx(old);
	ut_rc(0, brk_retire(u->seg, "gone", 0));
	ut_advance_ms(u, BRK_RETIRE_QUARANTINE_MS);
	x = ut_breaker(u, "taker", NULL);
	assert_int_equal(brk__bidx(x), idx); /* took the run */
	ut_call(x, BRK_FAILURE, BRK_REASON_OTHER);
	ut_call(old, BRK_SUCCESS, 0);
	ut_call(old, BRK_FAILURE, BRK_REASON_OTHER);
	ut_rc(0, brk_trip(old, 1000));
	ut_info(x, &i);
	assert_string_equal(i.name, "taker");
	assert_int_equal(i.counters.allowed, 1);
	assert_int_equal(i.counters.failures, 1);
	assert_int_equal(i.counters.successes, 0);
	assert_int_equal(i.state, BRK_CLOSED);
	ut_info(old, &i);
	assert_string_equal(i.name, "gone");
	assert_int_equal(i.counters.allowed, 2);
	assert_int_equal(i.state, BRK_OPEN);
	brk_detach(other);
}

/* Buckets and budgets retire too; their handles re-create with their
 * settings. */
static void buckets_and_budgets_retire_and_come_back(void **state)
{
	struct ut *u = *state;
	struct brk_bucket_info bi;
	struct brk_budget_info gi;
	struct brk_retire_stats st;
	brk_bucket *k = NULL;
	brk_budget *g = NULL;
	uint64_t nb;

	ut_rc(0, brk_bucket_get(u->seg, "bk", 10.0, 5, &k));
	ut_rc(0, brk_budget_get(u->seg, "bg", 1.0, 0.5, &g));
	ut_rc(0, brk_bucket_take(k, 1, &nb));
	ut_rc(0, brk_budget_deposit(g));
	sweep(u, &st);
	ut_advance_ms(u, IDLE / 2);
	ut_rc(0, brk_bucket_take(k, 1, &nb)); /* the bucket is busy */
	sweep(u, &st);
	ut_advance_ms(u, IDLE / 2);
	sweep(u, &st);
	assert_int_equal(st.retired, 1); /* the budget */
	ut_rc(0, brk_budget_info(g, &gi)); /* re-created */
	assert_int_equal(gi.deposits, 0);
	assert_true(gi.ratio > 0.49 && gi.ratio < 0.51);
	ut_rc(0, brk_retire(u->seg, "bk", 0));
	ut_rc(0, brk_bucket_info(k, &bi));
	assert_int_equal(bi.burst, 5);
	assert_int_equal(bi.taken, 0);
}

/* A holder of the index lock that died is taken over, and the run it had
 * allocated but not published goes to the free list. */
static void dead_lock_holder_is_taken_over(void **state)
{
	struct ut *u = *state;
	struct brk__header *h = u->seg->hdr;
	brk_breaker *b = NULL;
	pid_t pid = fork();
	uint64_t n;

	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	waitpid(pid, NULL, 0);
	(void)ut_breaker(u, "first", NULL);
	n = h->arena_next;
	/* as if pid had taken the lock and allocated the breaker run at n */
	h->index_lock = BRK__TOK_MAKE(pid, 0, 5);
	h->index_lock_start = 12345;
	h->index_intent = BRK__INTENT_MAKE_KIND(BRK__INTENT_CREATE, BRK_KIND_BREAKER, n + 1);
	h->arena_next = n + BRK__BREAKER_UNITS;
	ut_rc(0, brk_breaker_get(u->seg, "second", NULL, &b));
	assert_int_equal(h->index_lock, 0);
	/* the half-made run is on the free list, in quarantine */
	assert_int_equal(h->free_head[BRK_KIND_BREAKER], n + 1);
	assert_int_equal(brk__bidx(b), n + BRK__BREAKER_UNITS);
	assert_true(brk__free_has(u->seg, (uint32_t)n, BRK_KIND_BREAKER));
}

/* A retirer that died between its head CAS and the tomb: undone. */
static void dead_retirer_is_undone(void **state)
{
	struct ut *u = *state;
	struct brk__header *h = u->seg->hdr;
	brk_breaker *b = ut_breaker(u, "svc", NULL), *f = NULL;
	uint64_t head = head_of(b);
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	h->index_lock = BRK__TOK_MAKE(pid, 0, 5);
	h->index_intent_head = head;
	h->index_intent = BRK__INTENT_MAKE(BRK__INTENT_RETIRE, brk__bidx(b) + 1);
	brk__brec(b)->head = BRK__HEAD_MAKE(BRK__KIND_RETIRED, BRK__HEAD_UNITS(head), BRK__HEAD_GEN(head));
	ut_call(b, BRK_SUCCESS, 0); /* waits for the lock, takes it over */
	assert_int_equal(head_of(b), head);
	ut_rc(0, brk_breaker_find(u->seg, "svc", &f));
	assert_int_equal(h->index_lock, 0);
}

/* A live holder: creators wait a bounded time, then -BRK_ECONTENDED;
 * lookups and calls do not wait at all. */
static void live_lock_holder_bounds_creators_only(void **state)
{
	struct ut *u = *state;
	struct brk__header *h = u->seg->hdr;
	brk_breaker *b = ut_breaker(u, "svc", NULL), *x = NULL;

	h->index_lock = BRK__TOK_MAKE(getppid(), 0, 5); /* alive */
	ut_call(b, BRK_SUCCESS, 0);
	ut_rc(0, brk_breaker_find(u->seg, "svc", &x));
	ut_rc(-BRK_ECONTENDED, brk_breaker_get(u->seg, "new", NULL, &x));
	ut_rc(-BRK_ECONTENDED, brk_retire(u->seg, "svc", 0));
	h->index_lock = 0;
	ut_rc(0, brk_breaker_get(u->seg, "new", NULL, &x));
}

/* A lock left by an earlier process that had our pid (another start
 * time) is taken over, not mistaken for one of our threads. */
static void lock_of_an_earlier_process_with_our_pid_is_taken_over(void **state)
{
	struct ut *u = *state;
	struct brk__header *h = u->seg->hdr;
	brk_breaker *b = NULL;

	h->index_lock = BRK__TOK_MAKE(getpid(), 0, 5);
	h->index_lock_start = (brk__self()->start_ticks + 1) & 0xffffffffffULL;
	ut_rc(0, brk_breaker_get(u->seg, "svc", NULL, &b));
	assert_int_equal(h->index_lock, 0);
}

/* Short-lived names among long-lived ones, retired round after round:
 * retired names' slots do not pile up as tombs (they once filled the
 * whole index, and every miss scanned all of it), and every long-lived
 * name is still found. */
static void churn_keeps_the_index_open(void **state)
{
	struct ut *u = ut_new("rchurn", 256, 0);
	brk_breaker *b = NULL;
	uint32_t i, empty = 0, tombs = 0, round, k;
	char name[32];

	(void)state;
	for (k = 0; k < 192; k++) {
		snprintf(name, sizeof name, "keep/%u", k);
		ut_breaker(u, name, NULL);
	}
	for (round = 0; round < 300; round++) {
		for (k = 0; k < 32; k++) {
			snprintf(name, sizeof name, "tmp/%u/%u", round, k);
			ut_breaker(u, name, NULL);
		}
		for (k = 0; k < 32; k++) {
			snprintf(name, sizeof name, "tmp/%u/%u", round, k);
			ut_rc(0, brk_retire(u->seg, name, 0));
		}
		ut_advance_ms(u, BRK_RETIRE_QUARANTINE_MS + 1000);
	}
	for (i = 0; i < u->seg->index_slots; i++) {
		empty += u->seg->index[i] == 0;
		tombs += u->seg->index[i] == BRK__IDX_TOMB;
	}
	assert_int_equal(empty + tombs, u->seg->index_slots - 192);
	assert_true(empty >= u->seg->index_slots / 4); /* 0 before the fix */
	for (k = 0; k < 192; k++) {
		snprintf(name, sizeof name, "keep/%u", k);
		ut_rc(0, brk_breaker_find(u->seg, name, &b));
	}
	ut_rc(-ENOENT, brk_breaker_find(u->seg, "tmp/0/0", &b));
	ut_free(u);
}

/* A corrupt free list naming a live record (the segment is untrusted):
 * the list is dropped, the live record is never handed to a new name. */
static void corrupt_free_list_never_hands_out_a_live_record(void **state)
{
	struct ut *u = *state;
	brk_breaker *v = ut_breaker(u, "victim", NULL), *n;
	uint64_t head = head_of(v);

	u->seg->hdr->free_head[BRK_KIND_BREAKER] = brk__bidx(v) + 1;
	u->seg->hdr->free_tail[BRK_KIND_BREAKER] = brk__bidx(v) + 1;
	ut_advance_ms(u, BRK_RETIRE_QUARANTINE_MS + 1000);
	n = ut_breaker(u, "newcomer", NULL);
	assert_int_not_equal(brk__bidx(n), brk__bidx(v));
	assert_int_equal(head_of(v), head);
	assert_int_equal(u->seg->hdr->free_head[BRK_KIND_BREAKER], 0);
	ut_rc(0, brk_breaker_find(u->seg, "victim", &n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(churn_keeps_the_index_open),
		UT_TEST(corrupt_free_list_never_hands_out_a_live_record),
		UT_TEST(idle_sweep_waits_for_quiet_time),
		UT_TEST(retire_one_with_idle_needs_the_sweep_watch),
		UT_TEST(busy_records_are_not_retired),
		UT_TEST(a_breaker_in_fallback_is_not_retired),
		UT_TEST(probe_lease_keeps_the_record),
		UT_TEST(bad_arguments_are_refused),
		UT_TEST(quarantine_then_oldest_first),
		UT_TEST(retired_slots_are_shifted_back_and_emptied),
		UT_TEST(recreated_name_starts_fresh),
		UT_TEST(found_handle_sees_enoent_after_retirement),
		UT_TEST(stale_handle_never_touches_the_reusing_name),
		UT_TEST(buckets_and_budgets_retire_and_come_back),
		UT_TEST(dead_lock_holder_is_taken_over),
		UT_TEST(dead_retirer_is_undone),
		UT_TEST(live_lock_holder_bounds_creators_only),
		UT_TEST(lock_of_an_earlier_process_with_our_pid_is_taken_over),
	};
	return cmocka_run_group_tests_name("retire", tests, NULL, NULL);
}
