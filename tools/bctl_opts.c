/*
 * bctl_opts.c - option glue shared by the bctl commands: getopt_long with
 * our own one-line messages, the options every command accepts, and the
 * NAME operand.
 */
#include <errno.h>
#include <string.h>

#include "bctl.h"

const struct option bctl_opts_common[] = {
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

int bctl_getopt(int argc, char **argv, const char *shortopts,
		const struct option *longopts)
{
	return cli_getopt(argc, argv, shortopts, longopts);
}

/* The argument getopt just complained about. */
static const char *bctl_bad_arg(int argc, char **argv)
{
	if (optind > 0 && optind <= argc && argv[optind - 1])
		return argv[optind - 1];
	return "?";
}

static int bctl_opt_error(int c, int argc, char **argv)
{
	const char *arg = bctl_bad_arg(argc, argv);
	int is_long = arg[0] == '-' && arg[1] == '-';

	if (c == ':' && !is_long)
		return cli_usage_error("option '-%c' needs a value", optopt);
	if (c == ':')
		return cli_usage_error("option '%s' needs a value", cli_q(arg));
	if (optopt && !is_long && optopt < 0x100)
		return cli_usage_error("unknown option '-%c'", optopt);
	if (optopt && is_long)
		return cli_usage_error("option '%s' takes no value", cli_q(arg));
	return cli_usage_error("unknown option '%s'", cli_q(arg));
}

int bctl_opt_common(struct bctl *g, int c, int argc, char **argv)
{
	switch (c) {
	case BCTL_OPT_SHM:
		g->shm_flag = optarg;
		return BCTL_CONTINUE;
	case BCTL_OPT_VERBOSE:
	case 'v':
		g->verbose++;
		return BCTL_CONTINUE;
	case BCTL_OPT_HELP:
	case 'h':
		return bctl_help();
	case BCTL_OPT_VERSION:
		return cli_print_version();
	case '?':
	case ':':
		return bctl_opt_error(c, argc, argv);
	default:
		return cli_usage_error("unexpected option '%s'",
				       cli_q(bctl_bad_arg(argc, argv)));
	}
}

int bctl_check_name(const char *name)
{
	int rc = brk_name_validate(name);

	if (rc == 0)
		return 0;
	if (*name == '\0')
		return cli_usage_error("invalid breaker name '': empty");
	if (rc == -ENAMETOOLONG)
		return cli_usage_error("invalid breaker name '%s': %zu bytes, at most %d",
				       cli_q(name), strlen(name), BRK_NAME_MAX);
	return cli_usage_error("invalid breaker name '%s': use 1-%d bytes of A-Z a-z 0-9 . _ : / - "
			       "with no empty '/' level", cli_q(name), BRK_NAME_MAX);
}

int bctl_name_arg(const char *cmd, int argc, char **argv, const char **name)
{
	return bctl_record_arg(cmd, "breaker ", argc, argv, name);
}

int bctl_record_arg(const char *cmd, const char *what, int argc, char **argv,
		    const char **name)
{
	if (optind >= argc)
		return cli_usage_error("%s: missing %sNAME", cmd, what);
	if (optind + 1 < argc)
		return cli_usage_error("%s: unexpected argument '%s'", cmd,
				       cli_q(argv[optind + 1]));
	*name = argv[optind];
	return bctl_check_name(*name);
}

int bctl_no_args(const char *cmd, int argc, char **argv)
{
	if (optind < argc)
		return cli_usage_error("%s: unexpected argument '%s'", cmd,
				       cli_q(argv[optind]));
	return 0;
}
