/*
 * bctl_json.c - JSON forms of a breaker snapshot, the segment header and an
 * event, with the field names docs/design/cli.md promises (durations in _ms).
 */
#include <stdint.h>

#include "bctl_out.h"
#include "cli_util.h"

/* JSON integers are signed 64-bit: clamp, never wrap. */
static json_t *ju(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX
						    : (json_int_t)v);
}

static void set(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v); /* a NULL @v is dropped */
}

static json_t *json_name(const char *name, size_t cap)
{
	char safe[BRK_NAME_MAX + 1];

	bctl_safe_name(name, cap, safe);
	return json_string(safe);
}

static json_t *json_config(const struct brk_config *c)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	set(o, "failure_threshold", ju(c->failure_threshold));
	set(o, "failure_rate_pct", ju(c->failure_rate_pct));
	set(o, "window_ms", ju(c->window_ms));
	set(o, "min_calls", ju(c->min_calls));
	set(o, "slow_call_ms", ju(c->slow_call_ms));
	set(o, "slow_rate_pct", ju(c->slow_rate_pct));
	set(o, "open_ms", ju(c->open_ms));
	set(o, "max_open_ms", ju(c->max_open_ms));
	set(o, "half_open_probes", ju(c->half_open_probes));
	set(o, "success_threshold", ju(c->success_threshold));
	set(o, "probe_timeout_ms", ju(c->probe_timeout_ms));
	set(o, "max_wait_ms", ju(c->max_wait_ms));
	set(o, "max_concurrent", ju(c->max_concurrent));
	set(o, "min_distinct_processes", ju(c->min_distinct_processes));
	set(o, "reserve_pct", ju(c->reserve_pct));
	set(o, "hold_histogram", json_boolean(c->hold_histogram));
	set(o, "fleet", json_boolean(c->fleet));
	set(o, "fleet_probe", json_boolean(c->fleet_probe));
	set(o, "implicit_pace", json_boolean(c->implicit_pace));
	set(o, "concurrency_auto", json_boolean(c->concurrency_auto));
	set(o, "min_concurrent", ju(c->min_concurrent));
	return o;
}

static json_t *json_reasons(const struct brk_counters *c)
{
	json_t *o = json_object();
	int r;

	if (!o)
		return NULL;
	/* every reason but "none", named by the library */
	for (r = BRK_REASON_NONE + 1; r < BRK_REASON_COUNT; r++)
		set(o, brk_reason_name(r), ju(c->failures_by_reason[r]));
	return o;
}

static json_t *json_counters(const struct brk_counters *c)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	set(o, "allowed", ju(c->allowed));
	set(o, "rejected_open", ju(c->rejected_open));
	set(o, "rejected_cooling", ju(c->rejected_cooling));
	set(o, "rejected_full", ju(c->rejected_full));
	set(o, "successes", ju(c->successes));
	set(o, "failures", ju(c->failures));
	set(o, "healthy_errors", ju(c->healthy_errors));
	set(o, "ignored", ju(c->ignored));
	set(o, "cancelled", ju(c->cancelled));
	set(o, "throttled", ju(c->throttled));
	set(o, "probes", ju(c->probes));
	set(o, "reclaimed", ju(c->reclaimed));
	set(o, "transitions", ju(c->transitions));
	set(o, "stale", ju(c->stale));
	set(o, "failures_by_reason", json_reasons(c));
	return o;
}

static json_t *json_leases(const struct brk_info *in)
{
	size_t max = sizeof(in->leases) / sizeof(in->leases[0]), i;
	size_t n = in->n_leases < max ? in->n_leases : max;
	json_t *a = json_array(), *l;

	if (!a)
		return NULL;
	for (i = 0; i < n; i++) {
		l = json_object();
		if (!l)
			break;
		set(l, "pid", json_integer(in->leases[i].pid));
		set(l, "kind", json_string(brk_lease_kind_name(in->leases[i].kind)));
		set(l, "age_ms", ju(in->leases[i].age_ms));
		json_array_append_new(a, l);
	}
	return a;
}

static json_t *json_window(const struct brk_info *in)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	set(o, "calls", ju(in->window_calls));
	set(o, "failures", ju(in->window_failures));
	set(o, "slow", ju(in->window_slow));
	set(o, "distinct_failing_processes", ju(in->distinct_failing_processes));
	return o;
}

