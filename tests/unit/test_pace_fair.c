/*
 * test_pace_fair.c - fair waits on a pace (breaker.h "Fair waits", issue
 * 25): reservations on the GCRA TAT, on the injected fake clock. FIFO
 * order, a dead waiter's cost, a cut while tickets are outstanding, a
 * horizon (deadline) that refuses without reserving, cancel, priorities,
 * brk_admit() reserving on a breaker's implicit pace, and a threads race
 * (suite threads).
 *
 * Each test was checked to fail with its rule reverted (see the report of
 * the branch "fair" and docs/design/pacing.md "Fair waits").
 */
#include <pthread.h>
#include <stdlib.h>

#include "fixture.h"

#include "limits.h" /* brk__bk_h */
#include "internal.h" /* the segment's epoch, for the cut's time */

UT_GROUP_FIXTURES("pfair", 64)

#define T100 (100 * UT_NS_PER_MS) /* 10/s */

static brk_bucket *pace(struct ut *u, const char *name, double ceiling,
			uint32_t burst, uint32_t reserve)
{
	struct brk_pace_config c;
	brk_bucket *k = NULL;

	ut_rc(0, brk_pace_config_init(&c));
	c.ceiling_per_s = ceiling;
	c.burst = burst;
	c.reserve_pct = reserve;
	ut_rc(0, brk_pace_get(u->seg, name, &c, &k));
	return k;
}

static struct brk_bucket_info info(brk_bucket *k)
{
	struct brk_bucket_info bi;

	ut_rc(0, brk_bucket_info(k, &bi));
	return bi;
}

/* Reserve (horizon: the cap) and return the slot. */
static uint64_t reserve(brk_bucket *k, int prio, struct brk_ticket *t)
{
	ut_rc(0, brk_ticket_init(t));
	ut_rc(0, brk_pace_reserve(k, prio, UINT64_MAX, t));
	return t->at_ns;
}

/* Reservations are served in the order their CASes won: each slot one
 * interval after the last, and a caller that did not reserve cannot take
 * a reserved slot. */
static void reservations_are_served_in_arrival_order(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "fifo", 10.0, 1, 0);
	struct brk_ticket t[4];
	uint64_t t0 = ut_now_ns(u), nb = 0;
	int i;

	for (i = 0; i < 4; i++)
		assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &t[i]), t0 + i * T100);
	for (i = 0; i < 4; i++) {
		ut_set_ns(u, t0 + i * T100);
		if (i > 0) {
			/* a late-comer's take finds the slot reserved */
			ut_rc(-BRK_ENOTOKENS, brk_pace_take(k, BRK_PRIORITY_NORMAL,
							    NULL, &nb));
			ut_set_ns(u, t0 + i * T100 - 1);
			ut_rc(1, brk_ticket_check(k, &t[i])); /* not yet */
			ut_set_ns(u, t0 + i * T100);
		}
		ut_rc(0, brk_ticket_check(k, &t[i]));
		assert_int_equal(t[i].taken_at_ns, t0 + i * T100);
		ut_rc(-EINVAL, brk_ticket_check(k, &t[i])); /* finished */
	}
	assert_int_equal(info(k).taken, 4);
}

/* A waiter that dies holding a ticket costs its one slot and nothing
 * more: the tickets behind it go at their own slots, and the next
 * reservation is one interval later than it would have been. */
static void a_dead_waiter_costs_exactly_one_slot(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "dead", 10.0, 1, 0);
	struct brk_ticket a, dead, c, e;
	uint64_t t0 = ut_now_ns(u), nb = 0;

	reserve(k, BRK_PRIORITY_NORMAL, &a);
	reserve(k, BRK_PRIORITY_NORMAL, &dead); /* never checked again */
	reserve(k, BRK_PRIORITY_NORMAL, &c);
	ut_rc(0, brk_ticket_check(k, &a));
	/* its slot passes unused: nobody else may take it */
	ut_set_ns(u, t0 + T100);
	ut_rc(-BRK_ENOTOKENS, brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb));
	/* the next ticket is not delayed by it */
	ut_set_ns(u, t0 + 2 * T100);
	ut_rc(0, brk_ticket_check(k, &c));
	assert_int_equal(c.taken_at_ns, t0 + 2 * T100);
	/* and a new reservation comes right after: one slot lost, no more */
	assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &e), t0 + 3 * T100);
}

