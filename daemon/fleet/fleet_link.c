/*
 * fleet_link.c - start and stop the fleet link's two threads.
 */
#include "fleet_link.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_apply.h"
#include "fleet_pub.h"
#include "fleet_report.h"
#include "fleet_sub.h"
#include "logfmt.h"

struct fleet_link {
	struct fleet_conf conf;
	atomic_int stop;
	brk_segment *seg;          /* for the final report */
	struct fleet_pub pub;
	struct fleet_sub sub;
	pthread_t pub_t, sub_t;
	int pub_started, sub_started;
};

static brk_segment *attach(const char *shm)
{
	struct brk_attach_opts ao;
	brk_segment *seg = NULL;
	char errbuf[256];
	struct logline l;
	int rc;

	brk_attach_opts_init(&ao);
	ao.shm_name = shm;
	ao.flags = BRK_ATTACH_NOCREATE;
	errbuf[0] = '\0';
	ao.errbuf = errbuf;
	ao.errbuf_len = sizeof(errbuf);
	rc = brk_attach(&ao, &seg);
	if (rc < 0) {
		ll_begin(&l, "error", "fleet link: cannot attach the segment");
		ll_str(&l, "shm", shm);
		ll_str(&l, "err", errbuf[0] ? errbuf : brk_strerror(rc));
		ll_end(&l);
		return NULL;
	}
	return seg;
}

static void end(struct fleet_link *fl)
{
	atomic_store(&fl->stop, 1);
	if (fl->pub_started)
		pthread_join(fl->pub_t, NULL);
	if (fl->sub_started)
		pthread_join(fl->sub_t, NULL);
	if (fl->seg)
		fleet_status_off(fl->seg);
	if (fl->pub.seg)
		brk_detach(fl->pub.seg);
	if (fl->sub.seg)
		brk_detach(fl->sub.seg);
	if (fl->seg)
		brk_detach(fl->seg);
	free(fl);
}

struct fleet_link *fleet_start(const struct fleet_conf *c)
{
	struct fleet_link *fl = calloc(1, sizeof(*fl));
	struct logline l;

	if (!fl)
		return NULL;
	fl->conf = *c;
	atomic_init(&fl->stop, 0);
	fleet_status_init(c->host_id, c->channel);
	fl->seg = attach(c->shm_name);
	fl->pub.seg = attach(c->shm_name);
	fl->sub.seg = attach(c->shm_name);
	if (!fl->seg || !fl->pub.seg || !fl->sub.seg) {
		end(fl);
		return NULL;
	}
	fleet_status_flush(fl->seg, 1); /* CONNECTING */
	fl->pub.c = &fl->conf;
	fl->pub.stop = &fl->stop;
	fl->sub.c = &fl->conf;
	fl->sub.stop = &fl->stop;
	ll_begin(&l, "info", "fleet link starting");
	ll_str(&l, "host_id", c->host_id);
	ll_str(&l, "channel", c->channel);
	ll_str(&l, "redis", c->redis_host);
	ll_i64(&l, "port", c->redis_port);
	ll_i64(&l, "db", c->redis_db);
	if (c->user[0])
		ll_str(&l, "user", c->user);
	ll_str(&l, "auth", c->password[0] ? "yes" : "no");
	ll_str(&l, "signed", c->keys.n ? "yes" : "no");
	if (c->keys.n) {
		ll_str(&l, "keys", c->key_src);
		ll_u64(&l, "key_count", c->keys.n);
	}
	ll_u64(&l, "peers", c->npeers);
	ll_end(&l);
	if (!c->keys.n) {
		ll_begin(&l, "warn", "fleet link is unauthenticated: any client "
			 "that can PUBLISH on the channel can open, reset or "
			 "force this host's fleet-wide breakers; give "
			 "--fleet-key-file FILE (docs/guide/fleet.md \"Trust "
			 "model\")");
		ll_str(&l, "fleet", "unauthenticated");
		ll_end(&l);
	}
	fleet_apply_policy(&fl->conf.keys, fl->conf.peers, fl->conf.npeers);
	fl->sub_started = pthread_create(&fl->sub_t, NULL, fleet_sub_main,
					 &fl->sub) == 0;
	fl->pub_started = fl->sub_started &&
		pthread_create(&fl->pub_t, NULL, fleet_pub_main, &fl->pub) == 0;
	if (!fl->pub_started) {
		fputs("breakerd: fleet link: cannot start its threads\n", stderr);
		end(fl);
		return NULL;
	}
	return fl;
}

void fleet_stop(struct fleet_link *fl)
{
	if (fl)
		end(fl);
}
