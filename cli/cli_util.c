/*
 * cli_util.c - messages and strict argument parsing for the command-line
 * programs. See cli_util.h.
 */
#include "cli_util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"

#define CLI_Q_BUFS 4
#define CLI_Q_MAX 80

static const char *cli_prog_name = "bctl";
static const char *cli_hint_line; /* NULL: "try 'PROG --help'" */

void cli_set_prog(const char *prog)
{
	if (prog && *prog)
		cli_prog_name = prog;
}

const char *cli_prog(void)
{
	return cli_prog_name;
}

void cli_set_usage_hint(const char *line)
{
	cli_hint_line = line;
}

int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	opterr = 0;
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

static void (*cli_sink)(void *ctx, const char *msg);
static void *cli_sink_ctx;

void cli_set_msg_sink(void (*fn)(void *ctx, const char *msg), void *ctx)
{
	cli_sink = fn;
	cli_sink_ctx = ctx;
}

static void cli_vmsg(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (cli_sink)
		cli_sink(cli_sink_ctx, line);
	else
		fprintf(stderr, "%s: %s\n", cli_prog_name, line);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
	if (cli_sink)
		; /* the sink has the message; no hint */
	else if (cli_hint_line && !*cli_hint_line)
		; /* "": no hint line */
	else if (cli_hint_line)
		fprintf(stderr, "%s\n", cli_hint_line);
	else
		fprintf(stderr, "try '%s --help'\n", cli_prog_name);
	return CLI_EXIT_USAGE;
}

int cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
	return CLI_EXIT_ERROR;
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
}

