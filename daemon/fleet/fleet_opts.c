/*
 * fleet_opts.c - breakerd's fleet options (see fleet_opts.h).
 */
#include "fleet_opts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "breaker.h"
#include "cli_util.h"
#include "logfmt.h"

/* As breakerd's own usage errors (main.c): the message, the hint, exit 2. */
#define usage_error(...) exit(cli_usage_error(__VA_ARGS__))

/* @arg of @opt, a channel name or a host id (one alphabet): a usage error
 * saying it is not a @what. */
static const char *id_arg(const char *opt, const char *what, const char *arg)
{
	if (brk_host_id_validate(arg) != 0)
		usage_error("%s: '%s' is not a %s (1-%d bytes of A-Z a-z 0-9 . _ -)",
			    opt, arg, what, BRK_HOST_ID_MAX);
	return arg;
}

int fleet_opts_arg(struct fleet_opts *fo, int c, const char *arg)
{
	switch (c) {
	case FLEET_OPT_URL:
		fo->url = arg;
		return 1;
	case FLEET_OPT_URL_FILE:
		if (!*arg)
			usage_error("--fleet-url-file: empty file name");
		fo->url_file = arg;
		return 1;
	case FLEET_OPT_CHANNEL:
		fo->channel = id_arg("--fleet-channel", "channel name", arg);
		return 1;
	case FLEET_OPT_HOST_ID:
		fo->host_id = id_arg("--host-id", "host id", arg);
		return 1;
	case FLEET_OPT_KEY_FILE:
		if (!*arg)
			usage_error("--fleet-key-file: empty file name");
		fo->key_file = arg;
		return 1;
	case FLEET_OPT_PEER:
		if (fo->npeers >= FLEET_PEERS_MAX)
			usage_error("--fleet-peer: more than %d peers",
				    FLEET_PEERS_MAX);
		fo->peers[fo->npeers++] = id_arg("--fleet-peer", "host id", arg);
		return 1;
	}
	return 0;
}

/* The URL of --fleet-url-file FILE into fo->url_buf: the first line that
 * is not blank nor a '#' comment, without the whitespace around it (its
 * number in fo->url_line, for the errors: FILE:LINE:); refused (usage
 * error) if others than its owner and group may read it. */
static void read_url_file(struct fleet_opts *fo)
{
	const char *f = fo->url_file;
	char line[sizeof(fo->url_buf)], *p, *e;
	struct stat stt;
	unsigned lineno = 0;
	FILE *fp;
	int fd;

	/* O_NONBLOCK: a FIFO (or a device) must not hang the start before
	 * fstat() refuses it; a regular file's reads ignore the flag */
	fd = open(f, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		usage_error("--fleet-url-file: %s: %s", f, strerror(errno));
	if (fstat(fd, &stt) != 0 || !S_ISREG(stt.st_mode)) {
		close(fd);
		usage_error("--fleet-url-file: %s: not a regular file", f);
	}
	if (stt.st_mode & 007) {
		close(fd);
		usage_error("--fleet-url-file: %s: mode %04o lets every user "
			    "of this host read the password: chmod o-rwx %s",
			    f, (unsigned)(stt.st_mode & 07777), f);
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		usage_error("--fleet-url-file: %s: %s", f, strerror(errno));
	}
	fo->url_buf[0] = '\0';
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(fp)) {
			fclose(fp);
			usage_error("--fleet-url-file: %s:%u: line longer than "
				    "%zu bytes", f, lineno, sizeof(line) - 2);
		}
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		e = p + strlen(p);
		while (e > p && (e[-1] == ' ' || e[-1] == '\t' ||
				 e[-1] == '\r' || e[-1] == '\n'))
			e--;
		*e = '\0';
		if (*p == '\0' || *p == '#')
			continue;
		memcpy(fo->url_buf, p, (size_t)(e - p) + 1);
		fo->url_line = lineno;
		break;
	}
	explicit_bzero(line, sizeof(line));
	fclose(fp);
	if (fo->url_buf[0] == '\0')
		usage_error("--fleet-url-file: %s: no URL (only blank and '#' "
			    "lines)", f);
}

