/*
 * layout.h - the shared-memory segment layout (private).
 *
 * Rules (docs/design.md "Atomics"): every shared fact is one aligned 64-bit
 * word changed by one CAS (liburcu uatomic_cmpxchg, a full barrier); no
 * pointers, locks or bitfields; fixed-width types only; records padded to
 * the cache line. Every size and offset is static-asserted: a change here
 * is a change of BRK__LAYOUT_VERSION.
 *
 * Segment:  [header 4096][name index: index_slots x 8][records: capacity x
 *            4096][lease map: lmap_words x 8, page-rounded][event ring:
 *            event_slots x 128]
 */
#ifndef BRK_LAYOUT_H
#define BRK_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "breaker.h" /* BRK_BUDGET_TTL_MS */

#define BRK__MAGIC 0x3176644B52425242ULL /* "BRBRKdv1" little-endian */
/* 2: 56-bit generation in the state word, open-until deadlines in their
 * own words, 44-bit counter tags, judging bit in probe tokens, window
 * head word, budget deposit ring (issue 9: nothing aliases, no deadline
 * stops, deposits expire after a sliding TTL). */
/* 3: the lease map (a bitmap of the records that may hold a lease) and
 * the sweep cursor (issue 10, "the supervisor's cost follows the
 * leases"). */
#define BRK__LAYOUT_VERSION 3u
#define BRK__LINE 128u
#define BRK__HEADER_SIZE 4096u
#define BRK__RECORD_SIZE 4096u
#define BRK__EVENT_SIZE 128u
#define BRK__EVENT_SLOTS 4096u
#define BRK__NAME_BYTES 64u
_Static_assert(BRK__NAME_BYTES == BRK_NAME_MAX + 1, "name bytes: the name and its NUL");

/* ---- header ---------------------------------------------------------- */
#define BRK__FREE_SIZES 16u /* free lists: run sizes 1 .. 16 units */
/* A retired run is handed out again only after it has been free this
 * long on the segment clock (alloc.c; docs/design.md "Retirement"). */
#define BRK__RETIRE_QUARANTINE_MS BRK_RETIRE_QUARANTINE_MS
/* index_intent: what the index lock's holder is doing (idxlock.c repairs
 * it when the holder died) */
#define BRK__INTENT_CREATE 1u
#define BRK__INTENT_RETIRE 2u
#define BRK__INTENT_OP(w) ((uint32_t)((w) >> 32) & 0xffu)
#define BRK__INTENT_REF1(w) ((uint32_t)((w) & 0xffffffffu))
#define BRK__INTENT_MAKE(op, ref1) (((uint64_t)(op) << 32) | (uint32_t)(ref1))

struct brk__header {
	/* line 0: immutable after the magic is published */
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;
	uint64_t total_size;
	uint32_t capacity;
	uint32_t record_size;
	uint32_t index_slots;
	uint32_t event_slots;
	uint32_t event_size;
	uint32_t reserved0;
	uint64_t index_offset;
	uint64_t records_offset;
	uint64_t events_offset;
	uint64_t created_mono_ns;
	uint64_t created_wall_ns;
	uint64_t creator_pid;
	uint64_t pidns_ino;
	uint64_t timens_ino;
	uint64_t lmap_offset;    /* the lease map (brk__lmap_offset()) */
	uint64_t lmap_words;     /* its words, both levels (brk__lmap_words()) */
	/* line 1: record allocation (CAS-bumped, bounded by capacity) */
	uint64_t record_count;   /* bump: records ever handed out */
	uint64_t index_lock;     /* 0, or the holder's BRK__TOK_MAKE(pid, 0,
	                            nonce): creation and retirement (idxlock.c) */
	uint64_t index_lock_start; /* the holder's start ticks (0: not yet
	                            written; cleared before the lock word) */
	uint64_t index_seq;      /* +1 by every create and every retire */
	uint64_t live_records;   /* published and not retired */
	uint64_t index_intent;   /* op:8 | ref + 1:32 of the holder's
	                            mutation in progress (BRK__INTENT_*) */
	uint64_t index_intent_head; /* a retirer's head word before its CAS */
	uint64_t retired_total;  /* records ever retired */
	uint64_t pad1[8];
	/* line 2: supervisor */
	uint64_t daemon_pid;
	uint64_t daemon_start;
	uint64_t heartbeat_ns;
	uint64_t daemon_interval_ms;
	uint64_t sweep_cursor;   /* next ref of the reclaim backstop's sweep
	                            (reclaim.c); untrusted: taken modulo */
	uint64_t pad2[11];
	/* line 3: event ring head (sequence of the last event claimed) */
	uint64_t event_head;
	uint64_t pad3[15];
	/* lines 4-5: FIFO free lists of retired runs, one per run size
	 * (units - 1), under the index lock (alloc.c): ref + 1 of the oldest
	 * and of the newest; 0: empty */
	uint64_t free_head[BRK__FREE_SIZES];
	uint64_t free_tail[BRK__FREE_SIZES];
	uint8_t reserved[BRK__HEADER_SIZE - 6 * BRK__LINE];
};

