/*
 * reclaim.c - the supervisor's scan (and a refused caller's): free leases
 * of dead owners and expired probes (the heartbeat is heartbeat.c).
 *
 * A lease is freed by CAS(owner, observed dead token -> 0): if the owner
 * released it (or someone else claimed it) in between, the CAS fails and
 * nothing is touched. Owner identity is pid + start time (ident.c), and
 * for a lease bound to a thread, tid + its start time (lease_thread.c).
 *
 * What brk_reclaim() visits (docs/design/lifecycle.md "Lease registry"): the
 * records marked in the lease map (leasemap.c), found through its level
 * 1 then level 0, plus a rotating slice of all records (the backstop
 * sweep, header sweep_cursor). A marked record found holding no lease is
 * unmarked: clear its bit, full barrier, scan its slots again, re-set the
 * bit if one is held now. With the claimer's mark before its claim and
 * its re-mark after (lease.c), no held lease stays unmarked except one
 * whose claimer died between its claim and its re-mark while a scanner
 * cleared the bit in that very window (the scanner's re-scan came before
 * the claim): the sweep finds that one within BRK__SWEEP_PERIOD_MS.
 *
 * Owner checks (kill(pid, 0) + /proc/PID/stat) are cached for one
 * brk_reclaim() call, per pid: 1,000 leases of 100 processes cost 100
 * checks a pass. Only "alive" is taken from the cache; a lease that looks
 * dead is checked again, uncached, before it is freed (its pid may have
 * been reused during the pass by a process that then took a lease).
 */
#include <string.h>

#include "ident.h"
#include "internal.h"

/*
 * The backstop sweep covers every record once per BRK__SWEEP_PERIOD_MS
 * at the supervisor's interval (header daemon_interval_ms, the default
 * 100 ms before a heartbeat): each brk_reclaim() visits ceil(records x
 * interval / period) records. 10 minutes: at 10^6 records and 100 ms that
 * is 167 records a pass (under 0.2 % of a core at ~1 us a record: the
 * idle figure stays far below the 1 % goal), and the case it covers (a
 * claimer killed within a few instructions of its claim exactly while a
 * scanner unmarked that record) is so rare that a worst case of 10
 * minutes for breakerd is acceptable: a refused caller of that breaker
 * still reclaims the lease itself at once (brk__caller_reclaim(), which
 * does not use the map), and a probe still expires after
 * probe_timeout_ms for the next caller.
 */
#define BRK__SWEEP_PERIOD_MS 600000u
#define BRK__SWEEP_DEFAULT_INTERVAL_MS 100u

/* ---- owner liveness, cached for one scan ------------------------------ */
#define LIVE_SLOTS 512u /* power of two; filled to 3/4 at most */

struct live_entry {
	int32_t pid;    /* 0: empty */
	int32_t verdict; /* BRK__PROC_* */
	uint64_t ticks;
};

struct scan {
	brk_segment *s;
	struct brk_reclaim_stats *st;
	struct live_entry *live; /* NULL: no cache (the caller-side reclaim) */
	uint32_t live_used;
	uint64_t visits, owner_checks; /* published by brk_reclaim() */
};

static int proc_probe(struct scan *sc, int32_t pid, uint64_t *ticks)
{
	sc->owner_checks++;
	return brk__proc_probe(pid, ticks);
}

/* The cached probe of @pid; 0 if the table is full (probe uncached). */
static const struct live_entry *live_get(struct scan *sc, int32_t pid)
{
	uint32_t h = ((uint32_t)pid * 2654435761u) & (LIVE_SLOTS - 1);
	struct live_entry *e;

	if (!sc->live || pid <= 0)
		return NULL;
	for (;; h = (h + 1) & (LIVE_SLOTS - 1)) {
		e = &sc->live[h];
		if (e->pid == pid)
			return e;
		if (e->pid == 0)
			break;
	}
	if (sc->live_used >= LIVE_SLOTS / 4 * 3)
		return NULL;
	sc->live_used++;
	e->pid = pid;
	e->ticks = 0;
	e->verdict = proc_probe(sc, pid, &e->ticks);
	return e;
}

static int owner_dead(struct scan *sc, int32_t pid, uint64_t start, int known)
{
	const struct live_entry *e = live_get(sc, pid);
	uint64_t t = 0;
	int v;

	if (e && !brk__proc_verdict(e->verdict, e->ticks, start, known))
		return 0; /* alive at this scan's check */
	/* dead by the cache, or not cached: check now */
	v = proc_probe(sc, pid, &t); /* sets t: before t is read */
	return brk__proc_verdict(v, t, start, known);
}

/* Dead: the owner process died, or the lease was bound to a thread
 * (brk_permit_bind_thread()) that has exited. */
