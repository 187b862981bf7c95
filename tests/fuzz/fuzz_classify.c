/*
 * fuzz_classify.c - libFuzzer target: brk_http_classify() (and its halves
 * brk_http_scan_text() / brk_http_verdict()) and bctl's output scanner
 * (tools/bctl_scan.c) on any bytes.
 *
 * Input: [status: 2 bytes][flags: 1][now_unix_ms: 8][Retry-After value up
 * to a NUL, if flags bit 0][text: the rest, not NUL-terminated: it is
 * copied to a buffer of exactly its size, so ASan sees any read past it].
 * status = u16 % 1100 - 50 covers the invalid values around 0..999.
 *
 * Checks besides "no crash, no sanitizer report":
 *  - -EINVAL exactly for a status outside 0 and 100..999;
 *  - outcome, reason and wait in range; a wait only with a failure, a
 *    failure always with a reason; a known status decides the outcome,
 *    except that a wait in the text may make a non-failure rate_limited;
 *  - classify == scan_text + header + verdict (the halves compose);
 *  - bctl's stream scanner, fed in pieces of 1..256 bytes, reports no sign
 *    the whole text does not hold (its windows are never misread), the
 *    same signs when no line is longer than its buffer, and no longer
 *    wait (give or take the clock moving between the two reads).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bctl_scan.h"
#include "breaker.h"

#define CAP ((int64_t)BRK_MAX_DURATION_MS)
#define CLOCK_SLACK_MS 10000

static void bad(const char *what, int status)
{
	fprintf(stderr, "fuzz_classify: %s (status %d)\n", what, status);
	abort();
}

static int valid_status(int s)
{
	return s == 0 || (s >= 100 && s <= 999);
}

static void check_result(const struct brk_result *r, int status)
{
	if (r->outcome != 0 && r->outcome != BRK_SUCCESS &&
	    r->outcome != BRK_FAILURE && r->outcome != BRK_HEALTHY_ERROR &&
	    r->outcome != BRK_REJECTED_REQUEST)
		bad("outcome out of range", status);
	if (r->reason < 0 || r->reason >= BRK_REASON_COUNT)
		bad("reason out of range", status);
	if (r->retry_after_ms < 0 || r->retry_after_ms > CAP)
		bad("wait out of range", status);
	if (r->retry_after_ms > 0 && r->outcome != BRK_FAILURE)
		bad("wait without a failure", status);
	if ((r->outcome == BRK_FAILURE) != (r->reason != BRK_REASON_NONE))
		bad("failure without a reason, or a reason without one", status);
	if (status != 0 && r->outcome == 0)
		bad("no verdict for a known status", status);
}

static int longest_line(const char *p, size_t n)
{
	size_t run = 0, i;

	for (i = 0; i < n; i++) {
		run = p[i] == '\n' ? 0 : run + 1;
		if (run > SCAN_LINE_MAX)
			return 1;
	}
	return 0;
}

static void check_stream(const char *text, size_t n, unsigned step)
{
	static struct scan_stream st;
	struct scan_result r;
	int64_t whole_ms = 0;
	int whole;
	size_t off, k;

	scan_stream_init(&st);
	scan_result_init(&r);
	for (off = 0; off < n; off += k) {
		k = n - off < step ? n - off : step;
		scan_feed(&st, text + off, k, &r);
	}
	scan_finish(&st, &r);
	whole = brk_http_scan_text(text, n, 0, &whole_ms);
	if (whole < 0)
		bad("scan_text failed", 0);
	if (r.signs & ~(unsigned)whole)
		bad("bctl scanner reports a sign the text does not hold", 0);
	if (!longest_line(text, n) && r.signs != (unsigned)whole)
		bad("bctl scanner missed a sign on a short line", 0);
	if (r.retry_after_ms > whole_ms + CLOCK_SLACK_MS)
		bad("bctl scanner reports a longer wait than the text holds", 0);
	if (!longest_line(text, n) && r.retry_after_ms + CLOCK_SLACK_MS < whole_ms)
		bad("bctl scanner reports a shorter wait on short lines", 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct brk_result r, v, h;
	char ra[65], *text;
	const char *rap = NULL;
	int64_t now, ms = 0, hms;
	unsigned signs;
	int status, rc, s;
	size_t i = 11, k, tlen;
	uint8_t flags;

	if (n < 11)
		return 0;
	status = (int)(((unsigned)d[0] | (unsigned)d[1] << 8) % 1100u) - 50;
	flags = d[2];
	memcpy(&now, d + 3, sizeof(now));
	if (now == 0)
		now = 1; /* 0 would read the clock: keep every check exact */
	if (flags & 1) {
		for (k = 0; i + k < n && d[i + k] != 0 && k < sizeof(ra) - 1; k++)
			ra[k] = (char)d[i + k];
		ra[k] = '\0';
		rap = ra;
		i += k + (i + k < n);
	}
	tlen = n - i;
	text = malloc(tlen ? tlen : 1);
	if (!text)
		return 0;
	memcpy(text, d + i, tlen);

	rc = brk_http_classify(status, rap, tlen ? text : NULL, tlen, now, &r);
	if (!valid_status(status)) {
		if (rc != -EINVAL)
			bad("invalid status accepted", status);
		free(text);
		return 0;
	}
	if (rc != 0)
		bad("valid call refused", status);
	check_result(&r, status);

	s = brk_http_scan_text(tlen ? text : NULL, tlen, now, &ms);
	if (s < 0)
		bad("scan_text refused", status);
	signs = (unsigned)s;
	/* a known status decides, except that a wait in the text makes a
	 * non-failure a rate_limited failure */
	if (status != 0) {
		if (brk_http_verdict(status, 0, 0, &v) != 0)
			bad("verdict refused a valid status", status);
		if ((v.outcome != r.outcome || v.reason != r.reason) &&
		    !(v.outcome != BRK_FAILURE && r.outcome == BRK_FAILURE &&
		      r.reason == BRK_REASON_RATE_LIMITED &&
		      (signs & BRK_HTTP_SIGN_RETRY_AFTER)))
			bad("the text changed a known status's outcome", status);
		signs &= BRK_HTTP_SIGN_RETRY_AFTER;
	}
	/* the halves compose */
	if (rap && brk_http_classify(0, rap, NULL, 0, now, &h) == 0 &&
	    h.outcome != 0) {
		if (status == 0)
			signs |= BRK_HTTP_SIGN_RETRY_AFTER;
		hms = h.retry_after_ms;
		ms = hms > ms ? hms : ms;
	}
	if (brk_http_verdict(status, signs, ms, &v) != 0 || v.outcome != r.outcome ||
	    v.reason != r.reason || v.retry_after_ms != r.retry_after_ms)
		bad("classify != scan_text + verdict", status);

	check_stream(text, tlen, 1u + (unsigned)(flags >> 1) * 2u);
	free(text);
	return 0;
}