_Static_assert(sizeof(struct brk__header) == BRK__HEADER_SIZE, "header");
_Static_assert(offsetof(struct brk__header, record_count) == 128, "hdr l1");
_Static_assert(offsetof(struct brk__header, daemon_pid) == 256, "hdr l2");
_Static_assert(offsetof(struct brk__header, event_head) == 384, "hdr l3");
_Static_assert(offsetof(struct brk__header, free_head) == 512, "hdr l4");
_Static_assert(offsetof(struct brk__header, timens_ino) == 104, "hdr l0");
_Static_assert(offsetof(struct brk__header, lmap_words) == 120, "hdr l0 end");

/* ---- name index ------------------------------------------------------ */
/*
 * Open addressing, linear probing. A slot is 0 (empty), (hash32 << 32 |
 * (record index + 1)) (live) or BRK__IDX_TOMB (a retired name). Lookups
 * (lock-free) skip tombs and stop at empty; inserts and retirements
 * change slots only under the index lock (index.c, retire.c).
 */
#define BRK__IDX_TOMB 0xffffffffffffffffULL
#define BRK__IDX_HASH(w) ((uint32_t)((w) >> 32))
#define BRK__IDX_REC(w) ((uint32_t)((w) & 0xffffffffu)) /* index + 1 */
#define BRK__IDX_MAKE(h, rec1) (((uint64_t)(uint32_t)(h) << 32) | (uint32_t)(rec1))

/* ---- records ---------------------------------------------------------- */
#define BRK__PROBE_SLOTS 8u
#define BRK__PERMIT_SLOTS 64u
#define BRK__EXT_WORDS 144u /* a record's ext[] (kind-specific words) */
/* The slots are the public bounds: one slot per probe or permit allowed. */
_Static_assert(BRK__PROBE_SLOTS == BRK_MAX_PROBES, "probe slots");
_Static_assert(BRK__PERMIT_SLOTS == BRK_MAX_CONCURRENT, "permit slots");

/* A lease slot: the owner word is the truth. */
struct brk__lease {
	uint64_t owner; /* 0: free; else token (see below) */
	uint64_t meta;  /* claim_ms:40 | nonce:24 (claim time, ms since epoch) */
	uint64_t start; /* owner start_ticks:40 | nonce:24 */
	uint64_t thread; /* 0, or bound to a thread (brk_permit_bind_thread()):
	                    tid:22 | thread start_ticks low 18 bits | nonce:24;
	                    trusted only when its nonce is the owner's */
};
_Static_assert(sizeof(struct brk__lease) == 32, "lease");

/*
 * token: pid:22 | judging:1 | tag:17 | nonce:24. tag: the low 17 bits of
 * the generation for probes (stale probe slots are freed by every
 * transition into half-open, so a tag never has to tell apart two
 * generations 2^17 apart); always 0 for bulkhead permits (a permit is
 * held until released or its owner dies, across any reset or
 * transition). judging: set by the owner of a probe while it counts the
 * verdict (CAS token -> token | judging): a reclaimer that frees a
 * judging probe counts no failure for it, so a probe's verdict is
 * counted exactly once.
 */
#define BRK__TOK_TAG_MASK 0x1ffffu
#define BRK__TOK_JUDGING (1ULL << 41)
#define BRK__TOK_PID(t) ((uint32_t)((t) >> 42))
#define BRK__TOK_GEN(t) ((uint32_t)(((t) >> 24) & BRK__TOK_TAG_MASK))
#define BRK__TOK_NONCE(t) ((uint32_t)((t) & 0xffffffu))
#define BRK__TOK_MAKE(pid, gen, nonce) \
	((((uint64_t)(pid) & 0x3fffffu) << 42) | \
	 (((uint64_t)(gen) & BRK__TOK_TAG_MASK) << 24) | ((uint64_t)(nonce) & 0xffffffu))
