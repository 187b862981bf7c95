/*
 * bctl_scan.c - cut a command's output into lines and windows and ask the
 * library for the signs in each. See bctl_scan.h for where windows are
 * cut and why.
 */
#include "bctl_scan.h"

#include <string.h>
#include <strings.h>

#include "breaker.h"

/* A byte a window may end on or start at: no number or word spans it. */
static bool is_cut(char c)
{
	return !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		 (c >= 'A' && c <= 'Z') || c == '.');
}

void scan_result_init(struct scan_result *r)
{
	memset(r, 0, sizeof(*r));
}

void scan_stream_init(struct scan_stream *s)
{
	s->len = 0;
	s->cont = false;
	s->block_status = 0;
}

bool scan_found(const struct scan_result *r)
{
	return r->signs != 0;
}

void scan_line(const char *line, size_t len, struct scan_result *r)
{
	int64_t ms = 0;
	int signs = brk_http_scan_text(line, len, 0, &ms);

	if (signs <= 0)
		return; /* nothing, or -EINVAL (line NULL): nothing to add */
	r->signs |= (unsigned)signs;
	if (ms > r->retry_after_ms)
		r->retry_after_ms = ms;
}

/* Scan buf[from, to) of the buffered line. */
static void scan_window(struct scan_stream *s, size_t from, size_t to,
			struct scan_result *r)
{
	if (from < to)
		scan_line(s->buf + from, to - from, r);
}

/* Where the buffered text may start: 0 at a line's start, else at the
 * first separator (the bytes before it may be the tail of a word). */
static size_t window_start(const struct scan_stream *s)
{
	size_t i;

	if (!s->cont)
		return 0;
	for (i = 0; i < s->len && !is_cut(s->buf[i]); i++)
		;
	return i;
}

/* The buffer is full: scan a window, keep the tail for the next one. */
static void flush_window(struct scan_stream *s, struct scan_result *r)
{
	size_t c = s->len, end, keep;

	while (c > s->len / 2 && !is_cut(s->buf[c - 1]))
		c--;
	/* c: just after the last separator; none in the second half: a
	 * run of letters and digits, which no sign ends inside of */
	end = c > s->len / 2 ? c : s->len;
	scan_window(s, window_start(s), end, r);
	keep = end - SCAN_OVERLAP;
	memmove(s->buf, s->buf + keep, s->len - keep);
	s->len -= keep;
	s->cont = true;
}

static void append(struct scan_stream *s, const char *data, size_t n,
		   struct scan_result *r)
{
	size_t room, c;

	while (n > 0) {
		if (s->len == SCAN_LINE_MAX)
			flush_window(s, r);
		room = SCAN_LINE_MAX - s->len;
		c = n < room ? n : room;
		memcpy(s->buf + s->len, data, c);
		s->len += c;
		data += c;
		n -= c;
	}
}

/* "HTTP/V NNN": NNN, else 0. */
static int status_line(const char *p, size_t n)
{
	size_t i = 5;

	if (n < 10 || strncmp(p, "HTTP/", 5) != 0)
		return 0;
	while (i < n && ((p[i] >= '0' && p[i] <= '9') || p[i] == '.'))
		i++;
	if (i == 5 || i + 4 > n || p[i] != ' ')
		return 0;
	p += i + 1;
	if (p[0] < '1' || p[0] > '9' || p[1] < '0' || p[1] > '9' ||
	    p[2] < '0' || p[2] > '9' || (i + 4 < n && p[3] != ' ' &&
					 p[3] != '\r'))
		return 0;
	return (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
}

/* A "Retry-After:" header line (optional blanks before the colon). */
static bool retry_after_header(const char *p, size_t n)
{
	size_t k = strlen("Retry-After");

	if (n <= k || strncasecmp(p, "Retry-After", k) != 0)
		return false;
	while (k < n && (p[k] == ' ' || p[k] == '\t'))
		k++;
	return k < n && p[k] == ':';
}

/* Track the header block of a whole line; true if the line is to be
 * skipped (a Retry-After header of a non-failure answer). */
static bool header_line(struct scan_stream *s)
{
	int st;

	if (s->cont)
		return false;
	if (s->len == 0 || (s->len == 1 && s->buf[0] == '\r')) {
		s->block_status = 0;
		return false;
	}
	st = status_line(s->buf, s->len);
	if (st) {
		s->block_status = st;
		return false;
	}
	return s->block_status > 0 && s->block_status < 400 &&
	       retry_after_header(s->buf, s->len);
}

static void end_line(struct scan_stream *s, struct scan_result *r)
{
	if (!header_line(s))
		scan_window(s, window_start(s), s->len, r);
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
