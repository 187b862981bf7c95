/*
 * test_fleet_url.c - fleet_url_parse (daemon/fleet/fleet_conf.c): the forms of
 * redis://[USER[:PASSWORD]@]HOST[:PORT][/DB] it takes, and each refusal
 * with its message (scheme, host, port range, db range, user and
 * password rules, a password on the command line). A refusal leaves the
 * settings as they were and never repeats the password.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fleet_conf.h"

struct good {
	const char *url;
	int from_argv;
	const char *host;
	int port, db;
	const char *user, *pass;
};

static void parses_the_forms(void **state)
{
	const struct good g[] = {
		{ "redis://127.0.0.1", 1, "127.0.0.1", 6379, 0, "", "" },
		{ "redis://127.0.0.1/", 1, "127.0.0.1", 6379, 0, "", "" },
		{ "redis://localhost:6380/3", 1, "localhost", 6380, 3, "", "" },
		{ "redis://redis.prod-1.example:1/15", 1,
		  "redis.prod-1.example", 1, 15, "", "" },
		{ "redis://h:65535/2147483647", 1, "h", 65535, 2147483647, "", "" },
		{ "redis://fleet@10.0.0.5", 1, "10.0.0.5", 6379, 0, "fleet", "" },
		{ "redis://fleet:pw@h:7000/1", 0, "h", 7000, 1, "fleet", "pw" },
		{ "redis://:secret@h", 0, "h", 6379, 0, "", "secret" },
		{ "redis://u%40x:p%40ss%3A%2F@h", 0, "h", 6379, 0, "u@x", "p@ss:/" },
		{ "redis://[::1]", 1, "::1", 6379, 0, "", "" },
		{ "redis://[::1]:7001/4", 1, "::1", 7001, 4, "", "" },
		{ "redis://u:p@[fe80::1]:7001", 0, "fe80::1", 7001, 0, "u", "p" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
		struct fleet_conf c;
		char err[256] = "";
		int rc;

		memset(&c, 0, sizeof(c));
		rc = fleet_url_parse(g[i].url, g[i].from_argv, &c, err,
				     sizeof(err));
		if (rc)
			fprintf(stderr, "%s: %s\n", g[i].url, err);
		assert_int_equal(rc, 0);
		assert_string_equal(err, "");
		assert_string_equal(c.redis_host, g[i].host);
		assert_int_equal(c.redis_port, g[i].port);
		assert_int_equal(c.redis_db, g[i].db);
		assert_string_equal(c.user, g[i].user);
		assert_string_equal(c.password, g[i].pass);
	}
}

struct bad {
	const char *url;
	int from_argv;
	const char *msg; /* a substring of the message */
};

