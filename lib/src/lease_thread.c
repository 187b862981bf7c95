/*
 * lease_thread.c - leases bound to the thread that holds them.
 *
 * A lease's owner is a process (token pid + start time): a thread that
 * exits holding a permit leaves the lease held until its process exits or
 * someone releases the permit (a permit may legitimately be released by
 * another thread: handed over, async code). brk_permit_bind_thread() opts
 * one permit in to "the calling thread owns it": it stores the thread's
 * identity in the lease's thread word (tid:22 | start_ticks:18 | nonce:24,
 * the nonce the owner token's, so a reader trusts it only for the lease it
 * was written for; a new owner's claim never needs to clear it). The
 * reclaimers (brk_reclaim(), i.e. breakerd, and the callers' reclaim on a
 * refusal) then also free a lease of a live process whose bound thread is
 * gone: tgkill(pid, tid, 0) says ESRCH, /proc/PID/task/TID/stat says
 * zombie or dead, or shows another start time (the tid was reused).
 *
 * Cost: the first bind of a thread reads gettid() and
 * /proc/thread-self/stat once (cached per thread, recomputed after
 * fork()); each bind is one or two stores; brk_acquire() and
 * brk_release() are unchanged (no syscall on their path). A reclaimer pays
 * one tgkill() and one /proc read per bound lease of a live process.
 */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ident.h"
#include "internal.h"

static __thread struct {
	int32_t pid;    /* the process the cache was made in (fork) */
	int32_t tid;
	uint32_t start; /* start_ticks, low 18 bits */
} me;

static int thread_identity(void)
{
	int32_t pid = brk__self()->pid;
	uint64_t ticks = 0;
	char state;
	int rc;

	if (me.pid == pid && me.tid > 0)
		return 0;
	me.tid = (int32_t)syscall(SYS_gettid);
	rc = brk__read_task_stat(pid, me.tid, &ticks, &state);
	if (rc)
		return rc;
	me.start = (uint32_t)(ticks & 0x3ffffu);
	me.pid = pid;
	return 0;
}

/* Set (@bind) or clear the thread word of the lease @l held by @token. */
static int thread_word(struct brk__lease *l, uint64_t token, int bind)
{
	uint64_t w;

	if (token == 0)
		return 0; /* no lease of this kind */
	if (!l || uatomic_read(&l->owner) != token)
		return -BRK_ESTALE; /* reclaimed, or released */
	if (bind) {
		uatomic_set(&l->thread, BRK__THR_MAKE(me.tid, me.start,
						      BRK__TOK_NONCE(token)));
		return 0;
	}
	w = uatomic_read(&l->thread);
	if (BRK__TAG_NONCE(w) == BRK__TOK_NONCE(token))
		(void)uatomic_cmpxchg(&l->thread, w, 0);
	return 0;
}

static int permit_threads(brk_permit *p, int bind)
{
	struct brk__record *r;
	int rc, rc2;

	if (!p || !p->b_)
		return -EINVAL;
	if (p->pid_ != brk__self()->pid)
		return -BRK_ESTALE; /* another process's permit (fork) */
	if (bind && (p->token_ || p->permit_)) {
		rc = thread_identity();
		if (rc)
			return rc;
	}
	r = brk__brec(p->b_);
	rc = p->token_
		     ? thread_word(brk__probe_at(p->b_->seg, r, p->probe_slot_),
				   p->token_, bind) : 0;
	rc2 = p->permit_
		      ? thread_word(brk__permit_at(p->b_->seg, r, p->permit_slot_),
				    p->permit_, bind) : 0;
	return rc ? rc : rc2;
}

int brk_permit_bind_thread(brk_permit *p)
{
	return permit_threads(p, 1);
}

int brk_permit_unbind_thread(brk_permit *p)
{
	return permit_threads(p, 0);
}

int brk__lease_thread_dead(const struct brk__lease *l, uint64_t owner)
{
	uint64_t w = uatomic_read(&l->thread), ticks = 0;
	int32_t pid = (int32_t)BRK__TOK_PID(owner), tid = BRK__THR_TID(w);
	char state = '?';

	if (tid <= 0 || BRK__TAG_NONCE(w) != BRK__TOK_NONCE(owner))
		return 0; /* not bound (or bound by a previous owner) */
	if (tgkill(pid, tid, 0) != 0 && errno == ESRCH)
		return 1;
	if (brk__read_task_stat(pid, tid, &ticks, &state) != 0)
		return 0; /* exited since (next scan) or hidden: keep it */
	if (state == 'Z' || state == 'X')
		return 1;
	return (uint32_t)(ticks & 0x3ffffu) != BRK__THR_START(w);
}
