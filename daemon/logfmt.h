/*
 * logfmt.h - breakerd's log lines: one logfmt line per event on stderr.
 *
 *   ts=2026-11-29T21:21:21.123Z level=info msg=starting shm=/breakerd ...
 *
 * A line is built in a fixed buffer and written with one write(2), so
 * lines from concurrent writers never interleave. Values that need it
 * (spaces, '=', quotes, control bytes, empty) are double-quoted with
 * backslash escapes; an over-long line is cut and ends with "...".
 */
#ifndef BREAKERD_LOGFMT_H
#define BREAKERD_LOGFMT_H

#include <stddef.h>
#include <stdint.h>

#define LOGFMT_LINE_MAX 1024

struct logline {
	char buf[LOGFMT_LINE_MAX];
	size_t len;
	int truncated;
};

/* Start a line: ts (now, UTC, ms), level and msg. */
void ll_begin(struct logline *l, const char *level, const char *msg);
/* Start a line with an explicit wall time (ms since the Unix epoch). */
void ll_begin_at(struct logline *l, uint64_t wall_ms, const char *level,
		 const char *msg);
void ll_str(struct logline *l, const char *key, const char *val);
void ll_u64(struct logline *l, const char *key, uint64_t v);
void ll_i64(struct logline *l, const char *key, int64_t v);
/* key=<RFC 3339 UTC time with ms> for a wall time in ms since the epoch. */
void ll_time(struct logline *l, const char *key, uint64_t wall_ms);
/* Terminate the line and write it to stderr (one write). */
void ll_end(struct logline *l);

/* ms since the Unix epoch (CLOCK_REALTIME). */
uint64_t wall_now_ms(void);

#endif /* BREAKERD_LOGFMT_H */
