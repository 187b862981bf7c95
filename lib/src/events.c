/*
 * events.c - the lock-free multi-producer event ring in the segment.
 *
 * A writer claims sequence s with uatomic_add_return(head, 1) and owns
 * slot (s - 1) % slots: it stores seq = s | BUSY, the fields, then seq = s
 * (each store ordered by cmm_smp_wmb). A reader accepts a slot only when
 * its seq reads s before and after copying the fields (a per-slot
 * seqlock), so it never returns a torn event; events overwritten before
 * they were read are counted as lost. A writer that dies between claiming
 * s and publishing it (or is still writing while 64 later events exist)
 * leaves a hole that readers skip and count as lost.
 */
#include <string.h>

#include "abi.h"
#include "internal.h"
#include "origin.h"

#define HOLE_SKIP 64u

void brk__event(brk_segment *s, uint32_t rec, const char *name, int from,
		int to, int reason, int32_t pid, uint64_t value)
{
	uint64_t seq, nm[BRK__NAME_BYTES / 8], now = brk__now(s);
	struct brk__event *e;
	size_t i;

	if (s->readonly)
		return;
	seq = uatomic_add_return(&s->hdr->event_head, 1);
	e = &s->events[(seq - 1) % s->event_slots];
	memset(nm, 0, sizeof(nm));
	/* at most 63 bytes, NUL-padded by the memset (not strncpy: -O3's
	 * -Wstringop-truncation fails the release build, issue 22) */
	memcpy(nm, name, strnlen(name, sizeof(nm) - 1));
	uatomic_set(&e->seq, seq | BRK__EV_BUSY);
	cmm_smp_wmb();
	uatomic_set(&e->mono_ns, now);
	uatomic_set(&e->wall_ms, (s->epoch_wall_ns +
				  (now > s->epoch_ns ? now - s->epoch_ns : 0)) / 1000000u);
	uatomic_set(&e->meta, ((uint64_t)(from & 0xff) << 56) |
			      ((uint64_t)(to & 0xff) << 48) |
			      ((uint64_t)(reason & 0xff) << 40) | rec);
	uatomic_set(&e->pid, (uint64_t)(uint32_t)pid);
	uatomic_set(&e->value, value);
	uatomic_set(&e->pad[BRK__EV_ORIGIN], brk__origin_ref(s));
	for (i = 0; i < BRK__NAME_BYTES / 8; i++)
		uatomic_set(&e->name[i], nm[i]);
	cmm_smp_wmb();
	uatomic_set(&e->seq, seq);
	/* publish, then look for waiters (a full barrier: a waiter that
	 * registered after this load sees the event; event_wait.c). Nobody
	 * waiting: one load of this already-hot line, no syscall. */
	cmm_smp_mb();
	if (uatomic_read(&s->hdr->event_waiters))
		brk__events_wake(s);
}

static void copy_event(const brk_segment *s, const struct brk__event *e,
		       struct brk_event *out)
{
	uint64_t nm[BRK__NAME_BYTES / 8], meta = uatomic_read(&e->meta);
	uint64_t origin = uatomic_read(&e->pad[BRK__EV_ORIGIN]);
	size_t i;

	out->mono_ns = uatomic_read(&e->mono_ns);
	out->wall_ms = uatomic_read(&e->wall_ms);
	out->from = (int)(meta >> 56);
	out->to = (int)((meta >> 48) & 0xff);
	out->reason = (int)((meta >> 40) & 0xff);
	out->pid = (int32_t)(uint32_t)uatomic_read(&e->pid);
	out->value = uatomic_read(&e->value);
	for (i = 0; i < BRK__NAME_BYTES / 8; i++)
		nm[i] = uatomic_read(&e->name[i]);
	memcpy(out->name, nm, sizeof(out->name));
	out->name[BRK_NAME_MAX] = '\0';
	/* the link's own events have no record: name "" */
	if (!(out->reason == BRK_EV_FLEET_LINK && out->name[0] == '\0') &&
	    brk_name_validate(out->name) != 0)
		strcpy(out->name, "?");
	brk__origin_name(s, origin, out->origin);
}

/* 1: copied; 0: not there yet (stop); -1: overwritten or a hole (lost). */
static int read_slot(brk_segment *s, uint64_t want, uint64_t head,
		     struct brk_event *out)
{
	const struct brk__event *e = &s->events[(want - 1) % s->event_slots];
	uint64_t s1 = uatomic_read(&e->seq), s2;

	cmm_smp_rmb();
	if (s1 != want) {
		uint64_t base = s1 & ~BRK__EV_BUSY;
		if (base > want)
			return -1;
		/* still being written, or a hole left by a dead writer */
		return head - want > HOLE_SKIP ? -1 : 0;
	}
	copy_event(s, e, out);
	cmm_smp_rmb();
	s2 = uatomic_read(&e->seq);
	if (s2 != s1)
		return (s2 & ~BRK__EV_BUSY) > want ? -1 : 0;
	out->seq = want;
	return 1;
}

int brk_events_read_sz(brk_segment *s, uint64_t *cursor,
		       struct brk_event *out, size_t max, uint64_t *lost,
		       size_t size)
{
	uint64_t head, want, gone = 0;
	struct brk_event ev;
	size_t n = 0;
	int rc;

	if (!s || !cursor || (max && (!out || size == 0)))
		return -EINVAL;
	head = uatomic_read(&s->hdr->event_head);
	want = *cursor ? *cursor : 1;
	if (head >= s->event_slots && want < head - s->event_slots + 1) {
		gone += head - s->event_slots + 1 - want;
		want = head - s->event_slots + 1;
	}
	while (want <= head && n < max) {
		memset(&ev, 0, sizeof(ev));
		rc = read_slot(s, want, head, &ev);
		if (rc == 0)
			break;
		if (rc < 0) {
			gone++;
		} else {
			/* the caller's element size is the stride */
			brk__struct_out((unsigned char *)out + n * size, size,
					&ev, sizeof(ev));
			n++;
		}
		want++;
	}
	*cursor = want;
	if (lost)
		*lost = gone;
	return (int)n;
}

int (brk_events_read)(brk_segment *seg, uint64_t *cursor,
		      struct brk_event *out, size_t max, uint64_t *lost)
{
	return brk_events_read_sz(seg, cursor, out, max, lost,
				  BRK_EVENT_SIZE_VER0);
}

void brk__record_event(brk_segment *s, struct brk__record *r, int from,
			 int to, int reason, int32_t pid, uint64_t value)
{
	char name[BRK__NAME_BYTES];

	if (brk__record_name(r, name) != 0)
		strcpy(name, "?");
	brk__event(s, brk__rec_index(s, r), name, from, to, reason, pid, value);
}
