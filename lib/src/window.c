/*
 * window.c - sliding time window of failure and slow-call counts, and
 * the trip quorum (failures from at least K distinct processes). See
 * window.h for the word layout. Each update is one bounded CAS loop on
 * one word; readers sum the buckets whose tag is current.
 */
#include "ident.h"
#include "window.h"

#define TAG(gen, e) ((((uint64_t)(gen) & 0xffffu) << 8) | ((uint64_t)(e) & 0xffu))
#define TAG_GEN(tag) (((tag) >> 8) & 0xffffu)
#define W_TAG(x) ((x) >> 40)
#define W_A(x) (((x) >> 20) & 0xfffffu)
#define W_B(x) ((x) & 0xfffffu)
#define W_MAKE(tag, a, b) (((uint64_t)(tag) << 40) | ((uint64_t)(a) << 20) | (uint64_t)(b))
#define W_MAX 0xfffffu

static uint64_t bucket_ms(const struct brk__record *r)
{
	uint64_t win = brk__cfg(r, BRK__CFG_WINDOW_MS);
	uint64_t b = win / BRK_WINDOW_BUCKETS;

	return b ? b : 1;
}

static uint64_t *word(uint64_t *x, uint32_t i, int which)
{
	return &x[BRK__WIN_WORD(2 * i + (uint32_t)which)];
}

/* Add (a, b) to the word, rotating it if its tag is old. */
static void bump(uint64_t *p, uint64_t tag, uint32_t a, uint32_t b)
{
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t x = uatomic_read(p), na, nb;
		if (W_TAG(x) == tag) {
			na = W_A(x) + a;
			nb = W_B(x) + b;
			if (na > W_MAX) /* saturated: stop counting this bucket */
				return;
		} else {
			na = a;
			nb = b;
		}
		if (uatomic_cmpxchg(p, x, W_MAKE(tag, na, nb)) == x)
			return;
	}
}

#define NO_TAG (1ULL << 63) /* no 24-bit tag: clear_word() clears */

/* Empty bucket word @p unless its tag is @keep_tag. */
static void clear_word(uint64_t *p, uint64_t keep_tag)
{
	uint64_t x = uatomic_read(p);

	if (x != 0 && W_TAG(x) != keep_tag)
		uatomic_cmpxchg(p, x, 0);
}

void brk__window_clear(brk_segment *s, struct brk__record *r, uint64_t gen)
{
	uint64_t *xw = brk__window_words(s, r);
	uint32_t i;

	for (i = 0; xw && i < 2 * BRK_WINDOW_BUCKETS; i++) {
		uint64_t *p = &xw[BRK__WIN_WORD(i)], x = uatomic_read(p);
		if (x != 0 && TAG_GEN(W_TAG(x)) != (gen & 0xffffu))
			uatomic_cmpxchg(p, x, 0);
	}
}

/*
 * Move the head to epoch @e, emptying the buckets of the epochs passed
 * over (those between the old head and @e; their buckets hold data one
 * window old). A head a whole window or more ahead of @e (window_ms was
 * raised, so epochs are longer now, or a caller read the clock a window
 * ago) is moved back to @e and every bucket emptied. Returns 1: count
 * the call in epoch @e.
 */
static int advance_head(uint64_t *r, uint64_t gen, uint64_t e)
{
	uint64_t *hp = &r[BRK__WIN_HEAD];
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint64_t h = uatomic_read(hp), x;
		if (e <= h && e + BRK_WINDOW_BUCKETS > h)
			return 1;
		if (uatomic_cmpxchg(hp, h, e) != h)
			continue;
		if (e <= h || e - h > BRK_WINDOW_BUCKETS) {
			/* Every bucket, @e's too: its data is from an epoch
			 * before the old head, which its 8-bit tag cannot
			 * tell from @e. (A call of epoch @e counted by
			 * another caller between our CAS and this clear is
			 * lost: an undercount of a call, never an alias.) */
			uint32_t i;
			for (i = 0; i < BRK_WINDOW_BUCKETS; i++) {
				clear_word(word(r, i, 0), NO_TAG);
				clear_word(word(r, i, 1), NO_TAG);
			}
			return 1;
		}
		for (x = h + 1; x < e; x++) {
			uint32_t slot = (uint32_t)(x % BRK_WINDOW_BUCKETS);
			clear_word(word(r, slot, 0), TAG(gen, x));
			clear_word(word(r, slot, 1), TAG(gen, x));
		}
		return 1;
	}
	return 0;
}

