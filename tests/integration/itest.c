/*
 * itest.c - helpers for the forked-worker integration tests.
 */
#include "itest.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *test_name = "itest";
static pid_t parent_pid;
static pid_t children[IT_MAX_CHILDREN];
static int n_children;
static char segments[IT_MAX_SEGMENTS][128];
static char seg_paths[IT_MAX_SEGMENTS][160]; /* /dev/shm/... for the watchdog */
static int n_segments;
static int failures, checks;

uint64_t it_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t it_now_ms(void)
{
	return it_now_ns() / 1000000u;
}

void it_sleep_us(unsigned us)
{
	struct timespec ts = { .tv_sec = us / 1000000u,
			       .tv_nsec = (long)(us % 1000000u) * 1000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void it_sleep_ms(unsigned ms)
{
	it_sleep_us(ms * 1000u);
}

/* Async-signal-safe: the watchdog and SIGTERM (meson's timeout). */
static void emergency(int sig)
{
	static const char msg[] = "itest: watchdog or signal: killing children, "
				  "unlinking segments, exit 1\n";
	int i;

	if (getpid() != parent_pid)
		_exit(1);
	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	for (i = 0; i < n_children; i++)
		if (children[i] > 0)
			kill(children[i], SIGKILL);
	for (i = 0; i < n_segments; i++)
		unlink(seg_paths[i]);
	_exit(1);
}

void it_init(const char *test, unsigned watchdog_s)
{
	struct sigaction sa;

	test_name = test;
	parent_pid = getpid();
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = emergency;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	alarm(watchdog_s);
	printf("# %s (pid %d, watchdog %us)\n", test, (int)parent_pid, watchdog_s);
}

const char *it_segment(const char *tag)
{
	char *s;

	if (n_segments >= IT_MAX_SEGMENTS) {
		fprintf(stderr, "itest: too many segments\n");
		exit(1);
	}
	s = segments[n_segments];
	if (tag)
		snprintf(s, sizeof(segments[0]), "/brkit-%s-%s-%d", test_name,
			 tag, (int)getpid());
	else
		snprintf(s, sizeof(segments[0]), "/brkit-%s-%d", test_name,
			 (int)getpid());
	snprintf(seg_paths[n_segments], sizeof(seg_paths[0]), "/dev/shm%s", s);
	/* A leftover from a crashed earlier run with a reused pid. */
	brk_segment_unlink(s);
	n_segments++;
	return s;
}

int it_attach_rc(const char *shm, uint32_t capacity, uint32_t flags,
		 brk_segment **out, char *errbuf, size_t errlen)
{
	struct brk_attach_opts o;

	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.capacity = capacity;
	o.flags = flags;
	o.init_wait_ms = 500;
	if (errbuf && errlen) {
		errbuf[0] = '\0';
		o.errbuf = errbuf;
		o.errbuf_len = errlen;
	}
	return brk_attach(&o, out);
}

brk_segment *it_attach(const char *shm, uint32_t capacity)
{
	brk_segment *seg = NULL;
	char err[512];
	int rc = it_attach_rc(shm, capacity, 0, &seg, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "[%d] brk_attach(%s): %d %s: %s\n", (int)getpid(),
			shm, rc, brk_strerror(rc), err);
		if (getpid() == parent_pid) {
			it_finish();
		}
		exit(1);
	}
	return seg;
}

void *it_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap shared");
		exit(1);
	}
	return p;
}

static void track(pid_t pid)
{
	if (n_children < IT_MAX_CHILDREN) {
		children[n_children++] = pid;
		return;
	}
	fprintf(stderr, "itest: too many children\n");
	kill(pid, SIGKILL);
	it_finish();
	exit(1);
}

static void untrack(pid_t pid)
{
	int i;

	for (i = 0; i < n_children; i++)
		if (children[i] == pid) {
			children[i] = children[--n_children];
			return;
		}
}

static void child_setup(pid_t ppid)
{
	struct sigaction sa;

	n_children = 0;
	n_segments = 0; /* never unlink from a child */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ppid)
		_exit(1); /* the parent died before prctl */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

pid_t it_fork(int (*fn)(int idx, void *arg), int idx, void *arg)
{
	pid_t ppid = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		it_finish();
		exit(1);
	}
	if (pid == 0) {
		child_setup(ppid);
		_exit(fn(idx, arg));
	}
	track(pid);
	return pid;
}

pid_t it_spawn(char *const argv[], int out_fd, int err_fd)
{
	pid_t ppid = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		it_finish();
		exit(1);
	}
	if (pid == 0) {
		child_setup(ppid);
		if (out_fd >= 0)
			dup2(out_fd, STDOUT_FILENO);
		if (err_fd >= 0)
			dup2(err_fd, STDERR_FILENO);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	track(pid);
	return pid;
}

int it_wait(pid_t pid, int timeout_ms, int *status)
{
	uint64_t deadline = it_now_ms() + (uint64_t)timeout_ms;
	int st = 0;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			untrack(pid);
			if (status)
				*status = st;
			return 0;
		}
		if (r < 0 && errno != EINTR) {
			untrack(pid);
			return -1;
		}
		if (it_now_ms() >= deadline)
			return -1;
		it_sleep_ms(2);
	}
}

void it_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	untrack(pid);
}

void it_kill_all(void)
{
	while (n_children > 0)
		it_kill(children[n_children - 1]);
}

pid_t it_daemon_start(const char *exe, const char *shm, const char *interval,
		      int err_fd)
{
	char *argv[] = { (char *)exe, "--shm", (char *)shm, "--interval",
			 (char *)interval, NULL };

	return it_spawn(argv, -1, err_fd);
}

int it_daemon_wait_heartbeat(brk_segment *seg, pid_t pid, int timeout_ms)
{
	uint64_t deadline = it_now_ms() + (uint64_t)timeout_ms;
	struct brk_segment_info si;

	do {
		if (brk_segment_info(seg, &si) == 0 && si.daemon_pid == pid &&
		    si.heartbeat_age_ms < 1000)
			return 0;
		it_sleep_ms(5);
	} while (it_now_ms() < deadline);
	return -1;
}

int it_daemon_stop(pid_t pid, int sig, int timeout_ms)
{
	int st;

	kill(pid, sig);
	if (it_wait(pid, timeout_ms, &st) < 0) {
		it_kill(pid);
		return -1;
	}
	if (!WIFEXITED(st))
		return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
	return WEXITSTATUS(st);
}

int it_check(int ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s - ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (!ok)
		printf("  (%s:%d)", file, line);
	printf("\n");
	return ok;
}

void it_note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

int it_failures(void)
{
	return failures;
}

static void cleanup(void)
{
	int i;

	alarm(0);
	it_kill_all();
	for (i = 0; i < n_segments; i++)
		brk_segment_unlink(segments[i]);
	n_segments = 0;
}

void it_skip(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP - ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	cleanup();
	exit(IT_SKIP);
}

int it_finish(void)
{
	cleanup();
	printf("# %s: %d checks, %d failed: %s\n", test_name, checks, failures,
	       failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}

void it_info(brk_breaker *b, struct brk_info *out)
{
	int rc = brk_breaker_info(b, out);

	if (rc != 0) {
		fprintf(stderr, "brk_breaker_info: %d %s\n", rc, brk_strerror(rc));
		if (getpid() == parent_pid)
			it_finish();
		exit(1);
	}
}
