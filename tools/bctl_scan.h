/*
 * bctl_scan.h - find rate-limit and overload signs in a command's output.
 *
 * What a sign is, and what it means, is the library's: each piece of
 * output is handed to brk_http_scan_text() and the final verdict comes
 * from brk_http_verdict() (breaker.h, "HTTP classification"; the Python
 * package asks the same functions). This file only cuts a stream into
 * pieces, with no I/O and no allocation: bytes are fed as they arrive
 * with scan_feed(), and each stream keeps a bounded line buffer
 * (SCAN_LINE_MAX).
 *
 * A line that fits is scanned whole. A longer line is scanned in windows:
 * each ends just after the last byte in the second half of the buffer that
 * is neither a letter, a digit nor '.' (a space, ':', ',', '"' ...), so
 * that no number or word is cut; the next window keeps the SCAN_OVERLAP
 * bytes before that cut and starts at the first such separator in them,
 * so that a sign cut at a window's end is read whole in the next one and
 * a window never starts inside a word. Limits: a bare 529 and the word
 * "overloaded" count together only within one window, and a sign glued
 * to more than SCAN_OVERLAP bytes without any separator before it may be
 * missed. A window is never misread: a sign is reported only if the whole
 * line holds it.
 *
 * HTTP header blocks (curl -i): a line "HTTP/V NNN ..." starts a block of
 * status NNN, an empty line ends it. A "Retry-After:" header line inside
 * the block of a 1xx, 2xx or 3xx answer is not scanned: a Retry-After
 * header is honoured only with a failure (the library's rule, breaker.h
 * "HTTP classification"; RFC 9110 section 10.2.3), and a server that adds
 * it to every answer (nginx `add_header Retry-After 1 always`) must not
 * make each success a rate limit. Waits in the body are still read.
 */
#ifndef BCTL_SCAN_H
#define BCTL_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCAN_LINE_MAX 4096u
#define SCAN_OVERLAP 128u

struct scan_result {
	unsigned signs;         /* enum brk_http_sign, ORed over the output */
	int64_t retry_after_ms; /* the longest wait seen (0 if none) */
};

struct scan_stream {
	size_t len;
	bool cont; /* the buffer starts in the middle of a long line */
	int block_status; /* status of the HTTP header block the stream is
	                     in (the last "HTTP/V NNN" line), 0: none */
	char buf[SCAN_LINE_MAX];
};

void scan_result_init(struct scan_result *r);
void scan_stream_init(struct scan_stream *s);

/** scan_line - scan one whole line (or any complete text). */
void scan_line(const char *line, size_t len, struct scan_result *r);

/** scan_feed - scan @n bytes of a stream; keeps a partial last line. */
void scan_feed(struct scan_stream *s, const char *data, size_t n,
	       struct scan_result *r);

/** scan_finish - end of stream: scan the partial last line, if any. */
void scan_finish(struct scan_stream *s, struct scan_result *r);

/** scan_found - true if any sign was seen. */
bool scan_found(const struct scan_result *r);

#endif /* BCTL_SCAN_H */
