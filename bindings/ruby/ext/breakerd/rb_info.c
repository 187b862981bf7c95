/*
 * rb_info.c - snapshots as Hashes with the fields (String keys) and shape of
 * `bctl inspect --json`.
 */
#include "rb_core.h"

#define PUT(h, k, v) rb_hash_aset((h), rb_str_new_cstr(k), (v))
#define PUTU(h, k, v) PUT(h, k, ULL2NUM((unsigned long long)(v)))
#define PUTS(h, k, v) PUT(h, k, rb_str_new_cstr(v))

static VALUE age_or_nil(uint64_t ms)
{
	return ms == UINT64_MAX ? Qnil : ULL2NUM(ms);
}

/* Every setting by its brk_config member name (the library names them). */
static VALUE config_hash(const struct brk_config *c)
{
	VALUE h = rb_hash_new();

	for (unsigned i = 0; i < 64; i++) {
		uint64_t bit = 1ull << i, v;
		const char *name = brk_config_field_name(bit);

		if (!name || brk_config_field_get(c, bit, &v))
			continue;
		if (!strcmp(name, "hold_histogram") || !strcmp(name, "fleet") ||
		    !strcmp(name, "fleet_probe") || !strcmp(name, "implicit_pace") ||
		    !strcmp(name, "concurrency_auto"))
			PUT(h, name, v ? Qtrue : Qfalse);
		else
			PUTU(h, name, v);
	}
	return h;
}

VALUE rbk_breaker_info_hash(const struct brk_info *in)
{
	static const struct { const char *key; int reason; } rk[] = {
		{ "timeout", BRK_REASON_TIMEOUT }, { "connect", BRK_REASON_CONNECT },
		{ "server_error", BRK_REASON_SERVER_ERROR }, { "overloaded", BRK_REASON_OVERLOADED },
		{ "rate_limited", BRK_REASON_RATE_LIMITED }, { "other", BRK_REASON_OTHER },
	};
	const struct brk_counters *c = &in->counters;
	VALUE d = rb_hash_new(), x, r, l;
	size_t i, n;
	uint64_t cum = 0;
	uint32_t bound;

	PUTS(d, "name", in->name);
	PUTS(d, "kind", "breaker");
	PUTS(d, "state", brk_state_name(in->state));
	PUTS(d, "mode", brk_mode_name(in->mode));
	PUTU(d, "generation", in->generation_full);
	PUTU(d, "consecutive_failures", in->consecutive_failures);
	PUTU(d, "failure_streak", in->failure_streak);
	PUTU(d, "cooling_level", in->cooling_level);
	PUTU(d, "open_remaining_ms", in->open_remaining_ms);
	PUTU(d, "cool_until_remaining_ms", in->cool_until_remaining_ms);
	PUTU(d, "half_open_successes", in->half_open_successes);
	PUTU(d, "probes_in_flight", in->probes_in_flight);
	PUTU(d, "in_flight", in->in_flight);
	/* as bctl inspect --json: waiters in the bulkhead's queue, nil
	 * without a bulkhead */
	PUT(d, "queued", in->config.max_concurrent || in->config.concurrency_auto
	    ? ULL2NUM(in->queued) : Qnil);
	PUTU(d, "record_bytes", in->record_bytes);
	x = rb_ary_new();
	n = in->n_leases < sizeof(in->leases) / sizeof(in->leases[0])
		    ? in->n_leases : sizeof(in->leases) / sizeof(in->leases[0]);
	for (i = 0; i < n; i++) {
		l = rb_hash_new();
		PUT(l, "pid", INT2NUM(in->leases[i].pid));
		PUTS(l, "kind", brk_lease_kind_name(in->leases[i].kind));
		PUTU(l, "age_ms", in->leases[i].age_ms);
		rb_ary_push(x, l);
	}
	PUT(d, "leases", x);
	x = rb_hash_new();
	PUTU(x, "calls", in->window_calls);
	PUTU(x, "failures", in->window_failures);
	PUTU(x, "slow", in->window_slow);
	PUTU(x, "distinct_failing_processes", in->distinct_failing_processes);
	PUT(d, "window", x);
	PUT(d, "config", config_hash(&in->config));
	/* as bctl inspect --json: the breaker's implicit pace's rate, or nil */
	PUT(d, "implicit_pace_per_s", in->implicit_pace_per_s > 0.0 ?
	    rb_float_new(in->implicit_pace_per_s) : Qnil);
	/* as bctl inspect --json: the bulkhead's limit now (learned with
	 * max_concurrent auto) and, learned, the latencies it follows */
	PUT(d, "concurrency_limit", rb_float_new(in->concurrency_limit));
	PUT(d, "latency_baseline_us", in->config.concurrency_auto ?
	    ULL2NUM(in->latency_baseline_us) : Qnil);
	PUT(d, "latency_recent_us", in->config.concurrency_auto ?
	    ULL2NUM(in->latency_recent_us) : Qnil);
	x = rb_hash_new();
	PUTU(x, "allowed", c->allowed);
	PUTU(x, "rejected_open", c->rejected_open);
	PUTU(x, "rejected_cooling", c->rejected_cooling);
	PUTU(x, "rejected_full", c->rejected_full);
	PUTU(x, "successes", c->successes);
	PUTU(x, "failures", c->failures);
	PUTU(x, "healthy_errors", c->healthy_errors);
	PUTU(x, "ignored", c->ignored);
	PUTU(x, "cancelled", c->cancelled);
	PUTU(x, "throttled", c->throttled);
	PUTU(x, "probes", c->probes);
	PUTU(x, "reclaimed", c->reclaimed);
	PUTU(x, "transitions", c->transitions);
	PUTU(x, "stale", c->stale);
	r = rb_hash_new();
	for (i = 0; i < sizeof(rk) / sizeof(rk[0]); i++)
		PUTU(r, rk[i].key, c->failures_by_reason[rk[i].reason]);
	PUT(x, "failures_by_reason", r);
	PUT(d, "counters", x);
	/* "signals" of `bctl inspect --json` (docs/design/observability.md) */
	x = rb_hash_new();
	PUTU(x, "arrivals", in->arrivals);
	PUTU(x, "completions", in->completions);
	PUTU(x, "in_flight", (uint64_t)in->in_flight + in->probes_in_flight);
	PUTU(x, "oldest_in_flight_ms", in->oldest_in_flight_ms);
	PUTU(x, "max_concurrent", in->config.max_concurrent);
	PUTU(x, "half_open_probes", in->config.half_open_probes);
	bound = in->config.concurrency_auto ? (uint32_t)in->concurrency_limit
					    : in->config.max_concurrent;
	PUT(x, "remaining_concurrent", bound == 0 ? Qnil
	    : ULL2NUM(in->in_flight < bound ? bound - in->in_flight : 0));
	PUT(d, "signals", x);
	/* "hold_time": cumulative buckets, the last "le" "+Inf" */
	x = rb_hash_new();
	PUTS(x, "state", brk_hold_state_name(in->hold.state));
	PUTU(x, "count", in->hold.count);
	PUTU(x, "sum_us", in->hold.sum_us);
	l = rb_ary_new();
	for (i = 0; i < BRK_HOLD_BUCKETS; i++) {
		uint64_t b = brk_hold_bound_us((unsigned)i);
		VALUE e = rb_hash_new();

		cum += in->hold.bucket[i];
		PUT(e, "le", b == UINT64_MAX ? rb_str_new_cstr("+Inf") : DBL2NUM((double)b / 1e6));
		PUTU(e, "count", cum);
		rb_ary_push(l, e);
	}
	PUT(x, "buckets", l);
	PUT(d, "hold_time", x);
	return d;
}

