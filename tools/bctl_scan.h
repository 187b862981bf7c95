/*
 * bctl_scan.h - find rate-limit and overload signs in a command's output.
 *
 * Pure functions, no I/O, no allocation: feed bytes as they arrive with
 * scan_feed(); each stream keeps a bounded line buffer (SCAN_LINE_MAX). A
 * line longer than that is scanned in chunks that overlap by SCAN_OVERLAP
 * bytes, and a match that touches the end of a chunk is left for the next
 * chunk, so no sign is missed or mis-read at a boundary.
 *
 * Signs (ASCII case-insensitive; NUL bytes are fine):
 *  - a status 429 (rate limited), 503 or 529 (overloaded) given as an HTTP
 *    status line ("HTTP/1.1 429", "HTTP/2 503"), after a status or code
 *    key ("status: 429", "\"statusCode\":503", "HTTP 429"), before its
 *    reason phrase ("429 Too Many Requests", "503 Service Unavailable",
 *    "529 Overloaded"), or 529 on a line that says "overloaded". Any other
 *    number, or 429 inside a longer number, is ignored.
 *  - "Retry-After: N" (also retry_after, "=" or JSON quotes; N seconds,
 *    fractions allowed; an HTTP-date is ignored);
 *  - "try again in N seconds" (second/sec/s, ms/millisecond, m/min/minute).
 */
#ifndef BCTL_SCAN_H
#define BCTL_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCAN_LINE_MAX 4096u
#define SCAN_OVERLAP 128u
#define SCAN_MAX_MS ((1ULL << 38) - 1) /* larger waits are clamped */

struct scan_result {
	bool rate_limited;       /* a 429 status was seen */
	bool overloaded;         /* a 503 or 529 status was seen */
	bool retry_hint;         /* Retry-After or "try again in" was seen */
	uint64_t retry_after_ms; /* the longest wait seen (0 if none) */
};

/* Per-line facts gathered across the chunks of one long line. */
struct scan_line_state {
	bool has_529;
	bool has_overloaded_word;
};

struct scan_stream {
	size_t len;
	bool cont; /* the buffer starts in the middle of a long line */
	struct scan_line_state line;
	char buf[SCAN_LINE_MAX];
};

void scan_result_init(struct scan_result *r);
void scan_stream_init(struct scan_stream *s);

/** scan_line - scan one whole line (without its newline). */
void scan_line(const char *line, size_t len, struct scan_result *r);

/** scan_feed - scan @n bytes of a stream; keeps a partial last line. */
void scan_feed(struct scan_stream *s, const char *data, size_t n,
	       struct scan_result *r);

/** scan_finish - end of stream: scan the partial last line, if any. */
void scan_finish(struct scan_stream *s, struct scan_result *r);

/** scan_found - true if any sign was seen. */
bool scan_found(const struct scan_result *r);

#endif /* BCTL_SCAN_H */