static int lease_owner_dead(struct scan *sc, const struct brk__lease *l,
			    uint64_t o)
{
	uint64_t st = uatomic_read(&l->start);
	int known = BRK__TAG_NONCE(st) == BRK__TOK_NONCE(o);

	return owner_dead(sc, (int32_t)BRK__TOK_PID(o), BRK__TAG_VAL(st), known) ||
	       brk__lease_thread_dead(l, o);
}

static void scan_probes(struct scan *sc, struct brk__record *r)
{
	brk_segment *s = sc->s;
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
		if (lease_owner_dead(sc, l, o))
			reason = BRK_EV_RECLAIM_DEAD;
		else if (brk__lease_claim_ms(l, o, &claim) == 0 &&
			 BRK__CLAIM_AGE(rel, claim) >= timeout)
			reason = BRK_EV_RECLAIM_TIMEOUT;
		if (!reason || !brk__reclaim_probe(s, r, i, o, reason))
			continue;
		if (reason == BRK_EV_RECLAIM_DEAD)
			sc->st->dead_owner++;
		else
			sc->st->expired_probe++;
		if (BRK__ST_STATE(w) == BRK_HALF_OPEN &&
		    BRK__ST_GEN(uatomic_read(&r->state)) != BRK__ST_GEN(w))
			sc->st->reopened++;
	}
}

static void scan_permits(struct scan *sc, struct brk__record *r)
{
	brk_segment *s = sc->s;
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
		if (o == 0 || BRK__TOK_GEN(o) != tag || !lease_owner_dead(sc, l, o))
			continue;
		if (uatomic_cmpxchg(&l->owner, o, 0) != o)
			continue;
		brk__count(r, BRK__CTR_RECLAIMED);
		sc->st->dead_owner++;
		w = uatomic_read(&r->state);
		if (brk__record_name(r, name) == 0)
			brk__event(s, brk__rec_index(s, r), name, BRK__ST_STATE(w),
				   BRK__ST_STATE(w), BRK_EV_RECLAIM_DEAD,
				   (int32_t)BRK__TOK_PID(o), 0);
	}
}

/*
 * Does @r hold a lease a scan would look at? A probe slot counts unless
 * its tag is OLDER than the state's (a finished generation's token, which
 * no scan frees and the next claim overwrites); a newer tag counts (the
 * state word moved on after we read it). A permit counts when it carries
 * the permit tag. Same slots as scan_probes() and scan_permits().
 */
static int holds_lease(brk_segment *s, struct brk__record *r)
{
	const uint32_t tag = 0; /* permit tokens carry tag 0 (layout.h) */
	struct brk__slots set;
	uint32_t cur, i, n;

	if (BRK__HEAD_KIND(uatomic_read(&r->head)) != BRK_KIND_BREAKER)
		return 0;
	cur = BRK__ST_TAG(uatomic_read(&r->state));
	brk__probe_slots(s, r, &set);
	n = brk__slots_total(&set);
	for (i = 0; i < n; i++) {
		uint64_t o = uatomic_read(&brk__slot(&set, i)->owner);
		if (o != 0 && !brk__tag_older(BRK__TOK_GEN(o), cur))
			return 1;
	}
	brk__permit_slots(s, r, &set);
	n = brk__slots_total(&set);
	for (i = 0; i < n; i++) {
		uint64_t o = uatomic_read(&brk__slot(&set, i)->owner);
		if (o != 0 && BRK__TOK_GEN(o) == tag)
			return 1;
	}
	return 0;
}

/* Does the run at @r carry a record's identity: a NUL-terminated name
 * whose hash is its hash word? A record being created or retired always
 * does; a unit inside a block (a lease token's low byte can read as any
 * head kind: 1 in 256 as "retired") almost never (2^-64). */
static int has_identity(const struct brk__record *r)
{
	char name[BRK__NAME_BYTES];

	memcpy(name, (const char *)r->name, sizeof(name));
	if (memchr(name, '\0', sizeof(name)) == NULL)
		return 0;
	return brk__hash(name) == uatomic_read(&r->hash);
}

/* Visit record @ref: reclaim, then keep its mark right. @marked: found
 * through the lease map (else: by the sweep, unmarked). */
