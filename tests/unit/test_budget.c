/*
 * test_budget.c - retry budgets on a fake clock: the fleet bound over a
 * simulated minute with 8 workers (Finagle's defaults and ratio 0 /
 * floor 0) and over random runs of many seeds, deposit expiry, clock skew
 * at a slice boundary, validation,
 * configure, saturation and hostile words.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "fixture.h"

#include "fixture_layout.h" /* private: to poke words by hand */

UT_GROUP_FIXTURES("budget", 64)

#define WORKERS 8

static brk_budget *budget(brk_segment *seg, const char *name, double floor_,
			  double ratio)
{
	brk_budget *g = NULL;

	ut_rc(0, brk_budget_get(seg, name, floor_, ratio, &g));
	assert_non_null(g);
	return g;
}

static struct brk_budget_info binfo(brk_budget *g)
{
	struct brk_budget_info bi;

	memset(&bi, 0xa5, sizeof bi);
	ut_rc(0, brk_budget_info(g, &bi));
	return bi;
}

static unsigned retries_now(brk_budget *g)
{
	unsigned n = 0;
	int rc;

	while ((rc = brk_retry_permitted(g)) == 0)
		n++;
	assert_int_equal(rc, -BRK_EDEFERRED);
	return n;
}

/* ---- the bound ----------------------------------------------------------- */

struct sim {
	uint64_t deposits, retries, deferred, wanted;
	double worst_slack; /* min over 1 s windows of bound - retries */
};

/*
 * 8 workers (each its own segment handle, i.e. "process"), one fake
 * clock, 60 s in 1 ms steps. Worker w starts a request every w + 2 ms
 * (about 1830 first attempts/s in all); every first attempt fails and
 * wants up to 3 retries, tried at once until the budget defers (the
 * work is then given back). Checks, for every 1 s window [t0, t1):
 *   retries <= ratio * deposits + floor * 1 s + floor_burst + pool(t0)
 * and returns the totals.
 */
static struct sim simulate(struct ut *u, const char *name, double floor_,
			   double ratio)
{
	brk_segment *seg[WORKERS];
	brk_budget *g[WORKERS];
	struct sim s = { 0, 0, 0, 0, 1e300 };
	struct brk_budget_info bi;
	uint64_t t0 = ut_now_ns(u), step, win_dep = 0, win_ret = 0;
	double pool0 = 0, fl = 0;
	int w;

	for (w = 0; w < WORKERS; w++) {
		seg[w] = ut_attach_clock(u, NULL, 0);
		g[w] = budget(seg[w], name, floor_, ratio);
	}
	bi = binfo(g[0]);
	fl = bi.floor_per_s;
	pool0 = bi.pool;
	for (step = 0; step < 60000; step++) {
		ut_set_ns(u, t0 + step * UT_NS_PER_MS);
		if (step % 1000 == 0 && step) {
			double bound = bi.ratio * (double)win_dep + fl * 1.0 +
				       bi.floor_burst + pool0;
			assert_true((double)win_ret <= bound + 1e-9);
			if (bound - (double)win_ret < s.worst_slack)
				s.worst_slack = bound - (double)win_ret;
			bi = binfo(g[0]);
			pool0 = bi.pool;
			win_dep = win_ret = 0;
		}
		for (w = 0; w < WORKERS; w++) {
			int r;

			if ((step + (uint64_t)w * 7) % (uint64_t)(w + 2) != 0)
				continue;
			ut_rc(0, brk_budget_deposit(g[w]));
			s.deposits++;
			win_dep++;
			for (r = 0; r < 3; r++) {
				int rc = brk_retry_permitted(g[w]);

				s.wanted++;
				if (rc == 0) {
					s.retries++;
					win_ret++;
					continue;
				}
				ut_rc(-BRK_EDEFERRED, rc);
				s.deferred++;
				break;
			}
		}
	}
	bi = binfo(g[0]);
	assert_int_equal(bi.deposits, s.deposits);
	assert_int_equal(bi.retries, s.retries);
	assert_int_equal(bi.deferred, s.deferred);
	for (w = 0; w < WORKERS; w++)
		brk_detach(seg[w]);
	return s;
}

static void default_budget_bounds_retries_per_second(void **state)
{
	struct ut *u = *state;
	struct sim s = simulate(u, "svc/retries", BRK_DEFAULT_BUDGET_FLOOR,
				BRK_DEFAULT_BUDGET_RATIO);
	/* the last step is at 59.999 s */
	double bound = 0.2 * (double)s.deposits + 10.0 * 60.0 + 10.0;

	fprintf(stderr, "defaults: %" PRIu64 " first attempts, %" PRIu64
		" retries (bound %.1f), %" PRIu64 " deferred, worst 1 s "
		"window slack %.2f\n", s.deposits, s.retries, bound,
		s.deferred, s.worst_slack);
	assert_true((double)s.retries <= bound);
	/* and the budget is really spent: decay and rounding lose little */
	assert_true((double)s.retries >= bound - 30.0);
	assert_true(s.deferred > 0);
}

