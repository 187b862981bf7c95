/*
 * fixture.h - shared fixtures of the in-process (cmocka) tests of
 * libbreaker: tests/unit, formerly unit/ut.h and limits/lim.h.
 *
 * Every test gets its own segment (/brkut-<group>-<pid>-<n>), attached with
 * an injected fake clock (never advances by itself: tests move it with
 * ut_advance_ms) and a deterministic random source (splitmix64 over a
 * seed). Nothing sleeps; no assertion depends on real time.
 *
 * The fake clock and the random state are read and written with __atomic
 * builtins so that test_threads is meaningful under ThreadSanitizer: the
 * tests themselves have no data race (liburcu's uatomic_* inside the
 * library are inline asm that TSan cannot see; suppress those, not the
 * tests).
 */
#ifndef BRK_TEST_FIXTURE_H
#define BRK_TEST_FIXTURE_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "breaker.h"

#define UT_NS_PER_MS 1000000ULL
#define UT_NS_PER_S 1000000000ULL
/* The fake clock starts at 1000 s: ms-aligned, far from 0 and from the top. */
#define UT_CLOCK_START_NS (1000ULL * 1000 * UT_NS_PER_MS)

struct ut_clock {
	uint64_t ns;
	uint64_t reads; /* how often the library read it (ut_clock_fn) */
};

struct ut_rand {
	uint64_t state;
};

static inline uint64_t ut_clock_fn(void *ctx)
{
	struct ut_clock *c = ctx;
	__atomic_add_fetch(&c->reads, 1, __ATOMIC_RELAXED);
	return __atomic_load_n(&c->ns, __ATOMIC_ACQUIRE);
}