/* lease thread word: tid:22 | start_ticks:18 | nonce:24 (tid 0: none) */
#define BRK__THR_TID(w) ((int32_t)((w) >> 42))
#define BRK__THR_START(w) ((uint32_t)(((w) >> 24) & 0x3ffffu))
#define BRK__THR_MAKE(tid, start, nonce) \
	((((uint64_t)(tid) & 0x3fffffu) << 42) | \
	 (((uint64_t)(start) & 0x3ffffu) << 24) | ((uint64_t)(nonce) & 0xffffffu))
_Static_assert(offsetof(struct brk__lease, thread) == 24, "lease thread word");
/* meta/start: value:40 | nonce:24. meta's value is the claim time in ms
 * since the segment epoch modulo 2^40 (34.8 years): ages are computed
 * modulo 2^40 (BRK__CLAIM_AGE), so they stay right at any segment age. */
#define BRK__TAG_VAL(w) ((w) >> 24)
#define BRK__TAG_NONCE(w) ((uint32_t)((w) & 0xffffffu))
#define BRK__CLAIM_MASK 0xffffffffffULL
/* age in ms of a claim made at @claim (meta value), at @rel (ms since the
 * segment epoch), modulo 2^40 */
#define BRK__CLAIM_AGE(rel, claim) (((rel) - (claim)) & BRK__CLAIM_MASK)
#define BRK__TAG_MAKE(val, nonce) \
	((((uint64_t)(val) & 0xffffffffffULL) << 24) | ((uint64_t)(nonce) & 0xffffffu))

/*
 * Breaker state word: state:2 | level:6 | gen:56. One CAS per transition,
 * which bumps gen. 2^56 transitions at one per 10 ns take 22 years of
 * nothing else, so no state word ever repeats and no CAS from an old
 * word can succeed (no ABA).
 *
 * The open-until deadline does not fit beside a wide generation, so it
 * lives in two words, open_until[2]: slot (gen & 1) holds the deadline of
 * the OPEN state of generation gen as valid:1 | tag:18 | until_ms:45
 * (tag = gen & 0x3ffff; until_ms = ms since the segment epoch: 2^45 ms is
 * 1115 years, more than the 584 years of a 64-bit ns clock plus the
 * longest duration, so it never saturates). A transition to OPEN(g + 1)
 * first CASes its deadline into slot (g + 1) & 1 (a slot tagged g + 1
 * already holds a racing opener's deadline: the later one is kept), then
 * CASes the state word; readers of OPEN(g) read slot g & 1 and accept it only with
 * the tag of g. Each transition's winner then clears the slot of the
 * next parity unless it is tagged for the next generation, so a slot
 * never keeps a tag older than two generations (see state.c).
 */
#define BRK__GEN_MASK ((1ULL << 56) - 1)
#define BRK__LEVEL_MAX 63u
#define BRK__ST_STATE(w) ((int)((w) >> 62))
#define BRK__ST_LEVEL(w) ((uint32_t)(((w) >> 56) & 0x3fu))
#define BRK__ST_GEN(w) ((w) & BRK__GEN_MASK)
/* the probe token tag of the state's generation */
#define BRK__ST_TAG(w) ((uint32_t)((w) & BRK__TOK_TAG_MASK))
#define BRK__ST_MAKE(st, lvl, gen) \
	((((uint64_t)(st) & 3u) << 62) | (((uint64_t)(lvl) & 0x3fu) << 56) | \
	 ((uint64_t)(gen) & BRK__GEN_MASK))

#define BRK__UNTIL_BITS 45u
#define BRK__UNTIL_MASK ((1ULL << BRK__UNTIL_BITS) - 1)
#define BRK__UT_VALID (1ULL << 63)
#define BRK__UT_TAG(gen) ((uint64_t)(gen) & 0x3ffffu)
#define BRK__UT_MAKE(gen, until) \
	(BRK__UT_VALID | (BRK__UT_TAG(gen) << BRK__UNTIL_BITS) | \
	 ((uint64_t)(until) & BRK__UNTIL_MASK))
#define BRK__UT_FOR(u, gen) \
	(((u) & BRK__UT_VALID) && (((u) >> BRK__UNTIL_BITS) & 0x3ffffu) == BRK__UT_TAG(gen))
#define BRK__UT_UNTIL(u) ((u) & BRK__UNTIL_MASK)

