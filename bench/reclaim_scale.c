/*
 * reclaim_scale.c - what the supervisor's scan costs at scale (issue 10,
 * "the supervisor's cost follows the leases").
 *
 *   reclaim-scale [--records N] [--leases L] [--holders P] [--calls K]
 *                 [--breakerd PATH] [--cpu-seconds S] [--interval-ms I]
 *
 * Creates a private segment (/brk-rscale-PID) of capacity N holding N
 * breakers (max_concurrent 10 each), then measures:
 *   1. ns per brk_reclaim() call, idle (no lease held anywhere), over K
 *      calls;
 *   2. the same with L permits held by P live processes (process p takes
 *      one permit on each of breakers p*L/P .. (p+1)*L/P - 1: L leases on
 *      L breakers, P owners to check);
 *   3. with --breakerd PATH: the CPU (utime + stime from /proc/PID/stat)
 *      of a real breakerd (--interval I ms) on that segment over S
 *      seconds, idle and with the L leases held. Its resolution is one
 *      clock tick (10 ms: 0.2 % of a core over 5 s), so the scan's share
 *      of a core is also printed from 1. and 2. (ns per call x calls per
 *      second at interval I).
 * It prints one "key=value" line per figure (for bench/ scale tables to
 * parse) and unlinks the segment. Public API only, so the same source
 * measures any libbreaker (before/after figures of one change).
 *
 * Exit 0, 1 on a failure (with a message), 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"
#include "proc_stat.h"

struct opts {
	uint32_t records, leases, holders, calls;
	const char *breakerd;
	uint32_t cpu_seconds, interval_ms;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The private segment, unlinked by die() too: a failed run leaves none. */
static char shm[64];

static void die(const char *what, int rc)
{
	fprintf(stderr, "reclaim-scale: %s: %s\n", what, brk_strerror(rc));
	if (shm[0])
		brk_segment_unlink(shm);
	exit(1);
}

static uint32_t parse_u32(const char *flag, const char *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || end == v || x > UINT32_MAX) {
		fprintf(stderr, "reclaim-scale: %s: '%s' is not a count\n", flag, v);
		exit(2);
	}
	return (uint32_t)x;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "records", required_argument, NULL, 'n' },
		{ "leases", required_argument, NULL, 'l' },
		{ "holders", required_argument, NULL, 'p' },
		{ "calls", required_argument, NULL, 'k' },
		{ "breakerd", required_argument, NULL, 'b' },
		{ "cpu-seconds", required_argument, NULL, 's' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ 100000, 1000, 100, 200, NULL, 5, 100 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n': o->records = parse_u32("--records", optarg); break;
		case 'l': o->leases = parse_u32("--leases", optarg); break;
		case 'p': o->holders = parse_u32("--holders", optarg); break;
		case 'k': o->calls = parse_u32("--calls", optarg); break;
		case 'b': o->breakerd = optarg; break;
		case 's': o->cpu_seconds = parse_u32("--cpu-seconds", optarg); break;
		case 'i': o->interval_ms = parse_u32("--interval-ms", optarg); break;
		default: exit(2);
		}
	}
	if (optind != argc || o->records == 0 || o->records > BRK_MAX_CAPACITY ||
	    o->leases > o->records || o->holders == 0 || o->leases < o->holders ||
	    o->calls == 0 || o->interval_ms == 0) {
		fprintf(stderr, "reclaim-scale: need 0 < records <= %u, holders <= "
			"leases <= records, calls > 0, interval-ms > 0\n",
			BRK_MAX_CAPACITY);
		exit(2);
	}
}

static void name_of(char *buf, size_t len, uint32_t i)
{
	snprintf(buf, len, "scale/%07u", i);
}

/* ns per brk_reclaim() call, averaged over @calls. */
static double reclaim_ns(brk_segment *seg, uint32_t calls)
{
	struct brk_reclaim_stats st;
	uint64_t t0 = now_ns();
	int rc;

	for (uint32_t k = 0; k < calls; k++) {
		rc = brk_reclaim(seg, &st);
		if (rc)
			die("brk_reclaim", rc);
		if (st.dead_owner || st.expired_probe)
			die("brk_reclaim freed a live lease", -EPROTO);
	}
	return (double)(now_ns() - t0) / calls;
}

/* Fork @o->holders processes holding @o->leases permits; each writes one
 * byte to the pipe when its permits are held, then sleeps until killed. */
static void start_holders(const struct opts *o, const char *shm, pid_t *pids)
{
	int fds[2];
	char b;

	if (pipe(fds) != 0)
		die("pipe", -errno);
	fflush(NULL);
	for (uint32_t p = 0; p < o->holders; p++) {
		pids[p] = fork();
		if (pids[p] < 0)
			die("fork", -errno);
		if (pids[p] == 0) {
			struct brk_attach_opts ao;
			brk_segment *seg;
			uint32_t lo = (uint32_t)((uint64_t)p * o->leases / o->holders);
			uint32_t hi = (uint32_t)((uint64_t)(p + 1) * o->leases / o->holders);
			char name[64];

			close(fds[0]);
			brk_attach_opts_init(&ao);
			ao.shm_name = shm;
			ao.flags = BRK_ATTACH_NOCREATE;
			if (brk_attach(&ao, &seg) != 0)
				_exit(3);
			for (uint32_t i = lo; i < hi; i++) {
				brk_breaker *br;
				brk_permit pm;
				name_of(name, sizeof name, i);
				if (brk_breaker_find(seg, name, &br) != 0 ||
				    brk_acquire(br, &pm, NULL) != 0)
					_exit(4);
			}
			if (write(fds[1], "r", 1) != 1)
				_exit(5);
			for (;;)
				pause();
		}
	}
	close(fds[1]);
	for (uint32_t p = 0; p < o->holders; p++)
		if (read(fds[0], &b, 1) != 1)
			die("a holder failed to take its permits", -EPROTO);
	close(fds[0]);
}

