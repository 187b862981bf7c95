/*
 * health.c - the health state of a name and its subtree (breaker.h,
 * "Health states"; docs/design/observability.md "Health states").
 *
 * brk_health() computes the state from what the records hold now:
 *   1. NAME's fallback flag (NAME's own breaker record)
 *   2. NAME's breaker and its ancestor breakers ('/' prefixes, root
 *      first, as parents.c refuses calls): unavailable, or cooling
 *   3. the subtree NAME, NAME/... and NAME:... (one walk of the name
 *      index): descendant breakers unavailable by their own state, paced
 *      buckets refused below their ceiling (NAME itself included)
 * and records it in NAME's breaker's stored health word (window extension
 * block, layout.h BRK__WIN_HEALTH): one CAS, the winner of a change of
 * state writes the BRK_EV_HEALTH event. Everything read from the segment
 * is untrusted: unknown states and modes read as "refuses", a stored word
 * that fails validation is replaced, never believed.
 */
#include <string.h>

#include "abi.h"
#include "ident.h"
#include "internal.h"
#include "limits.h"
#include "subtree.h"

/* What one breaker says by its own state. */
enum verdict { V_LIVE = 0, V_COOLING = 1, V_UNAVAILABLE = 2 };

struct eval {
	brk_segment *s;
	const char *name;
	size_t len;
	uint64_t now, rel;
	int state, code;
	char by[BRK__NAME_BYTES];
	uint32_t children, unavailable;
	int self_found;
	char partial_by[BRK__NAME_BYTES];
	int paced;                 /* a paced bucket below demand seen */
	char paced_by[BRK__NAME_BYTES];
};

/* Probes of half-open @w that would refuse the next caller: owned in this
 * generation and not older than probe_timeout_ms (an older one is
 * reclaimed by that caller). */
static uint32_t busy_probes(struct eval *e, struct brk__record *r, uint64_t w)
{
	uint64_t timeout = brk__cfg_ms(r, BRK__CFG_PROBE_TIMEOUT_MS), claim;
	uint32_t tag = BRK__ST_TAG(w), i, n, busy = 0;
	struct brk__slots set;

	brk__probe_slots(e->s, r, &set);
	n = brk__cfg_u32(r, BRK__CFG_HALF_OPEN_PROBES, 1, BRK__PROBE_SLOTS);
	if (n > brk__slots_total(&set))
		n = brk__slots_total(&set);
	for (i = 0; i < n; i++) {
		const struct brk__lease *l = brk__slot(&set, i);
		uint64_t o = uatomic_read(&l->owner);
		if (o == 0 || BRK__TOK_GEN(o) != tag)
			continue;
		if (brk__lease_claim_ms(l, o, &claim) == 0 &&
		    BRK__CLAIM_AGE(e->rel, claim) > timeout)
			continue;
		busy++;
	}
	return busy >= n ? busy : 0;
}

/* Would breaker @r refuse the next call (unavailable), make it wait
 * (cooling), or admit it? The same rules as acquire.c and parents.c,
 * without claiming anything. */
static enum verdict breaker_verdict(struct eval *e, struct brk__record *r)
{
	uint64_t mode = uatomic_read(&r->mode), w, cu;

	if (mode == BRK_MODE_FORCED_OPEN || mode > BRK_MODE_METRICS_ONLY)
		return V_UNAVAILABLE;
	if (mode == BRK_MODE_DISABLED || mode == BRK_MODE_METRICS_ONLY)
		return V_LIVE; /* refuses nothing */
	w = uatomic_read(&r->state);
	switch (BRK__ST_STATE(w)) {
	case BRK_CLOSED:
		break;
	case BRK_OPEN:
		/* past its deadline the next caller half-opens it and probes */
		if (e->rel < brk__open_until(r, w))
			return V_UNAVAILABLE;
		break;
	case BRK_HALF_OPEN:
		if (busy_probes(e, r, w))
			return V_UNAVAILABLE;
		break;
	default: /* unknown: as open */
		return V_UNAVAILABLE;
	}
	cu = uatomic_read(&r->cool_until_ns);
	return cu && cu > e->now ? V_COOLING : V_LIVE;
}

