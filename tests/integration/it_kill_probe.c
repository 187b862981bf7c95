/*
 * it_kill_probe.c - kill -9 of the process holding the half-open probe.
 *
 * (a) with breakerd running (--interval 50ms): the probe's owner is
 *     SIGKILLed; the lease is reclaimed within 250 ms, the breaker re-opens
 *     with the cooling period doubled (a reclaimed probe is a failed probe)
 *     and after that period a new probe is admitted. The daemon's heartbeat
 *     shows in brk_segment_info; SIGTERM stops it with status 0; a restarted
 *     daemon finds the breaker state (open, same generation, same counters).
 * (b) without breakerd: after probe_timeout_ms a later caller's brk_acquire
 *     reclaims the dead owner's probe, the breaker re-opens, and a new probe
 *     is admitted after the doubled cooling period.
 * (c) without breakerd, a live owner that hangs: its probe is not reclaimed
 *     before probe_timeout_ms, is reclaimed after it, and its late release
 *     is stale (-BRK_ESTALE) and changes nothing.
 *
 * Usage: it_kill_probe BREAKERD_EXE
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

struct shared {
	int have_probe, release_now, released;
	int release_rc;
	int32_t prober_pid;
	uint64_t claim_before_ns, claim_after_ns;
};

static const char *shm;
static struct shared *sh;

static void cfg_for(struct brk_config *c, uint64_t open_ms,
		    uint64_t probe_timeout_ms)
{
	brk_config_init(c);
	c->failure_threshold = 1;
	c->open_ms = open_ms;
	c->max_open_ms = 20 * open_ms;
	c->probe_timeout_ms = probe_timeout_ms;
}

static brk_breaker *get(brk_segment *seg, const char *name, uint64_t open_ms,
			uint64_t probe_timeout_ms)
{
	struct brk_config cfg;
	brk_breaker *b = NULL;
	int rc;

	cfg_for(&cfg, open_ms, probe_timeout_ms);
	rc = brk_breaker_get(seg, name, &cfg, &b);
	if (rc != 0) {
		CHECK(0, "brk_breaker_get(%s): %d %s", name, rc, brk_strerror(rc));
		it_finish();
		exit(1);
	}
	return b;
}

/* One admitted call that fails: opens a failure_threshold = 1 breaker. */
static int fail_once(brk_breaker *b)
{
	brk_permit p;
	int rc = brk_acquire(b, &p, NULL);

	if (rc != 0)
		return rc;
	return brk_release(&p, BRK_FAILURE, BRK_REASON_TIMEOUT, 0);
}

static void wait_not_open(brk_breaker *b)
{
	struct brk_info info;

	it_info(b, &info);
	if (info.state == BRK_OPEN)
		it_sleep_ms((unsigned)info.open_remaining_ms + 20);
}

/* Child: take the probe of the breaker named by arg, then hang (or, with
 * idx 1, release when told and report the return code). */
static int prober(int idx, void *arg)
{
	const char *name = arg;
	brk_segment *seg = it_attach(shm, 0);
	brk_breaker *b;
	brk_permit p;
	uint64_t deadline = it_now_ms() + 3000, t0;
	int rc;

	if (brk_breaker_find(seg, name, &b) != 0)
		return 2;
	for (;;) {
		t0 = it_now_ns();
		rc = brk_acquire(b, &p, NULL);
		if (rc == 0)
			break;
		if (it_now_ms() > deadline)
			return 3;
		it_sleep_ms(2);
	}
	sh->claim_before_ns = t0;
	sh->claim_after_ns = it_now_ns();
	sh->prober_pid = getpid();
	AT_STORE(&sh->have_probe, 1);
	if (idx == 0) {
		for (;;)
			pause(); /* hold the probe until killed */
	}
	while (!AT_LOAD(&sh->release_now))
		it_sleep_ms(1);
	sh->release_rc = brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	AT_STORE(&sh->released, 1);
	brk_detach(seg);
	return 0;
}

