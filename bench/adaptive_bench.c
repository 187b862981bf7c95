/*
 * adaptive_bench.c - the adaptive-concurrency benchmark (issue 25, scope
 * 3; not in CI): CLIENTS forked processes call a fixed-capacity upstream
 * (Debian's gunicorn, WORKERS sync workers whose handler sleeps SERVICE ms:
 * bench/adaptive/upstream.py) in a closed loop for SECONDS per strategy,
 * the strategies one after another in one run, each with fresh segments.
 * At HALVE_AT seconds into each strategy the upstream loses half its
 * workers (SIGTTOU to gunicorn's master: capacity halves, the unloaded
 * latency stays SERVICE ms); they are given back (SIGTTIN) between
 * strategies. Run it with
 *     bench/adaptive.sh BUILD [--seconds S]
 *
 * Strategies (--only takes their names, comma-separated):
 *   none         no limit: every client sends at once;
 *   low          a static bulkhead set too low (max_concurrent --low, 2),
 *                one segment for the host;
 *   high         a static bulkhead set too high (--high, 32);
 *   per-process  the learned limit run in each process alone (Netflix's
 *                concurrency-limits design): each client its own private
 *                segment with concurrency_auto = 1, max_concurrent
 *                --auto-max (the upper bound), min_concurrent --auto-min;
 *                the overshoot is the sum of the 16 limits;
 *   host-wide    the same settings in one segment for the host: one
 *                limit learned from every process's completions.
 * Each request: brk_admit() with max_wait_ms --max-wait-ms (a refused
 * request waits there; until the bulkhead has a fair queue brk_admit()
 * refuses a full bulkhead at once, -BRK_EFULL), and on -BRK_EFULL the
 * client sleeps --retry-us and asks again: a closed loop, so a refusal is
 * a wait, never a dropped request. Then the GET (libcurl, a new connection
 * each: gunicorn's sync workers close it), then brk_admit_release() with
 * the outcome (the library measures the hold time, acquire to release).
 *
 * Before the strategies: the unloaded latency (1 client, 2 s; its p50 is
 * "unloaded" below) and the upstream's measured capacity (2 x WORKERS
 * clients, no limit, 2 s: the server is never idle, so this is WORKERS /
 * its real service time, a little under the nominal WORKERS / SERVICE).
 *
 * Per strategy and phase (before: [WARMUP, HALVE_AT); after: [HALVE_AT +
 * WARMUP, SECONDS)), by completion time: goodput (200s per second; % of
 * the nominal capacity, 200 then 100 r/s, and of the measured one), p50
 * and p99 of the GET's latency (admission to answer) and p99/unloaded,
 * p99 of the wait before admission, the limit (brk_breaker_info's
 * concurrency_limit: the sum over the clients' segments for per-process,
 * the shared one otherwise; sampled every 100 ms, mean over the phase),
 * and the CPU load of the phase: the host's busy share of all its cores
 * (/proc/stat), the clients' and gunicorn's CPU in cores (each client's
 * CLOCK_PROCESS_CPUTIME_ID; /proc/PID/stat of gunicorn's master, its
 * reaped and its live workers), and
 * the 1-minute load average at the phase's end.
 * "in bounds" = goodput >= 95 % of the measured capacity (halved after
 * the cut) and p99 <= 2 x unloaded, over 1 s windows that slide by 0.5 s;
 * "settle" (before row) is the time from the start, "recover" (after
 * row) the time from the cut, until 2 s in a row (three windows) are in
 * bounds; "-" if never.
 *
 *   adaptive_bench --url URL --upstream-pid PID [--clients N]
 *       [--seconds S] [--workers W] [--service-ms MS] [--halve-at SEC]
 *       [--warmup SEC] [--low N] [--high N] [--auto-min N] [--auto-max N]
 *       [--max-wait-ms MS] [--retry-us US] [--only LIST] [--kv]
 * --halve-at 0: no cut (one phase). --kv adds "kv key=value ..." lines.
 * AB_TRACE=1 in the environment prints the shared limit, its baseline, the
 * last window's mean and the queue every 100 ms on stderr (one-segment
 * strategies).
 */
#include "breaker.h"
#include "proc_stat.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AB_MAX_CLIENTS 64
#define AB_START_DELAY_NS 300000000ull /* clients set up before the start */
#define AB_SAMPLE_NS 100000000ull      /* limit samples every 100 ms */
#define AB_NS 1000000000ull

enum { S_NONE, S_LOW, S_HIGH, S_PERPROC, S_HOST, S_N };

static const char *const snames[S_N] = {
	"none", "low", "high", "per-process", "host-wide"
};

struct params {
	const char *url;
	pid_t upstream;
	uint32_t clients, workers, low, high, auto_min, auto_max;
	double seconds, halve_at, warmup, service_ms;
	uint64_t max_wait_ms, retry_us;
	int kv;
	char shm[64];
};

