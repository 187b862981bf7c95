/*
 * fleet_report.c - the fleet link's status: atomics for the counters
 * (several threads), a mutex for the state and the copy into the segment.
 */
#include "fleet_report.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "logfmt.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct brk_fleet_status st;         /* state, ids, since: under mu */
static int up[FLEET_CONN_COUNT];           /* under mu */
static int was_connected;                  /* the link was up once, under mu */
static int state_dirty;                    /* under mu */
static uint64_t last_report_ns;            /* under mu */
static uint64_t reported_moves;            /* under mu */

static _Atomic uint64_t counters[4];
static _Atomic uint64_t drops[BRK_FLEET_DROP_COUNT];
static _Atomic uint64_t lag_ms, last_msg_ms, reconnects;
static _Atomic uint64_t probe_won, probe_lost;
static _Atomic uint64_t moves;             /* any counter bump */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fleet_status_init(const char *host_id, const char *channel)
{
	pthread_mutex_lock(&mu);
	memset(&st, 0, sizeof(st));
	st.state = BRK_FLEET_CONNECTING;
	snprintf(st.host_id, sizeof(st.host_id), "%s", host_id);
	snprintf(st.channel, sizeof(st.channel), "%s", channel);
	st.state_since_wall_ms = wall_now_ms();
	memset(up, 0, sizeof(up));
	was_connected = 0;
	state_dirty = 1;
	pthread_mutex_unlock(&mu);
}

static void set_state(uint32_t s)
{
	if (st.state == s)
		return;
	st.state = s;
	st.state_since_wall_ms = wall_now_ms();
	state_dirty = 1;
}

void fleet_status_conn(int which, const char *err)
{
	struct logline l;
	uint32_t before;
	int i, all = 1;

	if (which < 0 || which >= FLEET_CONN_COUNT)
		return;
	pthread_mutex_lock(&mu);
	before = st.state;
	if (err) {
		up[which] = 0;
		set_state(BRK_FLEET_DOWN);
	} else {
		up[which] = 1;
		for (i = 0; i < FLEET_CONN_COUNT; i++)
			all &= up[i];
		if (all && st.state != BRK_FLEET_CONNECTED) {
			/* one link reconnect (DOWN -> CONNECTED after the
			 * first connect), whichever connections it took */
			if (was_connected) {
				atomic_fetch_add(&reconnects, 1);
				atomic_fetch_add(&moves, 1);
			}
			was_connected = 1;
			set_state(BRK_FLEET_CONNECTED);
		}
	}
	if (st.state != before) {
		if (err) {
			ll_begin(&l, "warn", "fleet link");
			ll_str(&l, "fleet", "down");
			ll_str(&l, "err", err);
		} else {
			ll_begin(&l, "info", "fleet link");
			ll_str(&l, "fleet", "connected");
			ll_str(&l, "host_id", st.host_id);
			ll_str(&l, "channel", st.channel);
		}
		ll_end(&l);
	}
	pthread_mutex_unlock(&mu);
}

void fleet_status_count(int counter)
{
	if (counter < 0 || counter > FLEET_C_IGNORED)
		return;
	atomic_fetch_add(&counters[counter], 1);
	atomic_fetch_add(&moves, 1);
}

void fleet_status_drop(int cause)
{
	if (cause < 0 || (unsigned)cause >= BRK_FLEET_DROP_COUNT)
		cause = BRK_FLEET_DROP_MALFORMED;
	atomic_fetch_add(&drops[cause], 1);
	atomic_fetch_add(&moves, 1);
}

void fleet_status_lag(uint64_t ms)
{
	atomic_store(&lag_ms, ms);
}

void fleet_status_seen(uint64_t wall_ms)
{
	atomic_store(&last_msg_ms, wall_ms);
	atomic_fetch_add(&moves, 1);
}

void fleet_status_probe(int won)
{
	atomic_fetch_add(won ? &probe_won : &probe_lost, 1);
	atomic_fetch_add(&moves, 1);
}

/* Under mu. */
static void report(brk_segment *seg)
{
	struct brk_fleet_status s = st;
	unsigned i;

	s.published = atomic_load(&counters[FLEET_C_PUBLISHED]);
	s.received = atomic_load(&counters[FLEET_C_RECEIVED]);
	s.applied = atomic_load(&counters[FLEET_C_APPLIED]);
	s.ignored = atomic_load(&counters[FLEET_C_IGNORED]);
	s.dropped = 0;
	for (i = 0; i < BRK_FLEET_DROP_COUNT; i++) {
		brk_fleet_drops_add(&s, (int)i, atomic_load(&drops[i]));
		s.dropped += brk_fleet_drops(&s, (int)i);
	}
	s.lag_ms = atomic_load(&lag_ms);
	s.last_msg_wall_ms = atomic_load(&last_msg_ms);
	s.reconnects = atomic_load(&reconnects);
	s.probe_won = atomic_load(&probe_won);
	s.probe_lost = atomic_load(&probe_lost);
	(void)brk_fleet_report(seg, &s);
}

void fleet_status_flush(brk_segment *seg, int force)
{
	uint64_t now, m;

	pthread_mutex_lock(&mu);
	now = mono_ns();
	m = atomic_load(&moves);
	if (state_dirty || (m != reported_moves &&
	    (force || now - last_report_ns >= FLEET_REPORT_MS * 1000000ull))) {
		reported_moves = m;
		last_report_ns = now;
		state_dirty = 0;
		report(seg);
	}
	pthread_mutex_unlock(&mu);
}

void fleet_status_off(brk_segment *seg)
{
	pthread_mutex_lock(&mu);
	set_state(BRK_FLEET_OFF);
	state_dirty = 0;
	report(seg);
	pthread_mutex_unlock(&mu);
}