/*
 * Generation-tagged counter (consecutive failures, half-open successes):
 * tag:44 | count:20, tag = gen & (2^44 - 1); the count saturates at
 * 2^20 - 1 (above every threshold, 1,000,000). Every transition's winner
 * resets both counters to (new tag, 0) (clear on transition), so a count
 * never outlives its generation; the tag stops a release that read the
 * old state from adding to the new generation's count.
 */
#define BRK__GC_TAG_MASK ((1ULL << 44) - 1)
#define BRK__GC_COUNT_MAX ((1ULL << 20) - 1)
#define BRK__GC_TAG(w) ((w) >> 20)
#define BRK__GC_COUNT(w) ((w) & BRK__GC_COUNT_MAX)
#define BRK__GC_FOR(w, gen) (BRK__GC_TAG(w) == ((uint64_t)(gen) & BRK__GC_TAG_MASK))
#define BRK__GC_MAKE(gen, n) \
	((((uint64_t)(gen) & BRK__GC_TAG_MASK) << 20) | \
	 ((uint64_t)(n) > BRK__GC_COUNT_MAX ? BRK__GC_COUNT_MAX : (uint64_t)(n)))

enum brk__cfg {
	BRK__CFG_FAILURE_THRESHOLD,
	BRK__CFG_FAILURE_RATE,
	BRK__CFG_WINDOW_MS,
	BRK__CFG_MIN_CALLS,
	BRK__CFG_SLOW_CALL_MS,
	BRK__CFG_SLOW_RATE,
	BRK__CFG_OPEN_MS,
	BRK__CFG_MAX_OPEN_MS,
	BRK__CFG_HALF_OPEN_PROBES,
	BRK__CFG_SUCCESS_THRESHOLD,
	BRK__CFG_PROBE_TIMEOUT_MS,
	BRK__CFG_MAX_WAIT_MS,
	BRK__CFG_MAX_CONCURRENT,
	BRK__CFG_MIN_DISTINCT,
	BRK__CFG_COUNT
};

enum brk__ctr {
	BRK__CTR_ALLOWED,
	BRK__CTR_REJ_OPEN,
	BRK__CTR_REJ_COOLING,
	BRK__CTR_REJ_FULL,
	BRK__CTR_SUCCESS,
	BRK__CTR_FAILURE,
	BRK__CTR_HEALTHY,
	BRK__CTR_IGNORED,
	BRK__CTR_CANCELLED,
	BRK__CTR_PROBES,
	BRK__CTR_RECLAIMED,
	BRK__CTR_TRANSITIONS,
	BRK__CTR_STALE,
	BRK__CTR_FAIL_REASON0, /* + enum brk_reason */
	BRK__CTR_COUNT = BRK__CTR_FAIL_REASON0 + 7
};

/*
 * Record head word (word 0 of every record): kind:8 | units:8 | gen:48.
 * kind 0: not (yet) published. The generation grows by one each time the
 * run is handed out again after a retirement, so a handle that kept the
 * head word it resolved notices any reuse with one load.
 */
#define BRK__HEAD_KIND(w)  ((uint32_t)((w) & 0xffu))          /* enum brk_kind; 0: unpublished */
#define BRK__HEAD_UNITS(w) ((uint32_t)(((w) >> 8) & 0xffu))   /* units of the core run */
#define BRK__HEAD_GEN(w)   ((w) >> 16)                        /* 48 bits, +1 per reuse */
#define BRK__HEAD_MAKE(kind, units, gen) \
    (((uint64_t)(gen) << 16) | (((uint64_t)(units) & 0xffu) << 8) | ((uint64_t)(kind) & 0xffu))
#define BRK__KIND_RETIRED 0xfeu  /* head kind while/after retirement */
#define BRK__KIND_ORPHAN  0xfdu  /* lost a creation race (today 0xdead) */

