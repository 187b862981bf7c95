/*
 * breaker.h - libbreaker: host-wide circuit breakers, bulkheads and GCRA
 * buckets in a POSIX shared-memory segment.
 *
 * Many worker processes on one host share one cooling state: the first
 * failures open a breaker for all of them, exactly half_open_probes probes
 * (across all processes) test recovery, and a Retry-After received by one
 * worker cools every worker.
 *
 * Conventions (after libuv):
 *  - every function returns 0 (or a count) on success, a negative
 *    errno-style code on error; brk_strerror() explains every code;
 *  - breakerd's own codes (BRK_EOPEN ...) lie above the errno range;
 *  - time on the C API is milliseconds (ms) unless a name ends in _ns;
 *    the library's clock is CLOCK_MONOTONIC in nanoseconds;
 *  - handles are opaque; the segment layout is private.
 *
 * Thread- and process-safety: unless said otherwise, every function that
 * takes a brk_segment or brk_breaker may be called concurrently from any
 * number of threads of any number of processes. Shared state is changed
 * only by single-word atomic operations (liburcu uatomic_cmpxchg, which is
 * a full memory barrier before and after); no lock is ever taken on the
 * segment, so a process killed at any instruction leaves it consistent.
 * Leases it held (probe slots, bulkhead permits) are reclaimed by breakerd
 * (owner dead) or by later callers (probe older than probe_timeout_ms).
 * The owner of a lease is the process, not the thread: a thread that
 * exits holding a permit leaves it held until the process exits or the
 * permit is released, unless the permit was bound to the thread
 * (brk_permit_bind_thread()).
 *
 * The circuit-breaker state machine follows Nygard, "Release It!" (2007),
 * as refined by resilience4j and sony/gobreaker (generations, so results
 * of an older cycle are not counted): see docs/design/semantics.md
 * "Breaker semantics".
 */
#ifndef BREAKER_H
#define BREAKER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* ABI: libbreaker.so.0 (symbol version BREAKER_0)                         */
/* ---------------------------------------------------------------------- */

/*
 * BRK_API marks the public functions: the library is built with
 * -fvisibility=hidden and a version script (lib/libbreaker.map), so
 * libbreaker.so.0 exports exactly the brk_* functions declared here, all
 * under the symbol version BREAKER_0. The baseline in tests/abi/ is the
 * frozen ABI; the 'abi' test suite fails on any incompatible change to it.
 *
 * Growing structs (how a struct can gain fields without breaking a
 * program built against an older breaker.h, or a newer one run against an
 * older libbreaker.so.0). Three rules, one per kind of struct:
 *
 * 1. Input structs filled by an init function (brk_config,
 *    brk_attach_opts) carry their size in the first member, after the
 *    Linux kernel's extensible structs (openat2's struct open_how, clone3,
 *    copy_struct_from_user()). brk_config_init(&c) is a macro that stores
 *    sizeof(c) as the caller's compiler saw it. The library then reads
 *    only the fields that lie wholly inside that size; a field beyond it
 *    (the caller was built against an older header) gets its default.
 *    A size larger than the library's struct is accepted if the unknown
 *    tail is all zero (the caller left the newer fields at their zero
 *    default), else refused with -E2BIG: the caller asked for something
 *    this library cannot do, and silently ignoring it would be worse.
 *    size 0 (a struct zero-initialised by hand, never passed through the
 *    init function) is read as the BREAKER_0 size (BRK_*_SIZE_VER0). A
 *    size below 8, not a multiple of 8 or above BRK_STRUCT_SIZE_MAX is
 *    -EINVAL (an uninitialised struct, most likely).
 *    Chosen because the size travels with the struct: every existing call
 *    form (brk_attach(&o, ...), brk_breaker_get(..., &cfg, ...)) keeps its
 *    signature, and a struct copied or passed on keeps telling its size.
 *
 * 2. Output structs the library fills (brk_info, brk_segment_info,
 *    brk_bucket_info, brk_budget_info, brk_event) are usually declared
 *    uninitialised on the stack, so the size cannot live in them: the
 *    functions that fill them are macros passing sizeof(*out) to a _sz
 *    function (brk_breaker_info(b, &i) is brk_breaker_info_sz(b, &i,
 *    sizeof(i))). The library writes exactly that many bytes: its own
 *    fields up to the caller's size, zeros for any tail it does not know.
 *    It never writes past the caller's size. brk_events_read() uses the
 *    size as the array stride. The functions are also exported under
 *    their plain names (take the address with (brk_breaker_info), or call
 *    them through dlsym/ctypes); those assume the BREAKER_0 size.
 *    Structs embedded in brk_info (config, counters, bucket, budget) sit in
 *    a union with reserved bytes, so they can grow without moving the
 *    fields after them. brk_lease_info (an array element) is frozen.
 *
 * 3. Structs that are neither initialised by the library nor sized by a
 *    macro keep a fixed size with a reserved tail that new fields are
 *    carved from: brk_refusal (often passed as NULL or uninitialised;
 *    the library zeroes it before filling it), brk_result (the library
 *    allocates and zeroes it for brk_call()), brk_reclaim_stats (may be
 *    NULL) and brk_permit (opaque). A field added there must mean
 *    "absent" when 0.
 *
 * Maintainers: add fields only at the end (or in reserved space), never
 * reorder, retype or remove one; add a BRK_*_SIZE_VER<n> when a struct of
 * rule 1 or 2 grows in a release; when a struct embedded in brk_info
 * grows, grow brk_info too and add the pair to the table in lib/src/abi.c
 * (the library tells an older caller's brk_info.config.size from its
 * sizeof(struct brk_info)). Regenerate tests/abi/libbreaker.abi with
 * tests/abi/update-baseline.sh only for a deliberate, compatible change.
 */
#if defined(__GNUC__) || defined(__clang__)
#define BRK_API __attribute__((visibility("default")))
#else
#define BRK_API
#endif

#define BRK_STRUCT_SIZE_MAX 65536u /* largest size a caller may declare */

/* ---------------------------------------------------------------------- */
/* Names, limits and defaults                                               */
/* ---------------------------------------------------------------------- */

#define BRK_NAME_MAX 63                   /* bytes, without the NUL */
#define BRK_HOST_ID_MAX 63                /* a fleet host id, without the NUL */
#define BRK_DEFAULT_SHM "/breakerd"       /* shm object name */
#define BRK_SHM_ENV "BREAKERD_SHM"        /* environment override */
#define BRK_DEFAULT_CAPACITY 1024u        /* records */
#define BRK_MAX_CAPACITY 1048576u         /* records */
#define BRK_MIN_ARENA_BYTES 4096ull       /* brk_attach_opts.arena_bytes */
#define BRK_MAX_ARENA_BYTES (1ull << 30)  /* 1 GiB of record storage */
#define BRK_DEFAULT_MODE 0600u
#define BRK_MAX_PROBES 8u                 /* half_open_probes upper bound */
#define BRK_MAX_CONCURRENT 64u            /* bulkhead permits upper bound */
#define BRK_MAX_FAILURE_THRESHOLD 1000000u /* failure_threshold upper bound */
#define BRK_MAX_SUCCESS_THRESHOLD 1000000u /* success_threshold upper bound */
#define BRK_MAX_MIN_CALLS 1000000000u     /* min_calls upper bound */

#define BRK_DEFAULT_FAILURE_THRESHOLD 5u
#define BRK_DEFAULT_WINDOW_MS 10000u
#define BRK_DEFAULT_MIN_CALLS 20u
#define BRK_DEFAULT_OPEN_MS 60000u
#define BRK_DEFAULT_MAX_OPEN_MS 600000u
#define BRK_DEFAULT_HALF_OPEN_PROBES 1u
#define BRK_DEFAULT_SUCCESS_THRESHOLD 1u
#define BRK_DEFAULT_PROBE_TIMEOUT_MS 30000u
#define BRK_DEFAULT_MAX_WAIT_MS 300000u
#define BRK_DEFAULT_MAX_CONCURRENT 0u     /* 0 = no bulkhead */
#define BRK_DEFAULT_MIN_CONCURRENT 1u     /* floor of a learned limit */
#define BRK_MAX_QUORUM 8u                 /* min_distinct_processes bound */
#define BRK_MAX_RESERVE_PCT 90u           /* reserve_pct bound (breakers and
                                             paces) */
#define BRK_DEFAULT_RESERVE_PCT 0u        /* nothing reserved */
#define BRK_WINDOW_BUCKETS 10u            /* sliding window resolution */
#define BRK_DISABLED_ENV "BREAKERD_DISABLED" /* "1": admit everything */

/* Largest single duration accepted anywhere (2^38 - 1 ms, about 8.7
 * years). Longer values are clamped to it. Deadlines built from it never
 * saturate, at any segment age (docs/design/segment.md "Atomics"). */
#define BRK_MAX_DURATION_MS ((1ULL << 38) - 1)

/* ---------------------------------------------------------------------- */
/* Error codes: functions return their negation (-BRK_EOPEN)                */
/* ---------------------------------------------------------------------- */

enum {
	BRK_EOPEN = 904,     /* refused: breaker open, or half-open with every
	                        probe slot taken */
	BRK_EFULL = 905,     /* refused: bulkhead full (max_concurrent out) */
	BRK_ECOOLING = 906,  /* refused: shared cool-until from a Retry-After */
	BRK_EDEFERRED = 907, /* refused: retry budget exhausted */
	BRK_ESTALE = 908,    /* release not counted: lease reclaimed, breaker
	                        reset or moved to a new generation, permit
	                        released twice or taken by another process */
	BRK_ECORRUPT = 909,  /* segment content fails validation */
	BRK_ECONTENDED = 910, /* a bounded CAS loop gave up (misbehaving or
	                        extreme contention); nothing was changed */
	BRK_ENOTOKENS = 911, /* refused: the GCRA bucket has too few tokens
	                        now; brk_bucket_take() says when it will */
	BRK_EEXPIRED = 912,  /* refused (brk_admit()): the job's deadline
	                        would pass before the wait ends */
	BRK_EUNTRUSTED = 913, /* brk_attach(): the segment's owner is not
	                        trusted (not root, not us, not the system
	                        user breakerd, not named in
	                        $BREAKERD_TRUSTED_OWNERS); not used */
	BRK_ETRUNCATED = 914 /* brk_attach(): the segment is shorter than its
	                        header says (or emptied to 0 bytes after it
	                        was made): never re-initialised silently */
};

/* The environment variable naming more trusted segment owners (user
 * names or uids, comma-separated): see brk_attach(). */
#define BRK_TRUSTED_OWNERS_ENV "BREAKERD_TRUSTED_OWNERS"

/**
 * brk_strerror - describe any code returned by this library.
 * @code: a negative (or positive) errno value or BRK_E* code.
 *
 * Returns a static string; never NULL. Thread-safe.
 */
BRK_API const char *brk_strerror(int code);

/**
 * brk_is_refusal - true for the codes that mean "not admitted, do not call
 * the upstream now": -BRK_EOPEN, -BRK_EFULL, -BRK_ECOOLING,
 * -BRK_EDEFERRED, -BRK_ENOTOKENS, -BRK_EEXPIRED and -BRK_ECONTENDED.
 * Callers must not retry these immediately.
 */
BRK_API int brk_is_refusal(int code);

/* ---------------------------------------------------------------------- */
/* Segment                                                                  */
/* ---------------------------------------------------------------------- */

typedef struct brk_segment brk_segment;
typedef struct brk_breaker brk_breaker;

/** A clock: returns CLOCK_MONOTONIC-like nanoseconds. Must never go back. */
typedef uint64_t (*brk_clock_fn)(void *ctx);
/** A random source: returns 64 uniformly random bits. */
typedef uint64_t (*brk_random_fn)(void *ctx);

enum brk_attach_flags {
	BRK_ATTACH_READONLY = 1u << 0, /* map read-only; needs read permission
	                                  only; never creates */
	BRK_ATTACH_NOCREATE = 1u << 1, /* fail with -ENOENT if it is absent */
	BRK_ATTACH_NOPROCESS = 1u << 2, /* skip the pid/time namespace check
	                                  (inspection tools only) */
	BRK_ATTACH_REPAIR = 1u << 3    /* supervisor only: a segment whose
	                                  creator died before publishing it
	                                  (never sized, or magic still 0 after
	                                  init_wait_ms) is unlinked and created
	                                  anew */
};

struct brk_attach_opts {
	uint32_t size;          /* sizeof(struct brk_attach_opts) as the caller
	                           was compiled: set by brk_attach_opts_init() */
	const char *shm_name;   /* NULL: $BREAKERD_SHM, else "/breakerd" */
	uint32_t capacity;      /* records, used only when creating; 0: 1024 */
	uint32_t mode;          /* permission bits when creating; 0: 0600 */
	int64_t gid;            /* group when creating; -1: leave as is */
	uint32_t flags;         /* enum brk_attach_flags */
	uint32_t init_wait_ms;  /* how long to wait for a creator to finish
	                           initialising; 0: 2000 */
	brk_clock_fn clock;     /* NULL: CLOCK_MONOTONIC (vDSO, no syscall) */
	void *clock_ctx;
	brk_random_fn random;   /* NULL: per-thread xorshift seeded from
	                           pid, thread and time */
	void *random_ctx;
	char *errbuf;           /* optional: a one-line message naming the
	                           segment and the cause on failure */
	size_t errbuf_len;
	/* since BRK_ATTACH_OPTS_SIZE_VER1 */
	uint64_t arena_bytes;   /* bytes of record storage (the arena of
	                           64-byte units), used only when creating;
	                           0: capacity * 448 + max(capacity / 8, 1024)
	                           * 64 (every record a breaker, plus room for
	                           extension blocks: bulkheads, probes above
	                           1, window rules). Rounded down to 64 bytes;
	                           BRK_MIN_ARENA_BYTES .. BRK_MAX_ARENA_BYTES */
};

#define BRK_ATTACH_OPTS_SIZE_VER0 88u /* sizeof in BREAKER_0 */
#define BRK_ATTACH_OPTS_SIZE_VER1 96u /* + arena_bytes */

/**
 * brk_attach_opts_init - fill @o with the defaults above and store the
 * caller's sizeof(*@o) in o->size (a macro over brk_attach_opts_init_sz()).
 * Thread-safe; writes only @o.
 */
BRK_API void brk_attach_opts_init_sz(struct brk_attach_opts *o, size_t size);
BRK_API void (brk_attach_opts_init)(struct brk_attach_opts *o);
#define brk_attach_opts_init(o) brk_attach_opts_init_sz((o), sizeof(*(o)))

/**
 * brk_resolve_shm_name - the segment name a program should use.
 * @flag: the value of a --shm option, or NULL.
 *
 * Returns @flag if not NULL (an empty one too: brk_attach() then refuses
 * it, so an unset variable never falls back to the shared default), else
 * $BREAKERD_SHM if set and non-empty, else BRK_DEFAULT_SHM. The returned pointer is @flag, getenv()'s string or a
 * static string: do not free it.
 */
BRK_API const char *brk_resolve_shm_name(const char *flag);

/**
 * brk_attach - create or attach the shared segment.
 * @o:   options (NULL: defaults).
 * @out: receives the handle; the caller owns it and frees it with
 *       brk_detach().
 *
 * The first process creates the segment (O_CREAT|O_EXCL, fchmod/fchown,
 * ftruncate, posix_fallocate, initialise, publish the magic last with
 * release ordering); every later one validates it (fstat: regular file,
 * a trusted owner, not world-writable, final size; then magic, layout
 * version, geometry) and waits up to init_wait_ms for the magic.
 * Trusted owners, for read-write and read-only attaches alike: root, the
 * caller's effective uid, the system user "breakerd" when it exists (the
 * systemd unit's user), and the users named in $BREAKERD_TRUSTED_OWNERS
 * (BRK_TRUSTED_OWNERS_ENV: user names or uids, comma-separated; an
 * unknown name is ignored). Any other owner could have planted the
 * segment to steer (or truncate) everyone's breakers: -BRK_EUNTRUSTED.
 * Nothing on this path is a fast path: it makes syscalls.
 *
 * Returns 0, or:
 *  -EINVAL  bad option (name not of the form "/name", capacity 0 or above
 *           BRK_MAX_CAPACITY, mode with bits outside 0777, arena_bytes
 *           outside BRK_MIN_ARENA_BYTES .. BRK_MAX_ARENA_BYTES), or o->size
 *           not a multiple of 8 or above BRK_STRUCT_SIZE_MAX;
 *  -E2BIG   o->size is larger than this library's struct and a field it
 *           does not know is not zero (built against a newer breaker.h);
 *  -ENOENT  absent and READONLY or NOCREATE was asked;
 *  -EACCES  / -EPERM: no permission to open it, or world-writable for a
 *           read-write attach (errbuf names the owner);
 *  -BRK_EUNTRUSTED owned by a user who is not trusted (above; errbuf
 *           names the owner and $BREAKERD_TRUSTED_OWNERS);
 *  -BRK_ETRUNCATED shorter than its header says, 0 bytes included
 *           (truncated after it was made: its records are lost; errbuf
 *           says how many bytes and what to do); never re-initialised,
 *           BRK_ATTACH_REPAIR included;
 *  -EPROTO  wrong magic, layout version or size: not our segment, or a
 *           different release of breakerd;
 *  -ETIMEDOUT the creator did not finish initialising in time (its
 *           init-in-progress marker is still set: see -BRK_ETRUNCATED
 *           for a segment emptied later);
 *  -EXDEV   created in another pid or time namespace (errbuf says
 *           which and what to do: run this process in the creator's
 *           namespaces - docker --pid=container:X --ipc=container:X,
 *           Kubernetes shareProcessNamespace: true;
 *           docs/guide/operating.md "Containers");
 *           BRK_ATTACH_NOPROCESS attaches anyway (inspection only);
 *  -ENOSPC  /dev/shm is too small for the requested capacity and arena;
 *  -ENOMEM  out of memory.
 * Thread-safe; each call returns a new handle.
 */
BRK_API int brk_attach(const struct brk_attach_opts *o, brk_segment **out);

/**
 * brk_detach - unmap the segment and free the handle and every breaker
 * handle obtained from it. The shared state is untouched (it outlives
 * every process). Not safe against concurrent use of the same handle.
 * Returns 0; NULL is accepted.
 */
BRK_API int brk_detach(brk_segment *seg);

/**
 * brk_segment_unlink - remove the shm name (shm_unlink(3); $BREAKERD_SHM
 * or the default for NULL). Not a process-safe operation on a segment in
 * use: a process that has it mapped keeps working on the unlinked copy,
 * and the next process to attach creates a fresh one under the same name,
 * so the host's processes split into two groups that no longer see each
 * other's breakers. `bctl segment remove` refuses while breakerd's
 * heartbeat is fresh or a lease is held. Returns 0 or -errno (-ENOENT:
 * no such segment).
 */
BRK_API int brk_segment_unlink(const char *shm_name);

/** brk_now_ns - the segment handle's clock (injected or monotonic), ns. */
BRK_API uint64_t brk_now_ns(const brk_segment *seg);

struct brk_segment_info {
	char shm_name[256];
	uint32_t layout_version;
	uint32_t capacity;         /* records */
	uint32_t used;             /* records published (live) */
	uint32_t record_size;      /* bytes of a breaker without extension
	                              blocks (448; records are sized by
	                              kind, see arena_bytes) */
	uint64_t total_size;       /* bytes */
	uint64_t created_wall_ms;  /* ms since the Unix epoch */
	int32_t creator_pid;
	int32_t daemon_pid;        /* 0: no breakerd has ever run */
	uint64_t heartbeat_age_ms; /* since breakerd's last heartbeat;
	                              UINT64_MAX if never */
	uint64_t daemon_interval_ms;
	uint64_t events_written;   /* event sequence number so far */
	int readonly;
	/* since BRK_SEGMENT_INFO_SIZE_VER1 */
	uint64_t arena_bytes;      /* record storage: units * unit_bytes */
	uint64_t arena_used_bytes; /* of it handed out so far (records and
	                              their extension blocks) */
	uint32_t unit_bytes;       /* the arena's allocation unit (64) */
	uint32_t live_records;     /* published records (== used) */
	/* since BRK_SEGMENT_INFO_SIZE_VER2: what fstat said at attach, and
	 * the namespaces (inode numbers of /proc/PID/ns/pid and .../time,
	 * 0 if unknown) */
	uint32_t mode;             /* permission bits, 0..0777 */
	uint32_t owner_uid;
	uint32_t owner_gid;
	uint32_t ns_differ;        /* BRK_NS_PID | BRK_NS_TIME: ours differ
	                              from the creator's (a read-write attach
	                              without BRK_ATTACH_NOPROCESS is then
	                              -EXDEV) */
	uint64_t creator_pidns;    /* the creator's pid namespace */
	uint64_t creator_timens;   /* the creator's time namespace */
	uint64_t own_pidns;        /* this process's pid namespace */
	uint64_t own_timens;       /* this process's time namespace */
	/* since BRK_SEGMENT_INFO_SIZE_VER3 */
	int32_t index_lock_pid;    /* the holder of the index lock (taken to
	                              create or retire a record), in the
	                              creator's pid namespace; 0: free */
	uint32_t reserved0_;       /* 0 */
};

#define BRK_SEGMENT_INFO_SIZE_VER0 328u /* sizeof in BREAKER_0 */
#define BRK_SEGMENT_INFO_SIZE_VER1 352u /* + the arena fields */
#define BRK_SEGMENT_INFO_SIZE_VER2 400u /* + mode, owner, namespaces */
#define BRK_SEGMENT_INFO_SIZE_VER3 408u /* + index_lock_pid */

/* brk_segment_info.ns_differ bits */
#define BRK_NS_PID 1u
#define BRK_NS_TIME 2u

/**
 * brk_segment_info - a snapshot of the header (a macro over
 * brk_segment_info_sz(seg, out, sizeof(*out)): writes exactly @size bytes
 * at @out, see "Growing structs"). Returns 0, -EINVAL (NULL). Thread-safe.
 */
BRK_API int brk_segment_info_sz(brk_segment *seg,
				struct brk_segment_info *out, size_t size);
BRK_API int (brk_segment_info)(brk_segment *seg, struct brk_segment_info *out);
#define brk_segment_info(seg, out) \
	brk_segment_info_sz((seg), (out), sizeof(*(out)))

/* ---------------------------------------------------------------------- */
/* Breakers                                                                 */
/* ---------------------------------------------------------------------- */

