/*
 * scale.c - bench/scale: what one host with many records costs (issue 10).
 *
 *   scale [--max N] [--quick] [--runs N] [--bctl PATH] [--breakerd PATH]
 *
 * Normally started by bench/scale.sh BUILD_DIR. Prints bytes per record
 * by kind, then for N = 10^3, 10^5, 10^6 records (up to --max) on a
 * private segment of N + SCALE_EXTRA records: the create rate, cached and
 * fresh lookup ns/op over random names, breakerd's CPU % idle and with
 * 1,000 leases held by 100 processes, the dead-owner reclaim latency, and
 * each bctl command of scale_bctl.c's table; then the goals.
 *
 * An N whose segment would not fit in /dev/shm (keeping 10 % of it and at
 * least SCALE_SHM_RESERVE free) is skipped with the sizes. Every segment
 * has its own name (with our pid) and is unlinked when done, at exit and
 * on SIGINT/SIGTERM; every child dies with us (PR_SET_PDEATHSIG).
 *
 * Exit status: 0 every goal met, 3 a goal missed or not measured,
 * 1 a measurement failed, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"
#include "bench.h"
#include "scale.h"

#define SCALE_EXTRA 128u             /* records beyond N: lease breakers */
#define SCALE_SHM_RESERVE (512ull << 20)
#define NAME_W 32                    /* "scale/NNNNNNN.example" + NUL fits */
#define MB (1024.0 * 1024.0)

/* Targets from issue 10. */
#define GOAL_BYTES 512.0         /* per breaker without a bulkhead, index in */
#define GOAL_IDLE_PCT 1.0        /* breakerd idle at 10^6, % of one core */
#define GOAL_RECLAIM_SLACK 50.0  /* ms beyond the interval, 1,000 leases */
#define GOAL_CACHED_NS 100.0     /* at 10^6 */
#define GOAL_FRESH_NS 2000.0     /* at 10^6 */
#define GOAL_CREATE_S 5.0        /* 10^6 records */
#define GOAL_LIST_FIRST_MS 50.0  /* bctl list, first line, 10^6 */

static const uint32_t sizes[] = { 1000u, 100000u, 1000000u };
static const char *const size_label[] = { "10^3", "10^5", "10^6" };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define TOP (NSIZES - 1)             /* the 10^6 column */
#define SCALE_MAX_BCTL 16

struct point {
	int measured;             /* 0: skipped (note says why) */
	char note[200];
	double create_s, create_rate;
	double cached_ns, hot_ns, fresh_ns;
	double cpu_idle, cpu_leases; /* % of one core; < 0: failed */
	double reclaim_ms, reclaim_max_ms; /* median and max over kills */
	double interval_ms;       /* breakerd's, from its heartbeat */
	struct scale_bctl_result bctl[SCALE_MAX_BCTL];
};

struct opts {
	uint32_t max;
	int quick, runs;
	uint64_t cpu_window_ms, cached_ops, fresh_ops, bctl_budget_ms;
	char bctl[PATH_MAX], breakerd[PATH_MAX];
};

static struct {
	pid_t pid;
	char shm[64], probe[64];
} G;

static void cleanup(void)
{
	if (getpid() != G.pid)
		return;
	brk_segment_unlink(G.shm);
	brk_segment_unlink(G.probe);
}

