/*
 * fleet_msg.c - the fleet link's JSON v1 wire codec (fleet_msg.h), with
 * jansson. Every byte decoded comes from the network: the length is
 * checked before jansson sees it, jansson refuses what is not strict JSON
 * (bad UTF-8, NUL bytes, \u0000, duplicate keys, trailing bytes), and
 * this file refuses every key, type and value the format does not name.
 * No I/O, no clock: the caller passes the time. Version 2's tag is
 * HMAC-SHA256 from libcrypto (OpenSSL), compared in constant time.
 */
#include "fleet_msg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

/* ,"tag":"<64 hex>"} : the signed text is the message without it, + } */
#define TAG_OPEN ",\"tag\":\""
#define TAG_OPEN_LEN 8u
#define TAG_SUFFIX_LEN (TAG_OPEN_LEN + FLEET_TAG_HEX + 2u)

/* The largest pace rate (milli tokens/s): BRK_BUCKET_MAX_RATE tokens/s. */
#define FLEET_RATE_MILLI_MAX ((uint64_t)(BRK_BUCKET_MAX_RATE * 1000.0))
/* seq and sent_ms: jansson's integers are signed 64-bit. */
#define FLEET_INT_MAX ((uint64_t)INT64_MAX)

static const char *const kind_names[] = {
	[FLEET_OPEN] = "open",
	[FLEET_COOL_UNTIL] = "cool_until",
	[FLEET_FORCED] = "forced",
	[FLEET_RESET] = "reset",
	[FLEET_CLOSE] = "close",
	[FLEET_PACE_CUT] = "pace_cut",
};
#define KIND_COUNT (sizeof(kind_names) / sizeof(kind_names[0]))

const char *fleet_kind_name(int kind)
{
	if (kind < FLEET_OPEN || (size_t)kind >= KIND_COUNT)
		return NULL;
	return kind_names[kind];
}

static int kind_parse(const char *s)
{
	size_t k;

	for (k = FLEET_OPEN; k < KIND_COUNT; k++)
		if (strcmp(s, kind_names[k]) == 0)
			return (int)k;
	return 0;
}

/* The fields each kind carries besides the common ones. */
static int kind_has_remaining(int kind)
{
	return kind == FLEET_OPEN || kind == FLEET_COOL_UNTIL;
}

static int mode_parse(const char *s)
{
	int m;

	for (m = BRK_MODE_NORMAL; m <= BRK_MODE_METRICS_ONLY; m++)
		if (strcmp(s, brk_mode_name(m)) == 0)
			return m;
	return -1;
}

static int mode_ok(int m)
{
	return m >= BRK_MODE_NORMAL && m <= BRK_MODE_METRICS_ONLY;
}

/* The event reasons a sender may name: every one brk_event_reason_name()
 * knows (it answers "unknown" for the others). */
#define REASON_SCAN_MAX 64
static int reason_ok(int r)
{
	return r >= 1 && r < REASON_SCAN_MAX &&
	       strcmp(brk_event_reason_name(r), "unknown") != 0;
}

static int reason_parse(const char *s)
{
	int r;

	for (r = 1; r < REASON_SCAN_MAX; r++)
		if (reason_ok(r) && strcmp(s, brk_event_reason_name(r)) == 0)
			return r;
	return 0;
}