static pid_t start_prober(int mode, const char *name)
{
	pid_t pid;
	int i;

	memset(sh, 0, sizeof(*sh));
	pid = it_fork(prober, mode, (void *)name);
	for (i = 0; i < 3000 && !AT_LOAD(&sh->have_probe); i++)
		it_sleep_ms(1);
	CHECK(AT_LOAD(&sh->have_probe), "[%s] child %d holds the half-open probe",
	      name, (int)pid);
	return pid;
}

static int has_probe_lease_of(const struct brk_info *info, pid_t pid)
{
	uint32_t i;

	for (i = 0; i < info->n_leases && i < sizeof(info->leases) /
		     sizeof(info->leases[0]); i++)
		if (info->leases[i].kind == BRK_LEASE_PROBE &&
		    info->leases[i].pid == pid)
			return 1;
	return 0;
}

static int find_event(brk_segment *seg, const char *name, int reason,
		      pid_t pid)
{
	struct brk_event ev[64];
	uint64_t cursor = 1;
	int n, i;

	while ((n = brk_events_read(seg, &cursor, ev, 64, NULL)) > 0)
		for (i = 0; i < n; i++)
			if (!strcmp(ev[i].name, name) && ev[i].reason == reason &&
			    (pid == 0 || ev[i].pid == pid))
				return 1;
	return 0;
}

/* After a reclaim at [lo_ns, hi_ns]: open with the doubled period, then a
 * new probe is admitted once it has passed (not before). */
static void check_reopen_then_probe(brk_breaker *b, const char *tag,
				    uint64_t open_ms, uint64_t lo_ns,
				    uint64_t hi_ns)
{
	struct brk_info info;
	uint64_t doubled = 2 * open_ms, t_adm = 0, deadline;
	brk_permit p;
	int rc;

	it_info(b, &info);
	CHECK(info.state == BRK_OPEN, "[%s] the reclaimed probe re-opened the "
	      "breaker (state %s)", tag, brk_state_name(info.state));
	CHECK(info.cooling_level == 1, "[%s] cooling level 1 after a failed probe "
	      "(%u)", tag, info.cooling_level);
	CHECK(info.open_remaining_ms <= doubled &&
	      info.open_remaining_ms + 300 > doubled,
	      "[%s] cooling period doubled: open_remaining_ms %llu, period %llu",
	      tag, (unsigned long long)info.open_remaining_ms,
	      (unsigned long long)doubled);
	CHECK(info.probes_in_flight == 0, "[%s] no probe in flight after the "
	      "reclaim (%u)", tag, info.probes_in_flight);

	deadline = it_now_ms() + doubled + 2000;
	while (it_now_ms() < deadline) {
		rc = brk_acquire(b, &p, NULL);
		if (rc == 0) {
			t_adm = it_now_ns();
			break;
		}
		if (rc != -BRK_EOPEN)
			CHECK(0, "[%s] acquire while re-opened: %d %s", tag, rc,
			      brk_strerror(rc));
		it_sleep_ms(3);
	}
	CHECK(t_adm != 0, "[%s] a new probe was admitted after the cooling "
	      "period", tag);
	if (!t_adm)
		return;
	CHECK(t_adm + 2000000u >= lo_ns + doubled * 1000000u,
	      "[%s] not before the doubled cooling period (%lld ms after the "
	      "earliest possible re-open, period %llu ms)", tag,
	      (long long)(t_adm - lo_ns) / 1000000, (unsigned long long)doubled);
	CHECK(t_adm <= hi_ns + (doubled + 250) * 1000000u,
	      "[%s] promptly after it (%lld ms after the latest possible "
	      "re-open)", tag, (long long)(t_adm - hi_ns) / 1000000);
	it_info(b, &info);
	CHECK(info.state == BRK_HALF_OPEN && info.probes_in_flight == 1,
	      "[%s] it is the half-open probe (%s, %u in flight)", tag,
	      brk_state_name(info.state), info.probes_in_flight);
	rc = brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	it_info(b, &info);
	CHECK(rc == 0 && info.state == BRK_CLOSED && info.cooling_level == 0,
	      "[%s] its success closes the breaker and resets the cooling level "
	      "(rc %d, %s, level %u)", tag, rc, brk_state_name(info.state),
	      info.cooling_level);
}

