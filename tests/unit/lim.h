/*
 * lim.h - fixtures of the bucket / budget / backoff unit tests.
 *
 * Every test gets its own segment (/brklim-<group>-<pid>-<n>), attached
 * with an injected fake clock (moved only by the test) and a seeded
 * splitmix64 random source. Nothing sleeps; no assertion depends on real
 * time. Kept separate from tests/unit/ut.h (another owner).
 */
#ifndef BRK_LIM_H
#define BRK_LIM_H

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

#define LIM_MS 1000000ULL
#define LIM_S 1000000000ULL
/* The fake clock starts at 1000 s: far from 0 and from the top. */
#define LIM_START_NS (1000ULL * LIM_S)

struct lim_clock {
	uint64_t ns;
};

static inline uint64_t lim_clock_fn(void *ctx)
{
	struct lim_clock *c = ctx;
	return __atomic_load_n(&c->ns, __ATOMIC_ACQUIRE);
}

static inline uint64_t lim_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t lim_random_fn(void *ctx)
{
	return lim_splitmix(ctx);
}

struct lim {
	char shm[128];
	struct lim_clock clk;
	uint64_t rnd;
	brk_segment *seg;
	char err[256];
};

static inline void lim_opts(struct lim *u, struct brk_attach_opts *o,
			    struct lim_clock *clk)
{
	brk_attach_opts_init(o);
	o->shm_name = u->shm;
	o->capacity = 64;
	o->clock = lim_clock_fn;
	o->clock_ctx = clk ? clk : &u->clk;
	o->random = lim_random_fn;
	o->random_ctx = &u->rnd;
	o->errbuf = u->err;
	o->errbuf_len = sizeof u->err;
}

static inline struct lim *lim_new(const char *group, uint64_t start_ns)
{
	static unsigned counter;
	struct lim *u = calloc(1, sizeof *u);
	struct brk_attach_opts o;
	int rc;

	assert_non_null(u);
	snprintf(u->shm, sizeof u->shm, "/brklim-%s-%ld-%u", group,
		 (long)getpid(), counter++);
	u->clk.ns = start_ns ? start_ns : LIM_START_NS;
	u->rnd = 0x1234567ULL;
	brk_segment_unlink(u->shm);
	lim_opts(u, &o, NULL);
	rc = brk_attach(&o, &u->seg);
	if (rc)
		fprintf(stderr, "attach %s: %d %s (%s)\n", u->shm, rc,
			brk_strerror(rc), u->err);
	assert_int_equal(rc, 0);
	return u;
}

/* Another handle on the same segment ("another process"), on @clk (NULL:
 * the same fake clock), optionally read-only. */
static inline brk_segment *lim_attach_other(struct lim *u,
					    struct lim_clock *clk, int ro)
{
	struct brk_attach_opts o;
	brk_segment *s = NULL;

	lim_opts(u, &o, clk);
	o.flags = BRK_ATTACH_NOCREATE | (ro ? BRK_ATTACH_READONLY : 0);
	assert_int_equal(brk_attach(&o, &s), 0);
	return s;
}

static inline void lim_free(struct lim *u)
{
	if (!u)
		return;
	brk_detach(u->seg);
	brk_segment_unlink(u->shm);
	free(u);
}

static inline void lim_adv(struct lim *u, uint64_t ns)
{
	__atomic_add_fetch(&u->clk.ns, ns, __ATOMIC_ACQ_REL);
}

static inline void lim_set(struct lim *u, uint64_t ns)
{
	__atomic_store_n(&u->clk.ns, ns, __ATOMIC_RELEASE);
}

static inline uint64_t lim_now(struct lim *u)
{
	return __atomic_load_n(&u->clk.ns, __ATOMIC_ACQUIRE);
}

#define LIM_FIXTURES(group)                                                  \
	static int lim_setup(void **state)                                   \
	{                                                                    \
		*state = lim_new(group, 0);                                  \
		return 0;                                                    \
	}                                                                    \
	static int lim_teardown(void **state)                                \
	{                                                                    \
		lim_free(*state);                                            \
		*state = NULL;                                               \
		return 0;                                                    \
	}

#define LIM_TEST(fn) cmocka_unit_test_setup_teardown(fn, lim_setup, lim_teardown)

#define lim_rc(expected, expr)                                               \
	do {                                                                 \
		int lim_got_ = (expr);                                       \
		if (lim_got_ != (expected))                                  \
			fprintf(stderr, "%s:%d: %s = %d (%s), want %d (%s)\n", \
				__FILE__, __LINE__, #expr, lim_got_,         \
				brk_strerror(lim_got_), (int)(expected),     \
				brk_strerror(expected));                     \
		assert_int_equal(lim_got_, (expected));                      \
	} while (0)

#endif /* BRK_LIM_H */
