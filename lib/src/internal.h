/*
 * internal.h - private declarations shared by libbreaker's source files.
 * Internal names carry a double underscore (brk__); public ones never do.
 */
#ifndef BRK_INTERNAL_H
#define BRK_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "atomics.h"


#include "breaker.h"
#include "layout.h"


/* A bounded CAS loop gives up after this many tries (docs/design/segment.md
 * "Atomics"): enough
 * that 8 processes preempting each other on 2 cores never exhaust it (64
 * did, about once per million GCRA takes), small enough (tens of µs) that
 * a misbehaving writer cannot livelock anyone. */
#define BRK__CAS_TRIES 256
/* brk__gcra_take(): a take that keeps losing its CAS this long (segment
 * clock) gives up; losing means another writer moved the TAT, so only a
 * writer that never stops keeps it there (gcra_core.c). */
#define BRK__GCRA_CONTEND_NS 1000000000ull

struct brk__slots; /* lease slot sets, below */

struct brk_segment {
	char shm_name[256];
	int readonly;
	int disabled;             /* $BREAKERD_DISABLED=1 kill-switch */
	uint64_t last_scan_ns;    /* last caller-side dead-owner scan */
	uint8_t *base;            /* mapping */
	uint64_t size;            /* mapped bytes (validated == header) */
	uint32_t mode, uid, gid;  /* fstat of the shm object at attach */
	struct brk__header *hdr;
	/* geometry copied once at attach, after validation; never re-read */
	uint32_t capacity;
	uint32_t index_slots;
	uint32_t event_slots;
	uint32_t arena_units;     /* header.arena_units */
	uint64_t *index;
	uint8_t *arena;           /* unit 0 of the arena */
	struct brk__event *events;
	uint64_t *lmap;           /* lease map: level 0, then level 1 */
	uint32_t lmap_l0_words;
	uint32_t lmap_l1_words;
	/* what the last brk_reclaim() on this handle did (set once at its
	 * end; tests read them) */
	uint64_t reclaim_visits;       /* records visited */
	uint64_t reclaim_owner_checks; /* owner liveness checks (kill + /proc) */
	uint64_t epoch_ns;        /* header.created_mono_ns */
	uint64_t epoch_wall_ns;   /* header.created_wall_ns */
	brk_clock_fn clock;
	void *clock_ctx;
	brk_random_fn random;
	void *random_ctx;
	struct brk__cache *cache; /* name -> struct brk_breaker (cache.c) */
	struct brk__subtree_cache *subtree; /* subtrees walked (subtree.c) */
	uint64_t serial;          /* unique per handle in this process (a
	                             thread's origin names the handle by it:
	                             origin.c) */
};

/* What a handle resolved: immutable once published (refresh.c makes a
 * new one; all are freed with the handle). */
struct brk__view {
	struct brk__record *rec;
	uint32_t idx;
	uint64_t head;             /* rec's head word when resolved */
	struct brk__view *older;   /* the views this one replaced */
};

struct brk_breaker {
	brk_segment *seg;
	/* The record the handle resolved, re-resolved by name when its head
	 * word no longer equals view->head (retire.c, refresh.c). Threads
	 * share a handle: one atomic pointer, read through brk__brec(). */
	struct brk__view *view;
	struct brk__view view0;    /* the first one */
	int kind;                  /* enum brk_kind of the handle */
	int create;                /* from a get-or-create: re-create */
	struct brk__init_copy {
		struct brk_config cfg;
		int has_cfg;
		uint32_t n_ext;
		struct { uint32_t idx; uint64_t val; } ext[4];
	} *init;                   /* the original settings (heap; NULL:
	                              the defaults), freed with the handle */
	uint64_t hash;
	char name[BRK_NAME_MAX + 1];
	/* the breaker's implicit pace NAME:pace (implicit.c): the handle,
	 * once found or made (an atomic pointer: threads share a handle) */
	brk_bucket *ipace;
	/* hierarchy: records of the ancestors "a", "a/b" of "a/b/c" (NULL
	 * while absent; re-resolved when the record count has changed) */
	uint32_t n_parents;
	uint32_t parents_missing;
	uint64_t parents_at;
	/* one per '/' of the name (cache.c allocates exactly that many;
	 * keep this member last) */
	struct brk__record *parents[];
};

