/*
 * textscan.c - rate-limit and overload signs in free text: an HTTP
 * response body, or the output of a command (bctl exec). What is matched
 * is listed in breaker.h ("HTTP classification"); this file is the only
 * copy of those rules.
 *
 * The text is cut into lines at '\n'; each line is scanned on its own
 * (a bare 529 counts only on a line that also says "overloaded"). Matching
 * is ASCII case-insensitive, NUL and other bytes are ordinary characters,
 * and nothing is read outside p[0..n): the text need not be NUL-terminated.
 */
#include <string.h>

#include "breaker.h"
#include "http_answer.h"

/* One line, without its '\n'. */
struct line {
	const char *p;
	size_t n;
};

/* What one scan gathers. */
struct found {
	unsigned signs;     /* enum brk_http_sign */
	uint64_t wait_ms;   /* longest wait */
	int has_529;        /* per line */
	int has_overloaded_word;
	struct brk__wall *wall;
};

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_alpha(char c)
{
	char l = lower(c);

	return l >= 'a' && l <= 'z';
}

static int is_alnum(char c)
{
	return is_alpha(c) || is_digit(c);
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_quote(char c)
{
	return c == '"' || c == '\'';
}

/* The line has the lowercase word @w at @i. */
static int ci_at(const struct line *l, size_t i, const char *w)
{
	size_t k;

	for (k = 0; w[k]; k++)
		if (i + k >= l->n || lower(l->p[i + k]) != w[k])
			return 0;
	return 1;
}

/* The text ending at @i (exclusive) is the lowercase word @w. */
static int ci_before(const struct line *l, size_t i, const char *w)
{
	size_t len = strlen(w);

	return i >= len && ci_at(l, i - len, w);
}

/* Nothing word-like touches @i on the left. */
static int left_bound(const struct line *l, size_t i)
{
	char c;

	if (i == 0)
		return 1;
	c = l->p[i - 1];
	return !is_alnum(c) && c != '_' && c != '.';
}

static size_t skip_blanks(const struct line *l, size_t k)
{
	while (k < l->n && is_blank(l->p[k]))
		k++;
	return k;
}

static size_t skip_blanks_back(const struct line *l, size_t k)
{
	while (k > 0 && is_blank(l->p[k - 1]))
		k--;
	return k;
}

static void note_wait(struct found *f, uint64_t ms)
{
	if (ms > BRK_MAX_DURATION_MS)
		ms = BRK_MAX_DURATION_MS;
	f->signs |= BRK_HTTP_SIGN_RETRY_AFTER;
	if (ms > f->wait_ms)
		f->wait_ms = ms;
}

/*
 * A decimal number at @i ("12", "1.5") in thousandths (rounded up),
 * saturating, and where it ends. 0 if there is none.
 */
static int parse_num(const struct line *l, size_t i, size_t *end,
		     uint64_t *milli)
{
	uint64_t ip = 0, frac = 0;
	unsigned fd = 0;
	int more = 0;
	size_t k = i;

	if (k >= l->n || !is_digit(l->p[k]))
		return 0;
	for (; k < l->n && is_digit(l->p[k]); k++)
		if (ip < BRK_MAX_DURATION_MS)
			ip = ip * 10 + (uint64_t)(l->p[k] - '0');
	if (k + 1 < l->n && l->p[k] == '.' && is_digit(l->p[k + 1])) {
		for (k++; k < l->n && is_digit(l->p[k]); k++) {
			if (fd < 3) {
				frac = frac * 10 + (uint64_t)(l->p[k] - '0');
				fd++;
			} else if (l->p[k] != '0') {
				more = 1;
			}
		}
	}
	for (; fd < 3; fd++)
		frac *= 10;
	*milli = (ip > BRK_MAX_DURATION_MS ? BRK_MAX_DURATION_MS : ip) * 1000 +
		 frac + (uint64_t)more;
	*end = k;
	return 1;
}

static int word_in(const char *w, size_t len, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == len && memcmp(*list, w, len) == 0)
			return 1;
	return 0;
}

