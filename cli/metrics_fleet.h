/*
 * metrics_fleet.h - the breakerd_fleet_* families of the Prometheus
 * rendering (metrics_render.c calls it after the segment's families):
 * the fleet link's status (brk_fleet_status(), docs/design/fleet.md "Fleet
 * link"). metrics_fleet.c.
 */
#ifndef METRICS_FLEET_H
#define METRICS_FLEET_H

#include <stdint.h>
#include <stdio.h>

#include "breaker.h"

/**
 * metrics_fleet - write the families breakerd_fleet_state{state},
 * _messages_total{direction}, _dropped_total{cause}, _lag_seconds,
 * _last_message_age_seconds (only once a message arrived),
 * _reconnects_total and _probe_elections_total{result} of @st, ages
 * against @now_wall_ms. The caller prints them only when a link ran on
 * the segment (bctl_fleet_read() returned 1).
 */
void metrics_fleet(FILE *f, const struct brk_fleet_status *st,
		   uint64_t now_wall_ms);

#endif /* METRICS_FLEET_H */