/*
 * Settings of one breaker; see docs/design/semantics.md "Breaker semantics".
 * Durations in milliseconds. 0 means "off" for failure_rate_pct, slow_call_ms
 * and max_concurrent.
 */
struct brk_config {
	uint32_t size;               /* sizeof(struct brk_config) as the caller
	                                was compiled: set by brk_config_init();
	                                0: BRK_CONFIG_SIZE_VER0 */
	uint32_t failure_threshold;  /* consecutive failures that open; >= 1 */
	uint32_t failure_rate_pct;   /* 0 = off; 1..100 */
	uint64_t window_ms;          /* failure-rate window */
	uint32_t min_calls;          /* calls in the window before the rate
	                                counts */
	uint64_t slow_call_ms;       /* 0 = off */
	uint32_t slow_rate_pct;      /* 1..100 when slow_call_ms is set */
	uint64_t open_ms;            /* first cooling period; >= 1 */
	uint64_t max_open_ms;        /* cap of the doubling; >= open_ms */
	uint32_t half_open_probes;   /* 1..BRK_MAX_PROBES */
	uint32_t success_threshold;  /* 1..BRK_MAX_SUCCESS_THRESHOLD */
	uint64_t probe_timeout_ms;   /* >= 1 */
	uint64_t max_wait_ms;        /* Retry-After above this opens instead */
	uint32_t max_concurrent;     /* 0..BRK_MAX_CONCURRENT; 0 = no bulkhead */
	uint32_t min_distinct_processes; /* trip quorum: 0 or 1 = off; 2..8:
	                                    open only when the failures of the
	                                    last window_ms came from at least
	                                    this many processes */
	/* since BRK_CONFIG_SIZE_VER1 */
	uint32_t reserve_pct;        /* 0..BRK_MAX_RESERVE_PCT: share of the
	                                bulkhead kept for high-priority
	                                admissions (brk_admit()):
	                                floor(max_concurrent * reserve_pct /
	                                100) permits that normal priority
	                                (brk_acquire()) never takes. 0: none */
	uint32_t reserved0_;         /* padding of BRK_CONFIG_SIZE_VER1: ignored */
	/* since BRK_CONFIG_SIZE_VER2 */
	uint32_t hold_histogram;     /* 0 (default) or 1: record each permit's
	                                hold time (acquire to release) in a
	                                histogram (brk_info.hold). 1 costs a
	                                clock read at acquire and one at
	                                release, and a 2-unit (128 B) block
	                                taken from the extension room at the
	                                first release (none left: not recorded,
	                                brk_info.hold.state BRK_HOLD_NOROOM).
	                                Set back to 0: releases stop recording;
	                                the block and its counts stay until the
	                                record is retired or reused. */
	uint32_t reserved1_;         /* padding of BRK_CONFIG_SIZE_VER2: ignored */
	/* since BRK_CONFIG_SIZE_VER3 */
	uint32_t fleet;              /* 0 (default) or 1: fleet-wide. breakerd
	                                --fleet publishes this breaker's open,
	                                cool-until, forced and reset decisions
	                                to the other hosts and applies theirs
	                                (docs/design/fleet.md "Fleet link").
	                                Never read on the acquire/release
	                                path. */
	uint32_t fleet_probe;        /* 0 (default) or 1: one probe for the
	                                whole fleet: the hosts elect one prober
	                                per cooling period (a Redis SET NX PX
	                                held by breakerd); the others stay open
	                                until its verdict arrives. Acts only
	                                with fleet = 1. */
	/* since BRK_CONFIG_SIZE_VER4 */
	uint32_t implicit_pace;      /* 1 (default) or 0: a rate-limit answer
	                                (429; 503/529 with a Retry-After)
	                                released as a failure gives this
	                                breaker an implicit pace, NAME:pace,
	                                which learns the upstream's rate;
	                                the answer is then throttled, not a
	                                failure ("Implicit pace" below). 0:
	                                rate-limit answers stay failures
	                                (cool-until, five in a row open). */
	uint32_t reserved2_;         /* padding: ignored */
	/* since BRK_CONFIG_SIZE_VER5 */
	uint32_t concurrency_auto;   /* 0 (default) or 1: the bulkhead's limit
	                                is learned from completion latency by
	                                every process of the host together
	                                ("Adaptive concurrency" below), between
	                                min_concurrent and max_concurrent (0:
	                                BRK_MAX_CONCURRENT) */
	uint32_t min_concurrent;     /* 1..max_concurrent: the learned limit's
	                                floor (BRK_DEFAULT_MIN_CONCURRENT);
	                                read only with concurrency_auto */
};

#define BRK_CONFIG_SIZE_VER0 96u /* sizeof in BREAKER_0 */
#define BRK_CONFIG_SIZE_VER1 104u /* + reserve_pct */
#define BRK_CONFIG_SIZE_VER2 112u /* + hold_histogram */
#define BRK_CONFIG_SIZE_VER3 120u /* + fleet, fleet_probe (after VER2's padding) */
#define BRK_CONFIG_SIZE_VER4 128u /* + implicit_pace */
#define BRK_CONFIG_SIZE_VER5 136u /* + concurrency_auto, min_concurrent */

/*
 * Adaptive concurrency (issue 25). With concurrency_auto = 1 the bulkhead
 * (a permit block of max_concurrent slots, BRK_MAX_CONCURRENT when
 * max_concurrent is 0) admits at most a limit learned from completion
 * latency, in [min_concurrent, max_concurrent]: one limit per breaker,
 * fed by the releases of every process of the host, by Netflix
 * concurrency-limits' Gradient2 update (no-load baseline against each
 * short window's mean latency, headroom half of sqrt(limit)) whose baseline
 * is a windowed minimum (the smallest sample of the last 5..10 s, as TCP
 * Vegas and BBR; re-measured as it expires, no pin). A release is a
 * sample when it reports BRK_SUCCESS, BRK_HEALTHY_ERROR or a
 * BRK_REASON_TIMEOUT failure. brk_info.concurrency_limit,
 * latency_baseline_us and latency_recent_us show it. The rule, its
 * constants and sources: docs/design/limits.md "Adaptive concurrency".
 * brk_config_validate() names "min_concurrent" when it is 0 or above the
 * bound with concurrency_auto on (without, any value up to
 * BRK_MAX_CONCURRENT is kept unread) and "concurrency_auto" when above 1.
 */

/**
 * brk_config_init - fill @c with the defaults (BRK_DEFAULT_*) and store
 * the caller's sizeof(*@c) in c->size (a macro over brk_config_init_sz()).
 * Every function that takes a const struct brk_config * reads it by the
 * rules of "Growing structs": fields beyond c->size get their defaults,
 * unknown non-zero fields beyond the library's struct are -E2BIG, a bad
 * size is -EINVAL. Thread-safe; writes only @c.
 */
BRK_API void brk_config_init_sz(struct brk_config *c, size_t size);
BRK_API void (brk_config_init)(struct brk_config *c);
#define brk_config_init(c) brk_config_init_sz((c), sizeof(*(c)))

/**
 * brk_config_validate - check every setting.
 * @c:    the settings.
 * @what: if not NULL, on error receives the name of the first bad setting
 *        (a static string such as "failure_threshold").
 * Returns 0, -EINVAL (@what is "size" for a bad c->size), -E2BIG (@what
 * is "size": unknown non-zero fields).
 */
BRK_API int brk_config_validate(const struct brk_config *c, const char **what);

/**
 * brk_name_validate - 0 if @name is 1..63 bytes of [A-Za-z0-9._:/-]
 * (with no empty level: no leading, trailing or double '/'), -EINVAL if
 * it has a bad character, is empty or malformed, -ENAMETOOLONG if too long.
 */
BRK_API int brk_name_validate(const char *name);

/**
 * brk_breaker_get - get or create the breaker @name.
 * @seg:  an attached, writable segment.
 * @name: see brk_name_validate().
 * @cfg:  settings used only if this call creates the record (NULL:
 *        defaults). An existing breaker keeps its settings, counters,
 *        state and open period: a worker that starts later never resets
 *        or extends anything. Use brk_breaker_update() to change them.
 * @out:  receives a handle owned by @seg (valid until brk_detach()).
 *
 * Concurrent get-or-create of one name from many processes yields exactly
 * one record (the name index is filled by CAS). After the first call in a
 * process, the lookup is a lock-free rculfhash hit with no syscall.
 * Returns 0, or -EINVAL/-ENAMETOOLONG (name), -EINVAL (cfg), -E2BIG (cfg
 * from a newer breaker.h with settings this library lacks), -EROFS
 * (read-only attach), -ENOSPC (the segment's capacity of records or its
 * arena is full: nothing is touched; recreate the segment with a larger
 * breakerd --capacity / --arena-mb), -EMEDIUMTYPE (the name exists as a
 * bucket), -BRK_ECORRUPT, -ENOMEM.
 */
BRK_API int brk_breaker_get(brk_segment *seg, const char *name,
		    const struct brk_config *cfg, brk_breaker **out);

/**
 * brk_breaker_get_ex - brk_breaker_get(), and whether this call created
 * the record: *@created = 1 if this call published it (its @cfg is the
 * record's settings), 0 if it existed (its settings, state and counters
 * are someone else's: compare them or brk_breaker_update()). Of many
 * processes racing to get one new name exactly one sees 1. Counted per
 * thread (a thread-local count of records this thread created, read
 * before and after), so concurrent calls in other threads do not
 * confuse it. @created may be NULL. Returns what brk_breaker_get()
 * returns; *@created is 0 on an error. (lib/src/half_open.c)
 */
BRK_API int brk_breaker_get_ex(brk_segment *seg, const char *name,
			       const struct brk_config *cfg, brk_breaker **out,
			       int *created);

/**
 * brk_breaker_find - like brk_breaker_get() but never creates.
 * Returns 0, -ENOENT if there is no such breaker, or the errors above.
 * Works on a read-only attach.
 */
BRK_API int brk_breaker_find(brk_segment *seg, const char *name, brk_breaker **out);

/**
 * brk_arena_cost - the bytes of the segment's arena a write would take,
 * for a caller that must know before it writes anything whether a batch
 * of creates and changes fits (bctl apply: compare the sum with
 * brk_segment_info's arena_bytes - arena_used_bytes).
 * @kind:  enum brk_kind of the record.
 * @cfg:   a breaker's settings after the write (NULL: the defaults);
 *         ignored for other kinds.
 * @b:     NULL: the cost of creating the record (its core run and, for a
 *         breaker, the extension blocks @cfg needs: more than one probe,
 *         a failure rate, slow calls or distinct processes, a bulkhead);
 *         else the existing breaker whose settings become @cfg: the
 *         blocks @cfg needs that it has not linked yet (0 if none; 0 for
 *         every change of a bucket, pace or budget, which allocate
 *         nothing).
 * An upper bound: a create that reuses a retired record past its
 * quarantine (brk_retire()) takes nothing from the arena. Reads only
 * @b's link words; thread- and process-safe, works on a read-only
 * attach. Returns 0 (*@bytes set), -EINVAL (NULL @bytes, an unknown
 * kind, @b not a breaker, an invalid @cfg), -E2BIG (@cfg from a newer
 * breaker.h with settings this library lacks).
 */
BRK_API int brk_arena_cost(int kind, const struct brk_config *cfg,
			   brk_breaker *b, uint64_t *bytes);

/**
 * brk_breaker_configure - replace every setting of an existing breaker:
 * brk_breaker_update(b, cfg, BRK_CFG_ALL, NULL). State and counters are
 * kept. A lowered max_concurrent counts the permits already out: new
 * calls are refused (-BRK_EFULL) until fewer than the new bound are out.
 * Returns what brk_breaker_update() returns.
 */
BRK_API int brk_breaker_configure(brk_breaker *b, const struct brk_config *cfg);

/*
 * The settings of struct brk_config, one bit each, for
 * brk_breaker_update() (and the brk_config_field_* helpers below, which a
 * settings file or a language binding can use to name them).
 */
enum brk_config_field {
	BRK_CFG_FAILURE_THRESHOLD = 1u << 0,
	BRK_CFG_FAILURE_RATE_PCT = 1u << 1,
	BRK_CFG_WINDOW_MS = 1u << 2,
	BRK_CFG_MIN_CALLS = 1u << 3,
	BRK_CFG_SLOW_CALL_MS = 1u << 4,
	BRK_CFG_SLOW_RATE_PCT = 1u << 5,
	BRK_CFG_OPEN_MS = 1u << 6,
	BRK_CFG_MAX_OPEN_MS = 1u << 7,
	BRK_CFG_HALF_OPEN_PROBES = 1u << 8,
	BRK_CFG_SUCCESS_THRESHOLD = 1u << 9,
	BRK_CFG_PROBE_TIMEOUT_MS = 1u << 10,
	BRK_CFG_MAX_WAIT_MS = 1u << 11,
	BRK_CFG_MAX_CONCURRENT = 1u << 12,
	BRK_CFG_MIN_DISTINCT_PROCESSES = 1u << 13,
	BRK_CFG_RESERVE_PCT = 1u << 14,
	BRK_CFG_HOLD_HISTOGRAM = 1u << 15,
	BRK_CFG_FLEET = 1u << 16,
	BRK_CFG_FLEET_PROBE = 1u << 17,
	BRK_CFG_IMPLICIT_PACE = 1u << 18,
	BRK_CFG_CONCURRENCY_AUTO = 1u << 19,
	BRK_CFG_MIN_CONCURRENT = 1u << 20
};
#define BRK_CFG_ALL ((uint64_t)(1u << 21) - 1u) /* every setting */

/**
 * brk_breaker_update - change only the settings named in @fields.
 * @b:      the breaker.
 * @cfg:    the new values; only the members named in @fields are read.
 * @fields: an OR of enum brk_config_field (0: nothing to do, returns 0).
 * @what:   optional; on -EINVAL or -BRK_ECONTENDED receives the name of
 *          the setting that broke a rule (a static string, as
 *          brk_config_validate() gives), or NULL.
 *
 * The other settings are neither read from @cfg nor written: two
 * operators (processes) changing different settings at the same time
 * both get their change. The combination (current values of the other
 * settings plus the given ones) must pass brk_config_validate(): the
 * cross-setting rules (open_ms <= max_open_ms, slow_call_ms with
 * slow_rate_pct) are checked against the values stored now.
 *
 * Concurrency (lock-free; a process killed at any instruction blocks no
 * one): the record has a config sequence word. An update reads it, reads
 * the settings, validates, writes the given settings' words (one atomic
 * store each) and then CASes the sequence word from the value it read to
 * the next. If that CAS fails, another update (or withdrawal) committed
 * in between: the update re-reads and re-validates the combination with
 * the other's values in place, and commits it if it is still valid (so
 * concurrent changes of different settings all take effect; of the same
 * setting, the last to commit wins). If two concurrent updates that are
 * each valid alone make an invalid combination (one lowers max_open_ms
 * below the open_ms the other raises), the one that commits second
 * withdraws its own words (CAS back to the values it overwrote, where
 * still its own) and returns -BRK_ECONTENDED with @what set: nothing of
 * it is kept, the other's change is. Readers (brk_acquire() and every
 * rule) never need a consistent set: a combination seen between two
 * updates, or left by an updater killed half-way, is clamped where it is
 * used (max_open_ms below open_ms acts as open_ms; a slow-call rule with
 * either half 0 is off), as for any word read from the segment.
 *
 * A setting that needs segment storage the breaker lacks (a bulkhead or
 * a higher max_concurrent, half_open_probes above 1, failure_rate_pct,
 * slow_call_ms or min_distinct_processes >= 2) first allocates its
 * extension block from the segment's arena (before any setting is
 * written, so no caller sees a setting without its storage); such blocks
 * stay with the breaker.
 *
 * Thread- and process-safe; no syscall, no allocation of process memory.
 * Returns 0, -EINVAL (NULL, bits outside BRK_CFG_ALL, or an invalid
 * combination: nothing is written), -EROFS, -ENOSPC (the arena has no
 * room for the extension block: nothing is written, *@what = "arena"),
 * -BRK_ECONTENDED (withdrawn, see above; or the bounded loop of 256
 * tries gave up: also withdrawn).
 */
BRK_API int brk_breaker_update(brk_breaker *b, const struct brk_config *cfg,
		       uint64_t fields, const char **what);

/**
 * brk_config_field_name - "failure_threshold" ... for one bit of enum
 * brk_config_field (the struct brk_config member's name); NULL for 0,
 * several bits or an unknown bit.
 */
BRK_API const char *brk_config_field_name(uint64_t field);

/**
 * brk_config_field_lookup - the bit of the setting named @name (a struct
 * brk_config member name, as brk_config_field_name() returns). Returns 0
 * and sets *@field, or -EINVAL (unknown name, NULL).
 */
BRK_API int brk_config_field_lookup(const char *name, uint64_t *field);

/**
 * brk_config_field_get / brk_config_field_set - read or write the member
 * of @c named by the one bit @field, widened to 64 bits (32-bit members
 * take the low 32 bits; set refuses a larger value). No validation: use
 * brk_config_validate(). Return 0 or -EINVAL (NULL, not one known bit,
 * value too large for the member).
 */
BRK_API int brk_config_field_get(const struct brk_config *c, uint64_t field,
			 uint64_t *value);
BRK_API int brk_config_field_set(struct brk_config *c, uint64_t field, uint64_t value);

/** brk_breaker_name - the breaker's name; owned by the handle. */
BRK_API const char *brk_breaker_name(const brk_breaker *b);

/*
 * A permit: what brk_acquire() admits and brk_release() gives back. The
 * caller owns the storage (stack is fine); its contents are private.
 */
typedef struct brk_permit {
	brk_breaker *b_;
	uint64_t token_;      /* probe lease token, 0 if none */
	uint64_t permit_;     /* bulkhead lease token, 0 if none */
	uint64_t start_ns_;
	uint64_t changes_;
	uint32_t gen_;
	int32_t pid_;
	uint16_t probe_slot_, permit_slot_;
	uint32_t flags_;
	uint64_t reserved_[5]; /* fixed size: 96 bytes (rule 3) */
} brk_permit;

/* What refused a call (struct brk_refusal.cause). */
enum brk_cause {
	BRK_CAUSE_NONE = 0,
	BRK_CAUSE_OPEN = 1,        /* open: the cooling period is running */
	BRK_CAUSE_PROBES_BUSY = 2, /* half-open: every probe slot is taken */
	BRK_CAUSE_FORCED_OPEN = 3, /* forced open by an operator */
	BRK_CAUSE_COOLING = 4,     /* shared cool-until from a Retry-After */
	BRK_CAUSE_FULL = 5,        /* bulkhead: max_concurrent permits out */
	BRK_CAUSE_CONTENDED = 6,   /* a bounded CAS loop gave up */
	BRK_CAUSE_PACED = 7        /* the breaker's implicit pace has no token
	                              yet (-BRK_ECOOLING; "Implicit pace") */
};

/* Why a call was refused. */
struct brk_refusal {
	uint64_t wait_ms;               /* how long to wait before trying again,
	                                   with per-caller jitter in [remaining,
	                                   remaining + min(remaining / 4, 5 s)];
	                                   0 if unknown (forced open, full) */
	int cause;                      /* enum brk_cause */
	char by[BRK_NAME_MAX + 1];      /* the record that refused: this one
	                                   or an ancestor */
	uint64_t reserved_[6];          /* fixed size: 128 bytes (rule 3);
	                                   zeroed on refusal */
};

/** brk_cause_name - "open", "probes_busy", "forced_open", "cooling",
 * "bulkhead_full", "contended", "paced", or "none". */
BRK_API const char *brk_cause_name(int cause);

/**
 * brk_acquire - ask to call the upstream guarded by @b.
 * @b:   the breaker.
 * @p:   receives the permit on success; pass it to brk_release() exactly
 *       once on every path.
 * @why: optional; on refusal receives the jittered wait and the name.
 *
 * CLOSED: admitted unless a shared cool-until is running (-BRK_ECOOLING)
 * or the bulkhead is full (-BRK_EFULL). OPEN: refused (-BRK_EOPEN) until
 * the cooling period has passed, then the first caller moves the breaker
 * to HALF_OPEN with one CAS. HALF_OPEN: a caller that claims one of the
 * half_open_probes probe slots (CAS(owner, free -> token)) is admitted as
 * a probe; everyone else gets -BRK_EOPEN. Every half-open acquire first
 * reclaims the probes older than probe_timeout_ms, as failed probes,
 * whatever the other slots hold (a free slot does not let a hung probe
 * linger). With max_concurrent set, a permit is claimed only while fewer
 * than max_concurrent are out, counting permits out across resets,
 * transitions and a lowered max_concurrent. brk_acquire() is normal
 * priority: with reserve_pct set it is refused -BRK_EFULL once
 * max_concurrent - floor(max_concurrent * reserve_pct / 100) permits are
 * out (the rest is for brk_admit() with BRK_PRIORITY_HIGH).
 *
 * The fast path (closed, no bulkhead) reads the clock (vDSO) and two
 * words and adds one counter: no syscall, no lock, no allocation.
 * Returns 0, -BRK_EOPEN, -BRK_ECOOLING, -BRK_EFULL, -BRK_ECONTENDED
 * (refuse: treat like open), -EINVAL (NULL), -EROFS.
 */
BRK_API int brk_acquire(brk_breaker *b, brk_permit *p, struct brk_refusal *why);

/* Outcomes a caller reports. */
enum brk_outcome {
	BRK_SUCCESS = 1,          /* the call worked */
	BRK_FAILURE = 2,          /* the upstream failed; give a reason */
	BRK_HEALTHY_ERROR = 3,    /* a correct business error (404 on a
	                             missing item): counts as success */
	BRK_REJECTED_REQUEST = 4, /* our fault (auth, invalid request):
	                             counts neither way */
	BRK_CANCELLED = 5,        /* we gave up locally: frees the lease,
	                             no verdict */
	BRK_THROTTLED = 6         /* the upstream answered with a rate limit
	                             (429) and a pace takes the signal
	                             (brk_pace_report()): frees the lease,
	                             counts neither way for any trip rule
	                             (consecutive failures, failure-rate and
	                             slow-call windows, half-open probes: a
	                             probe released THROTTLED is freed with
	                             no verdict). A Retry-After up to
	                             max_wait_ms sets no shared cool-until
	                             (the pace's cut replaces it); one above
	                             max_wait_ms still opens. Counted in
	                             brk_counters.throttled. Without a pace,
	                             report a 429 as BRK_FAILURE with
	                             BRK_REASON_RATE_LIMITED
	                             (docs/design/semantics.md "Breaker
	                             semantics") */
};