VALUE rbk_bucket_info_hash(const struct brk_bucket_info *b)
{
	uint64_t full_ms = b->full_in_ns / 1000000u + (b->full_in_ns % 1000000u != 0);
	VALUE d = rb_hash_new(), c, p;

	PUTS(d, "name", b->name);
	PUTS(d, "kind", "bucket");
	PUT(d, "configured", b->configured ? Qtrue : Qfalse);
	PUT(d, "rate_per_s", DBL2NUM(b->rate_per_s));
	PUTU(d, "burst", b->burst);
	PUTU(d, "interval_ns", b->interval_ns);
	PUT(d, "tokens", DBL2NUM(b->tokens));
	PUTU(d, "full_in_ms", full_ms);
	c = rb_hash_new();
	PUTU(c, "taken", b->taken);
	PUTU(c, "denied", b->denied);
	PUTU(c, "tokens_taken", b->tokens_taken);
	PUT(d, "counters", c);
	if (!b->paced)
		return d;
	PUT(d, "paced", Qtrue);
	p = rb_hash_new();
	PUT(p, "rate", DBL2NUM(b->learned_per_s));
	PUT(p, "ceiling", DBL2NUM(b->ceiling_per_s));
	PUT(p, "floor", DBL2NUM(b->floor_per_s));
	PUT(p, "w_max", DBL2NUM(b->w_max_per_s));
	PUTU(p, "reserve_pct", b->reserve_pct);
	PUT(p, "fleet", b->fleet ? Qtrue : Qfalse);
	PUT(p, "accepted_per_s", DBL2NUM(b->accepted_per_s));
	PUT(p, "last_cut_age_ms", age_or_nil(b->last_cut_age_ms));
	PUT(p, "last_denied_age_ms", age_or_nil(b->last_denied_age_ms));
	c = rb_hash_new();
	PUTU(c, "cuts", b->cuts);
	PUTU(c, "limited", b->limited);
	PUTU(c, "ok", b->ok);
	PUTU(c, "high_taken", b->high_taken);
	PUT(p, "counters", c);
	PUT(d, "pace", p);
	return d;
}

VALUE rbk_budget_info_hash(const struct brk_budget_info *g)
{
	uint64_t all = g->deposits + g->retries;
	VALUE d = rb_hash_new(), c, s;

	PUTS(d, "name", g->name);
	PUTS(d, "kind", "budget");
	PUT(d, "configured", g->configured ? Qtrue : Qfalse);
	PUT(d, "floor_per_s", DBL2NUM(g->floor_per_s));
	PUT(d, "ratio", DBL2NUM(g->ratio));
	PUTU(d, "floor_burst", g->floor_burst);
	PUT(d, "balance", DBL2NUM(g->balance));
	PUT(d, "pool", DBL2NUM(g->pool));
	PUT(d, "floor_tokens", DBL2NUM(g->floor_tokens));
	c = rb_hash_new();
	PUTU(c, "deposits", g->deposits);
	PUTU(c, "retries", g->retries);
	PUTU(c, "retries_floor", g->retries_floor);
	PUTU(c, "deferred", g->deferred);
	PUT(d, "counters", c);
	s = rb_hash_new();
	PUTU(s, "first_attempts", g->deposits);
	PUTU(s, "retries", g->retries);
	PUT(s, "retry_share", DBL2NUM(all ? (double)g->retries / (double)all : 0.0));
	PUT(s, "tokens_left", DBL2NUM(g->balance));
	PUT(d, "signals", s);
	return d;
}
