/*
 * proc.h - helpers of the forked-process tests (tests/integration,
 * tests/daemon): segments, forking and spawning with bounded waits, the
 * watchdog, breakerd start/stop, CHECK, and forked workers and bctl runs.
 *
 * Each test is a plain program that forks real worker processes using
 * libbreaker on its own segment (/brkit-<test>-<pid>), uses real time with
 * generous bounds, stops by itself (an alarm() watchdog), always kills its
 * children and unlinks its segments at the end, prints what it checked
 * and exits 0 (pass), 1 (fail) or 77 (skip).
 */
#ifndef BRK_TEST_PROC_H
#define BRK_TEST_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "breaker.h"

#define IT_SKIP 77
#define IT_MAX_CHILDREN 256
#define IT_MAX_SEGMENTS 16

/* it_init - name the test, arm the watchdog (seconds), set up cleanup. */
void it_init(const char *test, unsigned watchdog_s);

/* it_segment - a fresh segment name "/brkit-<test>[-tag]-<pid>",
 * remembered so it_finish() (and the watchdog) unlink it. */
const char *it_segment(const char *tag);

/* it_attach - attach (creating if absent) or exit(1) with the message. */
brk_segment *it_attach(const char *shm, uint32_t capacity);
/* it_attach_rc - attach and return the code; errbuf gets the message. */
int it_attach_rc(const char *shm, uint32_t capacity, uint32_t flags,
		 brk_segment **out, char *errbuf, size_t errlen);

/* it_shared - zeroed MAP_SHARED|MAP_ANONYMOUS memory, shared with every
 * child forked afterwards. */
void *it_shared(size_t size);

/* it_fork - fork a child that runs fn(idx, arg) and _exit()s with its
 * return value; the child dies with the parent (PR_SET_PDEATHSIG).
 * Tracked: it_finish() kills and reaps it. */
pid_t it_fork(int (*fn)(int idx, void *arg), int idx, void *arg);

/* it_spawn - fork + execv(argv[0], argv), tracked like it_fork().
 * @out_fd / @err_fd: redirect stdout / stderr to these fds if >= 0. */
pid_t it_spawn(char *const argv[], int out_fd, int err_fd);

/* it_wait - wait up to timeout_ms for @pid; 0 and *status, or -1 on
 * timeout (the child is left running). Untracks a reaped child. */
int it_wait(pid_t pid, int timeout_ms, int *status);
/* it_kill - SIGKILL and reap @pid now. */
void it_kill(pid_t pid);
/* it_kill_all - SIGKILL and reap every tracked child. */
void it_kill_all(void);

/* Daemon helpers. */
/* it_daemon_start - run EXE --shm SHM --interval INTERVAL; its stderr goes
 * to @err_fd if >= 0. */
pid_t it_daemon_start(const char *exe, const char *shm, const char *interval,
		      int err_fd);
/* Wait until the segment shows @pid as the daemon with a fresh heartbeat. */
int it_daemon_wait_heartbeat(brk_segment *seg, pid_t pid, int timeout_ms);
/* SIGTERM (or @sig) and wait; returns the exit status or -1. */
int it_daemon_stop(pid_t pid, int sig, int timeout_ms);

/* Time (CLOCK_MONOTONIC, system-wide: comparable across processes). */
uint64_t it_now_ns(void);
uint64_t it_now_ms(void);
void it_sleep_ms(unsigned ms);
void it_sleep_us(unsigned us);

/* Checks: print "ok"/"FAIL" with the description; failures are counted. */
int it_check(int ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define CHECK(cond, ...) it_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
void it_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int it_failures(void);

/* it_skip - print the reason, clean up and exit 77. */
void it_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* it_finish - kill children, unlink segments, print the verdict; returns
 * the exit status (0 or 1). */
int it_finish(void);

/* brk_breaker_info or exit(1). */
void it_info(brk_breaker *b, struct brk_info *out);

/* Shared-page atomics. */
#define AT_LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define AT_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define AT_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define AT_MIN(p, v) do { __typeof__(*(p)) _o = AT_LOAD(p), _v = (v); \
	while (_v < _o && !__atomic_compare_exchange_n((p), &_o, _v, 0, \
		__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) ; } while (0)
#define AT_MAX(p, v) do { __typeof__(*(p)) _o = AT_LOAD(p), _v = (v); \
	while (_v > _o && !__atomic_compare_exchange_n((p), &_o, _v, 0, \
		__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) ; } while (0)

/* ---- Workers, bctl, lines (formerly tests/features/ft.h) ----
 *
 *  - a "worker": a forked process that attaches the segment itself, gets
 *    one breaker and then does what the test process tells it through a
 *    shared page (so "another process's acquire" is really another
 *    process's, with its own pid, handle and, if asked, environment);
 *  - running bctl and capturing its exit status, stdout and stderr;
 *  - reading lines from a pipe with a timeout.
 */

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

#endif /* BRK_TEST_PROC_H */
