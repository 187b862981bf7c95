/*
 * bctl_scan.c - rate-limit and overload signs in command output. See
 * bctl_scan.h for what is matched and why the chunks overlap.
 */
#include "bctl_scan.h"

#include <string.h>

/* A piece of one line: the whole line, or one chunk of a long one. */
struct piece {
	const char *p;
	size_t n;
	bool complete; /* the piece ends where the line ends */
	bool cont;     /* the piece starts in the middle of a line */
};

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	char l = lower(c);

	return l >= 'a' && l <= 'z';
}

static bool is_alnum(char c)
{
	return is_alpha(c) || is_digit(c);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_quote(char c)
{
	return c == '"' || c == '\'';
}

/* The piece has the lowercase word @w at @i. */
static bool ci_at(const struct piece *pc, size_t i, const char *w)
{
	size_t k;

	for (k = 0; w[k]; k++)
		if (i + k >= pc->n || lower(pc->p[i + k]) != w[k])
			return false;
	return true;
}

/* The text ending at @i (exclusive) is the lowercase word @w. */
static bool ci_before(const struct piece *pc, size_t i, const char *w)
{
	size_t len = strlen(w);

	return i >= len && ci_at(pc, i - len, w);
}

/* Nothing word-like touches @i on the left. */
static bool left_bound(const struct piece *pc, size_t i)
{
	char c;

	if (i == 0)
		return !pc->cont;
	c = pc->p[i - 1];
	return !is_alnum(c) && c != '_' && c != '.';
}

static size_t skip_blanks(const struct piece *pc, size_t k)
{
	while (k < pc->n && is_blank(pc->p[k]))
		k++;
	return k;
}

static size_t skip_blanks_back(const struct piece *pc, size_t k)
{
	while (k > 0 && is_blank(pc->p[k - 1]))
		k--;
	return k;
}

static void note_wait(struct scan_result *r, uint64_t ms)
{
	if (ms > SCAN_MAX_MS)
		ms = SCAN_MAX_MS;
	r->retry_hint = true;
	if (ms > r->retry_after_ms)
		r->retry_after_ms = ms;
}

/*
 * A decimal number at @i ("12", "1.5") in thousandths (rounded up), and
 * where it ends. False if there is none, or it may go on past the piece.
 */
static bool parse_num(const struct piece *pc, size_t i, size_t *end,
		      uint64_t *milli)
{
	uint64_t ip = 0, frac = 0;
	unsigned fd = 0;
	bool more = false;
	size_t k = i;

	if (k >= pc->n || !is_digit(pc->p[k]))
		return false;
	for (; k < pc->n && is_digit(pc->p[k]); k++)
		if (ip < SCAN_MAX_MS)
			ip = ip * 10 + (uint64_t)(pc->p[k] - '0');
	if (k + 1 < pc->n && pc->p[k] == '.' && is_digit(pc->p[k + 1])) {
		for (k++; k < pc->n && is_digit(pc->p[k]); k++) {
			if (fd < 3) {
				frac = frac * 10 + (uint64_t)(pc->p[k] - '0');
				fd++;
			} else if (pc->p[k] != '0') {
				more = true;
			}
		}
	}
	if (!pc->complete && k + 1 >= pc->n)
		return false;
	for (; fd < 3; fd++)
		frac *= 10;
	*milli = (ip > SCAN_MAX_MS ? SCAN_MAX_MS : ip) * 1000 + frac + more;
	*end = k;
	return true;
}

/* "Retry-After: N" at @i (which holds "retry"). */
static void match_retry_after(const struct piece *pc, size_t i,
			      struct scan_result *r)
{
	size_t k = i + 5, end;
	uint64_t milli;

	if (!left_bound(pc, i))
		return;
	if (k < pc->n && (pc->p[k] == '-' || pc->p[k] == '_' || pc->p[k] == ' '))
		k++;
	if (!ci_at(pc, k, "after"))
		return;
	k += 5;
	if (k < pc->n && is_quote(pc->p[k]))
		k++;
	k = skip_blanks(pc, k);
	if (k >= pc->n || (pc->p[k] != ':' && pc->p[k] != '='))
		return;
	k = skip_blanks(pc, k + 1);
	if (k < pc->n && is_quote(pc->p[k]))
		k++;
	if (!parse_num(pc, k, &end, &milli))
		return;
	if (end < pc->n && is_alnum(pc->p[end]))
		return;
	note_wait(r, milli); /* thousandths of a second are ms */
}

static bool word_in(const char *w, size_t len, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == len && memcmp(*list, w, len) == 0)
			return true;
	return false;
}

