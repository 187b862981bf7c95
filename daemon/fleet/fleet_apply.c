/*
 * fleet_apply.c - a peer's decision applied here, or refused and counted.
 */
#include "fleet_apply.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fleet_msg.h"
#include "fleet_record.h"
#include "fleet_self.h"
#include "fleet_report.h"
#include "logfmt.h"

/* Refusals are logged at most once a second per cause; the next line
 * says how many were left out (subscriber thread only: no lock). */
static uint64_t last_log_ms[BRK_FLEET_DROP_COUNT];
static uint64_t suppressed[BRK_FLEET_DROP_COUNT];

static int quiet; /* a periodic re-read: refusals not counted nor logged */

static int refuse(int cause, const char *host, const char *name,
		  const char *why, uint64_t now_ms)
{
	struct logline l;

	if (quiet)
		return FLEET_DROPPED;
	if (cause < 0 || (unsigned)cause >= BRK_FLEET_DROP_COUNT)
		cause = BRK_FLEET_DROP_MALFORMED;
	fleet_status_drop(cause);
	if (last_log_ms[cause] && now_ms - last_log_ms[cause] < 1000) {
		suppressed[cause]++;
		return FLEET_DROPPED;
	}
	last_log_ms[cause] = now_ms ? now_ms : 1;
	/* hosts holding different records is normal: info; the other
	 * causes (malformed, too old, a kind for the wrong record, not
	 * fleet-wide here) say a peer or the setup is wrong: warn */
	ll_begin(&l, cause == BRK_FLEET_DROP_UNKNOWN ? "info" : "warn",
		 "fleet message refused");
	ll_str(&l, "fleet", "refused");
	ll_str(&l, "cause", brk_fleet_drop_name(cause));
	if (host && *host)
		ll_str(&l, "host", host);
	if (name && *name)
		ll_str(&l, "name", name);
	ll_str(&l, "why", why);
	if (suppressed[cause])
		ll_u64(&l, "suppressed", suppressed[cause]);
	ll_end(&l);
	suppressed[cause] = 0;
	return FLEET_DROPPED;
}

static int failed(const struct fleet_msg *m, int rc)
{
	struct logline l;

	ll_begin(&l, "warn", "fleet decision not applied");
	ll_str(&l, "host", m->host);
	ll_str(&l, "name", m->name);
	ll_str(&l, "kind", fleet_kind_name(m->kind));
	ll_str(&l, "err", brk_strerror(rc));
	ll_end(&l);
	return FLEET_FAILED;
}

/* A peer's period as it came (at least 1 ms): the library caps it at this
 * host's max_open_ms, in the one place every cooling goes through. */
static uint64_t period(uint64_t ms)
{
	return ms ? ms : 1;
}

static int apply_breaker(brk_breaker *b, const struct brk_info *in,
			 const struct fleet_msg *m)
{
	switch (m->kind) {
	case FLEET_OPEN:
		return brk_trip_extend(b, period(m->remaining_ms));
	case FLEET_COOL_UNTIL:
		return brk_cool_for(b, period(m->remaining_ms));
	case FLEET_FORCED:
		if (in->mode == m->mode)
			return -EALREADY;
		return brk_set_mode(b, m->mode);
	case FLEET_RESET:
		if (in->state == BRK_CLOSED && in->mode == BRK_MODE_NORMAL &&
		    in->cool_until_remaining_ms == 0)
			return -EALREADY;
		return brk_reset(b);
	case FLEET_CLOSE:
		/* the fleet's prober succeeded: only the breakers held open
		 * for it close (a local decision since stands otherwise) */
		if (!in->config.fleet_probe || in->mode != BRK_MODE_NORMAL ||
		    in->state == BRK_CLOSED)
			return -EALREADY;
		return brk_reset(b);
	default:
		return -EINVAL;
	}
}

/* The wall time of something @age_ms ago (UINT64_MAX: never -> 0). */
static uint64_t ago(uint64_t now_ms, uint64_t age_ms)
{
	if (age_ms == UINT64_MAX || age_ms >= now_ms)
		return 0;
	return now_ms - age_ms;
}

/* 1 if the catch-up key @m is older than what this host decided since,
 * so applying it
 * would undo a newer local decision (docs/design/fleet.md "Fleet link", staleness):
 * an open, cool_until or forced (not normal) for a breaker that is
 * closed and normal here and changed state after m->sent_ms (a reset or
 * a close since); a pace_cut for a pace cut here at or after
 * m->sent_ms (already applied, or a newer cut). */
static int stale(brk_bucket *k, const struct brk_info *in,
		 const struct fleet_msg *m, uint64_t now_ms)
{
	struct brk_bucket_info bi;

	if (m->kind == FLEET_PACE_CUT) {
		if (brk_bucket_info(k, &bi) != 0)
			return 0;
		return ago(now_ms, bi.last_cut_age_ms) >= m->sent_ms;
	}
	if (m->kind != FLEET_OPEN && m->kind != FLEET_COOL_UNTIL &&
	    !(m->kind == FLEET_FORCED && m->mode != BRK_MODE_NORMAL))
		return 0;
	if (in->state != BRK_CLOSED || in->mode != BRK_MODE_NORMAL)
		return 0;
	return ago(now_ms, in->last_change_age_ms) > m->sent_ms;
}