struct rec {
	uint32_t end_us;  /* answer's time from the start */
	uint32_t lat_us;  /* admission to answer (the GET) */
	uint32_t wait_us; /* first ask to admission */
	uint32_t status;  /* HTTP status, 0: no answer, AB_UNSERVED */
};

/* A request still waiting for admission when the run ends: its wait so
 * far (a lower bound), no GET. */
#define AB_UNSERVED 1u

/* One client's records (in the parent's shared mapping). */
struct slot {
	uint64_t n, dropped; /* kept, beyond max */
	double cpu_s[2];     /* this client's CPU before and after the cut */
	int32_t rc;
	char err[116];
	struct rec r[];
};

static size_t slot_bytes, slot_max;
static uint8_t *slots;

static struct slot *slot_at(uint32_t i)
{
	return (struct slot *)(slots + (size_t)i * slot_bytes);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * AB_NS + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t abs_ns)
{
	struct timespec ts = { (time_t)(abs_ns / AB_NS),
			       (long)(abs_ns % AB_NS) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void sleep_ns(uint64_t ns)
{
	sleep_until(now_ns() + ns);
}

/* ---- the upstream: gunicorn's master and its workers ---- */

/* utime + stime (+ cutime + cstime with @children) of @pid in clock
 * ticks; its ppid in *ppid. -1 if it is gone. */
static long long proc_cpu(pid_t pid, int children, pid_t *ppid)
{
	struct bench_proc_stat ps;

	if (bench_proc_stat(pid, &ps) != 0)
		return -1;
	if (ppid)
		*ppid = ps.ppid;
	return (long long)(ps.utime + ps.stime + (children ? ps.cutime + ps.cstime : 0));
}

/* Calls @fn on every child of @parent. Returns how many. */
static int for_children(pid_t parent, void (*fn)(pid_t, void *), void *arg)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t pp;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		pid_t pid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (pid_t)atoi(e->d_name);
		if (proc_cpu(pid, 0, &pp) >= 0 && pp == parent) {
			n++;
			if (fn)
				fn(pid, arg);
		}
	}
	closedir(d);
	return n;
}

static void add_cpu(pid_t pid, void *arg)
{
	long long t = proc_cpu(pid, 0, NULL);

	if (t > 0)
		*(long long *)arg += t;
}

/* gunicorn's CPU so far (ticks): the master with its reaped workers, and
 * the live ones. */
static long long upstream_cpu(pid_t master)
{
	long long t = proc_cpu(master, 1, NULL);

	if (t < 0)
		return 0;
	for_children(master, add_cpu, &t);
	return t;
}

/* Signal the master until @want workers run (one signal at a time: two
 * equal signals pending at once are one). 0, or -1 after 10 s. */
static int upstream_workers(pid_t master, uint32_t want)
{
	uint64_t give_up = now_ns() + 10 * AB_NS;
	int have = for_children(master, NULL, NULL), sent = 0;

	if (have < 0)
		return -1;
	for (; have + sent < (int)want; sent++) {
		kill(master, SIGTTIN);
		sleep_ns(30000000ull);
	}
	for (; have + sent > (int)want; sent--) {
		kill(master, SIGTTOU);
		sleep_ns(30000000ull);
	}
	while (for_children(master, NULL, NULL) != (int)want) {
		if (now_ns() > give_up || kill(master, 0))
			return -1;
		sleep_ns(20000000ull);
	}
	return 0;
}

/* ---- CPU of the host ---- */

struct cpu_mark {
	unsigned long long busy, total; /* /proc/stat's "cpu" line, ticks */
	long long up;                   /* gunicorn, ticks */
	uint64_t ns;
};

static void cpu_mark(struct cpu_mark *m, pid_t master)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int i;

	m->busy = m->total = 0;
	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]) == 8) {
			for (i = 0; i < 8; i++)
				m->total += v[i];
			m->busy = m->total - v[3] - v[4]; /* - idle, iowait */
		}
		fclose(f);
	}
	m->up = upstream_cpu(master);
	m->ns = now_ns();
}

static double load1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static double ticks_s(long long t)
{
	return (double)t / (double)sysconf(_SC_CLK_TCK);
}


/* ---- the client ---- */

static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	(void)buf;
	(void)arg;
	return size * n;
}

static int open_seg(const char *name, brk_segment **out)
{
	struct brk_attach_opts o;

	brk_attach_opts_init(&o);
	o.shm_name = name;
	o.capacity = 64;
	return brk_attach(&o, out);
}

static void strategy_cfg(const struct params *p, int s, struct brk_config *c)
{
	brk_config_init(c);
	switch (s) {
	case S_LOW:
		c->max_concurrent = p->low;
		break;
	case S_HIGH:
		c->max_concurrent = p->high;
		break;
	case S_PERPROC:
	case S_HOST:
		c->concurrency_auto = 1;
		c->max_concurrent = p->auto_max;
		c->min_concurrent = p->auto_min;
		break;
	}
}