/* "signals": what an admission controller or a dashboard reads off a
 * breaker (docs/design/cli.md "Signals"). in_flight: every lease out
 * (bulkhead permits and half-open probes); remaining_concurrent: bulkhead
 * permits still free, null without a bulkhead (max_concurrent 0). */
static json_t *json_signals(const struct brk_info *in)
{
	json_t *o = json_object();
	/* max_concurrent auto: the learned limit bounds the permits */
	uint32_t max = in->config.concurrency_auto ? (uint32_t)in->concurrency_limit
						   : in->config.max_concurrent;

	if (!o)
		return NULL;
	set(o, "arrivals", ju(in->arrivals));
	set(o, "completions", ju(in->completions));
	set(o, "in_flight", ju((uint64_t)in->in_flight + in->probes_in_flight));
	set(o, "oldest_in_flight_ms", ju(in->oldest_in_flight_ms));
	set(o, "max_concurrent", ju(in->config.max_concurrent));
	set(o, "half_open_probes", ju(in->config.half_open_probes));
	set(o, "remaining_concurrent", max == 0 ? json_null()
	    : ju(in->in_flight < max ? max - in->in_flight : 0));
	return o;
}

/* "hold_time": permit hold time (brk_info.hold). state "off"
 * (hold_histogram off), "none" (on, no release yet), "recorded" or
 * "no_room"; buckets: [{"le": bound in s,
 * the string "+Inf" for the last (Prometheus' spelling; JSON has no
 * infinity), "count": holds at most le, cumulative like Prometheus' le,
 * so the last is "count"}]. */
static json_t *json_hold(const struct brk_hold_info *h)
{
	json_t *o = json_object(), *a;
	uint64_t le = 0;
	unsigned i;

	if (!o)
		return NULL;
	set(o, "state", json_string(brk_hold_state_name(h->state)));
	set(o, "count", ju(h->count));
	set(o, "sum_us", ju(h->sum_us));
	a = json_array();
	for (i = 0; a && i < BRK_HOLD_BUCKETS; i++) {
		uint64_t b = brk_hold_bound_us(i);
		json_t *e = json_object();

		if (!e)
			break;
		le += h->bucket[i];
		set(e, "le", b == UINT64_MAX ? json_string("+Inf") :
			json_real((double)b / 1e6));
		set(e, "count", ju(le));
		json_array_append_new(a, e);
	}
	set(o, "buckets", a);
	return o;
}

json_t *bctl_json_breaker(const struct brk_info *in)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	set(o, "name", json_name(in->name, sizeof(in->name)));
	if (in->kind != BRK_KIND_BREAKER) {
		set(o, "kind", json_string(brk_kind_name(in->kind)));
		return o;
	}
	set(o, "kind", json_string("breaker"));
	set(o, "state", json_string(brk_state_name(in->state)));
	set(o, "mode", json_string(brk_mode_name(in->mode)));
	set(o, "generation", ju(in->generation_full));
	set(o, "consecutive_failures", ju(in->consecutive_failures));
	set(o, "failure_streak", ju(in->failure_streak));
	set(o, "cooling_level", ju(in->cooling_level));
	set(o, "open_remaining_ms", ju(in->open_remaining_ms));
	set(o, "cool_until_remaining_ms", ju(in->cool_until_remaining_ms));
	set(o, "half_open_successes", ju(in->half_open_successes));
	set(o, "probes_in_flight", ju(in->probes_in_flight));
	set(o, "in_flight", ju(in->in_flight));
	/* waiters in the bulkhead's queue (brk_admit() with a wait);
	 * null without a bulkhead, as signals.remaining_concurrent */
	set(o, "queued", in->config.max_concurrent || in->config.concurrency_auto
		? ju(in->queued) : json_null());
	set(o, "record_bytes", ju(in->record_bytes));
	set(o, "leases", json_leases(in));
	set(o, "window", json_window(in));
	set(o, "config", json_config(&in->config));
	set(o, "implicit_pace_per_s", in->implicit_pace_per_s > 0.0 ?
		json_real(in->implicit_pace_per_s) : json_null());
	/* the bulkhead's limit now: learned (max_concurrent auto) or
	 * max_concurrent; the latencies only for a learned one */
	set(o, "concurrency_limit", json_real(in->concurrency_limit));
	set(o, "latency_baseline_us", in->config.concurrency_auto ?
		ju(in->latency_baseline_us) : json_null());
	set(o, "latency_recent_us", in->config.concurrency_auto ?
		ju(in->latency_recent_us) : json_null());
	set(o, "counters", json_counters(&in->counters));
	set(o, "signals", json_signals(in));
	set(o, "hold_time", json_hold(&in->hold));
	return o;
}