/* A message with our host id that we did not send: another breakerd
 * runs with the same --host-id, and neither hears the other. Logged at
 * most once every 10 s (the next line says how many were left out). */
static int duplicate(const struct fleet_msg *m, uint64_t now_ms)
{
	static uint64_t last_ms, left_out;
	struct logline l;

	if (last_ms && now_ms - last_ms < 10000) {
		left_out++;
		return FLEET_OWN;
	}
	last_ms = now_ms ? now_ms : 1;
	ll_begin(&l, "warn", "another breakerd uses this host id: its "
		 "decisions are not applied here, nor ours there; give each "
		 "host its own --host-id");
	ll_str(&l, "fleet", "duplicate_host_id");
	ll_str(&l, "host", m->host);
	ll_str(&l, "name", m->name);
	ll_u64(&l, "seq", m->seq);
	if (left_out)
		ll_u64(&l, "suppressed", left_out);
	ll_end(&l);
	left_out = 0;
	return FLEET_OWN;
}

int fleet_apply(brk_segment *seg, const char *self, const char *buf,
		size_t len, uint64_t now_ms, int from)
{
	struct fleet_msg m;
	struct brk_info in = { 0 };
	brk_breaker *b = NULL;
	brk_bucket *k = NULL;
	char why[128];
	int cause = BRK_FLEET_DROP_MALFORMED, rc, fleet;

	why[0] = '\0';
	memset(&m, 0, sizeof(m));
	if (fleet_msg_decode(buf, len, now_ms, &m, &cause, why,
			     sizeof(why)) != 0) {
		if (strcmp(m.host, self) == 0) /* e.g. our own, expired */
			return FLEET_OWN;
		if (from == FLEET_FROM_RECHECK)
			return FLEET_DROPPED;
		fleet_status_count(FLEET_C_RECEIVED);
		fleet_status_seen(now_ms);
		return refuse(cause, m.host, m.name, why[0] ? why : "refused",
			      now_ms);
	}
	if (strcmp(m.host, self) == 0) {
		/* a catch-up key may be from our previous run: only live
		 * messages tell an echo from a namesake */
		if (from == FLEET_FROM_PUBSUB && !fleet_self_sent(m.seq, m.sent_ms))
			return duplicate(&m, now_ms);
		return FLEET_OWN;
	}
	if (from != FLEET_FROM_RECHECK) {
		fleet_status_count(FLEET_C_RECEIVED);
		fleet_status_seen(now_ms);
	}

	quiet = from == FLEET_FROM_RECHECK;
	if (m.kind == FLEET_PACE_CUT) {
		fleet = fleet_pace_lookup(seg, m.name, &k);
		if (fleet == -EMEDIUMTYPE)
			return refuse(BRK_FLEET_DROP_KIND, m.host, m.name,
				      "pace_cut for a record that is not a pace",
				      now_ms);
	} else {
		fleet = fleet_breaker_lookup(seg, m.name, &b, &in);
		if (fleet == -EMEDIUMTYPE)
			return refuse(BRK_FLEET_DROP_KIND, m.host, m.name,
				      "a breaker's decision for a record that is "
				      "not a breaker", now_ms);
	}
	if (fleet == -ENOENT)
		return refuse(BRK_FLEET_DROP_UNKNOWN, m.host, m.name,
			      "no record of that name here", now_ms);
	if (fleet < 0)
		return failed(&m, fleet);
	if (fleet == 0)
		return refuse(BRK_FLEET_DROP_NOT_FLEET, m.host, m.name,
			      "the record here is not fleet-wide", now_ms);

	/* only a stored key can be older than a decision here: live messages
	 * come in their sender's order (its reset, then its trip in the same
	 * millisecond, must both apply) */
	if (from != FLEET_FROM_PUBSUB && stale(k, &in, &m, now_ms)) {
		fleet_status_count(FLEET_C_IGNORED);
		return FLEET_IGNORED;
	}
	rc = brk_set_origin(seg, m.host);
	if (rc < 0)
		return failed(&m, rc);
	if (m.kind == FLEET_PACE_CUT)
		rc = brk_pace_cut(k, m.rate_milli);
	else
		rc = apply_breaker(b, &in, &m);
	(void)brk_set_origin(seg, NULL);
	if (rc == -EALREADY) {
		fleet_status_count(FLEET_C_IGNORED);
		return FLEET_IGNORED;
	}
	if (rc < 0)
		return failed(&m, rc);
	fleet_status_count(FLEET_C_APPLIED);
	fleet_status_lag(m.lag_ms);
	return FLEET_APPLIED;
}