/* The segment of client @i (the shared one unless per-process). */
static void seg_name(const struct params *p, int s, uint32_t i, char *buf,
		     size_t len)
{
	if (s == S_PERPROC)
		snprintf(buf, len, "%s-c%u", p->shm, i);
	else
		snprintf(buf, len, "%s", p->shm);
}

static int open_breaker(const struct params *p, int s, uint32_t i,
			brk_segment **seg, brk_breaker **b)
{
	struct brk_config c;
	char name[96];
	int rc;

	seg_name(p, s, i, name, sizeof(name));
	strategy_cfg(p, s, &c);
	rc = open_seg(name, seg);
	if (!rc)
		rc = brk_breaker_get(*seg, "bench/upstream", &c, b);
	return rc;
}

static double cpu_self_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void client(const struct params *p, int s, uint32_t idx,
		   const char *url, uint64_t start_ns, uint64_t halve_ns,
		   uint64_t end_ns)
{
	double cpu0;
	int ph = 0;
	struct slot *sl = slot_at(idx);
	struct brk_admit_req req;
	struct brk_admission adm;
	brk_segment *seg = NULL;
	brk_breaker *b = NULL;
	uint64_t t0, t1, t2;
	long status;
	CURL *h;
	int rc;

	h = curl_easy_init();
	if (!h) {
		sl->rc = -ENOMEM;
		_exit(1);
	}
	if (s != S_NONE) {
		rc = open_breaker(p, s, idx, &seg, &b);
		if (rc) {
			sl->rc = rc;
			snprintf(sl->err, sizeof(sl->err), "attach/get: %s",
				 brk_strerror(rc));
			_exit(1);
		}
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.breaker = b;
	req.attempt = BRK_FIRST_ATTEMPT;
	req.priority = BRK_PRIORITY_NORMAL;
	req.max_wait_ms = p->max_wait_ms;
/* at the cut, this client's CPU so far is the first phase's */
#define CPU_PHASE(t) do { \
		if (halve_ns && !ph && (t) >= halve_ns) { \
			sl->cpu_s[0] = cpu_self_s() - cpu0; \
			cpu0 += sl->cpu_s[0]; \
			ph = 1; \
		} \
	} while (0)
	sleep_until(start_ns);
	cpu0 = cpu_self_s();
	while ((t0 = now_ns()) < end_ns) {
		CPU_PHASE(t0);
		if (b) {
			while ((rc = brk_admit(&req, &adm)) != 0) {
				if (rc != -BRK_EFULL && !sl->err[0])
					snprintf(sl->err, sizeof(sl->err),
						 "brk_admit: %s (%s)",
						 brk_strerror(rc),
						 brk_admit_code_name(adm.code));
				if ((t1 = now_ns()) >= end_ns) {
					if (sl->n < slot_max)
						sl->r[sl->n++] = (struct rec){
							.end_us = (uint32_t)((end_ns - start_ns) / 1000 - 1),
							.wait_us = (uint32_t)((t1 - t0) / 1000),
							.status = AB_UNSERVED,
						};
					goto out;
				}
				sleep_ns(p->retry_us * 1000);
				CPU_PHASE(now_ns());
			}
		}
		t1 = now_ns();
		status = 0;
		if (curl_easy_perform(h) == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		t2 = now_ns();
		if (b)
			brk_admit_release(&adm,
					  status == 200 ? BRK_SUCCESS : BRK_FAILURE,
					  status ? BRK_REASON_SERVER_ERROR :
						   BRK_REASON_CONNECT, 0);
		if (sl->n < slot_max)
			sl->r[sl->n++] = (struct rec){
				.end_us = (uint32_t)((t2 - start_ns) / 1000),
				.lat_us = (uint32_t)((t2 - t1) / 1000),
				.wait_us = (uint32_t)((t1 - t0) / 1000),
				.status = (uint32_t)status,
			};
		else
			sl->dropped++;
	}
out:
	sl->cpu_s[ph] = cpu_self_s() - cpu0;
	curl_easy_cleanup(h);
	brk_detach(seg);
	_exit(0);
#undef CPU_PHASE
}

/* ---- figures ---- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Quantile q of v[0..n) (sorted here), nearest rank. */
static double quant(uint32_t *v, size_t n, double q)
{
	size_t k;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u32);
	k = (size_t)(q * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

struct window {
	double good_per_s, p50_ms, p99_ms, wait_p99_ms;
	double fair_pct; /* the fewest 200s of one client, % of the mean */
	uint64_t ok, other, unserved;
};

/* The 200s ending in [a, b) s of every client (latencies, waits). */
static void window_of(uint32_t nclients, double a, double b, struct window *w)
{
	uint64_t total = 0, k = 0, j = 0;
	uint32_t *lat, *wait, i;
	uint64_t au = (uint64_t)(a * 1e6), bu = (uint64_t)(b * 1e6), x;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < nclients; i++)
		total += slot_at(i)->n;
	lat = malloc((total + 1) * sizeof(*lat));
	wait = malloc((total + 1) * sizeof(*wait));
	if (!lat || !wait) {
		free(lat);
		free(wait);
		return;
	}
	for (i = 0; i < nclients; i++) {
		struct slot *sl = slot_at(i);
		uint64_t mine = 0;

		for (x = 0; x < sl->n; x++) {
			const struct rec *r = &sl->r[x];

			if (r->end_us < au || r->end_us >= bu)
				continue;
			if (r->status == AB_UNSERVED) {
				w->unserved++;
				wait[j++] = r->wait_us;
				continue;
			}
			if (r->status != 200) {
				w->other++;
				continue;
			}
			mine++;
			lat[k++] = r->lat_us;
			wait[j++] = r->wait_us;
		}
		if (i == 0 || (double)mine < w->fair_pct)
			w->fair_pct = (double)mine;
	}
	w->ok = k;
	w->fair_pct = k ? 100.0 * w->fair_pct * nclients / (double)k : 0;
	w->good_per_s = b > a ? (double)k / (b - a) : 0;
	w->p50_ms = quant(lat, k, 0.50) / 1000.0;
	w->p99_ms = quant(lat, k, 0.99) / 1000.0;
	w->wait_p99_ms = quant(wait, j, 0.99) / 1000.0;
	free(lat);
	free(wait);
}

/* From @from s: the first t (0.5 s steps) such that the 1 s windows at t,
 * t + 0.5 and t + 1 are in bounds; returns t - from, or -1. */
static double in_bounds_after(uint32_t nclients, double from, double to,
			      double cap, double p99_max)
{
	double t;
	int good = 0;

	for (t = from; t + 1.0 <= to + 1e-9; t += 0.5) {
		struct window w;

		window_of(nclients, t, t + 1.0, &w);
		if (w.good_per_s >= 0.95 * cap && w.p99_ms <= p99_max) {
			if (++good == 3)
				return t - 1.0 - from;
		} else {
			good = 0;
		}
	}
	return -1;
}

/* ---- one run ---- */

struct limits {
	double sum[2];
	uint32_t n[2];
};

/* The limit in force now: the sum over the per-process segments, or the
 * shared one. */
static double limit_now(brk_breaker **bs, uint32_t nb)
{
	struct brk_info inf;
	double sum = 0;
	uint32_t i;

	for (i = 0; i < nb; i++)
		if (bs[i] && brk_breaker_info(bs[i], &inf) == 0)
			sum += inf.concurrency_limit;
	return sum;
}

struct phase_cpu {
	double wall, host_pct, clients, upstream, load;
};

struct run {
	double secs, halve_at;
	uint32_t nclients;
	struct phase_cpu cpu[2];
	struct limits lim;
	int failed;
};

static void unlink_segs(const struct params *p)
{
	char name[96];
	uint32_t i;

	brk_segment_unlink(p->shm);
	for (i = 0; i < p->clients; i++) {
		seg_name(p, S_PERPROC, i, name, sizeof(name));
		brk_segment_unlink(name);
	}
}

/* The CPU of a phase; the clients' is added by run() from what they
 * measured themselves (CLOCK_PROCESS_CPUTIME_ID: a client uses far less
 * than one clock tick per phase). */
static void cpu_phase(const struct cpu_mark *a, const struct cpu_mark *b,
		      struct phase_cpu *out)
{
	double wall = (double)(b->ns - a->ns) / 1e9;

	out->wall = wall;
	out->host_pct = b->total > a->total ?
		100.0 * (double)(b->busy - a->busy) / (double)(b->total - a->total) : 0;
	out->upstream = wall > 0 ? ticks_s(b->up - a->up) / wall : 0;
	out->load = load1();
}

/* Run @nclients clients of strategy @s for @secs, cutting the upstream's
 * workers at @halve_at (0: never). The records stay in the slots. */
static int run(const struct params *p, int s, uint32_t nclients, double secs,
	       double halve_at, struct run *out)
{
	pid_t pids[AB_MAX_CLIENTS];
	brk_segment *segs[AB_MAX_CLIENTS] = { 0 };
	brk_breaker *bs[AB_MAX_CLIENTS] = { 0 };
	uint32_t nb = 0, i, done;
	uint64_t start, end, halve = 0, next;
	struct cpu_mark m0, m1, m2;
	int status, cut = 0;
	/* AB_TRACE=1: the shared limit every 100 ms on stderr */
	const char *tr = getenv("AB_TRACE"), *name = snames[s];
	int trace = tr && *tr && strcmp(tr, "0") != 0;

	memset(out, 0, sizeof(*out));
	out->secs = secs;
	out->halve_at = halve_at;
	out->nclients = nclients;
	for (i = 0; i < nclients; i++) {
		struct slot *sl = slot_at(i);

		sl->n = sl->dropped = 0;
		sl->cpu_s[0] = sl->cpu_s[1] = 0;
		sl->rc = 0;
		sl->err[0] = 0;
	}
	unlink_segs(p);
	/* the parent's own handles, for the limit's samples */
	if (s != S_NONE) {
		nb = s == S_PERPROC ? nclients : 1;
		for (i = 0; i < nb; i++) {
			int rc = open_breaker(p, s, i, &segs[i], &bs[i]);

			if (rc) {
				fprintf(stderr, "adaptive_bench: %s: %s\n",
					snames[s], brk_strerror(rc));
				return 1;
			}
		}
	}
	start = now_ns() + AB_START_DELAY_NS;
	end = start + (uint64_t)(secs * 1e9);
	if (halve_at > 0)
		halve = start + (uint64_t)(halve_at * 1e9);
	for (i = 0; i < nclients; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			client(p, s, i, p->url, start, halve, end);
		}
		if (pids[i] < 0) {
			perror("fork");
			out->failed = 1;
			nclients = i;
			break;
		}
	}
	sleep_until(start);
	cpu_mark(&m0, p->upstream);
	m1 = m0;
	for (next = start + AB_SAMPLE_NS; next < end; next += AB_SAMPLE_NS) {
		sleep_until(next);
		if (halve && !cut && now_ns() >= halve) {
			cpu_mark(&m1, p->upstream);
			cpu_phase(&m0, &m1, &out->cpu[0]);
			/* one signal at a time (equal pending signals merge) */
			for (i = 0; i < p->workers / 2; i++) {
				kill(p->upstream, SIGTTOU);
				if (i + 1 < p->workers / 2)
					sleep_ns(30000000ull);
			}
			cut = 1;
		}
		if (nb) {
			double t = (double)(now_ns() - start) / 1e9;
			int ph = halve && t >= halve_at ? 1 : 0;
			double from = ph ? halve_at + p->warmup : p->warmup;

			if (t >= from) {
				out->lim.sum[ph] += limit_now(bs, nb);
				out->lim.n[ph]++;
			}
			if (trace && nb == 1 && bs[0]) {
				struct brk_info inf;
				if (brk_breaker_info(bs[0], &inf) == 0)
					fprintf(stderr, "trace %s t=%.1f limit=%.2f "
						"baseline_us=%llu recent_us=%llu "
						"queued=%llu\n", name, t,
						inf.concurrency_limit,
						(unsigned long long)inf.latency_baseline_us,
						(unsigned long long)inf.latency_recent_us,
						(unsigned long long)inf.queued);
			}
		}
	}
	for (done = 0; done < nclients; done++)
		if (waitpid(pids[done], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			out->failed = 1;
	cpu_mark(&m2, p->upstream);
	if (cut)
		cpu_phase(&m1, &m2, &out->cpu[1]);
	else
		cpu_phase(&m0, &m2, &out->cpu[0]);
	for (i = 0; i < nclients; i++) {
		out->cpu[0].clients += slot_at(i)->cpu_s[0];
		out->cpu[1].clients += slot_at(i)->cpu_s[1];
	}
	for (i = 0; i < 2; i++)
		if (out->cpu[i].wall > 0)
			out->cpu[i].clients /= out->cpu[i].wall;
	for (i = 0; i < nb; i++)
		brk_detach(segs[i]);
	unlink_segs(p);
	for (i = 0; i < nclients; i++) {
		struct slot *sl = slot_at(i);

		if (sl->err[0] || sl->rc)
			fprintf(stderr, "adaptive_bench: %s: client %u: %s\n",
				snames[s], i, sl->err[0] ? sl->err :
				brk_strerror(sl->rc));
		if (sl->dropped)
			fprintf(stderr, "adaptive_bench: %s: client %u: %llu "
				"records beyond %zu not kept\n", snames[s], i,
				(unsigned long long)sl->dropped, slot_max);
	}
	if (cut && upstream_workers(p->upstream, p->workers)) {
		fprintf(stderr, "adaptive_bench: gunicorn (pid %d) does not "
			"run %u workers again\n", (int)p->upstream, p->workers);
		return 1;
	}
	if (cut)
		sleep_ns(AB_NS); /* the new workers import the app */
	return out->failed;
}

/* ---- output ---- */

/* The mean limit of each strategy and phase (-1: none), for the
 * overshoot line. */
static double limit_mean[S_N][2];

static void row(const struct params *p, const char *name, int ph,
		const struct run *r, double nominal, double measured,
		double unloaded)
{
	double a, b, t_in, lim;
	struct window w;
	const struct phase_cpu *c = &r->cpu[ph];
	char lbuf[16], tbuf[16];

	if (ph == 0) {
		a = p->warmup;
		b = r->halve_at > 0 ? r->halve_at : r->secs;
		t_in = in_bounds_after(r->nclients, 0, b, measured,
				       2 * unloaded);
	} else {
		a = r->halve_at + p->warmup;
		b = r->secs;
		nominal /= 2;
		measured /= 2;
		t_in = in_bounds_after(r->nclients, r->halve_at, r->secs,
				       measured, 2 * unloaded);
	}
	window_of(r->nclients, a, b, &w);
	lim = r->lim.n[ph] ? r->lim.sum[ph] / r->lim.n[ph] : -1;
	for (int s = 0; s < S_N; s++)
		if (!strcmp(name, snames[s]))
			limit_mean[s][ph] = lim;
	if (lim < 0)
		snprintf(lbuf, sizeof(lbuf), "-");
	else
		snprintf(lbuf, sizeof(lbuf), "%.1f", lim);
	if (t_in < 0)
		snprintf(tbuf, sizeof(tbuf), "-");
	else
		snprintf(tbuf, sizeof(tbuf), "%.1f", t_in);
	printf("%-12s %-6s %7.1f %5.1f %5.1f %7.1f %7.1f %6.2f %8.1f %5.0f "
	       "%7s %6s | %4.0f %5.2f %5.2f %5.2f\n",
	       ph ? "" : name, ph ? "after" : "before", w.good_per_s,
	       100 * w.good_per_s / nominal, 100 * w.good_per_s / measured,
	       w.p50_ms, w.p99_ms, unloaded > 0 ? w.p99_ms / unloaded : 0,
	       w.wait_p99_ms, w.fair_pct, tbuf, lbuf, c->host_pct, c->clients,
	       c->upstream, c->load);
	if (p->kv)
		printf("kv strategy=%s phase=%s goodput=%.1f pct_nominal=%.1f "
		       "pct_measured=%.1f p50_ms=%.2f p99_ms=%.2f "
		       "p99_over_unloaded=%.2f wait_p99_ms=%.1f fair_pct=%.0f "
		       "unserved=%llu in_bounds_s=%s "
		       "limit=%s non200=%llu host_cpu_pct=%.0f clients_cores=%.2f "
		       "upstream_cores=%.2f load1=%.2f\n",
		       name, ph ? "after" : "before", w.good_per_s,
		       100 * w.good_per_s / nominal,
		       100 * w.good_per_s / measured, w.p50_ms, w.p99_ms,
		       unloaded > 0 ? w.p99_ms / unloaded : 0, w.wait_p99_ms,
		       w.fair_pct, (unsigned long long)w.unserved, tbuf, lbuf, (unsigned long long)w.other, c->host_pct,
		       c->clients, c->upstream, c->load);
	fflush(stdout);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: adaptive_bench --url URL --upstream-pid PID "
		"[--clients N] [--seconds S]\n"
		"    [--workers W] [--service-ms MS] [--halve-at SEC] "
		"[--warmup SEC] [--low N] [--high N]\n"
		"    [--auto-min N] [--auto-max N] [--max-wait-ms MS] "
		"[--retry-us US] [--only LIST] [--kv]\n"
		"  URL: gunicorn's base URL (bench/adaptive/upstream.py); "
		"PID: its master (SIGTTOU/SIGTTIN\n"
		"  change its workers); LIST: comma-separated strategies of "
		"none, low, high, per-process,\n"
		"  host-wide; --halve-at 0: no cut (default: SECONDS / 2)\n");
	return 2;
}

static int parse_only(const char *arg, unsigned *only)
{
	char buf[128], *tok, *save = NULL;
	int s;

	/* a copy: argv is printed as the command line later */
	snprintf(buf, sizeof(buf), "%s", arg);
	*only = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (s = 0; s < S_N; s++)
			if (!strcmp(tok, snames[s]))
				break;
		if (s == S_N) {
			fprintf(stderr, "adaptive_bench: --only: unknown "
				"strategy '%s' (none, low, high, per-process, "
				"host-wide)\n", tok);
			return -1;
		}
		*only |= 1u << s;
	}
	return 0;
}