static void on_signal(int sig)
{
	if (getpid() == G.pid) {
		/* async-signal-safe: kill(2), and shm_unlink is unlink(2) */
		scale_children_kill();
		shm_unlink(G.shm);
		shm_unlink(G.probe);
	}
	_exit(128 + sig);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void record_name(char *buf, uint32_t i)
{
	snprintf(buf, NAME_W, "scale/%07u.example", i);
}

/* Usable bytes in /dev/shm: free, less 10 % of its size and at least
 * SCALE_SHM_RESERVE. Fills @free_b. */
static uint64_t shm_usable(uint64_t *free_b)
{
	struct statvfs v;
	uint64_t total, keep;

	if (statvfs("/dev/shm", &v) != 0) {
		*free_b = 0;
		return 0;
	}
	*free_b = (uint64_t)v.f_bavail * v.f_frsize;
	total = (uint64_t)v.f_blocks * v.f_frsize;
	keep = total / 10 > SCALE_SHM_RESERVE ? total / 10 : SCALE_SHM_RESERVE;
	return *free_b > keep ? *free_b - keep : 0;
}

static int fail(struct point *p, const char *what, int rc)
{
	snprintf(p->note, sizeof(p->note), "failed: %s: %s", what,
		 brk_strerror(rc));
	fprintf(stderr, "scale: %s\n", p->note);
	return rc;
}

/* Create @n breakers (timed) and the lease breakers. */
static int create_records(brk_segment *seg, char (*names)[NAME_W], uint32_t n,
			  struct point *p)
{
	char name[BRK_NAME_MAX + 1];
	struct brk_config cfg;
	brk_breaker *b;
	uint64_t t0 = bench_now_ns();
	uint32_t i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = brk_breaker_get(seg, names[i], NULL, &b);
		if (rc)
			return fail(p, names[i], rc);
	}
	p->create_s = (double)(bench_now_ns() - t0) / 1e9;
	p->create_rate = p->create_s > 0 ? n / p->create_s : 0;
	brk_config_init(&cfg);
	cfg.max_concurrent = SCALE_HOLDER_LEASES;
	for (i = 0; i < SCALE_LEASE_BREAKERS; i++) {
		scale_lease_name(name, sizeof(name), (int)i);
		rc = brk_breaker_get(seg, name, &cfg, &b);
		if (rc)
			return fail(p, name, rc);
	}
	return 0;
}

/* brk_breaker_get of names this process already got: the handle cache. */
static int cached_lookups(brk_segment *seg, char (*names)[NAME_W], uint32_t n,
			  const struct opts *o, struct point *p)
{
	double v[BENCH_MAX_RUNS];
	uint32_t *idx = malloc(o->cached_ops * sizeof(*idx));
	brk_breaker *b;
	uint64_t j, t0;
	int r, rc = 0;

	if (!idx)
		return fail(p, "cached lookup", -ENOMEM);
	for (j = 0; j < o->cached_ops; j++)
		idx[j] = (uint32_t)(rnd() % n);
	for (r = 0; r < o->runs && rc == 0; r++) {
		t0 = bench_now_ns();
		for (j = 0; j < o->cached_ops && rc == 0; j++)
			rc = brk_breaker_get(seg, names[idx[j]], NULL, &b);
		v[r] = (double)(bench_now_ns() - t0) / (double)o->cached_ops;
	}
	if (rc == 0)
		p->cached_ns = bench_median(v, o->runs);
	/* the same over 8 of those names, the working set of a worker that
	 * calls a few upstreams: the lookup's own cost, not memory's */
	for (r = 0; r < o->runs && rc == 0; r++) {
		t0 = bench_now_ns();
		for (j = 0; j < o->cached_ops && rc == 0; j++)
			rc = brk_breaker_get(seg, names[idx[j & 7u]], NULL, &b);
		v[r] = (double)(bench_now_ns() - t0) / (double)o->cached_ops;
	}
	free(idx);
	if (rc)
		return fail(p, "cached lookup", rc);
	p->hot_ns = bench_median(v, o->runs);
	return 0;
}

/* brk_breaker_find on a new handle: every call misses the handle's cache
 * and probes the shm index (and caches the handle it makes). Each run
 * takes the next names of a random permutation, on its own handle. */
static int fresh_lookups(char (*names)[NAME_W], uint32_t n,
			 const struct opts *o, struct point *p)
{
	uint64_t m = o->fresh_ops < n ? o->fresh_ops : n, j, t0;
	uint32_t *perm = malloc((size_t)n * sizeof(*perm)), i;
	double v[BENCH_MAX_RUNS];
	brk_segment *seg;
	brk_breaker *b;
	int r, rc = 0;

	if (!perm)
		return fail(p, "fresh lookup", -ENOMEM);
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--) {
		uint32_t k = (uint32_t)(rnd() % (i + 1)), t = perm[i];
		perm[i] = perm[k];
		perm[k] = t;
	}
	for (r = 0; r < o->runs && rc == 0; r++) {
		rc = bench_attach(G.shm, BRK_ATTACH_NOCREATE, 0, &seg);
		if (rc)
			break;
		t0 = bench_now_ns();
		for (j = 0; j < m && rc == 0; j++)
			rc = brk_breaker_find(seg, names[perm[(r * m + j) % n]], &b);
		v[r] = (double)(bench_now_ns() - t0) / (double)m;
		brk_detach(seg);
	}
	free(perm);
	if (rc)
		return fail(p, "fresh lookup", rc);
	p->fresh_ns = bench_median(v, o->runs);
	return 0;
}

