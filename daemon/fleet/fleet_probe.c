/*
 * fleet_probe.c - one probe for the whole fleet: the election thread
 * (fleet_probe.h; docs/design/fleet.md "One probe for the fleet").
 *
 * The table entry of a breaker knows whether this cooling period's
 * election ran (elected). A new period is an open event of that breaker
 * (threshold, failure/slow rate, probe failed, Retry-After, trip: this
 * host's own or a peer's applied by the link), and the hold this thread
 * sets when it loses: the loser elects again FLEET_PROBE_LEAD_MS before
 * its hold ends. The winner's key lives the remaining cooling time plus
 * the verdict wait (fleet_probe_verdict_wait_ms(): at most the cooling
 * period, at least 1 s, never more than probe_timeout_ms), and the hold
 * outlasts the key by 2 x LEAD, so by
 * then the key is gone unless the winner renewed it (it probes again):
 * a winner that died or whose verdict was lost costs the fleet one hold,
 * then a new prober is elected - never every host at once. The remaining
 * cooling time is read from the record (brk_breaker_info()), so extensions
 * by the link are seen as they happen.
 */
#include "fleet_probe.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet_report.h" /* fleet_status_probe(): the link's status counters */
#include "logfmt.h"

#define FP_EV_BATCH 64
/* <channel>:probe:<name>: under the prefix <channel>: of everything the
 * link writes (the catch-up keys are <channel>:state:<name>), so one ACL
 * key pattern ~<channel>:* covers the link (docs/guide/fleet.md "Redis AUTH and the network"). */
#define FP_KEY_MAX (BRK_HOST_ID_MAX + sizeof(":probe:") + BRK_NAME_MAX + 1)

struct fp_entry {
	int used;
	char name[BRK_NAME_MAX + 1];
	brk_breaker *b;         /* owned by the segment handle */
	int elected;            /* this cooling period's election ran */
	uint64_t period_ms;     /* the cooling period running: the value of
	                           its open event (not of our own holds) */
	uint64_t hold_ms;       /* our last hold, while its event is unread */
	int hold_pending;
};

struct fleet_probe {
	struct fleet_conf conf;
	char shm_name[256];
	pthread_t thread;
	atomic_int stop;
	brk_segment *seg;
	uint64_t cursor;
	int first_drain;          /* events before the ring's tail: not lost */
	redisContext *rc;
	uint64_t next_connect_ms; /* segment clock, ms */
	uint32_t attempt;         /* failed connects in a row */
	int connected_once;
	struct fp_entry tab[FLEET_PROBE_MAX];
	struct brk_info info;     /* scratch (large) */
	struct brk_event evs[FP_EV_BATCH];
};

static struct fleet_probe *g_fp;

static uint64_t now_ms(const struct fleet_probe *fp)
{
	return brk_now_ns(fp->seg) / 1000000u;
}

static int is_open_reason(int reason)
{
	switch (reason) {
	case BRK_EV_THRESHOLD:
	case BRK_EV_FAILURE_RATE:
	case BRK_EV_SLOW_RATE:
	case BRK_EV_PROBE_FAILED:
	case BRK_EV_RETRY_AFTER:
	case BRK_EV_TRIP:
		return 1;
	default:
		return 0;
	}
}

static void log_probe(const char *level, const char *what, const char *name,
		      const char *k1, const char *v1, const char *k2, uint64_t v2)
{
	struct logline l;

	ll_begin(&l, level, "fleet probe");
	ll_str(&l, "fleet", what);
	if (name)
		ll_str(&l, "name", name);
	if (k1)
		ll_str(&l, k1, v1);
	if (k2)
		ll_u64(&l, k2, v2);
	ll_end(&l);
}

