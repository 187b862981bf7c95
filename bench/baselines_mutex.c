/*
 * baselines_mutex.c - the minimal breaker (minibreaker.h) behind
 *   (1) an in-process pthread mutex: workers are threads of this process
 *       (a mutex in private memory cannot be shared by processes; threads
 *       are what such a design scales with);
 *   (2) a PTHREAD_PROCESS_SHARED | PTHREAD_MUTEX_ROBUST mutex in a POSIX
 *       shm object: workers are forked processes, the design the shm
 *       notes compare against (Envoy's hot-restart lock).
 * One record per cache-line pair, BENCH_MAX_WORKERS of each.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "minibreaker.h"

struct bench_mutex {
	struct minibreaker *inproc; /* BENCH_MAX_WORKERS, private memory */
	struct minibreaker *shared; /* BENCH_MAX_WORKERS, MAP_SHARED shm */
	size_t shared_len;
};

struct mlocal {
	struct minibreaker *b;
};

static int init_mutexes(struct minibreaker *b, int robust)
{
	pthread_mutexattr_t a;
	int i, rc;

	rc = pthread_mutexattr_init(&a);
	if (rc)
		return -rc;
	if (robust) {
		rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		if (!rc)
			rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	}
	for (i = 0; !rc && i < BENCH_MAX_WORKERS; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		mb_init_state(&b[i]);
		rc = pthread_mutex_init(&b[i].mu, &a);
	}
	pthread_mutexattr_destroy(&a);
	return -rc;
}

/**
 * bench_mutex_setup - allocate both baselines' records. The shm object
 * @shm_name is unlinked as soon as it is mapped (forked workers inherit
 * the mapping), so nothing is left behind.
 */
int bench_mutex_setup(const char *shm_name, struct bench_mutex **out)
{
	struct bench_mutex *m = calloc(1, sizeof(*m));
	void *p;
	int fd, rc;

	if (!m)
		return -ENOMEM;
	m->shared_len = sizeof(struct minibreaker) * BENCH_MAX_WORKERS;
	if (posix_memalign(&p, 128, m->shared_len)) {
		free(m);
		return -ENOMEM;
	}
	m->inproc = p;
	fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	shm_unlink(shm_name);
	if (ftruncate(fd, (off_t)m->shared_len) != 0) {
		rc = -errno;
		close(fd);
		goto fail;
	}
	p = mmap(NULL, m->shared_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		rc = -errno;
		goto fail;
	}
	m->shared = p;
	rc = init_mutexes(m->inproc, 0);
	if (!rc)
		rc = init_mutexes(m->shared, 1);
	if (rc)
		goto fail;
	*out = m;
	return 0;
fail:
	fprintf(stderr, "breakerd-bench: mutex baselines: %s\n", strerror(-rc));
	bench_mutex_teardown(m);
	return rc;
}

void bench_mutex_teardown(struct bench_mutex *m)
{
	if (!m)
		return;
	if (m->shared)
		munmap(m->shared, m->shared_len);
	free(m->inproc);
	free(m);
}

static int init_inproc(void *arg, int worker, int rec, void **local)
{
	struct bench_mutex *m = arg;
	struct mlocal *l = malloc(sizeof(*l));

	(void)worker;
	if (!l)
		return -ENOMEM;
	l->b = &m->inproc[rec];
	*local = l;
	return 0;
}

static int init_robust(void *arg, int worker, int rec, void **local)
{
	struct bench_mutex *m = arg;
	struct mlocal *l = malloc(sizeof(*l));

	(void)worker;
	if (!l)
		return -ENOMEM;
	l->b = &m->shared[rec];
	*local = l;
	return 0;
}

static void run_mb(void *p, uint64_t n, struct bench_counts *c)
{
	struct mlocal *l = p;
	uint32_t gen;
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (mb_acquire(l->b, &gen) != 0) {
			c->failed++;
			c->last_err = -EBUSY; /* refused */
			continue;
		}
		c->ok++;
		if (mb_release(l->b, gen, 1) == 0)
			c->aux++;
	}
}

void bench_mutex_inproc(struct bench_mutex *m, struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "mutex breaker (in-process, threads)";
	w->arg = m;
	w->threads = 1;
	w->ops = 200000;
	w->warmup = 10000;
	w->init = init_inproc;
	w->run = run_mb;
	w->fini = free;
}

void bench_mutex_robust(struct bench_mutex *m, struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "robust pshared mutex breaker (shm)";
	w->arg = m;
	w->ops = 200000;
	w->warmup = 10000;
	w->init = init_robust;
	w->run = run_mb;
	w->fini = free;
}
