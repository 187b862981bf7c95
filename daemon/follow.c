/*
 * follow.c - log the segment's events (transitions, reclaims, cool-untils)
 * as logfmt lines, whichever process recorded them.
 */
#include "follow.h"

#include <stdio.h>

#include "logfmt.h"

#define FOLLOW_BATCH 64
/* Bound one drain so a flood of events cannot starve the reclaim scan. */
#define FOLLOW_MAX_PER_DRAIN 4096

void follow_init(struct follower *f, brk_segment *seg)
{
	struct brk_segment_info si;

	f->seg = seg;
	f->cursor = 1;
	f->logged = 0;
	f->lost = 0;
	if (brk_segment_info(seg, &si) == 0)
		f->cursor = si.events_written + 1;
}

static int is_reclaim(int reason)
{
	return reason == BRK_EV_RECLAIM_DEAD || reason == BRK_EV_RECLAIM_TIMEOUT;
}

/* The meaning of brk_event.value depends on the reason. */
static const char *value_key(int reason, int to)
{
	switch (reason) {
	case BRK_EV_COOL_UNTIL:
		return "wait_ms";
	case BRK_EV_RETIRED:
		return "idle_ms";
	case BRK_EV_THRESHOLD:
	case BRK_EV_PROBE_FAILED:
	case BRK_EV_RETRY_AFTER:
	case BRK_EV_TRIP:
	case BRK_EV_FAILURE_RATE:
	case BRK_EV_SLOW_RATE:
		return "open_ms";
	default:
		return to == BRK_OPEN ? "open_ms" : "value";
	}
}

/* origin=remote:HOST for a fleet peer's decision applied here
 * (brk_set_origin()); nothing for this host's own */
static void log_origin(struct logline *l, const struct brk_event *ev)
{
	char origin[sizeof(ev->origin) + 8];

	if (!ev->origin[0])
		return;
	snprintf(origin, sizeof(origin), "remote:%s", ev->origin);
	ll_str(l, "origin", origin);
}

static void log_event(const struct brk_event *ev)
{
	struct logline l;
	const char *msg, *level = "info";

	if (ev->reason == BRK_EV_HEALTH) { /* from/to: health states */
		ll_begin(&l, "info", "health");
		ll_str(&l, "name", ev->name);
		ll_u64(&l, "seq", ev->seq);
		ll_str(&l, "from", brk_health_state_name(ev->from));
		ll_str(&l, "to", brk_health_state_name(ev->to));
		ll_str(&l, "code", brk_health_code_name((int)(ev->value > 255 ? 255 : ev->value)));
		ll_i64(&l, "pid", ev->pid);
		ll_time(&l, "at", ev->wall_ms);
		ll_end(&l);
		return;
	}
	if (ev->reason == BRK_EV_PACE_CUT || ev->reason == BRK_EV_PACE_IMPLICIT) {
		char rate[32]; /* a bucket: no state transition */

		snprintf(rate, sizeof(rate), "%.3f", (double)ev->value / 1000.0);
		ll_begin(&l, "info", ev->reason == BRK_EV_PACE_CUT ? "pace cut"
				    : "implicit pace made");
		ll_str(&l, "name", ev->name);
		ll_u64(&l, "seq", ev->seq);
		ll_str(&l, "reason", brk_event_reason_name(ev->reason));
		ll_str(&l, "rate_per_s", rate);
		ll_i64(&l, "pid", ev->pid);
		log_origin(&l, ev);
		ll_time(&l, "at", ev->wall_ms);
		ll_end(&l);
		return;
	}
	if (ev->reason == BRK_EV_FLEET_LINK) { /* from/to: link states */
		ll_begin(&l, "info", "fleet link state");
		ll_u64(&l, "seq", ev->seq);
		ll_str(&l, "from", brk_fleet_state_name(ev->from));
		ll_str(&l, "to", brk_fleet_state_name(ev->to));
		ll_u64(&l, "reconnects", ev->value);
		ll_i64(&l, "pid", ev->pid);
		ll_time(&l, "at", ev->wall_ms);
		ll_end(&l);
		return;
	}
	if (is_reclaim(ev->reason)) {
		msg = "reclaim";
		level = "warn";
	} else if (ev->reason == BRK_EV_RETIRED) {
		msg = "retired";
	} else if (ev->from != ev->to) {
		msg = "transition";
	} else {
		msg = "event";
	}
	ll_begin(&l, level, msg);
	ll_str(&l, "name", ev->name);
	ll_u64(&l, "seq", ev->seq);
	ll_str(&l, "reason", brk_event_reason_name(ev->reason));
	if (ev->from != ev->to || !is_reclaim(ev->reason)) {
		ll_str(&l, "from", brk_state_name(ev->from));
		ll_str(&l, "to", brk_state_name(ev->to));
	} else {
		ll_str(&l, "state", brk_state_name(ev->to));
	}
	ll_i64(&l, is_reclaim(ev->reason) ? "owner_pid" : "pid", ev->pid);
	log_origin(&l, ev);
	if (ev->value)
		ll_u64(&l, value_key(ev->reason, ev->to), ev->value);
	ll_time(&l, "at", ev->wall_ms);
	ll_end(&l);
}

uint64_t follow_drain(struct follower *f)
{
	struct brk_event evs[FOLLOW_BATCH];
	struct logline l;
	uint64_t lost, total = 0;
	int n, i;

	for (;;) {
		lost = 0;
		n = brk_events_read(f->seg, &f->cursor, evs, FOLLOW_BATCH, &lost);
		if (lost) {
			f->lost += lost;
			ll_begin(&l, "warn", "events lost");
			ll_u64(&l, "lost", lost);
			ll_u64(&l, "lost_total", f->lost);
			ll_u64(&l, "next_seq", f->cursor);
			ll_end(&l);
		}
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			log_event(&evs[i]);
		total += (uint64_t)n;
		f->logged += (uint64_t)n;
		if (n < FOLLOW_BATCH || total >= FOLLOW_MAX_PER_DRAIN)
			break;
	}
	return total;
}
