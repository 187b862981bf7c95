/*
 * main.c - breakerd: the supervisor. Options, attach, run, stop.
 *
 *   breakerd [--shm NAME] [--interval DUR] [--capacity N] [--arena-mb N]
 *            [--mode OCTAL] [--group NAME] [--retire-idle DUR]
 *            [--health NAME]... [--breakers FILE]
 *            [--metrics-listen ADDR:PORT]
 *            [--fleet URL | --fleet-url-file FILE] [--fleet-channel NAME]
 *            [--host-id ID] [--help] [--version]
 *
 * Runs in the foreground and logs to stderr, one logfmt line per event.
 * It attaches the segment (creating it with the given capacity, arena
 * size, mode and group if it is absent), then every interval reclaims the leases of dead
 * owners and expired probes and publishes a heartbeat. It never unlinks
 * or re-initialises the segment, so restarting it loses no state.
 *
 * Started by systemd (Type=notify, daemon/breakerd.service) it sends
 * READY=1 after attaching and the first scan, WATCHDOG=1 when the unit
 * sets WatchdogSec=, and STOPPING=1 on SIGTERM (notify.h).
 *
 * The breakers file (--breakers, default $BREAKERD_BREAKERS, empty for
 * none, else /etc/breakerd/breakers.conf if it exists) is applied after the attach and again on each SIGHUP (see
 * breakers.h); a bad one at start stops breakerd with exit 2.
 *
 * With --metrics-listen it serves GET /metrics, the output of `bctl
 * metrics`, from an HTTP thread (metrics_http.h).
 *
 * With --fleet (or --fleet-url-file, or $BREAKERD_FLEET_URL) it links
 * this host's fleet-wide breakers and paces with the other hosts' through
 * a Redis server (fleet/fleet_link.h; its options: fleet/fleet_opts.h);
 * built without hiredis that is a usage error.
 *
 * Exit status: 0 after SIGTERM/SIGINT, 1 on a segment or system error,
 * 2 on a usage error or a bad breakers file.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "breaker.h"
#include "breakers.h"
#include "breakers_file.h"
#include "cli_util.h"
#ifdef BREAKERD_HAVE_HIREDIS
#include "fleet_link.h"
#include "fleet_probe.h"
#endif
#include "fleet_opts.h"
#include "logfmt.h"
#include "metrics_http.h"
#include "notify.h"
#include "supervise.h"

#define BREAKERD_DEFAULT_INTERVAL_MS 100u

struct options {
	const char *shm_flag;  /* --shm, or NULL */
	uint64_t interval_ms;
	uint64_t retire_idle_ms; /* 0: no retirement */
	uint32_t capacity;     /* 0: the library's default */
	uint64_t arena_bytes;  /* --arena-mb; 0: the library's default */
	uint32_t mode;         /* 0: the library's default */
	int64_t gid;           /* -1: leave as is */
	const char *group;     /* as given, for the log */
	const char *breakers;  /* --breakers FILE, or NULL */
	const char *metrics_listen; /* --metrics-listen ADDR:PORT, or NULL */
	const char **health;   /* --health NAMEs (argv's strings) */
	size_t n_health;
	struct fleet_opts fleet;    /* --fleet, --fleet-url-file, ... */
};

