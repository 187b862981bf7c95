/*
 * fleet_conf.h - breakerd's fleet link settings and its Redis connection:
 * parsed from --fleet URL / --fleet-url-file FILE / $BREAKERD_FLEET_URL,
 * --fleet-channel NAME, --host-id ID (fleet_conf.c).
 *
 * URL: redis://[USER[:PASSWORD]@]HOST[:PORT][/DB]  (PORT 6379, DB 0)
 * (USER and PASSWORD percent-encoded as in RFC 3986: "p%40ss" is p@ss;
 * HOST a name, an IPv4 address or [IPv6]; PORT 1..65535, DB 0 ..
 * FLEET_DB_MAX; no rediss://, query or fragment.)
 * A URL with a password is refused on the command line (--fleet): ps
 * shows argv to every user of the host. It may come from
 * --fleet-url-file FILE (first line; refused if the file is readable by
 * others than its owner and group) or $BREAKERD_FLEET_URL.
 */
#ifndef BREAKERD_FLEET_CONF_H
#define BREAKERD_FLEET_CONF_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "breaker.h"
#include "fleet_msg.h" /* struct fleet_keys */

#define FLEET_DEFAULT_CHANNEL "breakerd"
#define FLEET_DEFAULT_PORT 6379
#define FLEET_DB_MAX 2147483647    /* redis://HOST/DB: 0 .. this (INT_MAX) */
#define FLEET_CONNECT_TIMEOUT_MS 1000u
#define FLEET_IO_TIMEOUT_MS 1000u
#define FLEET_BACKOFF_MIN_MS 100u   /* jittered reconnect (brk_backoff_ms) */
#define FLEET_BACKOFF_MAX_MS 5000u

struct fleet_conf {
	char host_id[BRK_HOST_ID_MAX + 1]; /* --host-id, default gethostname() */
	char channel[BRK_HOST_ID_MAX + 1]; /* --fleet-channel */
	char redis_host[256];
	int redis_port;
	int redis_db;
	char user[128];                    /* "" : none (AUTH PASSWORD only) */
	char password[256];                /* "" : no AUTH */
	const char *shm_name;              /* the segment breakerd attached */
	/* where the URL came from, for the hints of AUTH errors:
	 * "--fleet", "--fleet-url-file FILE" or "$BREAKERD_FLEET_URL";
	 * "" (unknown) names the two places a password may be */
	char url_src[300];
	/* --fleet-key-file: n == 0, an unauthenticated link (v1 messages) */
	struct fleet_keys keys;
	char key_src[300];                 /* where the keys came from */
	/* --fleet-peer: npeers == 0, every host id is accepted */
	unsigned npeers;
	char peers[64][BRK_HOST_ID_MAX + 1];
};

/*
 * fleet_url_parse - parse @url into @c (host, port, db, user, password).
 * @from_argv: the URL came from the command line: a password is refused.
 * Returns 0, or -EINVAL with a message in @err ("fleet URL: ...").
 */
int fleet_url_parse(const char *url, int from_argv, struct fleet_conf *c,
		    char *err, size_t errlen);

/*
 * fleet_connect - a new connection to the configured Redis with
 * FLEET_CONNECT_TIMEOUT_MS, AUTH [USER] PASSWORD (when a user or a
 * password is set; a user alone sends an empty password, for an ACL
 * nopass user) and SELECT db, and FLEET_IO_TIMEOUT_MS on reads and
 * writes. Returns the context (the caller frees it with redisFree()) or
 * NULL with a message in @err: the connection refused, timed out, the
 * AUTH refused (WRONGPASS: check the URL's user and password, naming
 * c->url_src), NOAUTH (the server needs a password), SELECT refused. Never holds the
 * password in @err.
 * Thread-safe (each thread opens its own connection).
 */
redisContext *fleet_connect(const struct fleet_conf *c, char *err,
			    size_t errlen);

/*
 * fleet_cmd_err - the message for command @cmd (its name, e.g. "PING",
 * "SCAN", "GET breakerd:state:pay") that failed on @ctx, into @err, naming
 * the server: "fleet: CMD on HOST:PORT: no answer within
 * FLEET_IO_TIMEOUT_MS ms" (@r NULL, a read timeout), "...: the server
 * closed the connection", "...: <hiredis errstr>"; "fleet: CMD refused by
 * HOST:PORT: <error reply>" (@r an error reply); "...: unexpected reply
 * (type N)" (another reply). Thread-safe.
 */
void fleet_cmd_err(const redisContext *ctx, const struct fleet_conf *c,
		   const char *cmd, const redisReply *r, char *err,
		   size_t errlen);

#endif
