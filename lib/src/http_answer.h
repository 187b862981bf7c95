/*
 * http_answer.h - what the three files that read an HTTP answer share
 * (private): the wall clock read once, the HTTP-date parser and the
 * free-text scan, used by httpdate.c (HTTP-date), textscan.c (signs in
 * free text) and classify.c (the public brk_http_* functions and the
 * status table).
 */
#ifndef BRK_HTTP_ANSWER_H
#define BRK_HTTP_ANSWER_H

#include <stddef.h>
#include <stdint.h>

/*
 * The wall clock, read at most once and only if a date needs it: callers
 * pass now_unix_ms, or 0 to have CLOCK_REALTIME read on first use.
 */
struct brk__wall {
	int64_t ms;   /* ms since the Unix epoch, valid if @have */
	int have;
};

void brk__wall_init(struct brk__wall *w, int64_t now_unix_ms);
int64_t brk__wall_ms(struct brk__wall *w);

/*
 * brk__http_date - an HTTP-date (RFC 9110 section 5.6.7: IMF-fixdate, or
 * the obsolete RFC 850 and asctime forms) at the start of p[0..n).
 * Day and month names and "GMT" are matched without regard to case; the
 * day name is not checked against the date. A two-digit RFC 850 year that
 * would be more than 50 years after the current year (from @w) is the
 * previous century's (RFC 9110's rule).
 * Returns the bytes it spans (> 0) and the time in *unix_s (seconds since
 * the Unix epoch, may be negative), or 0 if p does not start with one.
 */
size_t brk__http_date(const char *p, size_t n, struct brk__wall *w,
		      int64_t *unix_s);

/* brk__date_wait_ms - ms from now until @unix_s: 0 if it is past, at most
 * BRK_MAX_DURATION_MS. */
uint64_t brk__date_wait_ms(int64_t unix_s, struct brk__wall *w);

/*
 * brk__scan_text - the signs (enum brk_http_sign bits) in p[0..n), line by
 * line; *wait_ms receives the longest wait found (0 if none).
 */
unsigned brk__scan_text(const char *p, size_t n, struct brk__wall *w,
			uint64_t *wait_ms);

#endif /* BRK_HTTP_ANSWER_H */