/* A cut while tickets are outstanding keeps the queue: each ticket's
 * slot becomes c + i x T_new (i its position), in order, none before it,
 * and the next reservation queues after them at the new rate. */
static void a_cut_respaces_outstanding_tickets_in_order(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "cut", 10.0, 1, 0);
	struct brk_ticket t[4], e;
	uint64_t t0 = ut_now_ns(u), c, tn, ep = u->seg->epoch_ns;
	int i;

	for (i = 0; i < 4; i++)
		reserve(k, BRK_PRIORITY_NORMAL, &t[i]);
	ut_rc(0, brk_ticket_check(k, &t[0]));
	ut_advance_ms(u, 10);
	ut_rc(0, brk_pace_cut(k, 5000)); /* to 5/s */
	c = ep + (ut_now_ns(u) - ep + UT_NS_PER_MS - 1) / UT_NS_PER_MS * UT_NS_PER_MS;
	tn = info(k).interval_ns;
	assert_true(tn >= 2 * T100 && tn < 2 * T100 + UT_NS_PER_MS);
	/* each one, woken at its old slot, is sent to its new one */
	for (i = 1; i < 4; i++) {
		ut_set_ns(u, t0 + i * T100 > ut_now_ns(u) ? t0 + i * T100 : ut_now_ns(u));
		ut_rc(1, brk_ticket_check(k, &t[i]));
		assert_int_equal(t[i].at_ns, c + i * tn);
	}
	for (i = 1; i < 4; i++) {
		ut_set_ns(u, c + i * tn - 1);
		ut_rc(1, brk_ticket_check(k, &t[i]));
		assert_int_equal(t[i].at_ns, c + i * tn); /* not moved again */
		ut_set_ns(u, c + i * tn);
		ut_rc(0, brk_ticket_check(k, &t[i]));
	}
	/* the queue was kept: a reservation made at the first new slot
	 * would have come before the last ticket without the re-spacing */
	ut_set_ns(u, c + tn);
	assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &e), c + 4 * tn);
}

/* A ticket that slept through two cuts keeps its place: each cut stores
 * the number before the first ticket it re-spaced (BRK__BK_CUTQ), so a
 * ticket finds its position from the last cut alone. */
static void a_ticket_that_slept_through_two_cuts_keeps_its_place(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "cut2", 10.0, 1, 0);
	struct brk_ticket a, b, c, e;
	uint64_t c2, t2, ep = u->seg->epoch_ns;

	reserve(k, BRK_PRIORITY_NORMAL, &a);
	reserve(k, BRK_PRIORITY_NORMAL, &b);
	reserve(k, BRK_PRIORITY_NORMAL, &c);
	ut_rc(0, brk_ticket_check(k, &a));
	ut_advance_ms(u, 10);
	ut_rc(0, brk_pace_cut(k, 5000));
	ut_advance_ms(u, 10);
	ut_rc(0, brk_pace_cut(k, 2500));
	c2 = ep + (ut_now_ns(u) - ep + UT_NS_PER_MS - 1) / UT_NS_PER_MS * UT_NS_PER_MS;
	t2 = info(k).interval_ns;
	ut_rc(1, brk_ticket_check(k, &b));
	assert_int_equal(b.at_ns, c2 + t2);
	ut_rc(1, brk_ticket_check(k, &c));
	assert_int_equal(c.at_ns, c2 + 2 * t2);
	/* and the queue after them */
	assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &e), c2 + 3 * t2);
	ut_set_ns(u, b.at_ns);
	ut_rc(0, brk_ticket_check(k, &b));
}

/* A queue reserved while the rate grew (wider gaps first) is re-spaced
 * by number at a cut: exactly one new interval apart, no gaps (by time
 * at the rate of the cut or the ticket's own, the ones reserved at the
 * faster rate would count the wider gaps ahead as several places). */
