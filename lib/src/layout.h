/*
 * layout.h - the shared-memory segment layout (private).
 *
 * Rules (docs/design/segment.md "Atomics"): every shared fact is one aligned
 * 64-bit word changed by one CAS (liburcu uatomic_cmpxchg, a full barrier); no
 * pointers, locks or bitfields; fixed-width types only; records are runs
 * of 64-byte arena units, named by their first unit (the ref). Every
 * size and offset is static-asserted: a change here is a change of
 * BRK__LAYOUT_VERSION.
 *
 * Segment:  [header 4096][name index: index_slots x 8][arena: arena_units x
 *            64][lease map: lmap_words x 8][event ring: event_slots x 128]
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
 * stops, deposits expire after a sliding TTL).
 * 3: records sized by kind in an arena of 64-byte units, packed settings,
 * probe / window / permit extension blocks (issue 10: a breaker without a
 * bulkhead costs 464 bytes, not 4 KiB); the lease map (a bitmap of the
 * records that may hold a lease) and the sweep cursor (breakerd's cost
 * follows the leases); the index lock, tombstones and free lists of
 * retired records (retirement).
 * 4: every extension block carries its owner's tag in its last word, and
 * a permit block has one unit more for it (issue 22: a garbage link into
 * another record was followed and written through); the pace's cut word
 * means hold-and-probe (issue 21: the limit found, a GROWING bit in the
 * float's sign), and a pace word bit marks implicit paces, made by a
 * breaker (a layout-3 library would run CUBIC on the same words and take
 * both bits for corruption). Both issues landed together: one bump.
 * 5: a permit block has a control unit before its tag unit (the
 * bulkhead's wait queue and the adaptive concurrency words), cfg[2]
 * bit 51 is the adaptive bulkhead and cfg[6] bits 30..36 its
 * min_concurrent, and a pace's TAT may run past now + tau (reservations:
 * fair waits) (issue 25: a layout-4 library would barge past the queue,
 * ignore the learned limit and heal the reservations away). */
#define BRK__LAYOUT_VERSION 5u
#define BRK__LINE 128u
#define BRK__HEADER_SIZE 4096u
#define BRK__UNIT 64u            /* arena allocation unit, bytes */
#define BRK__UNIT_WORDS (BRK__UNIT / 8u)
#define BRK__EVENT_SIZE 128u
#define BRK__EVENT_SLOTS 4096u
#define BRK__NAME_BYTES 64u
_Static_assert(BRK__NAME_BYTES == BRK_NAME_MAX + 1, "name bytes: the name and its NUL");

/* Arena bounds. Unit 0 is never allocated: a link word of 0 means "no
 * block". Refs fit 24 bits (the permit_refs fields), so the arena is at
 * most 2^24 units (1 GiB). */
#define BRK__ARENA_MIN_UNITS ((uint32_t)(BRK_MIN_ARENA_BYTES / BRK__UNIT))
#define BRK__ARENA_MAX_UNITS ((uint32_t)(BRK_MAX_ARENA_BYTES / BRK__UNIT))
_Static_assert(BRK__ARENA_MAX_UNITS == (1u << 24), "refs fit 24 bits");
_Static_assert(BRK_MIN_ARENA_BYTES % BRK__UNIT == 0, "whole units");

/* ---- header ---------------------------------------------------------- */
/* free lists of retired records, one per record kind (index: enum
 * brk_kind; alloc.c) */
#define BRK__FREE_LISTS 16u
/* A retired run is handed out again only after it has been free this
 * long on the segment clock (alloc.c; docs/design/lifecycle.md
 * "Retirement"). */
#define BRK__RETIRE_QUARANTINE_MS BRK_RETIRE_QUARANTINE_MS
/* index_intent: what the index lock's holder is doing (idxlock.c repairs
 * it when the holder died) */
#define BRK__INTENT_CREATE 1u
#define BRK__INTENT_RETIRE 2u
#define BRK__INTENT_OP(w) ((uint32_t)((w) >> 32) & 0xffu)
#define BRK__INTENT_REF1(w) ((uint32_t)((w) & 0xffffffffu))
#define BRK__INTENT_KIND(w) ((uint32_t)((w) >> 40) & 0xffu)
#define BRK__INTENT_MAKE(op, ref1) (((uint64_t)(op) << 32) | (uint32_t)(ref1))
/* a creation's intent also names the kind of the record being made */
#define BRK__INTENT_MAKE_KIND(op, kind, ref1) \
	(BRK__INTENT_MAKE(op, ref1) | ((uint64_t)((kind) & 0xffu) << 40))

/*
 * Fleet peer table (origin.c): one slot per fleet host id whose decisions
 * this segment's breakerd applied. word = gen:56 | st:8 (BRK__PEER_*);
 * check = brk__peer_check(gen, name): a slot is trusted only when its
 * word reads live before and after the name and the check matches (a
 * torn or corrupt slot reads "?"). An event names a slot as
 * BRK__ORIGIN_MAKE(slot, gen) in brk__event.pad[BRK__EV_ORIGIN] (0: local).
 */
#define BRK__PEER_FREE 0u
#define BRK__PEER_CLAIMING 1u
#define BRK__PEER_LIVE 2u
#define BRK__PEER_ST(w) ((uint32_t)((w) & 0xffu))
#define BRK__PEER_GEN(w) ((w) >> 8)
#define BRK__PEER_MAKE(gen, st) (((uint64_t)(gen) << 8) | ((uint64_t)(st) & 0xffu))
#define BRK__ORIGIN_SLOT(v) ((uint32_t)((v) & 0xffu)) /* slot + 1; 0: local */
#define BRK__ORIGIN_GEN(v) ((v) >> 8)
#define BRK__ORIGIN_MAKE(slot, gen) (((uint64_t)(gen) << 8) | (((uint64_t)(slot) + 1u) & 0xffu))
#define BRK__EV_ORIGIN 0u /* the event's pad word holding its origin */
#define BRK__PEER_SIZE 88u
struct brk__peer {
	uint64_t word;     /* gen:56 | st:8 */
	uint64_t used_ms;  /* last brk_set_origin() naming it (segment ms): the
	                      oldest is reused when the table is full */
	uint64_t check;    /* brk__peer_check(gen, name) */
	uint64_t name[BRK__NAME_BYTES / 8];
};
_Static_assert(sizeof(struct brk__peer) == BRK__PEER_SIZE, "peer slot");
_Static_assert(BRK_FLEET_PEERS < 255u, "slot + 1 fits 8 bits");
_Static_assert(BRK__NAME_BYTES == BRK_HOST_ID_MAX + 1, "a host id fits a name slot");

/*
 * Fleet link status area (fleet_status.c): one writer (breakerd's link)
 * copies struct brk_fleet_status word by word inside a sequence lock
 * (seq odd while writing); start = the writer's start ticks + 1 (0:
 * unknown), so a reader can tell a dead writer (state reads OFF).
 */
/* The whole struct (grown past VER0 into the header's reserved bytes:
 * older segments read zeros there, no layout version change). */
#define BRK__FLEET_WORDS (sizeof(struct brk_fleet_status) / 8u)
#define BRK__FLEET_AREA_SIZE (16u + sizeof(struct brk_fleet_status))
struct brk__fleet_area {
	uint64_t seq;
	uint64_t start;
	uint64_t words[BRK__FLEET_WORDS];
};
_Static_assert(sizeof(struct brk__fleet_area) == BRK__FLEET_AREA_SIZE, "fleet area");
_Static_assert(BRK_FLEET_STATUS_SIZE_VER0 % 8u == 0, "fleet status: whole words");