enum brk_reason {
	BRK_REASON_NONE = 0,
	BRK_REASON_TIMEOUT = 1,
	BRK_REASON_CONNECT = 2,
	BRK_REASON_SERVER_ERROR = 3, /* 5xx */
	BRK_REASON_OVERLOADED = 4,   /* 529 / 503 */
	BRK_REASON_RATE_LIMITED = 5, /* 429 */
	BRK_REASON_OTHER = 6,
	BRK_REASON_COUNT = 7,
	BRK_REASON_SLOTS = 16 /* fixed array size of counters.failures_by_reason */
};

/**
 * brk_release - give a permit back with the call's outcome.
 * @p:       a permit from brk_acquire(); it is consumed (a second release
 *           returns -BRK_ESTALE and changes nothing).
 * @outcome: enum brk_outcome.
 * @reason:  enum brk_reason, for BRK_FAILURE (BRK_REASON_NONE counts as
 *           BRK_REASON_OTHER); ignored otherwise.
 * @retry_after_ms: a Retry-After the upstream sent, in ms; <= 0: none.
 *           Up to max_wait_ms it sets the shared cool-until deadline
 *           (every process is told to wait) - except with BRK_THROTTLED,
 *           where a pace's cut does the slowing down and no cool-until is
 *           set; above max_wait_ms the breaker opens for that long
 *           instead (any outcome, BRK_THROTTLED included). Either way the
 *           period is capped at the breaker's max_open_ms (as every
 *           cooling period is: trip, a fleet peer's decision), so no one
 *           answer can open it longer than its own doubling could; values
 *           are never overflowed. A Retry-After is a
 *           fact about the upstream and is applied even from a stale
 *           permit, but only as a cool-until.
 *
 * The bulkhead permit is freed first, by CAS(owner, my token -> free), so
 * a permit whose lease was reclaimed can never free someone else's; a
 * permit that was out across a reset or a transition frees its slot here
 * and counts no verdict. Then the verdict is counted only if the breaker
 * is still in the generation the permit was admitted under: a late
 * failure from before a trip neither re-opens nor extends it. A probe is
 * marked "judging" in its slot while its verdict is counted (a reclaimer
 * that frees it meanwhile counts nothing), then its slot is freed. While
 * a slow-call rule is on (slow_call_ms set), a probe that held its permit
 * for at least slow_call_ms is a failed probe even if @outcome is a
 * success. Last, the hold (ns on the segment clock since admission) goes
 * into the breaker's hold-time histogram (brk_info.hold: two atomic adds;
 * the first release of a breaker allocates its 128-byte block), for a
 * stale or -EINVAL release by the permit's own process too, never for a
 * second release or a release from another process.
 *
 * Returns 0 exactly when the verdict was counted (also when the probe
 * slot was taken over after it was counted: the final free then frees
 * nothing else), -BRK_ESTALE exactly when it was not (lease reclaimed or
 * expired before the verdict, breaker reset or in a newer generation,
 * released twice, or the permit belongs to another process, e.g. a
 * fork()ed parent's; nothing else freed), -EINVAL (unknown outcome or
 * reason: the lease is still freed, no verdict), -BRK_ECONTENDED (a
 * bounded CAS loop of the verdict gave up under extreme contention: the
 * lease is freed, the verdict not counted).
 */
BRK_API int brk_release(brk_permit *p, int outcome, int reason,
		int64_t retry_after_ms);

/**
 * brk_permit_bind_thread - make the calling thread the owner of @p's
 * leases (its probe slot and bulkhead permit): if this thread exits (or is
 * cancelled) before the permit is released, the leases are reclaimed as
 * if the process had died, while the process lives on.
 * @p: a permit admitted in this process and not yet released.
 *
 * Default (not bound): a lease belongs to the process. A thread that exits
 * holding a permit keeps it held, the bulkhead one slot smaller (a probe:
 * until probe_timeout_ms), until the process exits or some thread calls
 * brk_release() on it: a permit may be handed to another thread or to
 * async code, and must then not be taken away. Bind a permit only if the
 * acquiring thread is the one that will release it; brk_call() and a
 * pthread_cleanup_push() handler that releases are the other ways to
 * cover a thread that exits early.
 *
 * Binding does not restrict who may release the permit (any thread of the
 * process may). Reclaim is by breakerd (brk_reclaim()) or by a caller
 * refused by a full bulkhead / busy probe slots, which check
 * tgkill(pid, tid, 0) (ESRCH: gone), the thread's /proc state (zombie) and
 * its start time (a reused tid is not the owner). A reclaimed permit's
 * brk_release() returns -BRK_ESTALE.
 *
 * The first bind in a thread makes two syscalls (gettid, a read of
 * /proc/thread-self/stat), cached per thread; later binds and brk_acquire()
 * / brk_release() make none. Thread-safe. Returns 0 (also for a permit
 * that holds no lease: nothing to leak), -EINVAL (NULL), -BRK_ESTALE
 * (already released, reclaimed, or admitted in another process), or a
 * negative errno if /proc/thread-self/stat cannot be read.
 */
BRK_API int brk_permit_bind_thread(brk_permit *p);

/**
 * brk_permit_unbind_thread - undo brk_permit_bind_thread(): the permit
 * belongs to the process again, e.g. before handing it to another thread.
 * Returns 0, -EINVAL (NULL), -BRK_ESTALE (released, reclaimed, another
 * process's). Thread-safe, no syscall.
 */
BRK_API int brk_permit_unbind_thread(brk_permit *p);

/* What a brk_call() function reports. */
struct brk_result {
	int outcome;            /* enum brk_outcome; 0: derive from the
	                           function's return (0 success, else failure) */
	int reason;             /* enum brk_reason */
	int64_t retry_after_ms; /* <= 0: none */
	uint64_t reserved_[6];  /* fixed size: 64 bytes (rule 3); zeroed by
	                           brk_call() before @fn runs */
};

typedef int (*brk_call_fn)(void *ctx, struct brk_result *res);

/**
 * brk_call - run @fn under a permit of @b and release it on every return
 * path with the outcome @fn reports in @res (zeroed before the call).
 * The form to use first: no code path can pass the gate without
 * recording a result.
 *
 * A refusal by the breaker's implicit pace (cause BRK_CAUSE_PACED) is
 * slept out, up to max_wait_ms in all, with the default clock (an
 * injected clock never sleeps).
 * Returns the refusal (-BRK_EOPEN, -BRK_ECOOLING, -BRK_EFULL,
 * -BRK_ECONTENDED) without calling @fn, or @fn's return value. If
 * @release_rc is not NULL it receives brk_release()'s return.
 */
BRK_API int brk_call(brk_breaker *b, brk_call_fn fn, void *ctx,
	     struct brk_refusal *why, int *release_rc);

/**
 * brk_reset - force CLOSED and normal mode; clear consecutive failures,
 * cooling level, cool-until, the trip quorum, the window and the probe
 * leases. Bulkhead permits out at the time stay counted against
 * max_concurrent until released (or their owner dies): a reset never
 * lets more than max_concurrent calls run at once. Their results are not
 * counted (their brk_release() returns -BRK_ESTALE and frees the slot).
 * Records a "reset" event. Returns 0, -EROFS, -BRK_ECONTENDED.
 */
BRK_API int brk_reset(brk_breaker *b);

/**
 * brk_trip - force OPEN for @for_ms ms (capped at the breaker's
 * max_open_ms, as every cooling period is).
 * An already-open breaker is left as it is (its open period is not
 * extended, no second transition is recorded): returns -EALREADY.
 * Returns 0, -EALREADY, -EINVAL (0 ms), -EROFS, -BRK_ECONTENDED.
 */
BRK_API int brk_trip(brk_breaker *b, uint64_t for_ms);

/**
 * brk_half_open - force HALF_OPEN now (pybreaker's half_open()): from
 * CLOSED or OPEN (its open period cut short), one transition (gen + 1,
 * the cooling level kept), an event "half_open" (BRK_EV_HALF_OPEN). The
 * next brk_acquire() in any process takes a probe slot; success_threshold
 * probe successes close it, a failed probe re-opens it for
 * cooling(level + 1) (as after a cooling period). The failure streak
 * (brk_info.failure_streak) is kept. Thread- and process-safe: one CAS of
 * the state word (bounded retries); every process's next brk_acquire()
 * sees it. Returns 0, -EALREADY (already half-open: nothing changes),
 * -EINVAL (NULL), -EROFS, -BRK_ECONTENDED, or an error of re-resolving a
 * retired name (as brk_trip_extend()). (lib/src/half_open.c)
 */
BRK_API int brk_half_open(brk_breaker *b);

/**
 * brk_trip_restart - open for exactly @for_ms ms from now (clamped to
 * BRK_MAX_DURATION_MS), whatever the state: unlike brk_trip(), an open
 * breaker's period restarts (OPEN -> OPEN, gen + 1, shorter or longer
 * than what was left), as pybreaker's open() restarts reset_timeout. The
 * cooling level and the failure streak are kept; a half-open breaker's
 * probes are ended as by brk_trip(). Records a "trip" event with value
 * @for_ms. Thread- and process-safe (one CAS of the state word after the
 * deadline's); a concurrent opener of the same generation may lengthen
 * the period, never shorten it (state.c propose_until()). Returns 0,
 * -EINVAL (NULL, 0 ms), -EROFS, -BRK_ECONTENDED, or an error of
 * re-resolving a retired name. (lib/src/half_open.c)
 */
BRK_API int brk_trip_restart(brk_breaker *b, uint64_t for_ms);

/* Forced states (operator overrides, as resilience4j and Polly offer). */
enum brk_mode {
	BRK_MODE_NORMAL = 0,
	BRK_MODE_FORCED_OPEN = 1,  /* isolate: refuse every call (-BRK_EOPEN) */
	BRK_MODE_DISABLED = 2,     /* admit every call the bulkhead admits
	                              (max_concurrent still holds: -BRK_EFULL);
	                              still count outcomes, never transition */
	BRK_MODE_METRICS_ONLY = 3  /* run the state machine, count and record
	                              events, but never refuse */
};

/**
 * brk_set_mode - put the breaker in a forced state, or back to normal.
 * One atomic store of the record's mode word; every process sees it on
 * its next brk_acquire(). brk_reset() also returns to BRK_MODE_NORMAL.
 * Records a "forced" event (value = the mode). Returns 0, -EINVAL (mode),
 * -EALREADY (already in that mode: no event), -EROFS.
 *
 * The environment kill-switch BREAKERD_DISABLED=1, read by brk_attach(),
 * makes every breaker of that handle admit every call, its bulkhead
 * included (an emergency bypass), and otherwise behave as
 * BRK_MODE_DISABLED.
 */
BRK_API int brk_set_mode(brk_breaker *b, int mode);

/** brk_mode_name - "normal", "forced_open", "disabled", "metrics_only". */
BRK_API const char *brk_mode_name(int mode);

/* ---------------------------------------------------------------------- */
/* Inspection                                                               */
/* ---------------------------------------------------------------------- */

enum brk_state { BRK_CLOSED = 0, BRK_OPEN = 1, BRK_HALF_OPEN = 2 };
enum brk_kind { BRK_KIND_BREAKER = 1, BRK_KIND_BUCKET = 2,
		BRK_KIND_BUDGET = 3 /* a retry budget (brk_budget_get()) */ };
enum brk_lease_kind { BRK_LEASE_PROBE = 1, BRK_LEASE_PERMIT = 2 };

struct brk_counters {
	uint64_t allowed, rejected_open, rejected_cooling, rejected_full;
	uint64_t successes, failures, healthy_errors, ignored, cancelled;
	uint64_t probes, reclaimed, transitions, stale;
	/* indexed by enum brk_reason (< BRK_REASON_COUNT); the array has
	 * room for BRK_REASON_SLOTS so that a new reason moves nothing */
	uint64_t failures_by_reason[BRK_REASON_SLOTS];
	/* since issue 11 (inside counters_room_): BRK_THROTTLED releases */
	uint64_t throttled;
};

struct brk_lease_info {
	int32_t pid;
	int kind;           /* enum brk_lease_kind */
	uint64_t age_ms;
};

/*
 * Snapshot of a GCRA bucket (brk_bucket_info(), and brk_info.bucket for
 * records of kind BRK_KIND_BUCKET). See "Token buckets" below.
 */
struct brk_bucket_info {
	char name[BRK_NAME_MAX + 1];
	double rate_per_s;      /* effective rate: 1e9 / interval_ns */
	uint32_t burst;         /* bucket capacity in tokens */
	uint64_t interval_ns;   /* emission interval T (ns per token) */
	double tokens;          /* available now, 0 .. burst (fractional) */
	uint64_t full_in_ns;    /* ns until the bucket is full again; 0: full */
	uint64_t taken;         /* brk_bucket_take() calls allowed */
	uint64_t denied;        /* brk_bucket_take() calls refused */
	uint64_t tokens_taken;  /* sum of n over the allowed calls */
	int configured;         /* 0: its creator died before storing the
	                           settings (the next _get() stores them) */
	/* since BRK_BUCKET_INFO_SIZE_VER1: paced buckets ("Pacing (learned
	 * rate)"); 0 for a plain bucket. For a paced bucket rate_per_s and
	 * interval_ns are the learned rate now, tokens and full_in_ns are
	 * at that rate. */
	int paced;              /* 1: a pace (brk_pace_get()) */
	double ceiling_per_s;   /* the learned rate never exceeds it */
	double floor_per_s;     /* ... nor falls below it */
	double learned_per_s;   /* the rate now (= rate_per_s) */
	double w_max_per_s;     /* the limit the last cut found (the rate
	                           holds at BRK_PACE_HOLD_GAIN x it); 0:
	                           never cut */
	uint32_t reserve_pct;   /* share only high priority may use */
	uint32_t fleet;         /* 0 or 1: the pace's fleet setting (in the
	                           padding after reserve_pct that every
	                           VER1 struct has: the size did not change;
	                           an older library leaves it 0) */
	uint64_t last_cut_age_ms; /* ms since the last cut; UINT64_MAX: never */
	uint64_t cuts;          /* reports that cut the rate */
	uint64_t limited;       /* BRK_PACE_LIMITED reports */
	uint64_t ok;            /* BRK_PACE_OK reports */
	uint64_t high_taken;    /* high-priority takes granted */
	uint64_t last_denied_age_ms; /* ms since a take was last refused;
	                                UINT64_MAX: never */
	double accepted_per_s;  /* OK reports in the last second (sliding) */
	/* since BRK_BUCKET_INFO_SIZE_VER2 */
	uint32_t implicit;      /* 1: an implicit pace, made by its breaker
	                           ("Implicit pace") */
	uint32_t reserved2_;
};

/*
 * Snapshot of a retry budget (brk_budget_info(), and brk_info.budget for
 * records of kind BRK_KIND_BUDGET). See "Retry budgets" below.
 */
struct brk_budget_info {
	char name[BRK_NAME_MAX + 1];
	double floor_per_s;     /* stored floor (rounded to 0.001/s) */
	double ratio;           /* stored ratio (rounded to 0.001) */
	uint32_t floor_burst;   /* retries the floor holds at most */
	double balance;         /* retries available now: pool + floor */
	double pool;            /* deposited tokens left (unspent, less than
	                           BRK_BUDGET_TTL_MS old) */
	double floor_tokens;    /* floor tokens available now */
	uint64_t deposits;      /* brk_budget_deposit() calls */
	uint64_t retries;       /* brk_retry_permitted() calls that returned 0 */
	uint64_t retries_floor; /* ... of which drawn from the floor */
	uint64_t deferred;      /* brk_retry_permitted() refusals */
	int configured;         /* see brk_bucket_info.configured */
};

/*
 * Permit hold time (brk_info.hold): how long admitted calls held their
 * permit, from brk_acquire() (and its variants: brk_admit(), brk_call())
 * to brk_release(), in a histogram with Prometheus' default buckets. Every
 * release of an admitted permit by the process that took it counts
 * (verdict counted or stale, bulkhead or not); a lease reclaimed from a
 * dead owner is not (nobody saw its call end). Kept in shared memory in a
 * 128-byte block per breaker, allocated at its first release; a segment
 * whose arena has no room for it left (room the record cores and the
 * other extension blocks may still need is never taken) records nothing
 * for that breaker: state BRK_HOLD_NOROOM.
 */
#define BRK_HOLD_BUCKETS 12u /* 11 bounds + the +Inf bucket */

enum brk_hold_state {
	BRK_HOLD_NONE = 0,     /* on, no release yet (or not a breaker) */
	BRK_HOLD_RECORDED = 1, /* the histogram below is recorded */
	BRK_HOLD_NOROOM = 2,   /* the arena had no room: nothing recorded */
	BRK_HOLD_OFF = 3       /* hold_histogram off and no histogram kept */
};

/**
 * brk_hold_bound_us - the upper bound (inclusive, µs) of hold-time
 * bucket @i: 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000,
 * 2500000, 5000000, 10000000 for i = 0 .. 10 (Prometheus' default
 * buckets, .005 s .. 10 s), UINT64_MAX (+Inf) for i = 11 and any larger i.
 * Holds are binned at µs resolution (a hold of 5000.9 µs is 5000 µs).
 * A constant table: thread- and process-safe, no error.
 */
BRK_API uint64_t brk_hold_bound_us(unsigned i);

/**
 * brk_hold_state_name - "none", "recorded", "no_room" or "off" for an enum
 * brk_hold_state (the words of `bctl inspect --json`'s hold_time.state);
 * "none" for any other value. Static string; thread-safe.
 */
BRK_API const char *brk_hold_state_name(int state);

struct brk_hold_info {
	int state;                  /* enum brk_hold_state */
	uint32_t buckets;           /* BRK_HOLD_BUCKETS */
	uint64_t count;             /* holds recorded: the sum of bucket[]
	                               (saturating at UINT64_MAX) */
	uint64_t sum_us;            /* their total, µs */
	uint64_t bucket[BRK_HOLD_BUCKETS]; /* holds in (bound(i - 1),
	                               bound(i)] µs; NOT cumulative */
};

struct brk_info {
	char name[BRK_NAME_MAX + 1];
	uint32_t index;             /* the record's ref: its first 64-byte
	                               unit in the segment's arena */
	int kind;                   /* enum brk_kind */
	int state;                  /* enum brk_state */
	uint32_t generation;
	uint64_t consecutive_failures; /* of the closed generation; 0 while
	                               open or half-open (see failure_streak) */
	uint32_t cooling_level;     /* failed probes in a row */
	uint64_t open_remaining_ms; /* 0 unless open */
	uint64_t cool_until_remaining_ms;
	uint32_t half_open_successes;
	uint32_t probes_in_flight;
	uint32_t in_flight;         /* bulkhead permits out */
	int mode;                   /* enum brk_mode */
	uint64_t window_calls;      /* calls in the sliding window (closed) */
	uint64_t window_failures;
	uint64_t window_slow;
	uint32_t distinct_failing_processes; /* in the last window_ms */
	uint32_t n_leases;
	struct brk_lease_info leases[BRK_MAX_PROBES + BRK_MAX_CONCURRENT];
	/* Embedded structs sit in unions with reserved room (rule 2 of
	 * "Growing structs"); config.size is filled with the size of the
	 * brk_config the caller was built with, so config can be copied,
	 * changed and passed to brk_breaker_configure(). */
	union {
		struct brk_config config;
		uint64_t config_room_[32];      /* 256 bytes */
	};
	union {
		struct brk_counters counters;
		uint64_t counters_room_[64];    /* 512 bytes */
	};
	/* kind BRK_KIND_BUCKET only (zeroed otherwise) */
	union {
		struct brk_bucket_info bucket;
		uint64_t bucket_room_[32];      /* 256 bytes */
	};
	/* kind BRK_KIND_BUDGET only (zeroed otherwise) */
	union {
		struct brk_budget_info budget;
		uint64_t budget_room_[32];      /* 256 bytes */
	};
	/* since BRK_INFO_SIZE_VER1 */
	uint32_t record_bytes;      /* segment bytes this record uses: its
	                               core run and, for breakers, its
	                               extension blocks (not the index) */
	uint32_t failure_streak;    /* consecutive failures since the breaker
	                               last closed: equal to
	                               consecutive_failures while closed; kept
	                               through the trip and while open or
	                               half-open, + 1 per failed probe, 0
	                               after a close or brk_reset() (pybreaker's
	                               fail_counter; issue 24). Was reserved0_
	                               (always 0) before: older libraries
	                               report 0 here */
	uint64_t last_change_age_ms; /* ms since the last state transition
	                                or brk_reset() that ended a
	                                cooling or a forced mode
	                                (breakers); UINT64_MAX: never */
	/* since BRK_INFO_SIZE_VER2: signals (breakers; 0 for other kinds).
	 * Each is read from its own shared words, so a snapshot taken while
	 * calls run may show arrivals - completions differ from the leases
	 * out by the calls between their two steps. */
	uint64_t arrivals;          /* brk_acquire() calls decided: allowed +
	                               rejected_open + rejected_cooling +
	                               rejected_full */
	uint64_t completions;       /* releases with a verdict or a cancel:
	                               successes + failures + healthy_errors +
	                               ignored + cancelled (+ throttled);
	                               stale releases and reclaims are not */
	uint64_t oldest_in_flight_ms; /* age (ms) of the oldest bulkhead
	                                 permit or half-open probe out, from its
	                                 lease's claim time; 0: none out */
	/* since BRK_INFO_SIZE_VER3: permit hold time (breakers; zero for other
	 * kinds). Each word is read atomically, count is the sum of the
	 * buckets read, so a snapshot taken while calls end may show a sum_us
	 * one or two holds off from count. */
	union {
		struct brk_hold_info hold;
		uint64_t hold_room_[32];        /* 256 bytes */
	};
	/* since BRK_INFO_SIZE_VER4 (marks callers whose brk_config has fleet,
	 * fleet_probe: BRK_CONFIG_SIZE_VER3) */
	uint64_t config_seq;        /* breakers: the settings' sequence, +1 per
	                               committed brk_breaker_update() or
	                               configure; the same value in two
	                               snapshots: the settings did not change
	                               in between. 0 for other kinds */
	/* since BRK_INFO_SIZE_VER5 (it also marks callers whose brk_config
	 * has implicit_pace: BRK_CONFIG_SIZE_VER4) */
	uint64_t generation_full;   /* breakers: the state's generation, all
	                               56 bits (generation above is its low
	                               32, kept for callers built before) */
	double implicit_pace_per_s; /* breakers: the learned rate of the
	                               breaker's implicit pace (NAME:pace)
	                               now; 0: it has none */
	/* since BRK_INFO_SIZE_VER6 (it also marks callers whose brk_config
	 * has concurrency_auto, min_concurrent: BRK_CONFIG_SIZE_VER5) */
	double concurrency_limit;   /* breakers with a bulkhead: the limit in
	                               force now (the learned one with
	                               concurrency_auto, else max_concurrent);
	                               0: no bulkhead */
	uint64_t latency_baseline_us; /* concurrency_auto: the no-load
	                               baseline (the smallest sample of the
	                               last 5..10 s), µs; 0: not measured yet */
	uint64_t latency_recent_us; /* concurrency_auto: the last window's
	                               mean latency, µs; 0: none yet */
	uint64_t queued;            /* waiters in the bulkhead's queue now:
	                               brk_admit() tickets the head has not
	                               yet passed (one that gave up behind the
	                               head counts until the head passes it);
	                               at most 2^20 (a larger gap is a garbage
	                               word); docs/design/limits.md "Fair
	                               bulkhead waits" */
};