static void a_cut_respaces_a_queue_of_mixed_spacing_without_gaps(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "mixed", 10.0, 1, 0);
	struct brk_ticket t[5];
	uint64_t c, tn, ep = u->seg->epoch_ns, t_slow, t_fast;
	int i;

	ut_rc(0, brk_pace_cut(k, 2000)); /* 2/s, held 10 s, then probing */
	ut_advance_ms(u, 10000);
	t_slow = info(k).interval_ns;
	for (i = 0; i < 3; i++)
		reserve(k, BRK_PRIORITY_NORMAL, &t[i]);
	ut_rc(0, brk_ticket_check(k, &t[0]));
	ut_set_ns(u, t[1].at_ns);
	ut_rc(0, brk_ticket_check(k, &t[1]));
	t_fast = info(k).interval_ns;
	assert_true(t_fast * 3 / 2 < t_slow); /* the probe sped it up */
	reserve(k, BRK_PRIORITY_NORMAL, &t[3]);
	reserve(k, BRK_PRIORITY_NORMAL, &t[4]);
	ut_rc(0, brk_pace_cut(k, 1000));
	c = ep + (ut_now_ns(u) - ep + UT_NS_PER_MS - 1) / UT_NS_PER_MS * UT_NS_PER_MS;
	tn = info(k).interval_ns;
	for (i = 2; i < 5; i++) {
		ut_rc(1, brk_ticket_check(k, &t[i]));
		assert_int_equal(t[i].at_ns, c + (uint64_t)(i - 1) * tn);
	}
}

/*
 * A pace waited on by reservations still learns its limit: the sends of
 * a closed loop that always has a queue reserved follow the learned rate
 * as a probe raises it. 8 waiters each hold a ticket (as 8 bctl exec
 * loops do); when one is due it is taken and reserves again at once. A
 * reservation's interval is the rate at its slot (the curve is known to
 * its next cut), not at the time it was made: with the latter a queue
 * reserved during the hold (8 x 200 ms ahead) went out at the held rate
 * for as long again after the probe began, the probe's rate reached the
 * ceiling before a faster request was sent, no 429 answered it and the
 * pace "learned" the ceiling (it_pace_nginx: 20.0 where 4.86 before the
 * fair merge). The takes in each 250 ms of the second after the hold are
 * what the curve allows there (within the burst), and none go early.
 */
static void a_reserved_queue_sends_at_the_learned_rate_as_a_probe_raises_it(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "probe", 20.0, 2, 0);
	struct brk_ticket t[8];
	uint64_t taken[400], h, w, end;
	double allowed[2] = { 0 }, held;
	unsigned n = 0, i, j, sent[2] = { 0 };

	ut_rc(0, brk_pace_cut(k, 5000)); /* held at 5/s, then probing */
	held = info(k).learned_per_s;
	assert_true(held > 4.9 && held <= 5.0);
	for (i = 0; i < 8; i++)
		reserve(k, BRK_PRIORITY_NORMAL, &t[i]);
	/* the hold's end: the first ms whose rate is above the held one */
	for (h = ut_now_ns(u);; h += UT_NS_PER_MS) {
		uint64_t keep = ut_now_ns(u);

		ut_set_ns(u, h);
		w = info(k).learned_per_s > held;
		ut_set_ns(u, keep);
		if (w)
			break;
	}
	end = h + 1000 * UT_NS_PER_MS;
	while (n < 400) {
		unsigned m = 0;

		for (i = 1; i < 8; i++)
			if (t[i].at_ns < t[m].at_ns)
				m = i;
		if (t[m].at_ns > end)
			break;
		if (t[m].at_ns > ut_now_ns(u))
			ut_set_ns(u, t[m].at_ns);
		ut_rc(0, brk_ticket_check(k, &t[m]));
		taken[n++] = t[m].taken_at_ns;
		reserve(k, BRK_PRIORITY_NORMAL, &t[m]);
	}
	assert_int_equal(info(k).cuts, 1); /* nothing but the one cut */
	/* what the curve allows in each half second: its integral */
	for (w = h; w < end; w += UT_NS_PER_MS) {
		ut_set_ns(u, w);
		allowed[(w - h) / (500 * UT_NS_PER_MS)] += info(k).learned_per_s / 1e3;
	}
	for (j = 0; j < n; j++)
		if (taken[j] >= h && taken[j] < end)
			sent[(taken[j] - h) / (500 * UT_NS_PER_MS)]++;
	for (i = 0; i < 2; i++) {
		print_message("  half second %u after the hold: %u sent, the curve allows %.1f\n",
			      i, sent[i], allowed[i]);
		/* within the burst (2) of the curve, either way */
		assert_true(sent[i] + 2.0 >= allowed[i]);
		assert_true(sent[i] <= allowed[i] + 2.0 + 1.0);
	}
	/* and not early: no take before its interval on the curve */
	for (j = 1; j < n; j++)
		assert_true(taken[j] > taken[j - 1]);
}

