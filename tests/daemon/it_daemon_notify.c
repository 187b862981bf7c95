/*
 * it_daemon_notify.c - breakerd speaks systemd's notification protocol on
 * a real $NOTIFY_SOCKET: an AF_UNIX datagram socket this test binds, as
 * systemd does for a Type=notify unit.
 *
 *  - the first datagram is READY=1, sent by breakerd's own pid, and when
 *    it arrives the segment exists and shows breakerd's heartbeat (the
 *    segment is attached and the first scan is done);
 *  - with WATCHDOG_USEC=200000 it sends WATCHDOG=1 about every 100 ms,
 *    also while a scan interval of 1 s is longer than that;
 *  - without WATCHDOG_USEC it sends no WATCHDOG=1;
 *  - SIGHUP: RELOADING=1 with MONOTONIC_USEC= (CLOCK_MONOTONIC at the
 *    reload, sd_notify(3)), then READY=1 once the reload is done;
 *  - SIGTERM: STOPPING=1, then exit 0.
 * Built without libsystemd (meson -Dsystemd=disabled), breakerd must send
 * nothing and warn on stderr that it cannot notify; the test checks that
 * instead.
 *
 * Usage: it_daemon_notify BREAKERD_EXE HAVE_LIBSYSTEMD(0|1)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

static const char *exe;
static char sock_path[108];

/* The next datagram within @timeout_ms into @buf (NUL-terminated), its
 * sender's pid in *@pid. Returns its length, 0 on timeout. */
static int recv_msg(int fd, char *buf, size_t cap, pid_t *pid, int timeout_ms)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct iovec iov = { .iov_base = buf, .iov_len = cap - 1 };
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t n;

	*pid = 0;
	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	n = recvmsg(fd, &mh, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*pid = uc.pid;
		}
	return (int)n;
}

