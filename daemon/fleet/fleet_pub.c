/*
 * fleet_pub.c - this host's decisions on fleet-wide records, to Redis.
 */
#include "fleet_pub.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet_msg.h"
#include "fleet_own.h"
#include "fleet_record.h"
#include "fleet_self.h"
#include "fleet_report.h"
#include "fleet_wait.h"
#include "logfmt.h"

#define PUB_BATCH 64

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* One command; 0 or -EIO (the connection is lost or Redis refused: @err
 * names the command and the server, fleet_cmd_err()). */
static int run(const struct fleet_conf *c, redisContext *rc, char *err,
	       size_t errlen, const char *fmt, ...)
{
	redisReply *r;
	va_list ap;
	char cmd[16];
	size_t i;
	int ok;

	va_start(ap, fmt);
	r = redisvCommand(rc, fmt, ap);
	va_end(ap);
	ok = r && r->type != REDIS_REPLY_ERROR;
	if (!ok) {
		for (i = 0; fmt[i] && fmt[i] != ' ' && i < sizeof(cmd) - 1; i++)
			cmd[i] = fmt[i];
		cmd[i] = '\0';
		fleet_cmd_err(rc, c, cmd, r, err, errlen);
	}
	if (r)
		freeReplyObject(r);
	return ok ? 0 : -EIO;
}

/* This host's own forced modes on fleet breakers, re-announced while
 * they hold (publisher thread only). */
static struct own_force {
	char name[BRK_NAME_MAX + 1]; /* "": free */
	int mode;
	uint64_t next_ms;            /* mono ms of the next announcement */
} own_force[FLEET_OWN_FORCE_SLOTS];

/* How long a forced mode holds on the peers: the record's max_open_ms. */
static uint64_t force_ms(const struct brk_info *in)
{
	uint64_t ms = in->config.max_open_ms;

	return ms && ms < BRK_MAX_DURATION_MS ? ms : BRK_MAX_DURATION_MS;
}

static void own_force_note(const struct fleet_msg *m)
{
	struct own_force *f = NULL;
	uint64_t every;
	unsigned i;

	for (i = 0; i < FLEET_OWN_FORCE_SLOTS; i++) {
		if (own_force[i].name[0] && strcmp(own_force[i].name, m->name) == 0) {
			f = &own_force[i];
			break;
		}
		if (!own_force[i].name[0] && !f)
			f = &own_force[i];
	}
	if (!f)
		return; /* full: the peers time it out, max_open_ms later */
	if (m->kind != FLEET_FORCED || m->mode == BRK_MODE_NORMAL) {
		f->name[0] = '\0';
		return;
	}
	every = m->remaining_ms / 3;
	if (every < FLEET_REANNOUNCE_MIN_MS)
		every = FLEET_REANNOUNCE_MIN_MS;
	if (every > FLEET_REANNOUNCE_MAX_MS)
		every = FLEET_REANNOUNCE_MAX_MS;
	snprintf(f->name, sizeof(f->name), "%s", m->name);
	f->mode = m->mode;
	f->next_ms = mono_ms() + every;
}

