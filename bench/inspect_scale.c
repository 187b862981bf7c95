/*
 * inspect_scale.c - breakerd-bench-inspect: lookups and inspection as the
 * record count grows (issue 10, scope items 4 and 5).
 *
 *   breakerd-bench-inspect [--sizes N,N,...] [--bctl PATH] [--ops N]
 *
 * For each size N (default 1000,10000,100000) it creates a segment of
 * capacity N in /dev/shm (skipped, and said so, if /dev/shm has less than
 * twice the segment's size free), fills it with N breakers named
 * "t<i%10>/s<i%100>/h<i>" (every 100th tripped), and measures:
 *   create      ns per brk_breaker_get() that creates
 *   cached      ns per brk_breaker_get() of a name already in the
 *               process's handle cache: names in a random order over all
 *               N (memory-bound: the cache slot, the handle and the
 *               record are each a likely cache miss at 10^5), and 8 hot
 *               names (the CPU cost: hash, name check, probe)
 *   fresh       ns per brk_breaker_find() through a newly attached
 *               segment handle (every call misses its cache: it probes the
 *               shm name index, allocates the handle, caches it: what the
 *               main benchmark calls "fresh, index")
 *   handle B    heap bytes per cached handle (mallinfo2 around the fresh
 *               lookups: the handle and its share of the cache tables)
 *   list        `bctl list` first line and total wall time (ms), read
 *               through a pipe
 *   metrics     `bctl metrics` wall time (ms) and series (sample lines)
 *               for each cardinality option
 * One line per measure, "size  measure  value  unit", for bench/run.sh or
 * a table. Times are wall clock on whatever else the machine is doing:
 * run it on a quiet machine, several times.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"

#ifndef BENCH_BCTL
#define BENCH_BCTL "bctl"
#endif

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void name_of(char *buf, size_t len, unsigned i)
{
	snprintf(buf, len, "t%u/s%u/h%u", i % 10, i % 100, i);
}

static int attach(const char *shm, uint32_t cap, uint32_t flags,
		  brk_segment **out)
{
	struct brk_attach_opts o;

	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.capacity = cap;
	o.flags = flags;
	return brk_attach(&o, out);
}

/* xorshift: the random order of the cached lookups */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void row(unsigned n, const char *what, double v, const char *unit)
{
	printf("%8u  %-34s %12.1f  %s\n", n, what, v, unit);
	fflush(stdout);
}

/* Run bctl ARGS on @shm, read its stdout through a pipe: ms to the first
 * line and to the end, and the lines that are samples (not "#..."). */
static int run_bctl(const char *bctl, const char *shm, char *const *args,
		    double *first_ms, double *total_ms, unsigned long *samples)
{
	char *argv[16];
	int p[2], status, at_line_start = 1, is_sample = 0, i, n = 0;
	char buf[65536];
	uint64_t t0, t_first = 0;
	pid_t pid;
	ssize_t r;

	argv[n++] = (char *)bctl;
	argv[n++] = (char *)"--shm";
	argv[n++] = (char *)shm;
	for (i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe(p) < 0)
		return -errno;
	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execvp(bctl, argv);
		_exit(127);
	}
	close(p[1]);
	*samples = 0;
	while ((r = read(p[0], buf, sizeof buf)) > 0) {
		for (i = 0; i < r; i++) {
			if (at_line_start)
				is_sample = buf[i] != '#';
			at_line_start = buf[i] == '\n';
			if (at_line_start) {
				if (!t_first)
					t_first = now_ns();
				*samples += (unsigned long)is_sample;
			}
		}
	}
	close(p[0]);
	waitpid(pid, &status, 0);
	*first_ms = (double)(t_first - t0) / 1e6;
	*total_ms = (double)(now_ns() - t0) / 1e6;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static void bench_inspect(const char *bctl, const char *shm, unsigned n)
{
	static char *list[] = { "list", NULL };
	static char *list_json[] = { "list", "--json", NULL };
	static char *list_open[] = { "list", "--state", "open", NULL };
	static char *m_all[] = { "metrics", NULL };
	static char *m_nc[] = { "metrics", "--not-closed", NULL };
	static char *m_cw[] = { "metrics", "--changed-within", "1h", NULL };
	static char *m_l1[] = { "metrics", "--by-level", "1", NULL };
	static char *m_l2[] = { "metrics", "--by-level", "2", NULL };
	static char *m_px[] = { "metrics", "--prefix", "t3/s33/", NULL };
	static struct { const char *label; char **args; int is_list; } runs[] = {
		{ "list", list, 1 },
		{ "list --json", list_json, 1 },
		{ "list --state open", list_open, 1 },
		{ "metrics", m_all, 0 },
		{ "metrics --not-closed", m_nc, 0 },
		{ "metrics --changed-within 1h", m_cw, 0 },
		{ "metrics --by-level 1", m_l1, 0 },
		{ "metrics --by-level 2", m_l2, 0 },
		{ "metrics --prefix t3/s33/", m_px, 0 },
	};
	char label[96];
	size_t k;

	for (k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		double first, total;
		unsigned long samples;

		if (run_bctl(bctl, shm, runs[k].args, &first, &total, &samples)) {
			fprintf(stderr, "bench: %s %s failed\n", bctl, runs[k].label);
			continue;
		}
		if (runs[k].is_list) {
			snprintf(label, sizeof label, "%s: first line", runs[k].label);
			row(n, label, first, "ms");
			snprintf(label, sizeof label, "%s: total", runs[k].label);
			row(n, label, total, "ms");
		} else {
			snprintf(label, sizeof label, "%s: time", runs[k].label);
			row(n, label, total, "ms");
			snprintf(label, sizeof label, "%s: series", runs[k].label);
			row(n, label, (double)samples, "series");
		}
	}
}

