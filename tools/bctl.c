/*
 * bctl.c - the bctl command line: global options and the command table.
 *
 *   bctl [--shm NAME] [-v] COMMAND [ARGS...]
 *
 * See bctl_help.c for the commands and docs/design/index.md for the contract.
 */
#include <string.h>

#include "bctl.h"

/* The commands: name, run, options, operands, subcommands (struct bctl_cmd
 * in bctl.h). `bctl __complete` reads this table too. */
#define C(name, run, opts, operands) { name, run, opts, NULL, operands, NULL }
static const struct bctl_cmd bctl_cmds[] = {
	C("list", bctl_cmd_list, bctl_opts_list, NULL),
	C("inspect", bctl_cmd_inspect, bctl_opts_inspect, "NAME"),
	{ "config", bctl_cmd_config, NULL, bctl_opts_config, "BREAKER", NULL },
	C("apply", bctl_cmd_apply, bctl_opts_apply, "FILE"),
	/* reset & co. parse with bctl_opts_admin only to refuse its --for
	 * with a message naming the command: they have the common options */
	C("reset", bctl_cmd_reset, bctl_opts_common, "BREAKER"),
	C("trip", bctl_cmd_trip, bctl_opts_admin, "BREAKER"),
	C("force-open", bctl_cmd_force_open, bctl_opts_common, "BREAKER"),
	C("disable", bctl_cmd_disable, bctl_opts_common, "BREAKER"),
	C("metrics-only", bctl_cmd_metrics_only, bctl_opts_common, "BREAKER"),
	C("events", bctl_cmd_events, bctl_opts_events, NULL),
	C("metrics", bctl_cmd_metrics, bctl_opts_metrics, NULL),
	C("exec", bctl_cmd_exec, bctl_opts_exec, "BREAKER --CMD"),
	C("bucket", bctl_cmd_bucket, bctl_opts_bucket, "BUCKET"),
	C("pace", bctl_cmd_pace, bctl_opts_pace, "PACE"),
	C("take", bctl_cmd_take, bctl_opts_common, "BUCKET N"),
	C("budget", bctl_cmd_budget, bctl_opts_budget, "BUDGET"),
	C("retire", bctl_cmd_retire, bctl_opts_retire, "NAME..."),
	C("health", bctl_cmd_health, bctl_opts_health, "NAME"),
	C("fallback", bctl_cmd_fallback, bctl_opts_common, "BREAKER on|off"),
	{ "segment", bctl_cmd_segment, bctl_opts_common, NULL, NULL,
	  bctl_segment_subs },
	C("help", bctl_cmd_help, bctl_opts_common, NULL),
};
#undef C

#define BCTL_NCMDS (sizeof(bctl_cmds) / sizeof(bctl_cmds[0]))

static const struct bctl_cmd *bctl_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < BCTL_NCMDS; i++)
		if (strcmp(bctl_cmds[i].name, name) == 0)
			return &bctl_cmds[i];
	return NULL;
}

/* Options before the command; stops at the first operand. */
static int bctl_global_opts(struct bctl *g, int argc, char **argv)
{
	int c, rc;

	while ((c = bctl_getopt(argc, argv, "+:hv", bctl_opts_common)) != -1) {
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	return BCTL_CONTINUE;
}

int main(int argc, char **argv)
{
	struct bctl g = { NULL, 0 };
	const struct bctl_cmd *cmd;
	int rc;

	cli_set_prog("bctl");
	if (cli_std_fds_open() < 0)
		return CLI_EXIT_ERROR;
	if (argc < 1)
		return cli_usage_error("no arguments");
	rc = bctl_global_opts(&g, argc, argv);
	if (rc != BCTL_CONTINUE)
		return rc;
	if (optind >= argc)
		return cli_usage_error("missing command");
	/* hidden: what the shell completion asks (bctl_complete.c) */
	if (strcmp(argv[optind], "__complete") == 0)
		return bctl_complete(&g, bctl_cmds, BCTL_NCMDS, argc - optind,
				     argv + optind);
	cmd = bctl_lookup(argv[optind]);
	if (!cmd)
		return cli_usage_error("unknown command '%s'", cli_q(argv[optind]));
	return cmd->run(&g, argc - optind, argv + optind);
}