static void ratio_only_budget_bounds_retries_by_the_ratio(void **state)
{
	struct ut *u = *state;
	struct sim s = simulate(u, "ratio-only", 0.0, 0.2);
	double bound = 0.2 * (double)s.deposits;

	assert_true((double)s.retries <= bound);
	assert_true((double)s.retries >= bound - 10.0);
}

static void zero_budget_defers_every_retry(void **state)
{
	struct ut *u = *state;
	struct sim s = simulate(u, "none", 0.0, 0.0);

	assert_true(s.deposits > 100000);
	assert_int_equal(s.retries, 0);
	assert_int_equal(s.deferred, s.deposits);
}

/*
 * The bound over random runs: for each of RAND_SEEDS seeds, 2-4 "processes"
 * (handles) on fake clocks up to RAND_SKEW_NS behind the reference one,
 * a random floor and ratio, and a minute of random traffic (steps of 0-50
 * ms with a few jumps of up to 15 s; each step a deposit or a retry by a
 * random process). Then for every pair of granted retries i <= j at
 * reference times t_i <= t_j:
 *   j - i + 1 <= ratio * deposits[t_i - TTL - 2 skew, t_j]
 *                + floor * (t_j - t_i + 2 skew) + floor_burst
 * and from creation: retries <= ratio * deposits + floor * T + burst.
 */
#define RAND_SEEDS 150
#define RAND_STEPS 4000
#define RAND_SKEW_NS (2 * UT_NS_PER_MS)

struct rand_run {
	uint64_t dep_t[RAND_STEPS], ret_t[RAND_STEPS];
	uint64_t dep_before[RAND_STEPS]; /* deposits at or before ret_t[j] */
	size_t nd, nr;
};

