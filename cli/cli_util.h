/*
 * cli_util.h - small helpers shared by the command-line programs (bctl,
 * breakerd): one-line error messages, strict integer, duration and
 * exit-code-list parsing, RFC 3339 time formatting.
 *
 * Conventions: parse_* functions return 0 or a negative errno (-EINVAL,
 * -ERANGE) and print nothing; cli_opt_* wrappers print a usage error naming
 * the option and return CLI_EXIT_USAGE (0 on success).
 */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_ERROR 1   /* segment or system error */
#define CLI_EXIT_USAGE 2   /* bad command line */

/* An option handler's "taken, go on": not an exit status (bctl's
 * commands, as BCTL_CONTINUE, and the record filters of record_filter.h). */
#define CLI_CONTINUE (-1)

#define CLI_CODE_SET_BYTES 32 /* a bitmap of exit codes 0..255 */

/** cli_set_prog - the program name used as the prefix of every message. */
void cli_set_prog(const char *prog);
const char *cli_prog(void);
/**
 * cli_version - the project's version, "X.Y.Z" (meson's project version).
 * cli_print_version - print "PROG (breakerd) X.Y.Z" on stdout, for
 * --version; returns 0, or CLI_EXIT_ERROR after a write error.
 */
const char *cli_version(void);
int cli_print_version(void);
/**
 * cli_set_usage_hint - the line cli_usage_error() prints after the message
 * (a static string, without the newline); NULL: "try 'PROG --help'";
 * "": no hint line.
 */
void cli_set_usage_hint(const char *line);

/**
 * cli_getopt - getopt_long() with getopt's own messages off (opterr = 0):
 * the program prints its own one-line usage error for the '?' or ':'
 * (with a leading ':' in @shortopts) it returns.
 */
int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/**
 * cli_usage_error - print "prog: <msg>" and the usage hint ("try 'prog
 * --help'" unless cli_set_usage_hint() said otherwise) on stderr.
 * Returns CLI_EXIT_USAGE.
 */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * cli_set_msg_sink - while @fn is set, cli_usage_error() and cli_error()
 * hand their message (without "prog: " and without the usage hint) to
 * @fn(@ctx, msg) instead of printing it: the breakers file collects the
 * shared parsers' messages this way. NULL prints again. Not thread-safe.
 */
void cli_set_msg_sink(void (*fn)(void *ctx, const char *msg), void *ctx);

/** cli_error - print "prog: <msg>" on stderr. Returns CLI_EXIT_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** cli_note - print "prog: <msg>" on stderr (informational). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * cli_q - @s made safe to print inside one line: control and non-ASCII
 * bytes become '?', long strings are cut with "...". Returns one of a few
 * rotating static buffers (not thread-safe; enough for one message).
 */
const char *cli_q(const char *s);

/**
 * parse_uint_arg_base - strict unsigned integer: digits only in @base (no
 * sign, no space, no prefix, nothing after), within [@min, @max]: the
 * library's brk_parse_uint(). Returns 0, -EINVAL (empty, sign, garbage)
 * or -ERANGE (out of range).
 */
int parse_uint_arg_base(const char *s, int base, uint64_t min, uint64_t max,
			uint64_t *out);

/** parse_uint_arg - parse_uint_arg_base() in base 10. */
int parse_uint_arg(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* The units brk_parse_duration() takes (lib/src/duration.c's table), for
 * messages and help text: bctl and breakerd say them in these words. */
#define CLI_DURATION_UNITS "us, ms, s, m, h or d"
#define CLI_DURATION_HINT "a number with a unit: " CLI_DURATION_UNITS \
	", e.g. 250ms, 30s, 5m"

/**
 * parse_duration_arg - "250ms", "30s", "5m", "2h" (brk_parse_duration());
 * a bare number is -EINVAL. Returns 0, -EINVAL or -ERANGE.
 */
int parse_duration_arg(const char *s, uint64_t *ms);

/**
 * parse_code_set - a comma-separated list of exit codes and ranges
 * ("3,7,10-12"), each 0..255, into @set (CLI_CODE_SET_BYTES bytes; bits are
 * added, not cleared). Returns 0 or -EINVAL.
 */
int parse_code_set(const char *s, uint8_t *set);

/** code_set_has - true if @code (0..255) is in @set. */
bool code_set_has(const uint8_t *set, int code);

/* Wrappers that print a usage error naming @opt; return 0 or CLI_EXIT_USAGE. */
int cli_opt_uint(const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out);
/* A percentage is a bare integer: "30", never "30%" (refused, saying so). */
int cli_opt_pct(const char *opt, const char *s, uint64_t min, uint64_t max,
		uint64_t *out);
/* "OPT: invalid duration 'S' (CLI_DURATION_HINT)", "OPT: duration 'S' is
 * too long (max N ms)": the one wording of bctl and breakerd. */
int cli_opt_duration(const char *opt, const char *s, uint64_t *ms);
int cli_opt_code_set(const char *opt, const char *s, uint8_t *set);
/* A segment's permission bits (octal, at most 0777): never world-writable,
 * always owner read-write (the library refuses the first on attach). */
int cli_opt_mode(const char *opt, const char *s, uint32_t *mode);
/* A group by name or number (getgrnam(3)). 0, CLI_EXIT_USAGE (no such
 * group) or CLI_EXIT_ERROR (the lookup itself failed). */
int cli_opt_group(const char *opt, const char *s, int64_t *gid);
/* A segment's capacity in records (1..BRK_MAX_CAPACITY) and arena size in
 * MiB (1..BRK_MAX_ARENA_BYTES >> 20, returned in bytes): the library's
 * limits, spelled in one place for bctl and breakerd. */
int cli_opt_capacity(const char *opt, const char *s, uint32_t *cap);
int cli_opt_arena_mb(const char *opt, const char *s, uint64_t *bytes);

/**
 * cli_format_time - @wall_ms (ms since the epoch) as RFC 3339 UTC with
 * milliseconds, "2024-05-01T10:00:00.123Z". Returns 0 or -EINVAL.
 */
int cli_format_time(uint64_t wall_ms, char *buf, size_t len);

/**
 * cli_flush_stdout - flush stdout; on a write error print "prog: write
 * error on standard output" and return CLI_EXIT_ERROR, else 0.
 */
int cli_flush_stdout(void);

/**
 * cli_std_fds_open - make sure fds 0, 1 and 2 are open (on /dev/null if
 * they were closed), so no later pipe or file lands on them. Returns 0 or
 * -errno.
 */
int cli_std_fds_open(void);

#endif /* CLI_UTIL_H */
