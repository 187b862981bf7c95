/* info.c - snapshots of records for bctl and tests (read-only safe). */
#include <string.h>

#include "abi.h"
#include "adaptive.h"
#include "bulkhead_queue.h"
#include "fresh.h"
#include "internal.h"
#include "limits.h"
#include "window.h"

static void read_counters(const struct brk__record *r, struct brk_counters *c)
{
	int i;

	c->allowed = uatomic_read(&r->ctr[BRK__CTR_ALLOWED]);
	c->rejected_open = uatomic_read(&r->ctr[BRK__CTR_REJ_OPEN]);
	c->rejected_cooling = uatomic_read(&r->ctr[BRK__CTR_REJ_COOLING]);
	c->rejected_full = uatomic_read(&r->ctr[BRK__CTR_REJ_FULL]);
	c->successes = uatomic_read(&r->ctr[BRK__CTR_SUCCESS]);
	c->failures = uatomic_read(&r->ctr[BRK__CTR_FAILURE]);
	c->healthy_errors = uatomic_read(&r->ctr[BRK__CTR_HEALTHY]);
	c->ignored = uatomic_read(&r->ctr[BRK__CTR_IGNORED]);
	c->cancelled = uatomic_read(&r->ctr[BRK__CTR_CANCELLED]);
	c->probes = uatomic_read(&r->ctr[BRK__CTR_PROBES]);
	c->reclaimed = uatomic_read(&r->ctr[BRK__CTR_RECLAIMED]);
	c->transitions = uatomic_read(&r->ctr[BRK__CTR_TRANSITIONS]);
	c->stale = uatomic_read(&r->ctr[BRK__CTR_STALE]);
	for (i = 0; i < BRK_REASON_COUNT; i++)
		c->failures_by_reason[i] =
			uatomic_read(&r->ctr[BRK__CTR_FAIL_REASON0 + i]);
	/* reason NONE's slot holds the throttled count (layout.h) */
	c->failures_by_reason[BRK_REASON_NONE] = 0;
	c->throttled = uatomic_read(&r->ctr[BRK__CTR_THROTTLED]);
}

static void read_leases(const struct brk__slots *slots, uint32_t tag,
			int kind, struct brk_info *out, uint64_t rel)
{
	uint32_t i, n = brk__slots_total(slots);
	uint64_t claim, age;

	for (i = 0; i < n; i++) {
		const struct brk__lease *l = brk__slot(slots, i);
		uint64_t o = uatomic_read(&l->owner);
		struct brk_lease_info *li;
		if (o == 0 || BRK__TOK_GEN(o) != tag)
			continue; /* free, or a stale probe of an older generation */
		/* a claim whose time cannot be read (being claimed or freed
		 * while we look) has no age: 0 */
		age = brk__lease_claim_ms(l, o, &claim) == 0
			      ? BRK__CLAIM_AGE(rel, claim) : 0;
		if (age > BRK_MAX_DURATION_MS)
			age = BRK_MAX_DURATION_MS; /* a hostile claim word */
		if (age > out->oldest_in_flight_ms)
			out->oldest_in_flight_ms = age;
		if (out->n_leases >= sizeof(out->leases) / sizeof(out->leases[0]))
			continue; /* counted in the age, not listed */
		li = &out->leases[out->n_leases++];
		li->pid = (int32_t)BRK__TOK_PID(o);
		li->kind = kind;
		li->age_ms = age;
		if (kind == BRK_LEASE_PROBE)
			out->probes_in_flight++;
		else
			out->in_flight++;
	}
}

/* The signals derived from the counters (breaker.h, brk_info.arrivals). */
static void fill_signals(struct brk_info *out)
{
	const struct brk_counters *c = &out->counters;

	out->arrivals = c->allowed + c->rejected_open + c->rejected_cooling +
			c->rejected_full;
	out->completions = c->successes + c->failures + c->healthy_errors +
			   c->ignored + c->cancelled + c->throttled;
}

static void fill_state(brk_segment *s, struct brk__record *r,
		       struct brk_info *out)
{
	uint64_t now = brk__now(s), rel = brk__rel_ms(s, now);
	uint64_t changed = uatomic_read(&r->last_change_ms);
	struct brk__slots slots;
	uint64_t w = uatomic_read(&r->state);
	uint64_t f = uatomic_read(&r->fails), hs = uatomic_read(&r->ho_successes);
	uint64_t cu = brk__cool_until_now(r, now, 0);
	uint64_t g = BRK__ST_GEN(w), until = brk__open_until_now(r, w, rel, 0);