/* The record a handle resolved (one load; see struct brk_breaker). */
static inline struct brk__record *brk__brec(const brk_breaker *b)
{
	return uatomic_read(&b->view)->rec;
}

static inline uint32_t brk__bidx(const brk_breaker *b)
{
	return uatomic_read(&b->view)->idx;
}

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
/* What brk__owner_dead() learns of process @pid (kill(pid, 0), then
 * /proc/PID/stat): dead (no such pid, or a zombie), alive with its start
 * time unreadable (kept), or alive with *@ticks = its start time (low 40
 * bits). reclaim.c caches it for one scan. */
enum { BRK__PROC_DEAD = 1, BRK__PROC_UNKNOWN, BRK__PROC_ALIVE };
int brk__proc_probe(int32_t pid, uint64_t *ticks);
/* The owner verdict (1: dead) from a probe @v of its pid with @ticks, for
 * a lease whose owner started at @start_ticks (@start_known: written). */
static inline int brk__proc_verdict(int v, uint64_t ticks, uint64_t start_ticks,
				    int start_known)
{
	return v == BRK__PROC_DEAD ||
	       (v == BRK__PROC_ALIVE && start_known && ticks != start_ticks);
}
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

/* The brk_breaker_update() field bit of setting @k (BRK_CFG_*). */
#define BRK__BIT(k) (1ULL << (k))
/* Setting @k set to @v inside its packed word @w (config.c). */
uint64_t brk__cfg_field_put(uint64_t w, enum brk__cfg k, uint64_t v);
/* The @i-th setting (enum brk__cfg order) of @c, read and written. */
uint64_t brk__cfg_member_get(const struct brk_config *c, int i);
void brk__cfg_member_put(struct brk_config *c, int i, uint64_t v);

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
/* brk_info_at_sz() of record @idx (< capacity, checked by the caller)
 * without its name-index check: for a caller that just read the index
 * slot pointing at it (iter.c), which checks the slot again after. */
int brk__info_ref_sz(brk_segment *s, uint32_t idx, struct brk_info *out,
		     size_t size);
int brk__bucket_info(brk_bucket *k, struct brk_bucket_info *out);
/* ms since @r's last state transition (brk_info.last_change_age_ms);
 * UINT64_MAX: never. */
uint64_t brk__change_age_ms(brk_segment *s, const struct brk__record *r);
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

/* The record at index slot value @w (live), NULL if out of bounds. */
struct brk__record *brk__slot_rec(brk_segment *s, uint64_t w);
/* Insert @name -> record @idx (under the index lock): the first tomb or
 * empty slot of the chain. */
int brk__index_insert(brk_segment *s, uint64_t h, uint32_t idx);
/* The index slot position of live record @idx for @name, or -ENOENT. */
int brk__index_pos(brk_segment *s, const char *name, uint64_t h,
		   uint32_t idx, uint32_t *pos);

/* ---- the index lock (idxlock.c) ---------------------------------------- */
/* Take the index lock: bounded wait (real time), steals from a dead
 * holder and repairs its half-done mutation. 0 or -BRK_ECONTENDED. */
int brk__index_lock(brk_segment *s);
void brk__index_unlock(brk_segment *s);

/* ---- runs of arena units (alloc.c) ------------------------------------- */
/* A never-used run of @units (CAS bump of header.arena_next, lock-free):
 * *@ref its first unit. -ENOSPC: the arena is full; -BRK_ECORRUPT. */
int brk__alloc(brk_segment *s, uint32_t units, uint32_t *ref);
/* Give back a run that was never published (a lost race for a block):
 * counted in header.leaked_units, never reused. */
void brk__free(brk_segment *s, uint32_t ref, uint32_t units);
/* Under the index lock: a record run of @kind, a retired one past its
 * quarantine (oldest first; its head is the retired head with the last
 * generation, its extension blocks still linked), else a new run (head
 * 0). Records the creation intent (idxlock.c). -ENOSPC: none. */
int brk__alloc_record(brk_segment *s, uint32_t kind, uint32_t *ref);
/* Under the index lock: retired record @ref of @kind (head already
 * BRK__KIND_RETIRED) goes on its kind's free list, blocks and all. */
