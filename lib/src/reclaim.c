/*
 * reclaim.c - the supervisor's scan (and a refused caller's): free leases
 * of dead owners and expired probes (the heartbeat is heartbeat.c).
 *
 * A lease is freed by CAS(owner, observed dead token -> 0): if the owner
 * released it (or someone else claimed it) in between, the CAS fails and
 * nothing is touched. Owner identity is pid + start time (ident.c), and
 * for a lease bound to a thread, tid + its start time (lease_thread.c).
 */
#include <string.h>

#include "ident.h"
#include "internal.h"

/* Dead: the owner process died, or the lease was bound to a thread
 * (brk_permit_bind_thread()) that has exited. */
static int lease_owner_dead(const struct brk__lease *l, uint64_t o)
{
	uint64_t st = uatomic_read(&l->start);
	int known = BRK__TAG_NONCE(st) == BRK__TOK_NONCE(o);

	return brk__owner_dead((int32_t)BRK__TOK_PID(o), BRK__TAG_VAL(st), known) ||
	       brk__lease_thread_dead(l, o);
}

static void scan_probes(brk_segment *s, struct brk__record *r,
			struct brk_reclaim_stats *st)
{
	uint64_t w = uatomic_read(&r->state), rel = brk__rel_ms(s, brk__now(s));
	uint64_t timeout = brk__cfg(r, BRK__CFG_PROBE_TIMEOUT_MS), claim;
	struct brk__slots set;
	uint32_t i, n;

	brk__probe_slots(s, r, &set); /* probe0 and the probe extension */
	n = brk__slots_total(&set);
	for (i = 0; i < n; i++) {
		struct brk__lease *l = brk__slot(&set, i);
		uint64_t o = uatomic_read(&l->owner);
		int reason = 0;
		if (o == 0 || BRK__TOK_GEN(o) != BRK__ST_TAG(w))
			continue;
		if (lease_owner_dead(l, o))
			reason = BRK_EV_RECLAIM_DEAD;
		else if (brk__lease_claim_ms(l, o, &claim) == 0 &&
			 BRK__CLAIM_AGE(rel, claim) >= timeout)
			reason = BRK_EV_RECLAIM_TIMEOUT;
		if (!reason || !brk__reclaim_probe(s, r, i, o, reason))
			continue;
		if (reason == BRK_EV_RECLAIM_DEAD)
			st->dead_owner++;
		else
			st->expired_probe++;
		if (BRK__ST_STATE(w) == BRK_HALF_OPEN &&
		    BRK__ST_GEN(uatomic_read(&r->state)) != BRK__ST_GEN(w))
			st->reopened++;
	}
}

static void scan_permits(brk_segment *s, struct brk__record *r,
			 struct brk_reclaim_stats *st)
{
	const uint32_t tag = 0; /* permit tokens carry tag 0 (layout.h) */
	char name[BRK__NAME_BYTES];
	struct brk__slots set;
	uint32_t i, n;

	brk__permit_slots(s, r, &set); /* the primary and overflow blocks */
	n = brk__slots_total(&set);
	for (i = 0; i < n; i++) {
		struct brk__lease *l = brk__slot(&set, i);
		uint64_t o = uatomic_read(&l->owner);
		uint64_t w;
		if (o == 0 || BRK__TOK_GEN(o) != tag || !lease_owner_dead(l, o))
			continue;
		if (uatomic_cmpxchg(&l->owner, o, 0) != o)
			continue;
		brk__count(r, BRK__CTR_RECLAIMED);
		st->dead_owner++;
		w = uatomic_read(&r->state);
		if (brk__record_name(r, name) == 0)
			brk__event(s, brk__rec_index(s, r), name, BRK__ST_STATE(w),
				   BRK__ST_STATE(w), BRK_EV_RECLAIM_DEAD,
				   (int32_t)BRK__TOK_PID(o), 0);
	}
}

/* Callers reclaim dead owners' leases themselves (workers never depend
 * on breakerd), but only on a refusal path and at most every 100 ms per
 * process: it costs a kill() and a /proc read per held lease. */
#define CALLER_SCAN_NS 100000000ull

int brk__caller_reclaim(brk_breaker *b)
{
	struct brk_reclaim_stats st;
	brk_segment *s = b->seg;
	uint64_t now = brk__monotonic_ns(NULL), last = uatomic_read(&s->last_scan_ns);

	memset(&st, 0, sizeof(st));
	if (s->readonly || (last && now - last < CALLER_SCAN_NS) ||
	    uatomic_cmpxchg(&s->last_scan_ns, last, now) != last)
		return 0;
	scan_probes(s, b->rec, &st);
	scan_permits(s, b->rec, &st);
	return (int)(st.dead_owner + st.expired_probe);
}

int brk_reclaim(brk_segment *s, struct brk_reclaim_stats *st)
{
	struct brk_reclaim_stats local;
	uint32_t i;

	memset(&local, 0, sizeof(local)); /* reserved_ too */
	if (!s)
		return -EINVAL;
	if (s->readonly)
		return -EROFS;
	/* every published record: walk the name index */
	for (i = 0; i < s->index_slots; i++) {
		struct brk__record *r;
		uint32_t ref;
		if (brk__index_record(s, uatomic_read(&s->index[i]), &ref) !=
		    BRK_KIND_BREAKER)
			continue;
		r = brk__rec(s, ref);
		scan_probes(s, r, &local);
		scan_permits(s, r, &local);
	}
	if (st)
		*st = local;
	return 0;
}