/* A unit word at [k, u) as ms per thousand units; 0 if unknown. */
static uint64_t unit_scale(const struct line *l, size_t k, size_t u)
{
	static const char *const ms[] = { "ms", "msec", "msecs", "millisecond",
					  "milliseconds", NULL };
	static const char *const s[] = { "s", "sec", "secs", "second",
					 "seconds", NULL };
	static const char *const m[] = { "m", "min", "mins", "minute",
					 "minutes", NULL };
	char w[16];
	size_t len = u - k, j;

	if (len == 0 || len >= sizeof(w))
		return 0;
	for (j = 0; j < len; j++)
		w[j] = lower(l->p[k + j]);
	if (word_in(w, len, ms))
		return 1;
	if (word_in(w, len, s))
		return 1000;
	if (word_in(w, len, m))
		return 60000;
	return 0;
}

/* "N unit" at @k (after "try again in", "retry after" ...). */
static void match_duration(const struct line *l, size_t k, struct found *f)
{
	size_t end, u;
	uint64_t milli, scale;

	if (k == l->n || !is_blank(l->p[k]))
		return;
	k = skip_blanks(l, k);
	if (!parse_num(l, k, &end, &milli))
		return;
	k = skip_blanks(l, end);
	for (u = k; u < l->n && is_alpha(l->p[u]); u++)
		;
	scale = unit_scale(l, k, u);
	if (scale == 0)
		return;
	if (milli > BRK_MAX_DURATION_MS)
		milli = BRK_MAX_DURATION_MS;
	note_wait(f, (milli * scale + 999) / 1000);
}

/* The value of a Retry-After header at @k: seconds (fractions allowed
 * here) or an HTTP-date. */
static void match_header_value(const struct line *l, size_t k, struct found *f)
{
	size_t end;
	uint64_t milli;
	int64_t at;

	if (parse_num(l, k, &end, &milli)) {
		if (end < l->n && is_alnum(l->p[end]))
			return;
		note_wait(f, milli); /* thousandths of a second are ms */
		return;
	}
	end = k < l->n ? brk__http_date(l->p + k, l->n - k, f->wall, &at) : 0;
	if (end == 0 || (k + end < l->n && is_alnum(l->p[k + end])))
		return;
	note_wait(f, brk__date_wait_ms(at, f->wall));
}

/*
 * At @i (which holds "retry"): "Retry-After: N" (also retry_after, "=" or
 * JSON quotes; N seconds or an HTTP-date), "retry after N unit", "retry
 * in N unit".
 */
static void match_retry(const struct line *l, size_t i, struct found *f)
{
	size_t k = i + 5, after;

	if (!left_bound(l, i))
		return;
	if (ci_at(l, skip_blanks(l, k), "in")) {
		k = skip_blanks(l, k);
		if (k > i + 5)
			match_duration(l, k + 2, f);
		return;
	}
	if (k < l->n && (l->p[k] == '-' || l->p[k] == '_' || l->p[k] == ' '))
		k++;
	if (!ci_at(l, k, "after"))
		return;
	k += 5;
	after = k;
	if (k < l->n && is_quote(l->p[k]))
		k++;
	k = skip_blanks(l, k);
	if (k >= l->n || (l->p[k] != ':' && l->p[k] != '=')) {
		match_duration(l, after, f);
		return;
	}
	k = skip_blanks(l, k + 1);
	if (k < l->n && is_quote(l->p[k]))
		k++;
	match_header_value(l, k, f);
}

/* At @i (which holds "try again "): "try again in|after N unit". */
static void match_try_again(const struct line *l, size_t i, struct found *f)
{
	size_t k;

	if (!left_bound(l, i))
		return;
	k = skip_blanks(l, i + 9);
	if (ci_at(l, k, "in"))
		match_duration(l, k + 2, f);
	else if (ci_at(l, k, "after"))
		match_duration(l, k + 5, f);
}

/* "HTTP/1.1", "HTTP/2" ends at @k. */
static int http_version_before(const struct line *l, size_t k)
{
	size_t m = k;

	while (m > 0 && k - m < 5 &&
	       (is_digit(l->p[m - 1]) || l->p[m - 1] == '.'))
		m--;
	return m < k && ci_before(l, m, "http/");
}

