/*
 * ft.h - helpers of the tests/features programs, on top of
 * tests/integration/itest.h (segments, fork, watchdog, CHECK):
 *
 *  - a "worker": a forked process that attaches the segment itself, gets
 *    one breaker and then does what the test process tells it through a
 *    shared page (so "another process's acquire" is really another
 *    process's, with its own pid, handle and, if asked, environment);
 *  - running bctl and capturing its exit status, stdout and stderr;
 *  - reading lines from a pipe with a timeout.
 */
#ifndef FT_H
#define FT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "breaker.h"
#include "itest.h"

/* What a worker is told to do. */
enum ft_op {
	FT_OP_NONE = 0,
	FT_OP_CALLS,  /* n x (acquire; if admitted, release with outcome) */
	FT_OP_EXIT
};

struct ft_worker {
	pid_t pid;
	/* set before the fork */
	char shm[128];
	char name[BRK_NAME_MAX + 1];
	struct brk_config cfg;
	int disabled_env;   /* BREAKERD_DISABLED=1 in the worker's env */
	/* the command channel (in shared memory) */
	int seq, ack;       /* a command is pending while seq != ack */
	int op, n, outcome, reason;
	int hold_ms;        /* hold each permit this long before release */
	/* results of the last command */
	int admitted, refused, last_rc, release_errors, fatal;
	int32_t self_pid;
	char by[BRK_NAME_MAX + 1]; /* why.by of the last refusal */
	uint64_t wait_ms;           /* why.wait_ms of the last refusal */
};

/* ft_worker_start - a worker for breaker @name (created with @cfg if it
 * does not exist) on segment @shm. Returns it, in shared memory. */
struct ft_worker *ft_worker_start(const char *shm, const char *name,
				  const struct brk_config *cfg,
				  int disabled_env);
/* ft_worker_calls - make @w do @n calls with @outcome/@reason and wait
 * (up to 10 s) for it. Returns 0, or -1 if the worker did not answer. */
int ft_worker_calls(struct ft_worker *w, int n, int outcome, int reason);
/* ft_worker_stop - tell it to exit and reap it. */
void ft_worker_stop(struct ft_worker *w);

/* ft_bctl - run BCTL --shm SHM ARGS... (NULL-terminated), wait up to 10 s.
 * Returns the exit status (128+N for signal N, -1 on timeout); stdout and
 * stderr (each up to @cap - 1 bytes, without the final newlines,
 * NUL-terminated) into @out / @err if not NULL. */
int ft_bctl(const char *bctl, const char *shm, char *out, char *err,
	    size_t cap, ...) __attribute__((sentinel));

/* A line reader on a pipe. */
struct ft_lines {
	int fd;
	size_t len;
	char buf[1 << 16];
	int eof;
};

void ft_lines_init(struct ft_lines *r, int fd);
/* ft_line - the next line (without '\n') into @line (@cap bytes, cut if
 * longer), waiting up to @timeout_ms. Returns 1, 0 on timeout, -1 at EOF. */
int ft_line(struct ft_lines *r, char *line, size_t cap, int timeout_ms);

/* ft_json_u64 - the unsigned integer after "\"KEY\":" in a one-line JSON
 * object; -1 if absent. ft_json_has - 1 if "\"KEY\":\"VALUE\"" is there. */
int64_t ft_json_u64(const char *line, const char *key);
int ft_json_has(const char *line, const char *key, const char *value);

/* ft_events_written - the segment's event sequence number so far. */
uint64_t ft_events_written(brk_segment *seg);

/* ft_breaker - brk_breaker_get() or exit(1) with the message. */
brk_breaker *ft_breaker(brk_segment *seg, const char *name,
			const struct brk_config *cfg);

#endif /* FT_H */
