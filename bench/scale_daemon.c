/*
 * scale_daemon.c - the supervisor's cost and the reclaim latency.
 *
 * breakerd is the real binary from the build tree, started on the
 * benchmark's private segment with its default interval. Its CPU use is
 * utime + stime from /proc/PID/stat (clock ticks, sysconf(_SC_CLK_TCK))
 * over a window of wall time.
 *
 * The lease holders: SCALE_HOLDERS forked processes; holder c attaches
 * the segment and takes one bulkhead permit on each of the lease breakers
 * c, c + 10, c + 20, ... (SCALE_HOLDER_LEASES of them, each a bulkhead
 * of SCALE_HOLDER_LEASES permits, so every bulkhead is full), reports on
 * a pipe, then blocks reading another pipe until the parent closes it.
 * The reclaim latency: SIGKILL one holder, reap it (a zombie's pid still
 * exists), then poll brk_breaker_info().in_flight of its 10 breakers
 * every 1 ms until its 10 permits are back.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"
#include "bench.h"
#include "scale.h"
#include "proc_stat.h"

static volatile pid_t daemon_pid;
static volatile pid_t holder_pid[SCALE_HOLDERS];

void scale_lease_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "scale/lease/%03d", i);
}

/* Lease breaker @k of holder @c. */
static int holder_breaker(int c, int k)
{
	return (c + 10 * k) % SCALE_LEASE_BREAKERS;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void scale_children_kill(void)
{
	int i;

	if (daemon_pid > 0)
		kill(daemon_pid, SIGKILL);
	for (i = 0; i < SCALE_HOLDERS; i++)
		if (holder_pid[i] > 0)
			kill(holder_pid[i], SIGKILL);
}

/* In a child: die with the parent; stdout and stderr to /dev/null. */
static void child_setup(pid_t parent, int sig)
{
	int fd;

	if (prctl(PR_SET_PDEATHSIG, sig) != 0 || getppid() != parent)
		_exit(1);
	fd = open("/dev/null", O_WRONLY);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
}

/**
 * scale_daemon_start - see scale.h. The daemon's log goes to /dev/null
 * (every reclaim is one line). Returns 0, -ENOENT (@path not executable),
 * -ECHILD (it exited), -ETIMEDOUT (no heartbeat within @wait_ms).
 */
int scale_daemon_start(const char *path, const char *shm, brk_segment *seg,
		       uint64_t wait_ms, pid_t *out)
{
	struct brk_segment_info si;
	pid_t parent = getpid(), pid;
	uint64_t t0 = bench_now_ns();
	int st;

	if (access(path, X_OK) != 0)
		return -ENOENT;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		child_setup(parent, SIGTERM);
		execl(path, path, "--shm", shm, (char *)NULL);
		_exit(127);
	}
	daemon_pid = pid;
	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			daemon_pid = 0;
			return -ECHILD;
		}
		brk_segment_info(seg, &si);
		if (si.daemon_pid == pid && si.heartbeat_age_ms != UINT64_MAX)
			break;
		if (bench_now_ns() - t0 > wait_ms * 1000000u) {
			scale_daemon_stop(pid);
			return -ETIMEDOUT;
		}
		sleep_ms(1);
	}
	*out = pid;
	return 0;
}