	out->state = BRK__ST_STATE(w);
	if (out->state > BRK_HALF_OPEN)
		out->state = BRK_OPEN; /* unknown states are treated as open */
	out->generation = (uint32_t)g; /* low 32 bits of the 56 */
	out->generation_full = g;
	out->cooling_level = BRK__ST_LEVEL(w);
	/* the generation's count: only a closed generation counts failures;
	 * the fails word of an open or half-open one holds the streak
	 * carried by the transition (state.c streak_carry()) */
	out->failure_streak = BRK__GC_FOR(f, g) ? (uint32_t)BRK__GC_COUNT(f) : 0;
	out->consecutive_failures = out->state == BRK_CLOSED ? out->failure_streak : 0;
	out->half_open_successes = BRK__GC_FOR(hs, g) ? (uint32_t)BRK__GC_COUNT(hs) : 0;
	out->open_remaining_ms = out->state == BRK_OPEN && until > rel
					 ? until - rel : 0;
	/* no breaker is open longer; a hostile deadline word says more */
	if (out->open_remaining_ms > BRK_MAX_DURATION_MS)
		out->open_remaining_ms = BRK_MAX_DURATION_MS;
	out->cool_until_remaining_ms = cu > now ? (cu - now + 999999u) / 1000000u : 0;
	out->mode = (int)uatomic_read(&r->mode);
	if (out->mode < BRK_MODE_NORMAL || out->mode > BRK_MODE_METRICS_ONLY)
		out->mode = BRK_MODE_FORCED_OPEN; /* unknown: acts as forced open */
	if (out->state == BRK_CLOSED) {
		struct brk__window_sum sum;
		brk__window_sum(s, r, w, now, &sum);
		out->window_calls = sum.calls;
		out->window_failures = sum.failures;
		out->window_slow = sum.slow;
	}
	out->distinct_failing_processes = brk__quorum_count(s, r, now);
	out->last_change_age_ms = changed == 0 ? UINT64_MAX
				  : rel > changed ? rel - changed : 0;
	brk__probe_slots(s, r, &slots); /* probe0 and the probe extension */
	read_leases(&slots, BRK__ST_TAG(w), BRK_LEASE_PROBE, out, rel);
	brk__permit_slots(s, r, &slots); /* primary and overflow blocks */
	read_leases(&slots, 0, BRK_LEASE_PERMIT, out, rel);
	out->queued = brk__bq_queued(s, r); /* bulkhead_queue.c, clamped */
	out->record_bytes += brk__ext_units(s, r) * BRK__UNIT;
}

uint64_t brk__change_age_ms(brk_segment *s, const struct brk__record *r)
{
	uint64_t at = uatomic_read(&r->last_change_ms);
	uint64_t rel = brk__rel_ms(s, brk__now(s));

	if (at == 0)
		return UINT64_MAX;
	return rel > at ? rel - at : 0; /* a stamp in the future: just now */
}

/* The bulkhead's limit now (adaptive.c: learned with concurrency_auto,
 * else max_concurrent) and the latencies it was learned from. */
static void fill_adaptive(brk_segment *s, struct brk__record *r,
			  struct brk_info *out)
{
	struct brk__ac a;

	if (!out->config.concurrency_auto) {
		out->concurrency_limit = out->config.max_concurrent;
		return;
	}
	brk__ac_read(s, r, &a);
	out->concurrency_limit = a.limit;
	out->latency_baseline_us = (uint64_t)(a.long_us + 0.5);
	out->latency_recent_us = a.recent_us;
}

static int fill(brk_segment *s, uint32_t idx, struct brk_info *out)
{
	struct brk__record *r;
	int kind, rc;

	memset(out, 0, sizeof(*out));
	kind = brk__ref_kind(s, idx);
	if (kind <= 0)
		return kind < 0 ? kind : -ENOENT;
	r = brk__rec(s, idx);
	cmm_smp_rmb();
	rc = brk__record_name(r, out->name);
	if (rc)
		return rc;
	out->index = idx;
	out->kind = kind;
	out->record_bytes = brk__kind_units((uint32_t)kind) * BRK__UNIT;
	out->last_change_age_ms = UINT64_MAX;
	if (kind == BRK_KIND_BUCKET)
		return brk__bucket_fill(s, r, out->name, &out->bucket);
	if (kind == BRK_KIND_BUDGET)
		return brk__budget_fill(s, r, out->name, &out->budget);
	brk__config_load(r, &out->config);
	out->config_seq = uatomic_read(&r->cfg[BRK__CFG_SEQ]);
	read_counters(r, &out->counters);
	fill_state(s, r, out);
	fill_signals(out);
	brk__hold_read(s, r, &out->hold);
	out->last_change_age_ms = brk__change_age_ms(s, r);
	if (uatomic_read(&r->cfg[BRK__CFG_PACE_WORD]) & BRK__CFG_HAS_PACE)
		out->implicit_pace_per_s = brk__ipace_rate(s, out->name);
	fill_adaptive(s, r, out);
	return 0;
}

int brk__breaker_info(brk_breaker *b, struct brk_info *out)
{
	if (!b || !out)
		return -EINVAL;
	BRK__FRESH_OR_RETURN(b);
	return fill(b->seg, brk__bidx(b), out);
}

/* Does the index name @ref? Its slot is on the chain of the hash the
 * record keeps (a record whose hash word is damaged too is not found:
 * then the unit reads as "no record"). The chain ends at an empty slot,
 * so this is as cheap as a lookup: listings call it for every unit. */
