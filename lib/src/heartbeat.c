/*
 * heartbeat.c - the supervisor's presence in the segment header: breakerd
 * publishes its pid, start time, interval and a heartbeat, and clears
 * them when it leaves, so workers and bctl can tell whether it runs.
 */
#include "ident.h"
#include "internal.h"

int brk_daemon_leave(brk_segment *s)
{
	uint64_t me;

	if (!s)
		return -EINVAL;
	if (s->readonly)
		return -EROFS;
	me = (uint64_t)brk__self()->pid;
	if (uatomic_cmpxchg(&s->hdr->daemon_pid, me, 0) == me)
		uatomic_set(&s->hdr->heartbeat_ns, 0);
	return 0;
}

int brk_heartbeat(brk_segment *s, uint64_t interval_ms)
{
	const struct brk__ident *me = brk__self();

	if (!s)
		return -EINVAL;
	if (s->readonly)
		return -EROFS;
	uatomic_set(&s->hdr->daemon_pid, (uint64_t)me->pid);
	uatomic_set(&s->hdr->daemon_start, me->start_ticks);
	uatomic_set(&s->hdr->daemon_interval_ms, interval_ms);
	uatomic_set(&s->hdr->heartbeat_ns, brk__now(s));
	return 0;
}
