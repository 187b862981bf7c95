/*
 * it_bucket_fair.c - 8 forked processes share one GCRA bucket (200/s,
 * burst 20) for 3 s of real time.
 *
 * Each process attaches on its own, waits at a start barrier in shared
 * memory (the parent publishes one absolute CLOCK_MONOTONIC start time
 * once all are ready; everyone sleeps until it with TIMER_ABSTIME), then
 * loops brk_bucket_take(1) until the end time, sleeping on a refusal
 * until not_before_ns plus the library's per-caller jitter below one
 * interval, brk_bucket_wake_ns() (clock_nanosleep TIMER_ABSTIME). Without
 * the jitter the run is unfair: the last winner is the first to be
 * refused again and so the first woken for the next slot (one process
 * took 367 of 619 tokens in a measured run). A grant counts if
 * the library's own clock read (returned as not_before_ns on success) is
 * before the end.
 *
 * Pass: total granted within 2% of 200 * 3 + 20 = 620, and every process
 * got at least half of its fair share (620 / 8 / 2). Exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"

#define PROCS 8
#define RATE 200.0
#define BURST 20u
#define RUN_NS 3000000000ULL
#define BUCKET "it/fair"

struct shared {
	uint64_t start_ns; /* 0 until published */
	uint64_t end_ns;
	uint32_t ready;
	uint64_t granted[PROCS];
	uint64_t denied[PROCS];
	uint64_t late[PROCS];
	int err[PROCS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int child(struct shared *sh, const char *shm, int id)
{
	struct brk_attach_opts o;
	brk_segment *seg = NULL;
	brk_bucket *k = NULL;
	uint64_t start, end, nb;
	int rc;

	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.flags = BRK_ATTACH_NOCREATE;
	rc = brk_attach(&o, &seg);
	if (rc == 0)
		rc = brk_bucket_find(seg, BUCKET, &k);
	if (rc) {
		sh->err[id] = rc;
		__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
		return 1;
	}
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while ((start = __atomic_load_n(&sh->start_ns, __ATOMIC_ACQUIRE)) == 0)
		usleep(1000);
	end = __atomic_load_n(&sh->end_ns, __ATOMIC_ACQUIRE);
	sleep_until(start);
	for (;;) {
		if (mono_ns() >= end)
			break;
		rc = brk_bucket_take(k, 1, &nb);
		if (rc == 0) {
			if (nb < end) {
				sh->granted[id]++;
			} else {
				sh->late[id]++;
				break;
			}
		} else if (rc == -BRK_ENOTOKENS) {
			sh->denied[id]++;
			nb = brk_bucket_wake_ns(k, nb);
			sleep_until(nb < end ? nb : end);
		} else {
			sh->err[id] = rc;
			break;
		}
	}
	brk_detach(seg);
	return sh->err[id] ? 1 : 0;
}

int main(void)
{
	struct shared *sh;
	struct brk_attach_opts o;
	brk_segment *seg = NULL;
	brk_bucket *k = NULL;
	struct brk_bucket_info bi;
	char shm[64];
	pid_t pids[PROCS];
	uint64_t total = 0, deadline, min_ok;
	double want = RATE * (double)RUN_NS / 1e9 + BURST;
	int i, rc, fail = 0, status;

	alarm(55); /* the meson timeout is 60 s */
	snprintf(shm, sizeof shm, "/brklim-it-fair-%ld", (long)getpid());
	brk_segment_unlink(shm);
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(sh, 0, sizeof *sh);
	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.capacity = 16;
	rc = brk_attach(&o, &seg);
	if (rc == 0)
		rc = brk_bucket_get(seg, BUCKET, RATE, BURST, &k);
	if (rc) {
		fprintf(stderr, "setup %s: %s\n", shm, brk_strerror(rc));
		brk_segment_unlink(shm);
		return 1;
	}
	for (i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			fail = 1;
			break;
		}
		if (pids[i] == 0)
			_exit(child(sh, shm, i));
	}
	/* start barrier: everyone attached, then one absolute start time */
	deadline = mono_ns() + 10000000000ULL;
	while (!fail && __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < PROCS) {
		if (mono_ns() > deadline) {
			fprintf(stderr, "children did not get ready\n");
			fail = 1;
			break;
		}
		usleep(1000);
	}
	{
		uint64_t start = mono_ns() + 100000000ULL; /* +100 ms */
		__atomic_store_n(&sh->end_ns, start + RUN_NS, __ATOMIC_RELEASE);
		__atomic_store_n(&sh->start_ns, start, __ATOMIC_RELEASE);
	}
	for (i = 0; i < PROCS; i++) {
		if (pids[i] <= 0)
			continue;
		if (waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "child %d failed: %s\n", i,
				brk_strerror(sh->err[i]));
			fail = 1;
		}
	}

	for (i = 0; i < PROCS; i++)
		total += sh->granted[i];
	min_ok = (uint64_t)(want / PROCS / 2.0);
	printf("granted %" PRIu64 " (want %.0f +-2%%), per process:", total,
	       want);
	for (i = 0; i < PROCS; i++)
		printf(" %" PRIu64 "/%" PRIu64 "d", sh->granted[i], sh->denied[i]);
	printf("\n");
	if ((double)total < want * 0.98 || (double)total > want * 1.02) {
		fprintf(stderr, "FAIL: total %" PRIu64 " outside %.1f..%.1f\n",
			total, want * 0.98, want * 1.02);
		fail = 1;
	}
	for (i = 0; i < PROCS; i++) {
		if (sh->granted[i] < min_ok) {
			fprintf(stderr, "FAIL: process %d got %" PRIu64
				" < half its fair share (%" PRIu64 ")\n", i,
				sh->granted[i], min_ok);
			fail = 1;
		}
	}
	if (brk_bucket_info(k, &bi) == 0)
		printf("bucket: taken %" PRIu64 " denied %" PRIu64
		       " tokens_taken %" PRIu64 "\n", bi.taken, bi.denied,
		       bi.tokens_taken);
	brk_detach(seg);
	brk_segment_unlink(shm);
	printf("%s\n", fail ? "FAIL" : "PASS");
	return fail;
}