struct brk__record {
	/* line 0: identity, written before publication, immutable after
	 * (until retirement: retire.c) */
	uint64_t head; /* BRK__HEAD_*: kind | units | generation */
	uint64_t hash; /* 64-bit FNV-1a of the name; a free run's link */
	uint64_t last_change_ms; /* ms since the segment epoch of the last
	                            state transition, written by its winner
	                            (state.c); 0: never (a transition in the
	                            epoch's first ms is stored as 1). */
	uint64_t idle_snap;     /* retirement sweep: activity sum last seen */
	uint64_t idle_since_ms; /* ... unchanged since (ms since epoch + 1;
	                           0: not seen yet) */
	uint64_t free_ms;       /* a free run: when it was freed (ms since
	                           the segment epoch) */
	uint64_t reserved0[2];
	char name[BRK__NAME_BYTES]; /* NUL-terminated, validated on read */
	/* line 1: hot state */
	uint64_t state;          /* see BRK__ST_* */
	uint64_t cool_until_ns;  /* shared cool-until (monotonic ns), 0: none */
	uint64_t fails;          /* consecutive failures, gen-tagged */
	uint64_t ho_successes;   /* successful probes, gen-tagged */
	uint64_t epoch;          /* permit token tag: always 0 since layout 2
	                            (a reset no longer frees permits) */
	uint64_t mode;           /* enum brk_mode (forced states) */
	uint64_t changes;        /* unused since layout 2 (the 56-bit
	                            generation never wraps); 0 */
	uint64_t open_until[2];  /* deadline of OPEN(gen), slot gen & 1
	                            (BRK__UT_*) */
	uint64_t permit_hw;      /* permit slots ever used: the largest
	                            max_concurrent any claimer had (raised
	                            by CAS before its claim) */
	uint64_t pad1[6];
	/* line 2: settings, one word each (enum brk__cfg) */
	uint64_t cfg[16];
	/* lines 3-4: counters (enum brk__ctr) */
	uint64_t ctr[32];
	/* lines 5-6: half-open probe leases */
	struct brk__lease probes[BRK__PROBE_SLOTS];
	/* lines 7-22: bulkhead permit leases */
	struct brk__lease permits[BRK__PERMIT_SLOTS];
	/* lines 23-31: reserved for record kinds and trip rules to come */
	uint64_t ext[BRK__EXT_WORDS];
};

_Static_assert(sizeof(struct brk__record) == BRK__RECORD_SIZE, "record");
_Static_assert(offsetof(struct brk__record, name) == 64, "rec name");
_Static_assert(offsetof(struct brk__record, last_change_ms) == 16, "rec last change");
_Static_assert(offsetof(struct brk__record, idle_snap) == 24 &&
	       offsetof(struct brk__record, free_ms) == 40, "rec retire words");
_Static_assert(offsetof(struct brk__record, state) == 128, "rec l1");
_Static_assert(offsetof(struct brk__record, cfg) == 256, "rec l2");
_Static_assert(offsetof(struct brk__record, ctr) == 384, "rec l3");
_Static_assert(offsetof(struct brk__record, probes) == 640, "rec l5");
_Static_assert(offsetof(struct brk__record, permits) == 896, "rec l7");
_Static_assert(offsetof(struct brk__record, ext) == 2944, "rec ext");
_Static_assert(offsetof(struct brk__record, mode) == 168, "rec mode");
_Static_assert(offsetof(struct brk__record, changes) == 176, "rec changes");
_Static_assert(offsetof(struct brk__record, open_until) == 184, "rec until");
_Static_assert(offsetof(struct brk__record, permit_hw) == 200, "rec hw");
/* cfg[BRK__CFG_SEQ]: the config sequence word, CAS-bumped by every
 * committed (or withdrawn) brk_breaker_update() (config.c). */
#define BRK__CFG_SEQ 15u
_Static_assert(BRK__CFG_COUNT <= BRK__CFG_SEQ && BRK__CFG_SEQ < 16, "cfg words");
_Static_assert(BRK__CTR_COUNT <= 32, "ctr words");

/* ---- event ring ------------------------------------------------------ */
/*
 * Slot i holds the event with sequence s where (s - 1) % event_slots == i.
 * Writer: seq word = s | BUSY, fields, release, seq word = s.
 * Reader: seq, acquire, fields, acquire, seq again; equal and == s: valid.
 */
#define BRK__EV_BUSY (1ULL << 63)
struct brk__event {
	uint64_t seq;
	uint64_t mono_ns;
	uint64_t wall_ms;
	uint64_t meta;   /* from:8 | to:8 | reason:8 | reserved:8 | rec:32 */
	uint64_t pid;
	uint64_t value;
	uint64_t pad[2];
	uint64_t name[BRK__NAME_BYTES / 8];
};
_Static_assert(sizeof(struct brk__event) == BRK__EVENT_SIZE, "event");

/* Geometry for a capacity, computed the same way by creator and checker. */
static inline uint32_t brk__index_slots(uint32_t capacity)
{
	uint32_t n = 16;
	while (n < capacity * 2u)
		n <<= 1;
	return n;
}

static inline uint64_t brk__index_offset(void) { return BRK__HEADER_SIZE; }

