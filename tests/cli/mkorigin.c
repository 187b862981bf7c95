/*
 * mkorigin.c - events with a fleet origin, for bctl events' tests:
 * mkorigin SHM HOST
 *
 * On breaker "fleet/a": a trip applied as HOST's decision
 * (brk_set_origin(), brk_trip_extend()), then a local reset; then the
 * link status CONNECTING (an event "fleet_link" off -> connecting); then
 * on pace "fleet/p" (ceiling 100/s) a cut to 50/s applied as HOST's.
 * Exit 0, or 1 with the error on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "breaker.h"

static int check(const char *what, int rc)
{
	if (rc != 0)
		fprintf(stderr, "mkorigin: %s: %s\n", what, brk_strerror(rc));
	return rc != 0;
}

int main(int argc, char **argv)
{
	struct brk_attach_opts o;
	struct brk_fleet_status st;
	struct brk_config c;
	struct brk_pace_config pc;
	brk_segment *seg;
	brk_breaker *b;
	brk_bucket *k;

	if (argc != 3) {
		fprintf(stderr, "usage: mkorigin SHM HOST\n");
		return 1;
	}
	brk_attach_opts_init(&o);
	o.shm_name = argv[1];
	if (check("attach", brk_attach(&o, &seg)))
		return 1;
	brk_config_init(&c);
	if (check("breaker", brk_breaker_get(seg, "fleet/a", &c, &b)) ||
	    check("origin", brk_set_origin(seg, argv[2])) ||
	    check("trip_extend", brk_trip_extend(b, 60000)) ||
	    check("origin local", brk_set_origin(seg, NULL)) ||
	    check("reset", brk_reset(b)))
		return 1;
	memset(&st, 0, sizeof(st));
	st.state = BRK_FLEET_CONNECTING;
	snprintf(st.host_id, sizeof(st.host_id), "here");
	snprintf(st.channel, sizeof(st.channel), "breakerd");
	if (check("report", brk_fleet_report(seg, &st)))
		return 1;
	brk_pace_config_init(&pc);
	pc.ceiling_per_s = 100.0;
	if (check("pace", brk_pace_get(seg, "fleet/p", &pc, &k)) ||
	    check("origin (pace)", brk_set_origin(seg, argv[2])) ||
	    check("pace_cut", brk_pace_cut(k, 50000)) ||
	    check("origin local (pace)", brk_set_origin(seg, NULL)))
		return 1;
	brk_detach(seg);
	return 0;
}