/* A slot past the horizon (the caller's deadline) reserves nothing and
 * says when it would have been; brk_admit() refuses EXPIRED at once. */
static void a_slot_past_the_deadline_reserves_nothing(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "dl", 10.0, 1, 0);
	struct brk_ticket t[3], late;
	struct brk_admit_req q;
	struct brk_admission a;
	uint64_t t0 = ut_now_ns(u);

	reserve(k, BRK_PRIORITY_NORMAL, &t[0]);
	reserve(k, BRK_PRIORITY_NORMAL, &t[1]);
	ut_rc(0, brk_ticket_init(&late));
	ut_rc(-BRK_ENOTOKENS, brk_pace_reserve(k, BRK_PRIORITY_NORMAL,
					       2 * T100 - 1, &late));
	assert_int_equal(late.at_ns, t0 + 2 * T100);
	ut_rc(-EINVAL, brk_ticket_check(k, &late)); /* holds nothing */
	/* brk_admit: one interval of tokens owed (step 1 passes), but the
	 * slot is two intervals away, past the deadline: EXPIRED */
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.pace = k;
	q.max_wait_ms = 10000;
	q.deadline_ns = t0 + 150 * UT_NS_PER_MS;
	ut_rc(-BRK_EEXPIRED, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_EXPIRED);
	assert_int_equal(a.wait_ms, 200);
	/* nothing was reserved: the slot is still the next one */
	assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &t[2]), t0 + 2 * T100);
	/* the horizon is capped whatever the caller gives */
	{
		struct brk_ticket far;
		int i, rc = 0;

		for (i = 0; i < 700 && rc == 0; i++) {
			ut_rc(0, brk_ticket_init(&far));
			rc = brk_pace_reserve(k, BRK_PRIORITY_HIGH, UINT64_MAX, &far);
		}
		ut_rc(-BRK_ENOTOKENS, rc);
		assert_true(far.at_ns > t0 + BRK_PACE_MAX_HORIZON_MS * UT_NS_PER_MS);
		assert_true(far.at_ns <= t0 + BRK_PACE_MAX_HORIZON_MS * UT_NS_PER_MS +
					   T100);
	}
}

/* A TAT word years ahead (garbage: a hostile or broken writer) is not
 * believed: a pace's queue is legitimate up to the reservation horizon
 * (BRK_PACE_MAX_HORIZON_MS) plus a burst, so a take or a reservation
 * heals the word to there and is refused for at most that long, not for
 * years (on the shared word and on the normal share's). */
