/*
 * httpdate.c - HTTP-date (RFC 9110 section 5.6.7) to Unix seconds.
 *
 *   IMF-fixdate   Sun, 06 Nov 1994 08:49:37 GMT
 *   rfc850-date   Sunday, 06-Nov-94 08:49:37 GMT    (obsolete)
 *   asctime-date  Sun Nov  6 08:49:37 1994          (obsolete)
 *
 * Recipients MUST accept all three. Fields are checked (day within its
 * month, leap years by the Gregorian rule, hour 0-23, minute 0-59, second
 * 0-60); names are matched without regard to case. Days since the epoch
 * use Howard Hinnant's days_from_civil (howardhinnant.github.io/
 * date_algorithms.html), valid for every 4-digit year.
 */
#include <time.h>

#include "breaker.h"
#include "http_answer.h"

static const char *const day_short[7] = { "mon", "tue", "wed", "thu",
					  "fri", "sat", "sun" };
static const char *const day_long[7] = { "monday", "tuesday", "wednesday",
					 "thursday", "friday", "saturday",
					 "sunday" };
static const char *const months[12] = { "jan", "feb", "mar", "apr", "may",
					"jun", "jul", "aug", "sep", "oct",
					"nov", "dec" };

void brk__wall_init(struct brk__wall *w, int64_t now_unix_ms)
{
	w->ms = now_unix_ms;
	w->have = now_unix_ms != 0;
}

int64_t brk__wall_ms(struct brk__wall *w)
{
	struct timespec ts;

	if (!w->have) {
		clock_gettime(CLOCK_REALTIME, &ts);
		w->ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		w->have = 1;
	}
	return w->ms;
}

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The lowercase word @w at p[i..n), whole (not followed by a letter). */
static int word_at(const char *p, size_t n, size_t i, const char *w, size_t *end)
{
	size_t k;

	for (k = 0; w[k]; k++)
		if (i + k >= n || lower(p[i + k]) != w[k])
			return 0;
	if (i + k < n && lower(p[i + k]) >= 'a' && lower(p[i + k]) <= 'z')
		return 0;
	*end = i + k;
	return 1;
}

static int lit(const char *p, size_t n, size_t *i, char c)
{
	if (*i >= n || p[*i] != c)
		return 0;
	(*i)++;
	return 1;
}

/* Exactly @digits decimal digits at *i. */
static int num(const char *p, size_t n, size_t *i, int digits, int *v)
{
	int k;

	*v = 0;
	for (k = 0; k < digits; k++) {
		if (*i >= n || !is_digit(p[*i]))
			return 0;
		*v = *v * 10 + (p[*i] - '0');
		(*i)++;
	}
	return 1;
}

static int month(const char *p, size_t n, size_t *i, int *m)
{
	size_t end;
	int k;

	for (k = 0; k < 12; k++)
		if (word_at(p, n, *i, months[k], &end)) {
			*m = k + 1;
			*i = end;
			return 1;
		}
	return 0;
}

/* hour ":" minute ":" second */
static int time_of_day(const char *p, size_t n, size_t *i, int *secs)
{
	int h, m, s;

	if (!num(p, n, i, 2, &h) || !lit(p, n, i, ':') || !num(p, n, i, 2, &m) ||
	    !lit(p, n, i, ':') || !num(p, n, i, 2, &s))
		return 0;
	if (h > 23 || m > 59 || s > 60)
		return 0;
	*secs = h * 3600 + m * 60 + s;
	return 1;
}

static int gmt(const char *p, size_t n, size_t *i)
{
	size_t end;

	if (!word_at(p, n, *i, "gmt", &end))
		return 0;
	*i = end;
	return 1;
}

static int leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in(int64_t y, int m)
{
	static const int d[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return m == 2 && leap(y) ? 29 : d[m - 1];
}

/* Hinnant's days_from_civil: days since 1970-01-01. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The year (proleptic Gregorian) of a day count since the epoch. */
static int64_t year_of_days(int64_t z)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	return yoe + era * 400 + (mp >= 10);
}

