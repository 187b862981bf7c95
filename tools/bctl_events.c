/*
 * bctl_events.c - `bctl events [--follow] [--json]`: the transitions and
 * reclaims in the segment's event ring, oldest first; --follow polls every
 * 20 ms until SIGINT or SIGTERM, and writes each event as soon as it is
 * read (stdout line-buffered even on a pipe), so a transition made by
 * another process shows within about one poll interval.
 *
 * The ring holds BRK__EVENT_SLOTS (4096) events. A reader that falls more
 * than that behind loses the overwritten ones; brk_events_read() counts
 * them exactly. After the first read (events older than the ring at start
 * are not "lost", merely before our time) every loss is reported, where it
 * happened in the stream: "bctl: N events lost (...)" on stderr, and with
 * --json also the line {"lost":N} on stdout; then reading resumes with the
 * oldest event still kept.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bctl.h"
#include "bctl_out.h"

#define EVENTS_BATCH 64
#define FOLLOW_POLL_NS (20 * 1000 * 1000L)

enum { OPT_FOLLOW = BCTL_OPT_FIRST_CMD };

static volatile sig_atomic_t events_stop;

static void events_on_signal(int sig)
{
	(void)sig;
	events_stop = 1;
}

const struct option bctl_opts_events[] = {
	{ "json", no_argument, NULL, BCTL_OPT_JSON },
	{ "follow", no_argument, NULL, OPT_FOLLOW },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static int events_parse(struct bctl *g, int argc, char **argv, int *json,
			int *follow)
{
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":fhv", bctl_opts_events)) != -1) {
		if (c == BCTL_OPT_JSON) {
			*json = 1;
		} else if (c == OPT_FOLLOW || c == 'f') {
			*follow = 1;
		} else {
			rc = bctl_opt_common(g, c, argc, argv);
			if (rc != BCTL_CONTINUE)
				return rc;
		}
	}
	return BCTL_CONTINUE;
}

/* SIGINT/SIGTERM end --follow; no SA_RESTART so the sleep is cut short. */
static void events_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = events_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Report @lost overwritten events: stderr, and in-band for --json. */
static int events_lost(uint64_t lost, int json)
{
	json_t *o;

	if (json) {
		o = json_object();
		if (o)
			json_object_set_new(o, "lost", json_integer(
				lost > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)lost));
		if (bctl_json_put(o, 1) < 0)
			return -1;
	}
	fflush(stdout); /* both streams in order on a terminal */
	cli_note("%" PRIu64 " events lost (the ring was overwritten; "
		 "reading resumes with the oldest still kept)", lost);
	return 0;
}

/* Read and print everything available. Returns 0 or -1 (write error). */
static int events_drain(brk_segment *seg, uint64_t *cursor, int json,
			int first)
{
	struct brk_event ev[EVENTS_BATCH];
	uint64_t lost = 0;
	int n, i;

	do {
		n = brk_events_read(seg, cursor, ev, EVENTS_BATCH, &lost);
		if (lost && !first && events_lost(lost, json) < 0)
			return -1;
		first = 0;
		for (i = 0; i < n; i++) {
			if (json && bctl_json_put(bctl_json_event(&ev[i]), 1) < 0)
				return -1;
			if (!json)
				bctl_print_event(stdout, &ev[i]);
		}
	} while (n == EVENTS_BATCH && !events_stop);
	return fflush(stdout) == EOF || ferror(stdout) ? -1 : 0;
}

static int events_run(brk_segment *seg, int json, int follow)
{
	struct timespec ts = { 0, FOLLOW_POLL_NS };
	uint64_t cursor = 1;
	int first = 1;

	if (follow) {
		events_signals();
		/* One event, one write: a reader on a pipe sees it at once. */
		setvbuf(stdout, NULL, _IOLBF, 0);
	}
	do {
		if (events_drain(seg, &cursor, json, first) < 0)
			return cli_error("write error on standard output");
		first = 0;
		if (follow && !events_stop)
			nanosleep(&ts, NULL);
	} while (follow && !events_stop);
	return 0;
}

int bctl_cmd_events(struct bctl *g, int argc, char **argv)
{
	brk_segment *seg;
	int json = 0, follow = 0, rc;

	rc = events_parse(g, argc, argv, &json, &follow);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_no_args("events", argc, argv);
	if (rc)
		return rc;
	rc = bctl_attach(g, BCTL_ATTACH_INSPECT, NULL, &seg);
	if (rc)
		return rc;
	rc = events_run(seg, json, follow);
	brk_detach(seg);
	return rc;
}
