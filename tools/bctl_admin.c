/*
 * bctl_admin.c - the operator's overrides, all on an existing breaker:
 *   bctl reset NAME              force closed, back to normal mode
 *   bctl trip NAME --for DUR     force open for DUR
 *   bctl force-open NAME         forced state: refuse every call
 *   bctl disable NAME            forced state: admit every call, count
 *                                outcomes, never transition
 *   bctl metrics-only NAME       forced state: run the state machine and
 *                                count, but never refuse
 * A forced state lasts until `bctl reset NAME` (brk_set_mode()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "bctl.h"

enum { OPT_FOR = BCTL_OPT_FIRST_CMD };

const struct option bctl_opts_admin[] = {
	{ "for", required_argument, NULL, OPT_FOR },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

/*
 * Options of reset and trip; --for only where @for_ms is not NULL.
 * Returns BCTL_CONTINUE or an exit status.
 */
static int admin_parse(struct bctl *g, const char *cmd, int argc, char **argv,
		       uint64_t *for_ms, int *have_for)
{
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", bctl_opts_admin)) != -1) {
		if (c == OPT_FOR && !for_ms)
			return cli_usage_error("%s: unknown option '--for'", cmd);
		if (c == OPT_FOR) {
			rc = cli_opt_duration("--for", optarg, for_ms);
			if (rc)
				return rc;
			*have_for = 1;
			continue;
		}
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	return BCTL_CONTINUE;
}

/* Attach (never create) and find @name. */
static int admin_open(const struct bctl *g, const char *name,
		      brk_segment **seg, brk_breaker **b)
{
	int rc = bctl_attach(g, BRK_ATTACH_NOCREATE, name, seg);

	if (rc)
		return rc;
	rc = bctl_find(g, *seg, name, b);
	if (rc) {
		brk_detach(*seg);
		*seg = NULL;
	}
	return rc;
}

int bctl_cmd_reset(struct bctl *g, int argc, char **argv)
{
	brk_segment *seg;
	brk_breaker *b;
	const char *name;
	int rc;

	rc = admin_parse(g, "reset", argc, argv, NULL, NULL);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_name_arg("reset", argc, argv, &name);
	if (rc)
		return rc;
	rc = admin_open(g, name, &seg, &b);
	if (rc)
		return rc;
	rc = brk_reset(b);
	if (rc < 0)
		rc = bctl_fail(g, name, rc);
	else
		printf("%s: reset: closed, normal mode; counts, cooling level and "
		       "leases cleared\n", name);
	brk_detach(seg);
	return rc;
}

static int trip_report(const struct bctl *g, brk_breaker *b, const char *name,
		       int rc, uint64_t for_ms)
{
	struct brk_info in;

	if (rc == 0) {
		/* the library caps every cooling period at max_open (issue 22):
		 * say the period set, not the one asked for */
		if (brk_breaker_info(b, &in) == 0 && in.config.max_open_ms < for_ms)
			printf("%s: open for %" PRIu64 " ms (capped at max_open)\n",
			       name, in.config.max_open_ms);
		else
			printf("%s: open for %" PRIu64 " ms\n", name, for_ms);
		return 0;
	}
	if (rc != -EALREADY)
		return bctl_fail(g, name, rc);
	if (brk_breaker_info(b, &in) == 0)
		cli_note("%s: already open (%" PRIu64 " ms left), not extended",
			 name, in.open_remaining_ms);
	else
		cli_note("%s: already open, not extended", name);
	return 0;
}

int bctl_cmd_trip(struct bctl *g, int argc, char **argv)
{
	brk_segment *seg;
	brk_breaker *b;
	const char *name;
	uint64_t for_ms = 0;
	int rc, have_for = 0;

	rc = admin_parse(g, "trip", argc, argv, &for_ms, &have_for);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_name_arg("trip", argc, argv, &name);
	if (rc)
		return rc;
	if (!have_for)
		return cli_usage_error("trip: missing --for DUR");
	if (for_ms == 0)
		return cli_usage_error("trip: --for must be at least 1ms");
	rc = admin_open(g, name, &seg, &b);
	if (rc)
		return rc;
	rc = trip_report(g, b, name, brk_trip(b, for_ms), for_ms);
	brk_detach(seg);
	return rc;
}

/* The forced states: indexed by the bctl_cmd_* functions below. */
static const struct {
	const char *cmd;
	int mode;
	const char *what; /* what it does, for the confirmation line */
} mode_cmds[] = {
	{ "force-open", BRK_MODE_FORCED_OPEN,
	  "every call refused until 'bctl reset'" },
	{ "disable", BRK_MODE_DISABLED,
	  "every call admitted, outcomes counted, no transition until 'bctl reset'" },
	{ "metrics-only", BRK_MODE_METRICS_ONLY,
	  "state machine runs and counts, no call refused until 'bctl reset'" },
};

/* `bctl CMD NAME` for mode_cmds[@k]. -EALREADY is a note, not an error. */
static int mode_cmd(struct bctl *g, size_t k, int argc, char **argv)
{
	const char *cmd = mode_cmds[k].cmd;
	int mode = mode_cmds[k].mode;
	brk_segment *seg;
	brk_breaker *b;
	const char *name;
	int rc;

	rc = admin_parse(g, cmd, argc, argv, NULL, NULL);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_name_arg(cmd, argc, argv, &name);
	if (rc)
		return rc;
	rc = admin_open(g, name, &seg, &b);
	if (rc)
		return rc;
	rc = brk_set_mode(b, mode);
	if (rc == -EALREADY) {
		cli_note("%s: already %s, unchanged", name, brk_mode_name(mode));
		rc = 0;
	} else if (rc < 0) {
		rc = bctl_fail(g, name, rc);
	} else {
		printf("%s: %s: %s\n", name, brk_mode_name(mode),
		       mode_cmds[k].what);
	}
	brk_detach(seg);
	return rc;
}

int bctl_cmd_force_open(struct bctl *g, int argc, char **argv)
{
	return mode_cmd(g, 0, argc, argv);
}

int bctl_cmd_disable(struct bctl *g, int argc, char **argv)
{
	return mode_cmd(g, 1, argc, argv);
}

int bctl_cmd_metrics_only(struct bctl *g, int argc, char **argv)
{
	return mode_cmd(g, 2, argc, argv);
}
