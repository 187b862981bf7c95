/*
 * fleet_msg.h - the fleet link's wire message: one JSON object per Redis
 * PUBLISH (and per catch-up key), version 1. Pure: no I/O, no clock, no
 * segment; every byte is untrusted input (tests/fuzz/fuzz_fleet_msg.c).
 *
 *   {"v":1,"host":"web-1","seq":42,"sent_ms":1764600000000,
 *    "kind":"open","name":"payments","remaining_ms":30000,"reason":"threshold"}
 *
 * kind and its fields (others are refused as malformed):
 *   open        remaining_ms   the sender's breaker opened (threshold,
 *                              failure_rate, slow_rate, probe_failed,
 *                              retry_after, trip): open for that long
 *   cool_until  remaining_ms   a Retry-After cooling (shared cool-until)
 *   forced      mode           "normal" | "forced_open" | "disabled" |
 *                              "metrics_only" (brk_mode_name())
 *   reset       -              an operator reset
 *   close       -              the fleet probe succeeded (probe_ok)
 *   pace_cut    rate_milli     a pace's learned rate cut (milli tokens/s)
 * "reason" (optional, informative): brk_event_reason_name() of the
 * sender's event. Unknown top-level keys are refused (malformed).
 */
#ifndef BREAKERD_FLEET_MSG_H
#define BREAKERD_FLEET_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "breaker.h"

#define FLEET_MSG_VERSION 1
#define FLEET_MSG_MAX 1024u        /* bytes of one message, at most */
#define FLEET_SKEW_MS 5000u        /* a sent_ms later than now + this is
                                      refused (BRK_FLEET_DROP_FUTURE) */

enum fleet_kind {
	FLEET_OPEN = 1,
	FLEET_COOL_UNTIL = 2,
	FLEET_FORCED = 3,
	FLEET_RESET = 4,
	FLEET_CLOSE = 5,
	FLEET_PACE_CUT = 6
};

struct fleet_msg {
	int kind;                        /* enum fleet_kind */
	char host[BRK_HOST_ID_MAX + 1];  /* brk_host_id_validate() */
	char name[BRK_NAME_MAX + 1];     /* brk_name_validate() */
	uint64_t seq;                    /* the sender's counter, 1, 2, ... */
	uint64_t sent_ms;                /* sender's wall clock, ms since epoch */
	uint64_t remaining_ms;           /* open, cool_until: 1 ..
	                                    BRK_MAX_DURATION_MS at sending */
	int mode;                        /* forced: enum brk_mode */
	uint64_t rate_milli;             /* pace_cut: >= 1 */
	int reason;                      /* enum brk_event_reason, 0: none */
	uint64_t lag_ms;                 /* decode: now - sent_ms (0 if the
	                                    sender's clock is ahead, within the
	                                    skew) */
};

/* "open", "cool_until", ...; NULL for an unknown kind. */
const char *fleet_kind_name(int kind);

/*
 * fleet_msg_encode - write @m (kind, host, name, seq, sent_ms and the
 * kind's fields) as one JSON object, NUL-terminated, into @buf.
 * Returns the length (< @cap), -EINVAL (a field fleet_msg_decode() would
 * refuse), -ENOSPC (@cap too small).
 */
int fleet_msg_encode(const struct fleet_msg *m, char *buf, size_t cap);

/*
 * fleet_msg_decode - parse and validate @len bytes at @buf (no NUL
 * needed) received at @now_ms (wall clock, ms since epoch).
 * On success fills @out (lag_ms set; remaining_ms reduced by the lag)
 * and returns 0. On refusal returns -EINVAL and sets *@cause to an enum
 * brk_fleet_drop (MALFORMED, OVERSIZE, FUTURE, EXPIRED: lag_ms >=
 * remaining_ms) and writes a short reason to @why (may be NULL) such as
 * "name: bad character", for the log; of @out it then sets only host and
 * name, each to the message's value where that validated (else ""), so
 * the refusal's log line can name the sender.
 */
int fleet_msg_decode(const char *buf, size_t len, uint64_t now_ms,
		     struct fleet_msg *out, int *cause, char *why,
		     size_t why_cap);

#endif
