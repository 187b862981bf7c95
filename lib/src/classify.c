/*
 * classify.c - an HTTP status, a Retry-After value and response text to a
 * breaker outcome, reason and wait (breaker.h, "HTTP classification").
 * The status table below is the only copy: bctl exec and the Python
 * package both ask this file.
 */
#include <errno.h>

#include "breaker.h"
#include "http_answer.h"

#define SIGN_ALL (BRK_HTTP_SIGN_RATE_LIMITED | BRK_HTTP_SIGN_OVERLOADED | \
		  BRK_HTTP_SIGN_RETRY_AFTER)

static int is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * A Retry-After header value (RFC 9110 section 10.2.3): delta-seconds
 * (1*DIGIT, saturating) or an HTTP-date, with optional whitespace around
 * it. 1 and the wait in *ms, or 0 if it is neither.
 */
static int header_wait(const char *v, struct brk__wall *w, uint64_t *ms)
{
	const char *end;
	uint64_t s = 0;
	int64_t at;
	size_t n, k;

	while (is_ows(*v))
		v++;
	for (end = v; *end; end++)
		;
	while (end > v && is_ows(end[-1]))
		end--;
	n = (size_t)(end - v);
	if (n == 0)
		return 0;
	if (v[0] >= '0' && v[0] <= '9') {
		for (k = 0; k < n; k++) {
			if (v[k] < '0' || v[k] > '9')
				return 0;
			if (s <= BRK_MAX_DURATION_MS / 1000)
				s = s * 10 + (uint64_t)(v[k] - '0');
		}
		*ms = s > BRK_MAX_DURATION_MS / 1000 ? BRK_MAX_DURATION_MS : s * 1000;
		return 1;
	}
	if (brk__http_date(v, n, w, &at) != n)
		return 0;
	*ms = brk__date_wait_ms(at, w);
	return 1;
}

static void set(struct brk_result *out, int outcome, int reason)
{
	out->outcome = outcome;
	out->reason = reason;
}

/* The status table (documented in breaker.h). 1 if a failure, whose
 * Retry-After is honoured. */
static int by_status(int status, struct brk_result *out)
{
	if (status < 400) {
		set(out, BRK_SUCCESS, BRK_REASON_NONE);
		return 0;
	}
	switch (status) {
	case 404:
		set(out, BRK_HEALTHY_ERROR, BRK_REASON_NONE);
		return 0;
	case 408:
	case 504:
		set(out, BRK_FAILURE, BRK_REASON_TIMEOUT);
		return 1;
	case 429:
		set(out, BRK_FAILURE, BRK_REASON_RATE_LIMITED);
		return 1;
	case 503:
	case 529:
		set(out, BRK_FAILURE, BRK_REASON_OVERLOADED);
		return 1;
	}
	if (status < 500) {
		set(out, BRK_REJECTED_REQUEST, BRK_REASON_NONE);
		return 0;
	}
	set(out, BRK_FAILURE, status < 600 ? BRK_REASON_SERVER_ERROR
					   : BRK_REASON_OTHER);
	return 1;
}

int brk_http_verdict(int status, unsigned signs, int64_t retry_after_ms,
		     struct brk_result *out)
{
	int failure;

	if (!out || (status != 0 && (status < 100 || status > 999)) ||
	    (signs & ~(unsigned)SIGN_ALL))
		return -EINVAL;
	if (retry_after_ms < 0)
		retry_after_ms = 0;
	if ((uint64_t)retry_after_ms > BRK_MAX_DURATION_MS)
		retry_after_ms = (int64_t)BRK_MAX_DURATION_MS;
	out->retry_after_ms = 0;
	if (status != 0) {
		failure = by_status(status, out);
		if (!failure && (signs & BRK_HTTP_SIGN_RETRY_AFTER)) {
			/* the body asked to wait: rate limited, whatever the
			 * status said */
			set(out, BRK_FAILURE, BRK_REASON_RATE_LIMITED);
			failure = 1;
		}
	} else if (signs & BRK_HTTP_SIGN_RATE_LIMITED) {
		failure = by_status(429, out);
	} else if (signs & BRK_HTTP_SIGN_OVERLOADED) {
		failure = by_status(503, out);
	} else if (signs & BRK_HTTP_SIGN_RETRY_AFTER) {
		set(out, BRK_FAILURE, BRK_REASON_RATE_LIMITED);
		failure = 1;
	} else {
		set(out, 0, BRK_REASON_NONE); /* nothing to go by */
		failure = 0;
	}
	if (failure)
		out->retry_after_ms = retry_after_ms;
	return 0;
}

int brk_http_scan_text(const char *text, size_t text_len, int64_t now_unix_ms,
		       int64_t *retry_after_ms)
{
	struct brk__wall w;
	uint64_t ms = 0;
	unsigned signs = 0;

	if (!text && text_len > 0)
		return -EINVAL;
	brk__wall_init(&w, now_unix_ms);
	if (text_len > 0)
		signs = brk__scan_text(text, text_len, &w, &ms);
	if (retry_after_ms)
		*retry_after_ms = (int64_t)ms;
	return (int)signs;
}

int brk_http_classify(int status, const char *retry_after, const char *text,
		      size_t text_len, int64_t now_unix_ms, struct brk_result *out)
{
	struct brk__wall w;
	uint64_t ms = 0, hdr_ms = 0;
	unsigned signs = 0;

	if (!out || (status != 0 && (status < 100 || status > 999)) ||
	    (!text && text_len > 0))
		return -EINVAL;
	brk__wall_init(&w, now_unix_ms);
	if (text_len > 0)
		signs = brk__scan_text(text, text_len, &w, &ms);
	if (status != 0)
		signs &= BRK_HTTP_SIGN_RETRY_AFTER; /* the status is known */
	if (retry_after && header_wait(retry_after, &w, &hdr_ms)) {
		/* with a known status the header's wait counts only with a
		 * failure: it is no sign by itself (breaker.h says why) */
		if (status == 0)
			signs |= BRK_HTTP_SIGN_RETRY_AFTER;
		if (hdr_ms > ms)
			ms = hdr_ms;
	}
	return brk_http_verdict(status, signs, (int64_t)ms, out);
}