static void refuses_with_a_message(void **state)
{
	char longhost[300 + 20];
	const struct bad b[] = {
		{ NULL, 0, "none given" },
		{ "", 0, "must start with redis://" },
		{ "http://h", 0, "must start with redis://" },
		{ "REDIS://h", 0, "must start with redis://" },
		{ "127.0.0.1:6379", 0, "must start with redis://" },
		{ "rediss://h", 0, "TLS" },
		{ "unix:///run/redis.sock", 0, "must start with redis://" },
		{ "redis://", 0, "no host" },
		{ "redis:///0", 0, "no host" },
		{ "redis://:6379", 0, "no host" },
		{ "redis://u@", 0, "no host" },
		{ "redis://bad_host", 0, "host: not a host name" },
		{ "redis://-h", 0, "host: not a host name" },
		{ "redis://[::1", 0, "host: a bad [IPv6]" },
		{ "redis://[zz::1]", 0, "host: a bad [IPv6]" },
		{ "redis://[]", 0, "host: a bad [IPv6]" },
		{ "redis://[::1]x", 0, "host: bytes after ']'" },
		{ longhost, 0, "host: longer than 255" },
		{ "redis://h:", 0, "port: not a number in 1..65535" },
		{ "redis://h:0", 0, "port: not a number in 1..65535" },
		{ "redis://h:65536", 0, "port: not a number in 1..65535" },
		{ "redis://h:-1", 0, "port: not a number" },
		{ "redis://h:6379x", 0, "port: not a number" },
		{ "redis://h:99999999999", 0, "port: not a number" },
		{ "redis://h:1:2", 0, "port: not a number" },
		{ "redis://h/-1", 0, "database: not a number in 0..2147483647" },
		{ "redis://h/2147483648", 0, "database: not a number in 0..2147483647" },
		{ "redis://h/x", 0, "database: not a number" },
		{ "redis://h/1/2", 0, "database: not a number" },
		{ "redis://h?db=1", 0, "no query" },
		{ "redis://h#x", 0, "no query" },
		{ "redis://h /0", 0, "a space, control or non-ASCII byte at offset 9" },
		{ "redis://h\n", 0, "a space, control or non-ASCII byte" },
		{ "redis://h\xc3\xa9", 0, "non-ASCII" },
		{ "redis://@h", 0, "an empty user" },
		{ "redis://u:@h", 0, "an empty password" },
		{ "redis://u<x@h", 0, "user: a character that must be percent-encoded" },
		{ "redis://u%4@h", 0, "user: a '%' not followed by two hex digits" },
		{ "redis://u%zz@h", 0, "user: a '%' not followed by two hex digits" },
		{ "redis://u%0a@h", 0, "user: a control character or space" },
		{ "redis://u%20@h", 0, "user: a control character or space" },
		{ "redis://u:p%00w@h", 0, "password: a control character" },
		{ "redis://u:p%@h", 0, "password: a '%' not followed" },
		{ "redis://u:p\"w@h", 0, "password: a character that must be" },
		{ "redis://a:b@c@h", 0, "password: a character that must be percent-encoded (%XX)" },
		/* a password from the command line */
		{ "redis://fleet:hunter2@h", 1, "--fleet-url-file" },
		{ "redis://:hunter2@h", 1, "visible to every user" },
		{ "redis://fleet:hunter2@h", 1, "$BREAKERD_FLEET_URL" },
	};

	(void)state;
	memcpy(longhost, "redis://", 8);
	memset(longhost + 8, 'a', 300);
	longhost[308] = '\0';
	for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
		struct fleet_conf c, before;
		char err[512] = "";
		int rc;

		memset(&c, 0, sizeof(c));
		strcpy(c.redis_host, "kept");
		strcpy(c.user, "kept-user");
		strcpy(c.password, "kept-pw");
		c.redis_port = 1234;
		c.redis_db = 5;
		before = c;
		rc = fleet_url_parse(b[i].url, b[i].from_argv, &c, err,
				     sizeof(err));
		if (rc != -EINVAL || !strstr(err, b[i].msg))
			fprintf(stderr, "%zu %s: rc %d \"%s\", want \"%s\"\n", i,
				b[i].url ? b[i].url : "(null)", rc, err,
				b[i].msg);
		assert_int_equal(rc, -EINVAL);
		assert_non_null(strstr(err, b[i].msg));
		assert_true(strncmp(err, "fleet URL: ", 11) == 0);
		/* never repeat the password */
		assert_null(strstr(err, "hunter2"));
		/* nothing changed */
		assert_memory_equal(&c, &before, sizeof(c));
	}
}

static void small_error_buffers_are_safe(void **state)
{
	struct fleet_conf c;
	char err[8];

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(fleet_url_parse("http://x", 0, &c, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_int_equal(fleet_url_parse("http://x", 0, &c, NULL, 0), -EINVAL);
	assert_int_equal(fleet_url_parse("redis://h", 0, NULL, err,
					 sizeof(err)), -EINVAL);
	/* the longest user and password fit; one more byte does not */
	{
		char url[600], err2[256];
		size_t n = 0;

		n += (size_t)sprintf(url, "redis://");
		memset(url + n, 'u', sizeof(c.user) - 1);
		n += sizeof(c.user) - 1;
		url[n++] = ':';
		memset(url + n, 'p', sizeof(c.password) - 1);
		n += sizeof(c.password) - 1;
		strcpy(url + n, "@h");
		assert_int_equal(fleet_url_parse(url, 0, &c, err2, sizeof(err2)),
				 0);
		assert_int_equal(strlen(c.user), sizeof(c.user) - 1);
		assert_int_equal(strlen(c.password), sizeof(c.password) - 1);
		memmove(url + n + 1, url + n, strlen(url + n) + 1);
		url[n] = 'p';
		assert_int_equal(fleet_url_parse(url, 0, &c, err2, sizeof(err2)),
				 -EINVAL);
		assert_non_null(strstr(err2, "password: too long"));
	}
}

/* An IPv6 Redis address is written [ADDR]:PORT in connect errors, as in
 * the URL (not "::1:1", which reads as an address). */
static void ipv6_addresses_are_bracketed_in_errors(void **state)
{
	struct fleet_conf c;
	char err[256] = "";
	redisContext *rc;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(fleet_url_parse("redis://[::1]:1", 1, &c, err,
					 sizeof(err)), 0);
	rc = fleet_connect(&c, err, sizeof(err)); /* nothing listens on 1 */
	assert_null(rc);
	if (!strstr(err, "[::1]:1"))
		fprintf(stderr, "got: %s\n", err);
	assert_non_null(strstr(err, "connect [::1]:1:"));
	memset(&c, 0, sizeof(c));
	assert_int_equal(fleet_url_parse("redis://127.0.0.1:1", 1, &c, err,
					 sizeof(err)), 0);
	assert_null(fleet_connect(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "connect 127.0.0.1:1:"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_the_forms),
		cmocka_unit_test(refuses_with_a_message),
		cmocka_unit_test(small_error_buffers_are_safe),
		cmocka_unit_test(ipv6_addresses_are_bracketed_in_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
