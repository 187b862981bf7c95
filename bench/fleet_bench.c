/*
 * fleet_bench.c - the fleet link's acceptance figures (issue 13); bench/fleet.sh
 * starts a loopback redis-server (tests/common/redis_harness.sh) and runs
 * it. Every "host" is one segment /brk-fleetbench-<part><X>-<pid> served by
 * its own real breakerd from the build tree:
 *   breakerd --shm SEG --fleet redis://127.0.0.1:PORT/0 --host-id hX
 * All segments live on this machine, so one clock (CLOCK_MONOTONIC) times
 * a decision on one host against its effect on another.
 *
 *  1. propagation: after a random pause (0-40 ms: a random phase against
 *     the publisher's poll step), brk_trip() on host A, then poll
 *     brk_acquire() on every other host (every 20 us) until it is
 *     refused; brk_reset() on A and wait until every host is closed again. p50/p99 over --trips trips,
 *     for 2 hosts and for 4.
 *  2. a dead upstream: 4 hosts x --workers processes call an upstream that
 *     always fails (1 ms a call); every call a breaker admitted is counted
 *     in a shared counter. fleet + fleet_probe records, the same 4 hosts
 *     with the link and without it (breakerd without --fleet), side by
 *     side with the bound threshold + cooling periods (counted: opens on
 *     host A's event ring) and the ratio. Two scenarios: discovered at once
 *     (every worker calls back to back from the same instant: the worst
 *     case, each host pays its threshold before a trip can travel) and
 *     staggered (the upstream dies while traffic flows: each worker calls
 *     once every --call-every-ms, default 20, at its own random phase).
 *  3. redis-server killed mid-run (through --ctl: fleet.sh kills and
 *     restarts it): the workers' acquire+release ns/op p50/p99 before,
 *     during and after; a local trip during the outage still refuses; the
 *     link reports connected again; a trip made on A during the outage
 *     refuses on B after the restart (catch-up).
 *  4. `fleet --callgrind-op N --shm SEG [--fleet-record]`: attach SEG (a
 *     breakerd serves it), 1000 warm-up pairs then N acquire+release
 *     pairs on a record with fleet = 1 (or 0): bench/fleet.sh runs it under
 *     callgrind with breakerd --fleet and without (as bench/callgrind.sh).
 *
 * Where the link is not there (breakerd refuses --fleet: built without
 * hiredis; a record does not keep fleet = 1; the link never connects) the figure says "not measured" and why; exit status 3.
 * Exit 0: every figure measured, 1: an error, 2: usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"

#define FB_HOSTS 4
#define FB_MAX_WORKERS 16
#define FB_PHASE_SAMPLES 20000 /* batches a worker records per phase */
#define FB_BATCH 64            /* acquire+release pairs a sample times */
#define FB_PHASE_US 40000      /* figure 1: pause before a trip, 0 .. this */

struct opts {
	const char *breakerd, *redis, *ctl, *parts;
	int trips, workers, threshold;
	double seconds, outage_s;
	uint64_t open_ms, call_every_ms;
};

struct host {
	char shm[64], id[16], log[96];
	brk_segment *seg;
	pid_t pid;
};

static struct host hosts[FB_HOSTS];
static int unmeasured; /* figures not measured: exit 3 */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @pct percentile (nearest rank) of @v[0..n-1]; sorts @v. */
static double pctl(double *v, size_t n, double pct)
{
	size_t k;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof(v[0]), cmp_double);
	k = (size_t)(pct / 100.0 * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	return v[k - 1];
}

static void not_measured(const char *what, const char *why)
{
	printf("%-46s not measured: %s\n", what, why);
	unmeasured++;
}

/* ---- hosts: a segment and its breakerd ---------------------------------- */

static void host_names(int i, const char *part)
{
	struct host *h = &hosts[i];

	snprintf(h->shm, sizeof(h->shm), "/brk-fleetbench-%s%c-%d", part,
		 'A' + i, (int)getpid());
	snprintf(h->id, sizeof(h->id), "h%c", 'A' + i);
	snprintf(h->log, sizeof(h->log), "/tmp/brk-fleetbench-%s%c-%d.log", part,
		 'A' + i, (int)getpid());
}

/* The lines of @path joined with " / " into @buf ("" if none). */
static void log_lines(const char *path, char *buf, size_t len)
{
	char line[256];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n + 4 < len) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " / " : "", line);
	}
	fclose(f);
}

static void host_stop(struct host *h)
{
	int st;

	if (h->pid > 0) {
		kill(h->pid, SIGTERM);
		while (waitpid(h->pid, &st, 0) < 0 && errno == EINTR)
			;
		h->pid = 0;
	}
	if (h->seg) {
		brk_detach(h->seg);
		h->seg = NULL;
		brk_segment_unlink(h->shm);
	}
	if (h->log[0] && !getenv("FLEET_KEEP_LOGS")) /* 1: keep breakerd's log */
		unlink(h->log);
}

