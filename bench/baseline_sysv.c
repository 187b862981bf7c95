/*
 * baseline_sysv.c - a bulkhead as Shopify Semian builds it: a SysV
 * semaphore with as many units as permits, taken with semop(-1, SEM_UNDO)
 * and given back with semop(+1, SEM_UNDO) (so the kernel returns the
 * permit if the process dies). Two syscalls per call, whatever happens.
 *
 * BENCH_MAX_WORKERS private semaphore sets (IPC_PRIVATE, mode 0600) of
 * BENCH_SYSV_PERMITS units each: no worker ever blocks, so this measures
 * the syscall pair, not waiting. Removed (IPC_RMID) at teardown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>

#include "bench.h"

#define BENCH_SYSV_PERMITS 64

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

struct bench_sysv {
	int id[BENCH_MAX_WORKERS];
};

struct slocal {
	int id;
};

int bench_sysv_setup(struct bench_sysv **out)
{
	struct bench_sysv *s = calloc(1, sizeof(*s));
	union semun arg;
	int i, rc = 0;

	if (!s)
		return -ENOMEM;
	for (i = 0; i < BENCH_MAX_WORKERS; i++)
		s->id[i] = -1;
	for (i = 0; i < BENCH_MAX_WORKERS; i++) {
		s->id[i] = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
		arg.val = BENCH_SYSV_PERMITS;
		if (s->id[i] < 0 || semctl(s->id[i], 0, SETVAL, arg) != 0) {
			rc = -errno;
			fprintf(stderr, "breakerd-bench: semget: %s\n",
				strerror(errno));
			bench_sysv_teardown(s);
			return rc;
		}
	}
	*out = s;
	return 0;
}

/* Remove the sets (IPC_RMID); async-signal-safe, for the signal path. */
void bench_sysv_remove(struct bench_sysv *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < BENCH_MAX_WORKERS; i++) {
		if (s->id[i] >= 0)
			semctl(s->id[i], 0, IPC_RMID);
		s->id[i] = -1;
	}
}

void bench_sysv_teardown(struct bench_sysv *s)
{
	bench_sysv_remove(s);
	free(s);
}

static int init_sem(void *arg, int worker, int rec, void **local)
{
	struct bench_sysv *s = arg;
	struct slocal *l = malloc(sizeof(*l));

	(void)worker;
	if (!l)
		return -ENOMEM;
	l->id = s->id[rec];
	*local = l;
	return 0;
}

static void run_sem(void *p, uint64_t n, struct bench_counts *c)
{
	struct slocal *l = p;
	struct sembuf take = { 0, -1, SEM_UNDO }, give = { 0, 1, SEM_UNDO };
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (semop(l->id, &take, 1) != 0) {
			c->failed++;
			c->last_err = -errno;
			continue;
		}
		c->ok++;
		if (semop(l->id, &give, 1) == 0) {
			c->aux++;
		} else {
			c->failed++;
			c->last_err = -errno;
		}
	}
}

void bench_sysv_pair(struct bench_sysv *s, struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "SysV semop -1/+1 SEM_UNDO";
	w->arg = s;
	w->ops = 5000;
	w->warmup = 200;
	w->init = init_sem;
	w->run = run_sem;
	w->fini = free;
}