struct brk__header {
	/* line 0: immutable after the magic is published */
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;
	uint64_t total_size;
	uint32_t capacity;       /* records (sizes the name index) */
	uint32_t unit_size;      /* BRK__UNIT */
	uint32_t index_slots;
	uint32_t event_slots;
	uint32_t event_size;
	uint32_t arena_units;    /* units of BRK__UNIT bytes */
	uint64_t index_offset;
	uint64_t arena_offset;
	uint64_t events_offset;
	uint64_t created_mono_ns;
	uint64_t created_wall_ns;
	uint64_t creator_pid;
	uint64_t pidns_ino;
	uint64_t timens_ino;
	uint64_t lmap_offset;    /* the lease map (brk__lmap_offset()) */
	uint64_t lmap_words;     /* its words, both levels (brk__lmap_words()) */
	/* line 1: allocation and the index lock */
	uint64_t arena_next;     /* next never-used unit; 1 .. arena_units
	                            (CAS-bumped) */
	uint64_t index_lock;     /* 0, or the holder's BRK__TOK_MAKE(pid, 0,
	                            nonce): creation and retirement (idxlock.c) */
	uint64_t index_lock_start; /* the holder's start ticks (0: not yet
	                            written; cleared before the lock word) */
	uint64_t live_records;   /* published and not retired (bounded by
	                            capacity) */
	uint64_t leaked_units;   /* units of runs that were never published
	                            and that nothing reuses (alloc.c) */
	uint64_t index_seq;      /* +1 by every create and every retire */
	uint64_t index_intent;   /* op:8 | ref + 1:32 of the holder's
	                            mutation in progress (BRK__INTENT_*) */
	uint64_t index_intent_head; /* a retirer's head word before its CAS */
	uint64_t retired_total;  /* records ever retired */
	uint64_t index_moving;   /* odd while a retirer moves index slots
	                            (retire.c): a lookup that missed while it
	                            changed looks again (index.c) */
	uint64_t pad1[6];
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
	/* brk_events_wait() (event_wait.c, issue 24): processes blocked in
	 * it right now, and the futex word they sleep on (the one 32-bit
	 * shared word: FUTEX_WAIT compares 32 bits), bumped by a writer
	 * that published an event while event_waiters was not 0. Both were
	 * padding (zero) before, so no layout version change: a library
	 * without them never wakes a waiter (which then wakes at its
	 * timeout) and ignores them. */
	uint64_t event_waiters;
	uint32_t event_futex;
	uint32_t reserved3_;
	uint64_t pad3[13];
	/* lines 4-5: FIFO free lists of retired records, one per kind,
	 * under the index lock (alloc.c): ref + 1 of the oldest and of the
	 * newest; 0: empty */
	uint64_t free_head[BRK__FREE_LISTS];
	uint64_t free_tail[BRK__FREE_LISTS];
	/* from line 6: the fleet link (origin.c, fleet_status.c). Older
	 * segments have zeros here (ftruncate), which read as an empty peer
	 * table and a link that is OFF: no layout version change. */
	struct brk__peer peers[BRK_FLEET_PEERS];
	struct brk__fleet_area fleet;
	uint8_t reserved[BRK__HEADER_SIZE - 6 * BRK__LINE -
			 BRK_FLEET_PEERS * BRK__PEER_SIZE - BRK__FLEET_AREA_SIZE];
};

_Static_assert(sizeof(struct brk__header) == BRK__HEADER_SIZE, "header");
_Static_assert(offsetof(struct brk__header, arena_next) == 128, "hdr l1");
_Static_assert(offsetof(struct brk__header, daemon_pid) == 256, "hdr l2");
_Static_assert(offsetof(struct brk__header, event_head) == 384, "hdr l3");
_Static_assert(offsetof(struct brk__header, event_waiters) == 392, "hdr waiters");
_Static_assert(offsetof(struct brk__header, event_futex) == 400, "hdr futex");
_Static_assert(offsetof(struct brk__header, free_head) == 512, "hdr l4");
_Static_assert(offsetof(struct brk__header, timens_ino) == 104, "hdr l0");
_Static_assert(offsetof(struct brk__header, lmap_words) == 120, "hdr l0 end");
_Static_assert(offsetof(struct brk__header, leaked_units) == 160, "hdr l1 leaked");
_Static_assert(offsetof(struct brk__header, free_head) == 512, "hdr l4");
_Static_assert(offsetof(struct brk__header, peers) == 6 * BRK__LINE, "hdr peers");

/* ---- name index ------------------------------------------------------ */
/*
 * Open addressing, linear probing. A slot is 0 (empty), (hash32 << 32 |
 * (ref + 1)) (live; ref = the record's first arena unit) or BRK__IDX_TOMB
 * (a retired name). Lookups (lock-free) skip tombs and stop at empty;
 * inserts and retirements change slots only under the index lock
 * (index.c, retire.c).
 */
#define BRK__IDX_TOMB 0xffffffffffffffffULL
/* A retired record's own words carry its free list (alloc.c): word 1
 * (the hash) links to the next newer free record (ref + 1; 0: the last),
 * and the kind's last word (BRK__FREE_MS_WORD(): a breaker's hold word, a
 * paced bucket's BRK__BK_SERVED, unused by budgets) holds its stamp,
 * BRK__FREE_STAMP(): when it was freed (ms since the segment epoch) and a
 * breaker's histogram ref (see "Hold-time histogram"). No writer
 * through a stale handle touches either, but for a ticket whose
 * brk_ticket_check() passed its freshness test just before the
 * retirement: its max-CAS on BRK__BK_SERVED only raises the word, which
 * reads as a later (or future) free time, so the record waits longer,
 * never less; a lookup racing the retirement reads neither (it reads the
 * head and the name). */
#define BRK__FREE_LINK_WORD 1u
#define BRK__IDX_HASH(w) ((uint32_t)((w) >> 32))
#define BRK__IDX_REC(w) ((uint32_t)((w) & 0xffffffffu)) /* ref + 1 */
#define BRK__IDX_MAKE(h, rec1) (((uint64_t)(uint32_t)(h) << 32) | (uint32_t)(rec1))

/* ---- records ---------------------------------------------------------- */
/*
 * Record head word (word 0 of every record): kind:8 | units:8 | gen:48.
 * kind 0: not (yet) published; units: the core run's length, which must
 * be the kind's (brk__kind_units()); gen: +1 per reuse of the run.
 */
#define BRK__HEAD_KIND(w)  ((uint32_t)((w) & 0xffu))          /* enum brk_kind; 0: unpublished */
#define BRK__HEAD_UNITS(w) ((uint32_t)(((w) >> 8) & 0xffu))   /* units of the core run */
#define BRK__HEAD_GEN(w)   ((w) >> 16)                        /* 48 bits, +1 per reuse */
#define BRK__HEAD_MAKE(kind, units, gen) \
	(((uint64_t)(gen) << 16) | (((uint64_t)(units) & 0xffu) << 8) | ((uint64_t)(kind) & 0xffu))
#define BRK__KIND_RETIRED 0xfeu  /* head kind while/after retirement */
#define BRK__KIND_ORPHAN  0xfdu  /* lost a creation race */