static void stop_children(pid_t *pids, uint32_t n)
{
	for (uint32_t p = 0; p < n; p++)
		if (pids[p] > 0)
			kill(pids[p], SIGKILL);
	for (uint32_t p = 0; p < n; p++)
		if (pids[p] > 0)
			waitpid(pids[p], NULL, 0);
}

/* utime + stime of @pid, in clock ticks. */
static int cpu_ticks(pid_t pid, uint64_t *ticks)
{
	struct bench_proc_stat ps;
	int rc = bench_proc_stat(pid, &ps);

	if (rc == 0)
		*ticks = ps.utime + ps.stime;
	return rc;
}

/* CPU % of one core used by a breakerd on @shm over @o->cpu_seconds. */
static double breakerd_cpu(const struct opts *o, const char *shm)
{
	char interval[32];
	struct timespec warm = { 0, 300 * 1000 * 1000 };
	uint64_t t0, t1, c0, c1;
	pid_t pid;

	snprintf(interval, sizeof interval, "%ums", o->interval_ms);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork", -errno);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(127);
		execl(o->breakerd, o->breakerd, "--shm", shm, "--interval",
		      interval, (char *)NULL);
		_exit(127);
	}
	nanosleep(&warm, NULL); /* attached and scanning */
	if (cpu_ticks(pid, &c0) != 0)
		die("breakerd did not start", -ESRCH);
	t0 = now_ns();
	sleep(o->cpu_seconds);
	if (cpu_ticks(pid, &c1) != 0)
		die("breakerd died", -ESRCH);
	t1 = now_ns();
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	return 100.0 * ((double)(c1 - c0) / (double)sysconf(_SC_CLK_TCK)) /
	       ((double)(t1 - t0) / 1e9);
}

int main(int argc, char **argv)
{
	struct brk_attach_opts ao;
	struct brk_config cfg;
	struct opts o;
	brk_segment *seg;
	char name[64];
	pid_t *pids;
	uint64_t t0;
	double idle, leased, cpu_idle = -1, cpu_leased = -1;
	int rc;

	parse(argc, argv, &o);
	snprintf(shm, sizeof shm, "/brk-rscale-%d", (int)getpid());
	brk_segment_unlink(shm);
	brk_config_init(&cfg);
	cfg.max_concurrent = 10;
	brk_attach_opts_init(&ao);
	ao.shm_name = shm;
	ao.capacity = o.records;
	/* every record is a bulkhead: the arena the library says N of them
	 * take (the default arena assumes few extension blocks) */
	rc = brk_arena_cost(BRK_KIND_BREAKER, &cfg, NULL, &ao.arena_bytes);
	if (rc)
		die("brk_arena_cost", rc);
	ao.arena_bytes = ao.arena_bytes * o.records + BRK_MIN_ARENA_BYTES;
	rc = brk_attach(&ao, &seg);
	if (rc)
		die("brk_attach", rc);
	t0 = now_ns();
	for (uint32_t i = 0; i < o.records; i++) {
		brk_breaker *b;
		name_of(name, sizeof name, i);
		rc = brk_breaker_get(seg, name, &cfg, &b);
		if (rc)
			die("brk_breaker_get", rc);
	}
	printf("records=%u\ncreate_s=%.3f\n", o.records, (double)(now_ns() - t0) / 1e9);
	(void)reclaim_ns(seg, 2); /* warm */
	idle = reclaim_ns(seg, o.calls);
	printf("reclaim_idle_ns_per_call=%.0f\n", idle);
	/* the scan's share of a core at the interval, from the call time
	 * (finer than breakerd's CPU ticks, 10 ms each) */
	printf("reclaim_idle_core_pct_at_interval=%.4f\n",
	       idle * (1000.0 / o.interval_ms) / 1e7);
	if (o.breakerd) {
		cpu_idle = breakerd_cpu(&o, shm);
		printf("breakerd_idle_cpu_pct=%.2f\n", cpu_idle);
	}
	pids = calloc(o.holders, sizeof *pids);
	if (!pids)
		die("calloc", -ENOMEM);
	if (o.leases) {
		start_holders(&o, shm, pids);
		(void)reclaim_ns(seg, 2);
		leased = reclaim_ns(seg, o.calls);
		printf("leases=%u\nholders=%u\nreclaim_leased_ns_per_call=%.0f\n",
		       o.leases, o.holders, leased);
		printf("reclaim_leased_core_pct_at_interval=%.4f\n",
		       leased * (1000.0 / o.interval_ms) / 1e7);
		if (o.breakerd) {
			cpu_leased = breakerd_cpu(&o, shm);
			printf("breakerd_leased_cpu_pct=%.2f\n", cpu_leased);
		}
		stop_children(pids, o.holders);
	}
	free(pids);
	brk_detach(seg);
	brk_segment_unlink(shm);
	return 0;
}