/* The breaker record named @name, or NULL. */
static struct brk__record *find_breaker(brk_segment *s, const char *name,
					uint64_t *head)
{
	uint32_t idx;

	if (brk__lookup(s, name, brk__hash(name), &idx) != 0 ||
	    brk__ref_kind(s, idx) != BRK_KIND_BREAKER)
		return NULL;
	if (head)
		*head = uatomic_read(&brk__rec(s, idx)->head);
	return brk__rec(s, idx);
}

/* NAME's ancestors (root first), then NAME: the worst verdict, and the
 * first record that gave it. */
static void check_lineage(struct eval *e, struct brk__record *self,
			  enum verdict *worst, char *by)
{
	char prefix[BRK__NAME_BYTES];
	size_t i;

	*worst = V_LIVE;
	for (i = 0; i <= e->len; i++) {
		struct brk__record *r;
		enum verdict v;

		if (i < e->len && e->name[i] != '/')
			continue;
		memcpy(prefix, e->name, i);
		prefix[i] = '\0';
		r = i < e->len ? find_breaker(e->s, prefix, NULL) : self;
		if (!r)
			continue;
		v = breaker_verdict(e, r);
		if (v > *worst) {
			*worst = v;
			strcpy(by, prefix);
		}
	}
}

/* "Paced below demand": a paced bucket that refused a take within the
 * last BRK__HEALTH_DEMAND_MS while its learned rate is below its ceiling
 * (callers want more than the upstream lets the pace give). A plain
 * bucket, or a pace at its ceiling (refusals there are the caller's own
 * limit, not the upstream's), never is. The pace words are read by
 * pace.c's brk__pace_fill() (bounds-checked; a corrupt pace reads as not
 * paced). */
#define BRK__HEALTH_DEMAND_MS 1000u

static int paced_below_demand(struct eval *e, uint32_t ref)
{
	struct brk_bucket_info bi;

	memset(&bi, 0, sizeof(bi));
	if (brk__pace_fill(e->s, brk__rec(e->s, ref), &bi) != 0 || !bi.paced)
		return 0;
	return bi.last_denied_age_ms < BRK__HEALTH_DEMAND_MS &&
	       bi.learned_per_s < bi.ceiling_per_s;
}

/* One record of the subtree (subtree.c's callback): @self is NAME itself,
 * whose breaker is judged with the ancestors (check_lineage()). Names are
 * read only for the record that decides. */
static void visit(void *ctx, uint32_t ref, int kind, int self)
{
	struct eval *e = ctx;
	struct brk__record *r = brk__rec(e->s, ref);

	if (self)
		e->self_found = 1;
	else
		e->children++;
	if (kind == BRK_KIND_BREAKER && !self) {
		if (breaker_verdict(e, r) == V_UNAVAILABLE && e->unavailable++ == 0 &&
		    brk__record_name(r, e->partial_by) != 0)
			strcpy(e->partial_by, "?");
	} else if (kind == BRK_KIND_BUCKET && !e->paced &&
		   paced_below_demand(e, ref)) {
		e->paced = 1;
		if (brk__record_name(r, e->paced_by) != 0)
			strcpy(e->paced_by, "?");
	}
}

/* Processes read the clock at slightly different moments: a since up to
 * this far ahead of our now is another evaluator's, not corruption (its
 * age then reads 0). */
#define BRK__HEALTH_CLOCK_SLACK_MS 1000u

static uint64_t age_ms(uint64_t rel, uint64_t since)
{
	return rel > since ? rel - since : 0;
}

/* A stored health word, validated: 1 and its fields, or 0 (never stored,
 * or not to be trusted). */
static int hw_decode(uint64_t w, uint64_t rel, int *state, int *code,
		     uint64_t *since)
{
	int st = BRK__HW_STATE(w), cd = BRK__HW_CODE(w);
	uint64_t s1 = BRK__HW_SINCE(w);

	if (w == 0 || s1 == 0 || s1 - 1 > rel + BRK__HEALTH_CLOCK_SLACK_MS ||
	    st > BRK_HEALTH_FALLBACK)
		return 0;
	if (strcmp(brk_health_code_name(cd), "unknown") == 0)
		return 0;
	*state = st;
	*code = cd;
	*since = s1 - 1;
	return 1;
}

/* The stored fallback flag of breaker @r (0: off, never set, no block, or
 * a word that fails validation). */
