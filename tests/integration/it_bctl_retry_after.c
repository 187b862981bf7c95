/*
 * it_bctl_retry_after.c - a Retry-After seen by one `bctl exec` cools every
 * process, not only the one that received it.
 *
 *   bctl --shm S exec NAME -- sh -c 'echo "Retry-After: 2"; exit 0'
 *
 * then batches of 8 concurrent `bctl --shm S exec NAME -- CMD` exit 75
 * (EX_TEMPFAIL) without running CMD at ~0.5 s and ~1.2 s; from ~2.6 s on
 * (polled up to 5 s) they run CMD and exit 0. The same with the text
 * `try again in 2 seconds` on stderr, and with a Retry-After HTTP-date
 * 2-3 s ahead (bctl reads both RFC 9110 forms). CMD appends a line to a marker file,
 * so "not run" is checked, not assumed.
 *
 * The breakers have implicit_pace off (the defaults otherwise): with it on
 * (the default since issue 21) a rate-limit answer is paced, not cooled
 * (tests/integration/it_implicit_pace.sh).
 *
 * Usage: it_bctl_retry_after BCTL_EXE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#define NB 8
#define EX_TEMPFAIL 75

static const char *bctl, *shm;
static char mark[] = "/tmp/brkit-bctl-mark.XXXXXX";

static int tmpfile_fd(char *tmpl)
{
	int fd = mkstemp(tmpl);

	if (fd < 0)
		it_skip("mkstemp: %s", strerror(errno));
	return fd;
}

static size_t read_fd(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return n > 0 ? (size_t)n : 0;
}

static int count_lines(void)
{
	char buf[8192];
	int fd = open(mark, O_RDONLY), n = 0;
	size_t len, i;

	if (fd < 0)
		return -1;
	len = read_fd(fd, buf, sizeof(buf));
	close(fd);
	for (i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

/* Run NB concurrent `bctl exec NAME -- sh -c 'echo ran >> MARK'`; returns
 * how many exited with @code; *other gets the first other status seen. */
static int batch(const char *name, int code, int *other, char *err1,
		 size_t err1_len)
{
	char *argv[] = { (char *)bctl, "--shm", (char *)shm, "exec",
			 (char *)name, "--", "/bin/sh", "-c",
			 "echo ran >> \"$1\"", "sh", mark, NULL };
	char etmpl[] = "/tmp/brkit-bctl-err.XXXXXX";
	pid_t pids[NB];
	int i, st, n = 0, efd, devnull;

	devnull = open("/dev/null", O_WRONLY);
	efd = tmpfile_fd(etmpl);
	unlink(etmpl);
	*other = -1;
	for (i = 0; i < NB; i++)
		pids[i] = it_spawn(argv, devnull, i == 0 ? efd : devnull);
	for (i = 0; i < NB; i++) {
		st = -1;
		if (it_wait(pids[i], 10000, &st) < 0) {
			it_kill(pids[i]);
			st = -1;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == code)
			n++;
		else if (*other == -1)
			*other = WIFEXITED(st) ? WEXITSTATUS(st) :
				 WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -2;
	}
	if (err1)
		read_fd(efd, err1, err1_len);
	close(efd);
	close(devnull);
	return n;
}

static void sleep_until_ms(uint64_t t)
{
	uint64_t now = it_now_ms();

	if (t > now)
		it_sleep_ms((unsigned)(t - now));
}

