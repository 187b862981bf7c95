/*
 * itest.h - helpers for the forked-worker integration tests.
 *
 * Each test is a plain program that forks real worker processes using
 * libbreaker on its own segment (/brkit-<test>-<pid>), uses real time with
 * generous bounds, stops by itself (an alarm() watchdog), always kills its
 * children and unlinks its segments at the end, prints what it checked
 * and exits 0 (pass), 1 (fail) or 77 (skip).
 */
#ifndef ITEST_H
#define ITEST_H

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

#endif /* ITEST_H */