static int fallback_on(struct eval *e, const struct brk__record *r)
{
	const uint64_t *x = r ? brk__window_words(e->s, r) : NULL;
	uint64_t w = x ? uatomic_read(&x[BRK__WIN_FALLBACK]) : 0;

	if (!(w & BRK__FB_ON))
		return 0;
	if ((w & ~(BRK__FB_ON | BRK__HW_SINCE_MASK)) != 0 || BRK__HW_SINCE(w) == 0 ||
	    BRK__HW_SINCE(w) - 1 > e->rel + BRK__HEALTH_CLOCK_SLACK_MS)
		return 0;
	return 1;
}

/* Record e's state in breaker @r's stored word; *since_age from it. */
static void record_state(struct eval *e, struct brk__record *r, uint64_t head,
			 uint64_t *since_age)
{
	uint64_t *x, old, nw, osince;
	int tries, ost, ocode, valid, event;

	*since_age = UINT64_MAX;
	if (!e->s->readonly && brk__ensure_window(e->s, r) != 0)
		return; /* arena full: computed only */
	x = brk__window_words(e->s, r);
	if (!x)
		return;
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		old = uatomic_read(&x[BRK__WIN_HEALTH]);
		valid = hw_decode(old, e->rel, &ost, &ocode, &osince);
		if (valid && ost == e->state && ocode == e->code) {
			*since_age = age_ms(e->rel, osince);
			return;
		}
		if (e->s->readonly) {
			if (valid && ost == e->state)
				*since_age = age_ms(e->rel, osince);
			return;
		}
		if (valid && ost == e->state) { /* a new code, the same state */
			nw = BRK__HW_MAKE(e->state, e->code, osince + 1);
			event = 0;
		} else {
			nw = BRK__HW_MAKE(e->state, e->code, e->rel + 1);
			/* never stored: it was live; a corrupt word: no known
			 * "from", no event */
			if (old == 0) {
				ost = BRK_HEALTH_LIVE;
				event = e->state != BRK_HEALTH_LIVE;
			} else {
				event = valid;
			}
		}
		if (uatomic_cmpxchg(&x[BRK__WIN_HEALTH], old, nw) != old)
			continue; /* another evaluator: look again */
		*since_age = age_ms(e->rel, BRK__HW_SINCE(nw) - 1);
		/* a record retired and reused meanwhile is another name's */
		if (event && uatomic_read(&r->head) == head)
			brk__record_event(e->s, r, ost, e->state, BRK_EV_HEALTH,
					  brk__self()->pid, (uint64_t)e->code);
		return;
	}
}

static void decide(struct eval *e, int fallback, enum verdict lineage,
		   const char *lineage_by)
{
	e->state = BRK_HEALTH_LIVE;
	e->code = BRK_HEALTH_CODE_GO;
	strcpy(e->by, e->name);
	if (fallback) {
		e->state = BRK_HEALTH_FALLBACK;
		e->code = BRK_HEALTH_CODE_FALLBACK;
	} else if (lineage == V_UNAVAILABLE) {
		e->state = BRK_HEALTH_UNAVAILABLE;
		e->code = BRK_HEALTH_CODE_BREAKER_OPEN;
		strcpy(e->by, lineage_by);
	} else if (e->unavailable) {
		e->state = BRK_HEALTH_PARTIAL;
		e->code = BRK_HEALTH_CODE_PARTIAL;
		strcpy(e->by, e->partial_by);
	} else if (lineage == V_COOLING) {
		e->state = BRK_HEALTH_DELAYED;
		e->code = BRK_HEALTH_CODE_COOLING;
		strcpy(e->by, lineage_by);
	} else if (e->paced) {
		e->state = BRK_HEALTH_DELAYED;
		e->code = BRK_HEALTH_CODE_RATE_LIMITED;
		strcpy(e->by, e->paced_by);
	}
}

