/*
 * fleet_burst.c - a burst of local events for the fleet link's tests:
 *   fleet_burst SHM FLEET_NAME OTHER_NAME N
 * trips FLEET_NAME (a fleet breaker) for 30 s, then trips and resets
 * OTHER_NAME (not fleet-wide) N times as fast as it can: 2 N events, more
 * than the event ring holds when N > 2048, so the trip may be overwritten
 * before breakerd's publisher reads it. Exit 0, 1 on an error.
 */
#include <stdio.h>
#include <stdlib.h>

#include "breaker.h"

int main(int argc, char **argv)
{
	struct brk_attach_opts ao;
	brk_segment *seg;
	brk_breaker *f, *o;
	long i, n;
	int rc;

	if (argc != 5) {
		fprintf(stderr, "usage: fleet_burst SHM FLEET_NAME OTHER_NAME N\n");
		return 1;
	}
	n = strtol(argv[4], NULL, 10);
	brk_attach_opts_init(&ao);
	ao.shm_name = argv[1];
	ao.flags = BRK_ATTACH_NOCREATE;
	if ((rc = brk_attach(&ao, &seg)) < 0 ||
	    (rc = brk_breaker_find(seg, argv[2], &f)) < 0 ||
	    (rc = brk_breaker_get(seg, argv[3], NULL, &o)) < 0 ||
	    (rc = brk_trip(f, 30000)) < 0) {
		fprintf(stderr, "fleet_burst: %s\n", brk_strerror(rc));
		return 1;
	}
	for (i = 0; i < n; i++) {
		if ((rc = brk_trip(o, 1000)) < 0 || (rc = brk_reset(o)) < 0) {
			fprintf(stderr, "fleet_burst: %s\n", brk_strerror(rc));
			return 1;
		}
	}
	brk_detach(seg);
	return 0;
}