void brk__window_sum(brk_segment *s, const struct brk__record *r, uint64_t w,
		     uint64_t now, struct brk__window_sum *out)
{
	uint64_t bms = bucket_ms(r), e = brk__rel_ms(s, now) / bms;
	const uint64_t *x = brk__window_words(s, r);
	uint64_t gen = BRK__ST_GEN(w), head;
	uint32_t i;

	out->calls = out->failures = out->slow = 0;
	if (!x) /* no window block: the window rules are inactive */
		return;
	head = uatomic_read(&x[BRK__WIN_HEAD]);
	for (i = 0; i < BRK_WINDOW_BUCKETS && i <= e; i++) {
		uint64_t be = e - i, tag = TAG(gen, be);
		/* only the epochs of one window up to the head hold data */
		if (be > head || be + BRK_WINDOW_BUCKETS <= head)
			continue;
		uint32_t slot = (uint32_t)(be % BRK_WINDOW_BUCKETS);
		uint64_t a = uatomic_read(&x[BRK__WIN_A(slot)]);
		uint64_t b = uatomic_read(&x[BRK__WIN_B(slot)]);
		if (W_TAG(a) == tag) {
			out->calls += W_A(a);
			out->failures += W_B(a);
		}
		if (W_TAG(b) == tag)
			out->slow += W_A(b);
	}
}

int brk__window_record(brk_segment *s, struct brk__record *r, uint64_t w,
		       uint64_t now, int failed, int slow)
{
	uint64_t rate = brk__cfg(r, BRK__CFG_FAILURE_RATE);
	uint64_t srate = brk__cfg(r, BRK__CFG_SLOW_RATE);
	uint64_t slow_ms = brk__cfg(r, BRK__CFG_SLOW_CALL_MS);
	uint64_t e, tag, min_calls, *x;
	struct brk__window_sum sum;
	uint32_t slot;

	if (rate == 0 && slow_ms == 0)
		return 0;
	x = brk__window_words(s, r);
	if (!x) /* no window block: the window rules are inactive */
		return 0;
	e = brk__rel_ms(s, now) / bucket_ms(r);
	tag = TAG(BRK__ST_GEN(w), e);
	slot = (uint32_t)(e % BRK_WINDOW_BUCKETS);
	if (!advance_head(x, BRK__ST_GEN(w), e))
		return 0;
	bump(word(x, slot, 0), tag, 1, failed ? 1 : 0);
	if (slow)
		bump(word(x, slot, 1), tag, 1, 0);
	brk__window_sum(s, r, w, now, &sum);
	min_calls = brk__cfg(r, BRK__CFG_MIN_CALLS);
	if (sum.calls == 0 || sum.calls < min_calls)
		return 0;
	/* evaluated after every call, as resilience4j does: the call that
	 * brings the window to min_calls may find the rate already over */
	if (rate && rate <= 100 && sum.failures * 100 >= rate * sum.calls)
		return BRK_EV_FAILURE_RATE;
	if (slow_ms && srate && srate <= 100 &&
	    sum.slow * 100 >= srate * sum.calls)
		return BRK_EV_SLOW_RATE;
	return 0;
}

/* ---- quorum ----------------------------------------------------------- */
#define Q_PID(x) ((int32_t)((x) >> 42))
#define Q_MS(x) ((x) & ((1ULL << 42) - 1))
#define Q_MAKE(pid, ms) ((((uint64_t)(pid) & 0x3fffffu) << 42) | ((ms) & ((1ULL << 42) - 1)))

static int fresh(uint64_t x, uint64_t rel, uint64_t win)
{
	return x != 0 && ((rel - Q_MS(x)) & ((1ULL << 42) - 1)) <= win;
}

uint32_t brk__quorum_count(brk_segment *s, const struct brk__record *r,
			   uint64_t now)
{
	uint64_t rel = brk__rel_ms(s, now), win = brk__cfg(r, BRK__CFG_WINDOW_MS);
	const uint64_t *x = brk__window_words(s, r);
	uint32_t i, n = 0;

	for (i = 0; x && i < BRK_MAX_QUORUM; i++)
		if (fresh(uatomic_read(&x[BRK__QUORUM(i)]), rel, win))
			n++;
	return n;
}

uint32_t brk__quorum_note(brk_segment *s, struct brk__record *r, uint64_t now)
{
	int32_t me = brk__self()->pid;
	uint64_t rel = brk__rel_ms(s, now), win = brk__cfg(r, BRK__CFG_WINDOW_MS);
	uint64_t mine = Q_MAKE(me, rel), *xw = brk__window_words(s, r);
	uint32_t i;
	int done = !xw; /* no window block: no quorum to note */

	for (i = 0; i < BRK_MAX_QUORUM && !done; i++) {
		uint64_t *p = &xw[BRK__QUORUM(i)], x = uatomic_read(p);
		if (x != 0 && Q_PID(x) == (me & 0x3fffff)) {
			uatomic_cmpxchg(p, x, mine); /* lost: a fresher one is there */
			done = 1;
		}
	}
	for (i = 0; i < BRK_MAX_QUORUM && !done; i++) {
		uint64_t *p = &xw[BRK__QUORUM(i)], x = uatomic_read(p);
		if (!fresh(x, rel, win))
			done = uatomic_cmpxchg(p, x, mine) == x;
	}
	return brk__quorum_count(s, r, now);
}

void brk__quorum_clear(brk_segment *s, struct brk__record *r)
{
	uint64_t *x = brk__window_words(s, r);
	uint32_t i;

	for (i = 0; x && i < BRK_MAX_QUORUM; i++)
		uatomic_set(&x[BRK__QUORUM(i)], 0);
}
