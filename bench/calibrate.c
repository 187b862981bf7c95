/*
 * calibrate.c - two reference rows, measured in the same run as the rest
 * (1 process only), to read the others against this machine:
 *   clock_gettime(CLOCK_MONOTONIC)  (vDSO, no syscall): acquire and
 *                                   release each read the clock once;
 *   a bare syscall (getppid)        what the SysV pair pays twice and a
 *                                   loopback round trip pays several
 *                                   times over.
 * The shm notes' goals were derived on a VM where a bare syscall cost
 * about 1 µs; where it costs less, syscall-bound baselines get closer.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static int init_none(void *arg, int worker, int rec, void **local)
{
	(void)arg;
	(void)worker;
	(void)rec;
	*local = NULL;
	return 0;
}

static void run_clock(void *p, uint64_t n, struct bench_counts *c)
{
	struct timespec ts;
	uint64_t i;

	(void)p;
	for (i = 0; i < n; i++) {
		if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0) {
			c->ok++;
		} else {
			c->failed++;
			c->last_err = -errno;
		}
	}
}

static void run_syscall(void *p, uint64_t n, struct bench_counts *c)
{
	uint64_t i;

	(void)p;
	for (i = 0; i < n; i++) {
		if (syscall(SYS_getppid) > 0)
			c->ok++;
		else
			c->failed++;
	}
}

void bench_ref_clock(struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "ref: clock_gettime(MONOTONIC)";
	w->single_only = 1;
	w->ops = 200000;
	w->warmup = 10000;
	w->init = init_none;
	w->run = run_clock;
}

void bench_ref_syscall(struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "ref: bare syscall (getppid)";
	w->single_only = 1;
	w->ops = 50000;
	w->warmup = 1000;
	w->init = init_none;
	w->run = run_syscall;
}
