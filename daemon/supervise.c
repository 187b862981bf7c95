/*
 * supervise.c - the scan loop: reclaim, heartbeat, log events; sleep in
 * ppoll() so SIGTERM/SIGINT interrupt the sleep at once.
 */
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "follow.h"
#include "logfmt.h"
#include "notify.h"

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t hup_signal;
static void (*reload_fn)(void *arg);
static void *reload_arg;
static sigset_t sleep_mask; /* the mask while sleeping: TERM/INT open */

/* The segment's own descriptor, to see it cut short (supervise_watch()). */
static struct {
	int fd;                /* -1: not watched */
	uint64_t total_size;   /* what its header says */
	char name[BRK_SHM_NAME_MAX + 1];
} watch = { -1, 0, "" };

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void on_hup(int sig)
{
	(void)sig;
	hup_signal = 1;
}

void supervise_set_reload(void (*fn)(void *arg), void *arg)
{
	reload_fn = fn;
	reload_arg = arg;
}

void supervise_watch(brk_segment *seg)
{
	struct brk_segment_info si;
	struct stat st;
	int fd;

	if (brk_segment_info(seg, &si) != 0)
		return;
	fd = shm_open(si.shm_name, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	/* the object we mapped, as far as can be told: same size */
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != si.total_size) {
		close(fd);
		return;
	}
	if (watch.fd >= 0)
		close(watch.fd);
	watch.fd = fd;
	watch.total_size = si.total_size;
	snprintf(watch.name, sizeof(watch.name), "%s", si.shm_name);
}

/* -BRK_ETRUNCATED, said at warn level, if the segment is now shorter than
 * its header says (a truncation that spared the pages we touch, so no
 * SIGBUS told us); else 0. */
static int cut_short(void)
{
	char err[1280];
	struct logline l;
	struct stat st;

	if (watch.fd < 0 || fstat(watch.fd, &st) != 0 ||
	    (uint64_t)st.st_size >= watch.total_size)
		return 0;
	snprintf(err, sizeof(err), "%s: truncated: %lld bytes of the %llu "
		 "its header says, while breakerd was running; its records "
		 "and their state are lost, and every process that still has "
		 "it mapped dies of SIGBUS when it touches it. Stop its users "
		 "and breakerd, remove it (bctl --shm %s segment remove "
		 "--force), then start breakerd (it creates it anew) and the "
		 "workers", watch.name, (long long)st.st_size,
		 (unsigned long long)watch.total_size, watch.name);
	ll_begin(&l, "warn", "segment truncated");
	ll_str(&l, "shm", watch.name);
	ll_str(&l, "err", err);
	ll_end(&l);
	return -BRK_ETRUNCATED;
}

int supervise_signals_init(void)
{
	struct sigaction sa;
	sigset_t block, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: the sleep must return EINTR */
	if (sigaction(SIGTERM, &sa, NULL) != 0 ||
	    sigaction(SIGINT, &sa, NULL) != 0)
		return -errno;
	sa.sa_handler = on_hup;
	if (sigaction(SIGHUP, &sa, NULL) != 0)
		return -errno;
	/* A closed stderr must not kill the supervisor. */
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) != 0)
		return -errno;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &block, &old) != 0)
		return -errno;
	sleep_mask = old;
	sigdelset(&sleep_mask, SIGTERM);
	sigdelset(&sleep_mask, SIGINT);
	sigdelset(&sleep_mask, SIGHUP);
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Sleep until @deadline_ns (monotonic), a stop signal or a SIGHUP. */
static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts;
	uint64_t now, left;

	while (!stop_signal && !hup_signal) {
		now = brk_monotonic_ns(NULL);
		if (now >= deadline_ns)
			return;
		left = deadline_ns - now;
		ts.tv_sec = (time_t)(left / 1000000000u);
		ts.tv_nsec = (long)(left % 1000000000u);
		if (ppoll(NULL, 0, &ts, &sleep_mask) < 0 && errno != EINTR)
			return; /* cannot sleep: scan again rather than spin */
	}
}

static void log_error(const char *what, int rc)
{
	struct logline l;

	ll_begin(&l, "error", what);
	ll_str(&l, "error", brk_strerror(rc));
	ll_i64(&l, "code", rc);
	ll_end(&l);
}

/* The retirement sweep's state across scans. */
struct retirer {
	uint64_t idle_ms;   /* 0: off */
	uint64_t interval_ms;
	uint32_t cursor;
	uint32_t slots;     /* the index's, learned from the first call */
	int last_rc;
};

/* Index slots per scan so that the whole index is walked at least every
 * idle_ms / 4. */
static uint32_t retire_slice(const struct retirer *r)
{
	uint64_t period = r->idle_ms / 4 ? r->idle_ms / 4 : 1;
	uint64_t scans = period / r->interval_ms ? period / r->interval_ms : 1;
	uint64_t n = (r->slots + scans - 1) / scans;

	return r->slots == 0 ? 1 : n == 0 ? 1 : n > r->slots ? r->slots : (uint32_t)n;
}