static void scenario(brk_segment *seg, const char *name, const char *script,
		     const char *echo_text, int on_stderr, uint64_t lo_ms,
		     uint64_t hi_ms)
{
	char *argv[] = { (char *)bctl, "--shm", (char *)shm, "exec",
			 (char *)name, "--", "/bin/sh", "-c", (char *)script,
			 NULL };
	char otmpl[] = "/tmp/brkit-bctl-out.XXXXXX", out[4096], err1[1024];
	struct brk_info info;
	brk_breaker *b;
	uint64_t t0;
	int ofd, st = -1, n, other, lines0, lines, ran = 0, rc, done = 0;
	pid_t pid;

	struct brk_config cfg;

	/* the defaults but implicit_pace off: by default (issue 21) a
	 * rate-limit answer goes to the breaker's implicit pace, which paces
	 * every process instead of cooling it (it_implicit_pace.sh) */
	brk_config_init(&cfg);
	cfg.implicit_pace = 0;
	rc = brk_breaker_get(seg, name, &cfg, &b);
	CHECK(rc == 0, "[%s] breaker declared with the defaults, implicit_pace off (%d)",
	      name, rc);
	if (rc)
		return;
	ofd = tmpfile_fd(otmpl);
	unlink(otmpl);
	pid = it_spawn(argv, on_stderr ? -1 : ofd, on_stderr ? ofd : -1);
	if (it_wait(pid, 10000, &st) < 0)
		it_kill(pid);
	t0 = it_now_ms();
	read_fd(ofd, out, sizeof(out));
	close(ofd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "[%s] bctl exec of the rate-limited command exits with its status "
	      "0 (status 0x%x)", name, st);
	CHECK(strstr(out, echo_text) != NULL, "[%s] its %s passed through "
	      "unchanged", name, on_stderr ? "stderr" : "stdout");
	it_info(b, &info);
	CHECK(info.cool_until_remaining_ms > lo_ms &&
	      info.cool_until_remaining_ms <= hi_ms,
	      "[%s] shared cool-until set for %llu..%llu ms (%llu ms left)", name,
	      (unsigned long long)lo_ms, (unsigned long long)hi_ms,
	      (unsigned long long)info.cool_until_remaining_ms);
	CHECK(info.counters.failures_by_reason[BRK_REASON_RATE_LIMITED] == 1,
	      "[%s] counted as a rate_limited failure (%llu)", name,
	      (unsigned long long)
	      info.counters.failures_by_reason[BRK_REASON_RATE_LIMITED]);

	lines0 = count_lines();
	sleep_until_ms(t0 + 500);
	err1[0] = '\0';
	n = batch(name, EX_TEMPFAIL, &other, err1, sizeof(err1));
	CHECK(n == NB, "[%s] at ~0.5 s: %d of %d concurrent bctl exec exit 75 "
	      "(other status %d)", name, n, NB, other);
	if (err1[0])
		it_note("[%s] bctl said: %.*s", name, (int)strcspn(err1, "\n"),
			err1);
	CHECK(err1[0] != '\0' && strchr(err1, '\n') == err1 + strlen(err1) - 1,
	      "[%s] one line on stderr says why", name);
	sleep_until_ms(t0 + 1200);
	n = batch(name, EX_TEMPFAIL, &other, NULL, 0);
	CHECK(n == NB, "[%s] at ~1.2 s: %d of %d exit 75 (other status %d)", name,
	      n, NB, other);
	lines = count_lines();
	CHECK(lines == lines0, "[%s] the refused commands did not run (%d runs)",
	      name, lines - lines0);

	sleep_until_ms(t0 + 2600);
	while (it_now_ms() < t0 + 5000) {
		n = batch(name, 0, &other, NULL, 0);
		ran += n;
		if (n == NB) {
			done = 1;
			break;
		}
		it_sleep_ms(200);
	}
	CHECK(done, "[%s] by %llu ms all %d run and exit 0 (last batch: %d, other "
	      "status %d)", name, (unsigned long long)(it_now_ms() - t0), NB, n,
	      other);
	lines = count_lines();
	CHECK(lines - lines0 == ran, "[%s] every exit 0 ran the command (%d runs, "
	      "%d exits 0)", name, lines - lines0, ran);
}

int main(int argc, char **argv)
{
	brk_segment *seg;
	int fd;

	it_init("bctl_retry_after", 60);
	if (argc < 2 || access(argv[1], X_OK) != 0)
		it_skip("needs the bctl executable as argument");
	if (access("/bin/sh", X_OK) != 0)
		it_skip("needs /bin/sh");
	bctl = argv[1];
	shm = it_segment(NULL);
	fd = tmpfile_fd(mark);
	close(fd);
	seg = it_attach(shm, 0);

	scenario(seg, "api-retry-after", "echo \"Retry-After: 2\"; exit 0",
		 "Retry-After: 2", 0, 1000, 2000);
	scenario(seg, "api-try-again",
		 "echo \"try again in 2 seconds\" >&2; exit 0",
		 "try again in 2 seconds", 1, 1000, 2000);
	/* an HTTP-date 3 s after the current second: 2..3 s from now */
	scenario(seg, "api-retry-after-date",
		 "LC_ALL=C date -u -d \"@$(( $(date +%s) + 3 ))\" "
		 "'+Retry-After: %a, %d %b %Y %H:%M:%S GMT'; exit 0",
		 " GMT", 0, 1500, 3000);

	brk_detach(seg);
	unlink(mark);
	return it_finish();
}