static int bench_size(const char *bctl, unsigned n, uint64_t ops)
{
	char shm[64], name[64];
	brk_segment *seg, *fresh;
	struct brk_segment_info si;
	struct statvfs fs;
	brk_breaker *b;
	uint64_t t0, i, seed = 0x9e3779b97f4a7c15ULL;
	unsigned m, j;
	struct mallinfo2 a, z;
	int rc;

	/* today's layout: 4 KiB a record; twice that must be free */
	if (statvfs("/dev/shm", &fs) == 0 &&
	    (uint64_t)fs.f_bavail * fs.f_frsize < 2ull * n * 4096u + (64u << 20)) {
		printf("%8u  skipped: /dev/shm has %llu MB free\n", n,
		       (unsigned long long)((uint64_t)fs.f_bavail * fs.f_frsize >> 20));
		return 0;
	}
	snprintf(shm, sizeof shm, "/brkbench-inspect-%d-%u", (int)getpid(), n);
	brk_segment_unlink(shm);
	rc = attach(shm, n, 0, &seg);
	if (rc) {
		fprintf(stderr, "bench: attach %s: %s\n", shm, brk_strerror(rc));
		return 1;
	}
	brk_segment_info(seg, &si);
	row(n, "segment size", (double)si.total_size / (1 << 20), "MB");
	t0 = now_ns();
	for (j = 0; j < n; j++) {
		name_of(name, sizeof name, j);
		rc = brk_breaker_get(seg, name, NULL, &b);
		if (rc == 0 && j % 100 == 0)
			rc = brk_trip(b, 3600 * 1000);
		if (rc) {
			fprintf(stderr, "bench: create %s: %s\n", name, brk_strerror(rc));
			goto out;
		}
	}
	row(n, "create: breaker_get (new name)", (double)(now_ns() - t0) / n, "ns/op");

	/* cached: the names in a random order (precomputed) */
	{
		unsigned *order = malloc(sizeof(*order) * 65536);
		char (*names)[64] = malloc(64u * 65536);

		if (!order || !names)
			goto out;
		for (j = 0; j < 65536; j++) {
			order[j] = (unsigned)(rnd(&seed) % n);
			name_of(names[j], 64, order[j]);
		}
		t0 = now_ns();
		for (i = 0; i < ops; i++)
			if (brk_breaker_get(seg, names[i & 65535], NULL, &b))
				break;
		row(n, "cached: breaker_get (random names)",
		    (double)(now_ns() - t0) / (double)ops, "ns/op");
		/* the same few names: the cost without cache misses */
		t0 = now_ns();
		for (i = 0; i < ops; i++)
			if (brk_breaker_get(seg, names[i & 7], NULL, &b))
				break;
		row(n, "cached: breaker_get (8 hot names)",
		    (double)(now_ns() - t0) / (double)ops, "ns/op");
		free(order);
		free(names);
	}

	/* fresh: a new segment handle per round, every find a cache miss */
	m = n < 50000 ? n : 50000;
	rc = attach(shm, 0, BRK_ATTACH_NOCREATE, &fresh);
	if (rc)
		goto out;
	a = mallinfo2();
	t0 = now_ns();
	for (j = 0; j < m; j++) {
		name_of(name, sizeof name, (unsigned)(((uint64_t)j * 2654435761u) % n));
		if (brk_breaker_find(fresh, name, &b))
			break;
	}
	row(n, "fresh: breaker_find (index)", (double)(now_ns() - t0) / m, "ns/op");
	z = mallinfo2();
	row(n, "heap per cached handle", (double)(z.uordblks - a.uordblks) / m, "bytes");
	brk_detach(fresh);

	bench_inspect(bctl, shm, n);
out:
	brk_detach(seg);
	brk_segment_unlink(shm);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *bctl = BENCH_BCTL, *sizes = "1000,10000,100000";
	uint64_t ops = 2000000;
	char *p, *copy;
	int i, bad = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
			sizes = argv[++i];
		else if (strcmp(argv[i], "--bctl") == 0 && i + 1 < argc)
			bctl = argv[++i];
		else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc)
			ops = strtoull(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: breakerd-bench-inspect [--sizes N,N,...] "
				"[--bctl PATH] [--ops N]\n");
			return 2;
		}
	}
	printf("%8s  %-34s %12s  %s\n", "records", "measure", "value", "unit");
	copy = strdup(sizes);
	for (p = strtok(copy, ","); p; p = strtok(NULL, ",")) {
		unsigned long n = strtoul(p, NULL, 10);

		if (n < 1 || n > 1048576) {
			fprintf(stderr, "bench: size %s: 1..1048576\n", p);
			return 2;
		}
		bad |= bench_size(bctl, (unsigned)n, ops ? ops : 1);
	}
	free(copy);
	return bad;
}
