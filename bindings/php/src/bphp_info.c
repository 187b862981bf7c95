/*
 * bphp_info.c - snapshots as PHP arrays with the fields (string keys) and
 * shape of `bctl inspect --json`.
 */
#include "bphp_core.h"

#define PUTU(a, k, v) add_assoc_long((a), (k), (zend_long)(v))
#define PUTSTR(a, k, v) add_assoc_string((a), (k), (v))
#define PUTD(a, k, v) add_assoc_double((a), (k), (v))
#define PUTB(a, k, v) add_assoc_bool((a), (k), (v))

static void age_or_null(zval *a, const char *k, uint64_t ms)
{
	if (ms == UINT64_MAX)
		add_assoc_null(a, k);
	else
		PUTU(a, k, ms);
}

/* Every setting by its brk_config member name (the library names them). */
static void config_array(zval *h, const struct brk_config *c)
{
	array_init(h);
	for (unsigned i = 0; i < 64; i++) {
		uint64_t bit = 1ull << i, v;
		const char *name = brk_config_field_name(bit);

		if (!name || brk_config_field_get(c, bit, &v))
			continue;
		if (!strcmp(name, "hold_histogram") || !strcmp(name, "fleet") ||
		    !strcmp(name, "fleet_probe") || !strcmp(name, "implicit_pace") ||
		    !strcmp(name, "concurrency_auto"))
			PUTB(h, name, v != 0);
		else
			PUTU(h, name, v);
	}
}

void bphp_breaker_info_array(zval *d, const struct brk_info *in)
{
	static const struct { const char *key; int reason; } rk[] = {
		{ "timeout", BRK_REASON_TIMEOUT }, { "connect", BRK_REASON_CONNECT },
		{ "server_error", BRK_REASON_SERVER_ERROR }, { "overloaded", BRK_REASON_OVERLOADED },
		{ "rate_limited", BRK_REASON_RATE_LIMITED }, { "other", BRK_REASON_OTHER },
	};
	const struct brk_counters *c = &in->counters;
	zval x, r, l;
	size_t i, n;
	uint64_t cum = 0;
	uint32_t bound;

	array_init(d);
	PUTSTR(d, "name", in->name);
	PUTSTR(d, "kind", "breaker");
	PUTSTR(d, "state", brk_state_name(in->state));
	PUTSTR(d, "mode", brk_mode_name(in->mode));
	PUTU(d, "generation", in->generation_full);
	PUTU(d, "consecutive_failures", in->consecutive_failures);
	PUTU(d, "failure_streak", in->failure_streak);
	PUTU(d, "cooling_level", in->cooling_level);
	PUTU(d, "open_remaining_ms", in->open_remaining_ms);
	PUTU(d, "cool_until_remaining_ms", in->cool_until_remaining_ms);
	PUTU(d, "half_open_successes", in->half_open_successes);
	PUTU(d, "probes_in_flight", in->probes_in_flight);
	PUTU(d, "in_flight", in->in_flight);
	/* as bctl inspect --json: waiters in the bulkhead's queue, null
	 * without a bulkhead */
	if (in->config.max_concurrent || in->config.concurrency_auto)
		PUTU(d, "queued", in->queued);
	else
		add_assoc_null(d, "queued");
	PUTU(d, "record_bytes", in->record_bytes);
	array_init(&x);
	n = in->n_leases < sizeof(in->leases) / sizeof(in->leases[0])
		    ? in->n_leases : sizeof(in->leases) / sizeof(in->leases[0]);
	for (i = 0; i < n; i++) {
		array_init(&l);
		PUTU(&l, "pid", in->leases[i].pid);
		PUTSTR(&l, "kind", brk_lease_kind_name(in->leases[i].kind));
		PUTU(&l, "age_ms", in->leases[i].age_ms);
		add_next_index_zval(&x, &l);
	}
	add_assoc_zval(d, "leases", &x);
	array_init(&x);
	PUTU(&x, "calls", in->window_calls);
	PUTU(&x, "failures", in->window_failures);
	PUTU(&x, "slow", in->window_slow);
	PUTU(&x, "distinct_failing_processes", in->distinct_failing_processes);
	add_assoc_zval(d, "window", &x);
	config_array(&x, &in->config);
	add_assoc_zval(d, "config", &x);
	/* as bctl inspect --json: the breaker's implicit pace's rate, or null */
	if (in->implicit_pace_per_s > 0.0)
		PUTD(d, "implicit_pace_per_s", in->implicit_pace_per_s);
	else
		add_assoc_null(d, "implicit_pace_per_s");
	/* as bctl inspect --json: the bulkhead's limit now (learned with
	 * concurrency_auto) and, learned, the latencies it follows */
	PUTD(d, "concurrency_limit", in->concurrency_limit);
	if (in->config.concurrency_auto) {
		PUTU(d, "latency_baseline_us", in->latency_baseline_us);
		PUTU(d, "latency_recent_us", in->latency_recent_us);
	} else {
		add_assoc_null(d, "latency_baseline_us");
		add_assoc_null(d, "latency_recent_us");
	}
	array_init(&x);
	PUTU(&x, "allowed", c->allowed);
	PUTU(&x, "rejected_open", c->rejected_open);
	PUTU(&x, "rejected_cooling", c->rejected_cooling);
	PUTU(&x, "rejected_full", c->rejected_full);
	PUTU(&x, "successes", c->successes);
	PUTU(&x, "failures", c->failures);
	PUTU(&x, "healthy_errors", c->healthy_errors);
	PUTU(&x, "ignored", c->ignored);
	PUTU(&x, "cancelled", c->cancelled);
	PUTU(&x, "throttled", c->throttled);
	PUTU(&x, "probes", c->probes);
	PUTU(&x, "reclaimed", c->reclaimed);
	PUTU(&x, "transitions", c->transitions);
	PUTU(&x, "stale", c->stale);
	array_init(&r);
	for (i = 0; i < sizeof(rk) / sizeof(rk[0]); i++)
		PUTU(&r, rk[i].key, c->failures_by_reason[rk[i].reason]);
	add_assoc_zval(&x, "failures_by_reason", &r);
	add_assoc_zval(d, "counters", &x);
	/* "signals" of `bctl inspect --json` (docs/design/observability.md) */
	array_init(&x);
	PUTU(&x, "arrivals", in->arrivals);
	PUTU(&x, "completions", in->completions);
	PUTU(&x, "in_flight", (uint64_t)in->in_flight + in->probes_in_flight);
	PUTU(&x, "oldest_in_flight_ms", in->oldest_in_flight_ms);
	PUTU(&x, "max_concurrent", in->config.max_concurrent);
	PUTU(&x, "half_open_probes", in->config.half_open_probes);
	/* the learned limit bounds the permits under concurrency_auto */
	bound = in->config.concurrency_auto ? (uint32_t)in->concurrency_limit
					    : in->config.max_concurrent;
	if (bound == 0)
		add_assoc_null(&x, "remaining_concurrent");
	else
		PUTU(&x, "remaining_concurrent",
		     in->in_flight < bound ? bound - in->in_flight : 0);
	add_assoc_zval(d, "signals", &x);
	/* "hold_time": cumulative buckets, the last "le" "+Inf" */
	array_init(&x);
	PUTSTR(&x, "state", brk_hold_state_name(in->hold.state));
	PUTU(&x, "count", in->hold.count);
	PUTU(&x, "sum_us", in->hold.sum_us);
	array_init(&l);
	for (i = 0; i < BRK_HOLD_BUCKETS; i++) {
		uint64_t b = brk_hold_bound_us((unsigned)i);
		zval e;

		cum += in->hold.bucket[i];
		array_init(&e);
		if (b == UINT64_MAX)
			PUTSTR(&e, "le", "+Inf");
		else
			PUTD(&e, "le", (double)b / 1e6);
		PUTU(&e, "count", cum);
		add_next_index_zval(&l, &e);
	}
	add_assoc_zval(&x, "buckets", &l);
	add_assoc_zval(d, "hold_time", &x);
}