static inline uint64_t brk__records_offset(uint32_t capacity)
{
	uint64_t o = BRK__HEADER_SIZE + (uint64_t)brk__index_slots(capacity) * 8u;
	return (o + BRK__RECORD_SIZE - 1) / BRK__RECORD_SIZE * BRK__RECORD_SIZE;
}

/*
 * The lease map (leasemap.c): level 0 has one bit per record ref ("this
 * record may hold a lease"), level 1 one bit per level-0 word ("that
 * word may be non-zero"). Level 0's words come first, level 1's follow.
 * brk__lmap_nbits() is the one place that says what the bits count: the
 * record capacity on this layout (the arena's units once records are
 * runs of units).
 */
static inline uint32_t brk__lmap_nbits(uint32_t capacity) { return capacity; }

static inline uint32_t brk__lmap_l0_words(uint32_t capacity)
{
	return (uint32_t)(((uint64_t)brk__lmap_nbits(capacity) + 63u) / 64u);
}

static inline uint32_t brk__lmap_l1_words(uint32_t capacity)
{
	return (brk__lmap_l0_words(capacity) + 63u) / 64u;
}

static inline uint64_t brk__lmap_words(uint32_t capacity)
{
	return (uint64_t)brk__lmap_l0_words(capacity) + brk__lmap_l1_words(capacity);
}

static inline uint64_t brk__lmap_offset(uint32_t capacity)
{
	return brk__records_offset(capacity) + (uint64_t)capacity * BRK__RECORD_SIZE;
}

/* After the lease map, rounded up to a page (4096 = BRK__HEADER_SIZE). */
static inline uint64_t brk__events_offset(uint32_t capacity)
{
	uint64_t o = brk__lmap_offset(capacity) + brk__lmap_words(capacity) * 8u;

	return (o + BRK__HEADER_SIZE - 1) / BRK__HEADER_SIZE * BRK__HEADER_SIZE;
}

static inline uint64_t brk__total_size(uint32_t capacity)
{
	return brk__events_offset(capacity) + (uint64_t)BRK__EVENT_SLOTS * BRK__EVENT_SIZE;
}

/* ---- breakers: window and quorum words at the END of ext[] ------------ */
/* (encodings: window.h; other record kinds use ext[] from the start) */
#define BRK__WIN_HEAD 115u    /* ext[115]: newest bucket epoch */
#define BRK__WIN_BASE 116u    /* ext[116 .. 135]: two words per bucket */
#define BRK__WIN_WORD(k) (BRK__WIN_BASE + (k)) /* k < 2 * BRK_WINDOW_BUCKETS */
#define BRK__WIN_A(i) BRK__WIN_WORD(2u * (i))      /* bucket i: calls, failures */
#define BRK__WIN_B(i) BRK__WIN_WORD(2u * (i) + 1u) /* bucket i: slow calls */
#define BRK__QUORUM_BASE 136u /* ext[136 .. 143]: one slot per process */
#define BRK__QUORUM(i) (BRK__QUORUM_BASE + (i))    /* i < BRK_MAX_QUORUM */

_Static_assert(BRK__WIN_HEAD + 1u == BRK__WIN_BASE, "window head");
_Static_assert(BRK__WIN_BASE + 2 * BRK_WINDOW_BUCKETS <= BRK__QUORUM_BASE,
	       "window words");
_Static_assert(BRK__QUORUM_BASE + BRK_MAX_QUORUM <= BRK__EXT_WORDS, "quorum words");

