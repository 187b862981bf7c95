/*
 * bctl_print.c - the human forms: "key: value" lines for inspect, a table
 * for list, one line per event, and the daemon's heartbeat.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "bctl_out.h"
#include "cli_util.h"


void bctl_kv(FILE *f, int indent, const char *key, const char *fmt, ...)
{
	int pad = BCTL_KEY_WIDTH - indent - (int)strlen(key);
	va_list ap;

	fprintf(f, "%*s%s:%*s", indent, "", key, pad < 1 ? 1 : pad, "");
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

static const char *off_or_on(uint64_t v)
{
	return v ? "" : " (off)";
}

static void print_config(FILE *f, const struct brk_config *c)
{
	fprintf(f, "config:\n");
	bctl_kv(f, 2, "failure_threshold", "%" PRIu32, c->failure_threshold);
	bctl_kv(f, 2, "failure_rate_pct", "%" PRIu32 "%s", c->failure_rate_pct,
	   off_or_on(c->failure_rate_pct));
	bctl_kv(f, 2, "window_ms", "%" PRIu64, c->window_ms);
	bctl_kv(f, 2, "min_calls", "%" PRIu32, c->min_calls);
	bctl_kv(f, 2, "slow_call_ms", "%" PRIu64 "%s", c->slow_call_ms,
	   off_or_on(c->slow_call_ms));
	bctl_kv(f, 2, "slow_rate_pct", "%" PRIu32, c->slow_rate_pct);
	bctl_kv(f, 2, "open_ms", "%" PRIu64, c->open_ms);
	bctl_kv(f, 2, "max_open_ms", "%" PRIu64, c->max_open_ms);
	bctl_kv(f, 2, "half_open_probes", "%" PRIu32, c->half_open_probes);
	bctl_kv(f, 2, "success_threshold", "%" PRIu32, c->success_threshold);
	bctl_kv(f, 2, "probe_timeout_ms", "%" PRIu64, c->probe_timeout_ms);
	bctl_kv(f, 2, "max_wait_ms", "%" PRIu64, c->max_wait_ms);
	if (c->concurrency_auto) {
		bctl_kv(f, 2, "max_concurrent", "auto:%" PRIu32 " (learned from "
			"latency)", c->max_concurrent ? c->max_concurrent
						       : (uint32_t)BRK_MAX_CONCURRENT);
		bctl_kv(f, 2, "min_concurrent", "%" PRIu32, c->min_concurrent);
	} else {
		bctl_kv(f, 2, "max_concurrent", "%" PRIu32 "%s", c->max_concurrent,
			c->max_concurrent ? "" : " (no bulkhead)");
	}
	bctl_kv(f, 2, "min_distinct_processes", "%" PRIu32 "%s",
	   c->min_distinct_processes,
	   c->min_distinct_processes > 1 ? "" : " (off)");
	bctl_kv(f, 2, "reserve_pct", "%" PRIu32 "%s", c->reserve_pct,
	   c->reserve_pct ? "" : " (none reserved)");
	bctl_kv(f, 2, "hold_histogram", "%s", c->hold_histogram ? "on" : "off");
	bctl_kv(f, 2, "fleet", "%s", c->fleet ? "on" : "off");
	bctl_kv(f, 2, "fleet_probe", "%s%s", c->fleet_probe ? "on" : "off",
		c->fleet_probe && !c->fleet ? " (acts only with fleet on)" : "");
	bctl_kv(f, 2, "implicit_pace", "%s", c->implicit_pace ? "on" : "off");
}

static void print_counters(FILE *f, const struct brk_counters *c)
{
	const uint64_t *r = c->failures_by_reason;

	fprintf(f, "counters:\n");
	bctl_kv(f, 2, "allowed", "%" PRIu64, c->allowed);
	bctl_kv(f, 2, "rejected_open", "%" PRIu64, c->rejected_open);
	bctl_kv(f, 2, "rejected_cooling", "%" PRIu64, c->rejected_cooling);
	bctl_kv(f, 2, "rejected_full", "%" PRIu64, c->rejected_full);
	bctl_kv(f, 2, "successes", "%" PRIu64, c->successes);
	bctl_kv(f, 2, "failures", "%" PRIu64, c->failures);
	bctl_kv(f, 2, "failures_by_reason",
	   "timeout %" PRIu64 ", connect %" PRIu64 ", server_error %" PRIu64
	   ", overloaded %" PRIu64 ", rate_limited %" PRIu64 ", other %" PRIu64,
	   r[BRK_REASON_TIMEOUT], r[BRK_REASON_CONNECT],
	   r[BRK_REASON_SERVER_ERROR], r[BRK_REASON_OVERLOADED],
	   r[BRK_REASON_RATE_LIMITED], r[BRK_REASON_OTHER]);
	bctl_kv(f, 2, "healthy_errors", "%" PRIu64, c->healthy_errors);
	bctl_kv(f, 2, "ignored", "%" PRIu64, c->ignored);
	bctl_kv(f, 2, "cancelled", "%" PRIu64, c->cancelled);
	bctl_kv(f, 2, "throttled", "%" PRIu64, c->throttled);
	bctl_kv(f, 2, "probes", "%" PRIu64, c->probes);
	bctl_kv(f, 2, "reclaimed", "%" PRIu64, c->reclaimed);
	bctl_kv(f, 2, "transitions", "%" PRIu64, c->transitions);
	bctl_kv(f, 2, "stale", "%" PRIu64, c->stale);
}

/* Permit hold time (brk_info.hold): the total, then per bucket the holds
 * at most its upper bound in seconds, cumulative like Prometheus' le (so
 * le_+Inf is every hold; bctl metrics exports the same numbers). */