static void a_tat_years_ahead_is_healed_to_the_horizon(void **state)
{
	struct ut *u = *state;
	struct brk_pace_config pc;
	brk_bucket *k = NULL, *dflt = pace(u, "far-floor", 10.0, 1, 0);
	struct brk__record *r;
	uint64_t cap = BRK_PACE_MAX_HORIZON_MS * UT_NS_PER_MS, years, t0, nb = 0;
	struct brk_ticket t;
	int w;

	/* the floor's (ceiling / 100) spacing after a cut: hours, not years */
	t0 = ut_now_ns(u);
	uatomic_set(&brk__xw(brk__brec(brk__bk_h(dflt)))[BRK__BK_TAT],
		    t0 + 10ull * 365 * 24 * 3600 * UT_NS_PER_S);
	ut_rc(-BRK_ENOTOKENS, brk_pace_take(dflt, BRK_PRIORITY_NORMAL, NULL, &nb));
	assert_true(nb <= t0 + 2ull * 3600 * UT_NS_PER_S);
	/* floor = ceiling: the horizon itself */
	ut_rc(0, brk_pace_config_init(&pc));
	pc.ceiling_per_s = 10.0;
	pc.floor_per_s = 10.0;
	pc.burst = 1;
	pc.reserve_pct = 20;
	ut_rc(0, brk_pace_get(u->seg, "far", &pc, &k));
	r = brk__brec(brk__bk_h(k));
	for (w = 0; w < 2; w++) {
		t0 = ut_now_ns(u);
		years = t0 + 10ull * 365 * 24 * 3600 * UT_NS_PER_S;
		uatomic_set(&brk__xw(r)[w ? BRK__BK_TAT_NORMAL : BRK__BK_TAT], years);
		ut_rc(-BRK_ENOTOKENS, brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb));
		assert_true(nb <= t0 + cap + 4 * T100);
		ut_rc(0, brk_ticket_init(&t));
		/* high priority reserves on the shared word, normal on its own */
		ut_rc(-BRK_ENOTOKENS, brk_pace_reserve(k, w ? BRK_PRIORITY_NORMAL
							    : BRK_PRIORITY_HIGH,
						       UINT64_MAX, &t));
		assert_true(t.at_ns <= t0 + cap + 4 * T100);
		ut_set_ns(u, t0 + cap + 4 * T100);
		ut_rc(0, brk_pace_take(k, BRK_PRIORITY_NORMAL, NULL, &nb));
	}
}

/* A ticket given to another pace's check or cancel is refused (-EINVAL)
 * and left as it was: it still holds its reservation, which its own pace
 * then cancels (the slot given back). Before, the other pace's cancel
 * answered 0 ("lost, or held nothing") and kept the reservation held,
 * so the caller believed it finished and its next reserve with it was
 * -EINVAL ("still holds one"). A cancel twice, a check after cancel or
 * after its take: nothing held. */
static void a_ticket_given_to_another_pace_is_refused_and_kept(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "mine", 10.0, 1, 0), *o = pace(u, "other", 10.0, 1, 0);
	struct brk_ticket t;
	uint64_t t0 = ut_now_ns(u);

	assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &t), t0);
	ut_rc(-EINVAL, brk_ticket_check(o, &t));
	ut_rc(-EINVAL, brk_ticket_cancel(o, &t));
	/* still held: not reserved again, given back by its own pace */
	ut_rc(-EINVAL, brk_pace_reserve(k, BRK_PRIORITY_NORMAL, UINT64_MAX, &t));
	ut_rc(1, brk_ticket_cancel(k, &t));
	ut_rc(0, brk_ticket_cancel(k, &t)); /* twice: nothing held */
	ut_rc(-EINVAL, brk_ticket_check(k, &t));
	assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &t), t0); /* free again */
	ut_rc(0, brk_ticket_check(k, &t));
	ut_rc(0, brk_ticket_cancel(k, &t)); /* after its take: nothing held */
	ut_rc(-EINVAL, brk_ticket_check(k, &t));
	assert_int_equal(info(k).taken, 1);
	assert_int_equal(info(o).taken, 0);
}

/* A garbage cut-queue word (BRK__BK_CUTQ: the number before the first
 * ticket a cut re-spaced) does not send a ticket years away: a ticket's
 * place by number is at most its place by time (its slot's distance from
 * the cut at the interval it reserved with, which over-counts when the
 * slots before it were wider), so the larger one is not believed. */
static void a_garbage_cut_queue_word_moves_a_ticket_no_later_than_its_time_place(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "cutq", 10.0, 1, 0);
	struct brk__record *r = brk__brec(brk__bk_h(k));
	struct brk_ticket t[4];
	uint64_t ep = u->seg->epoch_ns, c, tn, w, mask = (1ull << 40) - 1;
	int i;

	for (i = 0; i < 4; i++)
		reserve(k, BRK_PRIORITY_NORMAL, &t[i]);
	ut_rc(0, brk_ticket_check(k, &t[0]));
	ut_advance_ms(u, 10);
	ut_rc(0, brk_pace_cut(k, 5000)); /* to 5/s */
	c = ep + (ut_now_ns(u) - ep + UT_NS_PER_MS - 1) / UT_NS_PER_MS * UT_NS_PER_MS;
	tn = info(k).interval_ns;
	/* the cut's word, its number 2^38 before t[3]'s */
	w = uatomic_read(&brk__xw(r)[BRK__BK_CUTQ]);
	uatomic_set(&brk__xw(r)[BRK__BK_CUTQ],
		    (w & ~mask) | ((t[3].private_[6] - (1ull << 38)) & mask));
	ut_rc(1, brk_ticket_check(k, &t[3]));
	assert_int_equal(t[3].at_ns, c + 3 * tn); /* its place by time */
	ut_set_ns(u, c + 3 * tn);
	ut_rc(0, brk_ticket_check(k, &t[3]));
}

