/*
 * options.c - breakerd-demo's command line (getopt_long).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_api.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: breakerd-demo [--workers N] [--up DUR] [--down DUR] [--after DUR]\n"
		"                     [--interval DUR] [--retries N] [--upstream PATH]\n"
		"                     [--python PATH] [--json]\n"
		"\n"
		"Runs N forked workers against a loopback HTTP upstream that is up for\n"
		"--up, answers 503 for --down, then is up again for --after; once\n"
		"without and once with a shared breakerd breaker, and compares.\n"
		"\n"
		"  --workers N      worker processes (default %u)\n"
		"  --up DUR         upstream healthy before the outage (default %ums)\n"
		"  --down DUR       outage: every request gets 503 (default %ums)\n"
		"  --after DUR      run on after the upstream recovers (default %ums)\n"
		"  --interval DUR   each worker makes one call per DUR (default %ums)\n"
		"  --retries N      naive immediate retries per failed call (default %u)\n"
		"  --upstream PATH  the upstream script (default %s)\n"
		"  --python PATH    the interpreter (default python3 from PATH)\n"
		"  --json           print the figures as one JSON object\n"
		"DUR: 250ms, 3s, 1m ...\n",
		DEMO_DEFAULT_WORKERS, DEMO_DEFAULT_UP_MS, DEMO_DEFAULT_DOWN_MS,
		DEMO_DEFAULT_AFTER_MS, DEMO_DEFAULT_INTERVAL_MS,
		DEMO_DEFAULT_RETRIES, DEMO_UPSTREAM_PY);
}

static int parse_count(const char *opt, const char *s, unsigned lo,
		       unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "breakerd-demo: %s: expected %u..%u, got '%s'\n",
			opt, lo, hi, s);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

static int parse_dur(const char *opt, const char *s, uint64_t lo,
		     uint64_t *out)
{
	uint64_t ms;
	int rc = brk_parse_duration(s, &ms);

	if (rc == 0 && (ms < lo || ms > DEMO_MAX_PHASE_MS))
		rc = -ERANGE;
	if (rc) {
		fprintf(stderr,
			"breakerd-demo: %s: expected a duration from %llums to %ums"
			" such as 250ms or 3s, got '%s'\n", opt,
			(unsigned long long)lo, DEMO_MAX_PHASE_MS, s);
		return -EINVAL;
	}
	*out = ms;
	return 0;
}

static void opts_defaults(struct demo_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->workers = DEMO_DEFAULT_WORKERS;
	o->up_ms = DEMO_DEFAULT_UP_MS;
	o->down_ms = DEMO_DEFAULT_DOWN_MS;
	o->after_ms = DEMO_DEFAULT_AFTER_MS;
	o->interval_ms = DEMO_DEFAULT_INTERVAL_MS;
	o->retries = DEMO_DEFAULT_RETRIES;
	o->upstream_py = DEMO_UPSTREAM_PY;
	o->python = "python3";
}

static int apply_opt(int c, const char *arg, struct demo_opts *o)
{
	switch (c) {
	case 'w':
		return parse_count("--workers", arg, 1, DEMO_MAX_WORKERS,
				   &o->workers);
	case 'u':
		return parse_dur("--up", arg, 0, &o->up_ms);
	case 'd':
		return parse_dur("--down", arg, 1, &o->down_ms);
	case 'a':
		return parse_dur("--after", arg, 1, &o->after_ms);
	case 'i':
		return parse_dur("--interval", arg, 1, &o->interval_ms);
	case 'r':
		return parse_count("--retries", arg, 0, DEMO_MAX_RETRIES,
				   &o->retries);
	case 'U':
		o->upstream_py = arg;
		o->upstream_given = 1;
		return 0;
	case 'p':
		o->python = arg;
		return 0;
	case 'j':
		o->json = 1;
		return 0;
	default:
		return -EINVAL;
	}
}

/**
 * demo_parse_opts - fill @o from the command line.
 * Returns 0, 1 if --help was printed, or -EINVAL (usage error, reported).
 */
int demo_parse_opts(int argc, char **argv, struct demo_opts *o)
{
	static const struct option longopts[] = {
		{ "workers", required_argument, NULL, 'w' },
		{ "up", required_argument, NULL, 'u' },
		{ "down", required_argument, NULL, 'd' },
		{ "after", required_argument, NULL, 'a' },
		{ "interval", required_argument, NULL, 'i' },
		{ "retries", required_argument, NULL, 'r' },
		{ "upstream", required_argument, NULL, 'U' },
		{ "python", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opts_defaults(o);
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (apply_opt(c, optarg, o)) {
			fprintf(stderr, "Try 'breakerd-demo --help'.\n");
			return -EINVAL;
		}
	}
	if (o->after_ms < DEMO_MAX_OPEN_MS + o->interval_ms)
		fprintf(stderr, "breakerd-demo: note: with --after below %llu ms"
			" the breaker may not probe the recovered upstream"
			" before the run ends\n",
			(unsigned long long)(DEMO_MAX_OPEN_MS + o->interval_ms));
	if (optind < argc) {
		fprintf(stderr, "breakerd-demo: unexpected argument '%s'\n"
			"Try 'breakerd-demo --help'.\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}