/* Deposits made at reference times < @t. */
static size_t deposits_before(const struct rand_run *run, uint64_t t)
{
	size_t lo = 0, hi = run->nd;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (run->dep_t[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void rand_check(const struct rand_run *run, double ratio, double fl,
		       uint32_t burst, uint64_t t_end)
{
	uint64_t ttl_ns = (uint64_t)BRK_BUDGET_TTL_MS * UT_NS_PER_MS;
	size_t i, j;

	assert_true((double)run->nr <=
		    ratio * (double)run->nd + fl * (double)t_end / 1e9 + burst + 1e-6);
	for (i = 0; i < run->nr; i++) {
		uint64_t t0 = run->ret_t[i];
		uint64_t from = t0 > ttl_ns + 2 * RAND_SKEW_NS ?
					t0 - ttl_ns - 2 * RAND_SKEW_NS : 0;
		size_t d0 = deposits_before(run, from);

		for (j = i; j < run->nr; j++) {
			double dt = (double)(run->ret_t[j] - t0 + 2 * RAND_SKEW_NS) / 1e9;
			double bound = ratio * (double)(run->dep_before[j] - d0) +
				       fl * dt + burst + 1e-6;

			if ((double)(j - i + 1) > bound) {
				fprintf(stderr, "retries %zu..%zu (%.6f s .. %.6f s): "
					"%zu > bound %.3f\n", i, j, t0 / 1e9,
					run->ret_t[j] / 1e9, j - i + 1, bound);
				fail();
			}
		}
	}
}

static void budget_bound_holds_randomized(void **state)
{
	static const double floors[] = { 0.0, 0.5, 1.0, 3.0, 10.0 };
	static const double ratios[] = { 0.0, 0.1, 0.2, 0.5, 1.0, 2.0 };
	struct rand_run *run = calloc(1, sizeof *run);
	struct ut *u0 = *state;
	uint64_t total_retries = 0;

	assert_non_null(run);
	for (uint64_t seed = 1; seed <= RAND_SEEDS; seed++) {
		struct ut *u = ut_new("budget-rand", 64, 0);
		struct ut_clock clk[4];
		uint64_t skew[4], rs = seed * 0x9e3779b97f4a7c15ULL, t = 0;
		brk_segment *seg[4];
		brk_budget *g[4];
		struct brk_budget_info bi;
		int np = 2 + (int)(ut_splitmix64(&rs) % 3), p;
		double fl = floors[ut_splitmix64(&rs) % 5];
		double ratio = ratios[ut_splitmix64(&rs) % 6];

		run->nd = run->nr = 0;
		for (p = 0; p < np; p++) {
			skew[p] = p == 0 ? 0 : ut_splitmix64(&rs) % (RAND_SKEW_NS + 1);
			clk[p].ns = UT_CLOCK_START_NS;
			seg[p] = ut_attach_clock(u, &clk[p], 0);
			g[p] = budget(seg[p], "rand", fl, ratio);
		}
		bi = binfo(g[0]);
		for (int step = 0; step < RAND_STEPS; step++) {
			uint64_t r = ut_splitmix64(&rs);

			if (r % 200 == 0)
				t += ut_splitmix64(&rs) % (15 * UT_NS_PER_S);
			else
				t += ut_splitmix64(&rs) % (50 * UT_NS_PER_MS);
			ut_set_ns(u, UT_CLOCK_START_NS + t);
			for (p = 0; p < np; p++)
				__atomic_store_n(&clk[p].ns, UT_CLOCK_START_NS +
						 (t > skew[p] ? t - skew[p] : 0),
						 __ATOMIC_RELEASE);
			p = (int)((r >> 8) % (uint64_t)np);
			if ((r >> 16) % 3 == 0) {
				ut_rc(0, brk_budget_deposit(g[p]));
				run->dep_t[run->nd++] = t;
			} else {
				int rc = brk_retry_permitted(g[p]);

				if (rc == 0) {
					run->ret_t[run->nr] = t;
					run->dep_before[run->nr++] = run->nd;
				} else {
					ut_rc(-BRK_EDEFERRED, rc);
				}
			}
		}
		rand_check(run, bi.ratio, bi.floor_per_s, bi.floor_burst, t);
		total_retries += run->nr;
		for (p = 0; p < np; p++)
			brk_detach(seg[p]);
		ut_free(u);
	}
	fprintf(stderr, "randomized: %d seeds, %" PRIu64 " retries checked\n",
		RAND_SEEDS, total_retries);
	assert_true(total_retries > 1000); /* the budgets were really used */
	(void)u0;
	free(run);
}

/* Deposits of a long healthy spell cannot be banked for a storm. */
static void healthy_spell_deposits_cannot_be_banked_for_a_storm(void **state)
{
	struct ut *u = *state;
	brk_budget *g = budget(u->seg, "bank", 0.0, 0.2);
	struct brk_budget_info bi;
	uint64_t t0 = ut_now_ns(u), ms;
	unsigned i;

	for (ms = 0; ms < 50000; ms++) { /* 1000 first attempts/s, 50 s */
		ut_set_ns(u, t0 + ms * UT_NS_PER_MS);
		ut_rc(0, brk_budget_deposit(g));
	}
	bi = binfo(g);
	/* 50 s deposited 10000 tokens; the pool holds only the last TTL's
	 * (at 49.999 s: slices 40..49, 200 tokens each) */
	assert_true(fabs(bi.pool - 0.2 * 1000.0 * (BRK_BUDGET_TTL_MS / 1000)) < 1e-6);
	assert_int_equal(bi.deposits, 50000);
	i = retries_now(g);
	assert_int_equal(i, (unsigned)bi.pool);
}

/*
 * Regression (issue 9): deposits used to be halved at fixed 10 s epochs of
 * the segment clock, so a first attempt at 9.998 s whose retry came at
 * 10.002 s was refused (ratio 1.0, floor 0: the retry needs exactly the
 * one token its first attempt deposited). A deposit now lives for the
 * TTL, sliding: the segment clock's 10 s marks mean nothing.
 */
static void budget_deposit_survives_epoch_boundary(void **state)
{
	struct ut *u = *state;
	brk_budget *g = budget(u->seg, "edge", 0.0, 1.0);

	ut_set_ns(u, UT_CLOCK_START_NS + 9998 * UT_NS_PER_MS); /* the segment epoch + 9.998 s */
	ut_rc(0, brk_budget_deposit(g));
	ut_set_ns(u, UT_CLOCK_START_NS + 10002 * UT_NS_PER_MS);
	ut_rc(0, brk_retry_permitted(g));
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));
	/* the same across every other 10 s mark of the first minute */
	for (uint64_t s = 20; s <= 60; s += 10) {
		ut_set_ns(u, UT_CLOCK_START_NS + s * UT_NS_PER_S - 2 * UT_NS_PER_MS);
		ut_rc(0, brk_budget_deposit(g));
		ut_set_ns(u, UT_CLOCK_START_NS + s * UT_NS_PER_S + 2 * UT_NS_PER_MS);
		ut_rc(0, brk_retry_permitted(g));
	}
}

/* ---- small cases ---------------------------------------------------------- */

static void budget_defaults_and_floor_burst(void **state)
{
	struct ut *u = *state;
	brk_budget *g = budget(u->seg, "d", BRK_DEFAULT_BUDGET_FLOOR,
			       BRK_DEFAULT_BUDGET_RATIO);
	struct brk_budget_info bi = binfo(g);
	unsigned i;

	assert_true(BRK_DEFAULT_BUDGET_FLOOR == 10.0);
	assert_true(BRK_DEFAULT_BUDGET_RATIO == 0.2);
	assert_string_equal(bi.name, "d");
	assert_string_equal(brk_budget_name(g), "d");
	assert_int_equal(bi.configured, 1);
	assert_true(bi.floor_per_s == 10.0);
	assert_true(bi.ratio == 0.2);
	assert_int_equal(bi.floor_burst, 10);
	assert_true(fabs(bi.balance - 10.0) < 1e-9);
	/* a new budget holds one second of floor */
	assert_int_equal(retries_now(g), 10);
	/* five first attempts deposit one token */
	for (i = 0; i < 4; i++)
		ut_rc(0, brk_budget_deposit(g));
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));
	ut_rc(0, brk_budget_deposit(g));
	ut_rc(0, brk_retry_permitted(g));
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));
	/* the floor refills one per 100 ms */
	ut_advance_ns(u, 100 * UT_NS_PER_MS - 1);
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));
	ut_advance_ns(u, 1);
	ut_rc(0, brk_retry_permitted(g));
	bi = binfo(g);
	assert_int_equal(bi.deposits, 5);
	assert_int_equal(bi.retries, 12);
	assert_int_equal(bi.retries_floor, 11);
	assert_int_equal(bi.deferred, 4);
	/* after a quiet second: full floor, never more */
	ut_advance_ns(u, 5 * UT_NS_PER_S);
	assert_int_equal(retries_now(g), 10);
}