/* Core units per kind. */
#define BRK__BREAKER_UNITS 7u
#define BRK__BUCKET_UNITS 4u
#define BRK__BUDGET_UNITS 7u

static inline uint32_t brk__kind_units(uint32_t kind)
{
	switch (kind) {
	case BRK_KIND_BREAKER: return BRK__BREAKER_UNITS;
	case BRK_KIND_BUCKET: return BRK__BUCKET_UNITS;
	case BRK_KIND_BUDGET: return BRK__BUDGET_UNITS;
	default: return 0;
	}
}

#define BRK__PROBE_SLOTS 8u
#define BRK__PERMIT_SLOTS 64u
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
#define BRK__LEASES_PER_UNIT (BRK__UNIT / sizeof(struct brk__lease)) /* 2 */
_Static_assert(BRK__LEASES_PER_UNIT == 2, "two leases per unit");

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
	BRK__CFG_RESERVE_PCT,
	BRK__CFG_HOLD_HISTOGRAM,
	BRK__CFG_FLEET,
	BRK__CFG_FLEET_PROBE,
	BRK__CFG_IMPLICIT_PACE,
	BRK__CFG_CONCURRENCY_AUTO,
	BRK__CFG_MIN_CONCURRENT,
	BRK__CFG_COUNT
};

/*
 * The settings are packed into cfg[0..6] (cfg[BRK__CFG_SEQ] = cfg[7] is
 * the config sequence word). Each setting is a field of bits
 * [shift, shift + bits) of word cfg[word], wide enough for its public
 * range (static-asserted in config.c):
 *
 *   cfg[0]  window_ms:38 | failure_threshold:20 | half_open_probes:4
 *   cfg[1]  hold_histogram:1 | 0:11 | slow_rate_pct:7 | failure_rate_pct:7 |
 *           slow_call_ms:38
 *   cfg[2]  open_ms:38 | min_distinct:4 | reserve_pct:7 | HAS_PACE:1 |
 *           implicit_pace:1 | concurrency_auto:1 | 0:5 | max_concurrent:7
 *           (HAS_PACE, bit 49, is no setting: release sets it when the
 *           breaker's implicit pace exists, acquire tests it; a full
 *           configure may clear it, the next rate-limit answer sets it
 *           again)
 *   cfg[3]  max_open_ms:38 | success_threshold:20
 *   cfg[4]  probe_timeout_ms:38 | fleet:1 | fleet_probe:1 (breakerd's
 *           fleet link reads them; never the acquire/release path)
 *   cfg[5]  max_wait_ms:38
 *   cfg[6]  min_calls:30 | min_concurrent:7
 *
 * (fields from the low bit up). The settings the closed fast path reads
 * end at bit 63, so reading one is a load and a shift, testing it a load
 * and a compare: max_concurrent (acquire), slow_call_ms (acquire, release)
 * (acquire tests it and hold_histogram, bit 0 of the same word, with one
 * mask: BRK__CFG_CLOCK_MASK)
 * and, together with failure_rate_pct below it, "is a window rule on"
 * (release: one load, one test, brk__window_active()). A setting is
 * changed by a CAS of its word that keeps every other field (config.c).
 */
struct brk__cfg_field {
	uint8_t word, shift, bits;
};

static inline struct brk__cfg_field brk__cfg_pos(enum brk__cfg k)
{
	switch (k) {
	case BRK__CFG_WINDOW_MS: return (struct brk__cfg_field){ 0, 0, 38 };
	case BRK__CFG_FAILURE_THRESHOLD: return (struct brk__cfg_field){ 0, 38, 20 };
	case BRK__CFG_HALF_OPEN_PROBES: return (struct brk__cfg_field){ 0, 58, 4 };
	case BRK__CFG_HOLD_HISTOGRAM: return (struct brk__cfg_field){ 1, 0, 1 };
	case BRK__CFG_SLOW_RATE: return (struct brk__cfg_field){ 1, 12, 7 };
	case BRK__CFG_FAILURE_RATE: return (struct brk__cfg_field){ 1, 19, 7 };
	case BRK__CFG_SLOW_CALL_MS: return (struct brk__cfg_field){ 1, 26, 38 };
	case BRK__CFG_OPEN_MS: return (struct brk__cfg_field){ 2, 0, 38 };
	case BRK__CFG_MIN_DISTINCT: return (struct brk__cfg_field){ 2, 38, 4 };
	case BRK__CFG_RESERVE_PCT: return (struct brk__cfg_field){ 2, 42, 7 };
	case BRK__CFG_MAX_CONCURRENT: return (struct brk__cfg_field){ 2, 57, 7 };
	case BRK__CFG_MAX_OPEN_MS: return (struct brk__cfg_field){ 3, 0, 38 };
	case BRK__CFG_SUCCESS_THRESHOLD: return (struct brk__cfg_field){ 3, 38, 20 };
	case BRK__CFG_PROBE_TIMEOUT_MS: return (struct brk__cfg_field){ 4, 0, 38 };
	case BRK__CFG_FLEET: return (struct brk__cfg_field){ 4, 38, 1 };
	case BRK__CFG_FLEET_PROBE: return (struct brk__cfg_field){ 4, 39, 1 };
	case BRK__CFG_IMPLICIT_PACE: return (struct brk__cfg_field){ 2, 50, 1 };
	case BRK__CFG_MAX_WAIT_MS: return (struct brk__cfg_field){ 5, 0, 38 };
	case BRK__CFG_MIN_CALLS: return (struct brk__cfg_field){ 6, 0, 30 };
	case BRK__CFG_CONCURRENCY_AUTO: return (struct brk__cfg_field){ 2, 51, 1 };
	case BRK__CFG_MIN_CONCURRENT: return (struct brk__cfg_field){ 6, 30, 7 };
	default: return (struct brk__cfg_field){ 7, 0, 0 };
	}
}

/* The window rules' word: failure_rate_pct and slow_call_ms are its bits
 * from BRK__CFG_WINDOW_SHIFT up (brk__window_active()). */
#define BRK__CFG_WINDOW_WORD 1u
#define BRK__CFG_WINDOW_SHIFT 19u
/* The settings that need a permit's start time (acquire.c start_time()):
 * slow_call_ms (bits 26..63) and hold_histogram (bit 0) of that word. */
#define BRK__CFG_SLOW_SHIFT 26u
#define BRK__CFG_HOLD_BIT 1ULL
#define BRK__CFG_CLOCK_MASK (~((1ULL << BRK__CFG_SLOW_SHIFT) - 1u) | BRK__CFG_HOLD_BIT)

/* cfg[2] bit 49: the breaker's implicit pace exists (see the table) */
#define BRK__CFG_PACE_WORD 2u
#define BRK__CFG_HAS_PACE (1ULL << 49)
#define BRK__CFG_IMPLICIT_BIT (1ULL << 50)
/* cfg[2] bit 51: the bulkhead's limit is learned (adaptive.c): read with
 * max_concurrent by the same load in take_permit() */
#define BRK__CFG_AUTO_BIT (1ULL << 51)

#define BRK__CFG_WORDS 7u
/* cfg[BRK__CFG_SEQ]: the config sequence word, CAS-bumped by every
 * committed (or withdrawn) brk_breaker_update() (config.c). */
