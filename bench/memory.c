/*
 * memory.c - what a record costs in the segment, and what inspecting a
 * large table costs: create a segment of BENCH_BIG_RECORDS records, fill
 * it with breakers, then time (each @runs times) a fresh brk_attach(), a
 * full brk_info_at() scan (what `bctl list` does) and, if the bctl
 * binary was built, `bctl --shm NAME list >/dev/null` run by fork/exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "breaker.h"
#include "bench.h"

#define BENCH_BIG_RECORDS 10000u

static void stats3(double *v, int n, double out[3])
{
	int i;

	out[1] = out[2] = v[0];
	for (i = 1; i < n; i++) {
		if (v[i] < out[1])
			out[1] = v[i];
		if (v[i] > out[2])
			out[2] = v[i];
	}
	out[0] = bench_median(v, n);
}

/* fork/exec @path --shm @shm list, stdout to /dev/null. Returns its
 * wait status, or -errno. */
static int run_bctl(const char *path, const char *shm)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
		execl(path, path, "--shm", shm, "list", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return st;
}

static int fill_big(brk_segment *seg, struct bench_memory *m)
{
	char name[BRK_NAME_MAX + 1];
	brk_breaker *b;
	uint64_t t0 = bench_now_ns();
	uint32_t i;
	int rc;

	for (i = 0; i < BENCH_BIG_RECORDS; i++) {
		snprintf(name, sizeof(name), "bench/m/%05u", i);
		rc = brk_breaker_get(seg, name, NULL, &b);
		if (rc) {
			snprintf(m->note, sizeof(m->note), "creating %s: %s",
				 name, brk_strerror(rc));
			return rc;
		}
	}
	m->create_ms = (double)(bench_now_ns() - t0) / 1e6;
	return 0;
}

/* One fresh attach + full scan. */
static int attach_scan(const char *big, struct bench_memory *m,
		       double *attach_ms, double *scan_ms)
{
	struct brk_info *info = malloc(sizeof(*info));
	brk_segment *seg;
	uint64_t t0, t1, t2;
	uint32_t seen = 0;
	int rc;

	if (!info)
		return -ENOMEM;
	t0 = bench_now_ns();
	rc = bench_attach(big, BRK_ATTACH_NOCREATE, 0, &seg);
	t1 = bench_now_ns();
	if (rc) {
		free(info);
		return rc;
	}
	{ /* the name index in order, as bctl list walks it */
		uint64_t cur = 0;
		int r;

		while ((r = brk_record_next(seg, &cur, info)) != -ENOENT)
			seen += r == 0;
	}
	t2 = bench_now_ns();
	brk_detach(seg);
	free(info);
	*attach_ms = (double)(t1 - t0) / 1e6;
	*scan_ms = (double)(t2 - t1) / 1e6;
	m->big_records = seen;
	return 0;
}

/**
 * bench_memory - fill @out (see bench.h). @shm_name is the benchmark's
 * segment (for bytes per record); @big_shm_name is created here with
 * BENCH_BIG_RECORDS capacity and unlinked before returning.
 * Returns 0 or a negative code (the reason in out->note).
 */
int bench_memory(const char *shm_name, const char *big_shm_name,
		 const char *bctl_path, int runs, struct bench_memory *out)
{
	struct brk_segment_info si;
	double a[BENCH_MAX_RUNS], s[BENCH_MAX_RUNS], b[BENCH_MAX_RUNS];
	brk_segment *seg;
	int i, rc, st;

	memset(out, 0, sizeof(*out));
	if (runs < 1)
		runs = 1;
	if (runs > BENCH_MAX_RUNS)
		runs = BENCH_MAX_RUNS;
	rc = bench_attach(shm_name, BRK_ATTACH_NOCREATE, 0, &seg);
	if (rc)
		return rc;
	brk_segment_info(seg, &si);
	out->total_size = si.total_size;
	out->capacity = si.capacity;
	out->record_size = si.record_size;
	brk_detach(seg);

	rc = bench_attach(big_shm_name, 0, BENCH_BIG_RECORDS, &seg);
	if (rc) {
		snprintf(out->note, sizeof(out->note), "cannot create %s: %s",
			 big_shm_name, brk_strerror(rc));
		return rc;
	}
	brk_segment_info(seg, &si);
	out->big_total_size = si.total_size;
	out->big_capacity = si.capacity;
	rc = fill_big(seg, out);
	brk_detach(seg);
	if (rc)
		goto out;
	for (i = 0; i < runs; i++) {
		rc = attach_scan(big_shm_name, out, &a[i], &s[i]);
		if (rc)
			goto out;
	}
	stats3(a, runs, out->attach_ms);
	stats3(s, runs, out->scan_ms);

	snprintf(out->bctl_path, sizeof(out->bctl_path), "%s",
		 bctl_path ? bctl_path : "");
	if (!bctl_path || access(bctl_path, X_OK) != 0) {
		out->bctl_found = 0;
		goto out;
	}
	out->bctl_found = 1;
	for (i = 0; i < runs; i++) {
		uint64_t t0 = bench_now_ns();
		st = run_bctl(bctl_path, big_shm_name);
		b[i] = (double)(bench_now_ns() - t0) / 1e6;
		if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			out->bctl_found = -1;
			snprintf(out->note, sizeof(out->note),
				 "bctl list failed (status %d)",
				 st < 0 ? st : WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			goto out;
		}
	}
	stats3(b, runs, out->bctl_ms);
out:
	brk_segment_unlink(big_shm_name);
	return rc;
}
