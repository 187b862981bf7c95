/*
 * procs.c - run a workload in N worker processes (fork) or N threads,
 * started together.
 *
 * A MAP_SHARED anonymous page holds the start barrier and one result slot
 * per worker. Each worker initialises (attaches, looks its record up),
 * runs its warm-up, then increments `ready` and spins (yielding: this box
 * has 2 cores and up to 8 workers) until the parent sets `go`. It then
 * reads CLOCK_MONOTONIC, runs its ops, reads the clock again and stores
 * both stamps and its counts in its slot. Per-worker ns/op is its own
 * elapsed / ops (time descheduled included: with 8 workers on 2 cores a
 * worker runs about a quarter of the time); the aggregate rate is all
 * ops over the span from the first start to the last end.
 *
 * Nothing is pinned: the scheduler places the workers.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct slot {
	uint64_t t0, t1;
	struct bench_counts counts;
	int32_t rc;
	int32_t done;
} __attribute__((aligned(128))); /* one slot per cache line pair */

struct page {
	uint32_t ready;
	uint32_t go;
	struct slot slot[BENCH_MAX_WORKERS];
};

static struct page *pg;

struct thread_arg {
	const struct bench_workload *w;
	int idx, rec;
	pthread_t tid;
};

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_procs_init(void)
{
	void *p = mmap(NULL, sizeof(struct page), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	pg = p;
	return 0;
}

/* The body of one worker; returns 0 or a negative code (also in its slot). */
static int worker(const struct bench_workload *w, int idx, int rec)
{
	struct slot *s = &pg->slot[idx];
	struct bench_counts c;
	void *local = NULL;
	uint64_t t0, t1;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = w->init(w->arg, idx, rec, &local);
	if (rc) {
		__atomic_store_n(&s->rc, rc, __ATOMIC_RELAXED);
		__atomic_add_fetch(&pg->ready, 1, __ATOMIC_RELEASE);
		return rc;
	}
	if (w->warmup)
		w->run(local, w->warmup, &c);
	__atomic_add_fetch(&pg->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&pg->go, __ATOMIC_ACQUIRE))
		sched_yield();
	t0 = bench_now_ns();
	w->run(local, w->ops, &c);
	t1 = bench_now_ns();
	if (w->fini)
		w->fini(local);
	s->t0 = t0;
	s->t1 = t1;
	s->counts = c;
	s->rc = 0;
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return 0;
}

static void *thread_main(void *p)
{
	struct thread_arg *ta = p;

	worker(ta->w, ta->idx, ta->rec);
	return NULL;
}

static void collect(const struct bench_workload *w, int n,
		    struct bench_sample *out)
{
	double per[BENCH_MAX_WORKERS];
	uint64_t first = UINT64_MAX, last = 0;
	int i;

	memset(&out->counts, 0, sizeof(out->counts));
	out->ok = 1;
	for (i = 0; i < n; i++) {
		const struct slot *s = &pg->slot[i];
		if (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) || s->rc != 0) {
			out->ok = 0;
			per[i] = 0;
			continue;
		}
		per[i] = (double)(s->t1 - s->t0) / (double)(w->ops ? w->ops : 1);
		if (s->t0 < first)
			first = s->t0;
		if (s->t1 > last)
			last = s->t1;
		out->counts.ok += s->counts.ok;
		out->counts.failed += s->counts.failed;
		out->counts.aux += s->counts.aux;
		if (s->counts.last_err)
			out->counts.last_err = s->counts.last_err;
	}
	out->ns_per_op = bench_median(per, n);
	out->ops_per_sec = last > first
				   ? (double)w->ops * n * 1e9 / (double)(last - first)
				   : 0;
}

static void wait_ready(int n)
{
	struct timespec ts = { 0, 100000 };

	while (__atomic_load_n(&pg->ready, __ATOMIC_ACQUIRE) < (uint32_t)n)
		nanosleep(&ts, NULL);
}

static int run_threads(const struct bench_workload *w, int n, int distinct)
{
	struct thread_arg ta[BENCH_MAX_WORKERS];
	int i, started = 0, rc = 0;

	for (i = 0; i < n; i++) {
		ta[i].w = w;
		ta[i].idx = i;
		ta[i].rec = distinct ? i : 0;
		if (pthread_create(&ta[i].tid, NULL, thread_main, &ta[i]) != 0) {
			rc = -EAGAIN;
			break;
		}
		started++;
	}
	if (rc == 0)
		wait_ready(n);
	__atomic_store_n(&pg->go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++)
		pthread_join(ta[i].tid, NULL);
	return rc;
}

static int run_procs(const struct bench_workload *w, int n, int distinct)
{
	pid_t pids[BENCH_MAX_WORKERS], parent = getpid();
	int i, started = 0, rc = 0, st;

	fflush(NULL);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			rc = -errno;
			break;
		}
		if (pid == 0) {
			/* A worker must not outlive the benchmark (it would spin
			 * on the barrier forever if the parent were killed). */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
			    getppid() != parent)
				_exit(1);
			_exit(worker(w, i, distinct ? i : 0) == 0 ? 0 : 1);
		}
		pids[started++] = pid;
	}
	if (rc == 0)
		wait_ready(n);
	__atomic_store_n(&pg->go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++) {
		if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			rc = rc ? rc : -ECHILD;
	}
	return rc;
}

/**
 * bench_procs_run - one run of @w with @nworkers workers.
 * @distinct: give worker i record i (else every worker uses record 0).
 * @out:      the run's per-worker median ns/op, aggregate ops/s, counts.
 * Returns 0, or a negative code if a worker failed (out->ok is then 0).
 */
int bench_procs_run(const struct bench_workload *w, int nworkers,
		    int distinct, struct bench_sample *out)
{
	int rc;

	if (!pg || nworkers < 1 || nworkers > BENCH_MAX_WORKERS)
		return -EINVAL;
	memset(pg, 0, sizeof(*pg));
	rc = w->threads ? run_threads(w, nworkers, distinct)
			: run_procs(w, nworkers, distinct);
	collect(w, nworkers, out);
	if (rc == 0 && !out->ok)
		rc = -ECHILD;
	return rc;
}