#define BRK__CFG_SEQ 7u

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
	/* BRK_THROTTLED releases: the slot of reason NONE, which no failure
	 * uses (a failure with reason NONE counts as OTHER). A word no live
	 * record wrote, so layout 3 keeps its shape. */
	BRK__CTR_THROTTLED = BRK__CTR_FAIL_REASON0 + 0,
	BRK__CTR_COUNT = BRK__CTR_FAIL_REASON0 + 7
};

/*
 * The breaker core record: BRK__BREAKER_UNITS units (448 bytes), so a
 * breaker without a bulkhead costs 448 + 16 (its share of the name index)
 * = 464 bytes. Buckets and budgets share only head, hash and name (their
 * other words: brk__xw(), below).
 */
struct brk__record {
	uint64_t head;           /* BRK__HEAD_*; written last at creation */
	uint64_t hash;           /* 64-bit FNV-1a of the name */
	char name[BRK__NAME_BYTES]; /* NUL-terminated, validated on read */
	uint64_t state;          /* see BRK__ST_* */
	uint64_t cool_until_ns;  /* shared cool-until (monotonic ns), 0: none */
	uint64_t fails;          /* consecutive failures, gen-tagged */
	uint64_t ho_successes;   /* successful probes, gen-tagged */
	uint64_t open_until[2];  /* deadline of OPEN(gen), slot gen & 1
	                            (BRK__UT_*) */
	uint64_t mode;           /* enum brk_mode (forced states) */
	uint64_t permit_hw;      /* permit slots ever used: the largest
	                            max_concurrent any claimer had (raised
	                            by CAS before its claim) */
	uint64_t ext_refs;       /* probe_ref:32 | window_ref:32 (0: none) */
	uint64_t permit_refs;    /* BRK__PR_* (0: no bulkhead block) */
	uint64_t cfg[8];         /* packed settings + sequence word */
	uint64_t ctr[BRK__CTR_COUNT]; /* counters (enum brk__ctr) */
	struct brk__lease probe0; /* the first half-open probe slot */
	uint64_t last_change_ms; /* ms since the segment epoch of the last
	                            transition (its winner); 0: never */
	uint64_t idle_snap;      /* retirement sweep only */
	uint64_t idle_since_ms;  /* retirement sweep only */
	uint64_t hold;           /* live: the hold-time histogram's link
	                            (BRK__HOLD_*; 0: none yet); free: the
	                            free list's stamp (BRK__FREE_MS_WORD) */
};

_Static_assert(sizeof(struct brk__record) == BRK__BREAKER_UNITS * BRK__UNIT, "record 448");
_Static_assert(offsetof(struct brk__record, head) == 0, "rec head");
_Static_assert(offsetof(struct brk__record, hash) == 8, "rec hash");
_Static_assert(offsetof(struct brk__record, name) == 16, "rec name");
_Static_assert(offsetof(struct brk__record, state) == 80, "rec state");
_Static_assert(offsetof(struct brk__record, cool_until_ns) == 88, "rec cool");
_Static_assert(offsetof(struct brk__record, fails) == 96, "rec fails");
_Static_assert(offsetof(struct brk__record, ho_successes) == 104, "rec ho");
_Static_assert(offsetof(struct brk__record, open_until) == 112, "rec until");
_Static_assert(offsetof(struct brk__record, mode) == 128, "rec mode");
_Static_assert(offsetof(struct brk__record, permit_hw) == 136, "rec hw");
_Static_assert(offsetof(struct brk__record, ext_refs) == 144, "rec ext_refs");
_Static_assert(offsetof(struct brk__record, permit_refs) == 152, "rec permit_refs");
_Static_assert(offsetof(struct brk__record, cfg) == 160, "rec cfg");
_Static_assert(offsetof(struct brk__record, ctr) == 224, "rec ctr");
_Static_assert(offsetof(struct brk__record, probe0) == 384, "rec probe0");
_Static_assert(offsetof(struct brk__record, last_change_ms) == 416, "rec last change");
_Static_assert(offsetof(struct brk__record, idle_snap) == 424, "rec idle snap");
_Static_assert(offsetof(struct brk__record, idle_since_ms) == 432, "rec idle since");
_Static_assert(offsetof(struct brk__record, hold) == 440, "rec hold");
_Static_assert(BRK__CTR_COUNT == 20, "ctr words");
_Static_assert(BRK__CFG_WORDS < BRK__CFG_SEQ + 1 && BRK__CFG_SEQ < 8, "cfg words");
/* identity (head, hash, name) ends at word 10 for every kind */
#define BRK__ID_WORDS 10u
_Static_assert(offsetof(struct brk__record, state) == BRK__ID_WORDS * 8, "identity words");

/* ---- extension blocks -------------------------------------------------- */
/*
 * Owner tag (layout 4, issue 22): the last word of every probe, window and
 * permit block holds BRK__BTAG(owner, what): a fixed mark, the block's
 * kind and the ref of the record it belongs to (the record's first unit:
 * a retired record is reused whole with its blocks, so its ref stays).
 * Written before the block is linked, kept when a reused record's blocks
 * are cleared. A link is followed (read or written through) only if the
 * block it names carries the tag of this record and this kind: a garbage
 * link into another record's blocks or core reads as "no block".
 */
#define BRK__BTAG_MARK 0xb10cULL
enum { BRK__BT_PROBE = 1, BRK__BT_WINDOW = 2, BRK__BT_PERMIT = 3 };
#define BRK__BTAG(owner, what) \
	((BRK__BTAG_MARK << 48) | ((uint64_t)((what) & 0xffu) << 32) | (uint32_t)(owner))
/* the tag word of a block of @units units: its last */
#define BRK__BTAG_WORD(units) ((units) * BRK__UNIT_WORDS - 1u)
/* ext_refs: probe_ref:32 (low) | window_ref:32 */
#define BRK__XR_PROBE(w) ((uint32_t)((w) & 0xffffffffu))
#define BRK__XR_WINDOW(w) ((uint32_t)((w) >> 32))
#define BRK__XR_MAKE(probe, window) \
	(((uint64_t)(uint32_t)(window) << 32) | (uint32_t)(probe))
/* Probe extension: the probe slots after probe0. */
#define BRK__PROBE_EXT_SLOTS (BRK__PROBE_SLOTS - 1u)
#define BRK__PROBE_EXT_UNITS \
	((BRK__PROBE_EXT_SLOTS + BRK__LEASES_PER_UNIT - 1) / BRK__LEASES_PER_UNIT)
_Static_assert(BRK__PROBE_EXT_UNITS == 4, "probe extension: 4 units");
/* Window extension: head word, 2 words per bucket, the quorum slots. */
#define BRK__WIN_HEAD 0u      /* newest bucket epoch */
#define BRK__WIN_BASE 1u      /* two words per bucket */
#define BRK__WIN_WORD(k) (BRK__WIN_BASE + (k)) /* k < 2 * BRK_WINDOW_BUCKETS */
#define BRK__WIN_A(i) BRK__WIN_WORD(2u * (i))      /* bucket i: calls, failures */
#define BRK__WIN_B(i) BRK__WIN_WORD(2u * (i) + 1u) /* bucket i: slow calls */
#define BRK__QUORUM_BASE (BRK__WIN_BASE + 2u * BRK_WINDOW_BUCKETS)
#define BRK__QUORUM(i) (BRK__QUORUM_BASE + (i))    /* i < BRK_MAX_QUORUM */
#define BRK__WIN_EXT_WORDS (BRK__QUORUM_BASE + BRK_MAX_QUORUM)
#define BRK__WIN_EXT_UNITS ((BRK__WIN_EXT_WORDS + BRK__UNIT_WORDS - 1) / BRK__UNIT_WORDS)
_Static_assert(BRK__WIN_EXT_WORDS == 29 && BRK__WIN_EXT_UNITS == 4, "window extension");
/* Health words (health.c) in the window extension's spare words after the
 * quorum slots (zero in every older record: "never evaluated", "off").
 * Health: state:4 (bits 60..63) | code:8 (52..59) | since:52, since = ms
 * since the segment epoch + 1 of the state's start (0: never stored).
 * Fallback: on:1 (bit 63) | 0:11 | since:52, since as above, of the last
 * brk_set_fallback() (0: never set). Cleared with the block on reuse. */
