/*
 * bctl.h - internals shared by the bctl command files (not installed).
 *
 * Each command is one function bctl_cmd_<name>(g, argc, argv) with argv[0]
 * the command's own name; it returns the process exit status:
 * 0, CLI_EXIT_ERROR (1: segment or system error), CLI_EXIT_USAGE (2),
 * 75 (refused) or a wrapped command's status.
 */
#ifndef BCTL_H
#define BCTL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "breaker.h"
#include "cli_util.h"
#include "limit_opts.h"

#define BCTL_EXIT_TEMPFAIL 75 /* EX_TEMPFAIL: refused, try later */
#define BCTL_EXIT_TIMEOUT 124 /* like timeout(1) */
#define BCTL_EXIT_NOEXEC 126  /* like env(1): found but not runnable */
#define BCTL_EXIT_NOTFOUND 127

/* Global options, also accepted after the command. */
struct bctl {
	const char *shm_flag; /* --shm, or NULL */
	int verbose;          /* -v */
};

/* Long options every command accepts; the values are out of char range. */
enum {
	BCTL_OPT_SHM = 0x100,
	BCTL_OPT_HELP,
	BCTL_OPT_VERBOSE,
	BCTL_OPT_VERSION,
	BCTL_OPT_JSON,
	BCTL_OPT_FIRST_CMD /* commands number their own options from here */
};

#define BCTL_COMMON_LONGOPTS                                        \
	{ "shm", required_argument, NULL, BCTL_OPT_SHM },           \
	{ "help", no_argument, NULL, BCTL_OPT_HELP },               \
	{ "verbose", no_argument, NULL, BCTL_OPT_VERBOSE },         \
	{ "version", no_argument, NULL, BCTL_OPT_VERSION }

#define BCTL_CONTINUE CLI_CONTINUE /* cli_util.h */

/*
 * A command (or a subcommand of one): the one table bctl dispatches on, and
 * that `bctl __complete` (bctl_complete.c) reads, so the shell completion
 * offers exactly what bctl parses.
 */
struct bctl_cmd {
	const char *name;
	int (*run)(struct bctl *g, int argc, char **argv);
	const struct option *opts;             /* its getopt_long table */
	const struct option *(*opts_fn)(void); /* or: built at run time */
	/* Its operands, for completion: space-separated slots, in order:
	 * BREAKER, BUCKET, PACE, BUDGET, NAME (a record of that kind, or of
	 * any kind), FILE, a|b|c (one of these words), N (a number: nothing
	 * offered); "..." after a slot repeats it; "--CMD": a command line
	 * follows "--". NULL: none. */
	const char *operands;
	const struct bctl_cmd *subs; /* subcommands (NULL-named last), or NULL */
};

/* The options of a command that has none of its own. */
extern const struct option bctl_opts_common[];

/* How the inspecting commands (list, inspect, events, metrics) attach:
 * read-only, and across pid/time namespaces. */
#define BCTL_ATTACH_INSPECT (BRK_ATTACH_READONLY | BRK_ATTACH_NOPROCESS)

/* bctl_opts.c */
/**
 * bctl_getopt - getopt_long() for a command, with opterr off; call
 * bctl_opt_common() for what it returns.
 */
int bctl_getopt(int argc, char **argv, const char *shortopts,
		const struct option *longopts);
/**
 * bctl_opt_common - handle the options every command shares and getopt's
 * errors. Returns BCTL_CONTINUE, or an exit status (0 after --help).
 */
int bctl_opt_common(struct bctl *g, int c, int argc, char **argv);
/**
 * bctl_name_arg - the one NAME operand after getopt; prints a usage
 * error for none, more, or an invalid name. Returns 0 or CLI_EXIT_USAGE.
 */
int bctl_name_arg(const char *cmd, int argc, char **argv, const char **name);
/**
 * bctl_record_arg - bctl_name_arg() for a command on another kind of
 * record: @what ("bucket ", "pace ", "" for any record) is the word the
 * "missing NAME" error puts before NAME.
 */
int bctl_record_arg(const char *cmd, const char *what, int argc, char **argv,
		    const char **name);
/** bctl_no_args - prints a usage error if operands are left. */
int bctl_no_args(const char *cmd, int argc, char **argv);
/** bctl_check_name - validate a breaker name; 0 or CLI_EXIT_USAGE. */
int bctl_check_name(const char *name);

/* bctl_seg.c */
const char *bctl_shm(const struct bctl *g);
/**
 * bctl_check_shm - validate the segment name bctl_shm() gives; prints a
 * usage error naming it (and $BREAKERD_SHM when it came from there).
 * Returns 0 or CLI_EXIT_USAGE.
 */
int bctl_check_shm(const struct bctl *g);
/**
 * bctl_attach - attach with @flags; prints the error. @name: the breaker
 * the command is about, or NULL (an absent segment then reads "no breaker
 * named ..."). Returns 0 or an exit status.
 */
int bctl_attach(const struct bctl *g, uint32_t flags, const char *name,
		brk_segment **seg);