static void print_hold(FILE *f, const struct brk_hold_info *h, int on)
{
	uint64_t le = 0;
	unsigned i;

	if (h->state == BRK_HOLD_OFF || (!on && h->state != BRK_HOLD_RECORDED)) {
		bctl_kv(f, 0, "hold_time", "off (bctl config NAME --hold-histogram on)");
		return;
	}
	if (h->state == BRK_HOLD_NOROOM) {
		bctl_kv(f, 0, "hold_time", "not recorded (no room left in the segment's arena)");
		return;
	}
	if (h->state != BRK_HOLD_RECORDED) {
		bctl_kv(f, 0, "hold_time", "no release yet");
		return;
	}
	bctl_kv(f, 0, "hold_time", "%" PRIu64 " holds, %" PRIu64 ".%06" PRIu64
		" s in all", h->count, h->sum_us / 1000000u, h->sum_us % 1000000u);
	for (i = 0; i < BRK_HOLD_BUCKETS; i++) {
		uint64_t b = brk_hold_bound_us(i);
		char key[32];

		if (b == UINT64_MAX)
			snprintf(key, sizeof key, "le_+Inf");
		else
			snprintf(key, sizeof key, "le_%g", (double)b / 1e6);
		le += h->bucket[i];
		bctl_kv(f, 2, key, "%" PRIu64, le);
	}
}

static void print_leases(FILE *f, const struct brk_info *in)
{
	size_t max = sizeof(in->leases) / sizeof(in->leases[0]), i;
	size_t n = in->n_leases < max ? in->n_leases : max;

	bctl_kv(f, 0, "leases", "%zu", n);
	for (i = 0; i < n; i++)
		fprintf(f, "  %-7s pid %" PRId32 ", age %" PRIu64 " ms\n",
			brk_lease_kind_name(in->leases[i].kind),
			in->leases[i].pid, in->leases[i].age_ms);
}