#define BRK__WIN_HEALTH BRK__WIN_EXT_WORDS            /* word 29 */
#define BRK__WIN_FALLBACK (BRK__WIN_EXT_WORDS + 1u)   /* word 30 */
#define BRK__HW_SINCE_BITS 52u
#define BRK__HW_SINCE_MASK ((1ULL << BRK__HW_SINCE_BITS) - 1u)
#define BRK__HW_STATE(w) ((int)((w) >> 60))
#define BRK__HW_CODE(w) ((int)(((w) >> 52) & 0xffu))
#define BRK__HW_SINCE(w) ((w) & BRK__HW_SINCE_MASK)
#define BRK__HW_MAKE(state, code, since1) \
	((((uint64_t)(state) & 0xfu) << 60) | (((uint64_t)(code) & 0xffu) << 52) | \
	 ((uint64_t)(since1) & BRK__HW_SINCE_MASK))
#define BRK__FB_ON (1ULL << 63)
#define BRK__FB_MAKE(on, since1) \
	(((on) ? BRK__FB_ON : 0) | ((uint64_t)(since1) & BRK__HW_SINCE_MASK))
_Static_assert(BRK__WIN_HEALTH == 29 && BRK__WIN_FALLBACK == 30 &&
	       BRK__WIN_FALLBACK < BRK__BTAG_WORD(BRK__WIN_EXT_UNITS),
	       "health words are spare words of the window extension");
_Static_assert(BRK__PROBE_EXT_SLOTS * sizeof(struct brk__lease) <=
	       BRK__BTAG_WORD(BRK__PROBE_EXT_UNITS) * 8u,
	       "the probe block's tag word is after its slots");
/* every ms since the epoch of a 64-bit ns clock (2^44.1 ms), + 1, fits */
_Static_assert(UINT64_MAX / 1000000u + 1u <= BRK__HW_SINCE_MASK, "since field");

/* permit_refs: primary_ref:24 | primary_slots:7 | overflow_ref:24 |
 * overflow_slots:7 (from the low end). A block of n slots is
 * n / BRK__LEASES_PER_UNIT units; n is even. */
#define BRK__PR_REF_BITS 24u
#define BRK__PR_REF_MASK ((1u << BRK__PR_REF_BITS) - 1u)
#define BRK__PR_P_REF(w) ((uint32_t)((w) & BRK__PR_REF_MASK))
#define BRK__PR_P_SLOTS(w) ((uint32_t)(((w) >> 24) & 0x7fu))
#define BRK__PR_O_REF(w) ((uint32_t)(((w) >> 31) & BRK__PR_REF_MASK))
#define BRK__PR_O_SLOTS(w) ((uint32_t)(((w) >> 55) & 0x7fu))
#define BRK__PR_MAKE(pref, pslots, oref, oslots) \
	(((uint64_t)((pref) & BRK__PR_REF_MASK)) | \
	 ((uint64_t)((pslots) & 0x7fu) << 24) | \
	 ((uint64_t)((oref) & BRK__PR_REF_MASK) << 31) | \
	 ((uint64_t)((oslots) & 0x7fu) << 55))
/* n slots, the control unit (layout 5) and the owner tag's unit
 * (layout 4) */
#define BRK__PERMIT_UNITS(slots) \
	((slots) ? ((slots) + 1u) / BRK__LEASES_PER_UNIT + 2u : 0u)
/* The control unit of a permit block: its unit before the tag unit. Only
 * the PRIMARY block's is used (brk__permit_ctl(), blocks.c); an overflow
 * block's stays zero. Zero in a new or reused block (cleared with it).
 *   PQ_*: the bulkhead's wait queue (bulkhead_queue.c, issue 25):
 *     NEXT    the next ticket to hand out (fetch-and-add)
 *     SERVED  the ticket at the head of the queue (tickets below it were
 *             served, skipped or left)
 *     GONE    bit (t % 64): ticket t in [SERVED, SERVED + 64) has left
 *     FUTEX   low 32 bits: the futex word waiters sleep on, bumped when
 *             a permit is given back while NEXT != SERVED; high 32 bits:
 *             the skip run (heads skipped as stale since a head last
 *             claimed; the next skip passes 2^run tickets)
 *   AC_*: the adaptive limit (adaptive.c, issue 25; docs/design/limits.md
 *     "Adaptive concurrency"):
 *     LIMIT   the learned limit and its window (adaptive.c's encoding)
 *     ACC     this window's samples (adaptive.c's encoding)
 *     LONG    the long-window (baseline) latency
 *     WIN     the window's start and in-flight high-water mark */
#define BRK__PERMIT_CTL_UNIT(slots) (((slots) + 1u) / BRK__LEASES_PER_UNIT)
enum brk__permit_ctl {
	BRK__PQ_NEXT, BRK__PQ_SERVED, BRK__PQ_GONE, BRK__PQ_FUTEX,
	BRK__AC_LIMIT, BRK__AC_ACC, BRK__AC_LONG, BRK__AC_WIN,
	BRK__PERMIT_CTL_WORDS
};
_Static_assert(BRK__PERMIT_CTL_WORDS == BRK__UNIT_WORDS, "the control unit: 8 words");
_Static_assert(BRK__ARENA_MAX_UNITS - 1u <= BRK__PR_REF_MASK, "refs fit the permit fields");
_Static_assert(BRK__PERMIT_SLOTS <= 0x7fu, "slots fit 7 bits");

/*
 * Hold-time histogram (hold.c): a block of BRK__HOLD_UNITS linked from the
 * breaker's last core word (struct brk__record.hold), CAS-installed by the
 * first release that finds none while the breaker's hold_histogram setting
 * is on (off: no release touches the word or a block). Words: BRK__HOLD_BUCKETS bucket counters
 * (non-cumulative: bucket i counts holds in (bound(i - 1), bound(i)] µs,
 * brk_hold_bound_us(); the last one everything above 10 s) and the sum of
 * the hold times in µs; the rest zero. The count is not stored: it is the
 * sum of the buckets (so _count equals the +Inf bucket by construction,
 * and a release pays two atomic adds, not three).
 *
 * The hold word of a live record: LINK:1 (bit 63) | 0:39 | ref:24, or
 * NOROOM:1 (bit 62) once an allocation failed (the arena had no room the
 * cores and the other blocks do not need: nothing is recorded for that
 * record until it is reused), or 0. Anything else reads as "no block".
 * While the record is free the word is the free list's stamp instead
 * (BRK__FREE_MS_WORD: the kind's last word): BRK__FREE_STAMP(), with the
 * histogram's ref kept in it so a reused record keeps its block (alloc.c).
 * A stamp never has bit 63 set, so a writer racing the retirement never
 * takes it for a link.
 */
