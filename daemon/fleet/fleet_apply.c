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

static uint64_t apply_now_ms; /* fleet_apply()'s now, for apply_breaker() */
static const struct fleet_keys *keys;
static const char (*peers)[BRK_HOST_ID_MAX + 1];
static unsigned npeers;

void fleet_apply_policy(const struct fleet_keys *k,
			const char (*p)[BRK_HOST_ID_MAX + 1], unsigned n)
{
	keys = k;
	peers = p;
	npeers = p ? n : 0;
}

/* What this host knows of a peer host id (subscriber thread only). */
struct peer {
	char host[BRK_HOST_ID_MAX + 1]; /* "": free */
	uint64_t boot, seq;      /* the highest (boot, seq) accepted live */
	uint64_t accepted_ms;    /* wall ms when it was accepted */
	uint64_t last_ms;        /* wall ms of its last message here */
	uint64_t tokens_milli;   /* rate limit: tokens x 1000 */
	uint64_t refill_ms;
};
static struct peer peer_tab[FLEET_PEER_SLOTS];
static uint64_t all_tokens_milli = FLEET_ALL_BURST * 1000ull, all_refill_ms;

static int allowed(const char *host)
{
	unsigned i;

	if (npeers == 0)
		return 1;
	for (i = 0; i < npeers; i++)
		if (strcmp(peers[i], host) == 0)
			return 1;
	return 0;
}

static int take(uint64_t *t, uint64_t *at, unsigned rate, unsigned burst,
		uint64_t now_ms);

/* The first message from a host id this breakerd has not heard (or no
 * longer remembers): warn; a burst of 10 lines, then 1 a second (the
 * next line says how many were left out). */
static void first_seen(const char *host, int ok, uint64_t now_ms)
{
	static uint64_t tokens = 10000, at, left_out;
	struct logline l;

	if (!take(&tokens, &at, 1, 10, now_ms)) {
		left_out++;
		return;
	}
	ll_begin(&l, "warn", ok ? "fleet: first message from a new host id"
		 : "fleet: first message from a host id not in --fleet-peer "
		   "(refused)");
	ll_str(&l, "fleet", "new_peer");
	ll_str(&l, "host", host);
	ll_str(&l, "allowed", ok ? "yes" : "no");
	ll_str(&l, "signed", keys && keys->n ? "yes" : "no");
	if (left_out)
		ll_u64(&l, "suppressed", left_out);
	ll_end(&l);
	left_out = 0;
}

/* @host's slot; a new one (the least recently heard reused when full)
 * with the first-seen warning. */
static struct peer *peer_get(const char *host, int ok, uint64_t now_ms)
{
	struct peer *p, *old = &peer_tab[0];
	unsigned i;

	for (i = 0; i < FLEET_PEER_SLOTS; i++) {
		p = &peer_tab[i];
		if (p->host[0] && strcmp(p->host, host) == 0)
			return p;
		if (!p->host[0] || (old->host[0] && p->last_ms < old->last_ms))
			old = p;
	}
	first_seen(host, ok, now_ms);
	memset(old, 0, sizeof(*old));
	snprintf(old->host, sizeof(old->host), "%s", host);
	old->tokens_milli = FLEET_PEER_BURST * 1000ull;
	old->refill_ms = now_ms;
	old->last_ms = now_ms;
	return old;
}

/* Take one token from @t (refilled at @rate per second up to @burst
 * since *@at); 1 if there was one. */
static int take(uint64_t *t, uint64_t *at, unsigned rate, unsigned burst,
		uint64_t now_ms)
{
	if (now_ms > *at) {
		uint64_t add = (now_ms - *at) * rate;

		*t = *t + add > burst * 1000ull ? burst * 1000ull : *t + add;
		*at = now_ms;
	} else if (*at == 0) {
		*at = now_ms;
	}
	if (*t < 1000)
		return 0;
	*t -= 1000;
	return 1;
}

/* A v2 message's freshness (docs/design/fleet.md "Replay"): live, it
 * must be sent within FLEET_REPLAY_WINDOW_MS and come after the last
 * (boot, seq) accepted from its host; a catch-up key's timed decision is
 * bounded by its own remaining time (decode), its other kinds by the
 * window of a pace key (FLEET_PACE_KEY_MS). 0, or the why of a replay. */
static const char *stale_replay(struct peer *p, const struct fleet_msg *m,
				int from, uint64_t now_ms, char *why,
				size_t cap)
{
	uint64_t age = now_ms > m->sent_ms ? now_ms - m->sent_ms : 0;

	if (m->version != FLEET_MSG_VERSION_SIGNED)
		return NULL;
	if (from != FLEET_FROM_PUBSUB) {
		if (m->kind != FLEET_OPEN && m->kind != FLEET_COOL_UNTIL &&
		    m->kind != FLEET_FORCED && age > 60000u) {
			snprintf(why, cap, "a stored %s sent %llu ms ago",
				 fleet_kind_name(m->kind),
				 (unsigned long long)age);
			return why;
		}
		return NULL;
	}
	if (age > FLEET_REPLAY_WINDOW_MS) {
		snprintf(why, cap, "sent %llu ms ago, more than the window %u ms",
			 (unsigned long long)age, FLEET_REPLAY_WINDOW_MS);
		return why;
	}
	/* an older life of the host: a replay, unless its newer life has
	 * been silent for the whole window (then the sender's clock stepped
	 * back across a restart: what is fresh is taken) */
	if (p->boot && m->boot < p->boot &&
	    now_ms - p->accepted_ms < FLEET_REPLAY_WINDOW_MS) {
		snprintf(why, cap, "boot %llu older than the host's %llu",
			 (unsigned long long)m->boot,
			 (unsigned long long)p->boot);
		return why;
	}
	if (m->boot == p->boot && m->seq <= p->seq) {
		snprintf(why, cap, "seq %llu already seen (last %llu)",
			 (unsigned long long)m->seq,
			 (unsigned long long)p->seq);
		return why;
	}
	p->boot = m->boot;
	p->seq = m->seq;
	p->accepted_ms = now_ms;
	return NULL;
}