void brk__free_record(brk_segment *s, uint32_t ref, uint32_t kind);
/* 1 if record @ref is on @kind's free list (walks it; repair path only). */
int brk__free_has(brk_segment *s, uint32_t ref, uint32_t kind);
/* Rebuild the free lists' tails after a holder died mid-push. */
void brk__free_repair(brk_segment *s);

/* ---- retirement (retire.c) and handle refresh (refresh.c) ------------- */
/* The activity sum of a record (kind from its head @head). */
uint64_t brk__activity(const struct brk__record *r, uint64_t head);
/* Is the handle's record still the one it resolved? Re-resolve if not.
 * 0, or a lookup / create error (-ENOENT: retired, handle from a find). */
int brk__refresh(brk_breaker *b);
/* The same with explicit creation settings (@create 0: lookup only). */
struct brk__init;
int brk__refresh_with(brk_breaker *b, int create, const struct brk__init *init);
/* Free the views a handle's refreshes made (with the handle). */
void brk__views_free(brk_breaker *b);
/* Resolve @name to a live record of @kind (creating it with @init if
 * @create): *@idx and its head word *@head, checked to still name @name.
 * Waits out a retirement in progress (takes the index lock). */
struct brk__init;
int brk__resolve(brk_segment *s, const char *name, uint64_t h, int create,
		 int kind, const struct brk__init *init, uint32_t *idx,
		 uint64_t *head);
/* Internal: a lease was claimed on a record whose head changed meanwhile
 * (given back); re-resolve and retry. Never returned to a caller. */
#define BRK__EREHEAD (-EXDEV)

/* ---- the per-process handle cache (cache.c) --------------------------- */
struct brk__cache {
	struct brk__cache_table *table; /* current; replaced by a grow */
	int32_t lock;                   /* inserts: 0, or the owner's pid */
	size_t count;                   /* handles cached (under the lock) */
};
/* Wake every process blocked in brk_events_wait() (event_wait.c). */
void brk__events_wake(brk_segment *s);

/* Records this thread has created (index.c create_locked(); read by
 * brk_breaker_get_ex() before and after its get). */
extern __thread uint64_t brk__created_here;

int brk__handle(brk_segment *s, const char *name, int create, int kind,
		const struct brk__init *init, brk_breaker **out);
/* The cached handle of @name if it is cached and of @kind: 0 (*out set);
 * -ENOENT for anything else (not cached, bad arguments, another kind):
 * the caller takes the full path, brk__handle(), which says what it is. */
int brk__handle_cached(brk_segment *s, const char *name, int kind,
		       brk_breaker **out);
int brk__cache_init(brk_segment *s);
void brk__cache_free(brk_segment *s);
/* Handles cached, and bytes of the cache's tables (bench/, tests). */
size_t brk__cache_count(brk_segment *s);
size_t brk__cache_bytes(brk_segment *s);

/* ---- leases (lease.c) ------------------------------------------------- */
/* Claim a free slot of @slots' first @n slots of record @ref (marked in
 * the lease map before and after the claim). Returns the token, 0 if
 * none. */