/* A unit word at [k, u) as ms per thousand units; 0 if unknown. */
static uint64_t unit_scale(const struct piece *pc, size_t k, size_t u)
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
		w[j] = lower(pc->p[k + j]);
	if (word_in(w, len, ms))
		return 1;
	if (word_in(w, len, s))
		return 1000;
	if (word_in(w, len, m))
		return 60000;
	return 0;
}

/* "try again in N seconds" at @i (which holds "try again in"). */
static void match_try_again(const struct piece *pc, size_t i,
			    struct scan_result *r)
{
	size_t k, end, u;
	uint64_t milli, scale;

	if (!left_bound(pc, i))
		return;
	k = skip_blanks(pc, i + 12);
	if (!parse_num(pc, k, &end, &milli))
		return;
	k = skip_blanks(pc, end);
	for (u = k; u < pc->n && is_alpha(pc->p[u]); u++)
		;
	if (u == pc->n && !pc->complete)
		return;
	scale = unit_scale(pc, k, u);
	if (scale == 0)
		return;
	if (milli > SCAN_MAX_MS)
		milli = SCAN_MAX_MS;
	note_wait(r, (milli * scale + 999) / 1000);
}

/* "HTTP/1.1", "HTTP/2" ends at @k. */
static bool http_version_before(const struct piece *pc, size_t k)
{
	size_t m = k;

	while (m > 0 && k - m < 5 &&
	       (is_digit(pc->p[m - 1]) || pc->p[m - 1] == '.'))
		m--;
	return m < k && ci_before(pc, m, "http/");
}

/* A status key ("status:", "\"code\": ", "HTTP/1.1 ", "HTTP ") ends at @i. */
static bool status_key_before(const struct piece *pc, size_t i)
{
	size_t k = skip_blanks_back(pc, i);

	if (k > 0 && is_quote(pc->p[k - 1]))
		k--;
	k = skip_blanks_back(pc, k);
	if (k > 0 && (pc->p[k - 1] == ':' || pc->p[k - 1] == '=')) {
		k = skip_blanks_back(pc, k - 1);
		if (k > 0 && is_quote(pc->p[k - 1]))
			k--;
	}
	if (k == i)
		return false; /* no separator at all: "status429" */
	if (ci_before(pc, k, "status") || ci_before(pc, k, "code"))
		return true;
	if (ci_before(pc, k, "http") && left_bound(pc, k - 4))
		return true;
	return http_version_before(pc, k);
}

/* The reason phrase of @code starts after the token ending at @j. */
static bool reason_after(const struct piece *pc, size_t j, int code)
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

	while (k < pc->n && k - j < 4 &&
	       (is_blank(pc->p[k]) || pc->p[k] == ':' || pc->p[k] == '-' ||
		pc->p[k] == '(' || is_quote(pc->p[k])))
		k++;
	for (; *list; list++)
		if (ci_at(pc, k, *list))
			return true;
	return false;
}

/* A three-digit token [i, j) stands alone: not part of a number or word. */
static bool token_bounded(const struct piece *pc, size_t i, size_t j)
{
	if (!left_bound(pc, i))
		return false;
	if (j == pc->n)
		return pc->complete;
	if (is_alpha(pc->p[j]) || pc->p[j] == '_')
		return false;
	if (pc->p[j] == '.' && j + 1 == pc->n)
		return pc->complete;
	return !(pc->p[j] == '.' && is_digit(pc->p[j + 1]));
}

static void check_status(const struct piece *pc, size_t i, size_t j,
			 struct scan_line_state *ls, struct scan_result *r)
{
	int code = (pc->p[i] - '0') * 100 + (pc->p[i + 1] - '0') * 10 +
		   (pc->p[i + 2] - '0');

