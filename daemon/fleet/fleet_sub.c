/*
 * fleet_sub.c - the peers' decisions, from Redis, applied here.
 */
#include "fleet_sub.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fleet_apply.h"
#include "fleet_report.h"
#include "fleet_wait.h"
#include "logfmt.h"

/* The catch-up keys' values already settled here (applied, ignored or
 * our own), by FNV-1a hash: the periodic re-read skips them, so only a
 * key that is new, changed, or was refused (no such record yet, not
 * fleet-wide yet) is applied again. And the values whose refusal was
 * counted and logged once: the re-read retries them quietly, while a
 * value it is the first to see is counted and logged like any message.
 * Subscriber thread only. */
#define SETTLED_SLOTS 4096u
struct seen_set {
	uint64_t h[SETTLED_SLOTS];
	unsigned n;
};
static struct seen_set settled, noted;

static uint64_t fnv(const char *buf, size_t len)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
	return h ? h : 1;
}

/* 1 if @h is in @t; with @add, put it in (a full table starts again
 * empty: those keys are applied once more, idempotently). */
static int set_has(struct seen_set *t, uint64_t h, int add)
{
	unsigned i = (unsigned)(h % SETTLED_SLOTS);

	while (t->h[i]) {
		if (t->h[i] == h)
			return 1;
		i = (i + 1) % SETTLED_SLOTS;
	}
	if (add) {
		if (t->n >= SETTLED_SLOTS * 3 / 4) {
			memset(t, 0, sizeof(*t));
			i = (unsigned)(h % SETTLED_SLOTS);
		}
		t->h[i] = h;
		t->n++;
	}
	return 0;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void on_payload(struct fleet_sub *s, const char *buf, size_t len,
		       int from)
{
	uint64_t h = 0;
	int rc;

	if (from != FLEET_FROM_PUBSUB) {
		h = fnv(buf, len);
		if (from == FLEET_FROM_RECHECK && set_has(&settled, h, 0))
			return;
		/* first seen by the re-read: counted and logged */
		if (from == FLEET_FROM_RECHECK && !set_has(&noted, h, 0))
			from = FLEET_FROM_CATCHUP;
	}
	rc = fleet_apply(s->seg, s->c->host_id, buf, len, wall_now_ms(), from);
	if (from != FLEET_FROM_PUBSUB && (rc == FLEET_APPLIED ||
	    rc == FLEET_IGNORED || rc == FLEET_OWN))
		(void)set_has(&settled, h, 1);
	else if (from != FLEET_FROM_PUBSUB)
		(void)set_has(&noted, h, 1);
	fleet_status_flush(s->seg, 0);
}

/* Apply every catch-up key (@from: FLEET_FROM_CATCHUP after a subscribe,
 * FLEET_FROM_RECHECK every FLEET_CATCHUP_MS). 0 or -EIO (@err says why). */
static int catch_up(struct fleet_sub *s, int from, char *err, size_t errlen)
{
	redisContext *rc = fleet_connect(s->c, err, errlen);
	redisReply *r, *g;
	char cursor[32] = "0";
	size_t i, sent, seen = 0;
	int ret = 0;

	if (!rc)
		return -EIO;
	do {
		r = redisCommand(rc, "SCAN %s MATCH %s:state:* COUNT 100", cursor,
				 s->c->channel);
		if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    r->element[1]->type != REDIS_REPLY_ARRAY) {
			fleet_cmd_err(rc, s->c, "catch-up SCAN", r, err, errlen);
			ret = -EIO;
			break;
		}
		snprintf(cursor, sizeof(cursor), "%.*s",
			 (int)r->element[0]->len, r->element[0]->str);
		/* one round trip per SCAN page: the page's GETs pipelined */
		for (i = 0, sent = 0; i < r->element[1]->elements; i++) {
			redisReply *key = r->element[1]->element[i];

			if (key->type == REDIS_REPLY_STRING &&
			    redisAppendCommand(rc, "GET %b", key->str,
					       key->len) == REDIS_OK)
				sent++;
		}
		for (i = 0; i < sent; i++) {
			if (redisGetReply(rc, (void **)&g) != REDIS_OK || !g) {
				fleet_cmd_err(rc, s->c, "catch-up GET", NULL, err,
					      errlen);
				ret = -EIO;
				break;
			}
			if (g->type == REDIS_REPLY_STRING)
				on_payload(s, g->str, g->len, from);
			freeReplyObject(g);
			seen++;
		}
		freeReplyObject(r);
		r = NULL;
	} while (!ret && strcmp(cursor, "0") != 0 &&
		 seen < FLEET_SCAN_MAX_KEYS && !atomic_load(s->stop));
	if (r)
		freeReplyObject(r);
	redisFree(rc);
	return ret;
}

