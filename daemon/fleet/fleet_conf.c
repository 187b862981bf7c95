/*
 * fleet_conf.c - the fleet link's Redis URL and connection (fleet_conf.h).
 *
 * URL grammar (a subset of the redis:// URI scheme registered with IANA,
 * https://www.iana.org/assignments/uri-schemes/prov/redis, with RFC 3986
 * percent-encoding in USER and PASSWORD):
 *   redis://[USER[:PASSWORD]@]HOST[:PORT][/DB]
 * HOST is a name of [A-Za-z0-9.-], an IPv4 address or [IPv6]. No query,
 * no fragment, no TLS (rediss://: hiredis 0.14 as built by Debian has no
 * TLS). An error message never repeats the password.
 */
#include "fleet_conf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define SCHEME "redis://"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (err && errlen) {
		n = snprintf(err, errlen, "fleet URL: ");
		if (n < 0 || (size_t)n >= errlen)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* RFC 3986 userinfo characters, less ':' (the separator): unreserved,
 * sub-delims and '%' (an escape). */
static int userinfo_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("-._~!$&'()*+,;=%", c);
}

/*
 * Percent-decode [s, s + n) into @out (cap bytes with the NUL). The
 * decoded value may not hold a control byte (NUL, newline ...) or a
 * space: ACL user names and passwords cannot hold them either.
 * Returns 0 or a message.
 */
static const char *decode_part(const char *s, size_t n, char *out, size_t cap)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!c || !userinfo_char(c))
			return "a character that must be percent-encoded "
			       "(%XX)";
		if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return "a '%' not followed by two hex digits";
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return "a '%' not followed by two hex digits";
			c = (unsigned char)(hi * 16 + lo);
			i += 2;
			if (c <= 0x20 || c == 0x7f)
				return "a control character or space (after "
				       "%-decoding)";
		}
		if (o + 1 >= cap)
			return "too long";
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return NULL;
}

/* A decimal number of at most 10 digits in [lo, hi]; -1 otherwise. */
static long parse_num(const char *s, size_t n, long lo, long hi)
{
	long v = 0;
	size_t i;

	if (n == 0 || n > 10)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v < lo || v > hi ? -1 : v;
}

static int host_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || s[0] == '-' || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

static int ipv6_ok(const char *s, size_t n)
{
	size_t i;

	if (n < 2)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      (c >= 'A' && c <= 'F') || c == ':' || c == '.'))
			return 0;
	}
	return 1;
}