static void fp_disconnect(struct fleet_probe *fp, const char *why)
{
	uint64_t wait;

	if (fp->rc) {
		redisFree(fp->rc);
		fp->rc = NULL;
	}
	wait = brk_backoff_ms(BRK_JITTER_EQUAL, FLEET_BACKOFF_MIN_MS,
			      FLEET_BACKOFF_MAX_MS, fp->attempt, 0, NULL, NULL);
	/* One line when the connection is lost (or the first connect
	 * fails), not one per retry: the link logs its own state too. */
	if (fp->attempt == 0)
		log_probe("warn", "down", NULL, "err", why, "reconnect_in_ms", wait);
	if (fp->attempt < 30)
		fp->attempt++;
	fp->next_connect_ms = now_ms(fp) + wait;
}

static void fp_maybe_connect(struct fleet_probe *fp)
{
	char err[256];

	if (fp->rc || now_ms(fp) < fp->next_connect_ms)
		return;
	err[0] = '\0';
	fp->rc = fleet_connect(&fp->conf, err, sizeof(err));
	if (!fp->rc) {
		fp_disconnect(fp, err[0] ? err : "connect failed");
		return;
	}
	fp->attempt = 0;
	log_probe("info", fp->connected_once ? "reconnected" : "connected",
		  NULL, NULL, NULL, NULL, 0);
	fp->connected_once = 1;
}

static struct fp_entry *fp_lookup(struct fleet_probe *fp, const char *name)
{
	size_t i;

	for (i = 0; i < FLEET_PROBE_MAX; i++)
		if (fp->tab[i].used && strcmp(fp->tab[i].name, name) == 0)
			return &fp->tab[i];
	return NULL;
}

/* The record's settings say fleet-wide and one probe for the fleet. */
static int is_fleet_probe(struct fleet_probe *fp, brk_breaker *b)
{
	if (brk_breaker_info(b, &fp->info) != 0)
		return 0;
	return fp->info.kind == BRK_KIND_BREAKER && fp->info.config.fleet == 1 &&
	       fp->info.config.fleet_probe == 1;
}

static void fp_on_open(struct fleet_probe *fp, const struct brk_event *ev)
{
	struct fp_entry *e = fp_lookup(fp, ev->name);
	brk_breaker *b;
	size_t i;

	if (e) {
		if (is_fleet_probe(fp, e->b)) {
			e->elected = 0; /* a new cooling period */
			/* Our own hold (a trip with the holder's origin and our
			 * hold's length) is not a cooling period: the verdict wait
			 * stays the real period's, so repeated holds never grow. */
			if (e->hold_pending && ev->value == e->hold_ms &&
			    ev->origin[0] != '\0')
				e->hold_pending = 0;
			else
				e->period_ms = ev->value;
		} else {
			e->used = 0; /* fleet_probe switched off */
		}
		return;
	}
	if (brk_breaker_find(fp->seg, ev->name, &b) != 0 || !is_fleet_probe(fp, b))
		return;
	for (i = 0; i < FLEET_PROBE_MAX; i++)
		if (!fp->tab[i].used)
			break;
	if (i == FLEET_PROBE_MAX) {
		log_probe("warn", "table_full", ev->name, NULL, NULL, "max",
			  FLEET_PROBE_MAX);
		return;
	}
	e = &fp->tab[i];
	memset(e, 0, sizeof(*e));
	e->used = 1;
	e->b = b;
	e->period_ms = ev->value;
	snprintf(e->name, sizeof(e->name), "%s", ev->name);
}

static void fp_drain(struct fleet_probe *fp)
{
	uint64_t lost;
	int n, i;

	for (;;) {
		lost = 0;
		n = brk_events_read(fp->seg, &fp->cursor, fp->evs, FP_EV_BATCH, &lost);
		if (lost && !fp->first_drain)
			log_probe("warn", "events_lost", NULL, NULL, NULL, "lost", lost);
		fp->first_drain = 0;
		if (n <= 0)
			return;
		for (i = 0; i < n; i++)
			if (fp->evs[i].to == BRK_OPEN && is_open_reason(fp->evs[i].reason))
				fp_on_open(fp, &fp->evs[i]);
		if (n < FP_EV_BATCH)
			return;
	}
}

/* A reply we cannot use (an error such as NOPERM from an ACL, no reply,
 * a wrong type): drop the connection (a later period retries). The log
 * line names the command and the key, so an ACL that misses either is
 * found from the line alone. */
