/*
 * bctl_run.c - fork/exec a command with piped, scanned output, a timeout
 * and signal forwarding. See bctl_run.h.
 *
 * Signals arrive through a signalfd (the caller keeps them blocked), so
 * one poll() waits for output, signals and the child's exit together.
 * Every fd created here is O_CLOEXEC; the child gets only its stdin and
 * the two pipe write ends (as fds 1 and 2).
 */
#include "bctl_run.h"

#include "breaker.h"
#include "cli_util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/prctl.h>
#include <unistd.h>

#define RUN_READ_BUF 65536

struct run_stream {
	int fd;   /* our read end, -1 once closed */
	int out;  /* where the bytes go: 1 or 2 */
	struct scan_stream scan;
};

struct run_state {
	pid_t pid;
	int sfd;
	bool reaped;
	bool stop_noted;
	uint64_t deadline_ns;  /* timeout; 0: none */
	uint64_t kill_at_ns;   /* SIGKILL after the grace; 0: none */
	uint64_t idle_since_ns;
	struct run_stream st[2];
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child: become the command, or report execvp's errno on @ep. */
static void run_child(const struct run_opts *o, const struct sigaction *pipe_sa,
		      int out_w, int err_w, int ep)
{
	pid_t bctl = getppid();
	int e;

	/* If bctl is killed (its lease is then reclaimed), CMD must not go on
	 * running outside the bulkhead it was admitted to. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != bctl)
		_exit(126);
	setpgid(0, 0);
	sigaction(SIGPIPE, pipe_sa, NULL);
	sigprocmask(SIG_SETMASK, o->child_mask, NULL);
	if (dup2(out_w, STDOUT_FILENO) < 0 || dup2(err_w, STDERR_FILENO) < 0) {
		e = errno;
	} else {
		execvp(o->argv[0], o->argv);
		e = errno;
	}
	if (write(ep, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* Did exec succeed? The error pipe closes on exec, or carries an errno. */
static int run_exec_status(int ep)
{
	ssize_t n;
	int e = 0;

	do
		n = read(ep, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(e) ? (e ? e : EIO) : 0;
}

static void run_failed_start(struct run_state *rs, int e, struct run_result *r)
{
	int status;

	r->start_errno = e;
	r->exec_failed = true;
	while (waitpid(rs->pid, &status, 0) < 0 && errno == EINTR)
		;
	close_fd(&rs->st[0].fd);
	close_fd(&rs->st[1].fd);
}

/*
 * fds: [0,1] stdout pipe, [2,3] stderr pipe, [4,5] exec-error pipe (read,
 * write ends), all O_CLOEXEC.
 */
static int run_spawn(const struct run_opts *o, const struct sigaction *pipe_sa,
		     struct run_state *rs, struct run_result *r)
{
	int fds[6] = { -1, -1, -1, -1, -1, -1 }, e, i;

	if (pipe2(fds, O_CLOEXEC) < 0 || pipe2(fds + 2, O_CLOEXEC) < 0 ||
	    pipe2(fds + 4, O_CLOEXEC) < 0 || (rs->pid = fork()) < 0) {
		e = errno;
		for (i = 0; i < 6; i++)
			close_fd(&fds[i]);
		r->start_errno = e;
		return -e;
	}
	if (rs->pid == 0)
		run_child(o, pipe_sa, fds[1], fds[3], fds[5]);
	setpgid(rs->pid, rs->pid); /* also done by the child: no race */
	for (i = 1; i < 6; i += 2)
		close_fd(&fds[i]);
	rs->st[0].fd = fds[0];
	rs->st[1].fd = fds[2];
	e = run_exec_status(fds[4]);
	close_fd(&fds[4]);
	if (e) {
		run_failed_start(rs, e, r);
		return -e;
	}
	return 0;
}

static void run_signal_group(struct run_state *rs, int sig)
{
	if (kill(-rs->pid, sig) < 0 && errno == ESRCH && !rs->reaped)
		kill(rs->pid, sig);
}

/* A command stopped by SIGTTIN/SIGTTOU waits for a terminal it cannot
 * have (it is not in the foreground group): say so, once. */
static void run_note_stop(struct run_state *rs, int status)
{
	int sig = WSTOPSIG(status);

	if (rs->stop_noted || (sig != SIGTTIN && sig != SIGTTOU))
		return;
	rs->stop_noted = true;
	cli_note("the command stopped on terminal %s: it runs in its own process "
		 "group; redirect its input (< /dev/null), or interrupt bctl",
		 sig == SIGTTIN ? "input" : "output");
}

static void run_try_reap(struct run_state *rs, struct run_result *r)
{
	int status;

	while (!rs->reaped &&
	       waitpid(rs->pid, &status, WNOHANG | WUNTRACED) == rs->pid) {
		if (WIFSTOPPED(status)) {
			run_note_stop(rs, status);
			continue;
		}
		rs->reaped = true;
		r->status = status;
		rs->idle_since_ns = brk_monotonic_ns(NULL);
	}
}

static int write_all(int fd, const char *p, size_t n)
{
	struct pollfd pf = { fd, POLLOUT, 0 };
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && errno == EAGAIN) {
			poll(&pf, 1, -1);
		} else if (w < 0 && errno != EINTR) {
			return -errno;
		}
	}
	return 0;
}

static void stream_close(struct run_stream *st, struct run_result *r)
{
	close_fd(&st->fd);
	scan_finish(&st->scan, &r->scan);
}

/* Pass one read's worth through, and scan it. */
static void stream_pump(struct run_state *rs, struct run_stream *st,
			struct run_result *r)
{
	static char buf[RUN_READ_BUF];
	ssize_t n = read(st->fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		stream_close(st, r);
		return;
	}
	scan_feed(&st->scan, buf, (size_t)n, &r->scan);
	/* Our reader is gone: close the pipe so the command sees it too. */
	if (write_all(st->out, buf, (size_t)n) < 0)
		stream_close(st, r);
	rs->idle_since_ns = brk_monotonic_ns(NULL); /* after a slow write, too */
}

static void run_signals(struct run_state *rs, struct run_result *r)
{
	struct signalfd_siginfo si;

	while (read(rs->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		run_signal_group(rs, (int)si.ssi_signo);
		run_signal_group(rs, SIGCONT); /* a stopped command must see it */
		r->interrupted = true;
	}
}

/* Timeout, kill grace and the drain after exit. */
static void run_timers(struct run_state *rs, struct run_result *r)
{
	uint64_t now = brk_monotonic_ns(NULL);

	if (rs->deadline_ns && !r->timed_out && now >= rs->deadline_ns) {
		r->timed_out = true;
		run_signal_group(rs, SIGTERM);
		run_signal_group(rs, SIGCONT); /* a stopped command must see it */
		rs->kill_at_ns = now + RUN_KILL_GRACE_MS * 1000000ull;
	}
	if (rs->kill_at_ns && now >= rs->kill_at_ns) {
		run_signal_group(rs, SIGKILL);
		rs->kill_at_ns = 0;
	}
	if (rs->reaped &&
	    now >= rs->idle_since_ns + RUN_DRAIN_IDLE_MS * 1000000ull) {
		if (rs->st[0].fd >= 0)
			stream_close(&rs->st[0], r);
		if (rs->st[1].fd >= 0)
			stream_close(&rs->st[1], r);
	}
}

static uint64_t min_nonzero(uint64_t a, uint64_t b)
{
	return !a ? b : (!b || a < b ? a : b);
}

/* How long poll() may sleep: until the next timer, or forever. */
static int run_poll_ms(const struct run_state *rs, const struct run_result *r)
{
	uint64_t next = 0, now = brk_monotonic_ns(NULL);

	if (rs->deadline_ns && !r->timed_out)
		next = rs->deadline_ns;
	next = min_nonzero(next, rs->kill_at_ns);
	if (rs->reaped)
		next = min_nonzero(next, rs->idle_since_ns +
				   RUN_DRAIN_IDLE_MS * 1000000ull);
	if (!next)
		return -1;
	if (next <= now)
		return 0;
	return (int)((next - now + 999999) / 1000000 > 60000 ? 60000 :
		     (next - now + 999999) / 1000000);
}

static void run_loop(struct run_state *rs, struct run_result *r)
{
	struct timespec pause = { 0, 10 * 1000 * 1000L };
	struct pollfd pf[3];
	int i;

	while (!rs->reaped || rs->st[0].fd >= 0 || rs->st[1].fd >= 0) {
		run_timers(rs, r);
		pf[0] = (struct pollfd){ rs->sfd, POLLIN, 0 };
		pf[1] = (struct pollfd){ rs->st[0].fd, POLLIN, 0 };
		pf[2] = (struct pollfd){ rs->st[1].fd, POLLIN, 0 };
		if (poll(pf, 3, run_poll_ms(rs, r)) < 0) {
			if (errno != EINTR)
				nanosleep(&pause, NULL); /* ENOMEM: retry soon */
			pf[0].revents = pf[1].revents = pf[2].revents = 0;
		}
		if (pf[0].revents)
			run_signals(rs, r);
		for (i = 0; i < 2; i++)
			if (pf[i + 1].revents && rs->st[i].fd >= 0)
				stream_pump(rs, &rs->st[i], r);
		run_try_reap(rs, r);
	}
}

static int run_setup_signals(const struct run_opts *o, sigset_t *old_mask,
			     struct sigaction *old_pipe, int *sfd)
{
	struct sigaction ign;
	sigset_t set = *o->forward;

	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, old_mask) < 0)
		return -errno;
	*sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (*sfd < 0) {
		sigprocmask(SIG_SETMASK, old_mask, NULL);
		return -errno;
	}
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, old_pipe);
	return 0;
}

int bctl_run(const struct run_opts *o, struct run_result *r)
{
	struct run_state rs;
	struct sigaction old_pipe;
	sigset_t old_mask;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&rs, 0, sizeof(rs));
	scan_result_init(&r->scan);
	rs.st[0] = (struct run_stream){ .fd = -1, .out = STDOUT_FILENO };
	rs.st[1] = (struct run_stream){ .fd = -1, .out = STDERR_FILENO };
	scan_stream_init(&rs.st[0].scan);
	scan_stream_init(&rs.st[1].scan);
	rc = run_setup_signals(o, &old_mask, &old_pipe, &rs.sfd);
	if (rc < 0) {
		r->start_errno = -rc;
		return rc;
	}
	if (o->timeout_ms)
		rs.deadline_ns = brk_monotonic_ns(NULL) + o->timeout_ms * 1000000ull;
	rc = run_spawn(o, &old_pipe, &rs, r);
	if (rc == 0)
		run_loop(&rs, r);
	close_fd(&rs.sfd);
	sigaction(SIGPIPE, &old_pipe, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return rc;
}