/* A status key ("status:", "\"code\": ", "HTTP/1.1 ", "HTTP ") ends at @i. */
static int status_key_before(const struct line *l, size_t i)
{
	size_t k = skip_blanks_back(l, i);

	if (k > 0 && is_quote(l->p[k - 1]))
		k--;
	k = skip_blanks_back(l, k);
	if (k > 0 && (l->p[k - 1] == ':' || l->p[k - 1] == '=')) {
		k = skip_blanks_back(l, k - 1);
		if (k > 0 && is_quote(l->p[k - 1]))
			k--;
	}
	if (k == i)
		return 0; /* no separator at all: "status429" */
	if (ci_before(l, k, "status") || ci_before(l, k, "code"))
		return 1;
	if (ci_before(l, k, "http") && left_bound(l, k - 4))
		return 1;
	return http_version_before(l, k);
}

/* The reason phrase of @code starts after the token ending at @j. */
static int reason_after(const struct line *l, size_t j, int code)
{
	static const char *const p429[] = { "too many requests",
					    "client error: too many requests", NULL };
	static const char *const p503[] = { "service unavailable",
					    "service temporarily unavailable",
					    "server error: service unavailable", NULL };
	static const char *const p529[] = { "overloaded", "site is overloaded",
					    "site overloaded", NULL };
	const char *const *list = code == 429 ? p429 : code == 503 ? p503 : p529;
	size_t k = j;

	while (k < l->n && k - j < 4 &&
	       (is_blank(l->p[k]) || l->p[k] == ':' || l->p[k] == '-' ||
		l->p[k] == '(' || is_quote(l->p[k])))
		k++;
	for (; *list; list++)
		if (ci_at(l, k, *list))
			return 1;
	return 0;
}

/* A three-digit token [i, j) stands alone: not part of a number or word. */
static int token_bounded(const struct line *l, size_t i, size_t j)
{
	if (!left_bound(l, i))
		return 0;
	if (j == l->n)
		return 1;
	if (is_alpha(l->p[j]) || l->p[j] == '_')
		return 0;
	return !(l->p[j] == '.' && j + 1 < l->n && is_digit(l->p[j + 1]));
}

static void check_status(const struct line *l, size_t i, size_t j,
			 struct found *f)
{
	int code = (l->p[i] - '0') * 100 + (l->p[i + 1] - '0') * 10 +
		   (l->p[i + 2] - '0');

	if (code == 529)
		f->has_529 = 1;
	if (code != 429 && code != 503 && code != 529)
		return;
	if (!status_key_before(l, i) && !reason_after(l, j, code))
		return;
	f->signs |= code == 429 ? BRK_HTTP_SIGN_RATE_LIMITED
				: BRK_HTTP_SIGN_OVERLOADED;
}

static void scan_statuses(const struct line *l, struct found *f)
{
	size_t i = 0, j;

	while (i < l->n) {
		if (!is_digit(l->p[i])) {
			i++;
			continue;
		}
		for (j = i; j < l->n && is_digit(l->p[j]); j++)
			;
		if (j - i == 3 && token_bounded(l, i, j))
			check_status(l, i, j, f);
		i = j;
	}
}

static void scan_text_line(const struct line *l, struct found *f)
{
	size_t i;

	f->has_529 = 0;
	f->has_overloaded_word = 0;
	scan_statuses(l, f);
	for (i = 0; i < l->n; i++) {
		char c = lower(l->p[i]);

		if (c == 'r' && ci_at(l, i, "retry"))
			match_retry(l, i, f);
		else if (c == 't' && ci_at(l, i, "try again "))
			match_try_again(l, i, f);
		else if (c == 'o' && ci_at(l, i, "overloaded"))
			f->has_overloaded_word = 1;
	}
	if (f->has_529 && f->has_overloaded_word)
		f->signs |= BRK_HTTP_SIGN_OVERLOADED;
}

unsigned brk__scan_text(const char *p, size_t n, struct brk__wall *w,
			uint64_t *wait_ms)
{
	struct found f = { 0, 0, 0, 0, w };
	struct line l;
	const char *nl;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		l.p = p;
		l.n = nl ? (size_t)(nl - p) : n;
		scan_text_line(&l, &f);
		if (!nl)
			break;
		n -= l.n + 1;
		p = nl + 1;
	}
	*wait_ms = f.wait_ms;
	return f.signs;
}
