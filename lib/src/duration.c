/* duration.c - "250ms", "30s", "5m", "2h" -> milliseconds. */
#include <ctype.h>
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

int brk_parse_duration(const char *s, uint64_t *ms)
{
	uint64_t v = 0;
	const char *p = s;
	size_t i;

	if (!s || !ms || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		uint64_t d = (uint64_t)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
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