/* RFC 9110: a two-digit year more than 50 years ahead is last century's. */
static int64_t full_year(int yy, struct brk__wall *w)
{
	int64_t ms = brk__wall_ms(w);
	int64_t days = ms / 86400000 - (ms % 86400000 < 0);
	int64_t now_y = year_of_days(days);
	int64_t y = now_y - ((now_y % 100) + 100) % 100 + yy;

	if (y > now_y + 50)
		y -= 100;
	return y;
}

static int day_name(const char *p, size_t n, size_t *i, int *is_long)
{
	size_t end;
	int k;

	for (k = 0; k < 7; k++) {
		if (word_at(p, n, *i, day_short[k], &end)) {
			*is_long = 0;
			*i = end;
			return 1;
		}
		if (word_at(p, n, *i, day_long[k], &end)) {
			*is_long = 1;
			*i = end;
			return 1;
		}
	}
	return 0;
}

size_t brk__http_date(const char *p, size_t n, struct brk__wall *w,
		      int64_t *unix_s)
{
	size_t i = 0;
	int is_long, d, m, y, secs;
	int64_t year;

	if (!day_name(p, n, &i, &is_long))
		return 0;
	if (lit(p, n, &i, ',')) {
		if (!lit(p, n, &i, ' ') || !num(p, n, &i, 2, &d))
			return 0;
		if (!is_long) { /* IMF-fixdate: 06 Nov 1994 */
			if (!lit(p, n, &i, ' ') || !month(p, n, &i, &m) ||
			    !lit(p, n, &i, ' ') || !num(p, n, &i, 4, &y))
				return 0;
			year = y;
		} else {        /* rfc850-date: 06-Nov-94 */
			if (!lit(p, n, &i, '-') || !month(p, n, &i, &m) ||
			    !lit(p, n, &i, '-') || !num(p, n, &i, 2, &y))
				return 0;
			year = -1; /* needs the clock: only once valid */
		}
		if (!lit(p, n, &i, ' ') || !time_of_day(p, n, &i, &secs) ||
		    !lit(p, n, &i, ' ') || !gmt(p, n, &i))
			return 0;
		if (year < 0)
			year = full_year(y, w);
	} else {                /* asctime-date: Nov  6 08:49:37 1994 */
		if (is_long || !lit(p, n, &i, ' ') || !month(p, n, &i, &m) ||
		    !lit(p, n, &i, ' '))
			return 0;
		if (lit(p, n, &i, ' ')) {
			if (!num(p, n, &i, 1, &d))
				return 0;
		} else if (!num(p, n, &i, 2, &d)) {
			return 0;
		}
		if (!lit(p, n, &i, ' ') || !time_of_day(p, n, &i, &secs) ||
		    !lit(p, n, &i, ' ') || !num(p, n, &i, 4, &y))
			return 0;
		year = y;
	}
	if (i < n && is_digit(p[i]))
		return 0; /* "1994" followed by more digits */
	if (d < 1 || d > days_in(year, m))
		return 0;
	*unix_s = days_from_civil(year, m, d) * 86400 + secs;
	return i;
}

uint64_t brk__date_wait_ms(int64_t unix_s, struct brk__wall *w)
{
	int64_t now = brk__wall_ms(w);
	/* an RFC 850 year comes from now, which may be any int64: saturate */
	int64_t at = unix_s > INT64_MAX / 1000 ? INT64_MAX
		     : unix_s < INT64_MIN / 1000 ? INT64_MIN : unix_s * 1000;

	if (now < 0 && at > INT64_MAX + now)
		return BRK_MAX_DURATION_MS;
	if (at <= now)
		return 0;
	return (uint64_t)(at - now) > BRK_MAX_DURATION_MS ? BRK_MAX_DURATION_MS
							  : (uint64_t)(at - now);
}