#define BRK__HOLD_BUCKETS 12u   /* Prometheus' default buckets + +Inf */
#define BRK__HOLD_SUM BRK__HOLD_BUCKETS          /* word 12: sum, µs */
#define BRK__HOLD_WORDS (BRK__HOLD_BUCKETS + 1u)
#define BRK__HOLD_UNITS 2u
#define BRK__HOLD_LINK (1ULL << 63)
#define BRK__HOLD_NOROOM (1ULL << 62)
#define BRK__HOLD_MAKE(ref) (BRK__HOLD_LINK | ((uint64_t)(ref) & BRK__PR_REF_MASK))
/* the ref of a hold word, 0 unless it is a well-formed link */
#define BRK__HOLD_REF(w) \
	(((w) & ~(uint64_t)BRK__PR_REF_MASK) == BRK__HOLD_LINK \
		 ? (uint32_t)((w) & BRK__PR_REF_MASK) : 0u)
_Static_assert(BRK__HOLD_WORDS <= BRK__HOLD_UNITS * BRK__UNIT_WORDS &&
	       BRK__HOLD_BUCKETS == BRK_HOLD_BUCKETS, "hold block");

/*
 * The free list's stamp of a free record (alloc.c): free_ms1:39 (bits
 * 0..38: ms since the segment epoch + 1, modulo 2^39 = 17.4 years; ages
 * are taken modulo 2^39) | hold ref:24 (bits 39..62) | 0:1. Never 0, never
 * bit 63. Buckets and budgets keep 0 in the ref field.
 */
#define BRK__FREE_MS_BITS 39u
#define BRK__FREE_MS_MASK ((1ULL << BRK__FREE_MS_BITS) - 1u)
#define BRK__FREE_STAMP(ms, href) \
	((((uint64_t)(href) & BRK__PR_REF_MASK) << BRK__FREE_MS_BITS) | \
	 ((((uint64_t)(ms) + 1u) & BRK__FREE_MS_MASK) ? \
	  (((uint64_t)(ms) + 1u) & BRK__FREE_MS_MASK) : 1u))
#define BRK__FREE_STAMP_MS1(w) ((w) & BRK__FREE_MS_MASK)
#define BRK__FREE_STAMP_REF(w) \
	((uint32_t)(((w) >> BRK__FREE_MS_BITS) & BRK__PR_REF_MASK))
_Static_assert(BRK__FREE_MS_BITS + BRK__PR_REF_BITS == 63u, "stamp: bit 63 clear");

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
	uint64_t pad[2]; /* pad[BRK__EV_ORIGIN]: the origin (0: local) */
	uint64_t name[BRK__NAME_BYTES / 8];
};
_Static_assert(sizeof(struct brk__event) == BRK__EVENT_SIZE, "event");

/* Geometry, computed the same way by creator and checker:
 * [header][index][arena][lease map][event ring]. */
static inline uint32_t brk__index_slots(uint32_t capacity)
{
	uint32_t n = 16;
	while (n < capacity * 2u)
		n <<= 1;
	return n;
}

/* Units set aside for the extension blocks: max(capacity / 8, 1024).
 * Hold-time histograms never take the last half of it (hold.c), so they
 * never make a probe, window or bulkhead block fail. */
static inline uint64_t brk__ext_room_units(uint32_t capacity)
{
	return capacity / 8u > 1024u ? capacity / 8u : 1024u;
}

/* The default arena: 7 units (a breaker core) per record of the
 * capacity, and brk__ext_room_units() for the extension blocks (probe,
 * window, bulkhead and the hold-time histograms of the breakers that
 * opted in). */
static inline uint64_t brk__default_arena_units(uint32_t capacity)
{
	return (uint64_t)capacity * BRK__BREAKER_UNITS +
	       brk__ext_room_units(capacity);
}

static inline uint64_t brk__index_offset(void) { return BRK__HEADER_SIZE; }

static inline uint64_t brk__arena_offset(uint32_t capacity)
{
	uint64_t o = BRK__HEADER_SIZE + (uint64_t)brk__index_slots(capacity) * 8u;
	return (o + 4095u) / 4096u * 4096u;
}

/*
 * The lease map (leasemap.c): level 0 has one bit per arena unit (a
 * record is named by its first unit: "this record may hold a lease"),
 * level 1 one bit per level-0 word ("that word may be non-zero"). Level
 * 0's words come first, level 1's follow. brk__lmap_nbits() is the one
 * place that says what the bits count.
 */
static inline uint32_t brk__lmap_nbits(uint32_t units) { return units; }

static inline uint32_t brk__lmap_l0_words(uint32_t units)
{
	return (uint32_t)(((uint64_t)brk__lmap_nbits(units) + 63u) / 64u);
}

static inline uint32_t brk__lmap_l1_words(uint32_t units)
{
	return (brk__lmap_l0_words(units) + 63u) / 64u;
}

static inline uint64_t brk__lmap_words(uint32_t units)
{
	return (uint64_t)brk__lmap_l0_words(units) + brk__lmap_l1_words(units);
}

static inline uint64_t brk__lmap_offset(uint32_t capacity, uint32_t units)
{
	return brk__arena_offset(capacity) + (uint64_t)units * BRK__UNIT;
}

static inline uint64_t brk__events_offset(uint32_t capacity, uint32_t units)
{
	uint64_t o = brk__lmap_offset(capacity, units) + brk__lmap_words(units) * 8u;
	return (o + BRK__LINE - 1) / BRK__LINE * BRK__LINE;
}

static inline uint64_t brk__total_size(uint32_t capacity, uint32_t units)
{
	return brk__events_offset(capacity, units) +
	       (uint64_t)BRK__EVENT_SLOTS * BRK__EVENT_SIZE;
}

