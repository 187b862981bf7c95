/*
 * it_daemon_cli.c - breakerd's command line and segment errors.
 *
 * Usage errors exit 2 with a message (a bare-number duration, an unknown
 * group, bad capacity, arena size or mode, a stray argument); --help
 * exits 0; a segment it must refuse (wrong magic, world-writable) exits 1
 * with one line naming the segment. --capacity/--arena-mb/--mode/--group
 * are applied when it creates the segment, SIGTERM exits 0, and the
 * segment outlives it.
 *
 * Usage: it_daemon_cli BREAKERD_EXE
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

static const char *exe;

/* Run breakerd with @args (NULL-terminated, after argv[0]); returns the
 * exit status (128+sig if killed, -1 if it did not stop within 5 s); its
 * stderr in @err. */
static int run(char *const *args, char *err, size_t errlen)
{
	char tmpl[] = "/tmp/brkit-daemon-cli.XXXXXX";
	char *argv[16];
	int fd, st = -1, i, devnull;
	ssize_t n;
	pid_t pid;

	argv[0] = (char *)exe;
	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	fd = mkstemp(tmpl);
	if (fd < 0)
		it_skip("mkstemp: %s", strerror(errno));
	unlink(tmpl);
	devnull = open("/dev/null", O_WRONLY);
	pid = it_spawn(argv, devnull, fd);
	if (it_wait(pid, 5000, &st) < 0) {
		it_kill(pid);
		st = -1;
	}
	n = pread(fd, err, errlen - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	close(devnull);
	if (st == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void usage_case(const char *what, char *const *args)
{
	char err[4096];
	int st = run(args, err, sizeof(err));

	CHECK(st == 2 && err[0] && strncmp(err, "breakerd: ", 10) == 0,
	      "%s: exit 2 with a message (%d: %.*s)", what, st,
	      (int)strcspn(err, "\n"), err);
}

/* Exit 2 and @want as the first line of stderr. */
static void usage_msg(const char *what, char *const *args, const char *want)
{
	char err[4096];
	int st = run(args, err, sizeof(err));
	size_t n = strcspn(err, "\n") + 1;

	CHECK(st == 2 && strncmp(err, want, strlen(want)) == 0 && n == strlen(want),
	      "%s: exit 2 with '%.*s' (%d: %.*s)", what, (int)strlen(want) - 1, want,
	      st, (int)n - 1, err);
}

/* A stopped daemon whose event ring overran logs how many it lost. */
static void check_lost_events(const char *shm)
{
	char tmpl[] = "/tmp/brkit-daemon-log.XXXXXX", *log, *p;
	unsigned long long lost = 0;
	brk_segment *seg;
	brk_breaker *b;
	int fd, i, rc = 0, st, transitions = 0;
	ssize_t n;
	pid_t d;

	fd = mkstemp(tmpl);
	if (fd < 0)
		it_skip("mkstemp: %s", strerror(errno));
	unlink(tmpl);
	seg = it_attach(shm, 0);
	if (brk_breaker_get(seg, "flood", NULL, &b) != 0) {
		CHECK(0, "brk_breaker_get(flood)");
		return;
	}
	d = it_daemon_start(exe, shm, "20ms", fd);
	CHECK(it_daemon_wait_heartbeat(seg, d, 3000) == 0, "[lost] breakerd "
	      "heartbeats");
	kill(d, SIGSTOP);
	/* 2 events per round: 5000 events into a 4096-slot ring. */
	for (i = 0; i < 2500 && rc == 0; i++) {
		rc = brk_trip(b, 60000);
		rc = rc ? rc : brk_reset(b);
	}
	CHECK(rc == 0, "[lost] 5000 events recorded while breakerd was stopped "
	      "(%d)", rc);
	kill(d, SIGCONT);
	it_sleep_ms(300);
	st = it_daemon_stop(d, SIGTERM, 3000);
	CHECK(st == 0, "[lost] SIGTERM: exit 0 (%d)", st);
	brk_detach(seg);

	log = malloc(4 << 20);
	n = log ? pread(fd, log, (4 << 20) - 1, 0) : -1;
	close(fd);
	if (n < 0) {
		free(log);
		CHECK(0, "[lost] read the log");
		return;
	}
	log[n] = '\0';
	p = strstr(log, "msg=\"events lost\" lost=");
	if (p)
		lost = strtoull(p + strlen("msg=\"events lost\" lost="), NULL, 10);
	for (p = log; (p = strstr(p, "msg=transition name=flood")); p++)
		transitions++;
	CHECK(lost > 0 && lost <= 5000, "[lost] breakerd logged the events lost "
	      "when the ring overran (lost=%llu)", lost);
	CHECK(transitions > 1000 && transitions + lost >= 5000,
	      "[lost] and every event still in the ring (%d transitions logged)",
	      transitions);
	free(log);
}

/* breakerd --retire-idle: idle records retired, each logged; a busy one
 * (a permit held) kept. */
static void check_retire_idle(const char *shm)
{
	char tmpl[] = "/tmp/brkit-daemon-retire.XXXXXX", log[65536];
	struct brk_config c;
	brk_segment *seg;
	brk_breaker *idle, *held, *f;
	brk_permit p;
	ssize_t n;
	int fd, st;
	pid_t d;

	fd = mkstemp(tmpl);
	if (fd < 0)
		it_skip("mkstemp: %s", strerror(errno));
	unlink(tmpl);
	seg = it_attach(shm, 0);
	brk_config_init(&c);
	c.max_concurrent = 1;
	if (brk_breaker_get(seg, "idle1", NULL, &idle) != 0 ||
	    brk_breaker_get(seg, "held1", &c, &held) != 0 ||
	    brk_acquire(held, &p, NULL) != 0) {
		CHECK(0, "[retire] set-up");
		return;
	}
	{
		char *a[] = { (char *)exe, "--shm", (char *)shm, "--interval", "20ms",
			      "--retire-idle", "200ms", NULL };
		d = it_spawn(a, -1, fd);
	}
	CHECK(it_daemon_wait_heartbeat(seg, d, 3000) == 0, "[retire] breakerd "
	      "--retire-idle 200ms heartbeats");
	for (st = 0; st < 150 && brk_breaker_find(seg, "idle1", &f) == 0; st++)
		it_sleep_ms(20);
	CHECK(brk_breaker_find(seg, "idle1", &f) == -ENOENT,
	      "[retire] the idle record was retired (within 3 s)");
	CHECK(brk_breaker_find(seg, "held1", &f) == 0,
	      "[retire] the one with a permit held was kept");
	CHECK(brk_release(&p, BRK_SUCCESS, 0, 0) == 0,
	      "[retire] the permit taken before releases cleanly");
	st = it_daemon_stop(d, SIGTERM, 3000);
	CHECK(st == 0, "[retire] SIGTERM: exit 0 (%d)", st);
	brk_detach(seg);
	n = pread(fd, log, sizeof(log) - 1, 0);
	close(fd);
	log[n > 0 ? n : 0] = '\0';
	CHECK(strstr(log, "retire_idle_ms=200") != NULL,
	      "[retire] the start line says retire_idle_ms=200");
	CHECK(strstr(log, "msg=retired name=idle1 ") != NULL &&
	      strstr(log, "idle_ms=200") != NULL,
	      "[retire] one log line for the retirement");
	CHECK(strstr(log, "name=held1 ") == NULL ||
	      strstr(log, "msg=retired name=held1 ") == NULL,
	      "[retire] no retirement logged for the busy one");
}

/* The health events of @name from *@cur on that process @pid wrote;
 * their to-states into @to (up to 8). */
static int health_events_by(brk_segment *seg, uint64_t *cur, const char *name,
			    pid_t pid, int *to)
{
	struct brk_event ev[64];
	int n, i, k = 0;

	while ((n = brk_events_read(seg, cur, ev, 64, NULL)) > 0)
		for (i = 0; i < n; i++)
			if (ev[i].reason == BRK_EV_HEALTH &&
			    strcmp(ev[i].name, name) == 0 && ev[i].pid == pid && k < 8)
				to[k++] = ev[i].to;
	return k;
}

/* breakerd --health NAME: each scan evaluates NAME, so a transition
 * nobody asked about is recorded (one event, written by breakerd) and
 * logged; a NAME that does not exist is a warning once, not an exit. */
static void check_health(const char *shm)
{
	char tmpl[] = "/tmp/brkit-daemon-health.XXXXXX", log[65536];
	brk_segment *seg;
	brk_breaker *b;
	uint64_t cur = 1;
	int fd, st, n = 0, to[8], i;
	ssize_t len;
	pid_t d;

	fd = mkstemp(tmpl);
	if (fd < 0)
		it_skip("mkstemp: %s", strerror(errno));
	unlink(tmpl);
	seg = it_attach(shm, 0);
	if (brk_breaker_get(seg, "hsvc", NULL, &b) != 0) {
		CHECK(0, "[health] brk_breaker_get(hsvc)");
		return;
	}
	{
		char *a[] = { (char *)exe, "--shm", (char *)shm, "--interval", "20ms",
			      "--health", "hsvc", "--health", "no-such-hsvc", NULL };
		d = it_spawn(a, -1, fd);
	}
	CHECK(it_daemon_wait_heartbeat(seg, d, 3000) == 0, "[health] breakerd "
	      "--health heartbeats");
	CHECK(brk_trip(b, 60000) == 0, "[health] trip hsvc");
	for (i = 0; i < 150 && n == 0; i++) {
		it_sleep_ms(20);
		n += health_events_by(seg, &cur, "hsvc", d, to + n);
	}
	CHECK(n == 1 && to[0] == BRK_HEALTH_UNAVAILABLE,
	      "[health] breakerd recorded live -> unavailable itself (%d events)", n);
	CHECK(brk_reset(b) == 0, "[health] reset hsvc");
	for (i = 0; i < 150 && n == 1; i++) {
		it_sleep_ms(20);
		n += health_events_by(seg, &cur, "hsvc", d, to + n);
	}
	it_sleep_ms(100); /* a few more scans: nothing more to record */
	n += health_events_by(seg, &cur, "hsvc", d, to + n);
	CHECK(n == 2 && to[1] == BRK_HEALTH_LIVE,
	      "[health] and unavailable -> live, once (%d events)", n);
	st = it_daemon_stop(d, SIGTERM, 3000);
	CHECK(st == 0, "[health] SIGTERM: exit 0 (%d)", st);
	brk_detach(seg);
	len = pread(fd, log, sizeof(log) - 1, 0);
	close(fd);
	log[len > 0 ? len : 0] = '\0';
	CHECK(strstr(log, "health_names=2") != NULL,
	      "[health] the start line counts the --health names");
	CHECK(strstr(log, "msg=health name=hsvc ") != NULL &&
	      strstr(log, "from=live to=unavailable code=BREAKER_OPEN") != NULL &&
	      strstr(log, "from=unavailable to=live code=GO") != NULL,
	      "[health] both transitions logged");
	{
		const char *p = strstr(log, "name=no-such-hsvc");
		CHECK(p && !strstr(p + 1, "name=no-such-hsvc"),
		      "[health] the missing name is one warning, not one per scan");
	}
}

/* --capacity/--arena-mb on an existing segment of another size: exit 1,
 * one line naming the segment, its size and how to resize; the segment
 * (capacity 8, arena 2 MiB, created above) is untouched. Before issue 12
 * breakerd started and silently kept the old size. */
static void check_capacity_mismatch(const char *shm)
{
	struct brk_segment_info si;
	brk_segment *seg;
	char err[4096], want[256];
	int st;

	{
		char *a[] = { "--shm", (char *)shm, "--capacity", "16", NULL };

		st = run(a, err, sizeof(err));
	}
	snprintf(want, sizeof(want), "run 'bctl --shm %s segment remove'", shm);
	CHECK(st == 1 && lines(err) == 1 && strstr(err, shm) &&
	      strstr(err, "exists with capacity 8 records, not the 16 of "
		     "--capacity") && strstr(err, "stop every worker") &&
	      strstr(err, want),
	      "--capacity 16 on a capacity-8 segment: exit 1, one line saying "
	      "how to resize (%d: %.*s)", st, (int)strcspn(err, "\n"), err);
	{
		char *a[] = { "--shm", (char *)shm, "--arena-mb", "3", NULL };

		st = run(a, err, sizeof(err));
	}
	CHECK(st == 1 && lines(err) == 1 &&
	      strstr(err, "exists with an arena of 2097152 bytes, not the 3 MiB "
		     "of --arena-mb") && strstr(err, want),
	      "--arena-mb 3 on a 2 MiB arena: exit 1, saying how to resize "
	      "(%d: %.*s)", st, (int)strcspn(err, "\n"), err);
	seg = it_attach(shm, 0);
	brk_segment_info(seg, &si);
	CHECK(si.capacity == 8 && si.arena_bytes == 2u << 20,
	      "the refused start left the segment as it was (capacity %u, "
	      "arena %llu)", si.capacity, (unsigned long long)si.arena_bytes);
	brk_detach(seg);
}

int main(int argc, char **argv)
{
	char err[4096], path[256];
	const char *shm;
	struct brk_segment_info si;
	struct group *gr;
	struct stat st_shm;
	brk_segment *seg;
	char gid_name[64];
	pid_t d;
	int st, fd;

	it_init("daemon_cli", 60);
	if (argc < 2 || access(argv[1], X_OK) != 0)
		it_skip("needs the breakerd executable as argument");
	exe = argv[1];
	shm = it_segment(NULL);
	snprintf(path, sizeof(path), "/dev/shm%s", shm);

	{
		char *a[] = { "--help", NULL };

		st = run(a, err, sizeof(err));
		CHECK(st == 0, "--help exits 0 (%d)", st);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--health", "a//b", NULL };
		usage_case("--health a//b (not a name)", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--health", "", NULL };
		usage_case("--health '' (empty)", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--health", NULL };
		usage_case("--health without a NAME", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--interval", "5", NULL };
		usage_case("--interval 5 (bare number)", a);
		/* bctl's words (cli_opt_duration), every unit the parser takes */
		usage_msg("bad_duration_message_names_every_unit", a,
			  "breakerd: --interval: invalid duration '5' (a number with "
			  "a unit: us, ms, s, m, h or d, e.g. 250ms, 30s, 5m)\n");
	}
	{
		char *a[] = { "--shm", (char *)shm, "--interval", "0ms", NULL };
		usage_case("--interval 0ms", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--interval", "fast", NULL };
		usage_case("--interval fast", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--group",
			      "no-such-group-brkit", NULL };
		usage_case("--group unknown", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--capacity", "0", NULL };
		usage_case("--capacity 0", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--capacity", "12x", NULL };
		usage_case("--capacity 12x", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--arena-mb", "0", NULL };
		usage_case("--arena-mb 0", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--arena-mb", "1025", NULL };
		usage_case("--arena-mb 1025 (above 1 GiB)", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--arena-mb", "2M", NULL };
		usage_case("--arena-mb 2M", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--mode", "0689", NULL };
		usage_case("--mode 0689", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--mode", "0666", NULL };
		usage_case("--mode 0666 (world-writable)", a);
	}
	{
		char *a[] = { "--shm", "no-slash", NULL };
		usage_case("--shm no-slash", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "stray", NULL };
		usage_case("a stray argument", a);
	}
	{
		char *a[] = { "--bogus", NULL };
		usage_case("an unknown option", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--retire-idle", "0s", NULL };
		usage_case("--retire-idle 0s", a);
	}
	{
		char *a[] = { "--shm", (char *)shm, "--retire-idle", "10", NULL };
		usage_case("--retire-idle 10 (bare number)", a);
	}
	CHECK(access(path, F_OK) != 0, "no usage error created the segment");

	/* Create: capacity, mode and group applied; SIGTERM exits 0. */
	gr = getgrgid(getgid());
	snprintf(gid_name, sizeof(gid_name), "%s", gr ? gr->gr_name : "root");
	{
		char *a[] = { (char *)exe, "--shm", (char *)shm, "--interval",
			      "20ms", "--capacity", "8", "--arena-mb", "2",
			      "--mode", "0640", "--group", gid_name, NULL };

		d = it_spawn(a, -1, -1);
	}
	for (st = 0; st < 300 && access(path, F_OK) != 0; st++)
		it_sleep_ms(10);
	seg = it_attach(shm, 0);
	CHECK(it_daemon_wait_heartbeat(seg, d, 3000) == 0, "breakerd created "
	      "the segment and heartbeats");
	brk_segment_info(seg, &si);
	CHECK(si.capacity == 8, "--capacity 8 applied (%u)", si.capacity);
	CHECK(si.arena_bytes == 2u << 20, "--arena-mb 2 applied (%llu bytes)",
	      (unsigned long long)si.arena_bytes);
	if (stat(path, &st_shm) != 0)
		memset(&st_shm, 0, sizeof(st_shm));
	CHECK((st_shm.st_mode & 0777) == 0640 &&
	      st_shm.st_gid == getgid(), "--mode 0640 --group %s applied "
	      "(mode %o, gid %u)", gid_name, (unsigned)(st_shm.st_mode & 0777),
	      (unsigned)st_shm.st_gid);
	CHECK(si.creator_pid == d, "the daemon is the creator (%d)",
	      si.creator_pid);
	brk_detach(seg);
	st = it_daemon_stop(d, SIGTERM, 3000);
	CHECK(st == 0, "SIGTERM: exit 0 (%d)", st);
	CHECK(access(path, F_OK) == 0, "the segment outlives the daemon");
	check_capacity_mismatch(shm);

	check_lost_events(shm);
	check_retire_idle(shm);
	check_health(shm);

	/* Segment errors: exit 1, one line naming the segment. */
	fd = open(path, O_RDWR);
	if (fd >= 0) {
		CHECK(pwrite(fd, "NOTOURS!", 8, 0) == 8, "magic overwritten");
		close(fd);
	}
	{
		char *a[] = { "--shm", (char *)shm, NULL };

		st = run(a, err, sizeof(err));
		CHECK(st == 1 && lines(err) == 1 && strstr(err, shm),
		      "wrong magic: exit 1, one line naming the segment (%d: %.*s)",
		      st, (int)strcspn(err, "\n"), err);
	}
	brk_segment_unlink(shm);
	seg = it_attach(shm, 4);
	brk_detach(seg);
	chmod(path, 0666);
	{
		char *a[] = { "--shm", (char *)shm, NULL };

		st = run(a, err, sizeof(err));
		CHECK(st == 1 && lines(err) == 1 && strstr(err, shm),
		      "world-writable segment: exit 1, one line naming it (%d: "
		      "%.*s)", st, (int)strcspn(err, "\n"), err);
	}
	return it_finish();
}
