/*
 * bctl_complete.c - the hidden `bctl __complete WHAT ...`: what the bash
 * completion (tools/bctl.bash-completion) offers, read from the command
 * table bctl dispatches on (struct bctl_cmd, bctl.c) and from the segment,
 * so the completion has no list of its own that could drift from bctl.
 * See bctl_complete() in bctl.h for the questions and their answers.
 *
 * Everything goes to stdout one word a line; errors are the usual one-line
 * messages on stderr (the completion discards them) and print nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bctl.h"
#include "record_filter.h"

/* A name that starts with "__" is hidden (not offered). */
static int hidden(const char *name)
{
	return name[0] == '_' && name[1] == '_';
}

static const struct bctl_cmd *find_cmd(const struct bctl_cmd *cmds, size_t n,
				       const char *name)
{
	size_t i;

	for (i = 0; i < n && cmds[i].name; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

/* CMD [SUB] from @argv (at least one word): the command, or its
 * subcommand if it has subcommands and SUB names one. NULL: unknown. */
static const struct bctl_cmd *cmd_of(const struct bctl_cmd *cmds, size_t n,
				     int argc, char **argv)
{
	const struct bctl_cmd *c = find_cmd(cmds, n, argv[0]);
	const struct bctl_cmd *s;
	size_t ns = 0;

	if (!c || !c->subs || argc < 2)
		return c;
	while (c->subs[ns].name)
		ns++;
	s = find_cmd(c->subs, ns, argv[1]);
	return s ? s : c;
}

/* @c's long options; the global ones (bctl.c) are bctl_opts_common. */
static int print_options(const struct bctl_cmd *c)
{
	const struct option *o = c->opts_fn ? c->opts_fn() : c->opts;

	for (; o && o->name; o++)
		printf("--%s%s\n", o->name,
		       o->has_arg == required_argument ? "=" : "");
	return 0;
}

static int print_operands(const struct bctl_cmd *c)
{
	const struct bctl_cmd *s;

	if (c->subs) {
		for (s = c->subs; s->name; s++)
			printf("%s%s", s == c->subs ? "" : "|", s->name);
		putchar('\n');
	} else if (c->operands) {
		puts(c->operands);
	}
	return 0;
}

/* The names of the records of @kind ("any", or a --kind word) that start
 * with @prefix ("" or NULL: all), in name-index order. */
static int print_names(struct bctl *g, const char *kind, const char *prefix)
{
	struct bctl_filter f;
	struct brk_record_brief b;
	brk_segment *seg;
	uint64_t cur = 0;
	size_t plen = prefix ? strlen(prefix) : 0;
	int rc;

	bctl_filter_init(&f);
	if (strcmp(kind, "any") != 0) {
		rc = bctl_filter_opt(&f, BCTL_OPT_KIND, kind);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	rc = bctl_attach(g, BCTL_ATTACH_INSPECT, NULL, &seg);
	if (rc)
		return rc;
	/* A corrupt slot ends the walk: completion offers what it read. */
	while (brk_record_next_brief(seg, &cur, &b) == 0) {
		b.name[BRK_NAME_MAX] = '\0';
		if (plen && strncmp(b.name, prefix, plen) != 0)
			continue;
		if (bctl_filter_match(&f, &b))
			puts(b.name);
	}
	brk_detach(seg);
	return cli_flush_stdout() ? CLI_EXIT_ERROR : 0;
}

/*
 * The values of an option where they are finite or are record names: the
 * words the library names (brk_kind_name(), brk_state_name()), and the
 * records an option names. Any other option: nothing.
 */
static int print_values(struct bctl *g, const char *opt, const char *prefix)
{
	int k;

	if (strcmp(opt, "--kind") == 0) {
		for (k = BRK_KIND_BREAKER; k <= BRK_KIND_BUDGET; k++)
			puts(brk_kind_name(k));
		puts("pace"); /* a bucket in paced mode (record_filter.c) */
		return 0;
	}
	if (strcmp(opt, "--state") == 0) {
		for (k = BRK_CLOSED; k <= BRK_HALF_OPEN; k++)
			puts(brk_state_name(k));
		return 0;
	}
	if (strcmp(opt, "--priority") == 0) { /* exec */
		puts("high");
		puts("normal");
		return 0;
	}
	if (strcmp(opt, "--max-concurrent") == 0) { /* or a number, auto:N */
		puts("auto");
		return 0;
	}
	if (strcmp(opt, "--pace") == 0) /* exec: a pace, or a plain bucket */
		return print_names(g, "bucket", prefix);
	if (strcmp(opt, "--retry-budget") == 0)
		return print_names(g, "budget", prefix);
	return 0;
}

int bctl_complete(struct bctl *g, const struct bctl_cmd *cmds, size_t n,
		  int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	const struct bctl_cmd *c;
	size_t i;

	if (strcmp(what, "commands") == 0) {
		for (i = 0; i < n; i++)
			if (!hidden(cmds[i].name))
				puts(cmds[i].name);
		return cli_flush_stdout() ? CLI_EXIT_ERROR : 0;
	}
	if (strcmp(what, "names") == 0 && argc >= 3 && argc <= 4)
		return print_names(g, argv[2], argc == 4 ? argv[3] : NULL);
	if (strcmp(what, "values") == 0 && argc >= 3 && argc <= 4)
		return print_values(g, argv[2], argc == 4 ? argv[3] : NULL);
	if (strcmp(what, "options") == 0 && argc == 2) { /* before a command */
		struct bctl_cmd global = { "", NULL, bctl_opts_common, NULL,
					   NULL, NULL };
		return print_options(&global);
	}
	if ((strcmp(what, "options") == 0 || strcmp(what, "operands") == 0) &&
	    argc >= 3 && argc <= 4) {
		c = cmd_of(cmds, n, argc - 2, argv + 2);
		if (!c)
			return cli_usage_error("__complete: unknown command '%s'",
					       cli_q(argv[2]));
		return strcmp(what, "options") == 0 ? print_options(c)
						    : print_operands(c);
	}
	return cli_usage_error("__complete: expected commands, options CMD [SUB], "
			       "operands CMD [SUB], values --OPT [PREFIX] or "
			       "names KIND [PREFIX]");
}