int scale_daemon_stop(pid_t pid)
{
	int st;

	if (pid <= 0)
		return -EINVAL;
	kill(pid, SIGTERM);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	daemon_pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* utime + stime of @pid in clock ticks, or -1. */
static long long cpu_ticks(pid_t pid)
{
	struct bench_proc_stat ps;

	if (bench_proc_stat(pid, &ps) != 0)
		return -1;
	return (long long)(ps.utime + ps.stime);
}

double scale_cpu_pct(pid_t pid, uint64_t window_ms)
{
	long long a, b;
	uint64_t t0, t1;
	long hz = sysconf(_SC_CLK_TCK);

	a = cpu_ticks(pid);
	t0 = bench_now_ns();
	sleep_ms(window_ms);
	b = cpu_ticks(pid);
	t1 = bench_now_ns();
	if (a < 0 || b < a || hz <= 0 || t1 <= t0)
		return -1;
	return 100.0 * ((double)(b - a) / (double)hz) / ((double)(t1 - t0) / 1e9);
}

/* The body of holder @c; never returns. */
static void holder(const char *shm, int c, int ready_fd, int release_fd)
{
	brk_permit pm[SCALE_HOLDER_LEASES];
	char name[BRK_NAME_MAX + 1], byte = 'E';
	brk_segment *seg;
	brk_breaker *b;
	int k, rc;

	rc = bench_attach(shm, BRK_ATTACH_NOCREATE, 0, &seg);
	for (k = 0; rc == 0 && k < SCALE_HOLDER_LEASES; k++) {
		scale_lease_name(name, sizeof(name), holder_breaker(c, k));
		rc = brk_breaker_find(seg, name, &b);
		if (rc == 0)
			rc = brk_acquire(b, &pm[k], NULL);
		if (rc)
			fprintf(stderr, "scale: holder %d: %s: %s\n", c, name,
				brk_strerror(rc));
	}
	if (rc == 0)
		byte = 'R';
	if (write(ready_fd, &byte, 1) != 1 || rc)
		_exit(1);
	while (read(release_fd, &byte, 1) < 0 && errno == EINTR)
		;
	for (k = 0; k < SCALE_HOLDER_LEASES; k++)
		brk_release(&pm[k], BRK_SUCCESS, BRK_REASON_NONE, 0);
	_exit(0);
}

int scale_holders_start(const char *shm, struct scale_holders *h)
{
	int ready[2], rel[2], c, got = 0, rc = 0;
	pid_t parent = getpid();
	char byte;

	memset(h, 0, sizeof(*h));
	h->release_fd = -1;
	if (pipe(ready) != 0)
		return -errno;
	if (pipe(rel) != 0) {
		rc = -errno;
		close(ready[0]);
		close(ready[1]);
		return rc;
	}
	h->release_fd = rel[1];
	fflush(NULL);
	for (c = 0; c < SCALE_HOLDERS; c++) {
		pid_t pid = fork();
		if (pid < 0) {
			rc = -errno;
			break;
		}
		if (pid == 0) {
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
			    getppid() != parent)
				_exit(1);
			close(ready[0]);
			close(rel[1]);
			holder(shm, c, ready[1], rel[0]);
		}
		h->pid[h->n++] = pid;
		holder_pid[c] = pid;
	}
	close(ready[1]);
	close(rel[0]);
	/* each started holder writes one byte ('R' holding, 'E' failed),
	 * or dies: read() then sees EOF once all have */
	while (got < h->n) {
		ssize_t n = read(ready[0], &byte, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = rc ? rc : -ECHILD;
			break;
		}
		if (byte != 'R')
			rc = rc ? rc : -ECHILD;
		got++;
	}
	close(ready[0]);
	return rc;
}

int scale_reclaim_latency(struct scale_holders *h, int victim,
			  brk_segment *seg, uint64_t timeout_ms, double *ms)
{
	struct brk_info *info = malloc(sizeof(*info));
	brk_breaker *b[SCALE_HOLDER_LEASES];
	char name[BRK_NAME_MAX + 1];
	uint64_t t0, full = 0, now;
	int k, rc = 0, st;

	if (!info)
		return -ENOMEM;
	if (victim < 0 || victim >= h->n || h->pid[victim] <= 0) {
		free(info);
		return -ECHILD;
	}
	for (k = 0; k < SCALE_HOLDER_LEASES && rc == 0; k++) {
		scale_lease_name(name, sizeof(name), holder_breaker(victim, k));
		rc = brk_breaker_find(seg, name, &b[k]);
		if (rc == 0)
			rc = brk_breaker_info(b[k], info);
		full += info->in_flight;
	}
	if (rc) {
		free(info);
		return rc;
	}
	t0 = bench_now_ns();
	kill(h->pid[victim], SIGKILL);
	while (waitpid(h->pid[victim], &st, 0) < 0 && errno == EINTR)
		;
	holder_pid[victim] = 0;
	h->pid[victim] = 0;
	for (;;) {
		uint64_t held = 0;
		for (k = 0; k < SCALE_HOLDER_LEASES; k++)
			if (brk_breaker_info(b[k], info) == 0)
				held += info->in_flight;
		now = bench_now_ns();
		if (held + SCALE_HOLDER_LEASES <= full)
			break;
		if (now - t0 > timeout_ms * 1000000u) {
			rc = -ETIMEDOUT;
			break;
		}
		sleep_ms(1);
	}
	*ms = (double)(now - t0) / 1e6;
	free(info);
	return rc;
}

void scale_holders_stop(struct scale_holders *h)
{
	int i, st;

	if (h->release_fd >= 0)
		close(h->release_fd);
	h->release_fd = -1;
	for (i = 0; i < h->n; i++) {
		if (h->pid[i] <= 0)
			continue;
		while (waitpid(h->pid[i], &st, 0) < 0 && errno == EINTR)
			;
		holder_pid[i] = 0;
		h->pid[i] = 0;
	}
	h->n = 0;
}