/* ---- GCRA buckets and retry budgets: words of the record -------------- */
/*
 * Records of kind BRK_KIND_BUCKET (BRK__BUCKET_UNITS units) and
 * BRK_KIND_BUDGET (BRK__BUDGET_UNITS units) share head, hash and name
 * (words 0..9) with breakers; their other words are indexed from the
 * record's start (brk__xw()). The word every take CASes (the TAT) has a
 * 64-byte unit of its own.
 *
 * Bucket (4 units):
 *   unit 1  (after the name) settings: interval_ns:44 | burst:20; 0 = not
 *           configured yet (the creator stores it before publication)
 *   unit 2  TAT, ns of the segment clock (0: full since ever)
 *   unit 3  counters: taken, denied, tokens_taken
 * A paced bucket (pace.c; breaker.h "Pacing (learned rate)") also uses:
 *   unit 1  BRK__BK_PACE: PACED:1 (bit 63) | reserve_pct:7 (bits 44..50) |
 *           floor interval_ns:44 (the settings word holds the CEILING's
 *           interval); BRK__BK_CUT: cut_ms:40 | w_max:24 (float32 bits
 *           >> 8); 0 = never cut. Read by every take, written per cut.
 *   unit 2  BRK__BK_TAT_NORMAL (normal-priority GCRA at (1 - reserve) x
 *           rate), the report words: cuts, limited, ok counters, the
 *           sliding-second estimate (slot_s:32 | cur:16 | prev:16) and
 *           the since-cut count (cut_ms:40 | n:24)
 *   unit 3  words 29, 30 (after the idle words): high-priority takes and
 *           the last refusal (ms + 1)
 * Reservations (issue 25, pace_ticket.c): unit 2 word 23 BRK__BK_RESV
 *   (reservations on the shared TAT, a ticket's number), unit 3 word 31
 *   BRK__BK_SERVED (the highest number whose ticket went), unit 1 word 13
 *   BRK__BK_CUTQ (written by each cut: its ms's low 24 bits and the number
 *   before the first ticket it re-spaced, 40 bits).
 *   All 0 in records made before them (layout 5 is this issue's).
 * Old records and plain buckets have 0 in all of them.
 * Budget (7 units):
 *   unit 1  (after the name) settings: configured:1 (bit 63) |
 *           ratio_milli:17 (bits 30..46) | floor_milli_per_s:30 (bits
 *           0..29); 0 = not configured yet
 *   unit 2  floor TAT (GCRA as above, unused when floor is 0)
 *   unit 3  spend cursor: slice:35 | used_milli:29. Deposits of the
 *           slices before `slice` are spent or expired; `used_milli`
 *           of slice `slice`'s are spent. Only withdrawals CAS it.
 *   unit 4  counters: deposits, retries, retries_floor, deferred
 *   units 5-6  deposit ring: BRK__BG_SLICES words; slice k (slices of
 *           BRK__BG_SLICE_MS since the segment epoch) lives in word
 *           k % BRK__BG_SLICES as slice:35 (k itself) |
 *           milli-tokens:29. Only deposits CAS these.
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
#define BRK__XW_UNIT(u) ((u) * BRK__UNIT_WORDS)

enum brk__bucket_ext {
	BRK__BK_CFG = BRK__ID_WORDS,
	BRK__BK_TAT = BRK__XW_UNIT(2),
	BRK__BK_TAKEN = BRK__XW_UNIT(3),
	BRK__BK_DENIED,
	BRK__BK_TOKENS,
	BRK__BK_END,
	/* paced buckets only (pace.c; 0 in plain buckets and old records) */
	BRK__BK_PACE = BRK__BK_CFG + 1,    /* PACED:1 | reserve_pct:7 | floor T:44 */
	BRK__BK_CUT = BRK__BK_CFG + 2,     /* cut_ms:40 | w_max float24:24 */
	BRK__BK_TAT_NORMAL = BRK__BK_TAT + 1, /* normal-priority GCRA */
	BRK__BK_CUTS = BRK__BK_TAT + 2,    /* reports that cut the rate */
	BRK__BK_LIMITED = BRK__BK_TAT + 3, /* BRK_PACE_LIMITED reports */
	BRK__BK_OK = BRK__BK_TAT + 4,      /* BRK_PACE_OK reports */
	BRK__BK_EST = BRK__BK_TAT + 5,     /* slot_s:32 | cur:16 | prev:16 */
	BRK__BK_SINCE = BRK__BK_TAT + 6,   /* cut_ms:40 | OK reports since it:24 */
	BRK__BK_HIGH = BRK__BK_END + 2,    /* high-priority takes */
	BRK__BK_LAST_DENIED_MS = BRK__BK_END + 3, /* ms + 1 of the last refusal */
	/* reservations (pace_ticket.c, breaker.h "Fair waits"; issue 25) */
	BRK__BK_RESV = BRK__BK_TAT + 7,    /* reservations made on the TAT */
	BRK__BK_SERVED = BRK__BK_END + 4,  /* highest reservation gone */
	BRK__BK_CUTQ = BRK__BK_CFG + 3     /* the last cut's queue head:
					      cut_ms & 0xffffff:24 | seq:40 */
};

enum brk__budget_ext {
	BRK__BG_CFG = BRK__ID_WORDS,
	BRK__BG_TAT = BRK__XW_UNIT(2),
	BRK__BG_CURSOR = BRK__XW_UNIT(3),
	BRK__BG_DEPOSITS = BRK__XW_UNIT(4),
	BRK__BG_RETRIES,
	BRK__BG_RETRIES_FLOOR,
	BRK__BG_DEFERRED,
	BRK__BG_RING = BRK__XW_UNIT(5),
	BRK__BG_END = BRK__BG_RING + BRK_BUDGET_SLICES
};

/* The retirement sweep's words of each kind (retire.c): the activity
 * sum it last saw at BRK__IDLE_WORD(kind), and since when (ms since the
 * epoch + 1; 0: not seen yet) in the word after it. */
#define BRK__IDLE_WORD(kind) \
	((kind) == BRK_KIND_BUCKET ? (uint32_t)BRK__BK_END : \
	 (kind) == BRK_KIND_BUDGET ? (uint32_t)BRK__BG_END : \
	 (uint32_t)(offsetof(struct brk__record, idle_snap) / 8u))
_Static_assert(BRK__BK_END + 2u <= BRK__BUCKET_UNITS * BRK__UNIT_WORDS &&
	       BRK__BG_END + 2u <= BRK__BUDGET_UNITS * BRK__UNIT_WORDS &&
	       offsetof(struct brk__record, idle_since_ms) ==
	       offsetof(struct brk__record, idle_snap) + 8u, "idle words fit");

/* A free record's stamp (alloc.c, BRK__FREE_STAMP()): the last word of
 * its kind's run. Budgets leave it unused while they live, a live paced
 * bucket's is BRK__BK_SERVED (layout 5; zeroed on reuse like every
 * bucket word), a live breaker's is its hold word, whose histogram ref
 * the stamp keeps. */
#define BRK__FREE_MS_WORD(kind) (brk__kind_units(kind) * BRK__UNIT_WORDS - 1u)
_Static_assert(offsetof(struct brk__record, hold) ==
	       (BRK__BREAKER_UNITS * BRK__UNIT_WORDS - 1u) * 8u &&
	       BRK__BK_END + 2u < BRK__BUCKET_UNITS * BRK__UNIT_WORDS - 1u &&
	       BRK__BG_END + 2u < BRK__BUDGET_UNITS * BRK__UNIT_WORDS - 1u,
	       "the stamp word: a breaker's hold word, no live word of the other kinds");

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
/* Largest interval accepted: 1e9 / BRK_BUCKET_MIN_RATE, rounded. */
#define BRK__T_LIMIT 10000000000000ULL /* 1e13 ns */

/* paced bucket words (pace.c, pace_curve.c): see docs/design/pacing.md */
#define BRK__PC_PACED (1ULL << 63)
#define BRK__PC_RESERVE_SHIFT 44u
#define BRK__PC_RESERVE_MASK 0x7fu
#define BRK__PC_FLOOR_T(w) ((w) & BRK__BKC_T_MAX)
#define BRK__PC_RESERVE(w) \
	((uint32_t)(((w) >> BRK__PC_RESERVE_SHIFT) & BRK__PC_RESERVE_MASK))
#define BRK__PC_MAKE(floor_t, reserve) \
	(BRK__PC_PACED | \
	 (((uint64_t)(reserve) & BRK__PC_RESERVE_MASK) << BRK__PC_RESERVE_SHIFT) | \
	 ((uint64_t)(floor_t) & BRK__BKC_T_MAX))
/* bit 51: the pace's fleet setting (breakerd's fleet link reads it; the
 * take path never does). Old segments read 0: not fleet-wide. */
