/*
 * fleetstat.c - a stand-in for breakerd's fleet link in the cli tests:
 * attach to SHM, publish a fleet link status with brk_fleet_report() and
 * stay alive for SECONDS (the status reads "off" once its writer is
 * gone), so `bctl segment info`, `bctl inspect` and `bctl metrics` show
 * a real status without a Redis server.
 *
 *   fleetstat SHM STATE SECONDS [N]
 *
 * STATE: off, connecting, connected or down. Every counter is derived
 * from N (default 1): published N, received N+1, applied N+2, ignored
 * N+3, the drops of cause i i+1 (dropped their sum), reconnects N+4, probe_won N+5,
 * probe_lost N+6, lag_ms 250; host id "host-a", channel "breakerd"; the
 * last message 1.5 s before now. Prints "ready" when reported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"

int main(int argc, char **argv)
{
	static const char *const states[] = { "off", "connecting", "connected", "down" };
	struct brk_attach_opts o;
	struct brk_fleet_status st;
	struct timespec ts;
	brk_segment *seg;
	uint64_t n = argc > 4 ? strtoull(argv[4], NULL, 10) : 1, now;
	unsigned i;
	int rc, s = -1;

	if (argc < 4) {
		fprintf(stderr, "usage: fleetstat SHM STATE SECONDS [N]\n");
		return 2;
	}
	for (i = 0; i < 4; i++)
		if (strcmp(argv[2], states[i]) == 0)
			s = (int)i;
	if (s < 0) {
		fprintf(stderr, "fleetstat: bad state '%s'\n", argv[2]);
		return 2;
	}
	brk_attach_opts_init(&o);
	o.shm_name = argv[1];
	rc = brk_attach(&o, &seg);
	if (rc) {
		fprintf(stderr, "fleetstat: attach %s: %s\n", argv[1], brk_strerror(rc));
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	memset(&st, 0, sizeof(st));
	st.state = (uint32_t)s;
	snprintf(st.host_id, sizeof(st.host_id), "host-a");
	snprintf(st.channel, sizeof(st.channel), "breakerd");
	st.state_since_wall_ms = now - 60000;
	st.last_msg_wall_ms = now - 1500;
	st.lag_ms = 250;
	st.published = n;
	st.received = n + 1;
	st.applied = n + 2;
	st.ignored = n + 3;
	for (i = 0; i < BRK_FLEET_DROP_COUNT; i++) {
		brk_fleet_drops_add(&st, (int)i, i + 1);
		st.dropped += i + 1;
	}
	st.reconnects = n + 4;
	st.probe_won = n + 5;
	st.probe_lost = n + 6;
	rc = brk_fleet_report(seg, &st);
	if (rc) {
		fprintf(stderr, "fleetstat: report: %s\n", brk_strerror(rc));
		brk_detach(seg);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned)atoi(argv[3]));
	brk_detach(seg);
	return 0;
}