const char *cli_q(const char *s)
{
	static char bufs[CLI_Q_BUFS][CLI_Q_MAX + 4];
	static unsigned next;
	char *b = bufs[next++ % CLI_Q_BUFS];
	size_t i;

	if (!s)
		return "(null)";
	for (i = 0; s[i] && i < CLI_Q_MAX; i++) {
		unsigned char c = (unsigned char)s[i];

		b[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	if (s[i]) {
		memcpy(b + i, "...", 3);
		i += 3;
	}
	b[i] = '\0';
	return b;
}

int parse_uint_arg_base(const char *s, int base, uint64_t min, uint64_t max,
			uint64_t *out)
{
	return brk_parse_uint(s, base, min, max, out);
}

int parse_uint_arg(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	return parse_uint_arg_base(s, 10, min, max, out);
}

int parse_duration_arg(const char *s, uint64_t *ms)
{
	int rc;

	if (!s || !*s || !ms)
		return -EINVAL;
	rc = brk_parse_duration(s, ms);
	return rc == -ERANGE ? -ERANGE : (rc < 0 ? -EINVAL : 0);
}

static int parse_code_item(const char *item, uint8_t *set)
{
	char lo_s[8], *dash;
	uint64_t lo, hi;
	size_t n = strlen(item);

	dash = strchr(item, '-');
	if (!dash) {
		if (parse_uint_arg(item, 0, 255, &lo) < 0)
			return -EINVAL;
		hi = lo;
	} else {
		if ((size_t)(dash - item) >= sizeof(lo_s) || dash == item ||
		    dash == item + n - 1)
			return -EINVAL;
		memcpy(lo_s, item, (size_t)(dash - item));
		lo_s[dash - item] = '\0';
		if (parse_uint_arg(lo_s, 0, 255, &lo) < 0 ||
		    parse_uint_arg(dash + 1, 0, 255, &hi) < 0 || lo > hi)
			return -EINVAL;
	}
	for (; lo <= hi; lo++)
		set[lo / 8] |= (uint8_t)(1u << (lo % 8));
	return 0;
}

int parse_code_set(const char *s, uint8_t *set)
{
	char item[16];
	const char *p = s, *comma;
	size_t len;

	if (!s || !*s || !set)
		return -EINVAL;
	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || len >= sizeof(item))
			return -EINVAL;
		memcpy(item, p, len);
		item[len] = '\0';
		if (parse_code_item(item, set) < 0)
			return -EINVAL;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

bool code_set_has(const uint8_t *set, int code)
{
	if (!set || code < 0 || code > 255)
		return false;
	return (set[code / 8] >> (code % 8)) & 1u;
}

int cli_opt_uint(const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out)
{
	int rc = parse_uint_arg(s, min, max, out);

	if (rc == -ERANGE)
		return cli_usage_error("%s: '%s' is out of range (%" PRIu64
				       "..%" PRIu64 ")", opt, cli_q(s), min, max);
	if (rc < 0)
		return cli_usage_error("%s: '%s' is not an integer (%" PRIu64
				       "..%" PRIu64 ")", opt, cli_q(s), min, max);
	return 0;
}

int cli_opt_mode(const char *opt, const char *s, uint32_t *mode)
{
	uint64_t v;

	if (parse_uint_arg_base(s, 8, 0, 0777, &v) < 0)
		return cli_usage_error("%s: '%s' is not an octal mode from 0 to "
				       "0777", opt, cli_q(s));
	if (v & 0002)
		return cli_usage_error("%s: '%s' would make the segment "
				       "world-writable", opt, cli_q(s));
	if ((v & 0600) != 0600)
		return cli_usage_error("%s: '%s' leaves the owner without read "
				       "and write permission", opt, cli_q(s));
	*mode = (uint32_t)v;
	return 0;
}

int cli_opt_group(const char *opt, const char *s, int64_t *gid)
{
	struct group *gr;
	uint64_t v;
	int err;

	errno = 0;
	gr = getgrnam(s);
	err = errno; /* the parser below may change errno */
	if (gr) {
		*gid = gr->gr_gid;
		return 0;
	}
	if (parse_uint_arg(s, 0, 0xfffffffeull, &v) == 0) {
		*gid = (int64_t)v; /* a numeric gid */
		return 0;
	}
	if (err && err != ENOENT && err != ESRCH && err != EBADF && err != EPERM)
		return cli_error("%s: cannot look up '%s': %s", opt, cli_q(s),
				 strerror(err));
	return cli_usage_error("%s: no such group '%s'", opt, cli_q(s));
}

int cli_opt_capacity(const char *opt, const char *s, uint32_t *cap)
{
	uint64_t v;

	if (parse_uint_arg(s, 1, BRK_MAX_CAPACITY, &v) < 0)
		return cli_usage_error("%s: '%s' is not a number of records "
				       "from 1 to %u", opt, cli_q(s),
				       BRK_MAX_CAPACITY);
	*cap = (uint32_t)v;
	return 0;
}

int cli_opt_arena_mb(const char *opt, const char *s, uint64_t *bytes)
{
	uint64_t v;

	if (parse_uint_arg(s, 1, BRK_MAX_ARENA_BYTES >> 20, &v) < 0)
		return cli_usage_error("%s: '%s' is not a number of MiB from 1 "
				       "to %llu", opt, cli_q(s),
				       (unsigned long long)(BRK_MAX_ARENA_BYTES >> 20));
	*bytes = v << 20;
	return 0;
}

int cli_opt_pct(const char *opt, const char *s, uint64_t min, uint64_t max,
		uint64_t *out)
{
	size_t n = strlen(s);
	char bare[24];

	/* "30" or "30%" (bctl config has always taken the sign); "%" alone,
	 * "30%%" or "30 %" are not numbers and are refused by cli_opt_uint */
	if (n > 1 && n < sizeof(bare) && s[n - 1] == '%') {
		memcpy(bare, s, n - 1);
		bare[n - 1] = '\0';
		if (bare[n - 2] != '%')
			return cli_opt_uint(opt, bare, min, max, out);
	}
	return cli_opt_uint(opt, s, min, max, out);
}

int cli_opt_duration(const char *opt, const char *s, uint64_t *ms)
{
	int rc = parse_duration_arg(s, ms);

	if (rc == -ERANGE)
		return cli_usage_error("%s: duration '%s' is too long (max %llu ms)",
				       opt, cli_q(s), (unsigned long long)BRK_MAX_DURATION_MS);
	if (rc < 0)
		return cli_usage_error("%s: invalid duration '%s' (" CLI_DURATION_HINT ")",
				       opt, cli_q(s));
	return 0;
}

int cli_opt_code_set(const char *opt, const char *s, uint8_t *set)
{
	if (parse_code_set(s, set) < 0)
		return cli_usage_error("%s: invalid exit code list '%s' (e.g. 3,7,10-12; codes 0..255)",
				       opt, cli_q(s));
	return 0;
}

int cli_format_time(uint64_t wall_ms, char *buf, size_t len)
{
	time_t secs;
	struct tm tm;
	char base[32];

	if (!buf || len == 0 || wall_ms / 1000 > (uint64_t)INT32_MAX * 64)
		return -EINVAL;
	secs = (time_t)(wall_ms / 1000);
	if (!gmtime_r(&secs, &tm) ||
	    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return -EINVAL;
	if ((size_t)snprintf(buf, len, "%s.%03uZ", base,
			     (unsigned)(wall_ms % 1000)) >= len)
		return -EINVAL;
	return 0;
}

int cli_flush_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout))
		return cli_error("write error on standard output");
	return 0;
}

int cli_std_fds_open(void)
{
	int fd, got;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (got < 0)
			return -errno;
		if (got != fd) { /* cannot happen: fd is the lowest free one */
			close(got);
			return -EBADF;
		}
	}
	return 0;
}