static int indexed(brk_segment *s, uint32_t ref)
{
	uint64_t h = uatomic_read(&brk__rec(s, ref)->hash);
	uint32_t mask = s->index_slots - 1, pos = (uint32_t)h & mask, i;

	for (i = 0; i < s->index_slots; i++, pos = (pos + 1) & mask) {
		uint64_t w = uatomic_read(&s->index[pos]);
		if (w == 0)
			return 0;
		if (BRK__IDX_REC(w) == ref + 1)
			return 1;
	}
	return 0;
}

int brk__info_at(brk_segment *s, uint32_t idx, struct brk_info *out)
{
	uint32_t found;
	int rc;

	if (!s || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (idx == 0 || idx >= s->arena_units)
		return -ENOENT;
	rc = fill(s, idx, out);
	if (rc < 0) {
		/* a unit that holds no record (the middle of a run, an
		 * extension block, free space) is not one; a published record
		 * that is damaged is corrupt */
		memset(out, 0, sizeof(*out));
		if (rc == -ENOENT && BRK__HEAD_KIND(uatomic_read(&brk__rec(s, idx)->head)) ==
				     BRK__KIND_RETIRED)
			return -ENOENT; /* being retired */
		return indexed(s, idx) ? (rc == -ENOENT ? -BRK_ECORRUPT : rc) : -ENOENT;
	}
	if (rc == 0 && (brk__lookup(s, out->name, brk__hash(out->name), &found) != 0 ||
			found != idx)) {
		memset(out, 0, sizeof(*out));
		return -ENOENT;
	}
	return rc;
}

/*
 * brk_info.config.size tells the caller which brk_config it can copy out
 * and pass back. The caller's struct brk_config is the one of the release
 * its brk_info comes from, so the library maps the caller's
 * sizeof(struct brk_info) to that release's sizeof(struct brk_config).
 * One row per release in which either grew, oldest first.
 */
static const struct {
	size_t info, config;
} layouts[] = {
	{ BRK_INFO_SIZE_VER0, BRK_CONFIG_SIZE_VER0 },
	{ BRK_INFO_SIZE_VER2, BRK_CONFIG_SIZE_VER1 }, /* + reserve_pct */
	{ BRK_INFO_SIZE_VER3, BRK_CONFIG_SIZE_VER2 }, /* + hold_histogram */
	{ BRK_INFO_SIZE_VER4, BRK_CONFIG_SIZE_VER3 }, /* + fleet, fleet_probe */
	{ BRK_INFO_SIZE_VER5, BRK_CONFIG_SIZE_VER4 }, /* + implicit_pace */
	{ BRK_INFO_SIZE_VER6, BRK_CONFIG_SIZE_VER5 }, /* + concurrency_auto */
};

static uint32_t config_size_for(size_t info_size)
{
	size_t i, c = layouts[0].config;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (info_size >= layouts[i].info)
			c = layouts[i].config;
	return (uint32_t)c;
}

static int info_out(struct brk_info *out, size_t size, int (*fill)(void *,
		    uint32_t, struct brk_info *), void *h, uint32_t idx)
{
	struct brk_info tmp;
	struct brk_info *k = size >= sizeof(tmp) ? out : &tmp;
	int rc;

	rc = fill(h, idx, k);
	if (k->kind == BRK_KIND_BREAKER)
		k->config.size = config_size_for(size);
	if (size > sizeof(tmp))
		memset((unsigned char *)out + sizeof(tmp), 0, size - sizeof(tmp));
	else if (k == &tmp)
		brk__struct_out(out, size, &tmp, sizeof(tmp));
	return rc;
}

static int fill_breaker(void *h, uint32_t idx, struct brk_info *out)
{
	(void)idx;
	return brk__breaker_info(h, out);
}

static int fill_at(void *h, uint32_t idx, struct brk_info *out)
{
	return brk__info_at(h, idx, out);
}

static int fill_ref(void *h, uint32_t idx, struct brk_info *out)
{
	return fill(h, idx, out);
}

int brk__info_ref_sz(brk_segment *s, uint32_t idx, struct brk_info *out,
		     size_t size)
{
	return info_out(out, size, fill_ref, s, idx);
}

int brk_breaker_info_sz(brk_breaker *b, struct brk_info *out, size_t size)
{
	if (!b || !out)
		return -EINVAL;
	return info_out(out, size, fill_breaker, b, 0);
}

int brk_info_at_sz(brk_segment *seg, uint32_t idx, struct brk_info *out,
		   size_t size)
{
	if (!seg || !out)
		return -EINVAL;
	return info_out(out, size, fill_at, seg, idx);
}

int (brk_breaker_info)(brk_breaker *b, struct brk_info *out)
{
	return brk_breaker_info_sz(b, out, BRK_INFO_SIZE_VER0);
}

int (brk_info_at)(brk_segment *seg, uint32_t idx, struct brk_info *out)
{
	return brk_info_at_sz(seg, idx, out, BRK_INFO_SIZE_VER0);
}