/* A deposit counts until its 1 s slice is TTL old: it lives between
 * TTL - TTL/10 and TTL; retries spend the oldest deposits first. */
static void budget_deposits_expire_after_ttl(void **state)
{
	struct ut *u = *state;
	brk_budget *g = budget(u->seg, "ttl", 0.0, 0.2);
	unsigned i;

	assert_true(BRK_BUDGET_TTL_MS == 10000 && BRK_BUDGET_SLICES == 10);
	/* the segment epoch is the fake clock's start: slice 0 now */
	for (i = 0; i < 100; i++)
		ut_rc(0, brk_budget_deposit(g));
	assert_true(binfo(g).pool == 20.0);
	ut_advance_ns(u, 10 * UT_NS_PER_S - 1);
	assert_true(binfo(g).pool == 20.0); /* all of it, 1 ns before the TTL */
	ut_advance_ns(u, 1);
	assert_true(binfo(g).pool == 0.0);
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));

	/* half-way into a slice: it lives 9.5 s */
	ut_set_ns(u, UT_CLOCK_START_NS + 20500 * UT_NS_PER_MS);
	for (i = 0; i < 10; i++)
		ut_rc(0, brk_budget_deposit(g)); /* 2 tokens, slice 20 */
	ut_set_ns(u, UT_CLOCK_START_NS + 25000 * UT_NS_PER_MS);
	for (i = 0; i < 10; i++)
		ut_rc(0, brk_budget_deposit(g)); /* 2 tokens, slice 25 */
	ut_rc(0, brk_retry_permitted(g)); /* from slice 20 (the oldest) */
	ut_set_ns(u, UT_CLOCK_START_NS + 29999 * UT_NS_PER_MS);
	assert_true(fabs(binfo(g).pool - 3.0) < 1e-9);
	ut_set_ns(u, UT_CLOCK_START_NS + 30000 * UT_NS_PER_MS); /* slice 20 expired */
	assert_true(fabs(binfo(g).pool - 2.0) < 1e-9);
	assert_int_equal(retries_now(g), 2);
	/* the ring word of slice 20 is reused by slice 30 (same index) */
	for (i = 0; i < 5; i++)
		ut_rc(0, brk_budget_deposit(g));
	assert_int_equal(retries_now(g), 1);
	/* a long silence: nothing left, and a fresh deposit is whole */
	ut_advance_ns(u, 400 * UT_NS_PER_S);
	assert_true(binfo(g).pool == 0.0);
	for (i = 0; i < 5; i++)
		ut_rc(0, brk_budget_deposit(g));
	assert_int_equal(retries_now(g), 1);
}

/* Two processes whose clocks straddle a slice boundary: the one behind
 * still deposits (into its slice, seen by both), and the cursor moved by
 * the one ahead is never re-spent by the one behind. */