	if (code == 529)
		ls->has_529 = true;
	if (code != 429 && code != 503 && code != 529)
		return;
	if (!status_key_before(pc, i) && !reason_after(pc, j, code))
		return;
	if (code == 429)
		r->rate_limited = true;
	else
		r->overloaded = true;
}

static void scan_statuses(const struct piece *pc, struct scan_line_state *ls,
			  struct scan_result *r)
{
	size_t i = 0, j;

	while (i < pc->n) {
		if (!is_digit(pc->p[i])) {
			i++;
			continue;
		}
		for (j = i; j < pc->n && is_digit(pc->p[j]); j++)
			;
		if (j - i == 3 && token_bounded(pc, i, j))
			check_status(pc, i, j, ls, r);
		i = j;
	}
}

static void scan_piece(const struct piece *pc, struct scan_line_state *ls,
		       struct scan_result *r)
{
	size_t i;

	scan_statuses(pc, ls, r);
	for (i = 0; i < pc->n; i++) {
		char c = lower(pc->p[i]);

		if (c == 'r' && ci_at(pc, i, "retry"))
			match_retry_after(pc, i, r);
		else if (c == 't' && ci_at(pc, i, "try again in"))
			match_try_again(pc, i, r);
		else if (c == 'o' && ci_at(pc, i, "overloaded"))
			ls->has_overloaded_word = true;
	}
}

static void line_end(struct scan_line_state *ls, struct scan_result *r)
{
	if (ls->has_529 && ls->has_overloaded_word)
		r->overloaded = true;
	memset(ls, 0, sizeof(*ls));
}

void scan_result_init(struct scan_result *r)
{
	memset(r, 0, sizeof(*r));
}

void scan_stream_init(struct scan_stream *s)
{
	s->len = 0;
	s->cont = false;
	memset(&s->line, 0, sizeof(s->line));
}

bool scan_found(const struct scan_result *r)
{
	return r->rate_limited || r->overloaded || r->retry_hint;
}

void scan_line(const char *line, size_t len, struct scan_result *r)
{
	struct scan_line_state ls = { false, false };
	struct piece pc = { line, len, true, false };

	scan_piece(&pc, &ls, r);
	line_end(&ls, r);
}

/* Scan the buffered line, or the buffered chunk of a long line. */
static void scan_buffer(struct scan_stream *s, bool complete,
			struct scan_result *r)
{
	struct piece pc = { s->buf, s->len, complete, s->cont };

	scan_piece(&pc, &s->line, r);
}

/* The buffer is full: scan it as a chunk, keep its tail as an overlap. */
static void flush_chunk(struct scan_stream *s, struct scan_result *r)
{
	scan_buffer(s, false, r);
	memmove(s->buf, s->buf + s->len - SCAN_OVERLAP, SCAN_OVERLAP);
	s->len = SCAN_OVERLAP;
	s->cont = true;
}

static void append(struct scan_stream *s, const char *data, size_t n,
		   struct scan_result *r)
{
	size_t room, c;

	while (n > 0) {
		if (s->len == SCAN_LINE_MAX)
			flush_chunk(s, r);
		room = SCAN_LINE_MAX - s->len;
		c = n < room ? n : room;
		memcpy(s->buf + s->len, data, c);
		s->len += c;
		data += c;
		n -= c;
	}
}

static void end_line(struct scan_stream *s, struct scan_result *r)
{
	scan_buffer(s, true, r);
	line_end(&s->line, r);
	s->len = 0;
	s->cont = false;
}

void scan_feed(struct scan_stream *s, const char *data, size_t n,
	       struct scan_result *r)
{
	const char *nl;
	size_t take;

	while (n > 0) {
		nl = memchr(data, '\n', n);
		take = nl ? (size_t)(nl - data) : n;
		append(s, data, take, r);
		if (!nl)
			return;
		end_line(s, r);
		data += take + 1;
		n -= take + 1;
	}
}

void scan_finish(struct scan_stream *s, struct scan_result *r)
{
	if (s->len > 0 || s->cont)
		end_line(s, r);
}