/* The peers' forced modes timed here (subscriber thread only). */
struct force {
	char name[BRK_NAME_MAX + 1];    /* "": free */
	char host[BRK_HOST_ID_MAX + 1];
	int mode;
	uint64_t until_ms;              /* wall ms */
};
static struct force force_tab[FLEET_FORCE_SLOTS];

static void force_note(const struct fleet_msg *m, uint64_t ms, uint64_t now_ms)
{
	struct force *f, *free_slot = NULL;
	unsigned i;

	for (i = 0; i < FLEET_FORCE_SLOTS; i++) {
		f = &force_tab[i];
		if (f->name[0] && strcmp(f->name, m->name) == 0)
			break;
		if (!f->name[0] && !free_slot)
			free_slot = f;
	}
	if (i == FLEET_FORCE_SLOTS) {
		if (!free_slot)
			return; /* full: ends by the peer's normal or a reset */
		f = free_slot;
	}
	if (m->mode == BRK_MODE_NORMAL) {
		f->name[0] = '\0';
		return;
	}
	snprintf(f->name, sizeof(f->name), "%s", m->name);
	snprintf(f->host, sizeof(f->host), "%s", m->host);
	f->mode = m->mode;
	f->until_ms = now_ms + ms;
}

void fleet_apply_expire(brk_segment *seg, uint64_t now_ms)
{
	struct brk_info in;
	struct logline l;
	brk_breaker *b;
	struct force *f;
	unsigned i;
	int rc;

	for (i = 0; i < FLEET_FORCE_SLOTS; i++) {
		f = &force_tab[i];
		if (!f->name[0] || now_ms < f->until_ms)
			continue;
		rc = fleet_breaker_lookup(seg, f->name, &b, &in);
		if (rc == 1 && in.mode == f->mode &&
		    brk_set_origin(seg, f->host) == 0) {
			rc = brk_set_mode(b, BRK_MODE_NORMAL);
			(void)brk_set_origin(seg, NULL);
			ll_begin(&l, "info", "fleet: a peer's forced mode expired");
			ll_str(&l, "fleet", "force_expired");
			ll_str(&l, "host", f->host);
			ll_str(&l, "name", f->name);
			ll_str(&l, "mode", brk_mode_name(f->mode));
			if (rc < 0)
				ll_str(&l, "err", brk_strerror(rc));
			ll_end(&l);
		}
		f->name[0] = '\0';
	}
}

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
		/* it holds for its remaining time (v2; v1: max_open_ms), at
		 * most max_open_ms, unless re-announced (fleet_apply_expire) */
		force_note(m, m->remaining_ms && m->remaining_ms < in->config.max_open_ms ?
			   m->remaining_ms : in->config.max_open_ms, apply_now_ms);
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
	apply_now_ms = now_ms;
	memset(&m, 0, sizeof(m));
	if (fleet_msg_decode_keyed(buf, len, now_ms, keys, &m, &cause, why,
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
	/* who may speak: a listed peer (--fleet-peer), fresh (v2) */
	{
		int ok = allowed(m.host);
		struct peer *p;

		if (!ok) {
			for (unsigned i = 0; i < FLEET_PEER_SLOTS; i++)
				if (strcmp(peer_tab[i].host, m.host) == 0)
					goto known;
			/* remembered as refused: warned once */
			p = peer_get(m.host, 0, now_ms);
			p->last_ms = now_ms;
known:
			return refuse(BRK_FLEET_DROP_AUTH, m.host, m.name,
				      "host id not in --fleet-peer", now_ms);
		}
		p = peer_get(m.host, 1, now_ms);
		p->last_ms = now_ms;
		if (stale_replay(p, &m, from, now_ms, why, sizeof(why)))
			return refuse(BRK_FLEET_DROP_REPLAY, m.host, m.name, why,
				      now_ms);
	}
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
	/* a flood is bounded: per peer, and all peers together (the event
	 * ring keeps this host's own history); catch-up keys are not
	 * limited (one per record, read on connect) */
	if (from == FLEET_FROM_PUBSUB) {
		struct peer *p = peer_get(m.host, 1, now_ms);

		if (!take(&p->tokens_milli, &p->refill_ms, FLEET_PEER_RATE,
			  FLEET_PEER_BURST, now_ms) ||
		    !take(&all_tokens_milli, &all_refill_ms, FLEET_ALL_RATE,
			  FLEET_ALL_BURST, now_ms))
			return refuse(BRK_FLEET_DROP_FLOOD, m.host, m.name,
				      "over the rate of applied decisions",
				      now_ms);
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