void fleet_opts_finish(struct fleet_opts *fo)
{
	const char *env = getenv(FLEET_URL_ENV);

	if (fo->url && fo->url_file)
		usage_error("--fleet and --fleet-url-file: give one of them");
	if (fo->url) {
		fo->url_from_argv = 1;
	} else if (fo->url_file) {
		read_url_file(fo);
		fo->url = fo->url_buf;
	}
	if (fo->url) {
		fo->env_ignored = env && *env;
	} else if (env && *env) {
		snprintf(fo->url_buf, sizeof(fo->url_buf), "%s", env);
		fo->url = fo->url_buf;
	}
	if (!fo->key_file && getenv(FLEET_KEY_ENV) && *getenv(FLEET_KEY_ENV)) {
		fo->key_file = getenv(FLEET_KEY_ENV);
		fo->key_from_env = 1;
	}
	if (!fo->url && (fo->channel || fo->host_id || fo->npeers ||
			 (fo->key_file && !fo->key_from_env)))
		usage_error("%s needs --fleet URL (or --fleet-url-file, $"
			    FLEET_URL_ENV ")", fo->host_id ? "--host-id"
			    : fo->channel ? "--fleet-channel" : fo->npeers ?
			    "--fleet-peer" : "--fleet-key-file");
#ifndef BREAKERD_HAVE_HIREDIS
	if (fo->url)
		usage_error("%s: this breakerd was built without hiredis, so it "
			    "has no fleet link (install libhiredis-dev and "
			    "rebuild with -Dfleet=enabled)",
			    fo->url_from_argv ? "--fleet" : fo->url_file
			    ? "--fleet-url-file" : "$" FLEET_URL_ENV);
#endif
}

#ifdef BREAKERD_HAVE_HIREDIS
/* The keys of @f into @k: every line not blank nor '#', without the
 * whitespace around it, is a key of FLEET_KEY_MIN..FLEET_KEY_MAX bytes
 * (its bytes as they are: a passphrase or hex digits); 1 to
 * FLEET_KEYS_MAX of them, the first signs. Refused (usage error) unless
 * only its owner may read or write it. @opt names the source. */
static void read_key_file(const char *opt, const char *f, struct fleet_keys *k)
{
	char line[FLEET_KEY_MAX + 8], *p, *e;
	struct stat stt;
	unsigned lineno = 0;
	size_t n;
	FILE *fp;
	int fd;

	memset(k, 0, sizeof(*k));
	fd = open(f, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		usage_error("%s: %s: %s", opt, f, strerror(errno));
	if (fstat(fd, &stt) != 0 || !S_ISREG(stt.st_mode)) {
		close(fd);
		usage_error("%s: %s: not a regular file", opt, f);
	}
	if (stt.st_mode & 077) {
		close(fd);
		usage_error("%s: %s: mode %04o lets others than its owner read "
			    "or change the fleet key: chmod 600 %s", opt, f,
			    (unsigned)(stt.st_mode & 07777), f);
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		usage_error("%s: %s: %s", opt, f, strerror(errno));
	}
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(fp)) {
			explicit_bzero(line, sizeof(line));
			fclose(fp);
			usage_error("%s: %s:%u: a key longer than %u bytes", opt,
				    f, lineno, FLEET_KEY_MAX);
		}
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		e = p + strlen(p);
		while (e > p && (e[-1] == ' ' || e[-1] == '\t' ||
				 e[-1] == '\r' || e[-1] == '\n'))
			e--;
		*e = '\0';
		if (*p == '\0' || *p == '#')
			continue;
		n = (size_t)(e - p);
		if (n < FLEET_KEY_MIN || n > FLEET_KEY_MAX || k->n >= FLEET_KEYS_MAX) {
			explicit_bzero(line, sizeof(line));
			explicit_bzero(k, sizeof(*k));
			fclose(fp);
			if (n < FLEET_KEY_MIN || n > FLEET_KEY_MAX)
				usage_error("%s: %s:%u: a key of %zu bytes: give "
					    "%u to %u (e.g. openssl rand -hex 32)",
					    opt, f, lineno, n, FLEET_KEY_MIN,
					    FLEET_KEY_MAX);
			usage_error("%s: %s:%u: more than %u keys", opt, f,
				    lineno, FLEET_KEYS_MAX);
		}
		memcpy(k->key[k->n], p, n);
		k->len[k->n++] = n;
	}
	explicit_bzero(line, sizeof(line));
	fclose(fp);
	if (k->n == 0)
		usage_error("%s: %s: no key (only blank and '#' lines)", opt, f);
}