/* (a) probe owner killed, breakerd reclaims. */
static void part_a(brk_segment *seg, pid_t daemon)
{
	const uint64_t open_ms = 300;
	brk_breaker *b = get(seg, "with-daemon", open_ms, 60000);
	struct brk_info info;
	uint64_t reclaimed0, t_kill, t_det = 0, deadline;
	pid_t child;
	int rc;

	(void)daemon;
	rc = fail_once(b);
	CHECK(rc == 0, "[a] one failure reported (%d)", rc);
	wait_not_open(b);
	child = start_prober(0, "with-daemon");
	it_info(b, &info);
	CHECK(info.state == BRK_HALF_OPEN && info.probes_in_flight == 1 &&
	      has_probe_lease_of(&info, child),
	      "[a] half_open, one probe in flight, lease owned by pid %d",
	      (int)child);
	reclaimed0 = info.counters.reclaimed;

	t_kill = it_now_ns();
	it_kill(child); /* SIGKILL and reap */
	deadline = it_now_ms() + 3000;
	while (it_now_ms() < deadline) {
		it_info(b, &info);
		if (info.probes_in_flight == 0 &&
		    info.counters.reclaimed > reclaimed0) {
			t_det = it_now_ns();
			break;
		}
		it_sleep_ms(2);
	}
	CHECK(t_det != 0, "[a] breakerd reclaimed the dead owner's probe");
	if (!t_det)
		return;
	CHECK(t_det - t_kill <= 250000000u, "[a] within 250 ms of the kill "
	      "(%llu ms)", (unsigned long long)(t_det - t_kill) / 1000000);
	CHECK(info.counters.reclaimed == reclaimed0 + 1,
	      "[a] reclaimed counter +1 (%llu)",
	      (unsigned long long)info.counters.reclaimed);
	CHECK(find_event(seg, "with-daemon", BRK_EV_RECLAIM_DEAD, child),
	      "[a] a reclaim_dead event names the dead owner %d", (int)child);
	check_reopen_then_probe(b, "a", open_ms, t_kill, t_det);
}

static void check_heartbeat(brk_segment *seg, pid_t daemon)
{
	struct brk_segment_info si;
	uint64_t max_age = 0;
	int i, ok = 1;

	for (i = 0; i < 10; i++) {
		if (brk_segment_info(seg, &si) != 0 || si.daemon_pid != daemon)
			ok = 0;
		else if (si.heartbeat_age_ms > max_age)
			max_age = si.heartbeat_age_ms;
		it_sleep_ms(23);
	}
	CHECK(ok, "brk_segment_info names breakerd (pid %d) as the daemon",
	      (int)daemon);
	CHECK(max_age <= 250, "heartbeat_age_ms stays small with --interval "
	      "50ms (max %llu ms over 10 samples)", (unsigned long long)max_age);
	CHECK(si.daemon_interval_ms == 50, "daemon_interval_ms == 50 (%llu)",
	      (unsigned long long)si.daemon_interval_ms);
}

