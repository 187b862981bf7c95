/*
 * fleet_own.c - this host's catch-up keys whose decision no longer holds.
 */
#include "fleet_own.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fleet_record.h"
#include "fleet_sub.h" /* FLEET_SCAN_MAX_KEYS */
#include "logfmt.h"

/* The wall time of something @age_ms ago (UINT64_MAX: never -> 0). */
static uint64_t ago(uint64_t now_ms, uint64_t age_ms)
{
	if (age_ms == UINT64_MAX || age_ms >= now_ms)
		return 0;
	return now_ms - age_ms;
}

/* 1 if our key's decision @k no longer holds here: @fix filled. */
static int undone(brk_segment *seg, const struct fleet_msg *k,
		  uint64_t now_ms, struct fleet_msg *fix)
{
	struct brk_info in;
	brk_breaker *b = NULL;

	if (k->kind != FLEET_OPEN && k->kind != FLEET_COOL_UNTIL &&
	    k->kind != FLEET_FORCED)
		return 0;
	memset(&in, 0, sizeof(in));
	if (fleet_breaker_lookup(seg, k->name, &b, &in) != 1)
		return 0;
	memset(fix, 0, sizeof(*fix));
	snprintf(fix->name, sizeof(fix->name), "%s", k->name);
	if (k->kind == FLEET_FORCED) {
		if (k->mode == BRK_MODE_NORMAL || in.mode == k->mode)
			return 0;
		fix->kind = FLEET_FORCED;
		fix->mode = in.mode;
		return 1;
	}
	if (in.state != BRK_CLOSED || in.mode != BRK_MODE_NORMAL ||
	    in.cool_until_remaining_ms != 0)
		return 0;
	if (ago(now_ms, in.last_change_age_ms) <= k->sent_ms)
		return 0; /* closed before we decided: not our undoing */
	fix->kind = FLEET_RESET;
	return 1;
}

static void log_fix(const struct fleet_msg *k, const struct fleet_msg *m)
{
	struct logline l;

	ll_begin(&l, "info", "fleet link: our catch-up key no longer holds "
		 "here (changed while the link was not running): sending what "
		 "holds now");
	ll_str(&l, "fleet", "own_key_undone");
	ll_str(&l, "name", k->name);
	ll_str(&l, "key_kind", fleet_kind_name(k->kind));
	ll_str(&l, "kind", fleet_kind_name(m->kind));
	ll_end(&l);
}

int fleet_own_undone(redisContext *rc, const struct fleet_conf *c,
		     brk_segment *seg, atomic_int *stop,
		     int (*fix)(void *ctx, struct fleet_msg *m), void *ctx,
		     char *err, size_t errlen)
{
	redisReply *r, *g;
	struct fleet_msg k, m;
	char cursor[32] = "0", why[128];
	size_t i, seen = 0;
	int ret = 0, cause;

	do {
		r = redisCommand(rc, "SCAN %s MATCH %s:state:* COUNT 100", cursor,
				 c->channel);
		if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    r->element[1]->type != REDIS_REPLY_ARRAY) {
			fleet_cmd_err(rc, c, "own keys SCAN", r, err, errlen);
			if (r)
				freeReplyObject(r);
			return -EIO;
		}
		snprintf(cursor, sizeof(cursor), "%.*s",
			 (int)r->element[0]->len, r->element[0]->str);
		for (i = 0; i < r->element[1]->elements && !ret; i++) {
			redisReply *key = r->element[1]->element[i];

			if (key->type != REDIS_REPLY_STRING)
				continue;
			seen++;
			g = redisCommand(rc, "GET %b", key->str, key->len);
			if (!g || g->type == REDIS_REPLY_ERROR) {
				fleet_cmd_err(rc, c, "own keys GET", g, err, errlen);
				if (g)
					freeReplyObject(g);
				ret = -EIO;
				break;
			}
			memset(&k, 0, sizeof(k));
			if (g->type == REDIS_REPLY_STRING &&
			    fleet_msg_decode_keyed(g->str, g->len, wall_now_ms(),
					&c->keys, &k, &cause, why, sizeof(why)) == 0 &&
			    strcmp(k.host, c->host_id) == 0 &&
			    undone(seg, &k, wall_now_ms(), &m)) {
				log_fix(&k, &m);
				ret = fix(ctx, &m);
			}
			freeReplyObject(g);
		}
		freeReplyObject(r);
	} while (!ret && strcmp(cursor, "0") != 0 &&
		 seen < FLEET_SCAN_MAX_KEYS && !atomic_load(stop));
	return ret;
}