/* A ceiling raised (brk_pace_update()) while tickets are outstanding does
 * not put new reservations between them: the tickets keep their slots
 * (reserved at the old rate), so the TAT is kept and new reservations
 * queue after the last of them at the new rate. Before, the TAT was
 * rescaled to the new rate (owed time halved at twice the ceiling): 10
 * tickets at 10/s up to +900 ms, then 10 new ones at +500 .. +950 ms -
 * 15 sends in 450 ms, 33/s against a ceiling of 20/s. */
static void a_ceiling_raise_queues_new_reservations_after_outstanding_tickets(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "raise", 10.0, 1, 0);
	struct brk_ticket t[10], n[10];
	struct brk_pace_config pc;
	uint64_t tn;
	int i;

	for (i = 0; i < 10; i++)
		reserve(k, BRK_PRIORITY_NORMAL, &t[i]);
	ut_rc(0, brk_pace_config_init(&pc));
	pc.ceiling_per_s = 20.0;
	ut_rc(0, brk_pace_update(k, &pc, BRK_PACE_F_CEILING));
	tn = info(k).interval_ns;
	assert_int_equal(tn, T100 / 2);
	for (i = 0; i < 10; i++) {
		reserve(k, BRK_PRIORITY_NORMAL, &n[i]);
		assert_true(n[i].at_ns >= t[9].at_ns + (uint64_t)(i + 1) * tn);
	}
	for (i = 0; i < 10; i++) {
		ut_set_ns(u, t[i].at_ns);
		ut_rc(0, brk_ticket_check(k, &t[i]));
	}
}

/* Cancel gives the slot back when it is still the last one reserved;
 * otherwise it is lost (one interval), never handed out twice. */
static void cancel_of_the_last_ticket_gives_its_slot_back(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "cancel", 10.0, 1, 0);
	struct brk_ticket a, b, c, d, e;
	uint64_t t0 = ut_now_ns(u);

	reserve(k, BRK_PRIORITY_NORMAL, &a);
	reserve(k, BRK_PRIORITY_NORMAL, &b);
	reserve(k, BRK_PRIORITY_NORMAL, &c);
	ut_rc(1, brk_ticket_cancel(k, &c));
	ut_rc(0, brk_ticket_cancel(k, &c)); /* finished: nothing again */
	assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &d), t0 + 2 * T100);
	/* b is not the last: its slot is lost, d keeps its own */
	ut_rc(0, brk_ticket_cancel(k, &b));
	assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &e), t0 + 3 * T100);
}

/* With a reserve, normal priority queues on its own share; high priority
 * reserves on the shared TAT and passes every normal waiter not yet at
 * its slot. A normal ticket whose shared slot high priority used gets
 * the next one. */
static void high_priority_passes_queued_normal_waiters(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "prio", 10.0, 1, 50); /* normal: 5/s */
	struct brk_ticket n[4], h;
	uint64_t t0 = ut_now_ns(u);
	int i;

	for (i = 0; i < 4; i++)
		assert_int_equal(reserve(k, BRK_PRIORITY_NORMAL, &n[i]),
				 t0 + i * 2 * T100);
	ut_rc(0, brk_ticket_check(k, &n[0]));
	/* high, arriving after all four, goes before the three waiting */
	assert_int_equal(reserve(k, BRK_PRIORITY_HIGH, &h), t0 + T100);
	assert_true(h.at_ns < n[1].at_ns);
	ut_set_ns(u, t0 + T100);
	ut_rc(0, brk_ticket_check(k, &h));
	/* n[1] at its slot: the shared TAT has it */
	ut_set_ns(u, t0 + 2 * T100);
	ut_rc(0, brk_ticket_check(k, &n[1]));
	/* high takes n[2]'s shared slot just before it: n[2] gets the next */
	ut_set_ns(u, t0 + 4 * T100);
	ut_rc(0, brk_pace_take(k, BRK_PRIORITY_HIGH, NULL, NULL));
	ut_rc(1, brk_ticket_check(k, &n[2]));
	assert_int_equal(n[2].at_ns, t0 + 5 * T100);
	ut_set_ns(u, t0 + 5 * T100);
	ut_rc(0, brk_ticket_check(k, &n[2]));
	assert_int_equal(info(k).high_taken, 2);
}