/* Restart: an open breaker stays open with its counters. */
static pid_t check_restart(const char *exe, brk_segment *seg, pid_t daemon,
			   int logfd)
{
	brk_breaker *b = get(seg, "restart", 5000, 60000);
	struct brk_info before, after;
	struct brk_segment_info s1, s2;
	uint64_t t1, t2;
	pid_t d2;
	int rc, st;

	rc = fail_once(b);
	rc = rc ? rc : brk_trip(b, 1);
	CHECK(rc == -EALREADY, "[restart] an open breaker is not re-tripped "
	      "(brk_trip -> %d %s)", rc, brk_strerror(rc));
	it_info(b, &before);
	t1 = it_now_ms();
	brk_segment_info(seg, &s1);
	CHECK(before.state == BRK_OPEN, "[restart] breaker open before the "
	      "restart");

	st = it_daemon_stop(daemon, SIGTERM, 3000);
	CHECK(st == 0, "SIGTERM: breakerd exits with status 0 (%d)", st);

	d2 = it_daemon_start(exe, shm, "50ms", logfd);
	rc = it_daemon_wait_heartbeat(seg, d2, 3000);
	CHECK(rc == 0, "[restart] the restarted breakerd (pid %d) heartbeats",
	      (int)d2);
	it_info(b, &after);
	t2 = it_now_ms();
	brk_segment_info(seg, &s2);
	CHECK(after.state == BRK_OPEN && after.generation == before.generation,
	      "[restart] still open, same generation (%s, gen %u -> %u)",
	      brk_state_name(after.state), before.generation, after.generation);
	CHECK(after.open_remaining_ms <= before.open_remaining_ms &&
	      after.open_remaining_ms + (t2 - t1) + 50 >= before.open_remaining_ms,
	      "[restart] the open period neither reset nor extended "
	      "(%llu ms -> %llu ms in %llu ms)",
	      (unsigned long long)before.open_remaining_ms,
	      (unsigned long long)after.open_remaining_ms,
	      (unsigned long long)(t2 - t1));
	CHECK(!memcmp(&before.counters, &after.counters, sizeof(before.counters)),
	      "[restart] counters kept (failures %llu, transitions %llu)",
	      (unsigned long long)after.counters.failures,
	      (unsigned long long)after.counters.transitions);
	CHECK(s1.created_wall_ms == s2.created_wall_ms &&
	      s1.creator_pid == s2.creator_pid && s1.used == s2.used &&
	      s2.events_written >= s1.events_written,
	      "[restart] same segment: not unlinked or re-initialised (created "
	      "%llu, records %u, events %llu -> %llu)",
	      (unsigned long long)s2.created_wall_ms, s2.used,
	      (unsigned long long)s1.events_written,
	      (unsigned long long)s2.events_written);
	return d2;
}

/* (b) probe owner killed, no daemon: a later caller reclaims it after
 * probe_timeout_ms. (c) live owner hangs: reclaimed after the timeout, not
 * before; its late release is stale. */
static void part_bc(brk_segment *seg, int live)
{
	const uint64_t open_ms = 200, timeout_ms = 300;
	const char *name = live ? "hung-owner" : "no-daemon";
	const char *tag = live ? "c" : "b";
	brk_breaker *b = get(seg, name, open_ms, timeout_ms);
	struct brk_info info;
	uint64_t reclaimed0, t_b = 0, t_a = 0, t0, deadline, claim_lo, claim_hi;
	brk_permit p;
	pid_t child;
	int rc, early_admit = 0, st;

	rc = fail_once(b);
	CHECK(rc == 0, "[%s] one failure reported (%d)", tag, rc);
	wait_not_open(b);
	child = start_prober(live ? 1 : 0, name);
	claim_lo = sh->claim_before_ns;
	claim_hi = sh->claim_after_ns;
	it_info(b, &info);
	reclaimed0 = info.counters.reclaimed;
	if (!live)
		it_kill(child);

	deadline = it_now_ms() + 3000;
	while (it_now_ms() < deadline) {
		t0 = it_now_ns();
		rc = brk_acquire(b, &p, NULL);
		if (rc == 0) {
			early_admit++;
			brk_release(&p, BRK_CANCELLED, BRK_REASON_NONE, 0);
		}
		it_info(b, &info);
		if (info.counters.reclaimed > reclaimed0) {
			t_b = t0;
			t_a = it_now_ns();
			break;
		}
		it_sleep_ms(5);
	}
	CHECK(early_admit == 0, "[%s] no caller admitted while the probe was "
	      "held or when it was reclaimed (%d)", tag, early_admit);
	CHECK(t_a != 0, "[%s] a later caller's brk_acquire reclaimed the probe",
	      tag);
	if (!t_a)
		return;
	it_note("[%s] reclaimed %lld ms after the claim (probe_timeout_ms %llu)",
		tag, (long long)(t_a - claim_hi) / 1000000,
		(unsigned long long)timeout_ms);
	if (live)
		CHECK(t_a + 2000000u >= claim_lo + timeout_ms * 1000000u,
		      "[c] the live owner's probe was not reclaimed before "
		      "probe_timeout_ms");
	CHECK(t_a <= claim_hi + (timeout_ms + 150) * 1000000u,
	      "[%s] reclaimed within probe_timeout_ms + 150 ms", tag);
	CHECK(info.counters.reclaimed == reclaimed0 + 1, "[%s] reclaimed "
	      "counter +1", tag);
	if (live) {
		CHECK(find_event(seg, name, BRK_EV_RECLAIM_TIMEOUT, 0),
		      "[c] a reclaim_timeout event was recorded");
		AT_STORE(&sh->release_now, 1);
		rc = it_wait(child, 3000, &st);
		CHECK(rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
		      AT_LOAD(&sh->released), "[c] the hung owner woke and released");
		CHECK(sh->release_rc == -BRK_ESTALE, "[c] its late release is "
		      "stale: %d %s", sh->release_rc, brk_strerror(sh->release_rc));
		it_info(b, &info);
		CHECK(info.state == BRK_OPEN, "[c] the stale success did not close "
		      "the re-opened breaker (%s)", brk_state_name(info.state));
	}
	check_reopen_then_probe(b, tag, open_ms, t_b, t_a);
}