static void fp_reply_error(struct fleet_probe *fp, redisReply *r,
			   const char *cmd, const char *key)
{
	char why[320], what[200];

	snprintf(what, sizeof(what), "%s %s", cmd, key);
	fleet_cmd_err(fp->rc, &fp->conf, what, r, why, sizeof(why));
	if (r)
		freeReplyObject(r);
	fp_disconnect(fp, why);
}

enum { FP_WON, FP_LOST, FP_VOID };

/*
 * Run the election for @e: SET NX; nil -> GET the holder into @holder.
 * Returns FP_WON, FP_LOST (holder filled) or FP_VOID (Redis error or an
 * unusable holder: no election this period).
 */
static int fp_elect(struct fleet_probe *fp, struct fp_entry *e, uint64_t px,
		    char *holder, size_t holder_len)
{
	char key[FP_KEY_MAX];
	redisReply *r;
	int tries;

	snprintf(key, sizeof(key), "%s:probe:%s", fp->conf.channel, e->name);
	for (tries = 0; tries < 3; tries++) {
		r = redisCommand(fp->rc, "SET %s %s NX PX %llu", key,
				 fp->conf.host_id, (unsigned long long)px);
		if (!r || (r->type != REDIS_REPLY_STATUS && r->type != REDIS_REPLY_NIL)) {
			fp_reply_error(fp, r, "SET NX", key);
			return FP_VOID;
		}
		if (r->type == REDIS_REPLY_STATUS) {
			int ok = r->len == 2 && memcmp(r->str, "OK", 2) == 0;

			freeReplyObject(r);
			return ok ? FP_WON : FP_VOID;
		}
		freeReplyObject(r);
		r = redisCommand(fp->rc, "GET %s", key);
		if (!r || (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_NIL)) {
			fp_reply_error(fp, r, "GET", key);
			return FP_VOID;
		}
		if (r->type == REDIS_REPLY_NIL) { /* expired in between: again */
			freeReplyObject(r);
			continue;
		}
		/* Untrusted: anyone with access to Redis may have written it. */
		if (r->len > BRK_HOST_ID_MAX || r->len == 0 ||
		    memchr(r->str, '\0', r->len)) {
			freeReplyObject(r);
			log_probe("warn", "bad_holder", e->name, "key", key, NULL, 0);
			return FP_VOID;
		}
		memcpy(holder, r->str, r->len);
		holder[r->len] = '\0';
		freeReplyObject(r);
		(void)holder_len;
		if (brk_host_id_validate(holder) != 0) {
			log_probe("warn", "bad_holder", e->name, "key", key, NULL, 0);
			return FP_VOID;
		}
		if (strcmp(holder, fp->conf.host_id) != 0)
			return FP_LOST;
		/* Still ours from the last period (its key outlives a failed
		 * probe by up to the verdict wait): this host probes again, and
		 * renews the key for this probe (XX: only while it exists; nil:
		 * it expired just now, elect again). */
		r = redisCommand(fp->rc, "SET %s %s XX PX %llu", key,
				 fp->conf.host_id, (unsigned long long)px);
		if (!r || (r->type != REDIS_REPLY_STATUS && r->type != REDIS_REPLY_NIL)) {
			fp_reply_error(fp, r, "SET XX", key);
			return FP_VOID;
		}
		if (r->type == REDIS_REPLY_STATUS) {
			freeReplyObject(r);
			return FP_WON;
		}
		freeReplyObject(r);
	}
	return FP_VOID;
}

