/*
 * logfmt.c - one logfmt line per event, written to stderr in one write(2).
 */
#include "logfmt.h"

#include "cli_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t wall_now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Room left for content, keeping 4 bytes for "...\n". */
static size_t room(const struct logline *l)
{
	size_t cap = sizeof(l->buf) - 4;

	return l->len < cap ? cap - l->len : 0;
}

static void put(struct logline *l, const char *s, size_t n)
{
	size_t r = room(l);

	if (n > r) {
		n = r;
		l->truncated = 1;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void putc_(struct logline *l, char c)
{
	put(l, &c, 1);
}

/* The one RFC 3339 formatter of the programs (cli/cli_util.c). */
static void put_rfc3339(struct logline *l, uint64_t wall_ms)
{
	char tmp[40];

	if (cli_format_time(wall_ms, tmp, sizeof(tmp)) != 0) {
		put(l, "invalid", 7);
		return;
	}
	put(l, tmp, strlen(tmp));
}

static int needs_quotes(const char *v)
{
	const unsigned char *p;

	if (!*v)
		return 1;
	for (p = (const unsigned char *)v; *p; p++)
		if (*p <= ' ' || *p == '=' || *p == '"' || *p == '\\' || *p == 0x7f)
			return 1;
	return 0;
}

static void put_value(struct logline *l, const char *v)
{
	const unsigned char *p;
	char esc[8];

	if (!v)
		v = "";
	if (!needs_quotes(v)) {
		put(l, v, strlen(v));
		return;
	}
	putc_(l, '"');
	for (p = (const unsigned char *)v; *p; p++) {
		switch (*p) {
		case '"':
			put(l, "\\\"", 2);
			break;
		case '\\':
			put(l, "\\\\", 2);
			break;
		case '\n':
			put(l, "\\n", 2);
			break;
		case '\t':
			put(l, "\\t", 2);
			break;
		default:
			if (*p < ' ' || *p == 0x7f) {
				snprintf(esc, sizeof(esc), "\\x%02x", *p);
				put(l, esc, 4);
			} else {
				putc_(l, (char)*p);
			}
		}
	}
	putc_(l, '"');
}

static void put_key(struct logline *l, const char *key)
{
	putc_(l, ' ');
	put(l, key, strlen(key));
	putc_(l, '=');
}

void ll_begin_at(struct logline *l, uint64_t wall_ms, const char *level,
		 const char *msg)
{
	l->len = 0;
	l->truncated = 0;
	put(l, "ts=", 3);
	put_rfc3339(l, wall_ms);
	ll_str(l, "level", level);
	ll_str(l, "msg", msg);
}

void ll_begin(struct logline *l, const char *level, const char *msg)
{
	ll_begin_at(l, wall_now_ms(), level, msg);
}

void ll_str(struct logline *l, const char *key, const char *val)
{
	put_key(l, key);
	put_value(l, val);
}

void ll_u64(struct logline *l, const char *key, uint64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);

	put_key(l, key);
	put(l, tmp, (size_t)n);
}

void ll_i64(struct logline *l, const char *key, int64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%" PRId64, v);

	put_key(l, key);
	put(l, tmp, (size_t)n);
}

void ll_time(struct logline *l, const char *key, uint64_t wall_ms)
{
	put_key(l, key);
	put_rfc3339(l, wall_ms);
}

void ll_end(struct logline *l)
{
	size_t off = 0;
	ssize_t n;

	if (l->truncated) {
		memcpy(l->buf + l->len, "...", 3);
		l->len += 3;
	}
	l->buf[l->len++] = '\n';
	while (off < l->len) {
		n = write(STDERR_FILENO, l->buf + off, l->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* stderr gone: nothing sensible to do */
		off += (size_t)n;
	}
	l->len = 0;
	l->truncated = 0;
}
