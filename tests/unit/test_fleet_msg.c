/*
 * test_fleet_msg.c - the fleet link's JSON v1 codec (daemon/fleet/fleet_msg.c):
 * every kind round-trips; every refusal has its cause (malformed,
 * oversize, future, expired) and a reason that repeats no input byte;
 * the size limit is exact; unknown and duplicate keys, deep nesting, NUL
 * bytes and non-UTF-8 are refused. Pure: the time is passed in.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fleet_msg.h"

#define NOW 1764600000000ULL

/* Decode exactly @len bytes copied to a buffer of that size (no NUL after
 * it: ASan sees a read past the end). */
static int dec(const char *s, size_t len, uint64_t now, struct fleet_msg *m,
	       int *cause, char *why, size_t cap)
{
	char *b = malloc(len ? len : 1);
	int rc;

	assert_non_null(b);
	memcpy(b, s, len);
	rc = fleet_msg_decode(b, len, now, m, cause, why, cap);
	free(b);
	return rc;
}

static struct fleet_msg base(int kind)
{
	struct fleet_msg m;

	memset(&m, 0, sizeof(m));
	m.kind = kind;
	strcpy(m.host, "web-1.eu_west");
	strcpy(m.name, "payments/api:v2");
	m.seq = 42;
	m.sent_ms = NOW - 250;
	switch (kind) {
	case FLEET_OPEN:
		m.remaining_ms = 30000;
		m.reason = BRK_EV_THRESHOLD;
		break;
	case FLEET_COOL_UNTIL:
		m.remaining_ms = BRK_MAX_DURATION_MS;
		m.reason = BRK_EV_COOL_UNTIL;
		break;
	case FLEET_FORCED:
		m.mode = BRK_MODE_FORCED_OPEN;
		break;
	case FLEET_PACE_CUT:
		m.rate_milli = 12345;
		m.reason = BRK_EV_PACE_CUT;
		break;
	default:
		break;
	}
	return m;
}

static void round_trip_one(const struct fleet_msg *in)
{
	char buf[FLEET_MSG_MAX + 1], why[128];
	struct fleet_msg out;
	int n, cause = -1;

	n = fleet_msg_encode(in, buf, sizeof(buf));
	if (n < 0)
		fprintf(stderr, "encode kind %d: %d\n", in->kind, n);
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	memset(&out, 0xa5, sizeof(out));
	assert_int_equal(dec(buf, (size_t)n, NOW, &out, &cause, why,
			     sizeof(why)), 0);
	assert_int_equal(out.kind, in->kind);
	assert_string_equal(out.host, in->host);
	assert_string_equal(out.name, in->name);
	assert_int_equal(out.seq, in->seq);
	assert_int_equal(out.sent_ms, in->sent_ms);
	assert_int_equal(out.reason, in->reason);
	assert_int_equal(out.lag_ms, NOW - in->sent_ms);
	if (in->kind == FLEET_OPEN || in->kind == FLEET_COOL_UNTIL)
		assert_int_equal(out.remaining_ms,
				 in->remaining_ms - out.lag_ms);
	else
		assert_int_equal(out.remaining_ms, 0);
	assert_int_equal(out.mode, in->kind == FLEET_FORCED ? in->mode : 0);
	assert_int_equal(out.rate_milli,
			 in->kind == FLEET_PACE_CUT ? in->rate_milli : 0);
}

static void round_trips_every_kind(void **state)
{
	int k, mode;

	(void)state;
	for (k = FLEET_OPEN; k <= FLEET_PACE_CUT; k++) {
		struct fleet_msg m = base(k);

		assert_non_null(fleet_kind_name(k));
		round_trip_one(&m);
		m.reason = 0;            /* reason is optional */
		round_trip_one(&m);
	}
	for (mode = BRK_MODE_NORMAL; mode <= BRK_MODE_METRICS_ONLY; mode++) {
		struct fleet_msg m = base(FLEET_FORCED);

		m.mode = mode;
		round_trip_one(&m);
	}
	{
		struct fleet_msg m = base(FLEET_OPEN);
		const int reasons[] = { BRK_EV_THRESHOLD, BRK_EV_FAILURE_RATE,
					BRK_EV_SLOW_RATE, BRK_EV_PROBE_FAILED,
					BRK_EV_RETRY_AFTER, BRK_EV_TRIP };

		for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
			m.reason = reasons[i];
			round_trip_one(&m);
		}
		m.remaining_ms = 1;      /* the smallest open */
		m.sent_ms = NOW;
		round_trip_one(&m);
		m.seq = (uint64_t)INT64_MAX; /* the largest seq */
		round_trip_one(&m);
	}
	assert_null(fleet_kind_name(0));
	assert_null(fleet_kind_name(7));
	assert_null(fleet_kind_name(-1));
}