static void fp_check(struct fleet_probe *fp, struct fp_entry *e)
{
	char holder[BRK_HOST_ID_MAX + 1];
	uint64_t remaining, wait, hold;
	int rc;

	if (brk_breaker_info(e->b, &fp->info) != 0 ||
	    strcmp(fp->info.name, e->name) != 0 ||
	    fp->info.state == BRK_CLOSED) {
		e->used = 0; /* closed (or retired, reused): evict */
		return;
	}
	if (fp->info.state != BRK_OPEN || e->elected)
		return;
	remaining = fp->info.open_remaining_ms;
	if (remaining > FLEET_PROBE_LEAD_MS)
		return;
	e->elected = 1; /* whatever happens now: one election per period */
	if (fp->info.mode != BRK_MODE_NORMAL || !fp->info.config.fleet ||
	    !fp->info.config.fleet_probe)
		return;
	if (!fp->rc)
		return; /* Redis down: no election, this host probes itself */
	if (remaining == 0)
		remaining = 1;
	wait = fleet_probe_verdict_wait_ms(fp->info.config.probe_timeout_ms,
					   e->period_ms);
	hold = remaining + wait;
	rc = fp_elect(fp, e, hold, holder, sizeof(holder));
	if (rc == FP_WON) {
		fleet_status_probe(1);
		log_probe("info", "won", e->name, NULL, NULL, "hold_ms", hold);
		return;
	}
	if (rc != FP_LOST)
		return;
	/* Hold past the winner's key by 2 x LEAD (see the top). */
	hold += 2u * FLEET_PROBE_LEAD_MS;
	rc = brk_set_origin(fp->seg, holder);
	if (rc == 0) {
		rc = brk_trip_extend(e->b, hold);
		(void)brk_set_origin(fp->seg, NULL);
	}
	e->hold_pending = rc == 0; /* its event is next: not a period */
	e->hold_ms = hold;
	if (rc == 0 || rc == -EALREADY)
		e->elected = 0; /* the hold's end is the next election */
	fleet_status_probe(0);
	if (rc == 0 || rc == -EALREADY)
		log_probe("info", "lost", e->name, "holder", holder, "hold_ms", hold);
	else
		log_probe("warn", "lost", e->name, "holder", holder, "hold_err",
			  (uint64_t)-rc);
}

static void *fp_main(void *arg)
{
	struct fleet_probe *fp = arg;
	struct timespec tick = { 0, (long)FLEET_PROBE_TICK_MS * 1000000L };
	size_t i;

	while (!atomic_load(&fp->stop)) {
		fp_maybe_connect(fp);
		fp_drain(fp);
		for (i = 0; i < FLEET_PROBE_MAX; i++)
			if (fp->tab[i].used)
				fp_check(fp, &fp->tab[i]);
		nanosleep(&tick, NULL);
	}
	return NULL;
}

int fleet_probe_start(const struct fleet_conf *c, const char *shm_name)
{
	struct brk_attach_opts o;
	struct fleet_probe *fp;
	char err[256];
	int rc;

	if (g_fp)
		return -EALREADY;
	fp = calloc(1, sizeof(*fp));
	if (!fp)
		return -ENOMEM;
	fp->conf = *c;
	snprintf(fp->shm_name, sizeof(fp->shm_name), "%s", shm_name);
	fp->conf.shm_name = fp->shm_name;
	brk_attach_opts_init(&o);
	o.shm_name = fp->shm_name;
	o.flags = BRK_ATTACH_NOCREATE;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	rc = brk_attach(&o, &fp->seg);
	if (rc != 0) {
		free(fp);
		return rc;
	}
	/* From the oldest event the ring still keeps, not from the head: a
	 * breaker that opened before this breakerd started (a restart during
	 * its cooling period) still gets its election; the record says
	 * whether it is still open. */
	fp->cursor = 1;
	fp->first_drain = 1;
	atomic_init(&fp->stop, 0);
	rc = pthread_create(&fp->thread, NULL, fp_main, fp);
	if (rc != 0) {
		brk_detach(fp->seg);
		free(fp);
		return -rc;
	}
	g_fp = fp;
	return 0;
}

void fleet_probe_stop(void)
{
	struct fleet_probe *fp = g_fp;

	if (!fp)
		return;
	atomic_store(&fp->stop, 1);
	pthread_join(fp->thread, NULL);
	if (fp->rc)
		redisFree(fp->rc);
	brk_detach(fp->seg);
	free(fp);
	g_fp = NULL;
}
