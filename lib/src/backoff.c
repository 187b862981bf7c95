/*
 * backoff.c - exponential backoff with jitter.
 *
 * After Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture
 * Blog, 4 March 2015 (formulas in breaker.h, "Backoff with jitter"):
 *
 *   v = min(cap, base * 2^attempt)
 *   full          random_between(0, v)
 *   equal         v/2 + random_between(0, v/2)
 *   decorrelated  min(cap, random_between(base, prev * 3))
 *
 * Everything saturates: base * 2^attempt is computed as "base <= cap >>
 * attempt ? base << attempt : cap", so no shift ever reaches 64 bits and
 * no product overflows; prev * 3 saturates at UINT64_MAX.
 *
 * random_between(a, b) maps 64 random bits onto a..b inclusive by a
 * 128-bit multiply (Lemire's method without rejection: bias below
 * (b - a + 1) / 2^64, far below anything a backoff can notice).
 *
 * The internal generator (rnd == NULL) is the library's one generator,
 * brk__random_u64() in ident.c: a per-thread xorshift64* (Vigna 2016)
 * that a fork()ed child reseeds. Not cryptographic.
 */
#include <string.h>

#include "internal.h"

/* Uniform over a..b inclusive (a <= b). */
static uint64_t between(uint64_t a, uint64_t b, brk_random_fn rnd, void *ctx)
{
	uint64_t span = b - a;
	uint64_t r = rnd ? rnd(ctx) : brk__random_u64();

	if (span == UINT64_MAX)
		return r;
	return a + (uint64_t)(((unsigned __int128)r * (span + 1)) >> 64);
}

/* min(cap, base * 2^attempt), saturating. */
static uint64_t exp_capped(uint64_t base, uint64_t cap, uint32_t attempt)
{
	if (base == 0)
		return 0;
	if (attempt >= 64 || base > (cap >> attempt))
		return cap;
	return base << attempt;
}

uint64_t brk_backoff_ms(int jitter, uint64_t base_ms, uint64_t cap_ms,
			uint32_t attempt, uint64_t prev_ms, brk_random_fn rnd,
			void *rnd_ctx)
{
	uint64_t v, p, hi, r;

	switch (jitter) {
	case BRK_JITTER_FULL:
		v = exp_capped(base_ms, cap_ms, attempt);
		return between(0, v, rnd, rnd_ctx);
	case BRK_JITTER_DECORRELATED:
		p = prev_ms ? prev_ms : base_ms;
		hi = p > UINT64_MAX / 3 ? UINT64_MAX : p * 3;
		r = hi < base_ms ? base_ms : between(base_ms, hi, rnd, rnd_ctx);
		return r < cap_ms ? r : cap_ms;
	case BRK_JITTER_EQUAL:
	default:
		v = exp_capped(base_ms, cap_ms, attempt);
		return v / 2 + between(0, v / 2, rnd, rnd_ctx);
	}
}

const char *brk_jitter_name(int jitter)
{
	switch (jitter) {
	case BRK_JITTER_EQUAL:
		return "equal";
	case BRK_JITTER_FULL:
		return "full";
	case BRK_JITTER_DECORRELATED:
		return "decorrelated";
	default:
		return "unknown";
	}
}

int brk_jitter_parse(const char *s)
{
	if (!s)
		return -EINVAL;
	if (strcmp(s, "equal") == 0)
		return BRK_JITTER_EQUAL;
	if (strcmp(s, "full") == 0)
		return BRK_JITTER_FULL;
	if (strcmp(s, "decorrelated") == 0)
		return BRK_JITTER_DECORRELATED;
	return -EINVAL;
}
