/*
 * fuzz_duration.c - libFuzzer target: brk_parse_duration() on any bytes.
 *
 * The input is made a NUL-terminated string (the parser takes a C string;
 * bytes after an embedded NUL are not seen). Checks, besides "no crash,
 * no sanitizer report": a result is returned only with 0; 0 means the
 * value is at most BRK_MAX_DURATION_MS and the text was digits followed by
 * one known unit; and the parser agrees with a slow reference parse for
 * every text it accepts (value * unit, rounded up to ms).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breaker.h"

static void bad(const char *what, const char *s)
{
	fprintf(stderr, "fuzz_duration: %s for '%s'\n", what, s);
	abort();
}

/* The unit's ms per value as num/den, or 0 if @u is not a unit. */
static int unit_of(const char *u, uint64_t *num, uint64_t *den)
{
	static const struct { const char *u; uint64_t num, den; } t[] = {
		{ "us", 1, 1000 }, { "ms", 1, 1 }, { "s", 1000, 1 },
		{ "m", 60000, 1 }, { "h", 3600000, 1 }, { "d", 86400000, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(u, t[i].u) == 0) {
			*num = t[i].num;
			*den = t[i].den;
			return 1;
		}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char s[64];
	uint64_t ms = 12345, num, den;
	unsigned __int128 v = 0, r;
	size_t len = n < sizeof(s) - 1 ? n : sizeof(s) - 1, k;
	int rc;

	memcpy(s, d, len);
	s[len] = '\0';
	rc = brk_parse_duration(s, &ms);
	if (rc != 0 && rc != -EINVAL && rc != -ERANGE)
		bad("unexpected code", s);
	if (rc != 0 && ms != 12345)
		bad("result written on error", s);
	/* reference: digits, then a unit, with 128-bit arithmetic */
	for (k = 0; s[k] >= '0' && s[k] <= '9'; k++)
		if (v < ((unsigned __int128)1 << 100))
			v = v * 10 + (unsigned)(s[k] - '0');
	if (k == 0 || !unit_of(s + k, &num, &den)) {
		if (rc == 0)
			bad("accepted garbage", s);
		return 0;
	}
	r = (v * num + den - 1) / den;
	if (r > BRK_MAX_DURATION_MS) {
		if (rc != -ERANGE)
			bad("overflow not -ERANGE", s);
		return 0;
	}
	if (rc != 0 || ms != (uint64_t)r)
		bad("wrong value", s);
	if (brk_parse_duration(s, NULL) != -EINVAL)
		bad("NULL result accepted", s);
	return 0;
}