static const char usage_text[] =
	"Usage: breakerd [OPTION]...\n"
	"Supervise the breakerd shared-memory segment: every interval, reclaim\n"
	"the leases (half-open probes, bulkhead permits) of processes that died\n"
	"holding them and of probes older than their probe timeout, publish a\n"
	"heartbeat, and log every transition and reclaim. Runs in the\n"
	"foreground, logs to stderr; SIGTERM or SIGINT stops it (exit 0),\n"
	"SIGHUP applies the breakers file again. Started by systemd\n"
	"(Type=notify) it sends READY=1 after the first scan, WATCHDOG=1\n"
	"if the unit sets WatchdogSec=, RELOADING=1 then READY=1 around a\n"
	"SIGHUP's reload, STOPPING=1 on SIGTERM.\n"
	"\n"
	"  --shm NAME        segment name (default: $" BRK_SHM_ENV ", else "
	BRK_DEFAULT_SHM ")\n"
	"  --interval DUR    scan interval: 250ms, 1s, ... (default 100ms)\n"
	"  --capacity N      records, when creating the segment (default 1024);\n"
	"                    an existing segment of another capacity is an\n"
	"                    error (resize: stop the workers and breakerd,\n"
	"                    'bctl segment remove', start with the new N)\n"
	"  --arena-mb N      MiB of record storage, when creating, as --capacity\n"
	"                    (default: a breaker's 448 bytes per record of the\n"
	"                    capacity plus max(capacity / 8, 1024) x 64 bytes for\n"
	"                    bulkheads, probes, window rules and hold-time\n"
	"                    histograms: 512 KiB at 1024 records)\n"
	"  --mode OCTAL      permission bits, when creating (default 0600)\n"
	"  --group NAME      group owner, when creating (share with a group)\n"
	"  --retire-idle DUR retire records idle this long (closed, no lease, no\n"
	"                    traffic), so their names and slots can be reused;\n"
	"                    every record is looked at least every DUR/4, and\n"
	"                    each retirement is logged (default: never)\n"
	"  --health NAME     evaluate NAME's health (live, delayed, partial,\n"
	"                    unavailable, fallback) every scan, so each of its\n"
	"                    transitions is recorded as an event and logged even\n"
	"                    if nobody asks (repeatable)\n"
	"  --breakers FILE   the breakers file to apply at start and on SIGHUP\n"
	"                    (default: $" BF_ENV " if set, empty for none;\n"
	"                    else " BF_DEFAULT_PATH " if it exists)\n"
	"  --metrics-listen ADDR:PORT\n"
	"                    serve GET /metrics (what 'bctl metrics' prints) over\n"
	"                    HTTP: 127.0.0.1:9464, [::1]:9464; port 0: the kernel\n"
	"                    chooses (the bound port is logged)\n"
	FLEET_OPTS_HELP
	"  -h, --help        show this help and exit\n"
	"      --version     show the version and exit\n"
	"\n"
	"Exit status: 0 stopped by a signal, 1 segment or system error,\n"
	"2 usage error or a bad breakers file.\n";

/* The usage errors of breakerd: "breakerd: <msg>" and this hint, exit 2
 * (cli_usage_error() of the shared CLI helpers prints both). */
