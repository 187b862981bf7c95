/*
 * internal.h - private declarations shared by libbreaker's source files.
 * Internal names carry a double underscore (brk__); public ones never do.
 */
#ifndef BRK_INTERNAL_H
#define BRK_INTERNAL_H

#include <errno.h>
#include <stdint.h>

#include "atomics.h"


#include "breaker.h"
#include "layout.h"

#include <urcu/rculfhash.h>

/* A bounded CAS loop gives up after this many tries (docs/design.md
 * "Atomics"): enough
 * that 8 processes preempting each other on 2 cores never exhaust it (64
 * did, about once per million GCRA takes), small enough (tens of µs) that
 * a misbehaving writer cannot livelock anyone. */
#define BRK__CAS_TRIES 256

struct brk__slots; /* lease slot sets, below */

struct brk_segment {
	char shm_name[256];
	int readonly;
	int disabled;             /* $BREAKERD_DISABLED=1 kill-switch */
	uint64_t last_scan_ns;    /* last caller-side dead-owner scan */
	uint8_t *base;            /* mapping */
	uint64_t size;            /* mapped bytes (validated == header) */
	struct brk__header *hdr;
	/* geometry copied once at attach, after validation; never re-read */
	uint32_t capacity;
	uint32_t index_slots;
	uint32_t event_slots;
	uint32_t arena_units;     /* header.arena_units */
	uint64_t *index;
	uint8_t *arena;           /* unit 0 of the arena */
	struct brk__event *events;
	uint64_t epoch_ns;        /* header.created_mono_ns */
	uint64_t epoch_wall_ns;   /* header.created_wall_ns */
	brk_clock_fn clock;
	void *clock_ctx;
	brk_random_fn random;
	void *random_ctx;
	struct cds_lfht *cache;   /* name -> struct brk_breaker (rculfhash, bp) */
};

struct brk_breaker {
	brk_segment *seg;
	struct brk__record *rec;
	uint32_t idx;              /* the record's ref (first arena unit) */
	uint64_t hash;
	char name[BRK_NAME_MAX + 1];
	struct cds_lfht_node node; /* in seg->cache */
	int ready;                 /* set (release) before publication */
	/* hierarchy: records of the ancestors "a", "a/b" of "a/b/c" (NULL
	 * while absent; re-resolved when the record count has changed) */
	uint32_t n_parents;
	uint32_t parents_missing;
	uint64_t parents_at;
	struct brk__record *parents[BRK_NAME_MAX / 2 + 1];
};

/* ---- time ------------------------------------------------------------ */
static inline uint64_t brk__sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t brk__ms_to_ns(uint64_t ms)
{
	return ms > UINT64_MAX / 1000000u ? UINT64_MAX : ms * 1000000u;
}

static inline uint64_t brk__now(const brk_segment *s)
{
	return s->clock(s->clock_ctx);
}

/* The clock, read at most once per call and only where a rule needs it
 * (*now == 0: not read yet). */
static inline uint64_t brk__lazy_now(const brk_segment *s, uint64_t *now)
{
	if (!*now)
		*now = brk__now(s);
	return *now;
}

/* ms since the segment epoch. Never saturates: a 64-bit ns clock is at
 * most 2^44.1 ms, inside the 45-bit until field (layout.h). */
static inline uint64_t brk__rel_ms(const brk_segment *s, uint64_t now_ns)
{
	return now_ns > s->epoch_ns ? (now_ns - s->epoch_ns) / 1000000u : 0;
}

/* A deadline @dur_ms after @rel_ms (dur_ms <= BRK_MAX_DURATION_MS). */
static inline uint64_t brk__until_add(uint64_t rel_ms, uint64_t dur_ms)
{
	uint64_t u = brk__sat_add(rel_ms, dur_ms);
	return u > BRK__UNTIL_MASK ? BRK__UNTIL_MASK : u;
}

/* ---- parsing (duration.c) ---------------------------------------------- */
/* The digits at *@p in @base (2..36), into @v; *@p is left after the last
 * digit (after all of them, also on overflow). Pure, async-signal-safe.
 * Returns 0, -EINVAL (no digit at *@p) or -ERANGE (above UINT64_MAX). */
int brk__parse_digits(const char **p, int base, uint64_t *v);