/* Send @m: PUBLISH, then the catch-up key. 0 or -EIO. */
static int send_msg(struct fleet_pub *p, redisContext *rc, struct fleet_msg *m,
		    char *err, size_t errlen)
{
	char json[FLEET_MSG_MAX + 1];
	const char *ch = p->c->channel;
	int n;

	m->seq = ++p->seq;
	m->sent_ms = wall_now_ms();
	m->boot = p->boot;
	snprintf(m->host, sizeof(m->host), "%s", p->c->host_id);
	fleet_self_note(m->seq, m->sent_ms); /* before its echo can come */
	if (m->kind == FLEET_FORCED || m->kind == FLEET_RESET)
		own_force_note(m);
	n = fleet_msg_encode_keyed(m, &p->c->keys, json, sizeof(json));
	if (n < 0) { /* our own record's state cannot be said: skip it */
		struct logline l;

		ll_begin(&l, "warn", "fleet message not encoded");
		ll_str(&l, "name", m->name);
		ll_str(&l, "kind", fleet_kind_name(m->kind));
		ll_str(&l, "err", brk_strerror(n));
		ll_end(&l);
		return 0;
	}
	if (run(p->c, rc, err, errlen, "PUBLISH %s %b", ch, json, (size_t)n))
		return -EIO;
	fleet_status_count(FLEET_C_PUBLISHED);
	switch (m->kind) {
	case FLEET_OPEN:
	case FLEET_COOL_UNTIL:
		return run(p->c, rc, err, errlen, "SET %s:state:%s %b PX %llu", ch,
			   m->name, json, (size_t)n,
			   (unsigned long long)m->remaining_ms);
	case FLEET_PACE_CUT:
		return run(p->c, rc, err, errlen, "SET %s:state:%s %b PX %llu", ch,
			   m->name, json, (size_t)n,
			   (unsigned long long)FLEET_PACE_KEY_MS);
	case FLEET_FORCED:
		/* the key lives as long as the force holds on the peers */
		if (m->mode != BRK_MODE_NORMAL)
			return run(p->c, rc, err, errlen, "SET %s:state:%s %b PX %llu",
				   ch, m->name, json, (size_t)n,
				   (unsigned long long)m->remaining_ms);
		/* back to normal: nothing to catch up on */
		return run(p->c, rc, err, errlen, "DEL %s:state:%s", ch, m->name);
	default:
		return run(p->c, rc, err, errlen, "DEL %s:state:%s", ch, m->name);
	}
}

/* The message for @ev, or 0 if it is not one the fleet hears about. */
static int from_event(struct fleet_pub *p, const struct brk_event *ev,
		      struct fleet_msg *m)
{
	struct brk_info in;
	brk_breaker *b;
	brk_bucket *k;
	uint64_t age, now;

	if (ev->origin[0] != '\0') /* a peer's decision applied here */
		return 0;
	memset(m, 0, sizeof(*m));
	switch (ev->reason) {
	case BRK_EV_THRESHOLD:
	case BRK_EV_FAILURE_RATE:
	case BRK_EV_SLOW_RATE:
	case BRK_EV_PROBE_FAILED:
	case BRK_EV_TRIP:
		m->kind = FLEET_OPEN;
		break;
	case BRK_EV_RETRY_AFTER:
		if (ev->to != BRK_OPEN)
			return 0;
		m->kind = FLEET_OPEN;
		break;
	case BRK_EV_COOL_UNTIL:
		m->kind = FLEET_COOL_UNTIL;
		break;
	case BRK_EV_FORCED:
		m->kind = FLEET_FORCED;
		m->mode = (int)(ev->value > 3 ? 0 : ev->value);
		if (ev->value > 3)
			return 0;
		break;
	case BRK_EV_RESET:
		m->kind = FLEET_RESET;
		break;
	case BRK_EV_PROBE_OK:
		m->kind = FLEET_CLOSE;
		break;
	case BRK_EV_PACE_CUT:
		if (fleet_pace_lookup(p->seg, ev->name, &k) != 1)
			return 0;
		m->kind = FLEET_PACE_CUT;
		m->rate_milli = ev->value ? ev->value : 1;
		break;
	default:
		return 0;
	}
	if (m->kind != FLEET_PACE_CUT &&
	    fleet_breaker_lookup(p->seg, ev->name, &b, &in) != 1)
		return 0;
	if (m->kind == FLEET_FORCED)
		m->remaining_ms = force_ms(&in);
	if (m->kind == FLEET_OPEN || m->kind == FLEET_COOL_UNTIL) {
		now = wall_now_ms();
		age = now > ev->wall_ms ? now - ev->wall_ms : 0;
		if (ev->value <= age) /* passed (sent late, after an outage) */
			return 0;
		m->remaining_ms = ev->value - age;
		if (m->remaining_ms > BRK_MAX_DURATION_MS)
			m->remaining_ms = BRK_MAX_DURATION_MS;
	}
	m->reason = ev->reason;
	snprintf(m->name, sizeof(m->name), "%s", ev->name);
	return 1;
}