void bphp_bucket_info_array(zval *d, const struct brk_bucket_info *b)
{
	uint64_t full_ms = b->full_in_ns / 1000000u + (b->full_in_ns % 1000000u != 0);
	zval c, p;

	array_init(d);
	PUTSTR(d, "name", b->name);
	PUTSTR(d, "kind", "bucket");
	PUTB(d, "configured", b->configured);
	PUTD(d, "rate_per_s", b->rate_per_s);
	PUTU(d, "burst", b->burst);
	PUTU(d, "interval_ns", b->interval_ns);
	PUTD(d, "tokens", b->tokens);
	PUTU(d, "full_in_ms", full_ms);
	array_init(&c);
	PUTU(&c, "taken", b->taken);
	PUTU(&c, "denied", b->denied);
	PUTU(&c, "tokens_taken", b->tokens_taken);
	add_assoc_zval(d, "counters", &c);
	if (!b->paced)
		return;
	PUTB(d, "paced", 1);
	array_init(&p);
	PUTD(&p, "rate", b->learned_per_s);
	PUTD(&p, "ceiling", b->ceiling_per_s);
	PUTD(&p, "floor", b->floor_per_s);
	PUTD(&p, "w_max", b->w_max_per_s);
	PUTU(&p, "reserve_pct", b->reserve_pct);
	PUTB(&p, "fleet", b->fleet);
	PUTD(&p, "accepted_per_s", b->accepted_per_s);
	age_or_null(&p, "last_cut_age_ms", b->last_cut_age_ms);
	age_or_null(&p, "last_denied_age_ms", b->last_denied_age_ms);
	array_init(&c);
	PUTU(&c, "cuts", b->cuts);
	PUTU(&c, "limited", b->limited);
	PUTU(&c, "ok", b->ok);
	PUTU(&c, "high_taken", b->high_taken);
	add_assoc_zval(&p, "counters", &c);
	add_assoc_zval(d, "pace", &p);
}

void bphp_budget_info_array(zval *d, const struct brk_budget_info *g)
{
	uint64_t all = g->deposits + g->retries;
	zval c, s;

	array_init(d);
	PUTSTR(d, "name", g->name);
	PUTSTR(d, "kind", "budget");
	PUTB(d, "configured", g->configured);
	PUTD(d, "floor_per_s", g->floor_per_s);
	PUTD(d, "ratio", g->ratio);
	PUTU(d, "floor_burst", g->floor_burst);
	PUTD(d, "balance", g->balance);
	PUTD(d, "pool", g->pool);
	PUTD(d, "floor_tokens", g->floor_tokens);
	array_init(&c);
	PUTU(&c, "deposits", g->deposits);
	PUTU(&c, "retries", g->retries);
	PUTU(&c, "retries_floor", g->retries_floor);
	PUTU(&c, "deferred", g->deferred);
	add_assoc_zval(d, "counters", &c);
	array_init(&s);
	PUTU(&s, "first_attempts", g->deposits);
	PUTU(&s, "retries", g->retries);
	PUTD(&s, "retry_share", all ? (double)g->retries / (double)all : 0.0);
	PUTD(&s, "tokens_left", g->balance);
	add_assoc_zval(d, "signals", &s);
}