/* ---- process identity (ident.c) -------------------------------------- */
/* This process's identity, brk__self(), and the clock: ident.h. */
uint32_t brk__next_nonce(void);
/* 64 random bits from the library's one generator (ident.c): per-thread
 * xorshift64*, reseeded in a fork()ed child. Not cryptographic. */
uint64_t brk__random_u64(void);
/* The segment's injected random source if any, else brk__random_u64(). */
uint64_t brk__random(const brk_segment *s);
/* 0: alive; 1: dead (no such pid or another start time). */
int brk__owner_dead(int32_t pid, uint64_t start_ticks, int start_known);
int brk__read_start_ticks(int32_t pid, uint64_t *ticks);
/* /proc/PID/task/TID/stat: start time (field 22) and state (field 3). */
int brk__read_task_stat(int32_t pid, int32_t tid, uint64_t *ticks, char *state);
/* Leases bound to a thread (lease_thread.c): 1 if @l, owned by the live
 * process of token @owner, is bound to a thread that has exited (or whose
 * tid now names another thread). */
int brk__lease_thread_dead(const struct brk__lease *l, uint64_t owner);

/* ---- config (config.c) ------------------------------------------------ */
void brk__config_store(struct brk__record *r, const struct brk_config *c);
/* Load and clamp (the segment is untrusted). */
void brk__config_load(const struct brk__record *r, struct brk_config *c);
/* A setting (packed words, layout.h): one load, a shift and a mask. */
static inline uint64_t brk__cfg_get(uint64_t word, struct brk__cfg_field f)
{
	return (word >> f.shift) & ((1ULL << f.bits) - 1u);
}

static inline uint64_t brk__cfg(const struct brk__record *r, enum brk__cfg k)
{
	struct brk__cfg_field f = brk__cfg_pos(k);

	return brk__cfg_get(uatomic_read(&r->cfg[f.word]), f);
}

/* ---- caller structs of any size (config.c, segment.c, info.c, gcra.c,
 * budget.c; the byte copies are abi.c's) ----------------------------- */
/* @user normalised to this library's struct brk_config (size set to
 * sizeof): defaults for what the caller lacks. NULL: the defaults.
 * Returns 0, -EINVAL, -E2BIG as brk__struct_in(). */
int brk__config_in(const struct brk_config *user, struct brk_config *out);

/* Fill the settings of @c with the defaults (not c->size). */
void brk__config_defaults(struct brk_config *c);

/* Likewise for struct brk_attach_opts. */
int brk__attach_opts_in(const struct brk_attach_opts *user,
			struct brk_attach_opts *out);

/* The full-size fillers behind the _sz functions (write sizeof(*out)). */
int brk__segment_info(brk_segment *seg, struct brk_segment_info *out);
int brk__breaker_info(brk_breaker *b, struct brk_info *out);
int brk__info_at(brk_segment *seg, uint32_t idx, struct brk_info *out);
int brk__bucket_info(brk_bucket *k, struct brk_bucket_info *out);
int brk__budget_info(brk_budget *g, struct brk_budget_info *out);


