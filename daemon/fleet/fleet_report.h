/*
 * fleet_report.h - the fleet link's process-local status (struct
 * brk_fleet_status): counters bumped by the publisher, the subscriber and
 * the fleet probe threads (atomics), the link state derived from the
 * connections' ups and downs, and its copy into the segment header
 * (brk_fleet_report()) on each state change and at most every
 * FLEET_REPORT_MS while counters move. One instance per process.
 */
#ifndef BREAKERD_FLEET_REPORT_H
#define BREAKERD_FLEET_REPORT_H

#include <stdint.h>

#include "breaker.h"

#define FLEET_REPORT_MS 100u

enum fleet_conn {
	FLEET_CONN_PUB = 0,  /* the publisher's connection */
	FLEET_CONN_SUB = 1,  /* the subscriber's (subscribed) */
	FLEET_CONN_COUNT = 2
};

enum fleet_counter {
	FLEET_C_PUBLISHED,
	FLEET_C_RECEIVED,
	FLEET_C_APPLIED,
	FLEET_C_IGNORED
};

/* Start: state CONNECTING, counters zero, @host_id and @channel copied. */
void fleet_status_init(const char *host_id, const char *channel);

/* A connection came up (@err NULL) or went down (@err: why, logged):
 * CONNECTED when every connection is up, DOWN on any loss, and
 * `reconnects` +1 for each link reconnect: CONNECTED again after the
 * first time (one outage is one reconnect, however many connections). */
void fleet_status_conn(int which, const char *err);

void fleet_status_count(int counter);

/* The fleet probe (fleet_probe.h) won (@won 1) or lost (0) an election:
 * counted in the link's status (probe_won / probe_lost). Thread-safe. */
void fleet_status_probe(int won);
void fleet_status_drop(int cause);       /* enum brk_fleet_drop */
void fleet_status_lag(uint64_t lag_ms);  /* of a message applied */
void fleet_status_seen(uint64_t wall_ms); /* a peer message arrived */

/* Copy the status into @seg's header if the state changed, or if
 * counters moved and FLEET_REPORT_MS passed since the last copy
 * (@force: whenever anything moved). Serialised: any thread may call. */
void fleet_status_flush(brk_segment *seg, int force);

/* The link stops: state OFF, reported. */
void fleet_status_off(brk_segment *seg);

#endif