static uint64_t head(brk_segment *seg)
{
	struct brk_segment_info si;

	return brk_segment_info(seg, &si) == 0 ? si.events_written + 1 : 1;
}

/* A fleet breaker the snapshot may send: its state now, and whether the
 * last decision the event ring holds for it came from a peer. */
struct snap {
	char name[BRK_NAME_MAX + 1];
	int mode;
	uint64_t force_ms;
	uint64_t open_ms, cool_ms;
	int state_remote, cool_remote; /* 1: a peer's decision applied here */
};

static int snap_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap *)a)->name,
		      ((const struct snap *)b)->name);
}

/* Which of the snapshot's states are a peer's: the last event of each
 * name in the ring that set its state (open, forced, reset, close) or its
 * cooling (cool_until, reset) tells. A state the ring no longer explains
 * counts as this host's (sent as before). */
static void snap_origins(struct fleet_pub *p, struct snap *sn, size_t n)
{
	struct brk_event ev[PUB_BATCH];
	struct snap key, *hit;
	uint64_t cursor = 1, lost = 0, before;
	int got, i, state, cool;

	qsort(sn, n, sizeof(*sn), snap_cmp);
	do {
		before = cursor;
		got = brk_events_read(p->seg, &cursor, ev, PUB_BATCH, &lost);
		for (i = 0; i < got; i++) {
			switch (ev[i].reason) {
			case BRK_EV_THRESHOLD:
			case BRK_EV_FAILURE_RATE:
			case BRK_EV_SLOW_RATE:
			case BRK_EV_PROBE_FAILED:
			case BRK_EV_TRIP:
			case BRK_EV_RETRY_AFTER:
			case BRK_EV_FORCED:
			case BRK_EV_PROBE_OK:
				state = 1, cool = 0;
				break;
			case BRK_EV_COOL_UNTIL:
				state = 0, cool = 1;
				break;
			case BRK_EV_RESET:
				state = 1, cool = 1;
				break;
			default:
				continue;
			}
			snprintf(key.name, sizeof(key.name), "%s", ev[i].name);
			hit = bsearch(&key, sn, n, sizeof(*sn), snap_cmp);
			if (!hit)
				continue;
			if (state)
				hit->state_remote = ev[i].origin[0] != '\0';
			if (cool)
				hit->cool_remote = ev[i].origin[0] != '\0';
		}
	} while (got == PUB_BATCH && cursor != before && !atomic_load(p->stop));
}

/*
 * Every fleet breaker open, cooling or forced now by this host's own
 * decision. A state a peer's message put here is not sent again as this
 * host's: the peer sends its own, and a peer that has since reset it
 * (while the link was down) must not get it back. 0 or -EIO.
 */
