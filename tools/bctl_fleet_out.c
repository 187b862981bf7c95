/*
 * bctl_fleet_out.c - the "fleet link:" block of `bctl segment info` and
 * `bctl inspect` (no NAME), text and JSON, from brk_fleet_status()
 * (record_out.c bctl_fleet_read(): host id and channel made printable).
 * No link on the segment (or a library without one): "fleet link: off".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bctl_out.h"
#include "cli_util.h"

static json_t *ju(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static void set(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v);
}

void bctl_print_fleet(FILE *f, brk_segment *seg)
{
	struct brk_fleet_status st;
	uint64_t now = bctl_wall_ms();
	char when[40], drops[256];
	size_t at = 0;
	unsigned i;
	int rc = bctl_fleet_read(seg, &st);

	if (rc < 0) {
		bctl_kv(f, 0, "fleet link", "unreadable (%s)", brk_strerror(rc));
		return;
	}
	if (rc == 0) {
		bctl_kv(f, 0, "fleet link", "off");
		return;
	}
	bctl_kv(f, 0, "fleet link", "%s%s", brk_fleet_state_name((int)st.state),
		st.state == BRK_FLEET_OFF ? " (the last link's counters)" : "");
	bctl_kv(f, 2, "host_id", "%s", st.host_id);
	bctl_kv(f, 2, "channel", "%s", st.channel);
	if (st.pid)
		bctl_kv(f, 2, "pid", "%" PRId32, st.pid);
	if (st.state_since_wall_ms &&
	    cli_format_time(st.state_since_wall_ms, when, sizeof(when)) == 0)
		bctl_kv(f, 2, "since", "%s (%" PRIu64 " ms ago)", when,
			bctl_age_ms(now, st.state_since_wall_ms));
	if (st.last_msg_wall_ms)
		bctl_kv(f, 2, "last_message", "%" PRIu64 " ms ago",
			bctl_age_ms(now, st.last_msg_wall_ms));
	else
		bctl_kv(f, 2, "last_message", "none");
	bctl_kv(f, 2, "lag_ms", "%" PRIu64 " (of the last message applied)",
		st.lag_ms);
	bctl_kv(f, 2, "published", "%" PRIu64, st.published);
	bctl_kv(f, 2, "received", "%" PRIu64, st.received);
	bctl_kv(f, 2, "applied", "%" PRIu64, st.applied);
	bctl_kv(f, 2, "ignored", "%" PRIu64 " (nothing to do)", st.ignored);
	drops[0] = '\0';
	for (i = 0; i < BRK_FLEET_DROP_COUNT && at < sizeof(drops); i++) {
		int n = snprintf(drops + at, sizeof(drops) - at, "%s%s %" PRIu64,
				 i ? ", " : "", brk_fleet_drop_name((int)i),
				 brk_fleet_drops(&st, (int)i));

		if (n < 0)
			break;
		at += (size_t)n;
	}
	bctl_kv(f, 2, "dropped", "%" PRIu64 " (%s)", st.dropped, drops);
	bctl_kv(f, 2, "reconnects", "%" PRIu64, st.reconnects);
	bctl_kv(f, 2, "probes", "won %" PRIu64 ", lost %" PRIu64, st.probe_won,
		st.probe_lost);
}

json_t *bctl_json_fleet(brk_segment *seg)
{
	struct brk_fleet_status st;
	uint64_t now = bctl_wall_ms();
	json_t *o = json_object(), *d;
	char when[40];
	unsigned i;
	int rc = bctl_fleet_read(seg, &st);

	if (!o)
		return NULL;
	if (rc < 0) {
		set(o, "state", json_null());
		set(o, "error", json_string(brk_strerror(rc)));
		return o;
	}
	set(o, "state", json_string(brk_fleet_state_name((int)st.state)));
	if (rc == 0)
		return o;
	set(o, "host_id", json_string(st.host_id));
	set(o, "channel", json_string(st.channel));
	set(o, "pid", json_integer(st.pid));
	if (st.state_since_wall_ms &&
	    cli_format_time(st.state_since_wall_ms, when, sizeof(when)) == 0) {
		set(o, "since", json_string(when));
		set(o, "since_age_ms", ju(bctl_age_ms(now, st.state_since_wall_ms)));
	}
	set(o, "last_message_age_ms", st.last_msg_wall_ms ?
	    ju(bctl_age_ms(now, st.last_msg_wall_ms)) : json_null());
	set(o, "lag_ms", ju(st.lag_ms));
	set(o, "published", ju(st.published));
	set(o, "received", ju(st.received));
	set(o, "applied", ju(st.applied));
	set(o, "ignored", ju(st.ignored));
	set(o, "dropped", ju(st.dropped));
	d = json_object();
	for (i = 0; d && i < BRK_FLEET_DROP_COUNT; i++)
		set(d, brk_fleet_drop_name((int)i), ju(brk_fleet_drops(&st, (int)i)));
	set(o, "drops", d ? d : json_null());
	set(o, "reconnects", ju(st.reconnects));
	set(o, "probe_won", ju(st.probe_won));
	set(o, "probe_lost", ju(st.probe_lost));
	return o;
}
