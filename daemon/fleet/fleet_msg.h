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
 *
 * Version 2 (a link with a key, --fleet-key-file; docs/design/fleet.md
 * "Message format v2") is version 1 with "v":2, a "boot" after "host"
 * (the sender's start, wall ms: orders its lives), remaining_ms on a
 * forced mode too (how long it holds; the origin re-announces it), and
 * last a "tag": 64 lowercase hex digits of HMAC-SHA256(key, the text
 * with its ,"tag":"..." member taken out) - the signed bytes are exactly
 * the bytes received up to the tag member, then "}":
 *
 *   {"v":2,"host":"web-1","boot":1764599000000,"seq":42,
 *    "sent_ms":1764600000000,"kind":"forced","name":"payments",
 *    "remaining_ms":60000,"mode":"disabled","tag":"3f1c...e0"}
 *
 * A decoder with keys refuses (BRK_FLEET_DROP_AUTH) a v1 message, a v2
 * one without a tag in that place, and a tag no key gives; one without
 * keys reads v2 without checking the tag (it has nothing to check with).
 */
#ifndef BREAKERD_FLEET_MSG_H
#define BREAKERD_FLEET_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "breaker.h"

#define FLEET_MSG_VERSION 1
#define FLEET_MSG_VERSION_SIGNED 2
#define FLEET_KEYS_MAX 4u           /* keys in a key file (rotation) */
#define FLEET_KEY_MIN 16u           /* bytes of a key, at least */
#define FLEET_KEY_MAX 256u          /* ... at most */
#define FLEET_TAG_HEX 64u           /* HMAC-SHA256: 32 bytes, in hex */
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

/* The link's keys: keys[0] signs, every one verifies (rotation). */
struct fleet_keys {
	unsigned n;
	size_t len[FLEET_KEYS_MAX];
	unsigned char key[FLEET_KEYS_MAX][FLEET_KEY_MAX];
};

struct fleet_msg {
	int version;                     /* decode: 1 or 2 (encode: ignored) */
	uint64_t boot;                   /* v2: the sender's start (wall ms) */
	int kind;                        /* enum fleet_kind */
	char host[BRK_HOST_ID_MAX + 1];  /* brk_host_id_validate() */
	char name[BRK_NAME_MAX + 1];     /* brk_name_validate() */
	uint64_t seq;                    /* the sender's counter, 1, 2, ... */
	uint64_t sent_ms;                /* sender's wall clock, ms since epoch */
	uint64_t remaining_ms;           /* open, cool_until (and forced in
	                                    v2): 1 .. BRK_MAX_DURATION_MS at
	                                    sending */
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
 * fleet_msg_encode_keyed - with @keys holding a key (n >= 1): version 2,
 * boot and (on forced) remaining_ms written, tagged with keys->key[0];
 * without (NULL or n == 0): fleet_msg_encode() (version 1). Returns as
 * fleet_msg_encode() (-EINVAL also for a v2 message without boot, or a
 * forced one without remaining_ms), -EIO if libcrypto failed.
 */
int fleet_msg_encode_keyed(const struct fleet_msg *m,
			   const struct fleet_keys *keys, char *buf,
			   size_t cap);

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

/*
 * fleet_msg_decode_keyed - fleet_msg_decode() that also reads version 2;
 * with @keys holding a key, only a v2 message whose tag one of them gives
 * is accepted (else cause BRK_FLEET_DROP_AUTH: "unsigned (version 1)",
 * "no tag", "tag: wrong"). A forced mode's remaining_ms, when it has one,
 * is reduced by the lag (EXPIRED when it passed).
 */
int fleet_msg_decode_keyed(const char *buf, size_t len, uint64_t now_ms,
			   const struct fleet_keys *keys,
			   struct fleet_msg *out, int *cause, char *why,
			   size_t why_cap);

#endif