/* A setting clamped to [@lo, @hi] (the segment is untrusted). */
static inline uint32_t brk__cfg_u32(const struct brk__record *r,
				    enum brk__cfg k, uint32_t lo, uint32_t hi)
{
	uint64_t v = brk__cfg(r, k);

	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/* A duration setting, clamped to BRK_MAX_DURATION_MS. */
static inline uint64_t brk__cfg_ms(const struct brk__record *r, enum brk__cfg k)
{
	uint64_t v = brk__cfg(r, k);

	return v > BRK_MAX_DURATION_MS ? BRK_MAX_DURATION_MS : v;
}

/* ---- permits (acquire.c, release.c): brk_permit.flags_ ---------------- */
#define BRK__PERMIT_RELEASED 1u
#define BRK__PERMIT_UNGATED 2u /* admitted by a disabled breaker: no verdict */
#define BRK__PERMIT_REFUSED (BRK__PERMIT_RELEASED | 4u) /* never admitted */

/* ---- counters --------------------------------------------------------- */
static inline void brk__count(struct brk__record *r, enum brk__ctr c)
{
	uatomic_inc(&r->ctr[c]);
}

/* ---- names (names.c) -------------------------------------------------- */
uint64_t brk__hash(const char *name);
/* Copy and validate a record's name from shm into out (64 bytes). */
int brk__record_name(const struct brk__record *r, char *out);

/* ---- the shared name index (index.c) ----------------------------------- */
int brk__lookup(brk_segment *s, const char *name, uint64_t h, uint32_t *idx);
/* The record at @ref if it is a published record: its kind (> 0), with
 * the run inside the arena and the head's units the kind's; 0 if the unit
 * holds no published record (free, unpublished, retired, orphaned);
 * -BRK_ECORRUPT if @ref lies outside the arena or the head is not a
 * record's. */
int brk__ref_kind(brk_segment *s, uint32_t ref);
/* The same for the record of index slot word @w (*ref set when > 0; 0
 * also for empty slots). */
int brk__index_record(brk_segment *s, uint64_t w, uint32_t *ref);
/* Kind-specific words a creator stores before the record is published,
 * so no process ever sees a record of that kind without its settings. */
struct brk__init {
	const struct brk_config *cfg; /* breakers */
	uint32_t n_ext;
	struct { uint32_t idx; uint64_t val; } ext[4]; /* record words
	                                                  (brk__xw()) */
};
int brk__create(brk_segment *s, const char *name, uint64_t h, int kind,
		const struct brk__init *init, uint32_t *idx);

/* ---- the per-process handle cache (cache.c) --------------------------- */
int brk__handle(brk_segment *s, const char *name, int create, int kind,
		const struct brk__init *init, brk_breaker **out);
int brk__cache_init(brk_segment *s);
void brk__cache_free(brk_segment *s);

/* ---- leases (lease.c) ------------------------------------------------- */
uint64_t brk__lease_claim(brk_segment *s, const struct brk__slots *slots,
			  uint32_t n, uint32_t gen, uint32_t cur_tag,
			  uint32_t *slot_out);
int brk__lease_free(struct brk__lease *l, uint64_t token);
/* 1 if the owner tag @tag is older than @cur, modulo the tag width. */
int brk__tag_older(uint32_t tag, uint32_t cur);
/* Claim time of the lease (ms since epoch) if its tags match the owner. */
int brk__lease_claim_ms(const struct brk__lease *l, uint64_t owner,
			uint64_t *claim_ms);
/* Slots [@from, @to) of @slots owned with tag @tag. */
uint32_t brk__lease_count(const struct brk__slots *slots, uint32_t from,
			  uint32_t to, uint32_t tag);

/* ---- reclaim (reclaim.c) ---------------------------------------------- */
/* A refused caller frees leases of dead owners of @b (rate-limited per
 * process). Returns how many it freed. */
int brk__caller_reclaim(brk_breaker *b);

/* ---- the state word and its transitions (state.c) -------------------- */
uint64_t brk__cooling_ms(const struct brk__record *r, uint32_t level);
/* The open-until deadline (ms since the segment epoch) of the OPEN state
 * word @w of @r; 0 (expired) if its slot does not hold it (the state has
 * moved on, or a corrupt segment). */
uint64_t brk__open_until(const struct brk__record *r, uint64_t w);
/* One CAS from @old to (@to, @level, gen + 1), an OPEN state with the
 * deadline @until (ms since the segment epoch). 1 if we did it. */
int brk__transition(brk_segment *s, struct brk__record *r, uint64_t old,
		    int to, uint32_t level, uint64_t until, int reason,
		    uint64_t value);
/* Open from @old for @ms from @now (ns). 1 if we did it. */
int brk__open_for(brk_segment *s, struct brk__record *r, uint64_t old,
		  uint32_t level, uint64_t ms, uint64_t now, int reason);
/* A failed (or reclaimed) probe of HALF_OPEN state @w: re-open with the
 * cooling doubled. */
void brk__probe_failed(brk_segment *s, struct brk__record *r, uint64_t w,
		       uint64_t now);
/* Reclaim a probe lease whose owner word is @owner; counts as a failed
 * probe. Returns 1 if this call freed it. */
int brk__reclaim_probe(brk_segment *s, struct brk__record *r, uint32_t slot,
		       uint64_t owner, int reason);
/* Open from CLOSED state @w by a trip rule, unless the trip quorum says
 * no. */
void brk__open_by_rule(brk_segment *s, struct brk__record *r, uint64_t w,
		       uint64_t now, int reason);
/* brk_reset()'s transition to CLOSED: 0 or -BRK_ECONTENDED. */
int brk__reset_state(brk_segment *s, struct brk__record *r);

/* ---- refusals (refuse.c) ---------------------------------------------- */
/* Refuse a call of @b: count @c on @b, fill @why (jittered wait, the name
 * of @by, or of @b when @by is NULL). Returns @code. */
int brk__refuse(brk_breaker *b, struct brk_refusal *why, enum brk__ctr c,
		int code, uint64_t wait_ms, const struct brk__record *by,
		int cause);

/* ---- hierarchy (parents.c) -------------------------------------------- */
void brk__parents_resolve(brk_breaker *b);
int brk__parents_check(brk_breaker *b, uint64_t *now, struct brk_refusal *why);

/* ---- events (events.c) ------------------------------------------------ */
void brk__event(brk_segment *s, uint32_t rec, const char *name, int from,
		int to, int reason, int32_t pid, uint64_t value);
/* The same for record @r, named from shm ("?" if its name is corrupt). */
void brk__record_event(brk_segment *s, struct brk__record *r, int from,
		       int to, int reason, int32_t pid, uint64_t value);

/* ---- the arena -------------------------------------------------------- */
/* The record at @ref; the caller has bounds-checked ref + units <=
 * s->arena_units. */
static inline struct brk__record *brk__rec(brk_segment *s, uint32_t ref)
{
	return (struct brk__record *)(void *)(s->arena + (uint64_t)ref * BRK__UNIT);
}

static inline uint32_t brk__rec_index(brk_segment *s, const struct brk__record *r)
{
	return (uint32_t)(((const uint8_t *)r - s->arena) / BRK__UNIT);
}

/* The record's words from its start (buckets, budgets: layout.h); the
 * const readers only read through it. */
#define brk__xw(r) ((uint64_t *)(void *)(r))

/* A block of @units units at @ref read from shm (untrusted): its address,
 * or NULL when @ref is 0 (none) or the block does not lie inside the
 * arena. */
static inline void *brk__block(const brk_segment *s, uint32_t ref, uint32_t units)
{
	if (ref == 0 || ref >= s->arena_units || units > s->arena_units - ref)
		return NULL;
	return s->arena + (uint64_t)ref * BRK__UNIT;
}

/* Bump allocator and release of runs (alloc.c). brk__alloc: -ENOSPC when
 * the arena has no run of @units left. */
int brk__alloc(brk_segment *s, uint32_t units, uint32_t *ref);
void brk__free(brk_segment *s, uint32_t ref, uint32_t units);

/* ---- lease slot sets: probes and permits (blocks.c) ------------------- */
/* Up to two runs of slots, numbered 0 .. n[0] + n[1] - 1. */
struct brk__slots {
	struct brk__lease *part[2];
	uint32_t n[2];
};

static inline uint32_t brk__slots_total(const struct brk__slots *set)
{
	return set->n[0] + set->n[1];
}

/* Slot @i of @set (i < brk__slots_total()). */
static inline struct brk__lease *brk__slot(const struct brk__slots *set, uint32_t i)
{
	return i < set->n[0] ? &set->part[0][i] : &set->part[1][i - set->n[0]];
}

/* probe0, then the probe extension if linked. */
void brk__probe_slots(brk_segment *s, struct brk__record *r, struct brk__slots *set);
/* The primary permit block, then the overflow block (none: 0 slots). */
void brk__permit_slots(brk_segment *s, struct brk__record *r, struct brk__slots *set);
/* Probe slot / permit slot @i of @r, or NULL (no such slot). */
struct brk__lease *brk__probe_at(brk_segment *s, struct brk__record *r, uint32_t i);
struct brk__lease *brk__permit_at(brk_segment *s, struct brk__record *r, uint32_t i);
/* The window extension words (BRK__WIN_*, BRK__QUORUM*), or NULL. */
uint64_t *brk__window_words(brk_segment *s, const struct brk__record *r);
/* Units of @r's linked extension blocks (for brk_info.record_bytes). */
uint32_t brk__ext_units(brk_segment *s, const struct brk__record *r);
/* Allocate and link the blocks config @c needs that @r lacks (creator
 * before publication, or an update before it writes the settings).
 * Returns 0 or -ENOSPC (arena full; nothing linked by us is lost). */
int brk__ensure_blocks(brk_segment *s, struct brk__record *r,
		       const struct brk_config *c);
/* Give back every extension block of an unpublished record @r. */
void brk__free_blocks(brk_segment *s, struct brk__record *r);

#endif /* BRK_INTERNAL_H */