/* brk_admit() with a breaker that has an implicit pace reserves on it
 * (step 3) and acquires without the implicit take: one token per job,
 * and the permit's start is the token's time (the pace's cut rule). */
static void admit_reserves_on_the_implicit_pace_once(void **state)
{
	struct ut *u = *state;
	struct brk_config cfg;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_refusal why;
	brk_breaker *b;
	brk_bucket *k;
	brk_permit p;
	int rc, n = 0;

	brk_config_init(&cfg);
	cfg.max_wait_ms = 10000;
	b = ut_breaker(u, "api", &cfg);
	ut_acquire_ok(b, &p);
	ut_rc(0, brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 0));
	ut_rc(0, brk_bucket_find(u->seg, "api:pace", &k));
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.breaker = b;
	q.max_wait_ms = 10000;
	/* the first token is an interval away: RATE_LIMITED by the pace
	 * (the fake clock cannot sleep), nothing reserved, nothing held */
	ut_rc(-BRK_ENOTOKENS, brk_admit(&q, &a));
	assert_int_equal(a.code, BRK_ADMIT_RATE_LIMITED);
	assert_string_equal(a.by, "api:pace");
	assert_true(a.wait_ms >= 1);
	while ((rc = brk_admit(&q, &a)) == -BRK_ENOTOKENS && n++ < 50)
		ut_advance_ms(u, a.wait_ms);
	ut_rc(0, rc);
	assert_int_equal(info(k).taken, 1); /* not taken again by acquire */
	assert_true(a.taken_at_ns != 0);
	assert_int_equal(a.permit.start_ns_, a.taken_at_ns);
	ut_rc(0, brk_admit_release(&a, BRK_SUCCESS, BRK_REASON_NONE, 0));
	assert_int_equal(info(k).ok, 1);
	/* brk_acquire() alone still takes from it */
	memset(&why, 0, sizeof(why));
	rc = brk_acquire(b, &p, &why);
	assert_true(rc == 0 || (rc == -BRK_ECOOLING && why.cause == BRK_CAUSE_PACED));
	if (rc == 0) {
		assert_int_equal(info(k).taken, 2);
		ut_rc(0, brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0));
	}
}

/* Threads (suite threads, run under TSan): racing reservations on the
 * one TAT, the clock standing still, get every slot exactly once, one
 * interval apart, and each ticket its own number. */
#define RACERS 4
#define PER_RACER 200

struct racer {
	brk_bucket *k;
	pthread_barrier_t *bar;
	uint64_t at[PER_RACER];
	uint64_t seq[PER_RACER];
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct brk_ticket t;
	int i;