void bctl_print_breaker(FILE *f, const struct brk_info *in)
{
	char name[BRK_NAME_MAX + 1];

	bctl_safe_name(in->name, sizeof(in->name), name);
	bctl_kv(f, 0, "name", "%s", name);
	bctl_kv(f, 0, "state", "%s", brk_state_name(in->state));
	bctl_kv(f, 0, "mode", "%s", brk_mode_name(in->mode));
	bctl_kv(f, 0, "generation", "%" PRIu64, in->generation_full);
	bctl_kv(f, 0, "consecutive_failures", "%" PRIu64, in->consecutive_failures);
	bctl_kv(f, 0, "cooling_level", "%" PRIu32, in->cooling_level);
	bctl_kv(f, 0, "open_remaining_ms", "%" PRIu64, in->open_remaining_ms);
	bctl_kv(f, 0, "cool_until_remaining_ms", "%" PRIu64,
	   in->cool_until_remaining_ms);
	bctl_kv(f, 0, "half_open_successes", "%" PRIu32, in->half_open_successes);
	bctl_kv(f, 0, "probes_in_flight", "%" PRIu32, in->probes_in_flight);
	bctl_kv(f, 0, "in_flight", "%" PRIu32, in->in_flight);
	if (in->config.max_concurrent || in->config.concurrency_auto)
		bctl_kv(f, 0, "queued", "%" PRIu64 " (waiting in the bulkhead's "
			"queue for a permit)", in->queued);
	if (in->config.concurrency_auto)
		bctl_kv(f, 0, "concurrency_limit", "%.2f (learned; latency "
			"baseline %" PRIu64 " us, recent %" PRIu64 " us)",
			in->concurrency_limit, in->latency_baseline_us,
			in->latency_recent_us);
	bctl_kv(f, 0, "record_bytes", "%" PRIu32, in->record_bytes);
	if (in->implicit_pace_per_s > 0.0)
		bctl_kv(f, 0, "implicit_pace", "%.3f/s (learned by %s:pace from the "
			"upstream's rate-limit answers)", in->implicit_pace_per_s, name);
	bctl_kv(f, 0, "window", "%" PRIu64 " calls, %" PRIu64 " failures, %" PRIu64
	   " slow, %" PRIu32 " failing processes", in->window_calls,
	   in->window_failures, in->window_slow, in->distinct_failing_processes);
	print_hold(f, &in->hold, in->config.hold_histogram != 0);
	print_leases(f, in);
	print_config(f, &in->config);
	print_counters(f, &in->counters);
}

void bctl_print_segment(FILE *f, const struct brk_segment_info *s)
{
	char shm[BRK_NAME_MAX + 1];

	bctl_safe_name(s->shm_name, sizeof(s->shm_name), shm);
	bctl_kv(f, 0, "segment", "%s, %" PRIu32 " of %" PRIu32 " records used",
	   shm, s->used, s->capacity);
	bctl_kv(f, 0, "arena", "%" PRIu64 " of %" PRIu64 " bytes used (%" PRIu32
	   "-byte units)", s->arena_used_bytes, s->arena_bytes, s->unit_bytes);
	switch (bctl_daemon_state(s)) {
	case BCTL_DAEMON_NEVER:
		bctl_kv(f, 0, "breakerd", "not running");
		break;
	case BCTL_DAEMON_EXITED:
		bctl_kv(f, 0, "breakerd", "not running (pid %" PRId32 " exited, last "
		   "heartbeat %" PRIu64 " ms ago)", s->daemon_pid,
		   s->heartbeat_age_ms);
		break;
	default:
		bctl_kv(f, 0, "breakerd", "pid %" PRId32 ", heartbeat %" PRIu64
		   " ms ago%s", s->daemon_pid, s->heartbeat_age_ms,
		   bctl_daemon_state(s) == BCTL_DAEMON_STALE ?
		   " (stale: stuck or stopped?)" : "");
	}
}

void bctl_print_list_header(FILE *f, int kind)
{
	/* a list of one other kind: its rows are NAME, kind, one free line */
	if (kind && kind != BRK_KIND_BREAKER) {
		fprintf(f, "%-*s %-9s %s\n", BCTL_NAME_WIDTH, "NAME", "KIND",
			"DETAIL");
		return;
	}
	fprintf(f, "%-*s %-9s %5s %4s %10s %10s %9s %10s %10s %10s %10s\n",
		BCTL_NAME_WIDTH, "NAME", "STATE", "FAILS", "COOL", "OPEN_MS",
		"COOLING_MS", "IN_FLIGHT", "ALLOWED", "REJECTED", "SUCCESSES",
		"FAILURES");
}

