/*
 * record_out.c - see record_out.h.
 */
#include "record_out.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A heartbeat older than this many intervals, plus the slack, is stale. */
#define DAEMON_STALE_INTERVALS 3
#define DAEMON_STALE_SLACK_MS 1000

void bctl_safe_name(const char *src, size_t cap, char *dst)
{
	size_t n = strnlen(src, cap), i;

	if (n > BRK_NAME_MAX)
		n = BRK_NAME_MAX;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[i] = (c > 0x20 && c < 0x7f) ? (char)c : '?';
	}
	dst[n] = '\0';
}

enum bctl_daemon bctl_daemon_state(const struct brk_segment_info *s)
{
	uint64_t limit;

	if (s->daemon_pid <= 0 || s->heartbeat_age_ms == UINT64_MAX)
		return BCTL_DAEMON_NEVER;
	/* its pid means nothing in another pid namespace: judge by the
	 * heartbeat alone there */
	if (!(s->ns_differ & BRK_NS_PID) && kill(s->daemon_pid, 0) < 0 &&
	    errno == ESRCH)
		return BCTL_DAEMON_EXITED;
	limit = s->daemon_interval_ms * DAEMON_STALE_INTERVALS +
		DAEMON_STALE_SLACK_MS;
	if (s->daemon_interval_ms && s->heartbeat_age_ms > limit)
		return BCTL_DAEMON_STALE;
	return BCTL_DAEMON_OK;
}

int bctl_fleet_read(brk_segment *seg, struct brk_fleet_status *st)
{
	char safe[BRK_NAME_MAX + 1];
	unsigned i;
	int rc;

	memset(st, 0, sizeof(*st));
	rc = brk_fleet_status(seg, st);
	if (rc < 0)
		return rc;
	bctl_safe_name(st->host_id, sizeof(st->host_id), safe);
	snprintf(st->host_id, sizeof(st->host_id), "%s", safe);
	bctl_safe_name(st->channel, sizeof(st->channel), safe);
	snprintf(st->channel, sizeof(st->channel), "%s", safe);
	if (st->state != BRK_FLEET_OFF || st->published || st->received ||
	    st->applied || st->ignored || st->dropped || st->reconnects ||
	    st->probe_won || st->probe_lost)
		return 1;
	for (i = 0; i < BRK_FLEET_DROP_COUNT; i++)
		if (brk_fleet_drops(st, (int)i))
			return 1;
	return 0;
}

uint64_t bctl_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t bctl_age_ms(uint64_t now_ms, uint64_t then_ms)
{
	return now_ms > then_ms ? now_ms - then_ms : 0;
}