/** bctl_find - find an existing breaker; prints the error. 0 or 1. */
int bctl_find(const struct bctl *g, brk_segment *seg, const char *name,
	      brk_breaker **b);
/** bctl_fail - print "bctl: SHM: NAME: cause" for @rc. Returns 1. */
int bctl_fail(const struct bctl *g, const char *name, int rc);
/** bctl_create_fail - bctl_fail() for a creation of @name on @seg; one
 * that gave up on the index lock names the lock and its holder's pid. */
int bctl_create_fail(const struct bctl *g, brk_segment *seg, const char *name,
		     int rc);
/** bctl_kind_of - the enum brk_kind of the record @name, or -ENOENT or
 * another negative code. */
int bctl_kind_of(brk_segment *seg, const char *name);
/** bctl_kind_word - the kind of the record @name in a sentence:
 * "breaker", "pace" (a paced bucket), "bucket", "retry budget", or
 * "record of another kind" (absent or changed under us). */
const char *bctl_kind_word(brk_segment *seg, const char *name);
/** bctl_wrong_kind - print "SHM: 'NAME' is a bucket, not a breaker" (with
 * the record's actual kind, "pace" for a paced bucket) for a -EMEDIUMTYPE.
 * Returns 1. */
int bctl_wrong_kind(const struct bctl *g, brk_segment *seg, const char *name,
		    int want);

/* bctl_help.c */
int bctl_help(void); /* 0, or CLI_EXIT_ERROR after a write error */
/** bctl_cmd_help - `bctl help`: the usage text; exit 0 (1 after a write error). */
int bctl_cmd_help(struct bctl *g, int argc, char **argv);

/* bctl_complete.c */
/**
 * bctl_complete - the hidden `bctl __complete WHAT ...` that the bash
 * completion (tools/bctl.bash-completion) asks, reading @cmds (@n entries):
 *   commands                 the command names, one a line
 *   options [CMD [SUB]]      CMD's long options (none: the global ones):
 *                            "--name", or "--name="
 *                            where it takes a value
 *   operands CMD [SUB]       CMD's operand slots (struct bctl_cmd), one line;
 *                            a command with subcommands: their names, a|b|c
 *   values --OPT [PREFIX]    the values of --OPT where they are finite (or
 *                            record names), one a line; none: nothing
 *   names KIND [PREFIX]      the names of the records of KIND (breaker,
 *                            bucket, pace, budget or any) in the segment
 *                            (--shm / $BREAKERD_SHM), read-only
 * Returns 0, CLI_EXIT_USAGE, or CLI_EXIT_ERROR if the segment cannot be
 * read (nothing printed on stdout then).
 */
int bctl_complete(struct bctl *g, const struct bctl_cmd *cmds, size_t n,
		  int argc, char **argv);

/* The commands. */
int bctl_cmd_list(struct bctl *g, int argc, char **argv);
int bctl_cmd_inspect(struct bctl *g, int argc, char **argv);
int bctl_cmd_config(struct bctl *g, int argc, char **argv);
int bctl_cmd_apply(struct bctl *g, int argc, char **argv);
int bctl_cmd_reset(struct bctl *g, int argc, char **argv);
int bctl_cmd_trip(struct bctl *g, int argc, char **argv);
int bctl_cmd_events(struct bctl *g, int argc, char **argv);
int bctl_cmd_exec(struct bctl *g, int argc, char **argv);
int bctl_cmd_metrics(struct bctl *g, int argc, char **argv);
int bctl_cmd_force_open(struct bctl *g, int argc, char **argv);
int bctl_cmd_disable(struct bctl *g, int argc, char **argv);
int bctl_cmd_metrics_only(struct bctl *g, int argc, char **argv);
int bctl_cmd_bucket(struct bctl *g, int argc, char **argv);
int bctl_cmd_pace(struct bctl *g, int argc, char **argv);
int bctl_cmd_take(struct bctl *g, int argc, char **argv);
int bctl_cmd_budget(struct bctl *g, int argc, char **argv);
int bctl_cmd_retire(struct bctl *g, int argc, char **argv);
int bctl_cmd_health(struct bctl *g, int argc, char **argv);
int bctl_cmd_fallback(struct bctl *g, int argc, char **argv);
int bctl_cmd_segment(struct bctl *g, int argc, char **argv);

/* The commands' option tables (in their files), for the command table. */
extern const struct option bctl_opts_list[], bctl_opts_inspect[],
	bctl_opts_apply[], bctl_opts_admin[], bctl_opts_events[],
	bctl_opts_metrics[], bctl_opts_exec[], bctl_opts_bucket[],
	bctl_opts_pace[], bctl_opts_budget[], bctl_opts_retire[],
	bctl_opts_health[];
/** bctl_opts_config - config's options (built from its settings table). */
const struct option *bctl_opts_config(void);
/* segment's subcommands: create, info, remove (bctl_segment.c). */
extern const struct bctl_cmd bctl_segment_subs[];

#endif /* BCTL_H */
