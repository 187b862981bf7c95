/*
 * fleet_peek.c - the fleet link tests' view of a segment:
 *   fleet_peek SHM status   key=value lines of brk_fleet_status()
 *   fleet_peek SHM events   one line per event: seq name reason origin
 * (origin "-" for this host's own). Exit 0, 1 on an error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "breaker.h"

static int status(brk_segment *seg)
{
	struct brk_fleet_status st;
	unsigned i;
	int rc = brk_fleet_status(seg, &st);

	if (rc < 0) {
		fprintf(stderr, "fleet_peek: %s\n", brk_strerror(rc));
		return 1;
	}
	printf("state=%s\nhost_id=%s\nchannel=%s\n", brk_fleet_state_name((int)st.state),
	       st.host_id, st.channel);
	printf("published=%" PRIu64 "\nreceived=%" PRIu64 "\napplied=%" PRIu64
	       "\nignored=%" PRIu64 "\ndropped=%" PRIu64 "\nreconnects=%" PRIu64
	       "\nlag_ms=%" PRIu64 "\nlast_msg_wall_ms=%" PRIu64 "\n",
	       st.published, st.received, st.applied, st.ignored, st.dropped,
	       st.reconnects, st.lag_ms, st.last_msg_wall_ms);
	for (i = 0; i < BRK_FLEET_DROP_COUNT; i++)
		printf("drop_%s=%" PRIu64 "\n", brk_fleet_drop_name((int)i),
		       brk_fleet_drops(&st, (int)i));
	return 0;
}

static int events(brk_segment *seg)
{
	struct brk_event ev[64];
	uint64_t cursor = 1;
	int n, i;

	while ((n = brk_events_read(seg, &cursor, ev, 64, NULL)) > 0)
		for (i = 0; i < n; i++)
			printf("%" PRIu64 " %s %s %s\n", ev[i].seq,
			       ev[i].name[0] ? ev[i].name : "-",
			       brk_event_reason_name(ev[i].reason),
			       ev[i].origin[0] ? ev[i].origin : "-");
	return n < 0;
}

int main(int argc, char **argv)
{
	struct brk_attach_opts ao;
	brk_segment *seg;
	int rc;

	if (argc != 3) {
		fputs("usage: fleet_peek SHM status|events\n", stderr);
		return 2;
	}
	brk_attach_opts_init(&ao);
	ao.shm_name = argv[1];
	ao.flags = BRK_ATTACH_NOCREATE | BRK_ATTACH_READONLY;
	rc = brk_attach(&ao, &seg);
	if (rc < 0) {
		fprintf(stderr, "fleet_peek: %s: %s\n", argv[1], brk_strerror(rc));
		return 1;
	}
	rc = strcmp(argv[2], "events") == 0 ? events(seg) : status(seg);
	brk_detach(seg);
	return rc;
}