static void visit(struct scan *sc, uint32_t ref, int marked)
{
	brk_segment *s = sc->s;
	struct brk__record *r;
	int kind;

	/* only the first unit of a live breaker's run is a record; a stray
	 * bit (garbage, a unit that is no record) is cleared. A record a
	 * retirer holds keeps its bit: the retirer puts the live head back
	 * if it finds a lease, and clears the bit itself if it retires it. */
	kind = brk__ref_kind(s, ref);
	if (kind != BRK_KIND_BREAKER) {
		if (marked && (kind != 0 || BRK__HEAD_KIND(uatomic_read(
				&brk__rec(s, ref)->head)) != BRK__KIND_RETIRED ||
			       !has_identity(brk__rec(s, ref))))
			brk__lmap_clear(s, ref);
		return;
	}
	r = brk__rec(s, ref);
	sc->visits++;
	scan_probes(sc, r);
	scan_permits(sc, r);
	if (holds_lease(s, r)) {
		if (!marked) /* the backstop found one: mark it again */
			brk__lmap_mark(s, ref);
		return;
	}
	if (!marked)
		return;
	brk__lmap_clear(s, ref); /* then a full barrier */
	if (holds_lease(s, r))   /* a claimer got in: it may be past its re-mark */
		brk__lmap_mark(s, ref);
}

/* Every marked record: level 1, then each marked level-0 word. */
static void walk_marked(struct scan *sc)
{
	brk_segment *s = sc->s;
	uint32_t w1, w0;

	for (w1 = 0; w1 < s->lmap_l1_words; w1++) {
		uint64_t m1 = brk__lmap_l1(s, w1);
		while (m1) {
			w0 = w1 * 64u + (uint32_t)__builtin_ctzll(m1);
			m1 &= m1 - 1;
			uint64_t m0 = brk__lmap_l0(s, w0);
			while (m0) {
				visit(sc, w0 * 64u + (uint32_t)__builtin_ctzll(m0), 1);
				m0 &= m0 - 1;
			}
			brk__lmap_settle(s, w0); /* level 1 off if the word is 0 */
		}
	}
}

/* The backstop: the next slice of the name index, its breakers that are
 * not marked. */
static void sweep(struct scan *sc)
{
	brk_segment *s = sc->s;
	uint64_t n = s->index_slots, iv, k, c, start, j;
	int tries;

	if (n == 0 || brk_record_count(s) == 0)
		return;
	iv = uatomic_read(&s->hdr->daemon_interval_ms); /* untrusted */
	if (iv == 0)
		iv = BRK__SWEEP_DEFAULT_INTERVAL_MS;
	if (iv > BRK__SWEEP_PERIOD_MS)
		iv = BRK__SWEEP_PERIOD_MS;
	k = (n * iv + BRK__SWEEP_PERIOD_MS - 1) / BRK__SWEEP_PERIOD_MS;
	/* concurrent scanners take consecutive slices */
	c = uatomic_read(&s->hdr->sweep_cursor);
	for (tries = 0;; tries++) {
		uint64_t seen;
		start = c % n;
		seen = uatomic_cmpxchg(&s->hdr->sweep_cursor, c, (start + k) % n);
		if (seen == c || tries == 8)
			break;
		c = seen;
	}
	for (j = 0; j < k; j++) {
		uint64_t w = uatomic_read(&s->index[(start + j) % n]);
		uint32_t ref;
		if (brk__index_record(s, w, &ref) == BRK_KIND_BREAKER &&
		    !brk__lmap_test(s, ref))
			visit(sc, ref, 0);
	}
}

/* Callers reclaim dead owners' leases themselves (workers never depend
 * on breakerd), but only on a refusal path, only in the refused record
 * and at most every 100 ms per process: it costs a kill() and a /proc
 * read per held lease. It does not use the lease map. */
#define CALLER_SCAN_NS 100000000ull

int brk__caller_reclaim(brk_breaker *b)
{
	struct brk_reclaim_stats st;
	brk_segment *s = b->seg;
	uint64_t now = brk__monotonic_ns(NULL), last = uatomic_read(&s->last_scan_ns);
	struct scan sc = { s, &st, NULL, 0, 0, 0 };

	memset(&st, 0, sizeof(st));
	if (s->readonly || (last && now - last < CALLER_SCAN_NS) ||
	    uatomic_cmpxchg(&s->last_scan_ns, last, now) != last)
		return 0;
	scan_probes(&sc, brk__brec(b));
	scan_permits(&sc, brk__brec(b));
	return (int)(st.dead_owner + st.expired_probe);
}

int brk_reclaim(brk_segment *s, struct brk_reclaim_stats *st)
{
	struct live_entry live[LIVE_SLOTS];
	struct brk_reclaim_stats local;
	struct scan sc = { s, &local, live, 0, 0, 0 };

	memset(&local, 0, sizeof(local)); /* reserved_ too */
	if (!s)
		return -EINVAL;
	if (s->readonly)
		return -EROFS;
	memset(live, 0, sizeof(live));
	walk_marked(&sc);
	sweep(&sc);
	uatomic_set(&s->reclaim_visits, sc.visits);
	uatomic_set(&s->reclaim_owner_checks, sc.owner_checks);
	if (st)
		*st = local;
	return 0;
}