#define BRK_INFO_SIZE_VER0 2592u /* sizeof in BREAKER_0 */
#define BRK_INFO_SIZE_VER1 2608u /* + record_bytes, last_change_age_ms */
#define BRK_INFO_SIZE_VER2 2632u /* + arrivals, completions,
                                    oldest_in_flight_ms */
#define BRK_INFO_SIZE_VER3 2888u /* + hold (permit hold-time histogram) */
#define BRK_INFO_SIZE_VER4 2896u /* + config_seq (and config VER3: fleet) */
#define BRK_INFO_SIZE_VER5 2912u /* + generation_full, implicit_pace_per_s
                                    (config VER4) */
#define BRK_INFO_SIZE_VER6 2944u /* + concurrency_limit, latency_baseline_us,
                                    latency_recent_us, queued (config VER5) */

/**
 * brk_breaker_info - a snapshot of one breaker. Each word is read
 * atomically; the snapshot as a whole is not (counters may move while it
 * is taken). Works on a read-only attach. A macro over
 * brk_breaker_info_sz(b, out, sizeof(*out)): writes exactly @size bytes at
 * @out (see "Growing structs"). Returns 0, -EINVAL (NULL).
 */
BRK_API int brk_breaker_info_sz(brk_breaker *b, struct brk_info *out,
				size_t size);
BRK_API int (brk_breaker_info)(brk_breaker *b, struct brk_info *out);
#define brk_breaker_info(b, out) brk_breaker_info_sz((b), (out), sizeof(*(out)))

/*
 * The few words of a breaker a caller polls on every call (pybreaker's
 * fail_counter, success_counter, current_state): read without the
 * snapshot's window, lease and counter scan.
 */
struct brk_counts {
	uint32_t size;              /* set by the macro: sizeof as compiled */
	int state;                  /* enum brk_state of the state word: an
	                               OPEN whose period has ended still reads
	                               OPEN until a caller moves it on */
	uint64_t generation;        /* the state word's 56-bit generation */
	uint32_t consecutive_failures; /* as brk_info: the closed
	                               generation's count, 0 otherwise */
	uint32_t failure_streak;    /* as brk_info.failure_streak */
	uint32_t half_open_successes;
	uint32_t cooling_level;
	int mode;                   /* enum brk_mode */
	uint32_t reserved_;         /* 0 */
};
#define BRK_COUNTS_SIZE_VER0 40u /* sizeof when introduced */

/**
 * brk_breaker_counts - state, generation and the consecutive counts of
 * @b: four atomic loads of the record (state, fails, half-open
 * successes, mode), each exact, the set not a snapshot (a transition
 * between the loads shows the new state beside counts the transition's
 * winner has not yet carried: 0). About 5 ns in C; no clock read, no
 * syscall, nothing written (works on a read-only attach). A retired
 * record reads as its last values. A macro over brk_breaker_counts_sz(b,
 * out, sizeof(*out)): exactly @size bytes are written (see "Growing
 * structs"). Returns 0, -EINVAL (NULL, @size below 8 or above
 * BRK_STRUCT_SIZE_MAX). (lib/src/half_open.c)
 */
BRK_API int brk_breaker_counts_sz(brk_breaker *b, struct brk_counts *out,
				  size_t size);
BRK_API int (brk_breaker_counts)(brk_breaker *b, struct brk_counts *out);
#define brk_breaker_counts(b, out) brk_breaker_counts_sz((b), (out), sizeof(*(out)))

/**
 * brk_record_count - records published so far (bounded by the
 * capacity): the live records of the segment.
 */
BRK_API uint32_t brk_record_count(brk_segment *seg);

/**
 * brk_info_at - snapshot the record whose ref is @idx (brk_info.index:
 * its first 64-byte unit in the arena; refs are not dense: walk the name
 * index, or units 1 .. arena_used_bytes / unit_bytes of
 * brk_segment_info; each unit costs about one index lookup). Returns 0,
 * -ENOENT (@idx is not the start of a published record), -BRK_ECORRUPT
 * (the name index points at @idx and the record there is damaged).
 * Buckets and budgets fill name, index, kind and their own member
 * (.bucket, .budget) here. A macro over brk_info_at_sz(seg, idx, out,
 * sizeof(*out)) (see "Growing structs"); -EINVAL (NULL) too.
 */
BRK_API int brk_info_at_sz(brk_segment *seg, uint32_t idx,
			   struct brk_info *out, size_t size);
BRK_API int (brk_info_at)(brk_segment *seg, uint32_t idx, struct brk_info *out);
#define brk_info_at(seg, idx, out) \
	brk_info_at_sz((seg), (idx), (out), sizeof(*(out)))

/*
 * Iterating over the records (lib/src/iter.c). The cursor is a position in
 * the segment's name index: start with *cursor = 0 and call again with the
 * same cursor until -ENOENT. Records come in name-index order (the order
 * of their names' hashes, not sorted and not in creation order), each
 * record at most once, and a record that exists from the first call to
 * the last exactly once unless a retirement meanwhile moved its index
 * slot back (a retirement shifts the later slots of its chain into the
 * freed one: such a record may be missed by a walk already past that
 * slot). A record created or retired meanwhile may or may not be
 * returned. Cost: one step per index
 * slot (2 to 4 slots per record of capacity) plus the record's own read;
 * nothing is allocated and no lock is taken, so a reader never slows down
 * a worker. Thread- and process-safe; works on a read-only attach.
 *
 * A corrupt slot (its record index out of range, or a record whose kind,
 * name or name hash disagrees with the slot) is reported, not skipped:
 * -BRK_ECORRUPT with the cursor already past it, so the caller can report
 * it (the slot is at *cursor - 1) and go on with the next call.
 */

/**
 * brk_record_next - the next record of the segment, as a full snapshot
 * (brk_breaker_info() for breakers, brk_info_at() for buckets and
 * budgets). A macro over brk_record_next_sz(seg, cursor, out,
 * sizeof(*out)) (see "Growing structs"). Returns 0 (*out filled, *cursor
 * advanced), -ENOENT (no more records; *cursor left at the end),
 * -BRK_ECORRUPT (see above; *out zeroed), -EINVAL (NULL argument).
 */
BRK_API int brk_record_next_sz(brk_segment *seg, uint64_t *cursor,
			       struct brk_info *out, size_t size);
BRK_API int (brk_record_next)(brk_segment *seg, uint64_t *cursor,
			      struct brk_info *out);
#define brk_record_next(seg, cursor, out) \
	brk_record_next_sz((seg), (cursor), (out), sizeof(*(out)))

/*
 * What brk_record_next_brief() returns: a record's identity and state only,
 * read from its first two cache lines (no counters, window or lease scan),
 * so filtering by name, kind or state costs a fraction of a full snapshot.
 */
struct brk_record_brief {
	char name[BRK_NAME_MAX + 1];
	uint32_t index;              /* record index, as brk_info.index */
	int kind;                    /* enum brk_kind */
	int state;                   /* enum brk_state; BRK_CLOSED for buckets
	                                and budgets */
	int mode;                    /* enum brk_mode; BRK_MODE_NORMAL for
	                                buckets and budgets */
	uint64_t last_change_age_ms; /* as brk_info.last_change_age_ms */
};

#define BRK_RECORD_BRIEF_SIZE_VER0 88u /* sizeof when introduced */

/**
 * brk_record_next_brief - the next record of the segment, name and state
 * only (struct brk_record_brief). Same cursor, order, concurrency and
 * corruption rules as brk_record_next(); get the full snapshot of a
 * record it returned with brk_info_at(seg, brief.index, &info). A macro
 * over brk_record_next_brief_sz(seg, cursor, out, sizeof(*out)). Returns
 * 0, -ENOENT (the end), -BRK_ECORRUPT, -EINVAL.
 */
BRK_API int brk_record_next_brief_sz(brk_segment *seg, uint64_t *cursor,
				     struct brk_record_brief *out, size_t size);
BRK_API int (brk_record_next_brief)(brk_segment *seg, uint64_t *cursor,
				    struct brk_record_brief *out);
#define brk_record_next_brief(seg, cursor, out) \
	brk_record_next_brief_sz((seg), (cursor), (out), sizeof(*(out)))

BRK_API const char *brk_state_name(int state);     /* "closed", "open", "half_open" */
BRK_API const char *brk_outcome_name(int outcome); /* "success", ... or "unknown" */
BRK_API const char *brk_reason_name(int reason);   /* "timeout", ... */
BRK_API const char *brk_lease_kind_name(int kind); /* "probe", "permit" */

/* ---------------------------------------------------------------------- */
/* Supervisor (breakerd) and lease reclaim                                  */
/* ---------------------------------------------------------------------- */

struct brk_reclaim_stats {
	uint32_t dead_owner;    /* leases freed because the owner died */
	uint32_t expired_probe; /* probes older than probe_timeout_ms */
	uint32_t reopened;      /* breakers re-opened by a reclaimed probe */
	uint32_t reserved_[13]; /* fixed size: 64 bytes (rule 3); zeroed */
};

/**
 * brk_reclaim - one scan of the records that may hold a lease (those a
 * claim marked in the segment's lease map) plus a rotating slice of all
 * records that covers the segment every 10 minutes at the supervisor's
 * interval: free each lease whose owner died (no such pid, or a pid
 * reused by a process with another start time), each lease bound to a
 * thread that has exited (brk_permit_bind_thread()), and each probe older
 * than probe_timeout_ms. A reclaimed probe counts as a failed probe: the
 * breaker re-opens with the doubled cooling period. Each reclaim is one
 * CAS(owner, dead token -> free), recorded as an event. Makes syscalls
 * (kill(pid, 0), /proc reads): one check per owning process per call,
 * plus one per lease found dead. Its cost follows the leases held, not
 * the records (docs/design/lifecycle.md "Lease registry"). Safe to run from
 * several processes at once. Returns 0, -EINVAL (@seg NULL), -EROFS.
 */
BRK_API int brk_reclaim(brk_segment *seg, struct brk_reclaim_stats *st);

/* ---------------------------------------------------------------------- */
/* Retirement of idle records                                              */
/* ---------------------------------------------------------------------- */

/* What brk_retire_idle() did. cursor is in and out (the rest is out,
 * zeroed by the call): start the walk at index slot cursor (0 the first
 * time, then the value the last call left). */
struct brk_retire_stats {
	uint32_t cursor;         /* in: first index slot; out: the next one */
	uint32_t wrapped;        /* 1: this call reached the end of the index */
	uint32_t visited;        /* records looked at */
	uint32_t retired;        /* records retired */
	uint32_t busy_lease;     /* not retired: a probe or permit lease held */
	uint32_t busy_state;     /* not retired: not closed, or a forced mode */
	uint32_t busy_recent;    /* not retired: activity within idle_ms */
	uint32_t busy_locked;    /* not retired: the index lock was busy */
	uint32_t index_slots;    /* slots in the whole index (to size @max) */
	uint32_t reserved_[7];   /* fixed size: 64 bytes (rule 3); zeroed */
};

/**
 * brk_retire - retire the record @name (a breaker, bucket or retry
 * budget), so its name and its slot can be used again.
 *
 * A record is retired when it is idle: (breakers) state closed and mode
 * normal, no probe or bulkhead permit lease held; (all kinds) its activity
 * - the sum of its counters (breakers: every counter of struct
 * brk_counters; buckets: taken, denied, tokens; budgets: deposits,
 * retries, floor retries, deferred) - unchanged for @idle_ms (ms) as seen
 * by the retirement sweep (brk_retire_idle(), breakerd --retire-idle, or
 * earlier calls of this function with @idle_ms > 0, which note what they
 * see the same way): a record not seen unchanged that long is busy. @idle_ms 0
 * retires now whatever its recent traffic, if it has no lease and (a
 * breaker) is closed in mode normal; calls in flight without a lease
 * then count into the retired record (lost).
 *
 * What other processes observe: the name is gone from the index at once
 * (brk_breaker_find() and the other finds return -ENOENT; the get
 * functions create a fresh record: closed, counters zero, the settings
 * they pass). A handle resolved before notices on its next call (one load
 * of the record's generation-tagged head word) and re-resolves by name:
 * a handle from a get function re-creates the record with the settings it
 * was made with, one from a find function gets -ENOENT. A permit taken
 * before never blocks forever: a record with a lease is never retired.
 * The slot is handed out again only after it has been free for
 * BRK_RETIRE_QUARANTINE_MS on the segment's clock (docs/design/lifecycle.md
 * "Retirement": what a writer stalled longer than that can do).
 *
 * Takes the segment's index lock (bounded wait; a holder that died is
 * taken over). Thread- and process-safe.
 *
 * Returns 0 (retired), -EINVAL (NULL, a bad name), -ENOENT (no such
 * record), -EBUSY (not idle: a lease is held, or the breaker is not
 * closed, in a forced mode or in fallback (brk_set_fallback()), or -
 * @idle_ms > 0 - its activity changed
 * within @idle_ms or the sweep has not watched it that long; brk_info()
 * tells which), -EROFS (read-only attachment), -BRK_ECONTENDED (the index
 * lock stayed busy for 2 s), -BRK_ECORRUPT.
 */
BRK_API int brk_retire(brk_segment *seg, const char *name, uint64_t idle_ms);

/**
 * brk_retire_idle - the idle sweep: walk up to @max index slots (0: the
 * whole index) from @st->cursor, and for each record found note its
 * activity (the counter sum, see brk_retire()) and when it was first seen
 * unchanged, then retire it if it has been idle for at least @idle_ms
 * (ms, > 0) by the rules of brk_retire(). The notes live in the record,
 * so sweeps from several processes (breakerd, bctl) share them. Visiting
 * every slot once per idle_ms / 4 retires a record between idle_ms and
 * 1.25 * idle_ms after its last activity.
 *
 * Lookups and calls of other processes never wait for it; it takes the
 * index lock only to retire. Fills @st (required; cursor is in/out).
 * Returns the number retired (>= 0), -EINVAL (NULL @seg or @st, @idle_ms
 * 0), -EROFS, -BRK_ECORRUPT.
 */
BRK_API int brk_retire_idle(brk_segment *seg, uint64_t idle_ms, uint32_t max,
			    struct brk_retire_stats *st);

/* A retired slot is reused only after this long free (segment clock). */
#define BRK_RETIRE_QUARANTINE_MS 10000u

/**
 * brk_heartbeat - publish this process as the supervisor: its pid, scan
 * interval (ms) and the current time. bctl shows the heartbeat's age.
 * Returns 0, -EROFS.
 */
BRK_API int brk_heartbeat(brk_segment *seg, uint64_t interval_ms);

/**
 * brk_daemon_leave - the supervisor stops: clear its pid and heartbeat
 * (only if they are this process's), so brk_segment_info() reports no
 * daemon rather than a stale pid. Returns 0, -EROFS.
 */
BRK_API int brk_daemon_leave(brk_segment *seg);

/* ---------------------------------------------------------------------- */
/* Events                                                                   */
/* ---------------------------------------------------------------------- */

enum brk_event_reason {
	BRK_EV_THRESHOLD = 1,    /* consecutive failures reached */
	BRK_EV_COOLED = 2,       /* cooling period over: open -> half_open */
	BRK_EV_PROBE_OK = 3,     /* success_threshold probes: -> closed */
	BRK_EV_PROBE_FAILED = 4, /* half_open -> open, cooling doubled */
	BRK_EV_RETRY_AFTER = 5,  /* Retry-After above max_wait_ms: -> open */
	BRK_EV_TRIP = 6,         /* brk_trip() / bctl trip */
	BRK_EV_RESET = 7,        /* brk_reset() / bctl reset */
	BRK_EV_RECLAIM_DEAD = 8,    /* lease of a dead owner freed */
	BRK_EV_RECLAIM_TIMEOUT = 9, /* probe older than probe_timeout_ms */
	BRK_EV_COOL_UNTIL = 10,  /* shared cool-until set from a Retry-After */
	BRK_EV_FAILURE_RATE = 11,
	BRK_EV_SLOW_RATE = 12,   /* slow-call rate reached: -> open */
	BRK_EV_FORCED = 13,      /* brk_set_mode(); value = enum brk_mode */
	BRK_EV_RETIRED = 14,     /* brk_retire() / the idle sweep retired the
	                            record; value = the idle ms asked (0: now) */
	BRK_EV_PACE_CUT = 15,    /* brk_pace_report() cut a pace's rate;
	                            value = the new rate in milli tokens/s */
	BRK_EV_HEALTH = 16,      /* a name's health state changed (brk_health()):
	                            from/to = enum brk_health_state, value =
	                            enum brk_health_code */
	BRK_EV_FLEET_LINK = 17,  /* the fleet link's state changed
	                            (brk_fleet_report()): name "", from/to =
	                            enum brk_fleet_state, value = reconnects */
	BRK_EV_PACE_IMPLICIT = 18, /* a breaker's first rate-limit answer made
	                            its implicit pace (name: NAME:pace);
	                            value = its first rate in milli tokens/s.
	                            Not a cut: breakerd's fleet link does not
	                            publish it */
	BRK_EV_HALF_OPEN = 19    /* brk_half_open(): forced to half-open */
};

struct brk_event {
	uint64_t seq;        /* 1, 2, ... host-wide */
	uint64_t mono_ns;    /* the writer's clock */
	uint64_t wall_ms;    /* ms since the Unix epoch */
	char name[BRK_NAME_MAX + 1];
	int from, to;        /* enum brk_state; equal for non-transitions */
	int reason;          /* enum brk_event_reason */
	int32_t pid;         /* the process that wrote it (for reclaims: the
	                        owner that died) */
	uint64_t value;      /* reason-specific: open period ms, wait ms */
	/* since BRK_EVENT_SIZE_VER1 */
	char origin[BRK_HOST_ID_MAX + 1]; /* "": a decision of this host; else
	                        the host id of the fleet peer whose decision
	                        breakerd applied (brk_set_origin()); "?" if
	                        the segment's peer table has since reused the
	                        slot */
};

#define BRK_EVENT_SIZE_VER0 112u /* sizeof in BREAKER_0 */
#define BRK_EVENT_SIZE_VER1 176u /* + origin */

/**
 * brk_events_read - copy events with sequence numbers >= *@cursor, oldest
 * first, up to @max of them.
 * @cursor: in: the next sequence number wanted (1 for the oldest still
 *          kept); out: the one after the last copied.
 * @lost:   optional; receives how many wanted events were overwritten
 *          before they could be read (the ring is a fixed size).
 * Lock-free: a slot being written is skipped and read on the next call.
 * A macro over brk_events_read_sz(..., sizeof(*out)): @size is the size of
 * one element as the caller was compiled and the stride of @out; each
 * element gets exactly @size bytes (see "Growing structs"). Callers of
 * BRK_EVENT_SIZE_VER1 or more get origin: "" for this host's decisions,
 * the fleet peer's host id for one breakerd applied (brk_set_origin()),
 * "?" when the segment's peer table has since reused its slot.
 * Returns the number copied (>= 0), -EINVAL (NULL, or @size 0 with @max).
 */
BRK_API int brk_events_read_sz(brk_segment *seg, uint64_t *cursor,
			       struct brk_event *out, size_t max,
			       uint64_t *lost, size_t size);
BRK_API int (brk_events_read)(brk_segment *seg, uint64_t *cursor,
			      struct brk_event *out, size_t max, uint64_t *lost);
#define brk_events_read(seg, cursor, out, max, lost) \
	brk_events_read_sz((seg), (cursor), (out), (max), (lost), sizeof(*(out)))

BRK_API const char *brk_event_reason_name(int reason);

/**
 * brk_events_wait - block until the event ring holds an event at or past
 * *@cursor (of @name, if not NULL) or @timeout_ms passes, without
 * polling: listeners that hear every process's transitions (and the
 * decisions breakerd --fleet applies) as they are written.
 * @cursor:     in: the next sequence wanted (as brk_events_read()); out:
 *              on 1, the sequence of the first matching event (read from
 *              it with brk_events_read()); on 0, past every event looked
 *              at (none matched).
 * @name:       NULL or "": any event; else only events of @name or of a
 *              name below it ("a" matches "a" and "a/b", not "ab").
 * @timeout_ms: -1 forever, 0 look once without blocking, else ms on the
 *              real monotonic clock (never the injected clock: a test on
 *              a fake clock passes 0).
 * A futex on a word of the segment header, keyed by the shared mapping so
 * it works across processes; writers wake sleepers only when the header's
 * waiter count is not 0, so an event costs the writer one extra load when
 * nobody listens and a FUTEX_WAKE when someone does; a sleeper has no
 * periodic wake-up. A waiter killed while blocked leaves the count raised:
 * writers then make one FUTEX_WAKE syscall per event until the segment is
 * recreated (only events pay it, never brk_acquire()/brk_release()). A
 * library without this call (same layout) never wakes sleepers: they see
 * its events at their timeout. Thread- and process-safe; many waiters may
 * share a cursor value. Returns 1 (an event is there), 0 (timed out, or
 * woken by brk_events_kick() or by events none of which matched @name:
 * *@cursor is past them; call again),
 * -EINVAL (NULL, @timeout_ms below -1, a bad @name), -EROFS (would block
 * on a read-only attach: it cannot register as a waiter; pass 0 and
 * poll), -EINTR (a signal arrived: call again).
 * (lib/src/event_wait.c)
 */