/* The daemon's log: logfmt lines with ts= and level=, reclaim and stop. */
static void check_daemon_log(int fd)
{
	char buf[65536], *line, *save = NULL;
	ssize_t n;
	int lines = 0, bad = 0, starting = 0, reclaim = 0, stopping = 0;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	printf("# --- breakerd log ---\n%s# --- end of log ---\n", buf);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		lines++;
		if (strncmp(line, "ts=", 3) != 0 || !strstr(line, " level="))
			bad++;
		starting += strstr(line, "msg=starting") != NULL;
		reclaim += strstr(line, "msg=reclaim") != NULL &&
			   strstr(line, "name=with-daemon") != NULL;
		stopping += strstr(line, "msg=stopping") != NULL;
	}
	CHECK(lines > 0 && bad == 0, "breakerd log: %d logfmt lines, %d without "
	      "ts=/level=", lines, bad);
	CHECK(starting == 2 && stopping == 2, "breakerd log: 2 starts, 2 stops "
	      "(%d, %d)", starting, stopping);
	CHECK(reclaim >= 1, "breakerd log: the reclaim of the killed probe is "
	      "logged");
}

int main(int argc, char **argv)
{
	brk_segment *seg;
	pid_t d1, d2;
	char logpath[] = "/tmp/brkit-kill-probe-log.XXXXXX";
	int logfd, st;

	it_init("kill_probe", 60);
	if (argc < 2 || access(argv[1], X_OK) != 0)
		it_skip("needs the breakerd executable as argument");
	shm = it_segment(NULL);
	sh = it_shared(sizeof(*sh));
	seg = it_attach(shm, 0);

	logfd = mkstemp(logpath);
	if (logfd < 0)
		it_skip("mkstemp: %s", strerror(errno));
	unlink(logpath);
	/* The daemon logs to our temp file (stderr of the child). */
	d1 = it_daemon_start(argv[1], shm, "50ms", logfd);
	CHECK(it_daemon_wait_heartbeat(seg, d1, 3000) == 0,
	      "breakerd (pid %d) started and heartbeats", (int)d1);
	check_heartbeat(seg, d1);
	part_a(seg, d1);

	d2 = check_restart(argv[1], seg, d1, logfd);
	st = it_daemon_stop(d2, SIGINT, 3000);
	CHECK(st == 0, "SIGINT: breakerd exits with status 0 (%d)", st);
	check_daemon_log(logfd);
	close(logfd);

	part_bc(seg, 0);
	part_bc(seg, 1);
	brk_detach(seg);
	return it_finish();
}