/* A pub/sub push: ["message", channel, payload]; others are ignored. */
static void on_reply(struct fleet_sub *s, redisReply *r)
{
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    strcmp(r->element[0]->str, "message") != 0 ||
	    r->element[2]->type != REDIS_REPLY_STRING)
		return;
	on_payload(s, r->element[2]->str, r->element[2]->len, FLEET_FROM_PUBSUB);
}

/* Subscribe on @rc. 0 or -EIO. */
static int subscribe(struct fleet_sub *s, redisContext *rc, char *err,
		     size_t errlen)
{
	redisReply *r = redisCommand(rc, "SUBSCRIBE %s", s->c->channel);
	int ok;

	if (!r) {
		fleet_cmd_err(rc, s->c, "SUBSCRIBE", NULL, err, errlen);
		return -EIO;
	}
	ok = r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
	     r->element[0]->type == REDIS_REPLY_STRING &&
	     strcmp(r->element[0]->str, "subscribe") == 0;
	if (!ok)
		fleet_cmd_err(rc, s->c, "SUBSCRIBE", r, err, errlen);
	freeReplyObject(r);
	return ok ? 0 : -EIO;
}

/* Read and apply until the connection is lost or stop. 0 (stop) or -EIO. */
static int listen_loop(struct fleet_sub *s, redisContext *rc, char *err,
		       size_t errlen)
{
	struct pollfd pfd;
	void *reply;
	uint64_t last_catchup = mono_ms(), last_expire = 0;
	int n;

	while (!atomic_load(s->stop)) {
		if (mono_ms() - last_expire >= 100) {
			fleet_apply_expire(s->seg, wall_now_ms());
			last_expire = mono_ms();
		}
		if (mono_ms() - last_catchup >= FLEET_CATCHUP_MS) {
			/* a record made (or made fleet-wide) here after a
			 * peer's decision picks it up from its key */
			if (catch_up(s, FLEET_FROM_RECHECK, err, errlen))
				return -EIO;
			last_catchup = mono_ms();
		}
		reply = NULL;
		if (redisGetReplyFromReader(rc, &reply) != REDIS_OK) {
			fleet_cmd_err(rc, s->c, "SUBSCRIBE read", NULL, err,
				      errlen);
			return -EIO;
		}
		if (reply) {
			on_reply(s, reply);
			freeReplyObject(reply);
			continue;
		}
		fleet_status_flush(s->seg, 0);
		pfd.fd = rc->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		n = poll(&pfd, 1, FLEET_STOP_MS * 5);
		if (n < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return -EIO;
		}
		if (n > 0 && redisBufferRead(rc) != REDIS_OK) {
			fleet_cmd_err(rc, s->c, "SUBSCRIBE read", NULL, err,
				      errlen);
			return -EIO;
		}
	}
	return 0;
}

void *fleet_sub_main(void *arg)
{
	struct fleet_sub *s = arg;
	redisContext *rc;
	char err[256];
	uint32_t attempt = 0;

	while (!atomic_load(s->stop)) {
		err[0] = '\0';
		rc = fleet_connect(s->c, err, sizeof(err));
		if (rc && subscribe(s, rc, err, sizeof(err)) == 0) {
			attempt = 0;
			fleet_status_conn(FLEET_CONN_SUB, NULL);
			fleet_status_flush(s->seg, 1);
			memset(&settled, 0, sizeof(settled));
			memset(&noted, 0, sizeof(noted));
			if (catch_up(s, FLEET_FROM_CATCHUP, err, sizeof(err)) == 0 &&
			    listen_loop(s, rc, err, sizeof(err)) == 0) {
				redisFree(rc);
				break; /* stop */
			}
		}
		if (rc)
			redisFree(rc);
		fleet_status_conn(FLEET_CONN_SUB, err[0] ? err : "lost");
		fleet_status_flush(s->seg, 1);
		fleet_sleep(s->stop, fleet_backoff(attempt++, "subscriber", err));
	}
	return NULL;
}