BRK_API int brk_events_wait(brk_segment *seg, uint64_t *cursor,
			    const char *name, int64_t timeout_ms);

/**
 * brk_events_kick - wake every process blocked in brk_events_wait() on
 * this segment (each returns 1 if a matching event is there, else 0):
 * how a listener thread is told to look at its stop flag. Returns 0, -EINVAL
 * (NULL), -EROFS.
 */
BRK_API int brk_events_kick(brk_segment *seg);

/**
 * brk_events_waiters - how many callers are blocked in brk_events_wait()
 * on the segment now (host-wide; a dead waiter's count stays). 0 for
 * NULL.
 */
BRK_API uint64_t brk_events_waiters(brk_segment *seg);

/* ---------------------------------------------------------------------- */
/* Health states                                                            */
/* ---------------------------------------------------------------------- */

/*
 * The health of a name, for a status page or a load balancer: what a
 * caller of NAME would meet now, summed over NAME's subtree. The subtree
 * of NAME is every record (any kind) named NAME, NAME/... or NAME:...;
 * its ancestors are the breakers named by NAME's '/' prefixes ("a" and
 * "a/b" of "a/b/c"), the ones whose state refuses NAME's calls
 * (hierarchy). Precedence, first match wins (docs/design/observability.md
 * "Health states"):
 *   fallback     brk_set_fallback(NAME, 1) is on
 *   unavailable  NAME's breaker or an ancestor breaker refuses every
 *                call: open (deadline not passed), forced open, or
 *                half-open with every probe slot busy
 *   partial      some descendant breaker (NAME/..., NAME:...) is
 *                unavailable by its own state
 *   delayed      NAME's breaker or an ancestor is cooling (shared
 *                cool-until from a Retry-After), or a paced bucket of the
 *                subtree refused a take in the last second while its
 *                learned rate is below its ceiling ("paced below demand")
 *   live         none of these
 * A breaker in the forced state disabled or metrics_only refuses nothing
 * and counts as live.
 */
enum brk_health_state {
	BRK_HEALTH_LIVE = 0,
	BRK_HEALTH_DELAYED = 1,
	BRK_HEALTH_PARTIAL = 2,
	BRK_HEALTH_UNAVAILABLE = 3,
	BRK_HEALTH_FALLBACK = 4
};

/* Why (struct brk_health.code). The values shared with enum
 * brk_admit_code (GO, BREAKER_OPEN, COOLING, RATE_LIMITED) are equal to
 * them; PARTIAL and FALLBACK lie past the admission codes. Stable. */
enum brk_health_code {
	BRK_HEALTH_CODE_GO = 0,           /* live */
	BRK_HEALTH_CODE_BREAKER_OPEN = 2, /* unavailable */
	BRK_HEALTH_CODE_COOLING = 3,      /* delayed: cool-until */
	BRK_HEALTH_CODE_RATE_LIMITED = 4, /* delayed: paced below demand */
	BRK_HEALTH_CODE_PARTIAL = 8,      /* partial */
	BRK_HEALTH_CODE_FALLBACK = 9      /* fallback */
};

struct brk_health {
	uint32_t size;       /* bytes the library wrote (min of the caller's
	                        size and its own) */
	int state;           /* enum brk_health_state */
	int code;            /* enum brk_health_code */
	char by[BRK_NAME_MAX + 1]; /* the record that decided (NAME when
	                        live or fallback) */
	uint64_t since_age_ms; /* ms since the recorded state began;
	                        UINT64_MAX: not recorded (NAME has no breaker
	                        record, a read-only handle that found no
	                        stored word, or the arena is full) */
	uint32_t children;   /* records of the subtree other than NAME */
	uint32_t children_unavailable; /* descendant breakers unavailable by
	                        their own state */
	uint64_t reserved_[8];
};

#define BRK_HEALTH_SIZE_VER0 160u /* sizeof when introduced */

/**
 * brk_health - evaluate the health of @name (rules above) and record it.
 * @name: any valid record name; it need not be a record itself if some
 *        record of its subtree exists ("pay" with only "pay/eu").
 * @out:  filled (exactly @size bytes, see "Growing structs"); a macro
 *        over brk_health_sz(seg, name, out, sizeof(*out)).
 *
 * Records: when NAME is a breaker, its stored health word (state, code,
 * since when; in the breaker's window extension block, allocated on the
 * first evaluation) is CASed to the state computed now; the one caller
 * whose CAS changes the state writes a BRK_EV_HEALTH event (from/to =
 * states, value = code). So each transition is one event whichever
 * process evaluated it (a worker, bctl health, breakerd --health NAME
 * every scan), and since_age_ms is the same for all of them. A change of
 * code only (unavailable by an ancestor instead of by NAME) updates the
 * word without an event. A stored word that fails validation (unknown
 * state or code, since more than a second ahead of the caller's clock) is
 * not trusted: it is replaced by
 * the computed state, since now, without an event. A name without a
 * breaker record is computed only (since_age_ms = UINT64_MAX, no event):
 * its stored word would otherwise have to live on another name's record.
 * A read-only handle only computes (it reads the stored word for
 * since_age_ms when its state matches; it writes nothing).
 *
 * Cost: NAME and its ancestors are index lookups; the descendants are
 * found by one walk of the name index (every slot, and the name of each
 * live record): O(index_slots), about 2 x capacity slots, whatever the
 * size of the subtree (docs/design/observability.md "Health states" has the
 * figure for 10^6 records). No lock, no syscall besides the clock.
 *
 * Thread- and process-safe; lock-free. A concurrent evaluator in another
 * process sees either the old or the new stored word, never a torn one.
 * Returns 0, -EINVAL (NULL, a bad @size), -ENAMETOOLONG / -EINVAL (an
 * invalid name, as brk_name_validate()), -ENOENT (no record of the
 * subtree), -BRK_ECORRUPT (the name index or a record fails validation).
 */
BRK_API int brk_health_sz(brk_segment *seg, const char *name,
			  struct brk_health *out, size_t size);
BRK_API int (brk_health)(brk_segment *seg, const char *name,
			 struct brk_health *out);
#define brk_health(seg, name, out) \
	brk_health_sz((seg), (name), (out), sizeof(*(out)))

/**
 * brk_set_fallback - turn NAME's fallback flag on (@on != 0) or off: an
 * operator's or a caller's statement that NAME is being served by its
 * fallback, which wins over every other health state until cleared. One
 * CAS of the fallback word (on:1 | since) in NAME's breaker record's
 * window extension block (allocated if absent); then NAME's health is
 * evaluated and recorded as brk_health() does, so the transition to and
 * from "fallback" is one event at once. Every process sees it on its next
 * evaluation. Thread- and process-safe.
 * Returns 0, -EALREADY (already in that position: nothing written),
 * -EINVAL, -ENAMETOOLONG, -ENOENT (no record named NAME), -EMEDIUMTYPE
 * (NAME is a bucket or budget: the flag lives on a breaker), -EROFS
 * (read-only handle), -ENOSPC (arena full: no room for the block),
 * -BRK_ECONTENDED, -BRK_ECORRUPT.
 */
BRK_API int brk_set_fallback(brk_segment *seg, const char *name, int on);

/** brk_health_state_name - "live", "delayed", "partial", "unavailable",
 * "fallback", or "unknown". Static string; thread-safe. */
BRK_API const char *brk_health_state_name(int state);

/** brk_health_code_name - "GO", "BREAKER_OPEN", "COOLING",
 * "RATE_LIMITED", "PARTIAL", "FALLBACK", or "unknown". Static string;
 * thread-safe. */
BRK_API const char *brk_health_code_name(int code);

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */
/* ---------------------------------------------------------------------- */

/**
 * brk_parse_duration - parse "250ms", "30s", "5m", "2h" (also "1500us"
 * rounded up to ms, and "1d") into milliseconds. A bare number, a
 * negative value, garbage or an overflow is -EINVAL (-ERANGE above
 * BRK_MAX_DURATION_MS). Thread-safe, no allocation.
 */
BRK_API int brk_parse_duration(const char *s, uint64_t *ms);

/* ---------------------------------------------------------------------- */
/* Token buckets (GCRA)                                                     */
/* ---------------------------------------------------------------------- */

/*
 * A bucket is a rate limit shared by every process on the host, kept as
 * a GCRA (Generic Cell Rate Algorithm, ATM Forum Traffic Management 4.0,
 * 1996; as used by Brandur Leach's redis-cell, github.com/brandur/
 * redis-cell): one 64-bit "theoretical arrival time" (TAT) word in
 * nanoseconds of the segment clock, changed by one CAS.
 *
 *   T   = emission interval = round(1e9 / rate_per_s) ns (an integer: the
 *         effective rate is 1e9 / T, within 0.5 ns per token of the asked
 *         one);
 *   tau = T * burst.
 *   take(n) at time now:  base = max(TAT, now);  new = base + n * T;
 *         new - now > tau  ->  refused, nothing is written;
 *         else             CAS(TAT, old -> new).
 *
 * Burst semantics (differs from redis-cell by one): @burst is the bucket's
 * capacity. A full bucket (new, or idle for burst * T) grants exactly
 * @burst tokens at once; after that one token per T. Over any interval of
 * length d the bucket grants at most burst + floor(d / T) tokens (e.g.
 * 200/s, burst 20: 20 at t = 0, then exactly 200 more by t = 1 s).
 *
 * A refusal writes nothing, so under overload the TAT's cache line stays
 * shared. A bucket has no owner and no lease: nothing needs reclaiming.
 */
typedef struct brk_bucket brk_bucket;

#define BRK_BUCKET_MAX_RATE 1e9      /* tokens/s (T = 1 ns) */
#define BRK_BUCKET_MIN_RATE 1e-4     /* tokens/s (one per 2 h 47 min) */
#define BRK_BUCKET_MAX_BURST 1000000u

/**
 * brk_bucket_get - get or create the bucket @name.
 * @seg:        an attached, writable segment.
 * @name:       see brk_name_validate(); one namespace with breakers.
 * @rate_per_s: tokens per second, finite, BRK_BUCKET_MIN_RATE ..
 *              BRK_BUCKET_MAX_RATE.
 * @burst:      capacity in tokens, 1 .. BRK_BUCKET_MAX_BURST.
 * @out:        receives a handle owned by @seg (valid until brk_detach()).
 *
 * The settings are used only if this call creates the bucket: an existing
 * one keeps its settings and its TAT (use brk_bucket_configure()). A new
 * bucket starts full. Concurrent get-or-create from many processes yields
 * one record; its settings are those of one of the creators (the first
 * CAS(settings word, 0 -> settings)). Thread- and process-safe.
 * Returns 0, or -EINVAL (rate, burst, NULL), -EINVAL/-ENAMETOOLONG (name),
 * -EROFS (absent, read-only attach), -ENOSPC (record table full),
 * -EMEDIUMTYPE (the name is a breaker or a budget), -BRK_ECORRUPT,
 * -BRK_ECONTENDED, -ENOMEM.
 */
BRK_API int brk_bucket_get(brk_segment *seg, const char *name, double rate_per_s,
		   uint32_t burst, brk_bucket **out);

/**
 * brk_bucket_find - like brk_bucket_get() but never creates; works on a
 * read-only attach. Returns 0, -ENOENT (no such record), or the errors of
 * brk_bucket_get().
 */
BRK_API int brk_bucket_find(brk_segment *seg, const char *name, brk_bucket **out);

/**
 * brk_bucket_configure - change an existing bucket's rate and burst.
 * @k:          the bucket.
 * @rate_per_s: as for brk_bucket_get().
 * @burst:      as for brk_bucket_get().
 *
 * One CAS replaces the settings word (interval and burst together, so a
 * taker never sees half of a change); then the TAT is rescaled by CAS so
 * the tokens owed stay owed at the new rate:
 *   TAT' = now + min((TAT - now) * T' / T, tau')   (only if TAT > now)
 * so a raised rate takes effect at once (redis-cell #54: a raised limit
 * that keeps the old TAT goes on refusing at the old rate). All
 * arithmetic saturates. A take that runs concurrently with this call may
 * be judged by the old or the new setting. Thread- and process-safe.
 * Returns 0, -EINVAL (rate, burst, NULL), -EROFS, -BRK_ECORRUPT,
 * -EMEDIUMTYPE (@k is a pace: see brk_pace_update()),
 * -BRK_ECONTENDED (settings unchanged, or changed but the TAT not
 * rescaled: call again).
 */
BRK_API int brk_bucket_configure(brk_bucket *k, double rate_per_s, uint32_t burst);

/* Settings of a bucket, for brk_bucket_update(). */
enum brk_bucket_field {
	BRK_BUCKET_RATE = 1u << 0,
	BRK_BUCKET_BURST = 1u << 1
};

/**
 * brk_bucket_update - change only the settings named in @fields (an OR of
 * enum brk_bucket_field; 0: nothing to do) of an existing bucket; the
 * other keeps its stored value (@rate_per_s or @burst is then not read).
 * Rate and burst share one settings word, changed by a bounded CAS loop
 * that re-reads it on every try, so two processes changing the rate and
 * the burst at the same time both get their change. Then the TAT is
 * rescaled as in brk_bucket_configure(). Thread- and process-safe.
 * Returns 0, -EINVAL (a given value out of range, unknown bits, NULL),
 * -EROFS, -EAGAIN (settings never stored, and only one of them given),
 * -BRK_ECORRUPT (the stored word is corrupt and only one given),
 * -EMEDIUMTYPE (@k is a pace: its ceiling, floor and burst change with
 * brk_pace_update(), which keeps the ceiling above the floor),
 * -BRK_ECONTENDED (as brk_bucket_configure()).
 */
BRK_API int brk_bucket_update(brk_bucket *k, double rate_per_s, uint32_t burst,
		      uint64_t fields);

/**
 * brk_bucket_take - take @n tokens now, or learn when they will be there.
 * @k:             the bucket.
 * @n:             tokens, 1 .. burst (more could never succeed: -EINVAL).
 * @not_before_ns: optional; on 0 receives now; on -BRK_ENOTOKENS the
 *                 absolute time (segment clock, CLOCK_MONOTONIC ns, as
 *                 brk_now_ns()) at which @n tokens will be available if
 *                 nobody else takes any (UINT64_MAX: never within the
 *                 clock's range). The caller decides whether to wait, e.g.
 *                 clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ...).
 *
 * Reads the clock and the settings word, then CAS(TAT, old -> base + n*T)
 * (uatomic_cmpxchg, a full barrier); a refusal writes nothing to the TAT.
 * The loop is bounded (256 tries), re-reading the clock on each. Counters
 * taken/denied (uatomic_inc, no barrier) and tokens_taken
 * (uatomic_add_return) live on another line. No syscall with the default clock, no lock, no allocation.
 * Thread- and process-safe.
 * Returns 0 (granted), -BRK_ENOTOKENS (refused: not enough tokens now),
 * -EINVAL (NULL, n == 0 or n > burst), -EROFS, -EAGAIN (created by another
 * process that died before storing its settings: the next
 * brk_bucket_get() stores them),
 * -BRK_ECORRUPT (settings word out of range), -BRK_ECONTENDED (nothing
 * taken).
 */
BRK_API int brk_bucket_take(brk_bucket *k, uint32_t n, uint64_t *not_before_ns);

/**
 * brk_bucket_wake_ns - when a refused caller that wants to wait should
 * wake: @not_before_ns plus a per-caller jitter, uniform in [0, T) (one
 * emission interval), from the segment's random source (brk_attach_opts.
 * random, else a per-thread xorshift). Saturates at UINT64_MAX.
 *
 * Why: waiters that all sleep until the exact not_before_ns wake together
 * and the first to run wins; the winner is then the first to be refused
 * again, so it is first in the timer queue for the next slot too (equal
 * hrtimer expiries fire in FIFO order). Measured with 8 processes on
 * 200/s: one process got 367 of 619 tokens. Jitter below T costs no
 * capacity (the next token is only due at not_before_ns + T) and makes
 * each slot go to a uniformly random waiter. Reads no shared word.
 * Returns the wake time, or @not_before_ns if @k is NULL or unconfigured.
 */
BRK_API uint64_t brk_bucket_wake_ns(brk_bucket *k, uint64_t not_before_ns);

#define BRK_BUCKET_INFO_SIZE_VER0 136u /* sizeof in BREAKER_0 */
#define BRK_BUCKET_INFO_SIZE_VER1 232u /* + the pace fields (paced .. accepted_per_s) */
#define BRK_BUCKET_INFO_SIZE_VER2 240u /* + implicit */

/**
 * brk_bucket_info - a snapshot: settings, tokens available now, counters.
 * Each word is read atomically, the snapshot as a whole is not. Works on
 * a read-only attach. A macro over brk_bucket_info_sz(k, out,
 * sizeof(*out)) (see "Growing structs").
 * Returns 0, -EINVAL (NULL), -BRK_ECORRUPT.
 */
BRK_API int brk_bucket_info_sz(brk_bucket *k, struct brk_bucket_info *out,
			       size_t size);
BRK_API int (brk_bucket_info)(brk_bucket *k, struct brk_bucket_info *out);
#define brk_bucket_info(k, out) brk_bucket_info_sz((k), (out), sizeof(*(out)))

/** brk_bucket_name - the bucket's name; owned by the handle. */
BRK_API const char *brk_bucket_name(const brk_bucket *k);

/* ---------------------------------------------------------------------- */
/* Pacing (learned rate)                                                    */
/* ---------------------------------------------------------------------- */

/*
 * A pace is a GCRA bucket (kind BRK_KIND_BUCKET, a brk_bucket handle) in
 * "paced" mode: its rate is not set but learned, host-wide and lock-free,
 * from what the upstream answers. Every process on the host shares it.
 *
 * Rate: a new pace runs at its ceiling (no limit until the first
 * throttle, like the AWS SDKs' adaptive retry mode). A rate-limit answer
 * (brk_pace_report(BRK_PACE_LIMITED)) to a request taken at the current
 * rate is a cut: it stores an estimate L of the upstream's limit and the
 * rate then HOLDS just under it and PROBES above it briefly and rarely
 * (the probe-bandwidth cycle of BBR, draft-ietf-ccwg-bbr section 4.3.3,
 * applied to a rate limit: ProbeBW_CRUISE, then ProbeBW_UP until the
 * first loss), with t = seconds since the cut:
 *   rate(t) = HOLD_GAIN x L                           for t <= H
 *   rate(t) = HOLD_GAIN x L x 2^((t - H) / D)         after (the probe)
 *   H = clamp(HOLD_REQS / L, HOLD_MIN, HOLD_MAX) s, D = PROBE_DOUBLE
 * clamped to [floor, ceiling]. A cut while probing (t > H: no 429 while
 * holding, so the limit is at least the hold rate) keeps the larger of L
 * and the accepted rate since the cut (over the whole cycle: exact while
 * the upstream's burst kept what the hold left unused); a GROWING pace
 * (and a first cut) also PROBE_EST_SHARE x the last second's accepted
 * rate - never above the rate sent. If that found GROW_RATIO x L or
 * more, the pace is GROWING (BBR's Startup rule "the bandwidth still
 * grows"; BBR asks 25 % a round, 10 % here: one probe is seconds, not a
 * round trip): no hold, the next probe starts at once. A cut while holding
 * (the limit fell below the hold rate) stores the accepted rate since the
 * last cut (kept at L if that is at or above the rate held: a transient),
 * or under BRK_PACE_EST_MIN_MS after the last cut HOLD_SHORT_CUT x
 * min(the last second's, the rate), or NODATA_CUT x the rate without
 * successes. The first cut of a pace is a probing one. Growth is clocked by the time since the cut, so an idle
 * pace probes back up to its ceiling. A cut also empties the bucket (the
 * next token is one new interval away): the limit that just answered 429
 * gets no burst. The constants were tuned with bench/pace_sim.py --matrix
 * (docs/design.md "Pacing (learned rate)").
 *
 * One cut per round trip: an answer to a request taken before the last
 * cut is ignored (it was sent at the old rate), as TCP reduces once per
 * window: 8 workers' 429s in flight together cut once.
 *
 * Priorities: with reserve_pct > 0, normal-priority takes also pass a
 * second GCRA at (1 - reserve) * rate, so normal work never takes more
 * than that share and high-priority work always has the rest.
 * A refused take writes nothing but counters; a caller that wants to
 * wait reserves its slot instead (brk_pace_reserve(), "Fair waits"
 * below: arrival order across processes; a cut re-spaces the queue).
 * A pace is fully usable through the plain bucket calls too:
 * brk_bucket_take() on a pace takes at the learned rate, as normal
 * priority; brk_bucket_update()/configure() on a pace change its ceiling
 * and burst (the learned state is kept).
 */
#define BRK_PACE_HOLD_GAIN 0.97       /* hold at this x the limit found */
#define BRK_PACE_HOLD_REQS 30.0       /* a hold lasts this many requests at
                                         the limit found ... */
#define BRK_PACE_HOLD_MIN_MS 2000u    /* ... at least this long ... */
#define BRK_PACE_HOLD_MAX_MS 10000u   /* ... at most this long */
#define BRK_PACE_PROBE_DOUBLE_MS 500u /* a probe doubles the rate every */
#define BRK_PACE_GROW_DOUBLE_MS 500u  /* ... also while still growing */
#define BRK_PACE_GROW_RATIO 1.1       /* a probe that found this x the limit
                                         keeps growing (no hold) */
#define BRK_PACE_PROBE_EST_SHARE 0.9  /* a growing probe's cut: at least
                                         this x the last second's accepted
                                         rate */