static void budget_slice_skew_never_double_spends(void **state)
{
	struct ut *u = *state;
	struct ut_clock behind;
	brk_segment *other;
	brk_budget *a, *b;
	unsigned got = 0;
	int i;

	ut_set_ns(u, UT_CLOCK_START_NS + 10 * UT_NS_PER_S); /* slice 10 */
	behind.ns = UT_CLOCK_START_NS + 10 * UT_NS_PER_S - 1; /* still slice 9 */
	other = ut_attach_clock(u, &behind, 0);
	a = budget(u->seg, "skew", 0.0, 0.2);
	b = budget(other, "skew", 0.0, 0.2);
	for (i = 0; i < 50; i++)
		ut_rc(0, brk_budget_deposit(a)); /* 10 tokens in slice 10 */
	for (i = 0; i < 50; i++)
		ut_rc(0, brk_budget_deposit(b)); /* 10 tokens in slice 9 */
	assert_true(fabs(binfo(a).pool - 20.0) < 1e-9);
	assert_true(fabs(binfo(b).pool - 10.0) < 1e-9); /* 10 is its future */
	for (i = 0; i < 15; i++) /* all of slice 9, 5 of slice 10 */
		ut_rc(0, brk_retry_permitted(a));
	while (brk_retry_permitted(b) == 0)
		got++;
	assert_int_equal(got, 5);
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(a));
	assert_int_equal(binfo(a).retries, 20); /* = the deposits, no more */
	brk_detach(other);
}

/*
 * Regression (issue 9, nothing aliases): ring words and the spend cursor
 * kept the slice number modulo 2^24 (1 s slices: 194 days). Ring word
 * k % 10 still holding slice j with j == k mod 2^24 (and mod 10: k - j a
 * multiple of 5 * 2^24 s, 2.66 years) was taken for slice k, so a budget
 * left idle that long (or on a clock that jumped that far) counted its
 * old deposits again; and a cursor 2^24 slices old was taken for one of
 * now or of a few slices ahead, so a fresh deposit counted as spent.
 * Every idle span below, up to the clock's top, must see nothing old.
 */
#define SLICE_S_NS ((uint64_t)BRK_BUDGET_TTL_MS / BRK_BUDGET_SLICES * UT_NS_PER_MS)
#define TAG_SPAN (1ULL << 24) /* the old tag's period, in slices */

static const uint64_t idle_spans[] = { 1, 2, 5, 10 }; /* x 2^24 slices */
#define IDLE_X 3 /* and -IDLE_X .. +IDLE_X slices around each */

/* @name deposits 5 tokens at @t0 and spends @spend of them, then the
 * clock jumps @idle_slices slices on. */
static brk_budget *idle_budget(struct ut *u, const char *name, uint64_t t0,
			       unsigned spend, uint64_t idle_slices)
{
	brk_budget *g;
	unsigned i;

	ut_set_ns(u, t0);
	g = budget(u->seg, name, 0.0, 1.0);
	for (i = 0; i < 5; i++)
		ut_rc(0, brk_budget_deposit(g));
	for (i = 0; i < spend; i++)
		ut_rc(0, brk_retry_permitted(g));
	ut_set_ns(u, t0 + idle_slices * SLICE_S_NS);
	return g;
}

static void budget_deposits_not_revived_after_2_24_idle_slices(void **state)
{
	struct ut *u = *state;
	/* mid-slice 7 of the segment clock */
	uint64_t t0 = UT_CLOCK_START_NS + 7 * SLICE_S_NS + SLICE_S_NS / 2;
	unsigned n = 0, spend;
	brk_budget *top;
	char name[32];

	for (size_t m = 0; m < sizeof idle_spans / sizeof idle_spans[0]; m++) {
		for (int x = -IDLE_X; x <= IDLE_X; x++) {
			uint64_t idle = idle_spans[m] * TAG_SPAN + (uint64_t)(int64_t)x;
			brk_budget *g;
			double pool;

			spend = n % 3; /* cursor at 0, 1000, 2000 of slice j */
			snprintf(name, sizeof name, "rev%u", n++);
			g = idle_budget(u, name, t0, spend, idle);
			pool = binfo(g).pool;
			if (pool != 0.0)
				fprintf(stderr, "idle %" PRIu64 " x 2^24 %+d slices: "
					"pool %.3f, want 0\n", idle_spans[m], x, pool);
			assert_true(pool == 0.0);
			ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));
			t0 += idle * SLICE_S_NS + 20 * UT_NS_PER_S; /* on, never back */
		}
	}
	/* at the top of a 64-bit clock (10 min short of 2^64 ns) */
	t0 = UINT64_MAX - 600 * UT_NS_PER_S - 5 * TAG_SPAN * SLICE_S_NS;
	t0 -= t0 % SLICE_S_NS;
	top = idle_budget(u, "rev-top", t0, 1, 5 * TAG_SPAN);
	assert_true(binfo(top).pool == 0.0);
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(top));
	/* and the budget still works up there */
	ut_rc(0, brk_budget_deposit(top));
	assert_true(binfo(top).pool == 1.0);
	ut_rc(0, brk_retry_permitted(top));
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(top));
}