void bctl_print_list_row(FILE *f, const struct brk_info *in)
{
	char name[BRK_NAME_MAX + 1];
	const struct brk_counters *c = &in->counters;

	bctl_safe_name(in->name, sizeof(in->name), name);
	if (in->kind != BRK_KIND_BREAKER) {
		fprintf(f, "%-*s (%s)\n", BCTL_NAME_WIDTH, name,
			brk_kind_name(in->kind));
		return;
	}
	fprintf(f, "%-*s %-9s %5" PRIu64 " %4" PRIu32 " %10" PRIu64 " %10" PRIu64
		" %9" PRIu32 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		"\n", BCTL_NAME_WIDTH, name, brk_state_name(in->state),
		in->consecutive_failures, in->cooling_level,
		in->open_remaining_ms, in->cool_until_remaining_ms, in->in_flight,
		c->allowed, c->rejected_open + c->rejected_cooling + c->rejected_full,
		c->successes, c->failures);
}

/* "  origin=remote:HOST" for a fleet peer's decision that breakerd
 * applied here; nothing for this host's own */
static void print_origin(FILE *f, const struct brk_event *e)
{
	char host[BRK_HOST_ID_MAX + 1];

	if (!e->origin[0])
		return;
	bctl_event_origin(e, host);
	fprintf(f, "  origin=remote:%s", host);
}

void bctl_print_event(FILE *f, const struct brk_event *e)
{
	char name[BRK_NAME_MAX + 1], when[40];

	bctl_safe_name(e->name, sizeof(e->name), name);
	if (cli_format_time(e->wall_ms, when, sizeof(when)) < 0)
		snprintf(when, sizeof(when), "(bad time)");
	/* a bucket's event (a pace cut) has no state transition: its
	 * from/to are not states of anything; value is milli tokens/s */
	if (e->reason == BRK_EV_PACE_CUT || e->reason == BRK_EV_PACE_IMPLICIT) {
		fprintf(f, "%s  #%" PRIu64 "  %s  %s  rate %.3f/s  pid %" PRId32,
			when, e->seq, name, brk_event_reason_name(e->reason),
			(double)e->value / 1000.0, e->pid);
		print_origin(f, e);
		fputc('\n', f);
		return;
	}
	/* the fleet link's own event: no record; from/to are link states,
	 * value the reconnects */
	if (e->reason == BRK_EV_FLEET_LINK) {
		fprintf(f, "%s  #%" PRIu64 "  (fleet link)  %s -> %s  %s  pid %" PRId32
			"  reconnects %" PRIu64 "\n", when, e->seq,
			brk_fleet_state_name(e->from), brk_fleet_state_name(e->to),
			brk_event_reason_name(e->reason), e->pid, e->value);
		return;
	}
	/* a health event's from/to are health states (enum brk_health_state) */
	fprintf(f, "%s  #%" PRIu64 "  %s  %s -> %s  %s  pid %" PRId32, when,
		e->seq, name,
		e->reason == BRK_EV_HEALTH ? brk_health_state_name(e->from)
					   : brk_state_name(e->from),
		e->reason == BRK_EV_HEALTH ? brk_health_state_name(e->to)
					   : brk_state_name(e->to),
		brk_event_reason_name(e->reason), e->pid);
	if (e->reason == BRK_EV_HEALTH)
		fprintf(f, "  code %s", brk_health_code_name((int)(e->value > 255 ? 255 : e->value)));
	else if (e->reason == BRK_EV_FORCED)
		fprintf(f, "  mode %s", brk_mode_name((int)(e->value > 255 ? 255 : e->value)));
	else if (e->value)
		fprintf(f, "  value %" PRIu64, e->value);
	print_origin(f, e);
	fputc('\n', f);
}

void bctl_event_origin(const struct brk_event *e, char host[BRK_HOST_ID_MAX + 1])
{
	/* the library gives a valid host id or "?"; print nothing else */
	if (brk_host_id_validate(e->origin) == 0 || strcmp(e->origin, "?") == 0)
		snprintf(host, BRK_HOST_ID_MAX + 1, "%s", e->origin);
	else
		snprintf(host, BRK_HOST_ID_MAX + 1, "?");
}
