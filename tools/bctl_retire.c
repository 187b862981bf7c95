/*
 * bctl_retire.c - `bctl retire [--idle DUR] [NAME...]`: retire records so
 * their names and slots can be used again (brk_retire()).
 *
 *   bctl retire NAME...             retire each now if it holds no lease
 *                                   and (a breaker) is closed in mode normal
 *   bctl retire --idle DUR NAME...  ... and only if no activity for DUR
 *   bctl retire --idle DUR          every record idle for DUR
 *
 * Idleness is what the sweep saw (brk_retire_idle(): breakerd
 * --retire-idle, or an earlier `bctl retire --idle`): a record not yet
 * watched for DUR is kept, and this run starts watching it. One line per
 * record retired, one per record kept with the reason; exit 0 when every
 * named record was retired (or, without names, always), 75 when one was
 * kept, 1 on an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bctl.h"

enum { OPT_IDLE = BCTL_OPT_FIRST_CMD };

const struct option bctl_opts_retire[] = {
	{ "idle", required_argument, NULL, OPT_IDLE },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

/* Why brk_retire() said -EBUSY for @name, in words. */
static const char *busy_why(brk_segment *seg, const char *name,
			    uint64_t idle_ms, char *buf, size_t n)
{
	brk_breaker *b;
	struct brk_info in;
	struct brk_health h;

	if (bctl_kind_of(seg, name) == BRK_KIND_BREAKER &&
	    brk_breaker_find(seg, name, &b) == 0 && brk_breaker_info(b, &in) == 0) {
		if (in.in_flight || in.probes_in_flight) {
			snprintf(buf, n, "a lease is held (%u permits, %u probes)",
				 in.in_flight, in.probes_in_flight);
			return buf;
		}
		if (in.state != BRK_CLOSED) {
			snprintf(buf, n, "not closed (%s)", brk_state_name(in.state));
			return buf;
		}
		if (in.mode != BRK_MODE_NORMAL) {
			snprintf(buf, n, "in mode %s", brk_mode_name(in.mode));
			return buf;
		}
		if (brk_health(seg, name, &h) == 0 && h.state == BRK_HEALTH_FALLBACK &&
		    strcmp(h.by, name) == 0) {
			snprintf(buf, n, "in fallback (bctl fallback %s off first)", name);
			return buf;
		}
	}
	snprintf(buf, n, "active within the last %" PRIu64 " ms, or not watched "
		 "that long yet", idle_ms);
	return buf;
}

/* Retire @name; print the line. 0 retired, 1 kept, -1 error. */
static int retire_one(const struct bctl *g, brk_segment *seg, const char *name,
		      uint64_t idle_ms, int quiet_kept)
{
	char why[160];
	int rc = brk_retire(seg, name, idle_ms);

	if (rc == 0) {
		if (idle_ms)
			printf("%s: retired (idle for at least %" PRIu64 " ms)\n",
			       name, idle_ms);
		else
			printf("%s: retired\n", name);
		return 0;
	}
	if (rc == -EBUSY) {
		if (!quiet_kept)
			printf("%s: kept: %s\n", name,
			       busy_why(seg, name, idle_ms, why, sizeof why));
		return 1;
	}
	if (rc == -ENOENT)
		cli_error("%s: no record named '%s'", cli_q(bctl_shm(g)), cli_q(name));
	else
		bctl_fail(g, name, rc);
	return -1;
}

/* Every record: brk_retire() on each name (with idle_ms, which also notes
 * what it sees, as the sweep does), so every retirement is named. */
static int retire_all(const struct bctl *g, brk_segment *seg, uint64_t idle_ms)
{
	struct brk_record_brief in;
	uint32_t kept = 0, done = 0;
	uint64_t cur = 0;
	int rc = 0, r;

	/* the name index in order (brk_record_next_brief()); a retirement
	 * turns a slot into a tomb and moves no other, so the walk goes on */
	while ((r = brk_record_next_brief(seg, &cur, &in)) != -ENOENT) {
		if (r != 0)
			continue; /* a damaged slot: brk_record_next says which */
		r = retire_one(g, seg, in.name, idle_ms, !g->verbose);
		if (r == 0)
			done++;
		else if (r == 1)
			kept++;
		else
			rc = CLI_EXIT_ERROR;
	}
	printf("retired %u, kept %u%s\n", done, kept,
	       kept && !g->verbose ? " (-v: why, one line each)" : "");
	return rc;
}

int bctl_cmd_retire(struct bctl *g, int argc, char **argv)
{
	brk_segment *seg;
	uint64_t idle_ms = 0;
	int c, rc, have_idle = 0, status = 0, i;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", bctl_opts_retire)) != -1) {
		if (c == OPT_IDLE) {
			rc = cli_opt_duration("--idle", optarg, &idle_ms);
			if (rc)
				return rc;
			have_idle = 1;
			continue;
		}
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	if (have_idle && idle_ms == 0)
		return cli_usage_error("retire: --idle must be at least 1ms");
	if (optind >= argc && !have_idle)
		return cli_usage_error("retire: every record needs --idle DUR "
				       "(or name the records)");
	for (i = optind; i < argc; i++)
		if (bctl_check_name(argv[i]))
			return CLI_EXIT_USAGE;
	rc = bctl_attach(g, BRK_ATTACH_NOCREATE, optind < argc ? argv[optind] : NULL,
			 &seg);
	if (rc)
		return rc;
	if (optind >= argc) {
		status = retire_all(g, seg, idle_ms);
	} else {
		for (i = optind; i < argc; i++) {
			int r;

			r = retire_one(g, seg, argv[i], idle_ms, 0);
			if (r < 0)
				status = CLI_EXIT_ERROR;
			else if (r == 1 && status == 0)
				status = BCTL_EXIT_TEMPFAIL;
		}
	}
	brk_detach(seg);
	return status;
}