static void budget_fresh_deposit_not_spent_by_2_24_old_cursor(void **state)
{
	struct ut *u = *state;
	uint64_t t0 = UT_CLOCK_START_NS + 7 * SLICE_S_NS + SLICE_S_NS / 2;
	unsigned n = 0;
	char name[32];

	for (size_t m = 0; m < sizeof idle_spans / sizeof idle_spans[0]; m++) {
		for (int x = -IDLE_X; x <= IDLE_X; x++) {
			uint64_t idle = idle_spans[m] * TAG_SPAN + (uint64_t)(int64_t)x;
			brk_budget *g;
			double pool;
			int rc;

			snprintf(name, sizeof name, "cur%u", n++);
			/* all 5 spent: the cursor says (slice j, 5000) */
			g = idle_budget(u, name, t0, 5, idle);
			ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));
			ut_rc(0, brk_budget_deposit(g)); /* one fresh token */
			pool = binfo(g).pool;
			rc = brk_retry_permitted(g);
			if (pool != 1.0 || rc != 0)
				fprintf(stderr, "idle %" PRIu64 " x 2^24 %+d slices: "
					"pool %.3f (want 1), retry %d (want 0)\n",
					idle_spans[m], x, pool, rc);
			assert_true(pool == 1.0);
			ut_rc(0, rc);
			ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));
			t0 += idle * SLICE_S_NS + 20 * UT_NS_PER_S;
		}
	}
}

static void bad_floor_or_ratio_is_einval_and_creates_nothing(void **state)
{
	struct ut *u = *state;
	brk_budget *g = NULL;
	brk_bucket *k;
	const double bad_floor[] = { -1.0, NAN, INFINITY, -INFINITY, 1e6 + 1,
				     1e12, 0.0004 };
	const double bad_ratio[] = { -0.1, NAN, INFINITY, 100.01, 1e9, 0.0004 };
	size_t i;

	for (i = 0; i < sizeof bad_floor / sizeof bad_floor[0]; i++)
		ut_rc(-EINVAL, brk_budget_get(u->seg, "x", bad_floor[i], 0.2, &g));
	for (i = 0; i < sizeof bad_ratio / sizeof bad_ratio[0]; i++)
		ut_rc(-EINVAL, brk_budget_get(u->seg, "x", 10.0, bad_ratio[i], &g));
	assert_null(g);
	ut_rc(-ENOENT, brk_budget_find(u->seg, "x", &g));
	ut_rc(-EINVAL, brk_budget_get(u->seg, "x", 10.0, 0.2, NULL));
	ut_rc(-EINVAL, brk_budget_deposit(NULL));
	ut_rc(-EINVAL, brk_retry_permitted(NULL));
	ut_rc(-EINVAL, brk_budget_info(NULL, NULL));

	g = budget(u->seg, "edges", BRK_BUDGET_MAX_FLOOR, BRK_BUDGET_MAX_RATIO);
	assert_int_equal(binfo(g).floor_burst, 1000000);
	ut_rc(0, brk_budget_deposit(g));
	assert_true(binfo(g).pool == 100.0);
	g = budget(u->seg, "tiny", 0.001, 0.001);
	assert_int_equal(binfo(g).floor_burst, 1);
	assert_true(binfo(g).floor_per_s == 0.001);
	for (i = 0; i < sizeof bad_ratio / sizeof bad_ratio[0]; i++)
		ut_rc(-EINVAL, brk_budget_configure(g, 1.0, bad_ratio[i]));

	(void)budget(u->seg, "kind", 1.0, 0.1);
	ut_rc(-EMEDIUMTYPE, brk_bucket_get(u->seg, "kind", 1.0, 1, &k));
	ut_rc(0, brk_bucket_get(u->seg, "bk", 1.0, 1, &k));
	ut_rc(-EMEDIUMTYPE, brk_budget_get(u->seg, "bk", 1.0, 0.1, &g));
	ut_rc(-EMEDIUMTYPE, brk_budget_find(u->seg, "bk", &g));
}