json_t *bctl_json_segment(const struct brk_segment_info *s)
{
	json_t *o = json_object();
	enum bctl_daemon d = bctl_daemon_state(s);

	if (!o)
		return NULL;
	set(o, "shm", json_name(s->shm_name, sizeof(s->shm_name)));
	set(o, "capacity", ju(s->capacity));
	set(o, "used", ju(s->used));
	set(o, "arena_bytes", ju(s->arena_bytes));
	set(o, "arena_used_bytes", ju(s->arena_used_bytes));
	set(o, "daemon_pid", json_integer(s->daemon_pid));
	set(o, "heartbeat_age_ms", d == BCTL_DAEMON_NEVER ?
	    json_null() : ju(s->heartbeat_age_ms));
	set(o, "daemon_interval_ms", ju(s->daemon_interval_ms));
	set(o, "daemon_running", json_boolean(d == BCTL_DAEMON_OK));
	return o;
}

json_t *bctl_json_event(const struct brk_event *e)
{
	json_t *o = json_object();
	char when[40];

	if (!o)
		return NULL;
	set(o, "seq", ju(e->seq));
	if (cli_format_time(e->wall_ms, when, sizeof(when)) == 0)
		set(o, "time", json_string(when));
	else
		set(o, "time", json_null());
	set(o, "name", json_name(e->name, sizeof(e->name)));
	/* a health event's from/to are health states, the fleet link's
	 * event's link states */
	set(o, "from", json_string(e->reason == BRK_EV_HEALTH
					   ? brk_health_state_name(e->from)
					   : e->reason == BRK_EV_FLEET_LINK
					   ? brk_fleet_state_name(e->from)
					   : brk_state_name(e->from)));
	set(o, "to", json_string(e->reason == BRK_EV_HEALTH
					 ? brk_health_state_name(e->to)
					 : e->reason == BRK_EV_FLEET_LINK
					 ? brk_fleet_state_name(e->to)
					 : brk_state_name(e->to)));
	set(o, "reason", json_string(brk_event_reason_name(e->reason)));
	set(o, "pid", json_integer(e->pid));
	/* "local", or "remote:HOST": a fleet peer's decision applied here */
	if (e->origin[0]) {
		char host[BRK_HOST_ID_MAX + 1], s[BRK_HOST_ID_MAX + 8];

		bctl_event_origin(e, host);
		snprintf(s, sizeof(s), "remote:%s", host);
		set(o, "origin", json_string(s));
	} else {
		set(o, "origin", json_string("local"));
	}
	set(o, "value", ju(e->value));
	if (e->reason == BRK_EV_HEALTH)
		set(o, "code", json_string(brk_health_code_name((int)(e->value > 255 ? 255 : e->value))));
	/* a pace cut: the keys stay those of every event (from/to are the
	 * record's unchanged "closed"); the new rate in tokens/s too */
	if (e->reason == BRK_EV_PACE_CUT || e->reason == BRK_EV_PACE_IMPLICIT)
		set(o, "rate_per_s", json_real((double)e->value / 1000.0));
	if (e->reason == BRK_EV_FORCED)
		set(o, "mode", json_string(brk_mode_name((int)(e->value > 255 ? 255 : e->value))));
	return o;
}

int bctl_json_put(json_t *j, int compact)
{
	/* Reals (bucket rates, budget ratios) to 15 significant digits:
	 * 0.3, not 0.29999999999999999. */
	size_t flags = (compact ? JSON_COMPACT : JSON_INDENT(2)) |
		       JSON_REAL_PRECISION(15);
	int rc;

	if (!j)
		return -1;
	rc = json_dumpf(j, stdout, flags | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (rc < 0 || fputc('\n', stdout) == EOF)
		return -1;
	return 0;
}
