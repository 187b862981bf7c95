/*
 * fuzz_fleet_msg.c - libFuzzer target: fleet_msg_decode() (daemon/
 * fleet_msg.c), the fleet link's JSON v1/v2 decoder, on any bytes: what a
 * peer, or anyone who can PUBLISH on the channel, may send.
 *
 * Input: the message itself (not NUL-terminated: copied to a buffer of
 * exactly its size, so ASan sees any read past it), received at a fixed
 * wall time NOW (the seeds' sent_ms are near it).
 *
 * Checks besides "no crash, no leak, no sanitizer report":
 *  - 0 or -EINVAL; a refusal's cause is malformed, oversize, future or
 *    expired, oversize exactly when the input is longer than
 *    FLEET_MSG_MAX; its reason is printable ASCII (no input byte echoed
 *    into the log);
 *  - an accepted message holds a known kind, a valid host id and name,
 *    seq >= 1, its kind's fields in range and only those, and lag_ms
 *    agrees with sent_ms and NOW (the future within FLEET_SKEW_MS);
 *  - it re-encodes, and the encoding decodes (at its own sent_ms) to the
 *    same message with lag 0 (a v2 one signed and checked with a key);
 *  - decoded with a key, the input is accepted only as v2 (its tag
 *    checked: a fuzzer does not find a tag), else refused with a cause.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breaker.h"
#include "fleet_msg.h"

#define NOW 1764600000000ULL

static const struct fleet_keys fuzz_key = {
	.n = 1, .len = { 16 }, .key = { "fuzz-key-0123456" },
};

static void bad(const char *what)
{
	fprintf(stderr, "fuzz_fleet_msg: %s\n", what);
	abort();
}

static int host_ok(const char *h)
{
	size_t n = strnlen(h, BRK_HOST_ID_MAX + 1);

	if (n == 0 || n > BRK_HOST_ID_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)h[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

static void check_accepted(const struct fleet_msg *m)
{
	int timed = m->kind == FLEET_OPEN || m->kind == FLEET_COOL_UNTIL ||
		    (m->kind == FLEET_FORCED && m->version == 2);

	if (!fleet_kind_name(m->kind))
		bad("unknown kind accepted");
	if (!host_ok(m->host) || brk_name_validate(m->name) != 0)
		bad("bad host or name accepted");
	if (m->seq < 1 || m->sent_ms < 1)
		bad("seq or sent_ms 0 accepted");
	if (timed ? (m->remaining_ms < 1 ||
		     m->remaining_ms > BRK_MAX_DURATION_MS)
		  : m->remaining_ms != 0)
		bad("remaining_ms out of range, or on a kind without it");
	if (m->kind == FLEET_FORCED ? (m->mode < BRK_MODE_NORMAL ||
				       m->mode > BRK_MODE_METRICS_ONLY)
				    : m->mode != 0)
		bad("mode out of range, or on a kind without it");
	if (m->kind == FLEET_PACE_CUT ? m->rate_milli < 1 : m->rate_milli != 0)
		bad("rate_milli out of range, or on a kind without it");
	if (m->sent_ms <= NOW ? m->lag_ms != NOW - m->sent_ms
			      : (m->lag_ms != 0 ||
				 m->sent_ms - NOW > FLEET_SKEW_MS))
		bad("lag_ms disagrees with sent_ms");
}

static void check_round_trip(const struct fleet_msg *m)
{
	char buf[FLEET_MSG_MAX + 1], why[128];
	struct fleet_msg again;
	int n, cause = -1;

	const struct fleet_keys *k = m->version == 2 ? &fuzz_key : NULL;

	n = fleet_msg_encode_keyed(m, k, buf, sizeof(buf));
	if (n == -ENOSPC && k)
		return; /* the tag made it longer than FLEET_MSG_MAX */
	if (n <= 0)
		bad("an accepted message does not encode");
	if (fleet_msg_decode_keyed(buf, (size_t)n, m->sent_ms, k, &again,
				   &cause, why, sizeof(why)) != 0)
		bad("an encoding does not decode");
	if (again.kind != m->kind || again.boot != m->boot || strcmp(again.host, m->host) ||
	    strcmp(again.name, m->name) || again.seq != m->seq ||
	    again.sent_ms != m->sent_ms ||
	    again.remaining_ms != m->remaining_ms || again.mode != m->mode ||
	    again.rate_milli != m->rate_milli || again.reason != m->reason ||
	    again.lag_ms != 0)
		bad("the round trip changed the message");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fleet_msg m;
	char why[160];
	char *copy = malloc(size ? size : 1);
	int rc, cause = -1;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	memset(&m, 0, sizeof(m));
	rc = fleet_msg_decode_keyed(copy, size, NOW, NULL, &m, &cause, why,
				    sizeof(why));
	{
		struct fleet_msg k;
		int kc = -1;

		memset(&k, 0, sizeof(k));
		if (fleet_msg_decode_keyed(copy, size, NOW, &fuzz_key, &k, &kc,
					   NULL, 0) == 0 && k.version != 2)
			bad("a keyed decoder accepted an unsigned message");
	}
	free(copy);
	if (rc == 0) {
		check_accepted(&m);
		check_round_trip(&m);
		return 0;
	}
	if (rc != -EINVAL)
		bad("neither 0 nor -EINVAL");
	if (cause != BRK_FLEET_DROP_MALFORMED &&
	    cause != BRK_FLEET_DROP_OVERSIZE &&
	    cause != BRK_FLEET_DROP_FUTURE && cause != BRK_FLEET_DROP_EXPIRED &&
	    cause != BRK_FLEET_DROP_AUTH)
		bad("a cause the decoder cannot give");
	if ((cause == BRK_FLEET_DROP_OVERSIZE) != (size > FLEET_MSG_MAX))
		bad("oversize is not exactly 'longer than FLEET_MSG_MAX'");
	if (!memchr(why, '\0', sizeof(why)))
		bad("reason not NUL-terminated");
	/* a refusal gives back the sender's host and name only if valid */
	if (!memchr(m.host, '\0', sizeof(m.host)) ||
	    !memchr(m.name, '\0', sizeof(m.name)))
		bad("refusal: host or name not NUL-terminated");
	if ((m.host[0] && brk_host_id_validate(m.host) != 0) ||
	    (m.name[0] && brk_name_validate(m.name) != 0))
		bad("refusal: gave back a host or name that does not validate");
	for (const char *p = why; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			bad("reason holds a non-printable byte");
	return 0;
}