static void budget_configure_takes_effect_readonly_cannot(void **state)
{
	struct ut *u = *state;
	brk_budget *g = budget(u->seg, "cfg", 10.0, 0.2), *r;
	brk_segment *ro = ut_attach_clock(u, NULL, 1);
	struct brk_budget_info bi;

	assert_int_equal(retries_now(g), 10);
	for (int i = 0; i < 10; i++)
		ut_rc(0, brk_budget_deposit(g));
	/* existing settings are kept by a later get */
	assert_true(binfo(budget(u->seg, "cfg", 1.0, 1.0)).ratio == 0.2);
	ut_rc(0, brk_budget_configure(g, 100.0, 0.5));
	bi = binfo(g);
	assert_true(bi.floor_per_s == 100.0 && bi.ratio == 0.5);
	assert_int_equal(bi.floor_burst, 100);
	assert_true(bi.pool == 2.0); /* kept */
	/* the floor owed 10 tokens at 10/s: still owed (10 ms each now) in
	 * a bucket of 100: the pool's 2 plus 90 */
	assert_int_equal(retries_now(g), 92);
	ut_advance_ns(u, 10 * UT_NS_PER_MS - 1);
	assert_int_equal(retries_now(g), 0);
	ut_advance_ns(u, 1);
	assert_int_equal(retries_now(g), 1);
	ut_advance_ns(u, 2 * UT_NS_PER_S);
	assert_int_equal(retries_now(g), 100);
	/* floor off: deposits only */
	ut_rc(0, brk_budget_configure(g, 0.0, 1.0));
	ut_advance_ns(u, 2 * UT_NS_PER_S);
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));
	ut_rc(0, brk_budget_deposit(g));
	ut_rc(0, brk_retry_permitted(g));
	/* floor back on: starts from one bucket at most */
	ut_rc(0, brk_budget_configure(g, 5.0, 1.0));
	assert_int_equal(retries_now(g), 5);

	ut_rc(0, brk_budget_find(ro, "cfg", &r));
	ut_rc(-EROFS, brk_budget_deposit(r));
	ut_rc(-EROFS, brk_retry_permitted(r));
	ut_rc(-EROFS, brk_budget_configure(r, 1.0, 1.0));
	ut_rc(-EROFS, brk_budget_get(ro, "absent", 1.0, 1.0, &r));
	bi = binfo(r);
	assert_int_equal(bi.floor_burst, 5);
	brk_detach(ro);
}

/* Regression (issue 9): changing the floor must not write back a stale
 * ratio (and the other way round): only the given setting changes. */
static void budget_update_changes_only_the_given_setting(void **state)
{
	struct ut *u = *state;
	brk_budget *g = budget(u->seg, "upd", 10.0, 0.2), *other;
	brk_segment *seg2 = ut_attach_clock(u, NULL, 0);
	struct brk_budget_info bi;

	ut_rc(0, brk_budget_find(seg2, "upd", &other));
	ut_rc(0, brk_budget_update(other, 0.0, 0.5, BRK_BUDGET_RATIO));
	ut_rc(0, brk_budget_update(g, 3.0, 0.2, BRK_BUDGET_FLOOR));
	bi = binfo(g);
	assert_true(bi.ratio == 0.5);
	assert_true(bi.floor_per_s == 3.0);
	assert_int_equal(bi.floor_burst, 3);
	ut_rc(0, brk_budget_update(g, NAN, NAN, 0));
	ut_rc(-EINVAL, brk_budget_update(g, -1.0, 0.1, BRK_BUDGET_FLOOR));
	ut_rc(-EINVAL, brk_budget_update(g, 1.0, NAN, BRK_BUDGET_RATIO));
	ut_rc(-EINVAL, brk_budget_update(g, 1.0, 0.1, 4));
	ut_rc(0, brk_budget_update(g, 0.0, 0.1, BRK_BUDGET_FLOOR)); /* off */
	bi = binfo(g);
	assert_true(bi.ratio == 0.5 && bi.floor_per_s == 0.0);
	brk_detach(seg2);
}