static void hosts_stop(int n)
{
	int i;

	for (i = 0; i < n; i++)
		host_stop(&hosts[i]);
}

static void on_signal(int sig)
{
	int i;

	for (i = 0; i < FB_HOSTS; i++)
		if (hosts[i].pid > 0)
			kill(hosts[i].pid, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Create host @i's segment and start its breakerd (with --fleet when
 * @link). Returns 0; 2 when breakerd exited with status 2 (a usage error:
 * e.g. built without the link); -1 on another failure. @why gets the
 * reason (breakerd's last log line).
 */
static int host_start(const struct opts *o, int i, int link, char *why, size_t len)
{
	struct host *h = &hosts[i];
	struct brk_attach_opts ao;
	struct brk_segment_info si;
	char err[256] = "";
	uint64_t t0;
	int rc, st, fd;

	brk_attach_opts_init(&ao);
	ao.shm_name = h->shm;
	ao.capacity = 64;
	ao.errbuf = err;
	ao.errbuf_len = sizeof(err);
	brk_segment_unlink(h->shm);
	rc = brk_attach(&ao, &h->seg);
	if (rc) {
		snprintf(why, len, "attach %s: %s %s", h->shm, brk_strerror(rc), err);
		return -1;
	}
	fflush(NULL);
	h->pid = fork();
	if (h->pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (h->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		fd = open(h->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		if (link)
			execl(o->breakerd, o->breakerd, "--shm", h->shm, "--fleet",
			      o->redis, "--host-id", h->id, (char *)NULL);
		else
			execl(o->breakerd, o->breakerd, "--shm", h->shm, (char *)NULL);
		_exit(127);
	}
	t0 = now_ns();
	for (;;) {
		if (waitpid(h->pid, &st, WNOHANG) == h->pid) {
			h->pid = 0;
			log_lines(h->log, err, sizeof(err));
			snprintf(why, len, "breakerd%s exited (status %d): %s",
				 link ? " --fleet" : "",
				 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), err);
			return WIFEXITED(st) && WEXITSTATUS(st) == 2 ? 2 : -1;
		}
		brk_segment_info(h->seg, &si);
		if (si.daemon_pid == h->pid && si.heartbeat_age_ms != UINT64_MAX)
			return 0;
		if (now_ns() - t0 > 5000000000ull) {
			snprintf(why, len, "breakerd gave no heartbeat in 5 s");
			return -1;
		}
		sleep_us(1000);
	}
}

/* brk_fleet_status() state of host @i, or a negative code. */
static int link_state(int i)
{
	struct brk_fleet_status st;
	int rc = brk_fleet_status(hosts[i].seg, &st);

	return rc ? rc : (int)st.state;
}

/* Wait up to @ms until every host 0..n-1 reports @state. Returns 0, the
 * negative code of brk_fleet_status, or -ETIMEDOUT. */
static int wait_link(int n, int state, uint64_t ms)
{
	uint64_t t0 = now_ns();
	int i, s, all;

	for (;;) {
		all = 1;
		for (i = 0; i < n; i++) {
			s = link_state(i);
			if (s < 0)
				return s;
			if (s != state)
				all = 0;
		}
		if (all)
			return 0;
		if (now_ns() - t0 > ms * 1000000u)
			return -ETIMEDOUT;
		sleep_us(5000);
	}
}

/*
 * Start hosts 0..n-1 for @part (with the link when @link) and wait until
 * every link is connected. Returns 0, or 1 with @why set (the figure is
 * not measured), stopping what was started.
 */
static int hosts_start(const struct opts *o, const char *part, int n, int link,
		       char *why, size_t len)
{
	int i, rc;

	for (i = 0; i < n; i++) {
		host_names(i, part);
		rc = host_start(o, i, link, why, len);
		if (rc) {
			hosts_stop(i + 1);
			return 1;
		}
	}
	if (!link)
		return 0;
	rc = wait_link(n, BRK_FLEET_CONNECTED, 10000);
	if (rc == -ETIMEDOUT) {
		snprintf(why, len, "the fleet link of every host did not report "
			 "connected within 10 s (host A: %s)",
			 brk_fleet_state_name(link_state(0)));
	} else if (rc) {
		snprintf(why, len, "brk_fleet_status: %s", brk_strerror(rc));
	}
	if (rc) {
		hosts_stop(n);
		return 1;
	}
	return 0;
}

/*
 * Get breaker @name on host @i with @cfg; with @cfg->fleet, check that the
 * record keeps it (brk_info.config.fleet) when @require. Returns 0, or 1 with @why.
 */
static int fleet_breaker(int i, const char *name, const struct brk_config *cfg,
			 int require, brk_breaker **out, char *why, size_t len)
{
	struct brk_info in;
	int rc = brk_breaker_get(hosts[i].seg, name, cfg, out);

	if (rc == 0)
		rc = brk_breaker_configure(*out, cfg);
	if (rc) {
		snprintf(why, len, "breaker %s on %s: %s", name, hosts[i].id,
			 brk_strerror(rc));
		return 1;
	}
	rc = brk_breaker_info(*out, &in);
	if (rc == 0 && require && (in.config.fleet != cfg->fleet ||
			in.config.fleet_probe != cfg->fleet_probe)) {
		snprintf(why, len, "the record does not keep fleet = %u, fleet_probe "
			 "= %u (brk_breaker_update without the fleet settings)",
			 cfg->fleet, cfg->fleet_probe);
		return 1;
	}
	return rc ? (snprintf(why, len, "brk_breaker_info: %s", brk_strerror(rc)), 1) : 0;
}

/* 1 if a call on @b is refused now (a permit taken is released as a
 * success). */
static int refused(brk_breaker *b)
{
	brk_permit p;

	if (brk_acquire(b, &p, NULL) != 0)
		return 1;
	brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	return 0;
}

static int is_closed(brk_breaker *b)
{
	struct brk_info in;

	return brk_breaker_info(b, &in) == 0 && in.state == BRK_CLOSED;
}

/* ---- 1. propagation -------------------------------------------------------- */

static void part_propagation(const struct opts *o, int n)
{
	char what[96], why[256], pn[8];
	brk_breaker *b[FB_HOSTS];
	struct brk_config cfg;
	double *each, *last;
	size_t ne = 0, nl = 0;
	int t, i, misses = 0, stuck = 0, left;
	uint64_t t0, got[FB_HOSTS];

	snprintf(what, sizeof(what), "trip on A -> refused on B, %d hosts", n);
	snprintf(pn, sizeof(pn), "1%d", n);
	if (hosts_start(o, pn, n, 1, why, sizeof(why))) {
		not_measured(what, why);
		return;
	}
	brk_config_init(&cfg);
	cfg.open_ms = cfg.max_open_ms = 60000;
	cfg.fleet = 1;
	for (i = 0; i < n; i++)
		if (fleet_breaker(i, "fleetbench/trip", &cfg, 1, &b[i], why, sizeof(why))) {
			not_measured(what, why);
			hosts_stop(n);
			return;
		}
	each = calloc((size_t)o->trips * (size_t)n, sizeof(double));
	last = calloc((size_t)o->trips, sizeof(double));
	if (!each || !last) {
		not_measured(what, "out of memory");
		goto out;
	}
	for (t = 0; t < o->trips; t++) {
		memset(got, 0, sizeof(got));
		/* A random phase against the publisher's poll step: the reset
		 * below is seen right after a poll, so a trip made at once
		 * would always wait a whole step (the worst case, not the
		 * typical one). */
		sleep_us((uint64_t)(rand() % (FB_PHASE_US / 10)) * 10u);
		t0 = now_ns();
		brk_trip(b[0], 60000);
		for (left = n - 1; left > 0;) {
			for (i = 1; i < n; i++)
				if (!got[i] && refused(b[i])) {
					got[i] = now_ns();
					left--;
				}
			if (now_ns() - t0 > 2000000000ull)
				break;
			sleep_us(20);
		}
		if (left) {
			misses++;
		} else {
			uint64_t mx = 0;

			for (i = 1; i < n; i++) {
				each[ne++] = (double)(got[i] - t0) / 1e6;
				if (got[i] - t0 > mx)
					mx = got[i] - t0;
			}
			last[nl++] = (double)mx / 1e6;
		}
		brk_reset(b[0]);
		/* every host closed again before the next trip */
		for (t0 = now_ns();;) {
			for (i = 0; i < n && is_closed(b[i]); i++)
				;
			if (i == n)
				break;
			if (now_ns() - t0 > 2000000000ull) {
				stuck++;
				for (i = 1; i < n; i++)
					brk_reset(b[i]);
				break;
			}
			sleep_us(200);
		}
	}
	if (nl == 0) {
		snprintf(why, sizeof(why), "no trip of %d reached every host within 2 s",
			 o->trips);
		not_measured(what, why);
		goto out;
	}
	printf("%-46s %zu trips (%d missed 2 s, %d resets not propagated in 2 s)\n",
	       what, nl, misses, stuck);
	printf("  %-44s a random pause of 0-%d ms before each\n", "trips at a random phase:",
	       FB_PHASE_US / 1000);
	printf("  %-44s p50 %7.2f ms   p99 %7.2f ms   max %7.2f ms\n",
	       n > 2 ? "each other host" : "host B", pctl(each, ne, 50),
	       pctl(each, ne, 99), pctl(each, ne, 100));
	if (n > 2)
		printf("  %-44s p50 %7.2f ms   p99 %7.2f ms   max %7.2f ms\n",
		       "the last of the other hosts", pctl(last, nl, 50),
		       pctl(last, nl, 99), pctl(last, nl, 100));
	if (misses)
		unmeasured++;
out:
	free(each);
	free(last);
	hosts_stop(n);
}

/* ---- workers -------------------------------------------------------------- */

struct shared {
	_Atomic int go, stop, phase;
	_Atomic uint64_t go_ns;   /* when go was set (the upstream died) */
	_Atomic uint64_t sends[FB_HOSTS];
	_Atomic uint32_t nsamp[3][FB_HOSTS * FB_MAX_WORKERS];
	float samp[3][FB_HOSTS * FB_MAX_WORKERS][FB_PHASE_SAMPLES];
};

static struct shared *sh;

static pid_t workers[FB_HOSTS * FB_MAX_WORKERS];
static int nworkers;
/* Figure 2's workers: 0, call back to back (a call, or 1 ms after a
 * refusal); else one call every this many us at a random phase. */
static uint64_t dead_every_us;

static void workers_stop(void)
{
	int i, st;

	atomic_store(&sh->stop, 1);
	for (i = 0; i < nworkers; i++)
		if (workers[i] > 0)
			while (waitpid(workers[i], &st, 0) < 0 && errno == EINTR)
				;
	nworkers = 0;
}

/* Sleep until CLOCK_MONOTONIC @t (ns). */
static void sleep_until(uint64_t t)
{
	uint64_t n = now_ns();

	if (t > n)
		sleep_us((t - n) / 1000u);
}

/*
 * Dead upstream: admitted calls are counted and fail after 1 ms. With
 * dead_every_us, worker @slot calls at a steady rate (one attempt every
 * dead_every_us, refused or not) from a random phase in [0, dead_every_us)
 * after go (seeded by @slot: the same phases every run).
 */
static void worker_dead(int hi, int slot, const char *name)
{
	brk_breaker *b;
	brk_permit p;
	uint64_t next = 0;

	if (brk_breaker_find(hosts[hi].seg, name, &b))
		_exit(1);
	while (!atomic_load(&sh->go))
		sleep_us(100);
	if (dead_every_us) {
		srand((unsigned)slot * 7919u + 1u);
		next = atomic_load(&sh->go_ns) +
		       (uint64_t)(rand() % (int)dead_every_us) * 1000u;
	}
	while (!atomic_load(&sh->stop)) {
		if (dead_every_us) {
			sleep_until(next);
			next += dead_every_us * 1000u;
		}
		if (brk_acquire(b, &p, NULL) == 0) {
			atomic_fetch_add(&sh->sends[hi], 1);
			sleep_us(1000);
			brk_release(&p, BRK_FAILURE, BRK_REASON_CONNECT, 0);
		} else if (!dead_every_us) {
			sleep_us(1000);
		}
	}
	_exit(0);
}

/* Healthy hot path: batches of FB_BATCH acquire+release, ns/op per batch
 * into the current phase's samples; 200 us pause between batches. */
static void worker_hot(int hi, int slot, const char *name)
{
	brk_breaker *b;
	brk_permit p;
	uint64_t t0, t1;
	int k, ph;
	uint32_t n;

	if (brk_breaker_find(hosts[hi].seg, name, &b))
		_exit(1);
	while (!atomic_load(&sh->go))
		sleep_us(100);
	while (!atomic_load(&sh->stop)) {
		ph = atomic_load(&sh->phase);
		t0 = now_ns();
		for (k = 0; k < FB_BATCH; k++)
			if (brk_acquire(b, &p, NULL) == 0)
				brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
		t1 = now_ns();
		n = atomic_load(&sh->nsamp[ph][slot]);
		if (n < FB_PHASE_SAMPLES) {
			sh->samp[ph][slot][n] = (float)(t1 - t0) / FB_BATCH;
			atomic_store(&sh->nsamp[ph][slot], n + 1);
		}
		sleep_us(200);
	}
	_exit(0);
}

static int workers_start(int nh, int per, int hot, const char *name)
{
	pid_t parent = getpid();
	int h, w;

	memset(sh, 0, sizeof(*sh));
	fflush(NULL);
	for (h = 0; h < nh; h++)
		for (w = 0; w < per; w++) {
			pid_t pid = fork();

			if (pid < 0)
				return -errno;
			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() != parent)
					_exit(1);
				if (hot)
					worker_hot(h, h * per + w, name);
				worker_dead(h, h * per + w, name);
			}
			workers[nworkers++] = pid;
		}
	atomic_store(&sh->go_ns, now_ns());
	atomic_store(&sh->go, 1);
	return 0;
}

/* ---- 2. dead upstream ------------------------------------------------------ */

/* Opens (transitions to open) of @name in host @i's ring since *@cur;
 * *@first gets the first one's time (the writer's CLOCK_MONOTONIC), or
 * keeps its value if there is none. */
static uint64_t count_opens(int i, const char *name, uint64_t *cur, uint64_t *first)
{
	struct brk_event ev[256];
	uint64_t n = 0;
	int k, got;

	while ((got = brk_events_read(hosts[i].seg, cur, ev, 256, NULL)) > 0)
		for (k = 0; k < got; k++)
			if (strcmp(ev[k].name, name) == 0 && ev[k].to == BRK_OPEN &&
			    ev[k].from != BRK_OPEN) {
				if (n++ == 0 && first)
					*first = ev[k].mono_ns;
			}
	return n;
}

struct dead_run {
	int ok;
	char why[256];
	uint64_t sends, discovery, opens, periods, bound;
};

/* Cooling periods of open_ms from @first to @end (the one begun counts). */
static uint64_t periods_of(uint64_t first, uint64_t end, uint64_t open_ms)
{
	return end > first ? 1 + (end - first) / (open_ms * 1000000u) : 1;
}

/*
 * One run of the dead upstream on 4 fresh hosts: with @link, breakerd
 * --fleet on every host; without, plain breakerd. The records are the
 * same (fleet = 1, fleet_probe = 1) so only the link differs. @every_us:
 * dead_every_us for the workers (0: back to back, all at once).
 */
static void dead_run(const struct opts *o, int link, uint64_t every_us,
		     struct dead_run *r)
{
	const char *name = "fleetbench/upstream";
	brk_breaker *b[FB_HOSTS];
	struct brk_config cfg;
	uint64_t cur[FB_HOSTS], first[FB_HOSTS], t_go, t_end, f, early = UINT64_MAX;
	int i;

	memset(r, 0, sizeof(*r));
	dead_every_us = every_us;
	if (hosts_start(o, link ? (every_us ? "2ls" : "2l") : (every_us ? "2ns" : "2n"),
			FB_HOSTS, link, r->why, sizeof(r->why)))
		return;
	brk_config_init(&cfg);
	cfg.failure_threshold = (uint32_t)o->threshold;
	cfg.open_ms = cfg.max_open_ms = o->open_ms;
	cfg.half_open_probes = 1;
	cfg.success_threshold = 1;
	cfg.probe_timeout_ms = 1000;
	cfg.fleet = 1;
	cfg.fleet_probe = 1;
	for (i = 0; i < FB_HOSTS; i++) {
		if (fleet_breaker(i, name, &cfg, link, &b[i], r->why, sizeof(r->why))) {
			hosts_stop(FB_HOSTS);
			return;
		}
		cur[i] = 1;
		count_opens(i, name, &cur[i], NULL); /* from here on */
	}
	t_go = now_ns();
	if (workers_start(FB_HOSTS, o->workers, 0, name)) {
		snprintf(r->why, sizeof(r->why), "fork: %s", strerror(errno));
		workers_stop();
		hosts_stop(FB_HOSTS);
		return;
	}
	/* the discovery: what was sent before the first cooling period ends */
	sleep_us(o->open_ms * 900);
	for (i = 0; i < FB_HOSTS; i++)
		r->discovery += atomic_load(&sh->sends[i]);
	sleep_us((uint64_t)(o->seconds * 1e6) - o->open_ms * 900);
	t_end = now_ns();
	workers_stop();
	for (i = 0; i < FB_HOSTS; i++) {
		r->sends += atomic_load(&sh->sends[i]);
		first[i] = t_end;
		r->opens += count_opens(i, name, &cur[i], &first[i]);
		if (first[i] < early)
			early = first[i];
		/* without the link every host pays its own threshold + probes */
		if (!link)
			r->periods += f = periods_of(first[i], t_end, o->open_ms),
				r->bound += (uint64_t)o->threshold + f;
	}
	if (link) {
		r->periods = periods_of(early, t_end, o->open_ms);
		r->bound = (uint64_t)o->threshold + r->periods;
	}
	(void)t_go;
	r->ok = 1;
	hosts_stop(FB_HOSTS);
}

static void row_u(const char *label, const struct dead_run *a,
		  const struct dead_run *b, uint64_t va, uint64_t vb)
{
	char x[32] = "-", y[32] = "-";

	if (a->ok)
		snprintf(x, sizeof(x), "%llu", (unsigned long long)va);
	if (b->ok)
		snprintf(y, sizeof(y), "%llu", (unsigned long long)vb);
	printf("  %-30s %14s %14s\n", label, x, y);
}

static void row_f(const char *label, const struct dead_run *a,
		  const struct dead_run *b, double va, double vb)
{
	char x[32] = "-", y[32] = "-";

	if (a->ok)
		snprintf(x, sizeof(x), "%.2f", va);
	if (b->ok)
		snprintf(y, sizeof(y), "%.2f", vb);
	printf("  %-30s %14s %14s\n", label, x, y);
}

/* Figure 2 for one scenario: @every_us as dead_run(); @what its label. */
static void dead_scenario(const struct opts *o, uint64_t every_us, const char *what)
{
	struct dead_run with, without;

	dead_run(o, 1, every_us, &with);
	dead_run(o, 0, every_us, &without);
	printf("%-46s %.1f s, %d workers/host, threshold %d, open_ms %llu\n", what,
	       o->seconds, o->workers, o->threshold, (unsigned long long)o->open_ms);
	if (every_us)
		printf("  (the upstream dies while traffic flows: each worker calls "
		       "once every %llu ms\n   at its own random phase, refused or "
		       "not; a call that gets through fails after 1 ms)\n",
		       (unsigned long long)(every_us / 1000u));
	else
		printf("  (the worst case: every worker of the 4 hosts calls back to "
		       "back from the\n   same instant, so all hosts discover the "
		       "dead upstream faster than a trip travels)\n");
	printf("  %-30s %14s %14s\n", "", "fleet link", "no link");
	row_u("calls sent to the upstream", &with, &without, with.sends, without.sends);
	row_u("  in the first 0.9 x open_ms", &with, &without, with.discovery,
	      without.discovery);
	row_u("  after (probes)", &with, &without, with.sends - with.discovery,
	      without.sends - without.discovery);
	row_u("cooling periods (run / open_ms)", &with, &without, with.periods,
	      without.periods);
	row_u("opens in the event rings", &with, &without, with.opens, without.opens);
	row_u("bound: threshold + periods", &with, &without, with.bound, without.bound);
	row_f("sent / bound", &with, &without,
	      with.bound ? (double)with.sends / (double)with.bound : 0,
	      without.bound ? (double)without.sends / (double)without.bound : 0);
	if (with.ok && without.ok) {
		printf("  %-30s %14.2f\n", "no link / fleet link (sent)",
		       with.sends ? (double)without.sends / (double)with.sends : 0);
		printf("  %-30s %14.2f\n", "no link / fleet link (probes)",
		       with.sends > with.discovery ?
		       (double)(without.sends - without.discovery) /
		       (double)(with.sends - with.discovery) : 0);
		printf("  (fleet: one threshold + one probe per cooling period of the "
		       "fleet;\n   no link: each host's own threshold + periods, summed "
		       "over the 4 hosts)\n");
	}
	if (!with.ok)
		not_measured("  with the fleet link", with.why);
	if (!without.ok)
		not_measured("  without the link", without.why);
}

static void part_dead(const struct opts *o)
{
	dead_scenario(o, 0, "4 hosts, dead upstream, discovered at once");
	dead_scenario(o, o->call_every_ms * 1000u,
		      "4 hosts, dead upstream, discovery staggered");
}

/* ---- 3. redis-server killed mid-run --------------------------------------- */

/* Ask fleet.sh (the --ctl directory's fifos) to "kill" or "restart"
 * redis-server; returns 0 when it answered "ok". */
static int ctl(const struct opts *o, const char *cmd)
{
	char path[512], buf[16] = "";
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/req", o->ctl);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	snprintf(buf, sizeof(buf), "%s\n", cmd); /* one write: one line */
	n = write(fd, buf, strlen(buf));
	memset(buf, 0, sizeof(buf));
	close(fd);
	if (n < 0)
		return -EIO;
	snprintf(path, sizeof(path), "%s/ack", o->ctl);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && strncmp(buf, "ok", 2) == 0 ? 0 : -EIO;
}

static void phase_figures(const char *label, int ph, int nslots)
{
	static double v[FB_HOSTS * FB_MAX_WORKERS * FB_PHASE_SAMPLES];
	size_t n = 0;
	uint32_t k, m;
	int s;

	for (s = 0; s < nslots; s++) {
		m = atomic_load(&sh->nsamp[ph][s]);
		for (k = 0; k < m; k++)
			v[n++] = sh->samp[ph][s][k];
	}
	if (n == 0) {
		printf("  %-44s no samples\n", label);
		return;
	}
	printf("  %-44s p50 %6.1f ns/op  p99 %6.1f ns/op  (%zu batches of %d)\n",
	       label, pctl(v, n, 50), pctl(v, n, 99), n, FB_BATCH);
}

/* Wait up to @ms for @b to refuse; ms waited or -1. */
static double wait_refused(brk_breaker *b, uint64_t ms)
{
	uint64_t t0 = now_ns();

	while (!refused(b)) {
		if (now_ns() - t0 > ms * 1000000u)
			return -1;
		sleep_us(200);
	}
	return (double)(now_ns() - t0) / 1e6;
}

static void part_outage(const struct opts *o)
{
	const char *what = "redis-server killed mid-run (2 hosts)";
	brk_breaker *hot[2], *loc, *cu[2];
	struct brk_fleet_status st;
	struct brk_config cfg;
	char why[256];
	uint64_t us = (uint64_t)(o->outage_s * 1e6), t0;
	double ms;
	int i, rc;

	if (!o->ctl) {
		not_measured(what, "no --ctl DIR (run it through bench/fleet.sh, "
			     "which kills and restarts redis-server)");
		return;
	}
	if (hosts_start(o, "3", 2, 1, why, sizeof(why))) {
		not_measured(what, why);
		return;
	}
	brk_config_init(&cfg);
	cfg.fleet = 1;
	cfg.open_ms = cfg.max_open_ms = 60000;
	for (i = 0; i < 2; i++)
		if (fleet_breaker(i, "fleetbench/hot", &cfg, 1, &hot[i], why, sizeof(why)) ||
		    fleet_breaker(i, "fleetbench/catchup", &cfg, 1, &cu[i], why, sizeof(why))) {
			not_measured(what, why);
			hosts_stop(2);
			return;
		}
	if (fleet_breaker(1, "fleetbench/local", &cfg, 1, &loc, why, sizeof(why))) {
		not_measured(what, why);
		hosts_stop(2);
		return;
	}
	printf("%-46s %d workers on host A, %.1f s a phase\n", what, o->workers,
	       o->outage_s);
	atomic_store(&sh->phase, 0);
	if (workers_start(1, o->workers, 1, "fleetbench/hot")) {
		not_measured(what, "fork failed");
		workers_stop();
		hosts_stop(2);
		return;
	}
	sleep_us(us);
	rc = ctl(o, "kill");
	atomic_store(&sh->phase, 1);
	if (rc)
		printf("  could not kill redis-server through %s: %s\n", o->ctl,
		       brk_strerror(rc));
	t0 = now_ns();
	rc = wait_link(1, BRK_FLEET_DOWN, 5000);
	printf("  %-44s %s\n", "link state on A after the kill",
	       rc ? "not down within 5 s" : "down");
	if (rc == 0)
		printf("  %-44s %.1f ms\n", "  seen down after", (double)(now_ns() - t0) / 1e6);
	brk_trip(loc, 60000);
	printf("  %-44s %s\n", "local trip on B refuses during the outage",
	       refused(loc) ? "yes" : "NO");
	brk_trip(cu[0], 60000); /* on A, while the link is down */
	sleep_us(us);
	rc = ctl(o, "restart");
	atomic_store(&sh->phase, 2);
	t0 = now_ns();
	if (rc)
		printf("  could not restart redis-server: %s\n", brk_strerror(rc));
	rc = wait_link(2, BRK_FLEET_CONNECTED, 30000);
	if (rc == 0) {
		printf("  %-44s %.1f ms after the restart\n", "link connected again (A and B)",
		       (double)(now_ns() - t0) / 1e6);
	} else {
		printf("  %-44s not within 30 s\n", "link connected again (A and B)");
		unmeasured++;
	}
	ms = wait_refused(cu[1], 15000);
	if (ms >= 0) {
		printf("  %-44s %.1f ms after the restart\n",
		       "trip made on A in the outage refuses on B",
		       (double)(now_ns() - t0) / 1e6);
	} else {
		printf("  %-44s NO (not within 15 s)\n", "trip made on A in the outage refuses on B");
		unmeasured++;
	}
	if (brk_fleet_status(hosts[0].seg, &st) == 0)
		printf("  %-44s %llu (A), ", "reconnects", (unsigned long long)st.reconnects);
	if (brk_fleet_status(hosts[1].seg, &st) == 0)
		printf("%llu (B)\n", (unsigned long long)st.reconnects);
	sleep_us(us);
	workers_stop();
	phase_figures("acquire+release before the outage", 0, o->workers);
	phase_figures("acquire+release during the outage", 1, o->workers);
	phase_figures("acquire+release after the restart", 2, o->workers);
	hosts_stop(2);
}

/* ---- 4. the callgrind mode ------------------------------------------------- */

static int callgrind_op(const char *shm, long n, int fleet)
{
	struct brk_attach_opts ao;
	struct brk_config cfg;
	brk_segment *seg;
	brk_breaker *b;
	brk_permit p;
	long i;
	int rc;

	brk_attach_opts_init(&ao);
	ao.shm_name = shm;
	ao.flags = BRK_ATTACH_NOCREATE;
	rc = brk_attach(&ao, &seg);
	if (rc) {
		fprintf(stderr, "fleet: attach %s: %s\n", shm, brk_strerror(rc));
		return 1;
	}
	brk_config_init(&cfg);
	cfg.fleet = (uint32_t)fleet;
	rc = brk_breaker_get(seg, fleet ? "fleetbench/cg-fleet" : "fleetbench/cg",
			     &cfg, &b);
	if (rc) {
		fprintf(stderr, "fleet: breaker: %s\n", brk_strerror(rc));
		return 1;
	}
	for (i = 0; i < 1000 + n; i++)
		if (brk_acquire(b, &p, NULL) == 0)
			brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	brk_detach(seg);
	return 0;
}

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fleet --redis URL [--breakerd PATH] [--ctl DIR] [--parts 1234]\n"
		"             [--trips N] [--seconds S] [--workers W] [--threshold T]\n"
		"             [--open-ms MS] [--call-every-ms MS] [--outage-s S]\n"
		"       fleet --callgrind-op N --shm SEG [--fleet-record]\n"
		"bench/fleet.sh BUILD [options] starts redis-server and runs it.\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "redis", required_argument, NULL, 'r' },
		{ "breakerd", required_argument, NULL, 'b' },
		{ "ctl", required_argument, NULL, 'c' },
		{ "parts", required_argument, NULL, 'p' },
		{ "trips", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 's' },
		{ "workers", required_argument, NULL, 'w' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "open-ms", required_argument, NULL, 'o' },
		{ "call-every-ms", required_argument, NULL, 'e' },
		{ "outage-s", required_argument, NULL, 'O' },
		{ "callgrind-op", required_argument, NULL, 'g' },
		{ "shm", required_argument, NULL, 'S' },
		{ "fleet-record", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { NULL, NULL, NULL, "123", 100, 2, 5, 5.0, 2.0, 200, 20 };
	const char *shm = NULL;
	long cg = -1;
	int c, fleet_rec = 0;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'r': o.redis = optarg; break;
		case 'b': o.breakerd = optarg; break;
		case 'c': o.ctl = optarg; break;
		case 'p': o.parts = optarg; break;
		case 't': o.trips = atoi(optarg); break;
		case 's': o.seconds = atof(optarg); break;
		case 'w': o.workers = atoi(optarg); break;
		case 'T': o.threshold = atoi(optarg); break;
		case 'o': o.open_ms = strtoull(optarg, NULL, 10); break;
		case 'e': o.call_every_ms = strtoull(optarg, NULL, 10); break;
		case 'O': o.outage_s = atof(optarg); break;
		case 'g': cg = strtol(optarg, NULL, 10); break;
		case 'S': shm = optarg; break;
		case 'F': fleet_rec = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (cg >= 0) {
		if (!shm) {
			usage(stderr);
			return 2;
		}
		return callgrind_op(shm, cg, fleet_rec);
	}
	if (!o.redis || o.trips < 1 || o.workers < 1 || o.workers > FB_MAX_WORKERS ||
	    o.threshold < 1 || o.open_ms < 1 || o.call_every_ms < 2 ||
	    o.call_every_ms > 10000 || o.seconds * 1000 < (double)o.open_ms ||
	    o.outage_s <= 0) {
		usage(stderr);
		return 2;
	}
	if (!o.breakerd) {
		static char path[4096];
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);

		if (n <= 0)
			return 1;
		path[n] = 0;
		*strrchr(path, '/') = 0;
		strcat(path, "/../daemon/breakerd");
		o.breakerd = path;
	}
	if (access(o.breakerd, X_OK) != 0) {
		fprintf(stderr, "fleet: %s: not executable\n", o.breakerd);
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (sh == MAP_FAILED) {
		perror("fleet: mmap");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("== fleet link (issue 13): %s, breakerd %s\n", o.redis, o.breakerd);
	if (strchr(o.parts, '1')) {
		part_propagation(&o, 2);
		part_propagation(&o, 4);
	}
	if (strchr(o.parts, '2'))
		part_dead(&o);
	if (strchr(o.parts, '3'))
		part_outage(&o);
	if (unmeasured)
		printf("NOT MEASURED: %d figure(s) (see above)\n", unmeasured);
	return unmeasured ? 3 : 0;
}