#define BRK_PACE_HOLD_SHORT_CUT 0.9   /* a cut while holding under 1 s after
                                         the last: this x min(the last
                                         second's accepted rate, the rate) */
#define BRK_PACE_NODATA_CUT 0.7       /* a cut while holding with no
                                         success to estimate from */
#define BRK_PACE_IMPLICIT_START 2.0   /* an implicit pace's first rate, /s
                                         (it grows from there) */

/*
 * Implicit pace (issue 21). A breaker with implicit_pace on (the default)
 * that releases a rate-limit answer as a failure (brk_release() with
 * BRK_FAILURE and BRK_REASON_RATE_LIMITED, or BRK_REASON_OVERLOADED with
 * a Retry-After: brk_pace_signal_of() says BRK_PACE_LIMITED) gets a pace
 * of its own, named NAME BRK_PACE_IMPLICIT_SUFFIX ("api:pace"; a breaker
 * name longer than BRK_NAME_MAX - 5 gets none), made then with ceiling
 * BRK_PACE_IMPLICIT_CEILING, floor BRK_PACE_IMPLICIT_FLOOR, burst
 * BRK_PACE_DEFAULT_BURST, the breaker's fleet setting, and flagged
 * implicit (brk_bucket_info().implicit). It starts GROWING from
 * BRK_PACE_IMPLICIT_START tokens/s (one interval to its first token: the
 * upstream just said no) and learns the limit by the rule above. From
 * then on:
 *  - that answer and every later one is counted BRK_THROTTLED, not as a
 *    failure, and its Retry-After up to max_wait_ms sets no cool-until
 *    (one above max_wait_ms still opens the breaker for that long);
 *  - brk_acquire() of the closed breaker takes one token from the pace
 *    first; a refusal is -BRK_ECOOLING with wait_ms until the token
 *    (cause BRK_CAUSE_PACED, counted in rejected_cooling): the caller
 *    waits as for a cooling period;
 *    brk_admit() instead reserves a slot on the pace (step 3, "Fair
 *    waits"), so its waiters are served in arrival order;
 *  - brk_release() reports successes to it (its accepted-rate estimate)
 *    and rate-limit answers with the permit's admission time (one cut per
 *    round trip).
 * A declared pace (brk_admit() with a pace, bctl exec --pace) releases
 * rate-limit answers throttled itself: its breaker never gets an
 * implicit one. A pace the operator made under the NAME:pace name is
 * used as the breaker's (declared settings, no implicit flag). A plain
 * bucket or another kind of that name: none (the answers stay failures).
 * implicit_pace = 0 turns all of it off for that breaker (an existing
 * NAME:pace is then neither taken from nor reported to).
 */
#define BRK_PACE_IMPLICIT_SUFFIX ":pace"
#define BRK_PACE_IMPLICIT_CEILING 1e6 /* tokens/s: no cap of its own */
#define BRK_PACE_IMPLICIT_FLOOR 0.01  /* tokens/s */
#define BRK_PACE_EST_SHARE 1.0        /* w_max = this x the accepted rate
                                         since the last cut */
#define BRK_PACE_EST_MIN_MS 1000u     /* ... when that window is this long */
#define BRK_PACE_IDLE_MS 2000u        /* a success after at least this long
                                         (whole seconds of the estimate's
                                         slots) without one starts the
                                         window afresh: an idle spell is no
                                         evidence of a lower limit */
#define BRK_PACE_DEFAULT_BURST 2u     /* tokens of tolerance at the rate */
#define BRK_PACE_DEFAULT_RESERVE_PCT 0u
#define BRK_PACE_DEFAULT_FLOOR_DIV 100.0 /* floor = ceiling / this */
#define BRK_PACE_MAX_RESERVE_PCT 90u

struct brk_pace_config {
	uint32_t size;          /* set by brk_pace_config_init() */
	double ceiling_per_s;   /* required: BRK_BUCKET_MIN_RATE ..
	                           BRK_BUCKET_MAX_RATE tokens/s; 0: unset */
	double floor_per_s;     /* 0: ceiling / BRK_PACE_DEFAULT_FLOOR_DIV (at
	                           least BRK_BUCKET_MIN_RATE); <= ceiling */
	uint32_t burst;         /* 0: BRK_PACE_DEFAULT_BURST; 1 ..
	                           BRK_BUCKET_MAX_BURST */
	uint32_t reserve_pct;   /* 0 .. BRK_PACE_MAX_RESERVE_PCT */
	/* since BRK_PACE_CONFIG_SIZE_VER1 */
	uint32_t fleet;         /* 0 (default) or 1: breakerd --fleet publishes
	                           this pace's cuts and applies other hosts'
	                           (brk_pace_cut()) */
};

#define BRK_PACE_CONFIG_SIZE_VER0 32u
#define BRK_PACE_CONFIG_SIZE_VER1 40u /* + fleet */

/**
 * brk_pace_config_init - fill @c with the defaults (ceiling unset: the
 * caller must set it) and its size. A macro over brk_pace_config_init_sz(c,
 * sizeof(*(c))) (see "Growing structs"). Pure, thread-safe.
 * Returns 0, or -EINVAL (NULL, size below BRK_PACE_CONFIG_SIZE_VER0).
 */
BRK_API int brk_pace_config_init_sz(struct brk_pace_config *c, size_t size);
#define brk_pace_config_init(c) brk_pace_config_init_sz((c), sizeof(*(c)))

/**
 * brk_pace_get - get or create the pace @name.
 * @seg:  an attached, writable segment (for an existing pace a read-only
 *        one is enough).
 * @name: see brk_name_validate(); one namespace with breakers and buckets.
 * @c:    settings, used only if this call creates the pace (an existing
 *        pace keeps its settings and learned state; see brk_pace_update()).
 *        Read, not kept: the caller owns it.
 * @out:  receives a handle owned by @seg (valid until brk_detach()); it is
 *        a brk_bucket and works with every brk_bucket_*() call.
 *
 * A new pace runs at its ceiling, never cut. Concurrent get-or-create from
 * many processes yields one record whose settings are one creator's.
 * Thread- and process-safe.
 * Returns 0, or -EINVAL (NULL, a setting out of range, floor > ceiling),
 * -EINVAL/-ENAMETOOLONG (name), -EROFS (absent, read-only attach),
 * -ENOSPC, -EMEDIUMTYPE (the name is a breaker, a budget or a plain,
 * unpaced bucket), -BRK_ECORRUPT, -BRK_ECONTENDED, -ENOMEM.
 */
BRK_API int brk_pace_get(brk_segment *seg, const char *name,
			 const struct brk_pace_config *c, brk_bucket **out);

/* Settings of a pace, for brk_pace_update(). */
enum brk_pace_field {
	BRK_PACE_F_CEILING = 1u << 0,
	BRK_PACE_F_FLOOR = 1u << 1,
	BRK_PACE_F_BURST = 1u << 2,
	BRK_PACE_F_RESERVE = 1u << 3,
	BRK_PACE_F_FLEET = 1u << 4
};

/**
 * brk_pace_update - change only the settings named in @fields (an OR of
 * enum brk_pace_field; 0: nothing to do) of an existing pace; the others
 * keep their stored values. The learned state (last cut) is kept: the
 * rate is clamped to the new floor and ceiling from the next take on. A
 * given 0 floor means the default (ceiling / 100); a new ceiling below
 * the kept floor (floor not given) moves the floor to its default. Ceiling and burst share
 * one word and floor and reserve another, each changed by one CAS, in the
 * order that keeps the floor at or below the ceiling in between; a take
 * running concurrently may be judged by the old or new settings, never
 * finds the pace corrupt. Updaters go one at a time: the call holds the
 * segment's index lock (bounded wait, as creation and retirement) while
 * it reads, checks and writes, so two concurrent updates of different
 * settings never combine into a floor above the ceiling; takes, reports
 * and info never wait for it. After a
 * ceiling change the TAT is rescaled as in brk_bucket_configure().
 * Thread- and process-safe.
 * Returns 0, -EINVAL (a given value out of range, the result's floor above
 * its ceiling, unknown bits, NULL), -EMEDIUMTYPE (a plain bucket), -EROFS,
 * -BRK_ECORRUPT (stored words corrupt), -BRK_ECONTENDED (the index lock
 * stayed busy for 2 s, or a CAS kept losing: call again).
 */
BRK_API int brk_pace_update(brk_bucket *k, const struct brk_pace_config *c,
			    unsigned fields);

enum brk_priority { BRK_PRIORITY_NORMAL = 0, BRK_PRIORITY_HIGH = 1 };

/**
 * brk_pace_take - take one token at the learned rate.
 * @k:             a pace (or a plain bucket: then as brk_bucket_take(k, 1),
 *                 priority ignored).
 * @priority:      enum brk_priority.
 * @taken_at_ns:   optional; on 0 receives the take's time (segment clock,
 *                 ns, as brk_now_ns()): pass it to brk_pace_report().
 * @not_before_ns: optional; on -BRK_ENOTOKENS the earliest time (segment
 *                 clock, ns) a retry can succeed at the current rate;
 *                 sleep to brk_bucket_wake_ns(k, it) and take again. The
 *                 rate moves meanwhile: while it grows, the tolerance
 *                 burst * T shrinks with it, so the time can be early by
 *                 burst * (the change of T); a refused retry just waits
 *                 again. Owed time is in ns: after the rate rose, a debt
 *                 taken at a slower rate drains in real time.
 *
 * Reads the clock and the settings, pace and cut words; r = rate(now),
 * T = 1e9 / r ns, tau = T * burst; one GCRA CAS on the shared TAT
 * (high priority), preceded for normal priority with reserve_pct > 0 by
 * one on the normal TAT at T / (1 - reserve) (given back, by CAS, if the
 * shared one refuses). A refusal writes only the denied counter and the
 * last-refusal time. No syscall with the default clock, no lock, no
 * allocation; bounded CAS loops. Thread- and process-safe; another process
 * sees the TAT move by one CAS.
 * Returns 0 (taken), -BRK_ENOTOKENS (refused), -BRK_ECONTENDED (nothing
 * taken), -EINVAL (NULL, bad priority), -EROFS, -EAGAIN (settings never
 * stored), -BRK_ECORRUPT (a word out of range).
 */
BRK_API int brk_pace_take(brk_bucket *k, int priority, uint64_t *taken_at_ns,
			  uint64_t *not_before_ns);

/*
 * Fair waits (issue 25): reservations on the pace's TAT. A waiting caller
 * does not take-sleep-retry (each free token then goes to a random
 * waiter: p99 wait 3.4 x the mean in bench/pace.sh) but reserves the
 * next free slot at once and sleeps to it: the slot is paid for by the
 * wait, and arrival order is the order in which the reservations' CASes
 * on the shared TAT won, across every process of the host. This is the
 * reservation of Go's golang.org/x/time/rate (Limiter.Reserve) and
 * Guava's RateLimiter (acquire() pays by sleeping), on GCRA's TAT: a
 * reservation moves the TAT by one interval like a take, the slot being
 * the earliest time the take would have passed (TAT - tau).
 *  - No queue head: a waiter that dies holding a reservation costs one
 *    interval of the rate, nothing else (the next slot is unaffected).
 *  - Bounded: a slot more than BRK_PACE_MAX_HORIZON_MS away is refused
 *    (nothing reserved), whatever horizon the caller gives, so the TAT
 *    never runs more than that (plus tau) ahead of the clock.
 *  - A cut while reservations are outstanding keeps the queue and spaces
 *    it at the new rate, by number: each reservation on the shared TAT
 *    is numbered (a shared counter), a ticket that goes raises the
 *    highest number gone, and the cut at time c (its ms, rounded up)
 *    takes q = the numbers reserved and not gone (at most the TAT's
 *    distance at the old rate allows), sets TAT = c + tau_new +
 *    q x T_new and stores the number h before the first of them. A
 *    ticket that sees the cut word change moves its slot to
 *    c + (its number - h) x T_new: order kept, exactly one new interval
 *    apart, nobody before the new spacing, whatever the spacing before
 *    and however many cuts it slept through. A dead waiter's number is
 *    re-spaced at most once (the next ticket to go passes it).
 *  - Priorities (reserve_pct > 0): a normal-priority reservation is made
 *    on the normal TAT (at (1 - reserve) x rate) only; at its slot
 *    brk_ticket_check() takes from the shared TAT for real, and if high
 *    priority used that slot it reserves the next one there. High
 *    priority reserves on the shared TAT, so it passes every normal
 *    waiter not yet at its slot.
 * docs/design/pacing.md "Fair waits".
 */
#define BRK_PACE_MAX_HORIZON_MS 60000u /* the farthest slot reserved, ms */

struct brk_ticket {
	uint32_t size;        /* set by brk_ticket_init() */
	uint32_t priority;    /* enum brk_priority, as reserved */
	uint64_t at_ns;       /* the slot: segment clock, ns (brk_now_ns());
	                         sleep until then, then brk_ticket_check() */
	uint64_t taken_at_ns; /* after brk_ticket_check() 0: the time to give
	                         brk_pace_report(): the take's, or for a
	                         ticket reserved before the pace's last cut
	                         (and re-spaced by it) its reservation's, so
	                         that its 429 does not cut again */
	uint64_t private_[8]; /* the library's; never touch */
};

#define BRK_TICKET_SIZE_VER0 88u /* sizeof when introduced */

/**
 * brk_ticket_init - zero @t and set its size. A macro over
 * brk_ticket_init_sz(t, sizeof(*(t))) ("Growing structs" rule 1: the
 * library writes only within t->size). Pure, thread-safe.
 * Returns 0, or -EINVAL (NULL, size below BRK_TICKET_SIZE_VER0 or above
 * BRK_STRUCT_SIZE_MAX, or not a multiple of 8).
 */
BRK_API int brk_ticket_init_sz(struct brk_ticket *t, size_t size);
#define brk_ticket_init(t) brk_ticket_init_sz((t), sizeof(*(t)))

/**
 * brk_pace_reserve - reserve the next free slot of a pace (or a plain
 * bucket: one TAT at its set rate, priority ignored) for one token.
 * @k:          the pace.
 * @priority:   enum brk_priority.
 * @horizon_ns: the longest wait the caller accepts, ns; 0: only a token
 *              free now. Capped at BRK_PACE_MAX_HORIZON_MS.
 * @t:          a ticket (brk_ticket_init(), or one used before and
 *              finished); owned by the caller, filled by the call. It may
 *              live in any memory of one process: it names no process.
 *
 * One CAS on the shared TAT (the normal TAT for normal priority with
 * reserve_pct > 0) moving it one interval, exactly as brk_pace_take()
 * would at the slot, except that the slot may be in the future: the
 * interval is the learned rate at the slot (the rate's curve is known
 * until the next cut), so a queue goes out at the rate as it grows. Then
 * sleep until t->at_ns (if it is in the future) and call
 * brk_ticket_check() before sending, always. Other processes see the TAT
 * one interval later (their reservations queue behind this one).
 * Thread- and process-safe, lock-free, no syscall with the default clock.
 * Returns 0 (reserved: t->at_ns, at or before now means go at once after
 * brk_ticket_check()), -BRK_ENOTOKENS (the slot is past now + horizon:
 * nothing reserved, t->at_ns says when it would have been, so a caller
 * whose deadline is before it can refuse at once; counted denied),
 * -BRK_ECONTENDED (nothing reserved), -EINVAL (NULL, bad priority or
 * ticket size, a ticket still holding a reservation), -EROFS, -EAGAIN
 * (settings never stored), -BRK_ECORRUPT.
 */
BRK_API int brk_pace_reserve(brk_bucket *k, int priority, uint64_t horizon_ns,
			     struct brk_ticket *t);

/**
 * brk_ticket_check - may the holder of @t send now?
 * Call it at (or after) t->at_ns. A cut since the reservation moves the
 * slot (see "Fair waits"); a normal-priority ticket of a pace with a
 * reserve takes from the shared TAT here, and reserves its next slot if
 * high priority used this one. Counts the take (taken, tokens, high).
 * Thread-safe for distinct tickets; one ticket belongs to one thread.
 * Returns 0 (go: t->taken_at_ns set; the ticket is finished), 1 (not yet:
 * sleep until the new t->at_ns and check again; it may be later than
 * the caller's deadline: then brk_ticket_cancel() and give up),
 * -EINVAL (NULL, a ticket not holding a reservation of @k), -EROFS,
 * -BRK_ECORRUPT, -BRK_ECONTENDED (still reserved: check again or
 * cancel).
 */
BRK_API int brk_ticket_check(brk_bucket *k, struct brk_ticket *t);

/**
 * brk_ticket_cancel - give up the reservation of @t (a deadline, a
 * signal): if it is still the last one reserved (the TAT is still the
 * value it wrote) the TAT moves back one interval by CAS and the slot is
 * free again; else the slot is lost (one interval of the rate, as a
 * waiter that died). The ticket is finished either way.
 * Thread-safe for distinct tickets.
 * Returns 1 (given back), 0 (lost, or the ticket held nothing), -EINVAL
 * (NULL, or a ticket holding a reservation of another pace than @k:
 * nothing done, the ticket still holds it).
 */
BRK_API int brk_ticket_cancel(brk_bucket *k, struct brk_ticket *t);

enum brk_pace_signal { BRK_PACE_OK = 1, BRK_PACE_LIMITED = 2, BRK_PACE_IGNORE = 3 };

/**
 * brk_pace_report - tell the pace how a request taken at @taken_at_ns
 * (brk_pace_take()'s) was answered.
 * @signal:         enum brk_pace_signal (brk_pace_signal_of() maps an
 *                  outcome to it).
 * @retry_after_ms: the answer's Retry-After in ms, <= 0: none. Validated
 *                  only: a pace does not wait it out (its cut replaces
 *                  the cooling; the caller may still sleep it itself).
 *
 * BRK_PACE_LIMITED: counted; cuts the rate iff @taken_at_ns is at or
 * after the last cut (ms resolution; the cut's ms is rounded up, so a
 * request taken in the cut's ms but before it never cuts again): the
 * limit found (brk__pace_cut_limit(): the accepted rate, by whether the
 * pace was holding or probing; docs/design/pacing.md "What a cut
 * stores"), stored
 * with the time by one CAS (a loser re-reads and sees the newer cut);
 * then the TAT is set to at least now + tau (the bucket empty at the new
 * rate); event BRK_EV_PACE_CUT with the new rate.
 * BRK_PACE_OK: counted, and into the accepted-rate estimates (a sliding
 * second; successes since the last cut). BRK_PACE_IGNORE: nothing.
 * Thread- and process-safe; the cut is visible to every process's next
 * take. A lost estimate CAS (contention) counts one success less: a
 * deeper cut, never more takes.
 * Returns 0, 1 (this report cut the rate), -EINVAL (NULL, bad signal, or
 * BRK_PACE_LIMITED with @taken_at_ns after now on the segment clock: a
 * request is taken before it is answered; nothing counted), -EROFS,
 * -BRK_ECORRUPT, -BRK_ECONTENDED (the cut was not stored). A plain
 * bucket: 0, nothing written.
 */
BRK_API int brk_pace_report(brk_bucket *k, uint64_t taken_at_ns, int signal,
			    int64_t retry_after_ms);

/**
 * brk_pace_signal_of - the signal of a call's outcome: BRK_FAILURE with
 * BRK_REASON_RATE_LIMITED (429), or BRK_REASON_OVERLOADED (503/529) with
 * a Retry-After (> 0), -> BRK_PACE_LIMITED; BRK_SUCCESS and
 * BRK_HEALTHY_ERROR -> BRK_PACE_OK; anything else (other failures,
 * rejected, cancelled, unknown values) -> BRK_PACE_IGNORE. Pure.
 */
BRK_API int brk_pace_signal_of(int outcome, int reason, int64_t retry_after_ms);

/* ---------------------------------------------------------------------- */
/* Retry budgets                                                            */
/* ---------------------------------------------------------------------- */

/*
 * A retry budget keeps a fleet's retries a bounded share of its traffic
 * (Finagle's RetryBudget: by default 20% of requests plus 10 retries per
 * second). Each first attempt deposits @ratio of a token; a retry goes
 * only if it can withdraw one whole token, else the caller is told
 * "deferred" and gives the work back instead of sleeping on it.
 *
 * Two sources:
 *  - the pool: deposits expire BRK_BUDGET_TTL_MS after they were made,
 *    sliding, as Finagle's do (its TokenRetryBudget keeps them in a
 *    WindowedAdder of 10 time slices): the deposits of each 1 s slice of
 *    the segment clock sit in one word of a ring of BRK_BUDGET_SLICES
 *    words (CAS by depositors), and a spend cursor word (CAS by
 *    withdrawers) says how much of them retries have taken, oldest first.
 *    A deposit therefore counts for at least TTL - TTL/10 (9 s) and at
 *    most TTL (10 s): a long healthy spell cannot be saved up for a retry
 *    storm, and no fixed clock mark wipes a deposit just made. Slices
 *    are numbered whole (never modulo), so no deposit of an older slice
 *    counts again after any idle span or clock jump. One slice holds at
 *    most 536,870.911 tokens of deposits (2^29 - 1 milli-tokens: 5,368
 *    first attempts/s at ratio 100, 2,684,354/s at 0.2); deposits past
 *    that in the same slice are dropped (fewer retries, never more);
 *  - the floor: a GCRA bucket of floor_per_s tokens/s with capacity
 *    floor_burst = ceil(floor_per_s) (one second of floor, at least 1),
 *    full at creation.
 * A retry draws from the pool first, then from the floor.
 *
 * Guarantee (whole fleet, every process sharing the record): over any
 * interval [t0, t1] the retries permitted satisfy
 *   retries <= ratio * deposits(t0 - TTL, t1) + floor_per_s * (t1 - t0)
 *              + floor_burst
 * (each token spent from the pool is a distinct part of a deposit made
 * less than TTL before it was spent); from creation:
 *   retries <= ratio * first_attempts + floor_per_s * seconds + floor_burst
 * with ratio and floor_per_s the stored (rounded) values; the floor's
 * integer interval adds at most 0.5 ns per token of error. A process
 * whose clock read is stale by more than the TTL (descheduled between its
 * clock read and its CAS) can spend a deposit that expired meanwhile, as
 * any late CAS can.
 */
typedef struct brk_budget brk_budget;

#define BRK_DEFAULT_BUDGET_FLOOR 10.0  /* retries/s (Finagle's default) */
#define BRK_DEFAULT_BUDGET_RATIO 0.2   /* retries per first attempt */
#define BRK_BUDGET_MAX_FLOOR 1e6       /* retries/s */
#define BRK_BUDGET_MAX_RATIO 100.0
#define BRK_BUDGET_TTL_MS 10000u       /* a deposit's lifetime (Finagle's) */
#define BRK_BUDGET_SLICES 10u          /* the TTL's resolution: 10 slices */

/**
 * brk_budget_get - get or create the retry budget @name.
 * @seg:         an attached, writable segment.
 * @name:        see brk_name_validate(); one namespace with breakers.
 * @floor_per_s: retries/s always allowed: 0 (none), or 0.001 ..
 *               BRK_BUDGET_MAX_FLOOR; rounded to the nearest 0.001.
 * @ratio:       tokens deposited per first attempt: 0 (none), or 0.001 ..
 *               BRK_BUDGET_MAX_RATIO; rounded to the nearest 0.001.
 *               Use BRK_DEFAULT_BUDGET_FLOOR / _RATIO for Finagle's.
 * @out:         receives a handle owned by @seg.
 *
 * Settings are used only if this call creates the record (as for
 * brk_bucket_get()); floor and ratio are stored together in one word.
 * Thread- and process-safe. Returns 0, -EINVAL (floor, ratio, NULL),
 * -EINVAL/-ENAMETOOLONG (name), -EROFS, -ENOSPC, -EMEDIUMTYPE (the name
 * is a breaker or a bucket), -BRK_ECORRUPT, -ENOMEM.
 */
BRK_API int brk_budget_get(brk_segment *seg, const char *name, double floor_per_s,
		   double ratio, brk_budget **out);

/** brk_budget_find - like brk_budget_get() but never creates. Returns 0,
 * -ENOENT, or the errors above. Works on a read-only attach. */
BRK_API int brk_budget_find(brk_segment *seg, const char *name, brk_budget **out);

/**
 * brk_budget_configure - change floor and ratio (same ranges as
 * brk_budget_get()). One CAS on the settings word, then the floor's TAT
 * is rescaled as in brk_bucket_configure(); the pool is kept. Returns 0,
 * -EINVAL, -EROFS, -BRK_ECORRUPT, -BRK_ECONTENDED.
 */
BRK_API int brk_budget_configure(brk_budget *g, double floor_per_s, double ratio);

/* Settings of a retry budget, for brk_budget_update(). */
enum brk_budget_field {
	BRK_BUDGET_FLOOR = 1u << 0,
	BRK_BUDGET_RATIO = 1u << 1
};

/**
 * brk_budget_update - change only the settings named in @fields (an OR of
 * enum brk_budget_field; 0: nothing to do); the other keeps its stored
 * value. Floor and ratio share one word, changed by a bounded CAS loop
 * that re-reads it on every try, so concurrent changes of the floor and
 * of the ratio both take effect. Ranges and the floor's rescale as for
 * brk_budget_configure(). Thread- and process-safe. Returns 0, -EINVAL,
 * -EROFS, -EAGAIN / -BRK_ECORRUPT (no valid stored word to keep the other
 * setting from, and only one given), -BRK_ECONTENDED.
 */
BRK_API int brk_budget_update(brk_budget *g, double floor_per_s, double ratio,
		      uint64_t fields);

/**
 * brk_budget_deposit - record one first attempt (call it for every first
 * attempt, not for retries): adds @ratio of a token to the pool, by
 * CAS(ring word of the current 1 s slice, old -> old + ratio) (a word
 * still holding an expired slice starts from 0; saturating at 2^40
 * milli-tokens), and bumps the deposits counter (uatomic_inc). The
 * deposit can be spent for BRK_BUDGET_TTL_MS less the part of its slice
 * already gone (9 to 10 s). Thread- and process-safe, no syscall, no lock.
 * Returns 0, -EINVAL (NULL), -EROFS, -EAGAIN (settings never stored: creator died half-way),
 * -BRK_ECORRUPT, -BRK_ECONTENDED (the deposit was dropped: the budget
 * errs on the side of fewer retries).
 */
BRK_API int brk_budget_deposit(brk_budget *g);

/**
 * brk_retry_permitted - may this retry go? Withdraws one token: from the
 * pool, oldest unexpired deposits first, by CAS(spend cursor, old -> old
 * moved past 1000 milli-tokens) after reading the BRK_BUDGET_SLICES ring
 * words; else from the floor by a GCRA take of 1 (CAS on its TAT word).
 * A refusal writes nothing but the deferred counter.
 * Returns 0 (go: the token is spent), -BRK_EDEFERRED (budget exhausted:
 * do not retry now, give the work back; do not sleep on it), -EINVAL
 * (NULL), -EROFS, -EAGAIN (settings never stored: creator died half-way), -BRK_ECORRUPT,
 * -BRK_ECONTENDED (treat as deferred). Thread- and process-safe.
 */
BRK_API int brk_retry_permitted(brk_budget *g);

#define BRK_BUDGET_INFO_SIZE_VER0 152u /* sizeof in BREAKER_0 */

/** brk_budget_info - a snapshot (see struct brk_budget_info). Works on a
 * read-only attach. A macro over brk_budget_info_sz(g, out, sizeof(*out))
 * (see "Growing structs"). Returns 0, -EINVAL, -BRK_ECORRUPT. */
BRK_API int brk_budget_info_sz(brk_budget *g, struct brk_budget_info *out,
			       size_t size);
BRK_API int (brk_budget_info)(brk_budget *g, struct brk_budget_info *out);
#define brk_budget_info(g, out) brk_budget_info_sz((g), (out), sizeof(*(out)))

/** brk_budget_name - the budget's name; owned by the handle. */
BRK_API const char *brk_budget_name(const brk_budget *g);

/* ---------------------------------------------------------------------- */
/* Admission (breaker, pace, retry budget in one fixed order)               */
/* ---------------------------------------------------------------------- */

/*
 * brk_admit() asks every gate a job must pass, in one fixed order, and
 * answers with one stable reason code; brk_admit_release() reports the
 * answer to each of them. docs/design/limits.md "Admission".
 *
 * The order, exactly (a job that several gates would refuse gets the
 * first refusal in this order):
 *  1. EXPIRED: the wait the job faces now - the breaker's open period or
 *     shared cool-until left (not its ancestors'), else the time until
 *     the pace has a token (brk_bucket_info(): tokens at the rate now) -
 *     is compared with the deadline: if now + wait > deadline_ns the job
 *     is refused -BRK_EEXPIRED at once: no sleep, nothing taken, nothing
 *     counted. A worker should not queue for a slot it cannot use.
 *  2. breaker: brk_acquire() with @priority (-BRK_EOPEN: BREAKER_OPEN,
 *     also half-open with every probe busy and forced open;
 *     -BRK_ECOOLING: COOLING; -BRK_EFULL: BULKHEAD_FULL). A refusal with
 *     a wait (open, cooling: brk_refusal.wait_ms, jittered) that fits
 *     both what is left of max_wait_ms and the deadline is slept, then
 *     the breaker is asked again; one that passes the deadline is
 *     -BRK_EEXPIRED; one longer than max_wait_ms, or without a wait
 *     (forced open), is the gate's refusal.
 *     A full bulkhead (issue 25; docs/design/limits.md "Fair bulkhead
 *     waits"): with max_wait_ms > 0 on the default clock the job waits
 *     for a permit in the breaker's queue, served in arrival order with
 *     the other brk_admit() waiters of every process (a job that finds
 *     others waiting queues behind them without trying first; high
 *     priority passes the queue), until max_wait_ms or the deadline:
 *     then BULKHEAD_FULL, or EXPIRED when the deadline came first. When
 *     the mean hold time is known (hold_histogram on), a job whose
 *     estimated wait (its place x mean hold / permits) passes the
 *     deadline is refused EXPIRED at once instead. Without max_wait_ms,
 *     or on an injected clock, it does not wait: BULKHEAD_FULL (or
 *     EXPIRED by the estimate) with wait_ms = the estimate (0: unknown).
 *     Plain brk_acquire() never waits and never looks at the queue.
 *  3. pace: brk_pace_reserve(@priority) with the horizon min(what is
 *     left of max_wait_ms, deadline - now) ("Fair waits": arrival order
 *     across processes), sleep to the slot, brk_ticket_check(), sleep
 *     again if a cut moved it. A slot past the horizon reserves nothing:
 *     -BRK_EEXPIRED at once if it is after the deadline, else
 *     -BRK_ENOTOKENS (RATE_LIMITED) with wait_ms until it; the same when
 *     a moved slot passes them (the ticket cancelled), or on a signal
 *     (-EINTR, cancelled). A slot within the horizon but more than
 *     BRK_PACE_MAX_HORIZON_MS away is not refused: the job sleeps until
 *     it is within that reach, then reserves. The breaker permit of step 2 is released
 *     BRK_CANCELLED. Without @pace, a breaker's implicit pace ("Implicit
 *     pace") is reserved on the same way after step 2 (whose acquire
 *     then skips its own take of it; RATE_LIMITED/EXPIRED name
 *     NAME:pace), and the permit's start is the token's time.
 *  4. retry budget: BRK_RETRY -> brk_retry_permitted() (-BRK_EDEFERRED:
 *     DEFERRED; the permit is released BRK_CANCELLED, the pace token is
 *     not given back: the request would have been sent); BRK_FIRST_ATTEMPT
 *     -> brk_budget_deposit() (a deposit dropped under contention is not
 *     an error: the budget errs towards fewer retries).
 *  5. GO.
 * Each refusal is counted by the record that refused, in its existing
 * counters (rejected_open/_cooling/_full, bucket denied, budget
 * deferred). EXPIRED at step 1 counts nowhere: no gate was asked.
 *
 * Priorities: BRK_PRIORITY_HIGH may use the bulkhead permits the
 * breaker's reserve_pct keeps back and the pace's reserved rate share;
 * normal work (and every plain brk_acquire()/brk_bucket_take()) never
 * does. The source is Envoy's per-priority circuit-breaker thresholds
 * (cluster.circuit_breakers.thresholds: a separate max_requests for
 * priority HIGH), here as one share of one limit so the two classes
 * cannot together exceed it.
 *
 * Sleeping and clocks: waits are on the segment clock (brk_now_ns(),
 * CLOCK_MONOTONIC ns unless brk_attach_opts.clock was injected). With
 * the default clock brk_admit() sleeps (clock_nanosleep(CLOCK_MONOTONIC,
 * TIMER_ABSTIME), or a futex wait in the bulkhead's queue) at most
 * max_wait_ms in all. A signal whose handler runs during a sleep ends
 * it, SA_RESTART or not: brk_admit() gives back what it took and returns
 * -EINTR (see the return values below); a signal that is blocked or
 * ignored does not wake it (tests/integration/it_admit_eintr.c).
 * With an injected clock it never sleeps: where it would, it returns
 * the refusal at once with wait_ms set (<= max_wait_ms, within the
 * deadline) and nothing held; the caller (a test) advances its clock by
 * wait_ms and calls brk_admit() again. So on every clock: a refusal with
 * 0 < wait_ms <= max_wait_ms that is not -BRK_EEXPIRED means "come back
 * in wait_ms".
 */

enum brk_attempt { BRK_FIRST_ATTEMPT = 0, BRK_RETRY = 1 };

/* brk_admission.code: the stable reason code of an admission. */
enum brk_admit_code {
	BRK_ADMIT_GO = 0,
	BRK_ADMIT_EXPIRED = 1,        /* -BRK_EEXPIRED */
	BRK_ADMIT_BREAKER_OPEN = 2,   /* -BRK_EOPEN */
	BRK_ADMIT_COOLING = 3,        /* -BRK_ECOOLING */
	BRK_ADMIT_RATE_LIMITED = 4,   /* -BRK_ENOTOKENS (the pace) */
	BRK_ADMIT_BULKHEAD_FULL = 5,  /* -BRK_EFULL */
	BRK_ADMIT_DEFERRED = 6,       /* -BRK_EDEFERRED (the retry budget) */
	BRK_ADMIT_CONTENDED = 7       /* -BRK_ECONTENDED (any gate) */
};

/** brk_admit_code_name - "GO", "EXPIRED", "BREAKER_OPEN", "COOLING",
 * "RATE_LIMITED", "BULKHEAD_FULL", "DEFERRED", "CONTENDED" (stable: logs
 * and dashboards may match them), or "UNKNOWN". Pure, thread-safe. */
BRK_API const char *brk_admit_code_name(int code);

/**
 * brk_outcome_code - the stable reason code of a call's outcome, for
 * logs and job records: BRK_SUCCESS "OK"; BRK_FAILURE by reason:
 * timeout "UPSTREAM_TIMEOUT", connect "UPSTREAM_UNREACHABLE",
 * server_error "UPSTREAM_ERROR", overloaded "UPSTREAM_OVERLOADED",
 * rate_limited "UPSTREAM_RATE_LIMITED", other or none "UPSTREAM_FAILED";
 * BRK_HEALTHY_ERROR "BUSINESS_ERROR"; BRK_REJECTED_REQUEST
 * "SCHEMA_REJECTED"; BRK_CANCELLED "CANCELLED"; BRK_THROTTLED
 * "THROTTLED". An unknown outcome or failure reason: "UNKNOWN". Pure,
 * thread-safe; the strings are static.
 */
BRK_API const char *brk_outcome_code(int outcome, int reason);

/* What to admit. Zero-initialise it and set size = sizeof (0 reads as
 * BRK_ADMIT_REQ_SIZE_VER0; "Growing structs" rule 1). */
struct brk_admit_req {
	uint32_t size;
	brk_breaker *breaker;  /* optional */
	brk_bucket *pace;      /* optional: a pace (brk_pace_get()) or a
	                          plain bucket (priority then ignored) */
	brk_budget *budget;    /* optional */
	int attempt;           /* enum brk_attempt */
	int priority;          /* enum brk_priority */
	uint64_t deadline_ns;  /* segment clock (brk_now_ns()); 0: none */
	uint64_t max_wait_ms;  /* longest the call may sleep in all (open,
	                          cooling, a token); 0: never sleeps */
	/* since BRK_ADMIT_REQ_SIZE_VER1 */
	uint64_t pace_wait_ms; /* longest step 3 (the pace's or the breaker's
	                          implicit pace's slot) may sleep from the
	                          call's start when that is longer than
	                          max_wait_ms (a job that waits for its rate's
	                          turn but not for an open breaker: plain
	                          `bctl exec NAME` passes the breaker's
	                          max_wait_ms here); 0: max_wait_ms */
};

#define BRK_ADMIT_REQ_SIZE_VER0 56u
#define BRK_ADMIT_REQ_SIZE_VER1 64u /* + pace_wait_ms */

/* The answer. Fixed size (rule 3): 256 bytes. */
struct brk_admission {
	brk_permit permit;     /* held on GO if a breaker was given: pass the
	                          admission to brk_admit_release() */
	uint64_t taken_at_ns;  /* the pace token's time (0: no pace) */
	uint64_t wait_ms;      /* on a refusal: how long until that gate may
	                          let the job through (0: unknown); on GO:
	                          how long brk_admit() slept */
	int code;              /* enum brk_admit_code; -1: an error that is
	                          not a refusal (see the return value) */
	int cause;             /* enum brk_cause for a breaker refusal, else 0 */
	char by[BRK_NAME_MAX + 1]; /* the record that refused (a breaker may
	                              name an ancestor); "" on GO */
	uint32_t flags_;       /* private */
	int outcome;           /* after brk_admit_release(): the outcome the
	                          breaker permit was released with (enum
	                          brk_outcome; BRK_THROTTLED for a paced
	                          rate-limit answer), the given one without a
	                          breaker; 0 before */
	uint64_t reserved_[8];
};

/**
 * brk_admit - pass the job through the gates of @req in the fixed order
 * above, sleeping where it may.
 * @req: what to admit; read, not kept. Any of breaker, pace and budget
 *       may be NULL, not all three; all on one segment handle.
 * @adm: receives the answer (zeroed first). On GO it holds the breaker
 *       permit and the pace token's time: release it with
 *       brk_admit_release() exactly once on every path.
 *
 * Thread- and process-safe as the calls it makes (brk_acquire(),
 * brk_pace_take(), brk_retry_permitted(), brk_budget_deposit()); another
 * process sees each of them as if made directly. No allocation; with the
 * default clock the only syscalls are the sleeps (a bulkhead waiter's
 * are futex waits and wakes on the segment, woken by brk_release()).
 * Returns 0 (GO), or the refusal: -BRK_EEXPIRED, -BRK_EOPEN,
 * -BRK_ECOOLING, -BRK_ENOTOKENS, -BRK_EFULL, -BRK_EDEFERRED,
 * -BRK_ECONTENDED (adm->code, wait_ms, cause and by say which gate and
 * how long); -EINVAL (NULL, bad size, unknown attempt or priority, no
 * record given, records of different segment handles: nothing taken,
 * adm->code -1), -E2BIG (a newer caller's unknown fields), or an error
 * of a gate's call (-EROFS, -EAGAIN, -BRK_ECORRUPT: what was taken before
 * it is given back, adm->code -1, adm->by names that record), or -EINTR
 * (a signal handler ran while it slept: what was taken is given back,
 * adm->code -1; call again with what is left of max_wait_ms if the
 * signal was not a reason to stop). Nothing is held after a non-zero
 * return.
 */
BRK_API int brk_admit(const struct brk_admit_req *req, struct brk_admission *adm);

/**
 * brk_admit_release - report how the admitted job's call ended.
 * @adm:     a GO admission of brk_admit(); consumed (a second release
 *           returns -BRK_ESTALE and reports nothing).
 * @outcome, @reason, @retry_after_ms: as brk_release().
 *
 * The breaker permit is released with @outcome - except that a
 * rate-limit answer (brk_pace_signal_of() says BRK_PACE_LIMITED: a 429,
 * or a 503/529 with a Retry-After) is released BRK_THROTTLED when the
 * admission had a pace (brk_pace_get(); a plain bucket given as pace
 * gates the job but does not learn, so a 429 stays a rate_limited
 * failure), so the pace slows down and the breaker counts it neither way
 * (docs/design/semantics.md "Breaker semantics"). Then the pace gets
 * brk_pace_report(taken_at_ns, signal) (BRK_THROTTLED given directly
 * reports BRK_PACE_LIMITED). Thread- and process-safe as those calls.
 * Returns brk_release()'s result (0 counted, -BRK_ESTALE, -EINVAL,
 * -BRK_ECONTENDED) when a breaker was given, else 0 or the pace report's
 * error (its 1, "this report cut the rate", is returned as 0);
 * -BRK_ESTALE (not a GO admission, or released already), -EINVAL (NULL;
 * unknown outcome or reason: the permit is still freed, the pace is not
 * told).
 */
BRK_API int brk_admit_release(struct brk_admission *adm, int outcome,
			      int reason, int64_t retry_after_ms);

/* ---------------------------------------------------------------------- */
/* Backoff with jitter                                                      */
/* ---------------------------------------------------------------------- */

/*
 * After Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture
 * Blog, 2015. With v = min(cap, base * 2^attempt) (saturating: never
 * overflows, for any attempt up to UINT32_MAX) and random_between(a, b)
 * uniform over the integers a..b inclusive:
 *
 *   BRK_JITTER_EQUAL (default):  v/2 + random_between(0, v/2)
 *                                mean 3v/4; never below v/2
 *   BRK_JITTER_FULL:             random_between(0, v)          mean v/2
 *   BRK_JITTER_DECORRELATED:     min(cap, random_between(base, 3 * prev))
 *                                with prev = the previous sleep (0: base);
 *                                ignores attempt; if 3 * prev < base the
 *                                answer is base (capped)
 *
 * (integer division). Every result is in 0 .. cap. EQUAL is 0, so a
 * zero-initialised setting means the default.
 */
enum brk_jitter {
	BRK_JITTER_EQUAL = 0,
	BRK_JITTER_FULL = 1,
	BRK_JITTER_DECORRELATED = 2
};

/**
 * brk_backoff_ms - the wait before retry number @attempt (0 = the first
 * retry), in ms.
 * @jitter:  enum brk_jitter; an unknown value is treated as EQUAL.
 * @base_ms: the first backoff step (0: every answer is 0, except that
 *           DECORRELATED with prev > 0 draws from 0 .. 3 * prev).
 * @cap_ms:  the largest wait ever returned.
 * @attempt: 0, 1, 2 ... (for FULL and EQUAL).
 * @prev_ms: the previous result (for DECORRELATED; 0 at the start).
 * @rnd:     64 uniformly random bits per call; NULL: a per-thread
 *           xorshift64* seeded from the pid, the thread and the monotonic
 *           clock (not cryptographic). Tests pass a deterministic one.
 * @rnd_ctx: passed to @rnd.
 *
 * Pure computation: no shared state, no syscall (except the seeding of
 * the internal generator, once per thread), thread-safe.
 * Returns the wait in ms, 0 .. cap_ms.
 */
BRK_API uint64_t brk_backoff_ms(int jitter, uint64_t base_ms, uint64_t cap_ms,
			uint32_t attempt, uint64_t prev_ms, brk_random_fn rnd,
			void *rnd_ctx);

/** brk_jitter_name - "equal", "full", "decorrelated", or "unknown". */
BRK_API const char *brk_jitter_name(int jitter);

/**
 * brk_jitter_parse - "equal", "full" or "decorrelated" to enum brk_jitter.
 * Returns the value (>= 0) or -EINVAL.
 */
BRK_API int brk_jitter_parse(const char *s);

/* ---------------------------------------------------------------------- */
/* HTTP classification                                                      */
/* ---------------------------------------------------------------------- */

/*
 * One meaning for an HTTP answer, so that bctl exec (which reads a
 * command's output) and the Python package (which has the status, the
 * headers and the body) report the same outcome for the same response.
 *
 * Status table (brk_http_classify(), brk_http_verdict()):
 *
 *   status        outcome               reason         Retry-After
 *   ------------  --------------------  -------------  -----------
 *   100-399       BRK_SUCCESS           none           ignored
 *   404           BRK_HEALTHY_ERROR     none           ignored
 *   408           BRK_FAILURE           TIMEOUT        honoured
 *   429           BRK_FAILURE           RATE_LIMITED   honoured
 *   other 4xx     BRK_REJECTED_REQUEST  none           ignored
 *   503, 529      BRK_FAILURE           OVERLOADED     honoured
 *   504           BRK_FAILURE           TIMEOUT        honoured
 *   other 5xx     BRK_FAILURE           SERVER_ERROR   honoured
 *   600-999       BRK_FAILURE           OTHER          honoured
 *   any of the non-failures above, with a wait in the text ("try again
 *                 in 20 seconds", "retry_after": 3 in the body)
 *                 BRK_FAILURE           RATE_LIMITED   honoured
 *   0 (unknown)   from the signs in the text and the Retry-After, first
 *                 match wins:
 *                   a 429 status sign      -> as 429
 *                   a 503 or 529 sign      -> as 503
 *                   only a wait (Retry-After, "try again in N s")
 *                                          -> BRK_FAILURE, RATE_LIMITED
 *                   nothing                -> outcome 0: no verdict, the
 *                                             caller decides (bctl exec
 *                                             goes by the exit status)
 *
 * Why: 4xx other than 408 and 429 say the server is up and judged our
 * request, so they never trip a breaker (what resilience4j and pybreaker
 * users configure by hand). 404 is the usual business answer ("no such
 * item") and counts as a success (it proves the upstream healthy, also for
 * a half-open probe); the rest (400, 401, 403, 409, 422 ...) are our fault
 * and count neither way, so a worker with bad credentials can neither
 * close nor open the breaker of everyone. 504 is the upstream not answering
 * a gateway in time: the same fact as our own timeout. Codes above 599
 * have no class in RFC 9110; a server that sends one is misbehaving.
 *
 * A body that asks to wait is a rate limit whatever the status said (APIs
 * answer 200 or 403 with "rate limit exceeded, try again in 60 seconds").
 * Status lines and status fields in the text are read only when the
 * status is unknown (0): with a known status they are mostly data (a
 * monitoring API's list of checks says "status": 503 in a healthy 200).
 *
 * The Retry-After header (RFC 9110 section 10.2.3) is honoured only with
 * a failure:
 * there it is the upstream's own estimate of when to come back, and
 * brk_release() turns it into a shared cool-until. With 2xx and 3xx it
 * paces the polling of one job (202 + Retry-After) or the following of one
 * redirect, which says nothing about the upstream's health; cooling every
 * process on it would refuse unrelated calls. Both forms are read:
 * delta-seconds (1*DIGIT; leading zeros allowed; huge values saturate at
 * BRK_MAX_DURATION_MS) and HTTP-date (IMF-fixdate "Sun, 06 Nov 1994
 * 08:49:37 GMT", and the obsolete RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT"
 * and asctime "Sun Nov  6 08:49:37 1994" forms that RFC 9110 section 5.6.7
 * says recipients MUST accept; names in any case; a two-digit year more
 * than 50 years ahead is the previous century's). A date is turned into
 * ms from now; one in the past is 0 (retry now). Anything else (negative,
 * "1.5", "5s", an impossible date such as 30 Feb) is no Retry-After, and
 * the status alone decides: the caller's data is never an error.
 *
 * Signs in text (brk_http_scan_text(); ASCII case-insensitive; the text is
 * cut into lines at '\n' and need not be NUL-terminated; NUL bytes are
 * ordinary):
 *  - BRK_HTTP_SIGN_RATE_LIMITED / _OVERLOADED: a 429 / a 503 or 529 as an
 *    HTTP status line ("HTTP/1.1 429", "HTTP/2 503"), after a status or
 *    code key ("status: 429", "\"statusCode\":503", "HTTP 429"), before
 *    its reason phrase ("429 Too Many Requests", "503 Service
 *    Unavailable", "529 Overloaded"), or a bare 529 on a line that says
 *    "overloaded". Other numbers, and 429 inside a longer number or word,
 *    are not signs.
 *  - BRK_HTTP_SIGN_RETRY_AFTER: "Retry-After: N" (also retry_after, "=",
 *    JSON quotes; N seconds, fractions allowed, or an HTTP-date as above),
 *    and the phrases "try again in N unit", "try again after N unit",
 *    "retry after N unit", "retry in N unit" (unit: ms/msec/millisecond(s),
 *    s/sec(s)/second(s), m/min(s)/minute(s)). The longest wait wins.
 * Only the RETRY_AFTER sign of the text is used when the status is known.
 */

/* Signs found in text (a bit mask). */
enum brk_http_sign {
	BRK_HTTP_SIGN_RATE_LIMITED = 1u << 0, /* a 429 status */
	BRK_HTTP_SIGN_OVERLOADED = 1u << 1,   /* a 503 or 529 status */
	BRK_HTTP_SIGN_RETRY_AFTER = 1u << 2   /* a Retry-After or "try again
	                                         in" wait (possibly 0 ms) */
};

/**
 * brk_http_classify - the outcome, reason and wait for one HTTP answer.
 * @status:      the HTTP status, 100..999; 0 if none is known (e.g. only
 *               text: the text's signs decide, see the table above).
 * @retry_after: the Retry-After header's value (NUL-terminated), or NULL.
 * @text:        optional response body or command output, @text_len bytes,
 *               not necessarily NUL-terminated; NULL if @text_len is 0.
 *               Scanned for waits always, for status signs only when
 *               @status is 0.
 * @now_unix_ms: the current time in ms since the Unix epoch, to turn an
 *               HTTP-date into a wait; 0: read CLOCK_REALTIME (only if a
 *               date is seen).
 * @out:         receives outcome (enum brk_outcome, or 0 = no verdict),
 *               reason (enum brk_reason) and retry_after_ms (ms, 0 ..
 *               BRK_MAX_DURATION_MS; 0 = none or "retry now"): ready for
 *               brk_release() or a brk_call() function.
 *
 * The wait is the longest of the header's and the text's, kept only when
 * the outcome is BRK_FAILURE (a wait in the text makes any status a
 * rate_limited failure; the header alone does not, see above). Pure: reads nothing but its arguments (and
 * the clock, as said), writes only *@out, no allocation, no lock;
 * thread-safe; touches no segment, so no other process can observe it.
 * The caller keeps ownership of every buffer.
 * Returns 0, or -EINVAL (@out NULL, @status neither 0 nor 100..999, @text
 * NULL with @text_len > 0; *@out is then untouched).
 */
BRK_API int brk_http_classify(int status, const char *retry_after,
			      const char *text, size_t text_len,
			      int64_t now_unix_ms, struct brk_result *out);

/**
 * brk_http_scan_text - the signs in @text, for callers that read a
 * response in pieces (bctl exec scans a command's output line by line):
 * OR the returned masks and keep the longest wait, then pass them to
 * brk_http_verdict(). brk_http_classify() is this plus the Retry-After
 * header plus brk_http_verdict().
 * @text, @text_len, @now_unix_ms: as for brk_http_classify(). A sign that
 *               is cut in two by the caller's piece boundary is not seen.
 * @retry_after_ms: optional; receives the longest wait found in ms (0 ..
 *               BRK_MAX_DURATION_MS; 0 if none).
 * Pure, thread-safe, no allocation (as brk_http_classify()).
 * Returns the mask of enum brk_http_sign (>= 0), or -EINVAL (@text NULL
 * with @text_len > 0).
 */
BRK_API int brk_http_scan_text(const char *text, size_t text_len,
			       int64_t now_unix_ms, int64_t *retry_after_ms);

/**
 * brk_http_verdict - the status table above, applied to what is known.
 * @status:         as for brk_http_classify().
 * @signs:          enum brk_http_sign bits from brk_http_scan_text(); with
 *                  @status 0 add BRK_HTTP_SIGN_RETRY_AFTER for a valid
 *                  Retry-After header too. With a known @status only
 *                  BRK_HTTP_SIGN_RETRY_AFTER counts (a wait in the text:
 *                  a non-failure becomes rate_limited); a header's wait
 *                  then goes in @retry_after_ms only.
 * @retry_after_ms: the wait in ms (< 0 counts as 0; clamped to
 *                  BRK_MAX_DURATION_MS), kept only with a failure.
 * @out:            as for brk_http_classify().
 * Pure, thread-safe. Returns 0, or -EINVAL (@out NULL, @status out of
 * range, unknown bits in @signs).
 */
BRK_API int brk_http_verdict(int status, unsigned signs,
			     int64_t retry_after_ms, struct brk_result *out);

/* ---------------------------------------------------------------------- */
/* Shared helpers for programs (bctl, breakerd): ask the library            */
/* ---------------------------------------------------------------------- */

/* Longest segment name, in bytes, with the leading '/' and without the
 * NUL: '/' and 1..254 further bytes (docs/design/segment.md "The segment"; the
 * shm object is /dev/shm/NAME, whose file name may have 255 bytes). */
#define BRK_SHM_NAME_MAX 255

/**
 * brk_shm_name_validate - check that @name is a segment name brk_attach()
 * accepts: '/' followed by 1 .. BRK_SHM_NAME_MAX - 1 bytes, none of them
 * '/'. Pure: reads only @name, no shared memory, no syscall; thread- and
 * process-safe.
 *
 * The one rule used by brk_attach(), bctl and breakerd, so a program can
 * refuse a bad --shm or $BREAKERD_SHM before it touches /dev/shm.
 * Returns 0, -EINVAL (NULL, empty, no leading '/', "/" alone, or another
 * '/'), or -ENAMETOOLONG (longer than BRK_SHM_NAME_MAX bytes).
 */
BRK_API int brk_shm_name_validate(const char *name);

/**
 * brk_monotonic_ns - the library's own clock: CLOCK_MONOTONIC in
 * nanoseconds (vDSO, no syscall). @ctx is ignored; the signature is a
 * brk_clock_fn, the one brk_attach() uses when brk_attach_opts.clock is
 * NULL. For programs that need "now" without a segment (timeouts,
 * deadlines); with a segment, brk_now_ns() gives the segment's clock,
 * which a test may have injected. Thread-safe, async-signal-safe. Never
 * fails (returns 0 only if the clock cannot be read).
 */
BRK_API uint64_t brk_monotonic_ns(void *ctx);

/**
 * brk_parse_uint - a strict unsigned integer: only digits of @base (2..36;
 * letters a-z or A-Z for digits above 9), no sign, space, "0x" prefix or
 * anything after them, within @min .. @max.
 * @out: receives the value; left untouched on error.
 *
 * The one integer parser of the library, bctl and breakerd (also
 * brk_parse_duration()'s digits). Pure; thread-safe, no allocation.
 * Returns 0, -EINVAL (NULL, bad @base, empty, a character that is not a
 * digit of @base, trailing garbage), or -ERANGE (above UINT64_MAX, or
 * outside @min .. @max).
 */
BRK_API int brk_parse_uint(const char *s, int base, uint64_t min,
			   uint64_t max, uint64_t *out);

/**
 * brk_kind_name - the word for an enum brk_kind: "breaker", "bucket",
 * "budget", or "unknown" for any other value. Returns a static string;
 * thread-safe.
 */
BRK_API const char *brk_kind_name(int kind);

/* ---------------------------------------------------------------------- */
/* Fleet link (breakerd --fleet): applying peers' decisions, link status    */
/* ---------------------------------------------------------------------- */

/**
 * brk_host_id_validate - 0 if @id is 1..BRK_HOST_ID_MAX bytes of
 * [A-Za-z0-9._-] (a host name, a pod name; also the rule of breakerd's
 * --fleet-channel). Pure (reads only @id), thread- and process-safe.
 * Returns 0, -EINVAL (NULL, empty, another character: a space, '/', ':',
 * a byte >= 0x80), -ENAMETOOLONG (more than BRK_HOST_ID_MAX bytes).
 */
BRK_API int brk_host_id_validate(const char *id);

/**
 * brk_set_origin - mark the events the calling thread writes on @seg from
 * now on as decisions applied from the fleet peer @host_id (NULL or "":
 * this host's own again). breakerd's fleet link calls it before applying
 * a peer's decision (brk_trip_extend(), brk_cool_for(), brk_set_mode(),
 * brk_reset(), brk_pace_cut()), so the event ring shows "remote:HOST" and
 * the link never publishes that event again (no loops). It changes no
 * record and nothing on the acquire/release path.
 *
 * The id goes into the segment header's peer table (BRK_FLEET_PEERS
 * slots, one per host id, claimed by CAS; when all are taken the least
 * recently named one is reused and the events that named it read "?");
 * the event records the slot and its generation
 * (docs/design/observability.md "Event ring origin"). Another process
 * reading the ring (bctl events) sees the host id from the moment the call
 * returns.
 * The origin is per thread and per segment handle: other threads, and
 * this thread's events on other handles, are unaffected; brk_detach()
 * forgets it. A thread keeps origins on at most 8 handles at once.
 * Thread-safe (the origin is thread-local; the peer table is lock-free).
 * Returns 0, -EINVAL (NULL @seg, a bad id: see brk_host_id_validate()),
 * -ENAMETOOLONG, -EROFS (a read-only handle; clearing is always 0),
 * -EMFILE (this thread already has origins on 8 other handles),
 * -BRK_ECONTENDED (the peer table kept changing under the claim: bounded
 * CAS tries; the origin is unchanged).
 */
BRK_API int brk_set_origin(brk_segment *seg, const char *host_id);
#define BRK_FLEET_PEERS 32u

/**
 * brk_trip_extend - open for at least @for_ms ms from now (capped at the
 * breaker's max_open_ms, as every cooling period is): a closed or half-open breaker opens as by
 * brk_trip(); an open one whose cooling period ends sooner is extended to
 * now + @for_ms (one transition OPEN -> OPEN, gen + 1, an event "trip"
 * with value @for_ms); one that stays open at least that long is left as
 * it is (-EALREADY, no event). The cooling level is not changed (the next
 * failed probe doubles from this host's own level). A half-open breaker's
 * probe leases are ended as by brk_trip(): their releases count nothing
 * (-BRK_ESTALE). Used by breakerd for a peer's open decision and to hold
 * a breaker open while another host probes. Thread- and process-safe
 * (one CAS on the state word, bounded retries): every process's next
 * brk_acquire() sees the new deadline.
 * Returns 0, -EALREADY, -EINVAL (NULL, 0 ms), -EROFS, -BRK_ECONTENDED, or
 * an error of re-resolving a retired name (-ENOENT, -ENOSPC, -ENOMEM: see
 * brk_breaker_get()).
 */
BRK_API int brk_trip_extend(brk_breaker *b, uint64_t for_ms);

/**
 * brk_cool_for - raise the breaker's shared cool-until (as a Retry-After
 * up to max_wait_ms does in brk_release()) to now + @ms (ms; capped at
 * the breaker's max_open_ms, as every cooling period is): until then every
 * brk_acquire() in every process is refused with -BRK_ECOOLING and the
 * wait. The breaker's state is not changed. Never lowers the cool-until
 * (-EALREADY, no event). Event "cool_until" (value: the ms, after the
 * clamp) when a new cooling starts; extending one still running writes
 * none. Thread- and process-safe (one CAS, bounded retries).
 * Returns 0, -EALREADY, -EINVAL (NULL, 0 ms), -EROFS, -BRK_ECONTENDED, or
 * an error of re-resolving a retired name (as brk_trip_extend()).
 */
BRK_API int brk_cool_for(brk_breaker *b, uint64_t ms);

/**
 * brk_pace_cut - lower a pace's learned rate to @rate_milli (milli
 * tokens/s, clamped to its floor .. ceiling) as a BRK_PACE_LIMITED
 * report's cut would: the cut time is now and the limit found is
 * rate / BRK_PACE_HOLD_GAIN (not growing), so the rate right after is the
 * rate asked (never above it: the limit is rounded down), held there and
 * then probed above as after any cut ("Pacing (learned rate)"); the bucket is
 * empty at the new rate. Event "pace_cut" with the new rate (milli
 * tokens/s). A pace already at or below that rate now is left
 * (-EALREADY). Thread- and process-safe (one CAS on the cut word): every
 * process's next brk_pace_take() paces at the new rate.
 * Returns 0, -EALREADY, -EINVAL (NULL, 0), -EMEDIUMTYPE (a plain bucket),
 * -EROFS, -BRK_ECORRUPT (the pace words are out of range), -BRK_ECONTENDED,
 * or an error of re-resolving a retired name (as brk_trip_extend()).
 */
BRK_API int brk_pace_cut(brk_bucket *k, uint64_t rate_milli);

enum brk_fleet_state {
	BRK_FLEET_OFF = 0,        /* no breakerd --fleet on this segment */
	BRK_FLEET_CONNECTING = 1, /* first connection not yet made */
	BRK_FLEET_CONNECTED = 2,  /* publishing and subscribed */
	BRK_FLEET_DOWN = 3        /* lost; reconnecting with jittered backoff
	                             (every host keeps its local protection) */
};

/* Why a peer's message was refused (counted, logged, never applied). */
enum brk_fleet_drop {
	BRK_FLEET_DROP_MALFORMED = 0, /* not JSON, wrong version, bad field */
	BRK_FLEET_DROP_OVERSIZE = 1,  /* longer than the decoder's limit */
	BRK_FLEET_DROP_UNKNOWN = 2,   /* no record of that name here */
	BRK_FLEET_DROP_NOT_FLEET = 3, /* the record here is not fleet-wide */
	BRK_FLEET_DROP_FUTURE = 4,    /* sent in the future beyond the skew */
	BRK_FLEET_DROP_EXPIRED = 5,   /* its remaining period passed in transit */
	BRK_FLEET_DROP_KIND = 6,      /* a decision the record's kind lacks */
	BRK_FLEET_DROP_AUTH = 7,      /* unsigned or wrongly signed (a link
	                                 with a key), or from a host id not
	                                 in the --fleet-peer list */
	BRK_FLEET_DROP_REPLAY = 8,    /* a sequence already applied from that
	                                 host, or sent longer ago than the
	                                 replay window */
	BRK_FLEET_DROP_FLOOD = 9      /* over the per-peer rate of applied
	                                 decisions */
};
#define BRK_FLEET_DROP_COUNT 10u
/* The causes of the first struct brk_fleet_status (drops[]); the later
 * ones are counted in drops_more[] (read either with brk_fleet_drops()). */
#define BRK_FLEET_DROP_COUNT_VER0 7u

struct brk_fleet_status {
	uint32_t state;            /* enum brk_fleet_state */
	int32_t pid;               /* breakerd's, 0 if never */
	char host_id[BRK_HOST_ID_MAX + 1]; /* this host's id on the link */
	char channel[BRK_HOST_ID_MAX + 1]; /* the pub/sub channel */
	uint64_t state_since_wall_ms;  /* last state change, ms since epoch */
	uint64_t last_msg_wall_ms;     /* last peer message received; 0: none */
	uint64_t lag_ms;               /* of the last peer message applied:
	                                  arrival minus its sent time */
	uint64_t published;        /* decisions sent */
	uint64_t received;         /* peer messages read (own echoes excluded) */
	uint64_t applied;          /* peer decisions applied */
	uint64_t ignored;          /* valid but nothing to do (-EALREADY) */
	uint64_t dropped;          /* refused: the sum of drops[] */
	uint64_t drops[BRK_FLEET_DROP_COUNT_VER0]; /* by enum brk_fleet_drop,
	                              the first causes (brk_fleet_drops()) */
	uint64_t reconnects;       /* link reconnects: DOWN -> CONNECTED after
	                              the first connect (1 per outage) */
	uint64_t probe_won;        /* fleet probe elections this host won */
	uint64_t probe_lost;       /* ... lost (held open for the winner) */
	/* since BRK_FLEET_STATUS_SIZE_VER0: */
	uint64_t drops_more[BRK_FLEET_DROP_COUNT - BRK_FLEET_DROP_COUNT_VER0];
	                           /* causes auth, replay, flood */
};

#define BRK_FLEET_STATUS_SIZE_VER0 280u
#define BRK_FLEET_STATUS_SIZE_VER1 304u /* + drops_more (auth, replay, flood) */

/**
 * brk_fleet_drops - the count of refusals of @cause (enum brk_fleet_drop)
 * in @st, wherever the struct keeps it (drops[] or drops_more[]); 0 for
 * NULL or a cause out of range. Pure, thread-safe.
 */
BRK_API uint64_t brk_fleet_drops(const struct brk_fleet_status *st, int cause);

/** brk_fleet_drops_add - add @n to the count of @cause in @st (the
 * link's own bookkeeping before brk_fleet_report()); nothing for NULL or
 * a cause out of range. Not atomic. */
BRK_API void brk_fleet_drops_add(struct brk_fleet_status *st, int cause,
				 uint64_t n);

/**
 * brk_fleet_report - publish the fleet link's status in the segment
 * header (breakerd's fleet link calls it on every change; one writer).
 * A macro over brk_fleet_report_sz(seg, st, sizeof(*st)) ("Growing
 * structs": fields beyond @size read as 0). Every field is copied; pid is
 * taken from the caller (with its start time, so readers can tell when
 * the writer is gone); the counters are the caller's, stored as given. A
 * change of state (from the stored one; a dead writer's counts as OFF)
 * writes an event BRK_EV_FLEET_LINK (name "", from/to = enum
 * brk_fleet_state, value = reconnects). Readers in any process see a
 * consistent snapshot (a sequence word around the copy). Thread-safe
 * against readers; concurrent writers race (the last copy wins). The
 * area lives in the header's reserved bytes: segments made before it read
 * zeros (OFF).
 * Returns 0, -EINVAL (NULL, @size not a struct size, state out of range,
 * a host id or channel that is neither "" nor valid by
 * brk_host_id_validate()), -E2BIG (a newer caller's fields set), -EROFS.
 */
BRK_API int brk_fleet_report_sz(brk_segment *seg,
				const struct brk_fleet_status *st, size_t size);
#define brk_fleet_report(seg, st) brk_fleet_report_sz((seg), (st), sizeof(*(st)))

/**
 * brk_fleet_status - read the fleet link's status (a macro over
 * brk_fleet_status_sz(seg, out, sizeof(*out)): writes exactly @size
 * bytes). A segment without a link, or whose writer (pid, with its start
 * time) is gone, reads state BRK_FLEET_OFF with the last counters.
 * Works on a read-only attach; lock-free (retries while the writer
 * copies). Everything read is checked: state in range, pid >= 0, host id
 * and channel NUL-terminated and "" or valid host ids.
 * Returns 0, -EINVAL (NULL, size too small), -BRK_ECONTENDED (the writer
 * kept changing it, or died while copying: the next report repairs it),
 * -BRK_ECORRUPT (a field out of range).
 */
BRK_API int brk_fleet_status_sz(brk_segment *seg, struct brk_fleet_status *out,
				size_t size);
#define brk_fleet_status(seg, out) brk_fleet_status_sz((seg), (out), sizeof(*(out)))

/** brk_fleet_state_name - "off", "connecting", "connected", "down";
 * "unknown" otherwise. Static strings; pure, thread-safe. */
BRK_API const char *brk_fleet_state_name(int state);
/** brk_fleet_drop_name - "malformed", "oversize", "unknown", "not_fleet",
 * "future", "expired", "kind", "auth", "replay", "flood"; "unknown_cause"
 * otherwise. Static strings;
 * pure, thread-safe. */
BRK_API const char *brk_fleet_drop_name(int cause);

#ifdef __cplusplus
}
#endif

#endif /* BREAKER_H */