static void budget_words_saturate_and_corrupt_ones_are_ecorrupt(void **state)
{
	struct ut *u = *state;
	brk_budget *g = budget(u->seg, "sat", 0.0, 100.0);
	uint64_t *ext, w;
	void *map;
	size_t len;

	ut_rc(0, brk_budget_deposit(g)); /* slice 0 */
	ext = ut_record_ext(u, "sat", BRK_KIND_BUDGET, &map, &len);
	w = ext[BRK__BG_RING];
	assert_int_equal(w, BRK__BGW_MAKE(0, 100000));
	/* near the top of the 29-bit milli field: saturates, never spills
	 * into the slice bits */
	ext[BRK__BG_RING] = BRK__BGW_MAKE(0, BRK__BGW_MILLI_MAX - 5);
	ut_rc(0, brk_budget_deposit(g));
	assert_int_equal(ext[BRK__BG_RING], BRK__BGW_MAKE(0, BRK__BGW_MILLI_MAX));
	ut_rc(0, brk_budget_deposit(g));
	assert_int_equal(BRK__BGW_MILLI(ext[BRK__BG_RING]), BRK__BGW_MILLI_MAX);
	ut_rc(0, brk_retry_permitted(g));
	assert_int_equal(ext[BRK__BG_CURSOR], BRK__BGW_MAKE(0, 1000));
	/* a cursor far ahead of every clock is garbage: ignored, so the
	 * deposits stay spendable */
	ext[BRK__BG_CURSOR] = BRK__BGW_MAKE(0x800000u, 0);
	ut_rc(0, brk_retry_permitted(g));
	assert_int_equal(ext[BRK__BG_CURSOR], BRK__BGW_MAKE(0, 1000));
	ext[BRK__BG_CURSOR] = BRK__BGW_MAKE(BRK__BGW_SLICE_MAX, BRK__BGW_MILLI_MAX);
	ut_rc(0, brk_retry_permitted(g));
	assert_int_equal(ext[BRK__BG_CURSOR], BRK__BGW_MAKE(0, 1000));
	/* a ring word of a slice far ahead is garbage too: recycled */
	ext[BRK__BG_RING + 1] = BRK__BGW_MAKE(0x7fffffu, BRK__BGW_MILLI_MAX);
	ut_advance_ns(u, 1 * UT_NS_PER_S); /* slice 1 */
	/* slice 0's (saturated, 1000 spent), not the garbage */
	assert_true(fabs(binfo(g).pool - (double)(BRK__BGW_MILLI_MAX - 1000) / 1000.0) < 1e-6);
	ut_rc(0, brk_budget_deposit(g));
	assert_int_equal(ext[BRK__BG_RING + 1], BRK__BGW_MAKE(1, 100000));
	ut_set_ns(u, UT_CLOCK_START_NS);
	ext[BRK__BG_RING + 1] = 0;

	/* settings: not stored yet, corrupt, repaired */
	w = ext[BRK__BG_CFG];
	ext[BRK__BG_CFG] = 0;
	ut_rc(-EAGAIN, brk_retry_permitted(g));
	ut_rc(-EAGAIN, brk_budget_deposit(g));
	assert_int_equal(binfo(g).configured, 0);
	ut_rc(0, brk_budget_get(u->seg, "sat", 0.0, 100.0, &g));
	assert_int_equal(ext[BRK__BG_CFG], w);
	ext[BRK__BG_CFG] = w & ~BRK__BGC_SET;
	ut_rc(-BRK_ECORRUPT, brk_retry_permitted(g));
	ext[BRK__BG_CFG] = w | (1ULL << 50);
	ut_rc(-BRK_ECORRUPT, brk_budget_deposit(g));
	ext[BRK__BG_CFG] = BRK__BGC_MAKE(BRK__BGC_FLOOR_MAX, 1);
	ut_rc(-BRK_ECORRUPT, brk_retry_permitted(g));
	ut_rc(0, brk_budget_configure(g, 1.0, 1.0));
	ut_rc(0, brk_retry_permitted(g));
	/* a floor TAT far in the future: deferred, no wrap */
	ut_rc(0, brk_budget_configure(g, 0.0, 1.0));
	ext[BRK__BG_RING] = 0;
	ext[BRK__BG_CURSOR] = 0;
	ut_rc(0, brk_budget_configure(g, 1.0, 1.0));
	ext[BRK__BG_TAT] = UINT64_MAX;
	ut_rc(-BRK_EDEFERRED, brk_retry_permitted(g));
	munmap(map, len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(budget_deposit_survives_epoch_boundary),
		UT_TEST(default_budget_bounds_retries_per_second),
		UT_TEST(ratio_only_budget_bounds_retries_by_the_ratio),
		UT_TEST(zero_budget_defers_every_retry),
		UT_TEST(budget_bound_holds_randomized),
		UT_TEST(healthy_spell_deposits_cannot_be_banked_for_a_storm),
		UT_TEST(budget_defaults_and_floor_burst),
		UT_TEST(budget_deposits_expire_after_ttl),
		UT_TEST(budget_slice_skew_never_double_spends),
		UT_TEST(budget_deposits_not_revived_after_2_24_idle_slices),
		UT_TEST(budget_fresh_deposit_not_spent_by_2_24_old_cursor),
		UT_TEST(bad_floor_or_ratio_is_einval_and_creates_nothing),
		UT_TEST(budget_configure_takes_effect_readonly_cannot),
		UT_TEST(budget_update_changes_only_the_given_setting),
		UT_TEST(budget_words_saturate_and_corrupt_ones_are_ecorrupt),
	};
	return cmocka_run_group_tests_name("budget", tests, NULL, NULL);
}
