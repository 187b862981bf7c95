/*
 * bctl.c - the bctl command line: global options and the command table.
 *
 *   bctl [--shm NAME] [-v] COMMAND [ARGS...]
 *
 * See bctl_help.c for the commands and docs/design.md for the contract.
 */
#include <string.h>

#include "bctl.h"

struct bctl_cmd {
	const char *name;
	int (*run)(struct bctl *g, int argc, char **argv);
};

static const struct bctl_cmd bctl_cmds[] = {
	{ "list", bctl_cmd_list },
	{ "inspect", bctl_cmd_inspect },
	{ "config", bctl_cmd_config },
	{ "apply", bctl_cmd_apply },
	{ "reset", bctl_cmd_reset },
	{ "trip", bctl_cmd_trip },
	{ "force-open", bctl_cmd_force_open },
	{ "disable", bctl_cmd_disable },
	{ "metrics-only", bctl_cmd_metrics_only },
	{ "events", bctl_cmd_events },
	{ "metrics", bctl_cmd_metrics },
	{ "exec", bctl_cmd_exec },
	{ "bucket", bctl_cmd_bucket },
	{ "pace", bctl_cmd_pace },
	{ "take", bctl_cmd_take },
	{ "budget", bctl_cmd_budget },
	{ "retire", bctl_cmd_retire },
	{ "health", bctl_cmd_health },
	{ "fallback", bctl_cmd_fallback },
	{ "segment", bctl_cmd_segment },
};

static const struct bctl_cmd *bctl_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(bctl_cmds) / sizeof(bctl_cmds[0]); i++)
		if (strcmp(bctl_cmds[i].name, name) == 0)
			return &bctl_cmds[i];
	return NULL;
}

/* Options before the command; stops at the first operand. */
static int bctl_global_opts(struct bctl *g, int argc, char **argv)
{
	static const struct option lo[] = { BCTL_COMMON_LONGOPTS,
					    { NULL, 0, NULL, 0 } };
	int c, rc;

	while ((c = bctl_getopt(argc, argv, "+:hv", lo)) != -1) {
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
	if (strcmp(argv[optind], "help") == 0) {
		bctl_help();
		return 0;
	}
	cmd = bctl_lookup(argv[optind]);
	if (!cmd)
		return cli_usage_error("unknown command '%s'", cli_q(argv[optind]));
	return cmd->run(&g, argc - optind, argv + optind);
}