static void encodes_the_documented_form(void **state)
{
	struct fleet_msg m = base(FLEET_OPEN);
	char buf[512];

	(void)state;
	strcpy(m.host, "web-1");
	strcpy(m.name, "payments");
	m.sent_ms = 1764600000000ULL;
	assert_true(fleet_msg_encode(&m, buf, sizeof(buf)) > 0);
	assert_string_equal(buf,
		"{\"v\":1,\"host\":\"web-1\",\"seq\":42,\"sent_ms\":1764600000000,"
		"\"kind\":\"open\",\"name\":\"payments\",\"remaining_ms\":30000,"
		"\"reason\":\"threshold\"}");
}

static void encode_refuses_what_decode_would(void **state)
{
	char buf[FLEET_MSG_MAX + 1];
	struct fleet_msg m;

	(void)state;
#define REFUSE(field_change) do { m = base(FLEET_OPEN); field_change; \
	assert_int_equal(fleet_msg_encode(&m, buf, sizeof(buf)), -EINVAL); } while (0)
	REFUSE(m.kind = 0);
	REFUSE(m.kind = 7);
	REFUSE(m.host[0] = '\0');
	REFUSE(strcpy(m.host, "web 1"));
	REFUSE(strcpy(m.host, "web/1"));
	REFUSE(m.name[0] = '\0');
	REFUSE(strcpy(m.name, "a//b"));
	REFUSE(m.seq = 0);
	REFUSE(m.seq = (uint64_t)INT64_MAX + 1);
	REFUSE(m.sent_ms = 0);
	REFUSE(m.remaining_ms = 0);
	REFUSE(m.remaining_ms = BRK_MAX_DURATION_MS + 1);
	REFUSE(m.reason = 99);
	REFUSE(m.reason = -1);
	REFUSE(m.kind = FLEET_FORCED; m.mode = 4);
	REFUSE(m.kind = FLEET_FORCED; m.mode = -1);
	REFUSE(m.kind = FLEET_PACE_CUT; m.rate_milli = 0);
	REFUSE(m.kind = FLEET_PACE_CUT; m.rate_milli = 1000000000001ULL);
#undef REFUSE
	m = base(FLEET_OPEN);
	assert_int_equal(fleet_msg_encode(&m, buf, 20), -ENOSPC);
	assert_int_equal(fleet_msg_encode(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(fleet_msg_encode(&m, NULL, sizeof(buf)), -EINVAL);
	{
		int n = fleet_msg_encode(&m, buf, sizeof(buf));

		assert_true(n > 0);
		/* exactly n + 1 bytes is enough, n is not */
		assert_int_equal(fleet_msg_encode(&m, buf, (size_t)n + 1), n);
		assert_int_equal(fleet_msg_encode(&m, buf, (size_t)n), -ENOSPC);
	}
}

struct refusal {
	const char *json;
	int cause;
	const char *why; /* a substring of the reason */
};

#define HDR "\"v\":1,\"host\":\"h1\",\"seq\":1,\"sent_ms\":1764600000000,"
#define OPEN HDR "\"kind\":\"open\",\"name\":\"n\","

static void check_refusals(const struct refusal *t, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct fleet_msg m;
		char why[160] = "untouched";
		int cause = -1, rc;

		memset(&m, 0x5a, sizeof(m));
		rc = dec(t[i].json, strlen(t[i].json), NOW, &m, &cause, why,
			 sizeof(why));
		if (rc != -EINVAL || cause != t[i].cause ||
		    !strstr(why, t[i].why))
			fprintf(stderr, "%zu: %s\n  rc %d cause %d why \"%s\", "
				"want cause %d why \"%s\"\n", i, t[i].json, rc,
				cause, why, t[i].cause, t[i].why);
		assert_int_equal(rc, -EINVAL);
		assert_int_equal(cause, t[i].cause);
		assert_non_null(strstr(why, t[i].why));
		/* the reason is printable ASCII: no input byte is echoed */
		for (const char *p = why; *p; p++)
			assert_true(*p >= 0x20 && *p < 0x7f);
		/* nothing but host and name written to @out on a refusal */
		assert_int_equal(m.kind, 0x5a5a5a5a);
	}
}