static int url_parse(const char *url, int from_argv, struct fleet_conf *c,
		     char *err, size_t errlen, char *pass)
{
	char user[sizeof(c->user)];
	char host[sizeof(c->redis_host)];
	const char *p, *at, *end, *hp, *he, *slash, *colon;
	const char *why;
	long port = FLEET_DEFAULT_PORT, db = 0;
	size_t i, n;

	if (err && errlen)
		err[0] = '\0';
	if (!url || !c)
		return fail(err, errlen, "none given");
	for (i = 0; url[i]; i++) {
		unsigned char ch = (unsigned char)url[i];

		if (ch <= 0x20 || ch >= 0x7f)
			return fail(err, errlen, "a space, control or non-ASCII "
				    "byte at offset %zu (percent-encode it "
				    "in the password as %%XX)", i);
	}
	if (strncmp(url, SCHEME, strlen(SCHEME)) != 0) {
		if (strncmp(url, "rediss://", 9) == 0)
			return fail(err, errlen, "rediss:// (TLS) is not "
				    "supported: use redis://HOST[:PORT][/DB] "
				    "(a TLS tunnel such as stunnel in front of "
				    "Redis)");
		return fail(err, errlen, "must start with redis:// "
			    "(redis://[USER@]HOST[:PORT][/DB])");
	}
	p = url + strlen(SCHEME);
	end = p + strlen(p);
	if (memchr(p, '?', (size_t)(end - p)) ||
	    memchr(p, '#', (size_t)(end - p)))
		return fail(err, errlen, "no query (?...) or fragment (#...) "
			    "is understood");

	/* userinfo: up to the last '@' before the path */
	slash = memchr(p, '/', (size_t)(end - p));
	at = NULL;
	for (hp = p; hp < (slash ? slash : end); hp++)
		if (*hp == '@')
			at = hp;
	user[0] = pass[0] = '\0';
	if (at) {
		colon = memchr(p, ':', (size_t)(at - p));
		n = (size_t)((colon ? colon : at) - p);
		why = decode_part(p, n, user, sizeof(user));
		if (why)
			return fail(err, errlen, "user: %s", why);
		if (colon) {
			if (from_argv)
				return fail(err, errlen, "a password on the "
					    "command line (--fleet) is visible "
					    "to every user of the host (ps): "
					    "put the URL in --fleet-url-file "
					    "FILE (mode 0640 or stricter) or in "
					    "$BREAKERD_FLEET_URL");
			n = (size_t)(at - colon - 1);
			if (n == 0)
				return fail(err, errlen, "an empty password "
					    "after ':'");
			why = decode_part(colon + 1, n, pass, sizeof(c->password));
			if (why)
				return fail(err, errlen, "password: %s", why);
		} else if (n == 0) {
			return fail(err, errlen, "an empty user before '@'");
		}
		hp = at + 1;
	} else {
		hp = p;
	}

	/* host [:port] */
	he = slash ? slash : end;
	if (hp < he && *hp == '[') {
		const char *rb = memchr(hp, ']', (size_t)(he - hp));

		if (!rb || !ipv6_ok(hp + 1, (size_t)(rb - hp - 1)))
			return fail(err, errlen, "host: a bad [IPv6] address");
		n = (size_t)(rb - hp - 1);
		if (n >= sizeof(host))
			return fail(err, errlen, "host: too long");
		memcpy(host, hp + 1, n);
		host[n] = '\0';
		colon = rb + 1 < he ? rb + 1 : NULL;
		if (colon && *colon != ':')
			return fail(err, errlen, "host: bytes after ']'");
	} else {
		colon = memchr(hp, ':', (size_t)(he - hp));
		n = (size_t)((colon ? colon : he) - hp);
		if (n == 0)
			return fail(err, errlen, "no host (redis://HOST...)");
		if (n >= sizeof(host))
			return fail(err, errlen, "host: longer than %zu bytes",
				    sizeof(host) - 1);
		if (!host_name_ok(hp, n))
			return fail(err, errlen, "host: not a host name or "
				    "address (letters, digits, '-', '.'; "
				    "[IPv6])");
		memcpy(host, hp, n);
		host[n] = '\0';
	}
	if (colon) {
		port = parse_num(colon + 1, (size_t)(he - colon - 1), 1, 65535);
		if (port < 0)
			return fail(err, errlen, "port: not a number in "
				    "1..65535");
	}

	/* [/DB] */
	if (slash && slash + 1 < end) {
		db = parse_num(slash + 1, (size_t)(end - slash - 1), 0,
			       FLEET_DB_MAX);
		if (db < 0)
			return fail(err, errlen, "database: not a number in "
				    "0..%d (redis://HOST/DB)", FLEET_DB_MAX);
	}

	memcpy(c->redis_host, host, sizeof(host));
	c->redis_port = (int)port;
	c->redis_db = (int)db;
	memcpy(c->user, user, sizeof(user));
	memcpy(c->password, pass, sizeof(c->password));
	return 0;
}

int fleet_url_parse(const char *url, int from_argv, struct fleet_conf *c,
		    char *err, size_t errlen)
{
	char pass[sizeof(c->password)];
	int rc = url_parse(url, from_argv, c, err, errlen, pass);

	explicit_bzero(pass, sizeof(pass)); /* no copy left on the stack */
	return rc;
}

static void cerr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cerr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* "HOST:PORT", or "[HOST]:PORT" for an IPv6 address (as in the URL). */
static const char *addr(const struct fleet_conf *c, char *buf, size_t len)
{
	snprintf(buf, len, strchr(c->redis_host, ':') ? "[%s]:%d" : "%s:%d",
		 c->redis_host, c->redis_port);
	return buf;
}

static struct timeval tv_ms(unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (suseconds_t)(ms % 1000) * 1000 };
	return tv;
}

/* The I/O error of @ctx as a message into @buf: hiredis 0.14 says
 * "Resource temporarily unavailable" for a read timeout (EAGAIN). */
static const char *io_why(const redisContext *ctx, char *buf, size_t len)
{
	if (ctx->err == REDIS_ERR_IO &&
	    (strstr(ctx->errstr, "temporarily unavailable") ||
	     strstr(ctx->errstr, "timed out"))) {
		snprintf(buf, len, "no answer within %u ms", FLEET_IO_TIMEOUT_MS);
		return buf;
	}
	if (ctx->err == REDIS_ERR_EOF || !ctx->err)
		return "the server closed the connection";
	return ctx->errstr[0] ? ctx->errstr : "I/O error";
}