static int why_set(char *why, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int why_set(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (why && cap) {
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---------------------------------------------------------------------- */
/* encode                                                                   */

static int msg_valid(const struct fleet_msg *m, int version)
{
	if (version == FLEET_MSG_VERSION_SIGNED &&
	    (m->boot < 1 || m->boot > FLEET_INT_MAX))
		return 0;
	if (!fleet_kind_name(m->kind))
		return 0;
	if (brk_host_id_validate(m->host) != 0 || brk_name_validate(m->name) != 0)
		return 0;
	if (m->seq < 1 || m->seq > FLEET_INT_MAX ||
	    m->sent_ms < 1 || m->sent_ms > FLEET_INT_MAX)
		return 0;
	if (m->reason != 0 && !reason_ok(m->reason))
		return 0;
	switch (m->kind) {
	case FLEET_OPEN:
	case FLEET_COOL_UNTIL:
		return m->remaining_ms >= 1 &&
		       m->remaining_ms <= BRK_MAX_DURATION_MS;
	case FLEET_FORCED:
		if (version == FLEET_MSG_VERSION_SIGNED &&
		    (m->remaining_ms < 1 ||
		     m->remaining_ms > BRK_MAX_DURATION_MS))
			return 0;
		return mode_ok(m->mode);
	case FLEET_PACE_CUT:
		return m->rate_milli >= 1 &&
		       m->rate_milli <= FLEET_RATE_MILLI_MAX;
	default:
		return 1;
	}
}

/* Whether @kind carries remaining_ms in @version. */
static int has_remaining(int kind, int version)
{
	return kind_has_remaining(kind) ||
	       (kind == FLEET_FORCED && version == FLEET_MSG_VERSION_SIGNED);
}

static void hexify(const unsigned char *b, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hx[b[i] >> 4];
		out[2 * i + 1] = hx[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* HMAC-SHA256(@key, @text[0..@len) then "}") in hex into @hex (65
 * bytes). 0 or -EIO. */
static int tag_of(const unsigned char *key, size_t klen, const char *text,
		  size_t len, char *hex)
{
	unsigned char mac[EVP_MAX_MD_SIZE], data[FLEET_MSG_MAX + 1];
	unsigned int mlen = 0;

	if (len + 1 > sizeof(data))
		return -EIO;
	memcpy(data, text, len);
	data[len] = '}';
	if (!HMAC(EVP_sha256(), key, (int)klen, data, len + 1, mac, &mlen) ||
	    mlen != FLEET_TAG_HEX / 2)
		return -EIO;
	hexify(mac, mlen, hex);
	return 0;
}

static int encode_v(const struct fleet_msg *m, int version, char *buf,
		    size_t cap)
{
	json_t *o;
	size_t n;
	int bad = 0;

	if (!m || !buf || !cap)
		return -EINVAL;
	if (!msg_valid(m, version))
		return -EINVAL;
	o = json_object();
	if (!o)
		return -ENOMEM;
	bad |= json_object_set_new(o, "v", json_integer(version));
	bad |= json_object_set_new(o, "host", json_string(m->host));
	if (version == FLEET_MSG_VERSION_SIGNED)
		bad |= json_object_set_new(o, "boot",
					   json_integer((json_int_t)m->boot));
	bad |= json_object_set_new(o, "seq", json_integer((json_int_t)m->seq));
	bad |= json_object_set_new(o, "sent_ms",
				   json_integer((json_int_t)m->sent_ms));
	bad |= json_object_set_new(o, "kind",
				   json_string(fleet_kind_name(m->kind)));
	bad |= json_object_set_new(o, "name", json_string(m->name));
	if (has_remaining(m->kind, version))
		bad |= json_object_set_new(o, "remaining_ms",
				json_integer((json_int_t)m->remaining_ms));
	if (m->kind == FLEET_FORCED)
		bad |= json_object_set_new(o, "mode",
					   json_string(brk_mode_name(m->mode)));
	if (m->kind == FLEET_PACE_CUT)
		bad |= json_object_set_new(o, "rate_milli",
				json_integer((json_int_t)m->rate_milli));
	if (m->reason)
		bad |= json_object_set_new(o, "reason",
				json_string(brk_event_reason_name(m->reason)));
	if (bad) {
		json_decref(o);
		return -ENOMEM;
	}
	n = json_dumpb(o, buf, cap, JSON_COMPACT);
	json_decref(o);
	if (n == 0)
		return -ENOMEM;
	if (n >= cap || n > FLEET_MSG_MAX)
		return -ENOSPC;
	buf[n] = '\0';
	return (int)n;
}

int fleet_msg_encode(const struct fleet_msg *m, char *buf, size_t cap)
{
	return encode_v(m, FLEET_MSG_VERSION, buf, cap);
}

int fleet_msg_encode_keyed(const struct fleet_msg *m,
			   const struct fleet_keys *keys, char *buf,
			   size_t cap)
{
	char hex[FLEET_TAG_HEX + 1];
	int n;

	if (!keys || keys->n == 0)
		return fleet_msg_encode(m, buf, cap);
	n = encode_v(m, FLEET_MSG_VERSION_SIGNED, buf, cap);
	if (n < 0)
		return n;
	if ((size_t)n - 1 + TAG_SUFFIX_LEN >= cap ||
	    (size_t)n - 1 + TAG_SUFFIX_LEN > FLEET_MSG_MAX)
		return -ENOSPC;
	if (tag_of(keys->key[0], keys->len[0], buf, (size_t)n - 1, hex))
		return -EIO;
	/* buf[n - 1] is the closing brace */
	snprintf(buf + n - 1, cap - (size_t)n + 1, TAG_OPEN "%s\"}", hex);
	return n - 1 + (int)TAG_SUFFIX_LEN;
}

/* ---------------------------------------------------------------------- */
/* decode                                                                   */

/* Why jansson refused the text, without echoing any of its bytes (they
 * go to the log). */
static const char *json_why(const json_error_t *e)
{
	switch (json_error_code(e)) {
	case json_error_invalid_utf8:
		return "not UTF-8";
	case json_error_null_character:
	case json_error_null_byte_in_key:
		return "a NUL character";
	case json_error_duplicate_key:
		return "a duplicate key";
	case json_error_premature_end_of_input:
		return "truncated";
	case json_error_end_of_input_expected:
		return "bytes after the object";
	case json_error_numeric_overflow:
		return "a number out of range";
	case json_error_invalid_syntax:
	case json_error_invalid_format:
	case json_error_wrong_type:
	default:
		return "not JSON";
	}
}

/* An integer field: a JSON integer (not a real, not a string) in
 * [lo, hi]. */
static int get_uint(json_t *o, const char *key, uint64_t lo, uint64_t hi,
		    uint64_t *out, char *why, size_t cap)
{
	json_t *v = json_object_get(o, key);
	json_int_t i;

	if (!v)
		return why_set(why, cap, "%s: missing", key);
	if (!json_is_integer(v))
		return why_set(why, cap, "%s: not an integer", key);
	i = json_integer_value(v);
	if (i < 0 || (uint64_t)i < lo || (uint64_t)i > hi)
		return why_set(why, cap, "%s: out of range", key);
	*out = (uint64_t)i;
	return 0;
}

static int get_str(json_t *o, const char *key, const char **out, char *why,
		   size_t cap)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return why_set(why, cap, "%s: missing", key);
	if (!json_is_string(v))
		return why_set(why, cap, "%s: not a string", key);
	/* jansson refuses \u0000 without JSON_ALLOW_NUL; be sure anyway */
	if (strlen(json_string_value(v)) != json_string_length(v))
		return why_set(why, cap, "%s: a NUL character", key);
	*out = json_string_value(v);
	return 0;
}

static const char *const known_keys[] = {
	"v", "host", "seq", "sent_ms", "kind", "name",
	"remaining_ms", "mode", "rate_milli", "reason",
	"boot", "tag", /* version 2 only */
};

static int key_known(const char *k, int v2)
{
	size_t i, n = sizeof(known_keys) / sizeof(known_keys[0]);

	for (i = 0; i < (v2 ? n : n - 2); i++)
		if (strcmp(k, known_keys[i]) == 0)
			return 1;
	return 0;
}

/* The fields of the JSON object @o into @m; -EINVAL with @why.
 * @v2: version 2 is read too (else only version 1). */
static int msg_fields(json_t *o, struct fleet_msg *m, int v2, char *why,
		      size_t cap)
{
	const char *key, *s;
	json_t *val;
	uint64_t u = 0; /* -O3 cannot see get_uint() sets it (release -Werror, issue 22) */
	int rc, r;

	if ((rc = get_uint(o, "v", 0, FLEET_INT_MAX, &u, why, cap)))
		return rc;
	if (u != FLEET_MSG_VERSION &&
	    !(v2 && u == FLEET_MSG_VERSION_SIGNED)) {
		if (v2)
			return why_set(why, cap, "v: version %llu, not %d or %d",
				       (unsigned long long)u, FLEET_MSG_VERSION,
				       FLEET_MSG_VERSION_SIGNED);
		return why_set(why, cap, "v: version %llu, not %d",
			       (unsigned long long)u, FLEET_MSG_VERSION);
	}
	m->version = (int)u;
	json_object_foreach(o, key, val) {
		(void)val;
		if (!key_known(key, m->version == FLEET_MSG_VERSION_SIGNED))
			return why_set(why, cap, "unknown key");
	}
	if (m->version == FLEET_MSG_VERSION_SIGNED &&
	    (rc = get_uint(o, "boot", 1, FLEET_INT_MAX, &m->boot, why, cap)))
		return rc;
	if ((rc = get_str(o, "kind", &s, why, cap)))
		return rc;
	m->kind = kind_parse(s);
	if (!m->kind)
		return why_set(why, cap, "kind: unknown");
	if ((rc = get_str(o, "host", &s, why, cap)))
		return rc;
	r = brk_host_id_validate(s);
	if (r == -ENAMETOOLONG)
		return why_set(why, cap, "host: too long");
	if (r)
		return why_set(why, cap, "host: bad character or empty");
	memcpy(m->host, s, strlen(s) + 1);
	if ((rc = get_str(o, "name", &s, why, cap)))
		return rc;
	r = brk_name_validate(s);
	if (r == -ENAMETOOLONG)
		return why_set(why, cap, "name: too long");
	if (r)
		return why_set(why, cap, "name: bad character or malformed");
	memcpy(m->name, s, strlen(s) + 1);
	if ((rc = get_uint(o, "seq", 1, FLEET_INT_MAX, &m->seq, why, cap)))
		return rc;
	if ((rc = get_uint(o, "sent_ms", 1, FLEET_INT_MAX, &m->sent_ms, why,
			   cap)))
		return rc;

	/* the kind's own fields, and no other kind's */
	if (has_remaining(m->kind, m->version)) {
		if ((rc = get_uint(o, "remaining_ms", 1, BRK_MAX_DURATION_MS,
				   &m->remaining_ms, why, cap)))
			return rc;
	} else if (json_object_get(o, "remaining_ms")) {
		return why_set(why, cap, "remaining_ms: not a field of %s",
			       fleet_kind_name(m->kind));
	}
	if (m->kind == FLEET_FORCED) {
		if ((rc = get_str(o, "mode", &s, why, cap)))
			return rc;
		m->mode = mode_parse(s);
		if (m->mode < 0)
			return why_set(why, cap, "mode: unknown");
	} else if (json_object_get(o, "mode")) {
		return why_set(why, cap, "mode: not a field of %s",
			       fleet_kind_name(m->kind));
	}
	if (m->kind == FLEET_PACE_CUT) {
		if ((rc = get_uint(o, "rate_milli", 1, FLEET_RATE_MILLI_MAX,
				   &m->rate_milli, why, cap)))
			return rc;
	} else if (json_object_get(o, "rate_milli")) {
		return why_set(why, cap, "rate_milli: not a field of %s",
			       fleet_kind_name(m->kind));
	}
	if (json_object_get(o, "reason")) {
		if ((rc = get_str(o, "reason", &s, why, cap)))
			return rc;
		m->reason = reason_parse(s);
		if (!m->reason)
			return why_set(why, cap, "reason: unknown");
	}
	return 0;
}

/* The "host" and "name" of @o into @m where they validate ("" where
 * not), so that a refusal can still say who sent what. */
static void sender_of(json_t *o, struct fleet_msg *m)
{
	json_t *h = json_object_get(o, "host"), *n = json_object_get(o, "name");

	if (json_is_string(h) &&
	    strlen(json_string_value(h)) == json_string_length(h) &&
	    brk_host_id_validate(json_string_value(h)) == 0)
		memcpy(m->host, json_string_value(h), json_string_length(h) + 1);
	if (json_is_string(n) &&
	    strlen(json_string_value(n)) == json_string_length(n) &&
	    brk_name_validate(json_string_value(n)) == 0)
		memcpy(m->name, json_string_value(n), json_string_length(n) + 1);
}

/* A refusal: @out gets the sender's host and name (if they validated),
 * nothing else. */
static int refused(struct fleet_msg *out, const struct fleet_msg *m, int rc)
{
	memcpy(out->host, m->host, sizeof(out->host));
	memcpy(out->name, m->name, sizeof(out->name));
	return rc;
}

/* The tag of a v2 message: its text must end in ,"tag":"<64 hex>"}
 * (the member jansson read as "tag", last), and with keys one of them
 * must give it. 0, or -EINVAL with cause AUTH and @why. */
static int tag_check(const char *buf, size_t len, json_t *o,
		     const struct fleet_keys *keys, char *why, size_t cap)
{
	json_t *t = json_object_get(o, "tag");
	char hex[FLEET_TAG_HEX + 1];
	const char *at;
	unsigned i;
	int good = 0;

	if (!t)
		return why_set(why, cap, "no tag");
	if (!json_is_string(t) || json_string_length(t) != FLEET_TAG_HEX)
		return why_set(why, cap, "tag: not %u hex digits", FLEET_TAG_HEX);
	if (len < TAG_SUFFIX_LEN + 1)
		return why_set(why, cap, "tag: not the last member");
	at = buf + len - TAG_SUFFIX_LEN;
	if (memcmp(at, TAG_OPEN, TAG_OPEN_LEN) != 0 ||
	    memcmp(at + TAG_OPEN_LEN, json_string_value(t), FLEET_TAG_HEX) ||
	    memcmp(at + TAG_OPEN_LEN + FLEET_TAG_HEX, "\"}", 2) != 0)
		return why_set(why, cap, "tag: not the last member");
	if (!keys || keys->n == 0)
		return 0; /* nothing to check with */
	for (i = 0; i < keys->n && i < FLEET_KEYS_MAX; i++) {
		if (tag_of(keys->key[i], keys->len[i], buf,
			   (size_t)(at - buf), hex))
			continue;
		good |= CRYPTO_memcmp(hex, json_string_value(t),
				      FLEET_TAG_HEX) == 0;
	}
	return good ? 0 : why_set(why, cap, "tag: wrong (no key gives it)");
}

static int decode(const char *buf, size_t len, uint64_t now_ms, int v2,
		  const struct fleet_keys *keys, struct fleet_msg *out,
		  int *cause, char *why, size_t why_cap);

int fleet_msg_decode(const char *buf, size_t len, uint64_t now_ms,
		     struct fleet_msg *out, int *cause, char *why,
		     size_t why_cap)
{
	return decode(buf, len, now_ms, 0, NULL, out, cause, why, why_cap);
}

int fleet_msg_decode_keyed(const char *buf, size_t len, uint64_t now_ms,
			   const struct fleet_keys *keys,
			   struct fleet_msg *out, int *cause, char *why,
			   size_t why_cap)
{
	return decode(buf, len, now_ms, 1, keys, out, cause, why, why_cap);
}

static int decode(const char *buf, size_t len, uint64_t now_ms, int v2,
		  const struct fleet_keys *keys, struct fleet_msg *out,
		  int *cause, char *why, size_t why_cap)
{
	struct fleet_msg m, who;
	json_error_t err;
	json_t *o;
	int rc;

	if (why && why_cap)
		why[0] = '\0';
	if (!out || !cause)
		return -EINVAL;
	*cause = BRK_FLEET_DROP_MALFORMED;
	if (!buf && len)
		return why_set(why, why_cap, "no buffer");
	if (len > FLEET_MSG_MAX) {
		*cause = BRK_FLEET_DROP_OVERSIZE;
		return why_set(why, why_cap, "%zu bytes, more than %u", len,
			       FLEET_MSG_MAX);
	}
	if (len == 0)
		return why_set(why, why_cap, "empty");
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
	memset(&who, 0, sizeof(who));
	if (!o)
		return refused(out, &who, why_set(why, why_cap, "%s",
						  json_why(&err)));
	memset(&m, 0, sizeof(m));
	if (!json_is_object(o)) {
		rc = why_set(why, why_cap, "not an object");
	} else {
		sender_of(o, &who);
		rc = msg_fields(o, &m, v2, why, why_cap);
		if (rc == 0 && m.version == FLEET_MSG_VERSION_SIGNED) {
			rc = tag_check(buf, len, o, keys, why, why_cap);
			if (rc)
				*cause = BRK_FLEET_DROP_AUTH;
		} else if (rc == 0 && keys && keys->n) {
			*cause = BRK_FLEET_DROP_AUTH;
			rc = why_set(why, why_cap, "unsigned (version %d): this "
				     "link has a key", m.version);
		}
	}
	json_decref(o);
	if (rc)
		return refused(out, &who, rc);

	if (m.sent_ms > now_ms) {
		if (m.sent_ms - now_ms > FLEET_SKEW_MS) {
			*cause = BRK_FLEET_DROP_FUTURE;
			return refused(out, &m, why_set(why, why_cap,
				       "sent_ms: %llu ms in the future, more "
				       "than the skew %u",
				       (unsigned long long)(m.sent_ms - now_ms),
				       FLEET_SKEW_MS));
		}
		m.lag_ms = 0;
	} else {
		m.lag_ms = now_ms - m.sent_ms;
	}
	if (has_remaining(m.kind, m.version)) {
		if (m.lag_ms >= m.remaining_ms) {
			*cause = BRK_FLEET_DROP_EXPIRED;
			return refused(out, &m, why_set(why, why_cap,
				       "remaining_ms %llu passed in transit "
				       "(lag %llu ms)",
				       (unsigned long long)m.remaining_ms,
				       (unsigned long long)m.lag_ms));
		}
		m.remaining_ms -= m.lag_ms;
	}
	*out = m;
	return 0;
}
