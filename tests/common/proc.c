/*
 * proc.c - helpers of the forked-process tests (integration, daemon); see
 * proc.h.
 */
#include "proc.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <poll.h>
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

/* fork(); in the child (0 returned) child_setup() has run; in the parent
 * the child is tracked. A failed fork ends the test. */
static pid_t fork_tracked(void)
{
	pid_t ppid = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		it_finish();
		exit(1);
	}
	if (pid == 0)
		child_setup(ppid);
	else
		track(pid);
	return pid;
}

pid_t it_fork(int (*fn)(int idx, void *arg), int idx, void *arg)
{
	pid_t pid = fork_tracked();

	if (pid == 0)
		_exit(fn(idx, arg));
	return pid;
}

pid_t it_spawn(char *const argv[], int out_fd, int err_fd)
{
	pid_t pid = fork_tracked();

	if (pid == 0) {
		if (out_fd >= 0)
			dup2(out_fd, STDOUT_FILENO);
		if (err_fd >= 0)
			dup2(err_fd, STDERR_FILENO);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
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

/* ---- workers told what to do through a shared page, bctl runs, line
 * reading (formerly tests/features/ft.c) ---- */

#define FT_MAX_ARGS 32

brk_breaker *ft_breaker(brk_segment *seg, const char *name,
			const struct brk_config *cfg)
{
	brk_breaker *b = NULL;
	int rc = brk_breaker_get(seg, name, cfg, &b);

	if (rc != 0) {
		fprintf(stderr, "[%d] brk_breaker_get(%s): %d %s\n",
			(int)getpid(), name, rc, brk_strerror(rc));
		exit(1);
	}
	return b;
}

uint64_t ft_events_written(brk_segment *seg)
{
	struct brk_segment_info si;

	if (brk_segment_info(seg, &si) != 0)
		return 0;
	return si.events_written;
}

/* ---- workers ------------------------------------------------------- */

static void worker_calls(struct ft_worker *w, brk_breaker *b)
{
	struct brk_refusal why;
	brk_permit p;
	int i, rc;

	w->admitted = w->refused = w->release_errors = 0;
	w->last_rc = 0;
	w->by[0] = '\0';
	w->wait_ms = 0;
	for (i = 0; i < w->n; i++) {
		memset(&why, 0, sizeof(why));
		rc = brk_acquire(b, &p, &why);
		w->last_rc = rc;
		if (rc != 0) {
			w->refused++;
			memcpy(w->by, why.by, sizeof(w->by));
			w->by[BRK_NAME_MAX] = '\0';
			w->wait_ms = why.wait_ms;
			continue;
		}
		w->admitted++;
		if (w->hold_ms > 0)
			it_sleep_ms((unsigned)w->hold_ms);
		if (brk_release(&p, w->outcome, w->reason, 0) != 0)
			w->release_errors++;
	}
}

static int worker_main(int idx, void *arg)
{
	struct ft_worker *w = arg;
	brk_segment *seg;
	brk_breaker *b;
	int seen = 0;

	(void)idx;
	if (w->disabled_env)
		setenv(BRK_DISABLED_ENV, "1", 1);
	else
		unsetenv(BRK_DISABLED_ENV);
	seg = it_attach(w->shm, 0);
	b = ft_breaker(seg, w->name, &w->cfg);
	AT_STORE(&w->self_pid, (int32_t)getpid());
	for (;;) {
		int s = AT_LOAD(&w->seq);
		if (s == seen) {
			it_sleep_us(200);
			continue;
		}
		seen = s;
		if (AT_LOAD(&w->op) == FT_OP_EXIT)
			break;
		worker_calls(w, b);
		AT_STORE(&w->ack, s);
	}
	brk_detach(seg);
	AT_STORE(&w->ack, seen);
	return 0;
}

struct ft_worker *ft_worker_start(const char *shm, const char *name,
				  const struct brk_config *cfg,
				  int disabled_env)
{
	struct ft_worker *w = it_shared(sizeof(*w));

	snprintf(w->shm, sizeof(w->shm), "%s", shm);
	snprintf(w->name, sizeof(w->name), "%s", name);
	if (cfg)
		w->cfg = *cfg;
	else
		brk_config_init(&w->cfg);
	w->disabled_env = disabled_env;
	w->pid = it_fork(worker_main, 0, w);
	return w;
}

static int worker_cmd(struct ft_worker *w, int op, int timeout_ms)
{
	uint64_t deadline = it_now_ms() + (uint64_t)timeout_ms;
	int s = AT_LOAD(&w->seq) + 1;

	AT_STORE(&w->op, op);
	AT_STORE(&w->seq, s);
	while (AT_LOAD(&w->ack) != s) {
		if (it_now_ms() > deadline)
			return -1;
		it_sleep_us(200);
	}
	return 0;
}

int ft_worker_calls(struct ft_worker *w, int n, int outcome, int reason)
{
	w->n = n;
	w->outcome = outcome;
	w->reason = reason;
	return worker_cmd(w, FT_OP_CALLS, 10000);
}

void ft_worker_stop(struct ft_worker *w)
{
	int st;

	if (worker_cmd(w, FT_OP_EXIT, 5000) == 0 && it_wait(w->pid, 5000, &st) == 0)
		return;
	it_kill(w->pid);
}

/* ---- bctl ---------------------------------------------------------- */

static void slurp(int fd, char *buf, size_t cap)
{
	ssize_t n;

	if (!buf)
		return;
	n = pread(fd, buf, cap - 1, 0);
	if (n < 0)
		n = 0;
	while (n > 0 && buf[n - 1] == '\n') /* one-line messages print neatly */
		n--;
	buf[n] = '\0';
}

int ft_bctl(const char *bctl, const char *shm, char *out, char *err,
	    size_t cap, ...)
{
	char *argv[FT_MAX_ARGS];
	FILE *fo = tmpfile(), *fe = tmpfile();
	va_list ap;
	int n = 0, st = 0, rc;
	pid_t pid;
	char *a;

	if (!fo || !fe) {
		fprintf(stderr, "tmpfile: %s\n", strerror(errno));
		exit(1);
	}
	argv[n++] = (char *)bctl;
	argv[n++] = "--shm";
	argv[n++] = (char *)shm;
	va_start(ap, cap);
	while ((a = va_arg(ap, char *)) != NULL && n < FT_MAX_ARGS - 1)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	pid = it_spawn(argv, fileno(fo), fileno(fe));
	if (it_wait(pid, 10000, &st) < 0) {
		it_kill(pid);
		rc = -1;
	} else if (WIFEXITED(st)) {
		rc = WEXITSTATUS(st);
	} else {
		rc = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
	}
	slurp(fileno(fo), out, cap);
	slurp(fileno(fe), err, cap);
	fclose(fo);
	fclose(fe);
	return rc;
}

/* ---- lines from a pipe --------------------------------------------- */

void ft_lines_init(struct ft_lines *r, int fd)
{
	r->fd = fd;
	r->len = 0;
	r->eof = 0;
}

static int take_line(struct ft_lines *r, char *line, size_t cap)
{
	char *nl = memchr(r->buf, '\n', r->len);
	size_t n, k;

	if (!nl) {
		if (r->len < sizeof(r->buf))
			return 0;
		nl = r->buf + r->len - 1; /* an over-long line: cut it */
	}
	n = (size_t)(nl - r->buf);
	k = n < cap - 1 ? n : cap - 1;
	memcpy(line, r->buf, k);
	line[k] = '\0';
	r->len -= n + 1;
	memmove(r->buf, nl + 1, r->len);
	return 1;
}

int ft_line(struct ft_lines *r, char *line, size_t cap, int timeout_ms)
{
	uint64_t deadline = it_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);

	for (;;) {
		struct pollfd pfd = { r->fd, POLLIN, 0 };
		int64_t left;
		ssize_t got;

		if (take_line(r, line, cap))
			return 1;
		if (r->eof)
			return -1;
		left = (int64_t)deadline - (int64_t)it_now_ms();
		if (left < 0)
			left = 0;
		got = poll(&pfd, 1, (int)left);
		if (got == 0)
			return 0;
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);
		if (got == 0)
			r->eof = 1;
		else if (got > 0)
			r->len += (size_t)got;
	}
}

int64_t ft_json_u64(const char *line, const char *key)
{
	char pat[80];
	const char *p;
	char *end;
	unsigned long long v;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || v > INT64_MAX)
		return -1;
	return (int64_t)v;
}

int ft_json_has(const char *line, const char *key, const char *value)
{
	char pat[160];

	snprintf(pat, sizeof(pat), "\"%s\":\"%s\"", key, value);
	return strstr(line, pat) != NULL;
}