static int notify_socket(void)
{
	struct sockaddr_un sa;
	int fd, one = 1;

	snprintf(sock_path, sizeof(sock_path), "/tmp/brkit-notify-%d.sock",
		 (int)getpid());
	unlink(sock_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		it_skip("socket(AF_UNIX, SOCK_DGRAM): %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		it_skip("bind %s: %s", sock_path, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	setenv("NOTIFY_SOCKET", sock_path, 1);
	return fd;
}

static pid_t start(const char *shm, const char *interval, int err_fd)
{
	return it_daemon_start(exe, shm, interval, err_fd);
}

/* CLOCK_MONOTONIC in µs, the clock of MONOTONIC_USEC= (sd_notify(3)). */
static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* SIGHUP: RELOADING=1 with a MONOTONIC_USEC= taken after the signal was
 * sent, then READY=1 once the reload is done (WATCHDOG=1s in between are
 * skipped). */
static void run_reload(int fd, pid_t d, const char *tag)
{
	char buf[512];
	const char *mu;
	uint64_t before, after, end, usec = 0;
	int n, reloading = 0, ready = 0, order_ok = 0;
	pid_t from;

	before = mono_us();
	kill(d, SIGHUP);
	end = it_now_ms() + 5000;
	while (!ready && it_now_ms() < end) {
		n = recv_msg(fd, buf, sizeof(buf), &from,
			     (int)(end - it_now_ms()) + 1);
		if (n <= 0 || from != d || strcmp(buf, "WATCHDOG=1") == 0)
			continue;
		if (strncmp(buf, "RELOADING=1", 11) == 0) {
			reloading = 1;
			mu = strstr(buf, "\nMONOTONIC_USEC=");
			if (mu)
				usec = strtoull(mu + 16, NULL, 10);
		} else if (strncmp(buf, "READY=1", 7) == 0) {
			ready = 1;
			order_ok = reloading;
		}
	}
	after = mono_us();
	CHECK(reloading, "%s SIGHUP: RELOADING=1 from breakerd's pid", tag);
	CHECK(usec >= before && usec <= after, "%s RELOADING=1 carries "
	      "MONOTONIC_USEC= of CLOCK_MONOTONIC at the reload (%llu in "
	      "[%llu, %llu])", tag, (unsigned long long)usec,
	      (unsigned long long)before, (unsigned long long)after);
	CHECK(ready && order_ok, "%s then READY=1 after the reload", tag);
}

/* One run: READY=1 first, then WATCHDOG=1s (counted over 700 ms) and
 * STOPPING=1 on SIGTERM, RELOADING=1 then READY=1 on SIGHUP. */
static void run_notify(int fd, const char *shm, int watchdog)
{
	const char *tag = watchdog ? "[watchdog]" : "[no watchdog]";
	struct brk_segment_info si;
	char buf[512];
	int n, st, pings = 0, ready_ok, stopping = 0, other = 0;
	uint64_t end;
	pid_t d, from;

	if (watchdog)
		setenv("WATCHDOG_USEC", "200000", 1);
	else
		unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	d = start(shm, "1s", -1);

	n = recv_msg(fd, buf, sizeof(buf), &from, 5000);
	ready_ok = n > 0 && strncmp(buf, "READY=1", 7) == 0;
	CHECK(ready_ok && from == d, "%s the first datagram is READY=1 from "
	      "breakerd's pid (%d from %d: '%.*s')", tag, (int)d, (int)from,
	      (int)strcspn(buf, "\n"), n > 0 ? buf : "");
	CHECK(n > 0 && strstr(buf, "STATUS=supervising ") && strstr(buf, shm),
	      "%s READY=1 comes with STATUS= naming %s", tag, shm);
	if (ready_ok) {
		/* At READY=1 the first scan has published the heartbeat. */
		brk_segment *seg = it_attach(shm, 0);

		memset(&si, 0, sizeof(si));
		brk_segment_info(seg, &si);
		CHECK(si.daemon_pid == d && si.heartbeat_age_ms < 1000,
		      "%s at READY=1 the segment is attached and scanned once "
		      "(daemon pid %d, heartbeat age %llu ms)", tag,
		      (int)si.daemon_pid,
		      (unsigned long long)si.heartbeat_age_ms);
		brk_detach(seg);
	}

	end = it_now_ms() + 700;
	while (it_now_ms() < end) {
		n = recv_msg(fd, buf, sizeof(buf), &from,
			     (int)(end - it_now_ms()) + 1);
		if (n <= 0)
			continue;
		if (strcmp(buf, "WATCHDOG=1") == 0)
			pings++;
		else
			other++;
	}
	if (watchdog)
		CHECK(pings >= 3 && pings <= 12, "[watchdog] WATCHDOG_USEC=200000: "
		      "WATCHDOG=1 about every 100 ms while the interval is 1 s "
		      "(%d in 700 ms)", pings);
	else
		CHECK(pings == 0, "[no watchdog] no WATCHDOG_USEC: no WATCHDOG=1 "
		      "(%d in 700 ms)", pings);
	CHECK(other == 0, "%s nothing else before SIGHUP (%d)", tag, other);

	run_reload(fd, d, tag);

	kill(d, SIGTERM);
	end = it_now_ms() + 5000;
	while (!stopping && it_now_ms() < end) {
		n = recv_msg(fd, buf, sizeof(buf), &from,
			     (int)(end - it_now_ms()) + 1);
		stopping = n > 0 && strncmp(buf, "STOPPING=1", 10) == 0 &&
			   from == d;
	}
	CHECK(stopping, "%s SIGTERM: STOPPING=1 from breakerd's pid", tag);
	st = it_daemon_stop(d, SIGTERM, 5000);
	CHECK(st == 0, "%s then exit 0 (%d)", tag, st);
}

/* Built without libsystemd: no datagram, a warning on stderr. */
static void run_without(int fd, const char *shm)
{
	char tmpl[] = "/tmp/brkit-notify-log.XXXXXX", buf[4096];
	int lfd, n, st;
	ssize_t len;
	pid_t d, from;

	lfd = mkstemp(tmpl);
	if (lfd < 0)
		it_skip("mkstemp: %s", strerror(errno));
	unlink(tmpl);
	setenv("WATCHDOG_USEC", "200000", 1);
	d = start(shm, "20ms", lfd);
	n = recv_msg(fd, buf, sizeof(buf), &from, 700);
	CHECK(n == 0, "[no libsystemd] nothing sent to NOTIFY_SOCKET (%d bytes)", n);
	st = it_daemon_stop(d, SIGTERM, 5000);
	CHECK(st == 0, "[no libsystemd] SIGTERM: exit 0 (%d)", st);
	len = pread(lfd, buf, sizeof(buf) - 1, 0);
	buf[len > 0 ? len : 0] = '\0';
	close(lfd);
	CHECK(strstr(buf, "level=warn") && strstr(buf, "without libsystemd"),
	      "[no libsystemd] a warning says breakerd cannot notify");
}

int main(int argc, char **argv)
{
	const char *shm;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s BREAKERD_EXE 0|1\n", argv[0]);
		return 2;
	}
	exe = argv[1];
	it_init("daemon-notify", 60);
	shm = it_segment(NULL);
	fd = notify_socket();
	if (strcmp(argv[2], "1") == 0) {
		run_notify(fd, shm, 1);
		run_notify(fd, shm, 0);
	} else {
		run_without(fd, shm);
	}
	close(fd);
	unlink(sock_path);
	return it_finish();
}