	pthread_barrier_wait(r->bar);
	for (i = 0; i < PER_RACER; i++) {
		brk_ticket_init(&t);
		if (brk_pace_reserve(r->k, BRK_PRIORITY_NORMAL, UINT64_MAX, &t) != 0)
			break;
		r->at[i] = t.at_ns;
		r->seq[i] = t.private_[6];
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void threads_race_reservations_get_every_slot_once(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "race", 1000.0, 1, 0); /* 1 ms */
	static struct racer r[RACERS];
	static uint64_t all[RACERS * PER_RACER], seqs[RACERS * PER_RACER];
	pthread_barrier_t bar;
	pthread_t th[RACERS];
	uint64_t t0 = ut_now_ns(u);
	unsigned i, j, n = 0;

	pthread_barrier_init(&bar, NULL, RACERS);
	for (i = 0; i < RACERS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].k = k;
		r[i].bar = &bar;
		assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
	}
	for (i = 0; i < RACERS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	for (i = 0; i < RACERS; i++)
		for (j = 0; j < PER_RACER; j++, n++) {
			all[n] = r[i].at[j];
			seqs[n] = r[i].seq[j];
		}
	qsort(all, n, sizeof(all[0]), cmp_u64);
	qsort(seqs, n, sizeof(seqs[0]), cmp_u64);
	for (i = 0; i < n; i++) {
		assert_int_equal(all[i], t0 + (uint64_t)i * UT_NS_PER_MS);
		assert_int_equal(seqs[i], i + 1u);
	}
}

/* A ticket reserved before a cut (and re-spaced by it) reports its
 * reservation's time: its 429 is an answer of before the cut and does not
 * cut again; a ticket reserved after the cut cuts. (Without the rule each
 * re-spaced ticket sent into the still-drained upstream cut again:
 * it_pace_nginx learned 3.45 against nginx's 5, one run in three.) */
static void a_ticket_queued_before_a_cut_does_not_cut_again(void **state)
{
	struct ut *u = *state;
	brk_bucket *k = pace(u, "cutrule", 10.0, 1, 0);
	struct brk_ticket a, b, c;
	uint64_t t0 = ut_now_ns(u);
	int rc, i;

	reserve(k, BRK_PRIORITY_NORMAL, &a);
	reserve(k, BRK_PRIORITY_NORMAL, &b);
	ut_rc(0, brk_ticket_check(k, &a));
	ut_advance_ms(u, 5);
	/* a's answer: 429, the first cut */
	ut_rc(1, brk_pace_report(k, a.taken_at_ns, BRK_PACE_LIMITED, 0));
	for (i = 0, rc = 1; rc == 1 && i < 100; i++) {
		if (b.at_ns > ut_now_ns(u))
			ut_set_ns(u, b.at_ns);
		rc = brk_ticket_check(k, &b);
	}
	ut_rc(0, rc);
	assert_int_equal(b.taken_at_ns, t0); /* its reservation's time */
	ut_rc(0, brk_pace_report(k, b.taken_at_ns, BRK_PACE_LIMITED, 0));
	/* reserved after the cut: its 429 cuts */
	reserve(k, BRK_PRIORITY_NORMAL, &c);
	for (i = 0, rc = 1; rc == 1 && i < 100; i++) {
		if (c.at_ns > ut_now_ns(u))
			ut_set_ns(u, c.at_ns);
		rc = brk_ticket_check(k, &c);
	}
	ut_rc(0, rc);
	assert_true(c.taken_at_ns > t0);
	ut_rc(1, brk_pace_report(k, c.taken_at_ns, BRK_PACE_LIMITED, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(a_ticket_queued_before_a_cut_does_not_cut_again),
		UT_TEST(reservations_are_served_in_arrival_order),
		UT_TEST(a_dead_waiter_costs_exactly_one_slot),
		UT_TEST(a_cut_respaces_outstanding_tickets_in_order),
		UT_TEST(a_ticket_that_slept_through_two_cuts_keeps_its_place),
		UT_TEST(a_cut_respaces_a_queue_of_mixed_spacing_without_gaps),
		UT_TEST(a_reserved_queue_sends_at_the_learned_rate_as_a_probe_raises_it),
		UT_TEST(a_slot_past_the_deadline_reserves_nothing),
		UT_TEST(a_tat_years_ahead_is_healed_to_the_horizon),
		UT_TEST(a_ceiling_raise_queues_new_reservations_after_outstanding_tickets),
		UT_TEST(a_ticket_given_to_another_pace_is_refused_and_kept),
		UT_TEST(a_garbage_cut_queue_word_moves_a_ticket_no_later_than_its_time_place),
		UT_TEST(cancel_of_the_last_ticket_gives_its_slot_back),
		UT_TEST(high_priority_passes_queued_normal_waiters),
		UT_TEST(admit_reserves_on_the_implicit_pace_once),
		UT_TEST(threads_race_reservations_get_every_slot_once),
	};
	return cmocka_run_group_tests_name("pace_fair", tests, NULL, NULL);
}