static int snapshot(struct fleet_pub *p, redisContext *rc, char *err,
		    size_t errlen)
{
	struct brk_segment_info si;
	struct brk_info *in;
	struct fleet_msg m;
	struct snap *sn = NULL, *grown;
	size_t n = 0, cap = 0, j;
	uint64_t u, units;
	int rc2 = 0;

	if (brk_segment_info(p->seg, &si) != 0 || si.unit_bytes == 0)
		return 0;
	in = malloc(sizeof(*in));
	if (!in)
		return 0;
	units = si.arena_used_bytes / si.unit_bytes;
	for (u = 1; u <= units && !atomic_load(p->stop); u++) {
		if (brk_info_at(p->seg, (uint32_t)u, in) != 0 ||
		    in->kind != BRK_KIND_BREAKER || in->config.fleet != 1)
			continue;
		if (in->mode == BRK_MODE_NORMAL &&
		    !(in->state == BRK_OPEN && in->open_remaining_ms) &&
		    !in->cool_until_remaining_ms)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(sn, cap * sizeof(*sn));
			if (!grown)
				break;
			sn = grown;
		}
		memset(&sn[n], 0, sizeof(sn[n]));
		snprintf(sn[n].name, sizeof(sn[n].name), "%s", in->name);
		sn[n].mode = in->mode;
		sn[n].force_ms = force_ms(in);
		sn[n].open_ms = in->state == BRK_OPEN ? in->open_remaining_ms : 0;
		sn[n].cool_ms = in->cool_until_remaining_ms;
		n++;
	}
	free(in);
	if (n)
		snap_origins(p, sn, n);
	for (j = 0; j < n && rc2 == 0 && !atomic_load(p->stop); j++) {
		if (!sn[j].state_remote) {
			memset(&m, 0, sizeof(m));
			snprintf(m.name, sizeof(m.name), "%s", sn[j].name);
			if (sn[j].mode != BRK_MODE_NORMAL) {
				m.kind = FLEET_FORCED;
				m.mode = sn[j].mode;
				m.remaining_ms = sn[j].force_ms;
				rc2 = send_msg(p, rc, &m, err, errlen);
			} else if (sn[j].open_ms) {
				m.kind = FLEET_OPEN;
				m.remaining_ms = sn[j].open_ms;
				rc2 = send_msg(p, rc, &m, err, errlen);
			}
		}
		if (rc2 == 0 && sn[j].cool_ms && !sn[j].cool_remote) {
			memset(&m, 0, sizeof(m));
			snprintf(m.name, sizeof(m.name), "%s", sn[j].name);
			m.kind = FLEET_COOL_UNTIL;
			m.remaining_ms = sn[j].cool_ms;
			rc2 = send_msg(p, rc, &m, err, errlen);
		}
	}
	free(sn);
	return rc2;
}

struct own_ctx {
	struct fleet_pub *p;
	redisContext *rc;
	char *err;
	size_t errlen;
};

static int own_fix(void *ctx, struct fleet_msg *m)
{
	struct own_ctx *o = ctx;

	return send_msg(o->p, o->rc, m, o->err, o->errlen);
}

/*
 * The snapshot, then our own catch-up keys that no longer hold here
 * (fleet_own.h): a reset made while this breakerd was not running (or
 * lost from the ring) is not in the ring's unread events, and without
 * it the peers that applied our open stay open, and a host joining later
 * re-opens from our stale key. 0 or -EIO.
 */
static int snapshot_and_own(struct fleet_pub *p, redisContext *rc, char *err,
			    size_t errlen)
{
	struct own_ctx o = { p, rc, err, errlen };

	if (snapshot(p, rc, err, errlen))
		return -EIO;
	return fleet_own_undone(rc, p->c, p->seg, p->stop, own_fix, &o, err,
				errlen) ? -EIO : 0;
}

/* Send what the ring holds since the cursor, in order; *@lost +=
 * the events overwritten before they were read. 0 or -EIO. */
static int drain(struct fleet_pub *p, redisContext *rc, uint64_t *cursor,
		 uint64_t *lost_total, char *err, size_t errlen)
{
	struct brk_event ev[PUB_BATCH];
	struct fleet_msg m;
	uint64_t lost, before;
	int n, i;

	do {
		before = *cursor;
		lost = 0;
		n = brk_events_read(p->seg, cursor, ev, PUB_BATCH, &lost);
		*lost_total += lost;
		if (n < 0)
			return 0;
		for (i = 0; i < n; i++) {
			if (!from_event(p, &ev[i], &m))
				continue;
			if (send_msg(p, rc, &m, err, errlen)) {
				/* not sent: read it again after the reconnect
				 * (a decision made as the link fails is not
				 * lost; a peer may get it twice: idempotent) */
				*cursor = ev[i].seq;
				return -EIO;
			}
		}
	} while (n == PUB_BATCH && *cursor != before && !atomic_load(p->stop));
	return 0;
}

/*
 * Events the ring overwrote before they were read (a burst of more than
 * the ring's slots between two polls, of any records, or an outage) may
 * have held a fleet decision: log it and send the snapshot, so a lost
 * open, cooling or forced mode still reaches the peers (a lost reset does
 * not). 0 or -EIO.
 */