#define USAGE_HINT "Try 'breakerd --help' for more information."
#define usage_error(...) exit(cli_usage_error(__VA_ARGS__))

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "shm", required_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "capacity", required_argument, NULL, 'c' },
		{ "arena-mb", required_argument, NULL, 'a' },
		{ "mode", required_argument, NULL, 'm' },
		{ "group", required_argument, NULL, 'g' },
		{ "retire-idle", required_argument, NULL, 'r' },
		{ "health", required_argument, NULL, 'H' },
		{ "breakers", required_argument, NULL, 'B' },
		{ "metrics-listen", required_argument, NULL, 'M' },
		FLEET_OPTS_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;

	memset(o, 0, sizeof(*o));
	/* at most one --health per argument */
	o->health = calloc((size_t)(argc > 0 ? argc : 1), sizeof(*o->health));
	if (!o->health) {
		fputs("breakerd: out of memory\n", stderr);
		exit(CLI_EXIT_ERROR);
	}
	o->interval_ms = BREAKERD_DEFAULT_INTERVAL_MS;
	o->gid = -1;
	while ((c = cli_getopt(argc, argv, ":h", longopts)) != -1) {
		switch (c) {
		case 's':
			if (brk_shm_name_validate(optarg) != 0)
				usage_error("--shm: '%s' is not a segment name "
					    "of the form /name", optarg);
			o->shm_flag = optarg;
			break;
		case 'i':
			if (cli_opt_duration("--interval", optarg, &o->interval_ms))
				exit(CLI_EXIT_USAGE);
			if (o->interval_ms == 0)
				usage_error("--interval: '%s' must be at least 1ms",
					    optarg);
			break;
		case 'c':
			if (cli_opt_capacity("--capacity", optarg, &o->capacity))
				exit(CLI_EXIT_USAGE);
			break;
		case 'a':
			if (cli_opt_arena_mb("--arena-mb", optarg, &o->arena_bytes))
				exit(CLI_EXIT_USAGE);
			break;
		case 'm':
			if (cli_opt_mode("--mode", optarg, &o->mode))
				exit(CLI_EXIT_USAGE);
			break;
		case 'g':
			rc = cli_opt_group("--group", optarg, &o->gid);
			if (rc)
				exit(rc);
			o->group = optarg;
			break;
		case 'r':
			if (cli_opt_duration("--retire-idle", optarg, &o->retire_idle_ms))
				exit(CLI_EXIT_USAGE);
			if (o->retire_idle_ms == 0)
				usage_error("--retire-idle: '%s' must be at least 1ms",
					    optarg);
			break;
		case 'H':
			rc = brk_name_validate(optarg);
			if (rc == -ENAMETOOLONG)
				usage_error("--health: '%s' is longer than %d bytes",
					    optarg, BRK_NAME_MAX);
			if (rc < 0)
				usage_error("--health: '%s' is not a record name "
					    "(1-%d bytes of A-Z a-z 0-9 . _ : / -, "
					    "no empty '/' level)", optarg, BRK_NAME_MAX);
			o->health[o->n_health++] = optarg;
			break;
		case 'B':
			if (!*optarg)
				usage_error("--breakers: empty file name");
			o->breakers = optarg;
			break;
		case 'M':
			o->metrics_listen = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(cli_flush_stdout() ? CLI_EXIT_ERROR : 0);
		case 'V':
			exit(cli_print_version());
		case ':':
			usage_error("option '%s' needs an argument",
				    argv[optind - 1]);
			break;
		default:
			if (fleet_opts_arg(&o->fleet, c, optarg))
				break;
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	fleet_opts_finish(&o->fleet);
	if (!o->breakers) {
		const char *env = getenv(BF_ENV);

		if (env)
			o->breakers = *env ? env : NULL; /* "": none */
		else if (access(BF_DEFAULT_PATH, F_OK) == 0)
			o->breakers = BF_DEFAULT_PATH;
	}
}

/* --capacity/--arena-mb apply only when creating: an existing segment of
 * another geometry is an error (never silently ignored), saying how to
 * resize. The segment is left untouched. */
static int check_geometry(const struct options *o, const char *shm,
			  brk_segment *seg)
{
	struct brk_segment_info si;
	char asked[160];
	int n = 0;

	if (brk_segment_info(seg, &si) != 0)
		return 0;
	if (o->capacity && si.capacity != o->capacity)
		n = snprintf(asked, sizeof(asked), "capacity %u records, not the "
			     "%u of --capacity", si.capacity, o->capacity);
	else if (o->arena_bytes && si.arena_bytes != o->arena_bytes)
		n = snprintf(asked, sizeof(asked), "an arena of %llu bytes, "
			     "not the %llu MiB of --arena-mb",
			     (unsigned long long)si.arena_bytes,
			     (unsigned long long)(o->arena_bytes >> 20));
	if (n == 0)
		return 0;
	fprintf(stderr, "breakerd: segment %s exists with %s: its size is fixed "
		"when it is created. To resize it: stop every worker using it "
		"and breakerd, run 'bctl --shm %s segment remove' (its records "
		"and their state are lost), then start breakerd with the new "
		"size; or start breakerd without --capacity/--arena-mb to keep "
		"this one\n", shm, asked, shm);
	return -EEXIST;
}

static int attach(const struct options *o, const char *shm, brk_segment **seg)
{
	struct brk_attach_opts ao;
	char errbuf[512];
	int rc;

	brk_attach_opts_init(&ao);
	ao.shm_name = shm;
	ao.capacity = o->capacity;
	ao.arena_bytes = o->arena_bytes;
	ao.mode = o->mode;
	ao.gid = o->gid;
	ao.flags = BRK_ATTACH_REPAIR; /* recreate a segment left half-made */
	errbuf[0] = '\0';
	ao.errbuf = errbuf;
	ao.errbuf_len = sizeof(errbuf);
	rc = brk_attach(&ao, seg);
	if (rc == -BRK_ETRUNCATED || rc == -BRK_EUNTRUSTED) {
		/* a segment someone else emptied or planted: warn, say what
		 * to do (errbuf), never re-make it (issue 22) */
		struct logline l;

		ll_begin(&l, "warn", rc == -BRK_ETRUNCATED ? "segment truncated"
							   : "segment owner not trusted");
		ll_str(&l, "shm", shm);
		ll_str(&l, "err", errbuf[0] ? errbuf : brk_strerror(rc));
		ll_end(&l);
		return rc;
	}
	if (rc < 0) {
		if (errbuf[0])
			fprintf(stderr, "breakerd: %s\n", errbuf);
		else
			fprintf(stderr, "breakerd: segment %s: %s\n", shm,
				brk_strerror(rc));
		return rc;
	}
	rc = check_geometry(o, shm, *seg);
	if (rc < 0) {
		brk_detach(*seg);
		*seg = NULL;
	}
	return rc;
}

static void log_start(const struct options *o, brk_segment *seg)
{
	struct brk_segment_info si;
	struct logline l;
	int other;

	if (brk_segment_info(seg, &si) != 0)
		memset(&si, 0, sizeof(si));
	/* Another supervisor with a fresh heartbeat: both are safe (reclaim
	 * is one CAS per lease), but the operator should know. */
	other = si.daemon_pid > 0 && si.daemon_pid != getpid() &&
		si.heartbeat_age_ms != UINT64_MAX &&
		si.heartbeat_age_ms < 2 * si.daemon_interval_ms + 1000 &&
		(kill(si.daemon_pid, 0) == 0 || errno == EPERM);

	ll_begin(&l, "info", "starting");
	ll_str(&l, "shm", si.shm_name);
	ll_i64(&l, "pid", getpid());
	ll_u64(&l, "interval_ms", o->interval_ms);
	if (o->retire_idle_ms)
		ll_u64(&l, "retire_idle_ms", o->retire_idle_ms);
	if (o->n_health)
		ll_u64(&l, "health_names", o->n_health);
	ll_str(&l, "created", si.creator_pid == getpid() ? "true" : "false");
	ll_u64(&l, "capacity", si.capacity);
	ll_u64(&l, "used", si.used);
	ll_u64(&l, "size", si.total_size);
	ll_u64(&l, "layout", si.layout_version);
	ll_u64(&l, "events_written", si.events_written);
	if (si.creator_pid == getpid() && o->group)
		ll_str(&l, "group", o->group);
	ll_end(&l);
	if (other) {
		ll_begin(&l, "warn", "another breakerd seems to be running");
		ll_i64(&l, "other_pid", si.daemon_pid);
		ll_u64(&l, "heartbeat_age_ms", si.heartbeat_age_ms);
		ll_end(&l);
	}
}

int main(int argc, char **argv)
{
	struct options o;
	struct breakers bk;
	struct logline l;
	struct metrics_http *mh = NULL;
#ifdef BREAKERD_HAVE_HIREDIS
	struct fleet_conf fc;
	struct fleet_link *fl = NULL;
#endif
	brk_segment *seg = NULL;
	const char *shm;
	int rc, sig, metrics_fd = -1;

	if (cli_std_fds_open() < 0)
		return CLI_EXIT_ERROR;
	cli_set_prog("breakerd");
	cli_set_usage_hint(USAGE_HINT);
	parse_options(argc, argv, &o);
	shm = brk_resolve_shm_name(o.shm_flag);
	if (brk_shm_name_validate(shm) != 0) {
		fprintf(stderr, "breakerd: segment name '%s' (from $%s) is not "
			"of the form /name\n", shm, BRK_SHM_ENV);
		free(o.health);
		return CLI_EXIT_USAGE;
	}
#ifdef BREAKERD_HAVE_HIREDIS
	if (o.fleet.url)
		fleet_opts_conf(&o.fleet, shm, &fc); /* a usage error exits 2 here */
#endif
	/* Bound before the attach: a bad or busy address is a usage error
	 * that leaves the segment alone. */
	if (o.metrics_listen) {
		metrics_fd = metrics_http_bind(o.metrics_listen);
		if (metrics_fd < 0) {
			free(o.health);
			return -metrics_fd;
		}
	}
	rc = supervise_signals_init();
	if (rc < 0) {
		fprintf(stderr, "breakerd: signals: %s\n", strerror(-rc));
		if (metrics_fd >= 0)
			close(metrics_fd);
		free(o.health);
		return 1;
	}
	if (attach(&o, shm, &seg) < 0) {
		if (metrics_fd >= 0)
			close(metrics_fd);
		free(o.health); /* exits 1 clean: no leak report under ASan */
		return 1;
	}
	log_start(&o, seg);
	rc = breakers_start(&bk, o.breakers, seg);
	if (rc) {
		if (metrics_fd >= 0)
			close(metrics_fd);
		breakers_end(&bk);
		brk_daemon_leave(seg);
		brk_detach(seg);
		free(o.health);
		return rc;
	}
	supervise_set_reload(breakers_reload, &bk);
	supervise_watch(seg);
	notify_init();
	if (metrics_fd >= 0) {
		/* after supervise_signals_init(): its thread inherits the
		 * blocked SIGTERM/SIGINT/SIGHUP */
		mh = metrics_http_start(metrics_fd, shm);
		if (!mh) {
			breakers_end(&bk);
			brk_daemon_leave(seg);
			brk_detach(seg);
			free(o.health);
			return 1;
		}
	}
#ifdef BREAKERD_HAVE_HIREDIS
	/* after supervise_signals_init() as the HTTP thread; Redis being
	 * down is not an error here: the link retries on its own */
	if (o.fleet.url) {
		fleet_opts_log(&o.fleet);
		fl = fleet_start(&fc);
		if (!fl) {
			metrics_http_stop(mh);
			breakers_end(&bk);
			brk_daemon_leave(seg);
			brk_detach(seg);
			free(o.health);
			return 1;
		}
		/* the one-probe election (fleet_probe = 1 breakers) */
		rc = fleet_probe_start(&fc, shm);
		if (rc < 0) {
			ll_begin(&l, "error", "fleet probe: cannot start");
			ll_str(&l, "err", brk_strerror(rc));
			ll_end(&l);
		}
	}
#endif

	sig = supervise_run(seg, o.interval_ms, o.retire_idle_ms,
			    (const char *const *)o.health, o.n_health);

	notify_stopping();
	if (sig < 0) { /* cut short (logged): touch nothing of it past here */
#ifdef BREAKERD_HAVE_HIREDIS
		fleet_probe_stop();
		fleet_stop(fl);
#endif
		metrics_http_stop(mh);
		breakers_end(&bk);
		free(o.health);
		return 1;
	}
	ll_begin(&l, "info", "stopping");
	ll_str(&l, "shm", shm);
	ll_str(&l, "signal", sig == SIGINT ? "INT" : "TERM");
	ll_end(&l);
#ifdef BREAKERD_HAVE_HIREDIS
	fleet_probe_stop();
	fleet_stop(fl);
#endif
	metrics_http_stop(mh);
	breakers_end(&bk);
	brk_daemon_leave(seg);
	brk_detach(seg);
	free(o.health);
	return 0;
}