int brk_health_sz(brk_segment *seg, const char *name, struct brk_health *out,
		  size_t size)
{
	char lineage_by[BRK__NAME_BYTES] = "";
	struct brk__record *self;
	struct brk_health h;
	struct eval e;
	enum verdict lineage;
	uint64_t head = 0;
	int rc, cached;

	if (!seg || !out || size < 8 || size % 8 || size > BRK_STRUCT_SIZE_MAX)
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	rc = brk_name_validate(name);
	if (rc)
		goto done;
	memset(&e, 0, sizeof(e));
	e.s = seg;
	e.name = name;
	e.len = strlen(name);
	e.now = brk__now(seg);
	e.rel = brk__rel_ms(seg, e.now);
	rc = brk__subtree_each(seg, name, visit, &e, &cached);
	if (rc)
		goto done;
	self = find_breaker(seg, name, &head);
	if (!self && !e.self_found && e.children == 0) {
		rc = -ENOENT;
		goto done;
	}
	check_lineage(&e, self, &lineage, lineage_by);
	decide(&e, fallback_on(&e, self), lineage, lineage_by);
	h.since_age_ms = UINT64_MAX;
	if (self)
		record_state(&e, self, head, &h.since_age_ms);
	h.state = e.state;
	h.code = e.code;
	memcpy(h.by, e.by, sizeof(h.by));
	h.children = e.children;
	h.children_unavailable = e.unavailable;
done:
	h.size = (uint32_t)(size < sizeof(h) ? size : sizeof(h));
	brk__struct_out(out, size, &h, sizeof(h));
	return rc;
}

int (brk_health)(brk_segment *seg, const char *name, struct brk_health *out)
{
	return brk_health_sz(seg, name, out, BRK_HEALTH_SIZE_VER0);
}

int brk_set_fallback(brk_segment *seg, const char *name, int on)
{
	struct brk__record *r;
	struct brk_health h;
	uint64_t *x, old, nw;
	uint32_t idx;
	int rc, kind, tries;

	if (!seg)
		return -EINVAL;
	rc = brk_name_validate(name);
	if (rc)
		return rc;
	if (seg->readonly)
		return -EROFS;
	if (brk__lookup(seg, name, brk__hash(name), &idx) != 0)
		return -ENOENT;
	kind = brk__ref_kind(seg, idx);
	if (kind <= 0)
		return kind < 0 ? kind : -ENOENT;
	if (kind != BRK_KIND_BREAKER)
		return -EMEDIUMTYPE;
	r = brk__rec(seg, idx);
	rc = brk__ensure_window(seg, r);
	if (rc)
		return rc;
	x = brk__window_words(seg, r);
	if (!x)
		return -BRK_ECORRUPT;
	nw = BRK__FB_MAKE(on, brk__rel_ms(seg, brk__now(seg)) + 1);
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		old = uatomic_read(&x[BRK__WIN_FALLBACK]);
		if (!!(old & BRK__FB_ON) == !!on)
			return -EALREADY;
		if (uatomic_cmpxchg(&x[BRK__WIN_FALLBACK], old, nw) == old)
			break;
	}
	if (tries == BRK__CAS_TRIES)
		return -BRK_ECONTENDED;
	/* record the transition now, not at the next evaluation */
	rc = brk_health(seg, name, &h);
	return rc == -ENOENT ? 0 : rc; /* retired meanwhile: the flag went too */
}

const char *brk_health_state_name(int state)
{
	static const char *const n[] = {
		[BRK_HEALTH_LIVE] = "live",
		[BRK_HEALTH_DELAYED] = "delayed",
		[BRK_HEALTH_PARTIAL] = "partial",
		[BRK_HEALTH_UNAVAILABLE] = "unavailable",
		[BRK_HEALTH_FALLBACK] = "fallback",
	};
	if (state < 0 || (size_t)state >= sizeof(n) / sizeof(n[0]))
		return "unknown";
	return n[state];
}

const char *brk_health_code_name(int code)
{
	static const char *const n[] = {
		[BRK_HEALTH_CODE_GO] = "GO",
		[BRK_HEALTH_CODE_BREAKER_OPEN] = "BREAKER_OPEN",
		[BRK_HEALTH_CODE_COOLING] = "COOLING",
		[BRK_HEALTH_CODE_RATE_LIMITED] = "RATE_LIMITED",
		[BRK_HEALTH_CODE_PARTIAL] = "PARTIAL",
		[BRK_HEALTH_CODE_FALLBACK] = "FALLBACK",
	};
	if (code < 0 || (size_t)code >= sizeof(n) / sizeof(n[0]) || !n[code])
		return "unknown";
	return n[code];
}

_Static_assert(sizeof(struct brk_health) == BRK_HEALTH_SIZE_VER0, "brk_health size");
_Static_assert(BRK_HEALTH_FALLBACK < 16 && BRK_HEALTH_CODE_FALLBACK < 256,
	       "state and code fit the stored word");