void fleet_cmd_err(const redisContext *ctx, const struct fleet_conf *c,
		   const char *cmd, const redisReply *r, char *err,
		   size_t errlen)
{
	char ab[300], why[64];

	if (!err || !errlen)
		return;
	if (r && r->type == REDIS_REPLY_ERROR)
		cerr(err, errlen, "fleet: %s refused by %s: %.*s", cmd,
		     addr(c, ab, sizeof(ab)),
		     (int)(r->len > 200 ? 200 : r->len), r->str ? r->str : "");
	else if (r)
		cerr(err, errlen, "fleet: %s on %s: unexpected reply (type %d)",
		     cmd, addr(c, ab, sizeof(ab)), r->type);
	else
		cerr(err, errlen, "fleet: %s on %s: %s", cmd,
		     addr(c, ab, sizeof(ab)), io_why(ctx, why, sizeof(why)));
}

/* Run one command; 0, or -1 with @err filled ("... refused: <reply>"). */
static int command_ok(redisContext *ctx, const struct fleet_conf *c,
		      const char *what, redisReply *r, char *err,
		      size_t errlen)
{
	char ab[300];

	if (!r) {
		fleet_cmd_err(ctx, c, what, NULL, err, errlen);
		return -1;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		/* the password may be only in a file or the environment */
		const char *pw_src = c->url_src[0] &&
				     strcmp(c->url_src, "--fleet") != 0
				     ? c->url_src
				     : "--fleet-url-file or $BREAKERD_FLEET_URL";
		char hint[400];

		hint[0] = '\0';
		if (strncmp(r->str, "WRONGPASS", 9) == 0 ||
		    strstr(r->str, "invalid password"))
			snprintf(hint, sizeof(hint), " (check the user and "
				 "password of the fleet URL in %.300s)",
				 c->url_src[0] ? c->url_src : pw_src);
		else if (strncmp(r->str, "NOAUTH", 6) == 0)
			snprintf(hint, sizeof(hint), " (the server needs a "
				 "password: redis://USER:PASSWORD@HOST in %.300s)",
				 pw_src);
		else if (strstr(r->str, "wrong number of arguments") &&
			 c->user[0])
			snprintf(hint, sizeof(hint), " (AUTH USER PASSWORD "
				 "needs Redis 6 or later; leave the user out "
				 "for requirepass)");
		cerr(err, errlen, "fleet: %s refused by %s: %.200s%s",
		     what, addr(c, ab, sizeof(ab)), r->str, hint);
		freeReplyObject(r);
		return -1;
	}
	freeReplyObject(r);
	return 0;
}

redisContext *fleet_connect(const struct fleet_conf *c, char *err,
			    size_t errlen)
{
	redisContext *ctx;
	redisReply *r;
	char what[64], ab[300];

	if (err && errlen)
		err[0] = '\0';
	if (!c || !c->redis_host[0]) {
		cerr(err, errlen, "fleet: no Redis host configured");
		return NULL;
	}
	ctx = redisConnectWithTimeout(c->redis_host, c->redis_port,
				      tv_ms(FLEET_CONNECT_TIMEOUT_MS));
	if (!ctx) {
		cerr(err, errlen, "fleet: connect %s: out of memory",
		     addr(c, ab, sizeof(ab)));
		return NULL;
	}
	if (ctx->err) {
		const char *why = ctx->errstr;

		if (strstr(why, "timed out") ||
		    strstr(why, "temporarily unavailable") ||
		    strstr(why, "in progress"))
			cerr(err, errlen, "fleet: connect %s: timed out "
			     "after %u ms", addr(c, ab, sizeof(ab)),
			     FLEET_CONNECT_TIMEOUT_MS);
		else
			cerr(err, errlen, "fleet: connect %s: %s",
			     addr(c, ab, sizeof(ab)), why);
		redisFree(ctx);
		return NULL;
	}
	if (redisSetTimeout(ctx, tv_ms(FLEET_IO_TIMEOUT_MS)) != REDIS_OK) {
		cerr(err, errlen, "fleet: %s: cannot set the I/O timeout: "
		     "%s", addr(c, ab, sizeof(ab)), ctx->errstr);
		redisFree(ctx);
		return NULL;
	}
	if (c->password[0] || c->user[0]) {
		if (c->user[0]) {
			/* Redis 6+ ACL user; a nopass user takes any password */
			r = redisCommand(ctx, "AUTH %s %s", c->user,
					 c->password);
			snprintf(what, sizeof(what), "AUTH as user %.40s",
				 c->user);
		} else {
			r = redisCommand(ctx, "AUTH %s", c->password);
			snprintf(what, sizeof(what), "AUTH");
		}
		if (command_ok(ctx, c, what, r, err, errlen)) {
			redisFree(ctx);
			return NULL;
		}
	}
	r = redisCommand(ctx, "SELECT %d", c->redis_db);
	snprintf(what, sizeof(what), "SELECT %d", c->redis_db);
	if (command_ok(ctx, c, what, r, err, errlen)) {
		redisFree(ctx);
		return NULL;
	}
	return ctx;
}
