/*
 * upstream_proc.c - start and stop the python upstream (upstream.py).
 *
 * The child gets PR_SET_PDEATHSIG, and the script a --lifetime-s, so it
 * never outlives the demo. Its stdout line 1 is the port it bound; an
 * exec failure comes back through a close-on-exec pipe as an errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo_api.h"

#define UPSTREAM_STOP_WAIT_MS 2000

static void child_exec(const struct demo_opts *o, pid_t parent, int out_fd,
		       int err_fd)
{
	char up[32], down[32], life[32];
	char *argv[] = { (char *)o->python, (char *)o->upstream_py,
			 "--up-ms", up, "--down-ms", down,
			 "--lifetime-s", life, NULL };
	uint64_t run_s = (o->up_ms + o->down_ms + o->after_ms) / 1000;
	int e;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
	snprintf(up, sizeof(up), "%llu", (unsigned long long)o->up_ms);
	snprintf(down, sizeof(down), "%llu", (unsigned long long)o->down_ms);
	snprintf(life, sizeof(life), "%llu",
		 (unsigned long long)(2 * run_s + 30));
	if (dup2(out_fd, STDOUT_FILENO) < 0)
		goto fail;
	close(out_fd);
	execvp(o->python, argv);
fail:
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* An exec failure, reported by the child through the cloexec pipe. */
static int exec_error(int err_fd, const struct demo_opts *o)
{
	int e = 0;
	ssize_t n = read(err_fd, &e, sizeof(e));

	if (n != (ssize_t)sizeof(e))
		return 0;
	fprintf(stderr, "breakerd-demo: cannot run '%s': %s%s\n", o->python,
		strerror(e),
		e == ENOENT ? " (install python3, or pass --python PATH)" : "");
	return -e;
}

/* Read "PORT\n" from @fd within @ms milliseconds. */
static int read_port(int fd, int ms)
{
	char buf[16];
	size_t len = 0;
	uint64_t deadline = demo_now_ns() + (uint64_t)ms * 1000000u;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (len < sizeof(buf) - 1) {
		uint64_t now = demo_now_ns();
		ssize_t n;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000u) + 1) <= 0)
			continue;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return n == 0 ? -EPIPE : -errno;
		len += (size_t)n;
		buf[len] = '\0';
		if (strchr(buf, '\n')) {
			int port = atoi(buf);

			return port > 0 && port < 65536 ? port : -EPROTO;
		}
	}
	return -EPROTO;
}

static void report_start_failure(const struct demo_opts *o, pid_t pid,
				 int rc)
{
	int status = 0;

	if (rc == -ETIMEDOUT)
		fprintf(stderr,
			"breakerd-demo: the upstream (%s %s) did not print its port"
			" within %d s\n", o->python, o->upstream_py,
			DEMO_UPSTREAM_START_MS / 1000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (rc == -ETIMEDOUT)
		return;
	fprintf(stderr,
		"breakerd-demo: the upstream (%s %s) did not start: %s\n",
		o->python, o->upstream_py,
		WIFEXITED(status) ? "it exited before printing its port"
				  : "bad first line (expected the port)");
}

/*
 * The script: --upstream, else the path meson compiled in, else (the tree
 * moved since the build) demo/upstream.py under the current directory.
 */
static int upstream_script(struct demo_opts *o)
{
	int e;

	if (access(o->upstream_py, R_OK) == 0)
		return 0;
	e = errno;
	if (!o->upstream_given && access(DEMO_UPSTREAM_PY_REL, R_OK) == 0) {
		o->upstream_py = DEMO_UPSTREAM_PY_REL;
		return 0;
	}
	fprintf(stderr, "breakerd-demo: upstream script %s: %s"
		" (pass --upstream PATH)\n", o->upstream_py, strerror(e));
	return -ENOENT;
}

/**
 * upstream_start - run @o->python @o->upstream_py and read its port.
 * @o->upstream_py may be replaced by the fallback path.
 * Returns 0 and fills @up, or a negative errno (message printed).
 */
int upstream_start(struct demo_opts *o, struct upstream *up)
{
	int outp[2], errp[2], rc;
	pid_t parent = getpid();

	if (upstream_script(o) != 0)
		return -ENOENT;
	if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		perror("breakerd-demo: pipe");
		return -errno;
	}
	fflush(NULL);
	up->pid = fork();
	if (up->pid < 0) {
		perror("breakerd-demo: fork");
		return -errno;
	}
	if (up->pid == 0)
		child_exec(o, parent, outp[1], errp[1]);
	close(outp[1]);
	close(errp[1]);
	rc = exec_error(errp[0], o);
	close(errp[0]);
	if (rc < 0) {
		close(outp[0]);
		waitpid(up->pid, NULL, 0);
		up->pid = 0;
		return rc;
	}
	rc = read_port(outp[0], DEMO_UPSTREAM_START_MS);
	close(outp[0]);
	if (rc < 0) {
		report_start_failure(o, up->pid, rc);
		up->pid = 0;
		return rc;
	}
	up->port = rc;
	snprintf(up->url, sizeof(up->url), "http://127.0.0.1:%d", up->port);
	return 0;
}

/**
 * upstream_stop - SIGTERM the upstream, SIGKILL it if it lingers, reap it.
 */
void upstream_stop(struct upstream *up)
{
	int waited;

	if (up->pid <= 0)
		return;
	kill(up->pid, SIGTERM);
	for (waited = 0; waited < UPSTREAM_STOP_WAIT_MS; waited += 10) {
		if (waitpid(up->pid, NULL, WNOHANG) == up->pid) {
			up->pid = 0;
			return;
		}
		usleep(10000);
	}
	kill(up->pid, SIGKILL);
	waitpid(up->pid, NULL, 0);
	up->pid = 0;
}