static int after_loss(struct fleet_pub *p, redisContext *rc, uint64_t lost,
		      char *err, size_t errlen)
{
	struct logline l;

	ll_begin(&l, "warn", "fleet link: events overwritten before they were sent");
	ll_str(&l, "fleet", "events_lost");
	ll_u64(&l, "lost", lost);
	ll_str(&l, "then", "snapshot");
	ll_end(&l);
	return snapshot_and_own(p, rc, err, errlen);
}

/* The forced modes of this host due again (own_force): sent once more
 * while the record is still fleet-wide and in that mode. 0 or -EIO. */
static int reannounce(struct fleet_pub *p, redisContext *rc, char *err,
		      size_t errlen)
{
	struct fleet_msg m;
	struct brk_info in;
	brk_breaker *b;
	uint64_t now = mono_ms();
	unsigned i;

	for (i = 0; i < FLEET_OWN_FORCE_SLOTS; i++) {
		struct own_force *f = &own_force[i];

		if (!f->name[0] || now < f->next_ms)
			continue;
		if (fleet_breaker_lookup(p->seg, f->name, &b, &in) != 1 ||
		    in.mode != f->mode) {
			f->name[0] = '\0'; /* reset, or no longer fleet-wide */
			continue;
		}
		memset(&m, 0, sizeof(m));
		memcpy(m.name, f->name, sizeof(m.name));
		m.kind = FLEET_FORCED;
		m.mode = f->mode;
		m.remaining_ms = force_ms(&in);
		if (send_msg(p, rc, &m, err, errlen))
			return -EIO;
	}
	return 0;
}

void *fleet_pub_main(void *arg)
{
	struct fleet_pub *p = arg;
	redisContext *rc = NULL;
	char err[256];
	uint32_t attempt = 0;
	uint64_t cursor = head(p->seg), last_io = 0, c0, lost, last_re = 0;
	int first = 1;

	p->boot = wall_now_ms();

	while (!atomic_load(p->stop)) {
		if (!rc) {
			err[0] = '\0';
			rc = fleet_connect(p->c, err, sizeof(err));
			if (!rc) {
				fleet_status_conn(FLEET_CONN_PUB, err);
				fleet_status_flush(p->seg, 1);
				fleet_sleep(p->stop, fleet_backoff(attempt++,
						"publisher", err));
				continue;
			}
			attempt = 0;
			fleet_status_conn(FLEET_CONN_PUB, NULL);
			/* At start: what is open, cooling or forced now, and
			 * what our own stale keys no longer hold. After
			 * an outage: the decisions made while down, in order
			 * from the cursor (a reset after a trip goes out as a
			 * reset and DELs the key), and the snapshot only if
			 * the ring lost some of them. */
			lost = 0;
			if (!first && drain(p, rc, &cursor, &lost, err,
					    sizeof(err)))
				goto lost;
			if (first ? snapshot_and_own(p, rc, err, sizeof(err))
				  : lost && after_loss(p, rc, lost, err,
						       sizeof(err)))
				goto lost;
			first = 0;
			last_io = mono_ms();
		}
		c0 = cursor;
		lost = 0;
		if (drain(p, rc, &cursor, &lost, err, sizeof(err)) ||
		    (lost && after_loss(p, rc, lost, err, sizeof(err))))
			goto lost;
		if (cursor != c0)
			last_io = mono_ms();
		if (mono_ms() - last_re >= FLEET_REANNOUNCE_MIN_MS) {
			if (reannounce(p, rc, err, sizeof(err)))
				goto lost;
			last_re = mono_ms();
		}
		if (mono_ms() - last_io >= FLEET_PING_MS) {
			if (run(p->c, rc, err, sizeof(err), "PING"))
				goto lost;
			last_io = mono_ms();
		}
		fleet_status_flush(p->seg, 0);
		fleet_sleep(p->stop, FLEET_POLL_MS);
		continue;
lost:
		redisFree(rc);
		rc = NULL;
		fleet_status_conn(FLEET_CONN_PUB, err[0] ? err : "lost");
		fleet_status_flush(p->seg, 1);
		fleet_sleep(p->stop, fleet_backoff(attempt++, "publisher", err));
	}
	if (rc)
		redisFree(rc);
	return NULL;
}