static int parse(int argc, char **argv, struct params *p, unsigned *only)
{
	static const struct option lo[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "upstream-pid", required_argument, NULL, 'P' },
		{ "clients", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "workers", required_argument, NULL, 'w' },
		{ "service-ms", required_argument, NULL, 'm' },
		{ "halve-at", required_argument, NULL, 'H' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "low", required_argument, NULL, 'l' },
		{ "high", required_argument, NULL, 'h' },
		{ "auto-min", required_argument, NULL, 'n' },
		{ "auto-max", required_argument, NULL, 'x' },
		{ "max-wait-ms", required_argument, NULL, 'M' },
		{ "retry-us", required_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'o' },
		{ "kv", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	char *end = NULL;
	int c, halve_set = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		errno = 0;
		end = NULL;
		switch (c) {
		case 'u': p->url = optarg; break;
		case 'P': p->upstream = (pid_t)strtol(optarg, &end, 10); break;
		case 'c': p->clients = (uint32_t)strtoul(optarg, &end, 10); break;
		case 's': p->seconds = strtod(optarg, &end); break;
		case 'w': p->workers = (uint32_t)strtoul(optarg, &end, 10); break;
		case 'm': p->service_ms = strtod(optarg, &end); break;
		case 'H': p->halve_at = strtod(optarg, &end); halve_set = 1; break;
		case 'W': p->warmup = strtod(optarg, &end); break;
		case 'l': p->low = (uint32_t)strtoul(optarg, &end, 10); break;
		case 'h': p->high = (uint32_t)strtoul(optarg, &end, 10); break;
		case 'n': p->auto_min = (uint32_t)strtoul(optarg, &end, 10); break;
		case 'x': p->auto_max = (uint32_t)strtoul(optarg, &end, 10); break;
		case 'M': p->max_wait_ms = strtoull(optarg, &end, 10); break;
		case 'r': p->retry_us = strtoull(optarg, &end, 10); break;
		case 'o':
			if (parse_only(optarg, only))
				return 2;
			break;
		case 'k': p->kv = 1; break;
		default: return usage();
		}
		if (errno || (end && (*end || end == optarg))) {
			fprintf(stderr, "adaptive_bench: bad value '%s'\n",
				optarg);
			return 2;
		}
	}
	if (!halve_set)
		p->halve_at = p->seconds / 2;
	if (!p->url || !*p->url || p->url[strlen(p->url) - 1] != '/' ||
	    p->upstream <= 0 || !p->clients || p->clients > AB_MAX_CLIENTS ||
	    p->seconds < 2 || p->workers < 2 || p->service_ms <= 0 ||
	    p->halve_at < 0 || p->halve_at >= p->seconds ||
	    p->warmup < 0 || !p->low || !p->high || !p->auto_min ||
	    p->auto_max < p->auto_min)
		return usage();
	if (p->halve_at > 0 && (p->warmup >= p->halve_at ||
				p->halve_at + p->warmup + 1 > p->seconds)) {
		fprintf(stderr, "adaptive_bench: --warmup %g leaves no window "
			"around --halve-at %g in %g s\n", p->warmup,
			p->halve_at, p->seconds);
		return 2;
	}
	if (p->halve_at == 0 && p->warmup + 1 > p->seconds) {
		fprintf(stderr, "adaptive_bench: --warmup %g leaves no window in "
			"%g s\n", p->warmup, p->seconds);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct params p = {
		.clients = 16, .workers = 4, .low = 2, .high = 32,
		.auto_min = 1, .auto_max = 32, .seconds = 20, .warmup = 2,
		.service_ms = 20, .max_wait_ms = 5000, .retry_us = 2000,
	};
	struct run r;
	struct window w;
	unsigned only = (1u << S_N) - 1;
	double nominal, measured, unloaded, unl_p99;
	char url[512];
	int s, rc = 0, i;

	if (parse(argc, argv, &p, &only))
		return 2;
	snprintf(p.shm, sizeof(p.shm), "/brk-bench-adaptive-%d", (int)getpid());
	snprintf(url, sizeof(url), "%swork", p.url);
	p.url = url;
	slot_max = (size_t)(p.seconds * 1000) + 1000; /* 1000 r/s per client */
	slot_bytes = sizeof(struct slot) + slot_max * sizeof(struct rec);
	slot_bytes = (slot_bytes + 63) & ~(size_t)63;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return 1;
	slots = mmap(NULL, slot_bytes * AB_MAX_CLIENTS, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (for_children(p.upstream, NULL, NULL) != (int)p.workers) {
		fprintf(stderr, "adaptive_bench: gunicorn (pid %d) runs %d "
			"workers, not --workers %u\n", (int)p.upstream,
			for_children(p.upstream, NULL, NULL), p.workers);
		return 1;
	}
	nominal = p.workers * 1000.0 / p.service_ms;
	printf("command:");
	for (i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\nadaptive benchmark: gunicorn %u sync workers x %g ms "
	       "(nominal capacity %g r/s), %u client processes in a closed "
	       "loop, %g s per strategy, ", p.workers, p.service_ms, nominal,
	       p.clients, p.seconds);
	if (p.halve_at > 0)
		printf("capacity halved (%u -> %u workers, SIGTTOU) at %g s\n",
		       p.workers, p.workers / 2, p.halve_at);
	else
		printf("no cut\n");
	printf("bulkheads: low max_concurrent %u, high %u; per-process and "
	       "host-wide concurrency_auto = 1, min_concurrent %u, "
	       "max_concurrent %u; a refusal waits in brk_admit (max_wait_ms "
	       "%llu), -BRK_EFULL sleeps %llu us and asks again\n", p.low,
	       p.high, p.auto_min, p.auto_max,
	       (unsigned long long)p.max_wait_ms,
	       (unsigned long long)p.retry_us);
	fflush(stdout);

	/* unloaded: one client, 2 s */
	if (run(&p, S_NONE, 1, 2.0, 0, &r))
		return 1;
	window_of(1, 0, 2.0, &w);
	unloaded = w.p50_ms;
	unl_p99 = w.p99_ms;
	printf("unloaded (1 client, 2 s): p50 %.2f ms, p99 %.2f ms, %.1f r/s; "
	       "cpu host %.0f %%, load1 %.2f\n", unloaded, unl_p99,
	       w.good_per_s, r.cpu[0].host_pct, r.cpu[0].load);
	/* measured capacity: 2 x workers clients, no limit, 2 s */
	if (run(&p, S_NONE, 2 * p.workers, 2.0, 0, &r))
		return 1;
	window_of(2 * p.workers, 0.5, 2.0, &w);
	measured = w.good_per_s;
	printf("measured capacity (%u clients, no limit): %.1f r/s (%.1f %% "
	       "of nominal); cpu host %.0f %%, gunicorn %.2f cores, load1 "
	       "%.2f\n", 2 * p.workers, measured, 100 * measured / nominal,
	       r.cpu[0].host_pct, r.cpu[0].upstream, r.cpu[0].load);
	printf("in bounds: goodput >= 95 %% of the measured capacity (%.1f, "
	       "then %.1f r/s) and p99 <= 2 x unloaded p50 (%.1f ms), 1 s "
	       "windows; settle/recover: until 2 s in a row are in bounds\n",
	       measured, measured / 2, 2 * unloaded);
	if (p.kv)
		printf("kv unloaded_p50_ms=%.2f unloaded_p99_ms=%.2f "
		       "measured_capacity=%.1f nominal_capacity=%.1f\n",
		       unloaded, unl_p99, measured, nominal);
	printf("\n%-12s %-6s %7s %5s %5s %7s %7s %6s %8s %5s %7s %6s | %4s "
	       "%5s %5s %5s\n", "strategy", "phase", "good/s", "%nom", "%cap",
	       "p50ms", "p99ms", "p99/u", "waitp99", "fair", "settle",
	       "limit", "host", "cli", "guni", "load1");
	printf("%-12s %-6s %7s %5s %5s %7s %7s %6s %8s %5s %7s %6s | %4s "
	       "%5s %5s %5s\n", "", "", "", "", "", "", "", "", "ms", "%",
	       "/recov", "", "cpu%", "cores", "cores", "");
	fflush(stdout);
	for (s = 0; s < S_N; s++) {
		if (!(only & (1u << s)))
			continue;
		rc |= run(&p, s, p.clients, p.seconds, p.halve_at, &r);
		row(&p, snames[s], 0, &r, nominal, measured, unloaded);
		if (p.halve_at > 0)
			row(&p, snames[s], 1, &r, nominal, measured, unloaded);
	}
	for (s = 0; s < 2 && (only & (1u << S_PERPROC)) &&
		    (only & (1u << S_HOST)); s++) {
		if (s == 1 && p.halve_at <= 0)
			break;
		printf("%sper-process overshoot %s: the sum of the %u "
		       "per-process limits %.1f vs the host-wide limit %.1f",
		       s ? "" : "\n", s ? "after the cut" : "before the cut",
		       p.clients, limit_mean[S_PERPROC][s],
		       limit_mean[S_HOST][s]);
		if (limit_mean[S_HOST][s] > 0)
			printf(" (%.1fx)", limit_mean[S_PERPROC][s] /
			       limit_mean[S_HOST][s]);
		printf("\n");
	}
	printf("\nwaitp99: first ask to admission, with the requests still "
	       "waiting at the end (their wait so far); fair: the fewest 200s "
	       "of one client in the phase, %% of the mean per client (0: a "
	       "client starved)\n");
	printf("limit: brk_breaker_info concurrency_limit, mean over the "
	       "phase (per-process: the sum of the %u clients' limits); cpu: "
	       "host busy %% of its %ld cores (/proc/stat; other work on the "
	       "host counts), the clients' and gunicorn's CPU in cores, "
	       "1-minute load average at the phase's end\n", p.clients,
	       sysconf(_SC_NPROCESSORS_ONLN));
	curl_global_cleanup();
	return rc;
}