static inline uint64_t ut_splitmix64(uint64_t *state_word)
{
	uint64_t z = __atomic_add_fetch(state_word, 0x9e3779b97f4a7c15ULL,
					__ATOMIC_RELAXED);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A brk_random_fn: @ctx is a struct ut_rand or a bare uint64_t state word
 * (a pointer to a struct, suitably converted, points to its first member). */
static inline uint64_t ut_random_fn(void *ctx)
{
	return ut_splitmix64((uint64_t *)ctx);
}

static inline void ut_clock_set(struct ut_clock *c, uint64_t ns)
{
	__atomic_store_n(&c->ns, ns, __ATOMIC_RELEASE);
}

static inline uint64_t ut_clock_get(struct ut_clock *c)
{
	return __atomic_load_n(&c->ns, __ATOMIC_ACQUIRE);
}

/* One test's world: a segment name, a clock, a random source, a handle. */
struct ut {
	char shm[128];
	struct ut_clock clk;
	struct ut_rand rnd;
	brk_segment *seg;
	char err[256];
};

static inline void ut_name_segment(struct ut *u, const char *group)
{
	static unsigned counter;
	snprintf(u->shm, sizeof u->shm, "/brkut-%s-%ld-%u", group,
		 (long)getpid(), counter++);
}

static inline void ut_opts(struct ut *u, struct brk_attach_opts *o,
			   uint32_t capacity)
{
	brk_attach_opts_init(o);
	o->shm_name = u->shm;
	o->capacity = capacity;
	o->clock = ut_clock_fn;
	o->clock_ctx = &u->clk;
	o->random = ut_random_fn;
	o->random_ctx = &u->rnd;
	o->errbuf = u->err;
	o->errbuf_len = sizeof u->err;
}

/*
 * ut_new - allocate a world with a fresh segment of @capacity records
 * (0: default) whose clock starts at @start_ns (0: UT_CLOCK_START_NS).
 */
static inline struct ut *ut_new(const char *group, uint32_t capacity,
				uint64_t start_ns)
{
	struct ut *u = calloc(1, sizeof *u);
	struct brk_attach_opts o;
	int rc;

	assert_non_null(u);
	ut_name_segment(u, group);
	u->clk.ns = start_ns ? start_ns : UT_CLOCK_START_NS;
	u->rnd.state = 0x1234567ULL;
	brk_segment_unlink(u->shm); /* a leftover of a crashed earlier run */
	ut_opts(u, &o, capacity ? capacity : 64);
	rc = brk_attach(&o, &u->seg);
	if (rc != 0)
		fprintf(stderr, "attach %s: %d %s (%s)\n", u->shm, rc,
			brk_strerror(rc), u->err);
	assert_int_equal(rc, 0);
	assert_non_null(u->seg);
	return u;
}

static inline void ut_free(struct ut *u)
{
	if (!u)
		return;
	brk_detach(u->seg);
	brk_segment_unlink(u->shm);
	free(u);
}

/* cmocka setup/teardown wrappers: *state is the struct ut. */
#define UT_GROUP_FIXTURES(group, capacity)                                   \
	static int ut_setup(void **state)                                    \
	{                                                                    \
		*state = ut_new(group, capacity, 0);                         \
		return 0;                                                    \
	}                                                                    \
	static int ut_teardown(void **state)                                 \
	{                                                                    \
		ut_free(*state);                                             \
		*state = NULL;                                               \
		return 0;                                                    \
	}

#define UT_TEST(fn) cmocka_unit_test_setup_teardown(fn, ut_setup, ut_teardown)

/* Another handle on the same segment ("another process"): on @clk (NULL:
 * the same fake clock), with random source @rnd (NULL: the same one),
 * with BRK_ATTACH_NOCREATE and @flags. */
static inline brk_segment *ut_attach_as(struct ut *u, struct ut_clock *clk,
					struct ut_rand *rnd, uint32_t flags)
{
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	int rc;

	ut_opts(u, &o, 0);
	o.flags = BRK_ATTACH_NOCREATE | flags;
	if (clk)
		o.clock_ctx = clk;
	if (rnd)
		o.random_ctx = rnd;
	rc = brk_attach(&o, &s);
	assert_int_equal(rc, 0);
	return s;
}

/* A second handle on the same segment and the same fake clock, with its
 * own random source. */
static inline brk_segment *ut_attach_other(struct ut *u, struct ut_rand *rnd)
{
	return ut_attach_as(u, NULL, rnd, 0);
}

/* A second handle on its own fake clock @clk (NULL: the same one),
 * read-only if @ro. */
static inline brk_segment *ut_attach_clock(struct ut *u, struct ut_clock *clk,
					   int ro)
{
	return ut_attach_as(u, clk, NULL, ro ? BRK_ATTACH_READONLY : 0);
}

/* Move the world's fake clock. */
static inline void ut_advance_ns(struct ut *u, uint64_t ns)
{
	__atomic_add_fetch(&u->clk.ns, ns, __ATOMIC_ACQ_REL);
}

static inline void ut_advance_ms(struct ut *u, uint64_t ms)
{
	ut_advance_ns(u, ms * UT_NS_PER_MS);
}

static inline void ut_set_ns(struct ut *u, uint64_t ns)
{
	ut_clock_set(&u->clk, ns);
}

static inline uint64_t ut_now_ns(struct ut *u)
{
	return ut_clock_get(&u->clk);
}

/* A test config: small numbers that are easy to follow. */
static inline void ut_cfg(struct brk_config *c)
{
	brk_config_init(c);
	c->failure_threshold = 3;
	c->open_ms = 1000;
	c->max_open_ms = 8000;
	c->half_open_probes = 1;
	c->success_threshold = 1;
	c->probe_timeout_ms = 5000;
	c->max_wait_ms = 300000;
	/* the breaker rules alone: a 429 stays a rate_limited failure with
	 * its Retry-After cooling. The implicit pace that is the default
	 * (issue 21) has its own tests (test_implicit.c) */
	c->implicit_pace = 0;
}

static inline brk_breaker *ut_breaker_on(brk_segment *seg, const char *name,
					 const struct brk_config *cfg)
{
	brk_breaker *b = NULL;
	int rc = brk_breaker_get(seg, name, cfg, &b);

	if (rc != 0)
		fprintf(stderr, "brk_breaker_get(%s): %d %s\n", name, rc,
			brk_strerror(rc));
	assert_int_equal(rc, 0);
	assert_non_null(b);
	return b;
}

static inline brk_breaker *ut_breaker(struct ut *u, const char *name,
				      const struct brk_config *cfg)
{
	return ut_breaker_on(u->seg, name, cfg);
}

/* The snapshot is large (leases array): keep one per call site. */
static inline void ut_info(brk_breaker *b, struct brk_info *i)
{
	memset(i, 0xa5, sizeof *i);
	assert_int_equal(brk_breaker_info(b, i), 0);
}

/*
 * ut_ref_nth - the ref (brk_info.index) of the @k-th live record in arena
 * order, 0-based, or UINT32_MAX if there are fewer. Refs are not dense
 * (records are runs of 64-byte units with extension blocks between them):
 * this walks the units handed out so far with brk_info_at().
 */
static inline uint32_t ut_ref_nth(brk_segment *seg, uint32_t k)
{
	struct brk_segment_info si;
	struct brk_info *i = malloc(sizeof *i);
	uint32_t ref, n, seen = 0, found = UINT32_MAX;

	assert_non_null(i);
	assert_int_equal(brk_segment_info(seg, &si), 0);
	n = (uint32_t)(si.arena_used_bytes / si.unit_bytes);
	for (ref = 1; ref < n && found == UINT32_MAX; ref++)
		if (brk_info_at(seg, ref, i) == 0 && seen++ == k)
			found = ref;
	free(i);
	return found;
}

/* ut_ref_of - the ref of the live record @name, or UINT32_MAX. */
static inline uint32_t ut_ref_of(brk_segment *seg, const char *name)
{
	struct brk_segment_info si;
	struct brk_info *i = malloc(sizeof *i);
	uint32_t ref, n, found = UINT32_MAX;

	assert_non_null(i);
	assert_int_equal(brk_segment_info(seg, &si), 0);
	n = (uint32_t)(si.arena_used_bytes / si.unit_bytes);
	for (ref = 1; ref < n && found == UINT32_MAX; ref++)
		if (brk_info_at(seg, ref, i) == 0 && strcmp(i->name, name) == 0)
			found = ref;
	free(i);
	return found;
}

static inline int ut_state(brk_breaker *b)
{
	struct brk_info i;
	ut_info(b, &i);
	return i.state;
}

static inline uint64_t ut_open_remaining(brk_breaker *b)
{
	struct brk_info i;
	ut_info(b, &i);
	return i.open_remaining_ms;
}

/* Assert-style wrappers that print the library's words on a mismatch. */
#define ut_rc(expected, expr)                                                \
	do {                                                                 \
		int ut_rc_got_ = (expr);                                     \
		if (ut_rc_got_ != (expected))                                \
			fprintf(stderr, "%s:%d: %s = %d (%s), want %d (%s)\n", \
				__FILE__, __LINE__, #expr, ut_rc_got_,       \
				brk_strerror(ut_rc_got_), (int)(expected),   \
				brk_strerror(expected));                     \
		assert_int_equal(ut_rc_got_, (expected));                    \
	} while (0)

static inline void ut_acquire_ok(brk_breaker *b, brk_permit *p)
{
	struct brk_refusal why;
	memset(&why, 0, sizeof why);
	ut_rc(0, brk_acquire(b, p, &why));
}

static inline void ut_release_ok(brk_permit *p, int outcome, int reason)
{
	ut_rc(0, brk_release(p, outcome, reason, 0));
}

/* One admitted call with @outcome. */
static inline void ut_call(brk_breaker *b, int outcome, int reason)
{
	brk_permit p;
	ut_acquire_ok(b, &p);
	ut_release_ok(&p, outcome, reason);
}

static inline void ut_fail_n(brk_breaker *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ut_call(b, BRK_FAILURE, BRK_REASON_SERVER_ERROR);
}

static inline int ut_try(brk_breaker *b)
{
	brk_permit p;
	struct brk_refusal why;
	int rc = brk_acquire(b, &p, &why);
	if (rc == 0)
		ut_rc(0, brk_release(&p, BRK_CANCELLED, 0, 0));
	return rc;
}

/* Read every event from @cursor on (in chunks); returns how many. */
static inline size_t ut_events(brk_segment *seg, uint64_t *cursor,
			       struct brk_event *out, size_t max,
			       uint64_t *lost_total)
{
	size_t n = 0;
	uint64_t lost = 0;

	if (lost_total)
		*lost_total = 0;
	for (;;) {
		int got;
		if (n == max)
			break;
		got = brk_events_read(seg, cursor, out + n, max - n, &lost);
		assert_true(got >= 0);
		if (lost_total)
			*lost_total += lost;
		if (got == 0)
			break;
		n += (size_t)got;
	}
	return n;
}

static inline uint64_t ut_events_written(brk_segment *seg)
{
	struct brk_segment_info si;
	assert_int_equal(brk_segment_info(seg, &si), 0);
	return si.events_written;
}

#endif /* BRK_TEST_FIXTURE_H */