uint64_t brk__lease_claim(brk_segment *s, uint32_t ref,
			  const struct brk__slots *slots, uint32_t n,
			  uint32_t gen, uint32_t cur_tag,
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

/* ---- the lease map (leasemap.c; layout.h) ----------------------------- */
/* The bits of the lease map: one per record ref. The one function every
 * size of the map goes through (layout.h's brk__lmap_nbits()). */
static inline uint32_t brk__lmap_bits(const brk_segment *s)
{
	return brk__lmap_nbits(s->arena_units);
}
/* Mark record @ref as possibly holding a lease: plain loads first, an
 * atomic OR (then a full barrier) only of a clear level-0 or level-1 bit.
 * A claimer calls it before its claim and again after it (lease.c). */
void brk__lmap_mark(brk_segment *s, uint32_t ref);
/* 1 if @ref's level-0 bit is set. */
int brk__lmap_test(const brk_segment *s, uint32_t ref);
/* Clear @ref's level-0 bit, then a full barrier. */
void brk__lmap_clear(brk_segment *s, uint32_t ref);
/* Clear the level-1 bit of level-0 word @w0 if that word is 0: clear,
 * full barrier, re-read the word, re-set the bit if it became non-zero. */
void brk__lmap_settle(brk_segment *s, uint32_t w0);
/* Level-0 word @w (0 past the map). */
uint64_t brk__lmap_l0(const brk_segment *s, uint32_t w);
/* Level-1 word @w (0 past the map). */
uint64_t brk__lmap_l1(const brk_segment *s, uint32_t w);

/* ---- reclaim (reclaim.c) ---------------------------------------------- */
/* A refused caller frees leases of dead owners of @b (rate-limited per
 * process). Returns how many it freed. */
int brk__caller_reclaim(brk_breaker *b);

/* ---- the state word and its transitions (state.c) -------------------- */
uint64_t brk__cooling_ms(const struct brk__record *r, uint32_t level);
/* @ms capped at @r's max_open_ms (issue 22): the one cap of every cooling
 * period, whatever its source (the doubling rule, a Retry-After in seconds
 * or as a date, a "try again in N seconds" text, trip, a fleet peer's open
 * or cool_until). brk__open_for() and brk__raise_cool_until() apply it,
 * and nothing else writes a deadline, so no source can bypass it; callers
 * that compare against a deadline first call it themselves. */
uint64_t brk__cooling_cap(const struct brk__record *r, uint64_t ms);
/* The open-until deadline (ms since the segment epoch) of the OPEN state
 * word @w of @r; 0 (expired) if its slot does not hold it (the state has
 * moved on, or a corrupt segment). */
uint64_t brk__open_until(const struct brk__record *r, uint64_t w);
/* Deadlines as a reader may trust them: every writer caps a period at
 * max_open_ms (brk__cooling_cap()), so a deadline further ahead of now
 * is a corrupt or hostile word (or max_open was lowered since). These
 * return it brought back to now + max_open; with @repair (a writable
 * segment's gate) they also store that, one CAS, so the period ends. */
uint64_t brk__open_until_now(struct brk__record *r, uint64_t w,
			     uint64_t rel_ms, int repair);
uint64_t brk__cool_until_now(struct brk__record *r, uint64_t now_ns,
			     int repair);
/* One CAS from @old to (@to, @level, gen + 1), an OPEN state with the
 * deadline @until (ms since the segment epoch). 1 if we did it. */
int brk__transition(brk_segment *s, struct brk__record *r, uint64_t old,
		    int to, uint32_t level, uint64_t until, int reason,
		    uint64_t value);
/* Open from @old for @ms (capped: brk__cooling_cap()) from @now (ns); the
 * event's value is the capped ms. 1 if we did it. */
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
/* brk_reset()'s transition to CLOSED; @changed: it ended a cooling or a
 * forced mode (noted as a change like a transition). 0 or -BRK_ECONTENDED. */
int brk__reset_state(brk_segment *s, struct brk__record *r, int changed);

/* ---- priority acquire (acquire.c) ------------------------------------- */
/* brk_acquire() with enum brk_priority @priority (anything but
 * BRK_PRIORITY_HIGH is normal): a high-priority claim may take the
 * bulkhead permits reserve_pct keeps back. brk_admit() uses it. */
int brk__acquire_prio(brk_breaker *b, brk_permit *p, struct brk_refusal *why,
		      int priority);
/* OR-ed into brk__acquire_prio()'s @priority: do not take from the
 * breaker's implicit pace (brk_admit() reserved its slot there itself,
 * breaker.h "Fair waits"). */
#define BRK__ACQ_NO_IPACE 0x100

/* 1 if a bulkhead permit is free for enum brk_priority @prio now (the
 * count take_permit() makes, without a claim; 1 without a bulkhead). */
int brk__permit_free(brk_segment *s, struct brk__record *r, int prio);

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

/* A head word's kind is one a handle may use. */
static inline int brk__head_live(uint64_t head)
{
	uint32_t k = BRK__HEAD_KIND(head);

	return k == BRK_KIND_BREAKER || k == BRK_KIND_BUCKET || k == BRK_KIND_BUDGET;
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

/* ---- lease slot sets: probes and permits (blocks.c) ------------------- */
/* The ref (first unit) of the record at @r. */
uint32_t brk__ref_of(const brk_segment *s, const struct brk__record *r);
/* The block of @units at @ref if it carries @r's owner tag of kind @what
 * (layout.h BRK__BTAG), else NULL: the only way to follow a link of
 * ext_refs or permit_refs. */
uint64_t *brk__tagged_block(const brk_segment *s, const struct brk__record *r,
			    uint32_t ref, uint32_t units, unsigned what);
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
/* The permit slots a config's bulkhead needs (blocks.c, room.c):
 * max_concurrent, or BRK_MAX_CONCURRENT for auto with max_concurrent 0. */
static inline uint32_t brk__bulkhead_slots(const struct brk_config *c)
{
	return c->max_concurrent ? c->max_concurrent
				 : c->concurrency_auto ? BRK_MAX_CONCURRENT : 0;
}

/* The primary permit block's control unit (layout.h enum brk__permit_ctl:
 * BRK__PQ_* and BRK__AC_* words), or NULL: no primary block, or a link
 * that is not this record's permit block. */
uint64_t *brk__permit_ctl(brk_segment *s, const struct brk__record *r);
/* Probe slot / permit slot @i of @r, or NULL (no such slot). */
struct brk__lease *brk__probe_at(brk_segment *s, struct brk__record *r, uint32_t i);
struct brk__lease *brk__permit_at(brk_segment *s, struct brk__record *r, uint32_t i);
/* brk__permit_at() and, in *@ctl, brk__permit_ctl() from one look at
 * the blocks (brk_release(): the permit to free, the queue to wake). */
struct brk__lease *brk__permit_at_ctl(brk_segment *s, struct brk__record *r,
				      uint32_t i, uint64_t **ctl);
/* The window extension words (BRK__WIN_*, BRK__QUORUM*), or NULL. */
uint64_t *brk__window_words(brk_segment *s, const struct brk__record *r);
/* Units of @r's linked extension blocks (for brk_info.record_bytes). */
uint32_t brk__ext_units(brk_segment *s, const struct brk__record *r);

/* ---- hold-time histogram (hold.c) -------------------------------------- */
/* The histogram ref kept in hold word or free stamp @w, bounds-checked
 * (0: none). Inline here, beside brk__block(), because the free list
 * (alloc.c) keeps it in a retired breaker's stamp, and hold.c allocates
 * from alloc.c: a function of hold.c would tie the two files in a circle. */
static inline uint32_t brk__hold_kept(const brk_segment *s, uint64_t w)
{
	uint32_t ref = BRK__HOLD_REF(w);

	if (!ref && !(w & BRK__HOLD_LINK) && !(w & BRK__HOLD_NOROOM))
		ref = BRK__FREE_STAMP_REF(w); /* a free record's stamp */
	return brk__block(s, ref, BRK__HOLD_UNITS) ? ref : 0;
}
/* @r's histogram block, or NULL (none, no room, corrupt link). */
uint64_t *brk__hold_words(const brk_segment *s, const struct brk__record *r);
/* Count one hold of @ns ns (brk_release()). */
void brk__hold_note(brk_segment *s, struct brk__record *r, uint64_t ns);
/* A reused record's histogram back to zero, its link kept (index.c). */
void brk__hold_clear(brk_segment *s, struct brk__record *r);
void brk__hold_read(const brk_segment *s, const struct brk__record *r,
		    struct brk_hold_info *out);
/* Allocate and link the blocks config @c needs that @r lacks (creator
 * before publication, or an update before it writes the settings).
 * Returns 0 or -ENOSPC (arena full; nothing linked by us is lost). */
int brk__ensure_blocks(brk_segment *s, struct brk__record *r,
		       const struct brk_config *c);
/* Link the window extension block to live or new record @r if it has
 * none (health words, health.c). 0 or -ENOSPC / -BRK_ECORRUPT. */
int brk__ensure_window(brk_segment *s, struct brk__record *r);
/* Give back every extension block of an unpublished record @r. */
void brk__free_blocks(brk_segment *s, struct brk__record *r);

#endif /* BRK_INTERNAL_H */