static void refuses_each_cause_with_a_reason(void **state)
{
	const struct refusal t[] = {
		{ "", BRK_FLEET_DROP_MALFORMED, "empty" },
		{ "   ", BRK_FLEET_DROP_MALFORMED, "" },
		{ "not json", BRK_FLEET_DROP_MALFORMED, "not JSON" },
		{ "{", BRK_FLEET_DROP_MALFORMED, "" },
		{ "[1,2]", BRK_FLEET_DROP_MALFORMED, "not an object" },
		{ "\"open\"", BRK_FLEET_DROP_MALFORMED, "" },
		{ "42", BRK_FLEET_DROP_MALFORMED, "" },
		{ "null", BRK_FLEET_DROP_MALFORMED, "" },
		{ "{}", BRK_FLEET_DROP_MALFORMED, "v: missing" },
		{ "{" OPEN "\"remaining_ms\":10}x", BRK_FLEET_DROP_MALFORMED,
		  "bytes after the object" },
		{ "{" OPEN "\"remaining_ms\":10}{}", BRK_FLEET_DROP_MALFORMED,
		  "bytes after the object" },
		/* version */
		{ "{\"v\":2,\"host\":\"h1\",\"seq\":1,\"sent_ms\":1764600000000,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "v: version 2" },
		{ "{\"v\":\"1\",\"host\":\"h1\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "v: not an integer" },
		{ "{\"v\":1.0,\"host\":\"h1\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "v: not an integer" },
		/* unknown and duplicate keys */
		{ "{" OPEN "\"remaining_ms\":10,\"extra\":1}",
		  BRK_FLEET_DROP_MALFORMED, "unknown key" },
		{ "{" OPEN "\"remaining_ms\":10,\"Name\":\"n\"}",
		  BRK_FLEET_DROP_MALFORMED, "unknown key" },
		{ "{" OPEN "\"remaining_ms\":10,\"remaining_ms\":20}",
		  BRK_FLEET_DROP_MALFORMED, "duplicate key" },
		{ "{" OPEN "\"name\":\"m\",\"remaining_ms\":10}",
		  BRK_FLEET_DROP_MALFORMED, "duplicate key" },
		/* kind */
		{ "{" HDR "\"kind\":\"opened\",\"name\":\"n\"}",
		  BRK_FLEET_DROP_MALFORMED, "kind: unknown" },
		{ "{" HDR "\"kind\":1,\"name\":\"n\"}",
		  BRK_FLEET_DROP_MALFORMED, "kind: not a string" },
		{ "{" HDR "\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "kind: missing" },
		/* host */
		{ "{\"v\":1,\"host\":\"web 1\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "host: bad character" },
		{ "{\"v\":1,\"host\":\"\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "host: bad character or empty" },
		{ "{\"v\":1,\"host\":\"a/b\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "host: bad character" },
		{ "{\"v\":1,\"host\":\"h\\u00e9\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "host: bad character" },
		{ "{\"v\":1,\"host\":"
		  "\"hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh\""
		  ",\"seq\":1,\"sent_ms\":1,\"kind\":\"reset\",\"name\":\"n\"}",
		  BRK_FLEET_DROP_MALFORMED, "host: too long" },
		{ "{\"v\":1,\"host\":null,\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "host: not a string" },
		/* name */
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"a b\"}",
		  BRK_FLEET_DROP_MALFORMED, "name: bad character" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"/a\"}",
		  BRK_FLEET_DROP_MALFORMED, "name: bad character or malformed" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"\"}",
		  BRK_FLEET_DROP_MALFORMED, "name: bad character" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":"
		  "\"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\"}",
		  BRK_FLEET_DROP_MALFORMED, "name: too long" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":[\"n\"]}",
		  BRK_FLEET_DROP_MALFORMED, "name: not a string" },
		{ "{" HDR "\"kind\":\"reset\"}", BRK_FLEET_DROP_MALFORMED,
		  "name: missing" },
		/* integer types and ranges */
		{ "{\"v\":1,\"host\":\"h1\",\"seq\":0,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "seq: out of range" },
		{ "{\"v\":1,\"host\":\"h1\",\"seq\":-1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "seq: out of range" },
		{ "{\"v\":1,\"host\":\"h1\",\"seq\":1e3,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "seq: not an integer" },
		{ "{\"v\":1,\"host\":\"h1\",\"seq\":99999999999999999999,"
		  "\"sent_ms\":1,\"kind\":\"reset\",\"name\":\"n\"}",
		  BRK_FLEET_DROP_MALFORMED, "a number out of range" },
		{ "{\"v\":1,\"host\":\"h1\",\"seq\":1,\"sent_ms\":0,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "sent_ms: out of range" },
		{ "{\"v\":1,\"host\":\"h1\",\"seq\":1,\"sent_ms\":true,"
		  "\"kind\":\"reset\",\"name\":\"n\"}", BRK_FLEET_DROP_MALFORMED,
		  "sent_ms: not an integer" },
		{ "{" OPEN "\"remaining_ms\":0}", BRK_FLEET_DROP_MALFORMED,
		  "remaining_ms: out of range" },
		{ "{" OPEN "\"remaining_ms\":274877906944}",
		  BRK_FLEET_DROP_MALFORMED, "remaining_ms: out of range" },
		{ "{" OPEN "\"remaining_ms\":\"30s\"}", BRK_FLEET_DROP_MALFORMED,
		  "remaining_ms: not an integer" },
		/* kind-specific fields */
		{ "{" OPEN "\"reason\":\"threshold\"}", BRK_FLEET_DROP_MALFORMED,
		  "remaining_ms: missing" },
		{ "{" HDR "\"kind\":\"cool_until\",\"name\":\"n\"}",
		  BRK_FLEET_DROP_MALFORMED, "remaining_ms: missing" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"n\",\"remaining_ms\":5}",
		  BRK_FLEET_DROP_MALFORMED, "remaining_ms: not a field of reset" },
		{ "{" OPEN "\"remaining_ms\":10,\"mode\":\"normal\"}",
		  BRK_FLEET_DROP_MALFORMED, "mode: not a field of open" },
		{ "{" OPEN "\"remaining_ms\":10,\"rate_milli\":5}",
		  BRK_FLEET_DROP_MALFORMED, "rate_milli: not a field of open" },
		{ "{" HDR "\"kind\":\"forced\",\"name\":\"n\"}",
		  BRK_FLEET_DROP_MALFORMED, "mode: missing" },
		{ "{" HDR "\"kind\":\"forced\",\"name\":\"n\",\"mode\":\"off\"}",
		  BRK_FLEET_DROP_MALFORMED, "mode: unknown" },
		{ "{" HDR "\"kind\":\"forced\",\"name\":\"n\",\"mode\":1}",
		  BRK_FLEET_DROP_MALFORMED, "mode: not a string" },
		{ "{" HDR "\"kind\":\"pace_cut\",\"name\":\"n\"}",
		  BRK_FLEET_DROP_MALFORMED, "rate_milli: missing" },
		{ "{" HDR "\"kind\":\"pace_cut\",\"name\":\"n\",\"rate_milli\":0}",
		  BRK_FLEET_DROP_MALFORMED, "rate_milli: out of range" },
		{ "{" HDR "\"kind\":\"pace_cut\",\"name\":\"n\","
		  "\"rate_milli\":1000000000001}",
		  BRK_FLEET_DROP_MALFORMED, "rate_milli: out of range" },
		{ "{" HDR "\"kind\":\"pace_cut\",\"name\":\"n\",\"rate_milli\":5,"
		  "\"remaining_ms\":5}", BRK_FLEET_DROP_MALFORMED,
		  "remaining_ms: not a field of pace_cut" },
		{ "{" OPEN "\"remaining_ms\":10,\"reason\":\"because\"}",
		  BRK_FLEET_DROP_MALFORMED, "reason: unknown" },
		{ "{" OPEN "\"remaining_ms\":10,\"reason\":\"unknown\"}",
		  BRK_FLEET_DROP_MALFORMED, "reason: unknown" },
		{ "{" OPEN "\"remaining_ms\":10,\"reason\":6}",
		  BRK_FLEET_DROP_MALFORMED, "reason: not a string" },
	};

	(void)state;
	check_refusals(t, sizeof t / sizeof t[0]);
}

static void refuses_nul_bytes_and_bad_utf8(void **state)
{
	/* sized by hand: they hold NUL bytes */
	static const char raw_nul_in_name[] =
		"{" HDR "\"kind\":\"reset\",\"name\":\"a\0b\"}";
	static const char nul_after[] =
		"{" HDR "\"kind\":\"reset\",\"name\":\"n\"}\0";
	static const char nul_in_key[] =
		"{" HDR "\"kind\":\"reset\",\"name\":\"n\",\"na\0me\":1}";
	const struct { const char *s; size_t n; const char *why; } raw[] = {
		{ raw_nul_in_name, sizeof raw_nul_in_name - 1, "" },
		{ nul_after, sizeof nul_after - 1, "" },
		{ nul_in_key, sizeof nul_in_key - 1, "" },
	};
	const struct refusal t[] = {
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"a\\u0000b\"}",
		  BRK_FLEET_DROP_MALFORMED, "a NUL character" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"n\",\"\\u0000\":1}",
		  BRK_FLEET_DROP_MALFORMED, "" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"\xff\"}",
		  BRK_FLEET_DROP_MALFORMED, "not UTF-8" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"\xc0\x80\"}",
		  BRK_FLEET_DROP_MALFORMED, "not UTF-8" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"\xed\xa0\x80\"}",
		  BRK_FLEET_DROP_MALFORMED, "not UTF-8" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"n\",\"\xe9t\xe9\":1}",
		  BRK_FLEET_DROP_MALFORMED, "not UTF-8" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"\\ud800\"}",
		  BRK_FLEET_DROP_MALFORMED, "" },
		{ "{" HDR "\"kind\":\"reset\",\"name\":\"a\nb\"}",
		  BRK_FLEET_DROP_MALFORMED, "" },
		{ "\xef\xbb\xbf{" HDR "\"kind\":\"reset\",\"name\":\"n\"}",
		  BRK_FLEET_DROP_MALFORMED, "" },
	};

	(void)state;
	check_refusals(t, sizeof t / sizeof t[0]);
	for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
		struct fleet_msg m;
		char why[128];
		int cause = -1;

		assert_int_equal(dec(raw[i].s, raw[i].n, NOW, &m, &cause, why,
				     sizeof(why)), -EINVAL);
		assert_int_equal(cause, BRK_FLEET_DROP_MALFORMED);
	}
}

/* A valid reset message padded with spaces to exactly @len bytes. */
static char *padded(size_t len)
{
	const char *core = "{" HDR "\"kind\":\"reset\",\"name\":\"n\"}";
	size_t c = strlen(core);
	char *b = malloc(len + 1);

	assert_non_null(b);
	assert_true(len >= c);
	memset(b, ' ', len);
	memcpy(b, core, c - 1);
	b[len - 1] = '}';
	b[len] = '\0';
	return b;
}

static void size_limit_is_exact_and_checked_first(void **state)
{
	struct fleet_msg m;
	char why[128];
	int cause = -1;
	char *b;

	(void)state;
	b = padded(FLEET_MSG_MAX);
	assert_int_equal(dec(b, FLEET_MSG_MAX, NOW, &m, &cause, why,
			     sizeof(why)), 0);
	assert_int_equal(m.kind, FLEET_RESET);
	free(b);
	b = padded(FLEET_MSG_MAX + 1);
	assert_int_equal(dec(b, FLEET_MSG_MAX + 1, NOW, &m, &cause, why,
			     sizeof(why)), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_OVERSIZE);
	assert_non_null(strstr(why, "more than 1024"));
	free(b);
	/* the length is checked before any byte is read: a huge length
	 * over a small buffer is refused without touching it */
	assert_int_equal(fleet_msg_decode("{", SIZE_MAX, NOW, &m, &cause,
					  why, sizeof(why)), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_OVERSIZE);
	/* an encoded message fits the limit: the longest name and host */
	{
		struct fleet_msg big = base(FLEET_PACE_CUT);
		char buf[FLEET_MSG_MAX + 1];
		int n;

		memset(big.host, 'h', BRK_HOST_ID_MAX);
		big.host[BRK_HOST_ID_MAX] = '\0';
		memset(big.name, 'n', BRK_NAME_MAX);
		big.name[BRK_NAME_MAX] = '\0';
		big.seq = (uint64_t)INT64_MAX;
		big.sent_ms = NOW;
		big.rate_milli = 1000000000000ULL; /* BRK_BUCKET_MAX_RATE */
		n = fleet_msg_encode(&big, buf, sizeof(buf));
		assert_true(n > 0 && n < 512);
		round_trip_one(&big);
	}
	/* a decode with no why buffer still refuses */
	assert_int_equal(fleet_msg_decode("x", 1, NOW, &m, &cause, NULL, 0),
			 -EINVAL);
	assert_int_equal(fleet_msg_decode("x", 1, NOW, NULL, &cause, NULL, 0),
			 -EINVAL);
	assert_int_equal(fleet_msg_decode("x", 1, NOW, &m, NULL, NULL, 0),
			 -EINVAL);
	/* a short why buffer is cut, NUL-terminated */
	why[0] = 'x';
	assert_int_equal(fleet_msg_decode("[]", 2, NOW, &m, &cause, why, 4),
			 -EINVAL);
	assert_string_equal(why, "not");
}

static void deep_nesting_is_refused(void **state)
{
	char buf[FLEET_MSG_MAX + 1];
	struct fleet_msg m;
	char why[128];
	int cause = -1;
	size_t d, n;

	(void)state;
	/* as deep as fits: {"name":[[[[...]]]]} */
	n = (size_t)sprintf(buf, "{\"name\":");
	d = (FLEET_MSG_MAX - n - 1) / 2;
	memset(buf + n, '[', d);
	memset(buf + n + d, ']', d);
	n += 2 * d;
	buf[n++] = '}';
	assert_true(n <= FLEET_MSG_MAX);
	assert_int_equal(dec(buf, n, NOW, &m, &cause, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_MALFORMED);
	/* nested objects, a value inside a known key */
	n = 0;
	for (d = 0; n + 8 < FLEET_MSG_MAX / 2; d++)
		n += (size_t)sprintf(buf + n, "{\"v\":");
	buf[n++] = '1';
	while (d--)
		buf[n++] = '}';
	assert_true(n <= FLEET_MSG_MAX);
	assert_int_equal(dec(buf, n, NOW, &m, &cause, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_MALFORMED);
	assert_non_null(strstr(why, "v: not an integer"));
	/* unbalanced: deeper than the limit allows to close */
	memset(buf, '[', FLEET_MSG_MAX);
	assert_int_equal(dec(buf, FLEET_MSG_MAX, NOW, &m, &cause, why,
			     sizeof(why)), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_MALFORMED);
	assert_int_equal(dec(buf, FLEET_MSG_MAX + 1, NOW, &m, &cause, why,
			     sizeof(why)) == -EINVAL &&
			 cause == BRK_FLEET_DROP_OVERSIZE, 1);
}

static int dec_at(const struct fleet_msg *in, uint64_t now,
		  struct fleet_msg *out, int *cause)
{
	char buf[FLEET_MSG_MAX + 1], why[128];
	int n = fleet_msg_encode(in, buf, sizeof(buf));

	assert_true(n > 0);
	return dec(buf, (size_t)n, now, out, cause, why, sizeof(why));
}

static void future_beyond_the_skew_is_refused(void **state)
{
	struct fleet_msg in = base(FLEET_OPEN), out;
	int cause = -1;

	(void)state;
	in.sent_ms = NOW + FLEET_SKEW_MS;          /* at the skew: taken */
	assert_int_equal(dec_at(&in, NOW, &out, &cause), 0);
	assert_int_equal(out.lag_ms, 0);
	assert_int_equal(out.remaining_ms, in.remaining_ms);
	in.sent_ms = NOW + FLEET_SKEW_MS + 1;      /* beyond */
	assert_int_equal(dec_at(&in, NOW, &out, &cause), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_FUTURE);
	in.sent_ms = (uint64_t)INT64_MAX;          /* far future */
	assert_int_equal(dec_at(&in, NOW, &out, &cause), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_FUTURE);
	/* every kind, not only the timed ones */
	in = base(FLEET_RESET);
	in.sent_ms = NOW + 3600000;
	assert_int_equal(dec_at(&in, NOW, &out, &cause), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_FUTURE);
	/* a receiver whose clock reads 0 (or far behind) */
	in.sent_ms = FLEET_SKEW_MS + 1;
	assert_int_equal(dec_at(&in, 0, &out, &cause), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_FUTURE);
}

static void expired_in_transit_is_refused(void **state)
{
	struct fleet_msg in = base(FLEET_OPEN), out;
	int cause = -1;

	(void)state;
	in.remaining_ms = 1000;
	in.sent_ms = NOW - 999;                   /* 1 ms left */
	assert_int_equal(dec_at(&in, NOW, &out, &cause), 0);
	assert_int_equal(out.lag_ms, 999);
	assert_int_equal(out.remaining_ms, 1);
	in.sent_ms = NOW - 1000;                  /* none left */
	assert_int_equal(dec_at(&in, NOW, &out, &cause), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_EXPIRED);
	in.kind = FLEET_COOL_UNTIL;
	in.sent_ms = 1;                           /* very old */
	assert_int_equal(dec_at(&in, NOW, &out, &cause), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_EXPIRED);
	/* kinds without a period do not expire: lag is reported */
	in = base(FLEET_FORCED);
	in.sent_ms = 1;
	assert_int_equal(dec_at(&in, NOW, &out, &cause), 0);
	assert_int_equal(out.lag_ms, NOW - 1);
}

/* A refused message still gives back the host and the name that
 * validated, so the refusal's log line can say who sent it. */
static void refusal_names_the_sender_it_could_validate(void **state)
{
	const struct {
		const char *json;
		int cause;
		const char *host, *name;
	} t[] = {
		{ "{\"v\":1,\"host\":\"web-2\",\"seq\":1,\"sent_ms\":1764600060000,"
		  "\"kind\":\"open\",\"name\":\"pay\",\"remaining_ms\":1000}",
		  BRK_FLEET_DROP_FUTURE, "web-2", "pay" },
		{ "{\"v\":1,\"host\":\"web-2\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"open\",\"name\":\"pay\",\"remaining_ms\":10}",
		  BRK_FLEET_DROP_EXPIRED, "web-2", "pay" },
		{ "{\"v\":1,\"host\":\"web-2\",\"seq\":0,\"sent_ms\":1,"
		  "\"kind\":\"open\",\"name\":\"pay\",\"remaining_ms\":10}",
		  BRK_FLEET_DROP_MALFORMED, "web-2", "pay" },
		{ "{\"v\":1,\"host\":\"web-2\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"nope\",\"name\":\"pay\",\"pad\":1}",
		  BRK_FLEET_DROP_MALFORMED, "web-2", "pay" },
		{ "{\"v\":1,\"host\":\"web 2\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":\"pay\"}",
		  BRK_FLEET_DROP_MALFORMED, "", "pay" },
		{ "{\"v\":1,\"host\":\"web-2\",\"seq\":1,\"sent_ms\":1,"
		  "\"kind\":\"reset\",\"name\":7}",
		  BRK_FLEET_DROP_MALFORMED, "web-2", "" },
		{ "[\"web-2\"]", BRK_FLEET_DROP_MALFORMED, "", "" },
		{ "not json", BRK_FLEET_DROP_MALFORMED, "", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct fleet_msg m;
		char why[160];
		int cause = -1;

		memset(&m, 0x5a, sizeof(m));
		assert_int_equal(dec(t[i].json, strlen(t[i].json), NOW, &m,
				     &cause, why, sizeof(why)), -EINVAL);
		assert_int_equal(cause, t[i].cause);
		if (strcmp(m.host, t[i].host) || strcmp(m.name, t[i].name))
			fprintf(stderr, "%zu: host '%.70s' name '%.70s'\n", i,
				m.host, m.name);
		assert_string_equal(m.host, t[i].host);
		assert_string_equal(m.name, t[i].name);
		assert_int_equal(m.kind, 0x5a5a5a5a); /* nothing else */
	}
}

static const struct fleet_keys key1 = {
	.n = 1, .len = { 30 }, .key = { "fleet-key-one-0123456789abcdef" },
};
static const struct fleet_keys key2 = {
	.n = 1, .len = { 30 }, .key = { "fleet-key-two-0123456789abcdef" },
};
/* a rotation: the new key signs, the old one is still accepted */
static const struct fleet_keys key21 = {
	.n = 2, .len = { 30, 30 },
	.key = { "fleet-key-two-0123456789abcdef",
		 "fleet-key-one-0123456789abcdef" },
};

static int sign(const struct fleet_keys *k, struct fleet_msg *m, char *buf,
		size_t cap)
{
	m->boot = NOW - 60000;
	if (m->kind == FLEET_FORCED)
		m->remaining_ms = 60000;
	return fleet_msg_encode_keyed(m, k, buf, cap);
}

static void signed_v2_round_trips_and_wrong_key_is_auth(void **state)
{
	char buf[FLEET_MSG_MAX + 1], why[128];
	struct fleet_msg m = base(FLEET_FORCED), out;
	int n, cause;

	(void)state;
	n = sign(&key1, &m, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "{\"v\":2,\"host\":\"web-1.eu_west\",\"boot\":"));
	assert_non_null(strstr(buf, "\"remaining_ms\":60000,\"mode\":\"forced_open\",\"tag\":\""));
	assert_int_equal(fleet_msg_decode_keyed(buf, (size_t)n, NOW, &key1, &out,
						&cause, why, sizeof(why)), 0);
	assert_int_equal(out.version, 2);
	assert_int_equal(out.boot, NOW - 60000);
	assert_int_equal(out.mode, BRK_MODE_FORCED_OPEN);
	assert_int_equal(out.remaining_ms, 60000 - 250); /* minus the lag */
	/* the rotation's two keys accept it; the other key alone does not */
	assert_int_equal(fleet_msg_decode_keyed(buf, (size_t)n, NOW, &key21,
						&out, &cause, why, sizeof(why)), 0);
	assert_int_equal(fleet_msg_decode_keyed(buf, (size_t)n, NOW, &key2, &out,
						&cause, why, sizeof(why)), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_AUTH);
	assert_non_null(strstr(why, "tag: wrong"));
	/* one byte changed in the signed text */
	buf[strstr(buf, "forced_open") - buf] = 'F';
	assert_int_equal(fleet_msg_decode_keyed(buf, (size_t)n, NOW, &key1, &out,
						&cause, why, sizeof(why)), -EINVAL);
	assert_true(cause == BRK_FLEET_DROP_AUTH || cause == BRK_FLEET_DROP_MALFORMED);
	/* a v1 decoder (an old breakerd) refuses v2: malformed */
	n = sign(&key1, &m, buf, sizeof(buf));
	assert_int_equal(fleet_msg_decode(buf, (size_t)n, NOW, &out, &cause, why,
					  sizeof(why)), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_MALFORMED);
	assert_non_null(strstr(why, "v: version 2, not 1"));
	/* without a key: read unchecked (nothing to check with) */
	assert_int_equal(fleet_msg_decode_keyed(buf, (size_t)n, NOW, NULL, &out,
						&cause, why, sizeof(why)), 0);
}

static void a_keyed_decoder_refuses_unsigned_and_misplaced_tags(void **state)
{
	char buf[FLEET_MSG_MAX + 1], why[128], moved[FLEET_MSG_MAX + 1];
	struct fleet_msg m = base(FLEET_OPEN), out;
	int n, cause;
	char *tag;

	(void)state;
	n = fleet_msg_encode(&m, buf, sizeof(buf)); /* v1 */
	assert_int_equal(fleet_msg_decode_keyed(buf, (size_t)n, NOW, &key1, &out,
						&cause, why, sizeof(why)), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_AUTH);
	assert_non_null(strstr(why, "unsigned (version 1)"));
	/* the tag member moved to the front: refused */
	n = sign(&key1, &m, buf, sizeof(buf));
	tag = strstr(buf, ",\"tag\":");
	assert_non_null(tag);
	snprintf(moved, sizeof(moved), "{%.*s,%.*s}", (int)(strlen(tag) - 2),
		 tag + 1, (int)(tag - buf - 1), buf + 1);
	assert_int_equal(fleet_msg_decode_keyed(moved, strlen(moved), NOW, &key1,
						&out, &cause, why, sizeof(why)), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_AUTH);
	assert_non_null(strstr(why, "not the last member"));
	/* v2 without a tag */
	buf[tag - buf] = '}';
	assert_int_equal(fleet_msg_decode_keyed(buf, (size_t)(tag - buf) + 1, NOW,
						&key1, &out, &cause, why,
						sizeof(why)), -EINVAL);
	assert_int_equal(cause, BRK_FLEET_DROP_AUTH);
	assert_non_null(strstr(why, "no tag"));
	/* v2 without boot: malformed */
	m.boot = 0;
	assert_int_equal(fleet_msg_encode_keyed(&m, &key1, buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refusal_names_the_sender_it_could_validate),
		cmocka_unit_test(round_trips_every_kind),
		cmocka_unit_test(encodes_the_documented_form),
		cmocka_unit_test(encode_refuses_what_decode_would),
		cmocka_unit_test(refuses_each_cause_with_a_reason),
		cmocka_unit_test(refuses_nul_bytes_and_bad_utf8),
		cmocka_unit_test(size_limit_is_exact_and_checked_first),
		cmocka_unit_test(deep_nesting_is_refused),
		cmocka_unit_test(future_beyond_the_skew_is_refused),
		cmocka_unit_test(expired_in_transit_is_refused),
		cmocka_unit_test(signed_v2_round_trips_and_wrong_key_is_auth),
		cmocka_unit_test(a_keyed_decoder_refuses_unsigned_and_misplaced_tags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