static void retire_slice_run(brk_segment *seg, struct retirer *r)
{
	struct brk_retire_stats st;
	struct logline l;
	int rc;

	if (!r->idle_ms)
		return;
	memset(&st, 0, sizeof(st));
	st.cursor = r->cursor;
	rc = brk_retire_idle(seg, r->idle_ms, retire_slice(r), &st);
	if (rc < 0) {
		if (rc != r->last_rc)
			log_error("retire sweep failed", rc);
		r->last_rc = rc;
		return;
	}
	r->last_rc = 0;
	r->cursor = st.cursor;
	r->slots = st.index_slots;
	if (st.busy_locked) {
		ll_begin(&l, "warn", "retire sweep: index lock busy");
		ll_u64(&l, "skipped", st.busy_locked);
		ll_end(&l);
	}
}

/* The --health names, and the last result of each (a failure is logged
 * when it first happens and when it changes, not every scan). */
struct healthwatch {
	const char *const *names;
	size_t n;
	int *last_rc;
};

static void health_run(brk_segment *seg, struct healthwatch *hw)
{
	struct brk_health h;
	struct logline l;
	size_t i;
	int rc;

	for (i = 0; i < hw->n; i++) {
		rc = brk_health(seg, hw->names[i], &h); /* a change: one event */
		if (rc < 0 && rc != hw->last_rc[i]) {
			ll_begin(&l, "warn", rc == -ENOENT ? "health: no such record"
							   : "health failed");
			ll_str(&l, "name", hw->names[i]);
			ll_str(&l, "error", brk_strerror(rc));
			ll_end(&l);
		}
		hw->last_rc[i] = rc;
	}
}

static void scan(brk_segment *seg, uint64_t interval_ms, struct follower *f,
		 int *last_rc, struct retirer *ret, struct healthwatch *hw)
{
	struct brk_reclaim_stats st;
	struct logline l;
	int rc;

	memset(&st, 0, sizeof(st));
	rc = brk_reclaim(seg, &st);
	if (rc < 0 && rc != *last_rc)
		log_error("reclaim failed", rc); /* once per distinct error */
	*last_rc = rc;
	rc = brk_heartbeat(seg, interval_ms);
	if (rc < 0)
		log_error("heartbeat failed", rc);
	retire_slice_run(seg, ret); /* its retirements are events: logged below */
	health_run(seg, hw);        /* so are health transitions */
	/* Events first (one line per lease freed, whoever freed it), then
	 * this scan's own summary. */
	follow_drain(f);
	if (st.dead_owner || st.expired_probe || st.reopened) {
		ll_begin(&l, "info", "reclaim scan");
		ll_u64(&l, "dead_owner", st.dead_owner);
		ll_u64(&l, "expired_probe", st.expired_probe);
		ll_u64(&l, "reopened", st.reopened);
		ll_end(&l);
	}
}

/* The segment's name, for READY=1's STATUS= line. */
static void ready(brk_segment *seg)
{
	struct brk_segment_info si;

	if (brk_segment_info(seg, &si) != 0)
		memset(&si, 0, sizeof(si));
	notify_ready(si.shm_name[0] ? si.shm_name : "the segment");
}

int supervise_run(brk_segment *seg, uint64_t interval_ms, uint64_t retire_idle_ms,
		  const char *const *health, size_t n_health)
{
	struct healthwatch hw = { health, n_health, NULL };
	struct follower f;
	struct retirer ret;
	uint64_t interval_ns, next, now, wd_ns, next_wd;
	int last_rc = 0, scanned = 0;

	memset(&ret, 0, sizeof(ret));
	ret.idle_ms = retire_idle_ms;
	ret.interval_ms = interval_ms;

	interval_ns = interval_ms > UINT64_MAX / 1000000u ? UINT64_MAX
							  : interval_ms * 1000000u;
	if (n_health && !(hw.last_rc = calloc(n_health, sizeof(int)))) {
		log_error("health names", -ENOMEM);
		hw.n = 0;
	}
	wd_ns = notify_watchdog_interval_ns(); /* 0: no WatchdogSec */
	follow_init(&f, seg);
	next = brk_monotonic_ns(NULL);
	next_wd = next;
	while (!stop_signal) {
		if (hup_signal) { /* blocked here: delivered only in the sleep */
			hup_signal = 0;
			notify_reloading(); /* then READY=1 once reloaded */
			if (reload_fn)
				reload_fn(reload_arg);
			if (scanned)
				ready(seg);
		}
		now = brk_monotonic_ns(NULL);
		if (now >= next) {
			if (cut_short()) {
				free(hw.last_rc);
				return -BRK_ETRUNCATED;
			}
			scan(seg, interval_ms, &f, &last_rc, &ret, &hw);
			if (!scanned) {
				scanned = 1;
				ready(seg); /* attached and scanned once */
			}
			/* Fixed rate; after an overrun (a slow scan, a
			 * stopped process) start again from now instead of
			 * catching up. */
			next = sat_add(next, interval_ns);
			now = brk_monotonic_ns(NULL);
			if (next < now)
				next = sat_add(now, interval_ns);
		}
		/* WATCHDOG=1 every WATCHDOG_USEC/2, from this loop only: a
		 * scan that hangs stops it, and systemd restarts us. */
		if (wd_ns && now >= next_wd) {
			notify_watchdog();
			next_wd = sat_add(now, wd_ns);
		}
		sleep_until(wd_ns && next_wd < next ? next_wd : next);
	}
	follow_drain(&f); /* what happened up to the stop */
	free(hw.last_rc);
	return (int)stop_signal;
}
