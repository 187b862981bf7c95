/*
 * event_wait.c - brk_events_wait(): block until the event ring has an
 * event past a cursor (optionally of one name) or a timeout passes,
 * without polling (issue 24).
 *
 * A futex on a 32-bit word of the segment header (event_futex). The
 * segment is a MAP_SHARED mapping of one shm object, so FUTEX_WAIT and
 * FUTEX_WAKE without FUTEX_PRIVATE_FLAG key on the object and offset and
 * work across processes. Writers wake only when someone waits: a waiter
 * adds itself to event_waiters (a full barrier) before it reads the futex
 * word and looks at the ring; a writer publishes its event, issues a full
 * barrier and reads event_waiters (events.c). Either the writer's load
 * sees the waiter (it bumps the futex word and wakes: the waiter's
 * FUTEX_WAIT returns at once or is woken) or the waiter's look at the
 * ring sees the event: no wake-up is lost. With nobody waiting a writer
 * pays one load and no syscall; a waiter with nothing happening sleeps in
 * the kernel with no periodic wake-up. (The same waiter-count pattern as
 * glibc's condition variables and Linux's futex(2) "waiters" examples.)
 */
#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static long futex(uint32_t *addr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

void brk__events_wake(brk_segment *s)
{
	uatomic_add(&s->hdr->event_futex, 1);
	/* every waiter: INT32_MAX (not <limits.h>'s INT_MAX: lib/src/limits.h
	 * shadows that header where lib/src is an include folder, as in the
	 * fuzz build) */
	(void)futex(&s->hdr->event_futex, FUTEX_WAKE, INT32_MAX, NULL);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* 1 if the name matches @name: equal, or @name is a '/' prefix of it
 * ("a" matches "a" and "a/b", not "ab"). */
static int name_matches(const char *ev, const char *name)
{
	size_t n = strlen(name);

	return strncmp(ev, name, n) == 0 && (ev[n] == '\0' || ev[n] == '/');
}

/* Events at or past *@cursor: 1 if one (of @name, if not NULL) is there,
 * *@cursor then its sequence; 0 if none, *@cursor past every event read. */
static int look(brk_segment *s, uint64_t *cursor, const char *name)
{
	struct brk_event ev[16];
	uint64_t cur = *cursor, lost;

	for (;;) {
		uint64_t at = cur;
		int n = brk_events_read(s, &cur, ev, 16, &lost), i;

		if (n <= 0) {
			*cursor = at < cur ? cur : at;
			return 0;
		}
		for (i = 0; i < n; i++) {
			if (!name || name_matches(ev[i].name, name)) {
				*cursor = ev[i].seq;
				return 1;
			}
		}
	}
}

int brk_events_wait(brk_segment *seg, uint64_t *cursor, const char *name,
		    int64_t timeout_ms)
{
	uint64_t deadline = 0;
	int rc = 0;

	if (!seg || !cursor || timeout_ms < -1)
		return -EINVAL;
	if (name && *name && brk_name_validate(name) != 0)
		return -EINVAL;
	if (name && !*name)
		name = NULL;
	if (timeout_ms > 0)
		deadline = mono_ms() + (uint64_t)timeout_ms;
	if (look(seg, cursor, name))
		return 1;
	if (timeout_ms == 0)
		return 0;
	if (seg->readonly)
		return -EROFS;
	uatomic_add_return(&seg->hdr->event_waiters, 1); /* a full barrier */
	for (;;) {
		uint32_t v = uatomic_read(&seg->hdr->event_futex);
		struct timespec ts, *tp = NULL;

		cmm_smp_mb();
		if (look(seg, cursor, name)) {
			rc = 1;
			break;
		}
		if (timeout_ms > 0) {
			uint64_t now = mono_ms();
			if (now >= deadline) {
				rc = 0;
				break;
			}
			ts.tv_sec = (time_t)((deadline - now) / 1000u);
			ts.tv_nsec = (long)((deadline - now) % 1000u) * 1000000L;
			tp = &ts;
		}
		if (futex(&seg->hdr->event_futex, FUTEX_WAIT, v, tp) == 0) {
			/* woken: an event (of any name) or brk_events_kick() */
			rc = look(seg, cursor, name);
			break;
		}
		if (errno == EINTR) {
			rc = -EINTR;
			break;
		}
		/* EAGAIN (the word moved on before we slept) or timed out:
		 * look again, then check the deadline */
	}
	uatomic_add_return(&seg->hdr->event_waiters, (uint64_t)-1);
	return rc;
}

uint64_t brk_events_waiters(brk_segment *seg)
{
	return seg ? uatomic_read(&seg->hdr->event_waiters) : 0;
}

int brk_events_kick(brk_segment *seg)
{
	if (!seg)
		return -EINVAL;
	if (seg->readonly)
		return -EROFS;
	brk__events_wake(seg);
	return 0;
}