/* breakerd idle, then with the holders' leases, then the reclaim. */
static int daemon_part(brk_segment *seg, const struct opts *o, struct point *p)
{
	struct brk_segment_info si;
	struct scale_holders h;
	double v[BENCH_MAX_RUNS];
	pid_t pid;
	int rc, st, r;

	rc = scale_daemon_start(o->breakerd, G.shm, seg, 60000, &pid);
	if (rc) {
		snprintf(p->note, sizeof(p->note), "breakerd %.120s: %s",
			 o->breakerd, rc == -ENOENT ? "not built" : brk_strerror(rc));
		fprintf(stderr, "scale: %s\n", p->note);
		return rc;
	}
	brk_segment_info(seg, &si);
	p->interval_ms = (double)si.daemon_interval_ms;
	p->cpu_idle = scale_cpu_pct(pid, o->cpu_window_ms);
	rc = scale_holders_start(G.shm, &h);
	if (rc == 0) {
		p->cpu_leases = scale_cpu_pct(pid, o->cpu_window_ms);
		/* one holder killed per run: 1,000 leases, then 990 ...; at
		 * a random phase of the interval (right after the previous
		 * reclaim every kill would land just after a scan) */
		for (r = 0; r < o->runs && rc == 0; r++) {
			uint64_t ms = rnd() % (si.daemon_interval_ms + 1);
			struct timespec ts = { (time_t)(ms / 1000),
					       (long)(ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
			rc = scale_reclaim_latency(&h, r, seg,
						   10 * si.daemon_interval_ms + 5000,
						   &v[r]);
		}
		if (rc == 0) {
			p->reclaim_ms = bench_median(v, o->runs);
			p->reclaim_max_ms = v[0];
			for (r = 1; r < o->runs; r++)
				if (v[r] > p->reclaim_max_ms)
					p->reclaim_max_ms = v[r];
		}
	}
	scale_holders_stop(&h);
	st = scale_daemon_stop(pid);
	if (rc)
		return fail(p, "lease holders / reclaim", rc);
	if (st != 0) {
		snprintf(p->note, sizeof(p->note), "breakerd exited with %d", st);
		return -ECHILD;
	}
	return 0;
}

static int measure(uint32_t n, char (*names)[NAME_W], const struct opts *o,
		   struct point *p)
{
	brk_segment *seg;
	int c, rc;

	brk_segment_unlink(G.shm);
	rc = bench_attach(G.shm, 0, n + SCALE_EXTRA, &seg);
	if (rc)
		return fail(p, "creating the segment", rc);
	rc = create_records(seg, names, n, p);
	if (rc == 0)
		rc = cached_lookups(seg, names, n, o, p);
	if (rc == 0)
		rc = fresh_lookups(names, n, o, p);
	for (c = 0; rc == 0 && c < scale_bctl_ncmds && c < SCALE_MAX_BCTL; c++)
		scale_bctl_run(o->bctl, G.shm, &scale_bctl_cmds[c], o->runs,
			       o->bctl_budget_ms, &p->bctl[c]);
	if (rc == 0)
		rc = daemon_part(seg, o, p);
	brk_detach(seg);
	brk_segment_unlink(G.shm);
	return rc;
}

/* ---- the table ---------------------------------------------------------- */

static void cell(const struct point *p, double v, const char *fmt)
{
	char buf[32];

	if (!p->measured)
		snprintf(buf, sizeof(buf), "skipped");
	else if (v < 0)
		snprintf(buf, sizeof(buf), "failed");
	else
		snprintf(buf, sizeof(buf), fmt, v);
	printf(" %12s", buf);
}

#define ROW(label, field, fmt)                                             \
	do {                                                               \
		printf("%-46s", label);                                    \
		for (i = 0; i < ncols; i++)                                \
			cell(&pt[i], pt[i].field, fmt);                    \
		putchar('\n');                                             \
	} while (0)

static void bctl_cell(const struct point *p, int c, int what)
{
	const struct scale_bctl_result *r = &p->bctl[c];

	if (!p->measured) {
		printf(" %12s", "skipped");
		return;
	}
	if (r->state != 1) {
		printf(" %12s", r->state < 0 ? "failed" : "-");
		return;
	}
	if (what == 0)
		printf(" %12.1f", r->first_ms);
	else if (what == 1)
		printf(" %12.1f", r->total_ms);
	else if (what == 2)
		printf(" %12llu", (unsigned long long)r->lines);
	else
		printf(" %12llu", (unsigned long long)r->series);
}

static void print_table(const struct point *pt, int ncols)
{
	char label[96];
	int i, c, w;

	printf("\n== scale (records of N; medians of the runs)\n%-46s", "N records");
	for (i = 0; i < ncols; i++)
		printf(" %12s", size_label[i]);
	putchar('\n');
	ROW("create: records/s", create_rate, "%.0f");
	ROW("create: all N (s)", create_s, "%.3f");
	ROW("lookup: get, cached, random of N (ns/op)", cached_ns, "%.1f");
	ROW("lookup: get, cached, 8 hot names (ns/op)", hot_ns, "%.1f");
	ROW("lookup: breaker_find, fresh/index (ns/op)", fresh_ns, "%.1f");
	ROW("breakerd CPU idle (% of a core)", cpu_idle, "%.2f");
	ROW("breakerd CPU, 1,000 leases/100 procs (%)", cpu_leases, "%.2f");
	ROW("reclaim latency, 1,000 leases (ms)", reclaim_ms, "%.1f");
	ROW("  the slowest of the kills (ms)", reclaim_max_ms, "%.1f");
	ROW("  breakerd interval (ms)", interval_ms, "%.0f");
	for (c = 0; c < scale_bctl_ncmds && c < SCALE_MAX_BCTL; c++) {
		/* Prometheus output: series; anything else: lines */
		static const char *const what[] = { "first line (ms)",
						    "total (ms)", "lines",
						    "series" };
		int metrics = strcmp(scale_bctl_cmds[c].args[0], "metrics") == 0;
		for (w = 0; w < 3; w++) {
			snprintf(label, sizeof(label), "%s: %s",
				 scale_bctl_cmds[c].label,
				 what[w == 2 && metrics ? 3 : w]);
			printf("%-46s", label);
			for (i = 0; i < ncols; i++)
				bctl_cell(&pt[i], c, w == 2 && metrics ? 3 : w);
			putchar('\n');
		}
	}
	for (i = 0; i < ncols; i++) {
		if (pt[i].note[0])
			printf("%s: %s\n", size_label[i], pt[i].note);
		for (c = 0; c < scale_bctl_ncmds && c < SCALE_MAX_BCTL; c++)
			if (pt[i].measured && pt[i].bctl[c].note[0])
				printf("%s: %s: %s\n", size_label[i],
				       scale_bctl_cmds[c].label,
				       pt[i].bctl[c].note);
	}
	printf("first line: fork/exec to the first byte on the pipe; lines:"
	       " all output lines; series: lines not starting with '#'\n");
}

static void print_kinds(const struct scale_geometry *g,
			const struct scale_kind_cost *cost)
{
	int k;

	printf("\n== bytes per record by kind\n");
	printf("%-30s %14s %14s\n", "kind", "bytes/record", "record alone");
	for (k = 0; k < SCALE_KINDS; k++)
		printf("%-30s %14.0f %14.0f\n", cost[k].label, cost[k].bytes,
		       cost[k].record_bytes);
	printf("bytes/record = %s (%.1f B/record);\n"
	       "plus %.0f KB per segment (header, event ring); a segment costs"
	       " %.0f B per record of capacity\n",
	       g->method, g->index_per_rec, g->fixed / 1024, g->per_capacity);
}

/* ---- the goals ---------------------------------------------------------- */

/* 1 met, 0 not (printed either way). @col: the column the goal is at. */
static int goal_at(const struct point *pt, int ncols, int col,
		   const char *what, double v, double target, const char *unit)
{
	if (col >= ncols)
		return bench_goal_skipped(what, "skipped: --max below this N");
	if (!pt[col].measured)
		return bench_goal_skipped(what, pt[col].note[0]
						 ? pt[col].note : "skipped");
	return bench_goal_unit(what, v, target, unit, 0);
}

static int goals(const struct point *pt, int ncols,
		 const struct scale_kind_cost *cost, int runs)
{
	const struct point *top = &pt[TOP < ncols ? TOP : 0];
	char what[160];
	int met = 0, total = 0, list = -1, c;

	for (c = 0; c < scale_bctl_ncmds; c++)
		if (strcmp(scale_bctl_cmds[c].label, "bctl list") == 0)
			list = c;
	printf("\n== goals (%d runs each%s; the machine may be shared: noisy)\n",
	       runs, runs < 5 ? ", FEWER THAN 5: indicative only" : "");
	total++;
	met += bench_goal_unit("<= 512 B per breaker without a bulkhead, index"
			       " included", cost[SCALE_BREAKER].bytes,
			       GOAL_BYTES, " B", 0);
	total++;
	met += goal_at(pt, ncols, TOP, "breakerd idle at 10^6 records <= 1 % of"
		       " a core", top->cpu_idle, GOAL_IDLE_PCT, " %");
	total++;
	snprintf(what, sizeof(what), "reclaim latency (slowest kill) with 1,000 leases at 10^6"
		 " records <= interval (%.0f ms) + 50 ms",
		 top->interval_ms > 0 ? top->interval_ms : 100.0);
	met += goal_at(pt, ncols, TOP, what, top->reclaim_max_ms,
		       top->interval_ms + GOAL_RECLAIM_SLACK, " ms");
	total++;
	met += goal_at(pt, ncols, TOP, "cached lookup (8 hot names) at 10^6 records <= 100 ns",
		       top->hot_ns, GOAL_CACHED_NS, " ns");
	total++;
	met += goal_at(pt, ncols, TOP, "cached lookup (random of 10^6 names) <= 100 ns",
		       top->cached_ns, GOAL_CACHED_NS, " ns");
	total++;
	met += goal_at(pt, ncols, TOP, "fresh lookup at 10^6 records <= 2 µs",
		       top->fresh_ns, GOAL_FRESH_NS, " ns");
	total++;
	met += goal_at(pt, ncols, TOP, "creating 10^6 records <= 5 s",
		       top->create_s, GOAL_CREATE_S, " s");
	total++;
	if (list < 0)
		met += bench_goal_skipped("bctl list first line at 10^6 <= 50 ms",
					  "no bctl list row");
	else if (TOP < ncols && pt[TOP].measured && pt[TOP].bctl[list].state != 1)
		met += bench_goal_skipped("bctl list first line at 10^6 <= 50 ms",
					  pt[TOP].bctl[list].note);
	else
		met += goal_at(pt, ncols, TOP, "bctl list first line at 10^6"
			       " records <= 50 ms", top->bctl[list].first_ms,
			       GOAL_LIST_FIRST_MS, " ms");
	printf("goals met: %d of %d\n", met, total);
	return met == total;
}

/* ---- main ----------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: scale [--max N] [--quick] [--runs N] [--bctl PATH]"
		" [--breakerd PATH]\n"
		"  --max N    largest N to measure (default 1000000; sizes"
		" 1000, 100000, 1000000)\n"
		"  --quick    1 run, short CPU windows (a smoke run: figures"
		" are not goals)\n"
		"Normally run by bench/scale.sh BUILD_DIR.\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "max", required_argument, NULL, 'm' },
		{ "quick", no_argument, NULL, 'q' },
		{ "runs", required_argument, NULL, 'r' },
		{ "bctl", required_argument, NULL, 'b' },
		{ "breakerd", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int ch, runs = 0;

	memset(o, 0, sizeof(*o));
	o->max = sizes[TOP];
	bench_sibling_path("tools/bctl", o->bctl, sizeof(o->bctl));
	bench_sibling_path("daemon/breakerd", o->breakerd, sizeof(o->breakerd));
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'm':
			if (brk_parse_uint(optarg, 10, 1, BRK_MAX_CAPACITY - SCALE_EXTRA, &v)) {
				fprintf(stderr, "scale: --max: 1 to %u\n",
					BRK_MAX_CAPACITY - SCALE_EXTRA);
				return 2;
			}
			o->max = (uint32_t)v;
			break;
		case 'q':
			o->quick = 1;
			break;
		case 'r':
			if (brk_parse_uint(optarg, 10, 1, BENCH_MAX_RUNS, &v)) {
				fprintf(stderr, "scale: --runs: 1 to %d\n",
					BENCH_MAX_RUNS);
				return 2;
			}
			runs = (int)v;
			break;
		case 'b':
			snprintf(o->bctl, sizeof(o->bctl), "%s", optarg);
			break;
		case 'd':
			snprintf(o->breakerd, sizeof(o->breakerd), "%s", optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	o->runs = runs ? runs : o->quick ? 1 : 5;
	o->cpu_window_ms = o->quick ? 500 : 5000;
	o->cached_ops = o->quick ? 20000 : 200000;
	o->fresh_ops = o->quick ? 2000 : 20000;
	o->bctl_budget_ms = o->quick ? 0 : 20000;
	return 0;
}

int main(int argc, char **argv)
{
	struct scale_kind_cost cost[SCALE_KINDS];
	struct point pt[NSIZES];
	struct scale_geometry g;
	char (*names)[NAME_W];
	uint64_t free_b, usable, need, t0 = bench_now_ns();
	struct opts o;
	char why[256];
	int i, ncols = 0, failed = 0, rc;
	uint32_t j;

	rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	G.pid = getpid();
	snprintf(G.shm, sizeof(G.shm), "/breakerd-scale-%d", (int)G.pid);
	snprintf(G.probe, sizeof(G.probe), "/breakerd-scale-%d-kinds", (int)G.pid);
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal);

	printf("bench/scale: %d runs per figure (median); CPU windows of %llu ms;"
	       " %ld CPUs online, load average %.2f at start.\n"
	       "Records are breakers named scale/NNNNNNN.example, plus %u bulkheads"
	       " of %u for the lease holders; lookups over random names.\n"
	       "Reclaim: one lease holder SIGKILLed per run, at a random phase of"
	       " breakerd's interval (1,000 leases held before the first, 10"
	       " fewer before each next); the goal takes the slowest.\n",
	       o.runs, (unsigned long long)o.cpu_window_ms,
	       sysconf(_SC_NPROCESSORS_ONLN), bench_loadavg(),
	       SCALE_LEASE_BREAKERS, SCALE_HOLDER_LEASES);
	if (scale_kinds(G.probe, &g, cost, why, sizeof(why)) != 0) {
		fprintf(stderr, "scale: bytes per record: %s\n", why);
		return 1;
	}
	print_kinds(&g, cost);

	for (i = 0; i < NSIZES && sizes[i] <= o.max; i++)
		ncols++;
	if (ncols == 0) {
		fprintf(stderr, "scale: --max %u is below the smallest N (%u)\n",
			o.max, sizes[0]);
		return 2;
	}
	names = malloc((size_t)sizes[ncols - 1] * NAME_W);
	if (!names)
		return 1;
	for (j = 0; j < sizes[ncols - 1]; j++)
		record_name(names[j], j);
	memset(pt, 0, sizeof(pt));
	for (i = 0; i < ncols; i++) {
		need = scale_segment_bytes(&g, sizes[i] + SCALE_EXTRA);
		usable = shm_usable(&free_b);
		if (need > usable) {
			snprintf(pt[i].note, sizeof(pt[i].note),
				 "skipped: needs %.0f MB, /dev/shm has %.0f MB"
				 " (free, of which this benchmark uses at most"
				 " %.0f MB)", need / MB, free_b / MB, usable / MB);
			continue;
		}
		fprintf(stderr, "scale: N = %u (segment of %.0f MB) ...\n",
			sizes[i], need / MB);
		pt[i].measured = 1;
		pt[i].create_s = pt[i].create_rate = pt[i].cached_ns = pt[i].hot_ns = -1;
		pt[i].fresh_ns = pt[i].cpu_idle = pt[i].cpu_leases = -1;
		pt[i].reclaim_ms = pt[i].reclaim_max_ms = pt[i].interval_ms = -1;
		if (measure(sizes[i], names, &o, &pt[i]) != 0)
			failed = 1;
	}
	free(names);
	print_table(pt, ncols);
	rc = goals(pt, ncols, cost, o.runs);
	printf("total time: %.1f s; load average %.2f at the end (above 0.5:"
	       " other work shared the CPUs, expect noise)\n",
	       (double)(bench_now_ns() - t0) / 1e9, bench_loadavg());
	return failed ? 1 : rc ? 0 : 3;
}