#define BRK__PC_FLEET (1ULL << 51)
/* bit 52: an implicit pace, made by its breaker at the first rate-limit
 * answer (layout 4, issue 21; its name is the breaker's + BRK__IMPLICIT_SUFFIX). */
#define BRK__PC_IMPLICIT (1ULL << 52)
/* the cut word's GROWING bit: the float's sign bit (a limit is > 0) */
#define BRK__CUT_GROW (1ULL << 23)
#define BRK__CUT_W_BITS 24u
#define BRK__CUT_MS_MAX ((1ULL << (64u - BRK__CUT_W_BITS)) - 1u)
#define BRK__CUT_MS(w) ((uint64_t)(w) >> BRK__CUT_W_BITS)
#define BRK__CUT_W(w) ((uint32_t)((w) & ((1u << BRK__CUT_W_BITS) - 1u)))
#define BRK__CUT_MAKE(ms, w24) \
	((((uint64_t)(ms) & BRK__CUT_MS_MAX) << BRK__CUT_W_BITS) | \
	 ((uint64_t)(w24) & ((1u << BRK__CUT_W_BITS) - 1u)))
#define BRK__SINCE_N_BITS 24u
#define BRK__SINCE_N_MAX ((1u << BRK__SINCE_N_BITS) - 1u)
#define BRK__SINCE_MS(w) ((uint64_t)(w) >> BRK__SINCE_N_BITS)
#define BRK__SINCE_N(w) ((uint32_t)((w) & BRK__SINCE_N_MAX))
#define BRK__SINCE_MAKE(ms, n) \
	((((uint64_t)(ms) & BRK__CUT_MS_MAX) << BRK__SINCE_N_BITS) | \
	 ((uint64_t)(n) & BRK__SINCE_N_MAX))
#define BRK__EST_SLOT(w) ((uint64_t)(w) >> 32)
#define BRK__EST_CUR(w) ((uint32_t)(((w) >> 16) & 0xffffu))
#define BRK__EST_PREV(w) ((uint32_t)((w) & 0xffffu))
#define BRK__EST_MAKE(slot, cur, prev) \
	((((uint64_t)(slot) & 0xffffffffu) << 32) | \
	 (((uint64_t)(cur) & 0xffffu) << 16) | ((uint64_t)(prev) & 0xffffu))

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

_Static_assert(BRK__BK_END <= BRK__BUCKET_UNITS * BRK__UNIT_WORDS &&
	       BRK__BG_END <= BRK__BUDGET_UNITS * BRK__UNIT_WORDS, "words fit the kind's units");
_Static_assert(BRK__BK_CFG < BRK__UNIT_WORDS * 2 && BRK__BG_CFG < BRK__UNIT_WORDS * 2,
	       "settings after the name, in unit 1");
_Static_assert(BRK__BK_TAT % BRK__UNIT_WORDS == 0 && BRK__BK_TAKEN % BRK__UNIT_WORDS == 0,
	       "bucket units");
_Static_assert(BRK__BG_TAT % BRK__UNIT_WORDS == 0 && BRK__BG_CURSOR % BRK__UNIT_WORDS == 0 &&
	       BRK__BG_DEPOSITS % BRK__UNIT_WORDS == 0 &&
	       BRK__BG_RING % BRK__UNIT_WORDS == 0, "budget units");
_Static_assert(BRK__BG_RETRIES + 3 < BRK__BG_RING, "counters before the ring");
_Static_assert(BRK__BG_END == BRK__BG_RING + BRK__BG_SLICES, "ring");
_Static_assert(BRK__BG_SLICE_MS * BRK__BG_SLICES == BRK_BUDGET_TTL_MS &&
	       BRK__BG_SLICE_MS >= 1, "TTL in whole slices");
/* every slice of a 64-bit ns clock fits the slice field: nothing wraps */
_Static_assert(UINT64_MAX / ((uint64_t)BRK__BG_SLICE_MS * 1000000u) <= BRK__BGW_SLICE_MAX,
	       "slice field holds every slice");
/* a slice holds at least 5000 deposits at the largest ratio (100) */
_Static_assert(BRK__BGW_MILLI_MAX >= 5000u * ((uint64_t)BRK_BUDGET_MAX_RATIO * 1000u),
	       "milli field");
_Static_assert(BRK__BK_TAKEN - BRK__BK_TAT >= BRK__UNIT_WORDS &&
	       BRK__BK_TAT - BRK__BK_CFG >= 1 &&
	       BRK__BG_CURSOR - BRK__BG_TAT >= BRK__UNIT_WORDS, "TAT alone in its unit");
_Static_assert(BRK__BKC_T_BITS + BRK__BKC_BURST_BITS == 64, "bucket cfg word");
_Static_assert((1u << BRK__BKC_BURST_BITS) > 1000000u, "burst field holds 1e6");
_Static_assert(BRK__BKC_T_MAX >= 10000000000000ULL, "T field holds 1e13 ns");
_Static_assert(BRK__BGC_FLOOR_MAX >= 1000000000u, "floor field holds 1e6/s");
_Static_assert(BRK__BGC_RATIO_MAX >= 100000u, "ratio field holds 100");
/* paced bucket words: in the bucket's run, none on an idle or free word */
_Static_assert(BRK__BK_END == BRK__XW_UNIT(3) + 3u, "idle words stay at 27, 28");
_Static_assert(BRK__BK_PACE < BRK__BK_TAT && BRK__BK_CUT < BRK__BK_TAT &&
	       BRK__BK_CUT > BRK__BK_CFG, "pace and cut in unit 1, after the settings");
_Static_assert(BRK__BK_SINCE < BRK__BK_TAKEN && BRK__SINCE_N_BITS == BRK__CUT_W_BITS && BRK__BK_TAT_NORMAL > BRK__BK_TAT,
	       "unit 2: the TATs and the report words");
_Static_assert(BRK__BK_LAST_DENIED_MS < BRK__BUCKET_UNITS * BRK__UNIT_WORDS - 1u &&
	       BRK__BK_HIGH > BRK__BK_END + 1u, "unit 3 free words");
_Static_assert(BRK__BK_SERVED < BRK__BUCKET_UNITS * BRK__UNIT_WORDS &&
	       BRK__BK_RESV < BRK__BK_TAKEN && BRK__BK_SINCE < BRK__BK_RESV &&
	       BRK__BK_CUTQ < BRK__BK_TAT && BRK__BK_CUT < BRK__BK_CUTQ,
	       "reservation words in free words of units 1, 2, 3");
_Static_assert(BRK__PC_RESERVE_SHIFT == BRK__BKC_T_BITS &&
	       BRK__PC_RESERVE_SHIFT + 7u < 63u, "reserve bits 44..50");
_Static_assert(BRK__PC_RESERVE_MASK >= 90u, "reserve field holds 90");
_Static_assert(BRK__PC_FLEET > ((uint64_t)BRK__PC_RESERVE_MASK << BRK__PC_RESERVE_SHIFT) &&
	       BRK__PC_FLEET < BRK__PC_PACED, "fleet bit between reserve and PACED");
/* cut ms: 40 bits of ms = 34 years of a segment's clock */
_Static_assert(BRK__CUT_MS_MAX >= 1000ULL * 86400u * 365u * 30u, "cut ms field");

#endif /* BRK_LAYOUT_H */
