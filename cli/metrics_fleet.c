/*
 * metrics_fleet.c - the fleet link's families; see metrics_fleet.h. Every
 * label value is a fixed word of the library (brk_fleet_state_name(),
 * brk_fleet_drop_name()) or of this file: nothing from the segment is
 * printed as a label.
 */
#include "metrics_fleet.h"

#include <inttypes.h>

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void seconds(FILE *f, const char *name, uint64_t ms)
{
	fprintf(f, "%s %" PRIu64 ".%03" PRIu64 "\n", name, ms / 1000, ms % 1000);
}

void metrics_fleet(FILE *f, const struct brk_fleet_status *st,
		   uint64_t now_wall_ms)
{
	static const char *const dir[] = { "published", "received", "applied",
					   "ignored" };
	const uint64_t msgs[] = { st->published, st->received, st->applied,
				  st->ignored };
	int i;

	head(f, "breakerd_fleet_state", "gauge",
	     "Fleet link state (breakerd --fleet): 1 for the current one.");
	for (i = BRK_FLEET_OFF; i <= BRK_FLEET_DOWN; i++)
		fprintf(f, "breakerd_fleet_state{state=\"%s\"} %d\n",
			brk_fleet_state_name(i), (uint32_t)i == st->state);
	head(f, "breakerd_fleet_messages_total", "counter",
	     "Fleet link messages: decisions published, peer messages "
	     "received, applied, ignored (nothing to do).");
	for (i = 0; i < 4; i++)
		fprintf(f, "breakerd_fleet_messages_total{direction=\"%s\"} %" PRIu64
			"\n", dir[i], msgs[i]);
	head(f, "breakerd_fleet_dropped_total", "counter",
	     "Peer messages refused, by cause (never applied).");
	for (i = 0; i < (int)BRK_FLEET_DROP_COUNT; i++)
		fprintf(f, "breakerd_fleet_dropped_total{cause=\"%s\"} %" PRIu64 "\n",
			brk_fleet_drop_name(i), brk_fleet_drops(st, i));
	head(f, "breakerd_fleet_lag_seconds", "gauge",
	     "Lag of the last peer message applied: arrival minus sent time.");
	seconds(f, "breakerd_fleet_lag_seconds", st->lag_ms);
	if (st->last_msg_wall_ms) {
		head(f, "breakerd_fleet_last_message_age_seconds", "gauge",
		     "Seconds since the last peer message arrived.");
		seconds(f, "breakerd_fleet_last_message_age_seconds",
			now_wall_ms > st->last_msg_wall_ms ?
			now_wall_ms - st->last_msg_wall_ms : 0);
	}
	head(f, "breakerd_fleet_reconnects_total", "counter",
	     "Fleet link connections made after the first.");
	fprintf(f, "breakerd_fleet_reconnects_total %" PRIu64 "\n", st->reconnects);
	head(f, "breakerd_fleet_probe_elections_total", "counter",
	     "Fleet probe elections (fleet_probe breakers) this host won or lost.");
	fprintf(f, "breakerd_fleet_probe_elections_total{result=\"won\"} %" PRIu64
		"\n", st->probe_won);
	fprintf(f, "breakerd_fleet_probe_elections_total{result=\"lost\"} %" PRIu64
		"\n", st->probe_lost);
}