/* ---- GCRA buckets and retry budgets: the record's ext words ----------- */
/*
 * Records of kind BRK_KIND_BUCKET and BRK_KIND_BUDGET use only line 0
 * (identity) and ext[]; lines 1-22 stay zero. ext[] starts on record line
 * 23; each group below has its own 128-byte line, so the word every take
 * CASes (the TAT) shares its line with nothing else.
 *
 * Bucket:
 *   ext line 0  TAT, ns of the segment clock (0: full since ever)
 *   ext line 1  settings: interval_ns:44 | burst:20; 0 = not configured
 *               yet (the creator stores it right after publication)
 *   ext line 2  counters: taken, denied, tokens_taken
 * Budget:
 *   ext line 0  floor TAT (GCRA as above, unused when floor is 0)
 *   ext line 1  spend cursor: slice:35 | used_milli:29. Deposits of the
 *               slices before `slice` are spent or expired; `used_milli`
 *               of slice `slice`'s are spent. Only withdrawals CAS it.
 *   ext line 2  settings: configured:1 (bit 63) | ratio_milli:17 (bits
 *               30..46) | floor_milli_per_s:30 (bits 0..29); 0 = not
 *               configured yet
 *   ext line 3  counters: deposits, retries, retries_floor, deferred
 *   ext line 4  deposit ring: BRK__BG_SLICES words; slice k (slices of
 *               BRK__BG_SLICE_MS since the segment epoch) lives in word
 *               k % BRK__BG_SLICES as slice:35 (k itself) |
 *               milli-tokens:29. Only deposits CAS these.
 *
 * The slice field is wide enough for the slice of any 64-bit ns clock
 * read (2^64 ns / 1 s < 2^35, static-asserted below), so slices are
 * compared whole, never modulo: no ring word or cursor of an older slice
 * is ever taken for a newer one, however long a budget sat idle or far a
 * clock jumped (issue 9: a 24-bit tag came round every 2^24 s, 194 days).
 * The price is the milli-token field: a slice holds at most
 * BRK__BGW_MILLI_MAX = 2^29 - 1 milli-tokens (536,870.911 tokens; at the
 * largest ratio, 100, the deposits of 5,368 first attempts; at the default
 * 0.2, of 2,684,354). Deposits past it saturate (are dropped: fewer
 * retries, never more); the cursor's used_milli never exceeds a slice's.
 */
#define BRK__EXT_LINE (BRK__LINE / 8u) /* words per line: 16 */

enum brk__bucket_ext {
	BRK__BK_TAT = 0 * BRK__EXT_LINE,
	BRK__BK_CFG = 1 * BRK__EXT_LINE,
	BRK__BK_TAKEN = 2 * BRK__EXT_LINE,
	BRK__BK_DENIED,
	BRK__BK_TOKENS,
	BRK__BK_END
};

enum brk__budget_ext {
	BRK__BG_TAT = 0 * BRK__EXT_LINE,
	BRK__BG_CURSOR = 1 * BRK__EXT_LINE,
	BRK__BG_CFG = 2 * BRK__EXT_LINE,
	BRK__BG_DEPOSITS = 3 * BRK__EXT_LINE,
	BRK__BG_RETRIES,
	BRK__BG_RETRIES_FLOOR,
	BRK__BG_DEFERRED,
	BRK__BG_RING = 4 * BRK__EXT_LINE,
	BRK__BG_END = BRK__BG_RING + BRK_BUDGET_SLICES
};

/* The deposit ring: a deposit counts while its slice is one of the last
 * BRK__BG_SLICES, so it expires between TTL - TTL/10 and TTL after it was
 * made (Finagle's WindowedAdder: 10 slices of ttl / 10). */
#define BRK__BG_SLICES BRK_BUDGET_SLICES
#define BRK__BG_SLICE_MS (BRK_BUDGET_TTL_MS / BRK__BG_SLICES)
/* The ring word of slice @k (unwrapped). */
#define BRK__BG_SLOT(k) (BRK__BG_RING + (k) % BRK__BG_SLICES)

/* bucket settings word */
#define BRK__BKC_BURST_BITS 20u
#define BRK__BKC_T_BITS 44u
#define BRK__BKC_T(w) ((w) >> BRK__BKC_BURST_BITS)
#define BRK__BKC_BURST(w) ((uint32_t)((w) & ((1u << BRK__BKC_BURST_BITS) - 1u)))
#define BRK__BKC_MAKE(t, burst) \
	(((uint64_t)(t) << BRK__BKC_BURST_BITS) | \
	 ((uint64_t)(burst) & ((1u << BRK__BKC_BURST_BITS) - 1u)))
#define BRK__BKC_T_MAX ((1ULL << BRK__BKC_T_BITS) - 1u)

/* budget ring slots and spend cursor: slice:35 | milli:29 (whole slice
 * numbers, never wrapped; see above) */
#define BRK__BGW_MILLI_BITS 29u
#define BRK__BGW_SLICE_BITS (64u - BRK__BGW_MILLI_BITS)
#define BRK__BGW_MILLI_MAX ((1ULL << BRK__BGW_MILLI_BITS) - 1u)
#define BRK__BGW_SLICE_MAX ((1ULL << BRK__BGW_SLICE_BITS) - 1u)
#define BRK__BGW_MILLI(w) ((w) & BRK__BGW_MILLI_MAX)
#define BRK__BGW_SLICE(w) ((uint64_t)(w) >> BRK__BGW_MILLI_BITS)
#define BRK__BGW_MAKE(slice, milli) \
	((((uint64_t)(slice) & BRK__BGW_SLICE_MAX) << BRK__BGW_MILLI_BITS) | \
	 ((uint64_t)(milli) & BRK__BGW_MILLI_MAX))

