/*
 * duration.c - strict parsing of program input: unsigned integers
 * (brk_parse_uint) and durations, "250ms", "30s", "5m", "2h" ->
 * milliseconds (brk_parse_duration). One digit loop serves both, and
 * bctl and breakerd parse their numbers with these.
 */
#include <string.h>

#include "internal.h"

struct unit {
	const char *suffix;
	uint64_t num; /* ms = value * num / den, rounded up */
	uint64_t den;
};

static const struct unit units[] = {
	{ "us", 1, 1000 }, { "ms", 1, 1 },        { "s", 1000, 1 },
	{ "m", 60000, 1 }, { "h", 3600000, 1 },   { "d", 86400000, 1 },
};

/* The value of digit @c in @base (2..36), or -1. */
static int digit_value(char c, int base)
{
	int v;

	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (c >= 'a' && c <= 'z')
		v = c - 'a' + 10;
	else if (c >= 'A' && c <= 'Z')
		v = c - 'A' + 10;
	else
		return -1;
	return v < base ? v : -1;
}

/* The library's one digit loop (internal.h). Async-signal-safe. */
int brk__parse_digits(const char **p, int base, uint64_t *v)
{
	const char *q = *p;
	uint64_t x = 0, d;
	int dv, over = 0;

	if (digit_value(*q, base) < 0)
		return -EINVAL;
	for (; (dv = digit_value(*q, base)) >= 0; q++) {
		d = (uint64_t)dv;
		if (x > (UINT64_MAX - d) / (uint64_t)base)
			over = 1;
		else
			x = x * (uint64_t)base + d;
	}
	*p = q;
	*v = x;
	return over ? -ERANGE : 0;
}

int brk_parse_uint(const char *s, int base, uint64_t min, uint64_t max,
		   uint64_t *out)
{
	const char *p = s;
	uint64_t v;
	int rc;

	if (!s || !out || base < 2 || base > 36)
		return -EINVAL;
	rc = brk__parse_digits(&p, base, &v);
	if (rc == -EINVAL || *p != '\0')
		return -EINVAL; /* nothing may follow the digits */
	if (rc == -ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int brk_parse_duration(const char *s, uint64_t *ms)
{
	uint64_t v = 0;
	const char *p = s;
	size_t i;
	int rc;

	if (!s || !ms)
		return -EINVAL;
	rc = brk__parse_digits(&p, 10, &v);
	if (rc)
		return rc;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		const struct unit *u = &units[i];
		uint64_t r;
		if (strcmp(p, u->suffix) != 0)
			continue;
		if (u->num > 1 && v > BRK_MAX_DURATION_MS / u->num)
			return -ERANGE;
		r = v * u->num / u->den + (v * u->num % u->den != 0);
		if (r > BRK_MAX_DURATION_MS)
			return -ERANGE;
		*ms = r;
		return 0;
	}
	return -EINVAL; /* bare number, unknown unit, trailing garbage */
}