void fleet_opts_conf(const struct fleet_opts *fo, const char *shm,
		     struct fleet_conf *fc)
{
	char err[512], host[256], src[4200];

	if (fo->url_from_argv)
		snprintf(src, sizeof(src), "--fleet");
	else if (fo->url_file)
		snprintf(src, sizeof(src), "--fleet-url-file: %s:%u",
			 fo->url_file, fo->url_line);
	else
		snprintf(src, sizeof(src), "$" FLEET_URL_ENV);

	memset(fc, 0, sizeof(*fc));
	err[0] = '\0';
	/* parsed as if from a file first, so a password on the command line
	 * gets its own message saying where to put it */
	if (fleet_url_parse(fo->url, 0, fc, err, sizeof(err)) != 0)
		usage_error("%s: %s", src, err);
	if (fo->url_from_argv && fc->password[0])
		usage_error("--fleet: the URL holds a password, and ps shows the "
			    "command line to every user of this host: put the URL "
			    "in --fleet-url-file FILE (mode 0600 or 0640) or in $"
			    FLEET_URL_ENV " instead");
	if (fo->url_from_argv &&
	    fleet_url_parse(fo->url, 1, fc, err, sizeof(err)) != 0)
		usage_error("%s: %s", src, err);
	if (fo->host_id) {
		snprintf(fc->host_id, sizeof(fc->host_id), "%s", fo->host_id);
	} else {
		if (gethostname(host, sizeof(host)) != 0)
			host[0] = '\0';
		host[sizeof(host) - 1] = '\0';
		if (brk_host_id_validate(host) != 0)
			usage_error("the host name '%s' is not a fleet host id "
				    "(1-%d bytes of A-Z a-z 0-9 . _ -): give "
				    "--host-id ID", host, BRK_HOST_ID_MAX);
		memcpy(fc->host_id, host, strlen(host) + 1); /* <= 63 bytes */
	}
	snprintf(fc->channel, sizeof(fc->channel), "%s",
		 fo->channel ? fo->channel : FLEET_DEFAULT_CHANNEL);
	fc->shm_name = shm;
	if (fo->key_file) {
		const char *opt = fo->key_from_env ? "$" FLEET_KEY_ENV
						   : "--fleet-key-file";

		read_key_file(opt, fo->key_file, &fc->keys);
		snprintf(fc->key_src, sizeof(fc->key_src), "%s %.200s", opt,
			 fo->key_file);
	}
	for (unsigned i = 0; i < fo->npeers; i++)
		snprintf(fc->peers[i], sizeof(fc->peers[i]), "%s", fo->peers[i]);
	fc->npeers = fo->npeers;
	if (fo->url_file)
		snprintf(fc->url_src, sizeof(fc->url_src),
			 "--fleet-url-file %.280s", fo->url_file);
	else
		snprintf(fc->url_src, sizeof(fc->url_src), "%s",
			 fo->url_from_argv ? "--fleet" : "$" FLEET_URL_ENV);
}

void fleet_opts_log(const struct fleet_opts *fo)
{
	struct logline l;

	/* --fleet and --fleet-url-file exclude each other; either wins over
	 * the environment: say so, it may surprise */
	ll_begin(&l, fo->env_ignored ? "warn" : "info",
		 fo->url_from_argv ? "fleet URL from --fleet"
		 : fo->url_file ? "fleet URL from --fleet-url-file"
		 : "fleet URL from $" FLEET_URL_ENV);
	if (fo->url_file)
		ll_str(&l, "file", fo->url_file);
	if (fo->env_ignored)
		ll_str(&l, "ignored", "$" FLEET_URL_ENV);
	ll_end(&l);
}
#endif