/* budget settings word */
#define BRK__BGC_SET (1ULL << 63)
#define BRK__BGC_FLOOR_MAX ((1u << 30) - 1u)
#define BRK__BGC_RATIO_MAX ((1u << 17) - 1u)
#define BRK__BGC_FLOOR(w) ((uint32_t)((w) & BRK__BGC_FLOOR_MAX))
#define BRK__BGC_RATIO(w) ((uint32_t)(((w) >> 30) & BRK__BGC_RATIO_MAX))
#define BRK__BGC_MAKE(floor_milli, ratio_milli) \
	(BRK__BGC_SET | (((uint64_t)(ratio_milli) & BRK__BGC_RATIO_MAX) << 30) | \
	 ((uint64_t)(floor_milli) & BRK__BGC_FLOOR_MAX))

_Static_assert(BRK__LINE % 8u == 0 && BRK__EXT_LINE == 16, "ext line");
_Static_assert(offsetof(struct brk__record, ext) % BRK__LINE == 0, "ext line 0");
_Static_assert(sizeof(((struct brk__record *)0)->ext) == 144 * 8, "ext words");
_Static_assert(BRK__BK_END <= BRK__EXT_WORDS && BRK__BG_END <= BRK__EXT_WORDS,
	       "ext fits");
_Static_assert(BRK__BK_END <= BRK__WIN_HEAD && BRK__BG_END <= BRK__WIN_HEAD,
	       "buckets and budgets stay clear of the breaker window words");
_Static_assert(BRK__BK_TAT % BRK__EXT_LINE == 0 && BRK__BK_CFG % BRK__EXT_LINE == 0 &&
	       BRK__BK_TAKEN % BRK__EXT_LINE == 0, "bucket lines");
_Static_assert(BRK__BG_TAT % BRK__EXT_LINE == 0 && BRK__BG_CURSOR % BRK__EXT_LINE == 0 &&
	       BRK__BG_CFG % BRK__EXT_LINE == 0 &&
	       BRK__BG_DEPOSITS % BRK__EXT_LINE == 0 &&
	       BRK__BG_RING % BRK__EXT_LINE == 0, "budget lines");
_Static_assert(BRK__BG_RETRIES + 3 < BRK__BG_RING, "counters before the ring");
_Static_assert(BRK__BG_END == BRK__BG_RING + BRK__BG_SLICES &&
	       BRK__BG_SLICES <= BRK__EXT_LINE, "ring on one line");
_Static_assert(BRK__BG_SLICE_MS * BRK__BG_SLICES == BRK_BUDGET_TTL_MS &&
	       BRK__BG_SLICE_MS >= 1, "TTL in whole slices");
/* every slice of a 64-bit ns clock fits the slice field: nothing wraps */
_Static_assert(UINT64_MAX / ((uint64_t)BRK__BG_SLICE_MS * 1000000u) <= BRK__BGW_SLICE_MAX,
	       "slice field holds every slice");
/* a slice holds at least 5000 deposits at the largest ratio (100) */
_Static_assert(BRK__BGW_MILLI_MAX >= 5000u * ((uint64_t)BRK_BUDGET_MAX_RATIO * 1000u),
	       "milli field");
_Static_assert(BRK__BK_CFG - BRK__BK_TAT >= BRK__EXT_LINE &&
	       BRK__BG_CURSOR - BRK__BG_TAT >= BRK__EXT_LINE, "TAT alone on its line");
_Static_assert(offsetof(struct brk__record, ext) + BRK__BK_TAT * 8u == 23u * BRK__LINE,
	       "bucket TAT at record line 23");
_Static_assert(BRK__BKC_T_BITS + BRK__BKC_BURST_BITS == 64, "bucket cfg word");
_Static_assert((1u << BRK__BKC_BURST_BITS) > 1000000u, "burst field holds 1e6");
_Static_assert(BRK__BKC_T_MAX >= 10000000000000ULL, "T field holds 1e13 ns");
_Static_assert(BRK__BGC_FLOOR_MAX >= 1000000000u, "floor field holds 1e6/s");
_Static_assert(BRK__BGC_RATIO_MAX >= 100000u, "ratio field holds 100");

#endif /* BRK_LAYOUT_H */
