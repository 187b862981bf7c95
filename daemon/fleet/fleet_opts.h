/*
 * fleet_opts.h - breakerd's fleet options: --fleet URL, --fleet-url-file
 * FILE, --fleet-channel NAME, --host-id ID and $BREAKERD_FLEET_URL, their
 * help lines, and the link's settings (struct fleet_conf) made from them.
 * main.c only calls these; a usage error prints "breakerd: <msg>" and the
 * usage hint (cli_usage_error()) and exits 2.
 *
 * Built with or without hiredis: without it, a fleet URL from anywhere is
 * a usage error saying how to get the link.
 */
#ifndef BREAKERD_FLEET_OPTS_H
#define BREAKERD_FLEET_OPTS_H

#ifdef BREAKERD_HAVE_HIREDIS
#include "fleet_conf.h"
#endif

#define FLEET_URL_ENV "BREAKERD_FLEET_URL" /* the fleet URL, may hold a password */
#define FLEET_KEY_ENV "BREAKERD_FLEET_KEY_FILE" /* = --fleet-key-file */
#define FLEET_PEERS_MAX 64                 /* --fleet-peer, at most */
#define FLEET_CHANNEL_DEFAULT "breakerd"   /* = FLEET_DEFAULT_CHANNEL (fleet_conf.h,
                                              absent without hiredis) */

/* The option codes (getopt_long's values; no short options). */
enum {
	FLEET_OPT_URL = 'F',
	FLEET_OPT_URL_FILE = 'U',
	FLEET_OPT_CHANNEL = 'C',
	FLEET_OPT_HOST_ID = 'I',
	FLEET_OPT_KEY_FILE = 'K',
	FLEET_OPT_PEER = 'P',
};

#define FLEET_OPTS_LONGOPTS                                               \
	{ "fleet", required_argument, NULL, FLEET_OPT_URL },              \
	{ "fleet-url-file", required_argument, NULL, FLEET_OPT_URL_FILE }, \
	{ "fleet-channel", required_argument, NULL, FLEET_OPT_CHANNEL },  \
	{ "host-id", required_argument, NULL, FLEET_OPT_HOST_ID },        \
	{ "fleet-key-file", required_argument, NULL, FLEET_OPT_KEY_FILE }, \
	{ "fleet-peer", required_argument, NULL, FLEET_OPT_PEER }

/* The options' lines of `breakerd --help`. */
#define FLEET_OPTS_HELP                                                      \
	"  --fleet URL       link this host's fleet-wide breakers and paces\n"  \
	"                    (fleet = 1) with other hosts' through the Redis at\n" \
	"                    redis://[USER@]HOST[:PORT][/DB]: their opens, cooling\n" \
	"                    periods, modes and resets are published and the\n" \
	"                    peers' applied here; a password is refused here\n" \
	"                    (ps shows it): use --fleet-url-file or\n"          \
	"                    $" FLEET_URL_ENV "\n"                              \
	"  --fleet-url-file FILE\n"                                             \
	"                    read the URL (may hold USER:PASSWORD@) from FILE's\n" \
	"                    first line not blank nor '#'; refused if others\n" \
	"                    may read FILE\n"                                   \
	"  --fleet-channel NAME\n"                                              \
	"                    the Redis pub/sub channel and key prefix (default\n" \
	"                    " FLEET_CHANNEL_DEFAULT "; 1-63 of A-Z a-z 0-9 . _ -)\n" \
	"  --host-id ID      this host's id on the link (default: the host\n"  \
	"                    name; 1-63 of A-Z a-z 0-9 . _ -)\n"              \
	"  --fleet-key-file FILE\n"                                             \
	"                    sign every message with HMAC-SHA256 and accept only\n" \
	"                    signed, fresh ones: the key is FILE's first line not\n" \
	"                    blank nor '#' (16-256 bytes); further lines (up to\n" \
	"                    4 keys) are also accepted, for a rotation; FILE must\n" \
	"                    be readable by its owner only (or $" FLEET_KEY_ENV ")\n" \
	"  --fleet-peer ID   accept only these host ids' messages (repeat it)\n"

struct fleet_opts {
	const char *url;      /* --fleet URL (no password), the URL read from
	                         the file or the env (url_buf), or NULL: no link */
	const char *url_file; /* --fleet-url-file FILE, or NULL */
	const char *channel;  /* --fleet-channel NAME, or NULL */
	const char *host_id;  /* --host-id ID, or NULL */
	char url_buf[1024];   /* the URL read from the file or the env */
	int url_from_argv;    /* 1: the URL came from --fleet */
	unsigned url_line;    /* the URL's line in --fleet-url-file */
	int env_ignored;      /* $BREAKERD_FLEET_URL set, not used */
	const char *key_file; /* --fleet-key-file FILE, $BREAKERD_FLEET_KEY_FILE,
	                         or NULL: an unauthenticated link */
	int key_from_env;     /* 1: from $BREAKERD_FLEET_KEY_FILE */
	const char *peers[FLEET_PEERS_MAX]; /* --fleet-peer ID ... */
	unsigned npeers;
};

/**
 * fleet_opts_arg - take the option @c (a FLEET_OPT_*) with its argument
 * @arg into @fo. Returns 1 (taken; a bad value is a usage error, exit 2)
 * or 0 (@c is not a fleet option). @fo starts zeroed.
 */
int fleet_opts_arg(struct fleet_opts *fo, int c, const char *arg);

/**
 * fleet_opts_finish - after the command line: where the URL comes from,
 * --fleet, --fleet-url-file (read here), or $BREAKERD_FLEET_URL (in that
 * order; the first two exclude each other). --fleet-channel and
 * --host-id need a URL; without hiredis a URL is a usage error.
 */
void fleet_opts_finish(struct fleet_opts *fo);

#ifdef BREAKERD_HAVE_HIREDIS
/**
 * fleet_opts_conf - the link's settings for segment @shm from @fo (which
 * has a URL): the URL parsed, the host id (default: the host name), the
 * channel, where the URL came from. A usage error exits 2.
 */
void fleet_opts_conf(const struct fleet_opts *fo, const char *shm,
		     struct fleet_conf *fc);

/** fleet_opts_log - log where the URL came from (a warning when an
 * option won over $BREAKERD_FLEET_URL). */
void fleet_opts_log(const struct fleet_opts *fo);
#endif

#endif /* BREAKERD_FLEET_OPTS_H */
