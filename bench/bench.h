/*
 * bench.h - declarations shared by the breakerd benchmark's files.
 *
 * The benchmark (breakerd-bench) measures libbreaker's hot paths against
 * baselines built into the same program, in the same run:
 *   procs.c           fork N worker processes (or N threads), start them
 *                     together on a barrier in a MAP_SHARED page, collect
 *                     each worker's time;
 *   ops_breakerd.c    the libbreaker workloads (acquire+release, bulkhead,
 *                     GCRA take, name lookups);
 *   minibreaker.h     a fair minimal breaker behind a mutex (the logic the
 *                     mutex baselines share);
 *   baselines_mutex.c that breaker behind an in-process mutex and behind a
 *                     PTHREAD_PROCESS_SHARED robust mutex in shm;
 *   baseline_sysv.c   a SysV semaphore pair with SEM_UNDO (Semian);
 *   baseline_redis.c  a Lua token bucket on redis-server over loopback,
 *                     with a minimal RESP client;
 *   memory.c          segment bytes per record, attach and scan of 10,000
 *                     records, `bctl list`;
 *   calibrate.c       reference rows: a clock read, a bare syscall;
 *   fastpath.c        --callgrind-op: one process, acquire+release only,
 *                     for callgrind (instructions) and strace (syscalls);
 *   bench_report.c    statistics, the table and the goal lines;
 *   env.c             load average, paths of the built executables;
 *   bench_main.c      options and the order of the runs.
 * bench/scale (scale*.c, scale.h) reuses procs.c's clock, bench_attach(),
 * bench_report.c's median and goal lines and env.c.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "breaker.h"

#define BENCH_MAX_WORKERS 8
#define BENCH_MAX_RUNS 32

/* Per-worker counts, added up by procs.c (warm-up included). */
struct bench_counts {
	uint64_t ok;     /* operations that did what was asked */
	uint64_t failed; /* operations that returned an error */
	uint64_t aux;    /* workload-specific (breakerd: releases counted) */
	int64_t last_err; /* the last error code returned, 0 if none */
};

/*
 * A workload: what one worker does. procs.c calls init() in the worker
 * (child process or thread) before the barrier, run() once for the
 * warm-up and once, timed, for the measured ops, then fini().
 */
struct bench_workload {
	const char *label;   /* the row's name in the table */
	void *arg;           /* workload-wide state, set up by the parent */
	int threads;         /* 1: workers are threads of this process */
	int single_only;     /* a reference row: 1 worker only */
	uint64_t ops;        /* measured ops per worker per run */
	uint64_t warmup;     /* warm-up ops per worker, not timed */
	/* @rec: the record this worker hammers (0, or its index when the
	 * configuration gives each worker its own record). */
	int (*init)(void *arg, int worker, int rec, void **local);
	void (*run)(void *local, uint64_t n, struct bench_counts *c);
	void (*fini)(void *local);
};

/* One run of one workload with P workers. */
struct bench_sample {
	double ns_per_op;    /* median over workers of elapsed / ops */
	double ops_per_sec;  /* all workers' ops / (last end - first start) */
	struct bench_counts counts; /* summed over workers */
	int ok;              /* every worker started, ran and exited 0 */
};

/* procs.c */
int bench_procs_init(void);
int bench_procs_run(const struct bench_workload *w, int nworkers,
		    int distinct, struct bench_sample *out);

/* time */
uint64_t bench_now_ns(void);

/* ops_breakerd.c: the libbreaker side. */
int bench_attach(const char *shm, uint32_t flags, uint32_t capacity,
		 brk_segment **out);
struct bench_brk;
int bench_brk_setup(const char *shm_name, struct bench_brk **out);
void bench_brk_teardown(struct bench_brk *c);
int bench_brk_have_gcra(void);
/* Workload constructors: fill @w (label, ops, hooks). */
void bench_brk_acqrel(struct bench_brk *c, struct bench_workload *w);
void bench_brk_bulkhead(struct bench_brk *c, struct bench_workload *w);
int bench_brk_gcra(struct bench_brk *c, struct bench_workload *w);
void bench_brk_get(struct bench_brk *c, struct bench_workload *w);
void bench_brk_find(struct bench_brk *c, struct bench_workload *w);
/* Counter totals over the first @nrec breaker records of a kind
 * (0: plain breakers, 1: bulkheads) for the lost-update check. */
int bench_brk_totals(struct bench_brk *c, int bulkhead, int nrec,
		     uint64_t *allowed, uint64_t *successes,
		     uint64_t *in_flight);
int bench_brk_bucket_taken(struct bench_brk *c, int nrec, uint64_t *taken);

/* baselines_mutex.c */
struct bench_mutex;
int bench_mutex_setup(const char *shm_name, struct bench_mutex **out);
void bench_mutex_teardown(struct bench_mutex *m);
void bench_mutex_inproc(struct bench_mutex *m, struct bench_workload *w);
void bench_mutex_robust(struct bench_mutex *m, struct bench_workload *w);

/* baseline_sysv.c */
struct bench_sysv;
int bench_sysv_setup(struct bench_sysv **out);
void bench_sysv_remove(struct bench_sysv *s);
void bench_sysv_teardown(struct bench_sysv *s);
void bench_sysv_pair(struct bench_sysv *s, struct bench_workload *w);

/* baseline_redis.c */
struct bench_redis;
/* Returns 0, or -errno with a one-line reason in @why. */
int bench_redis_setup(int port, struct bench_redis **out, char *why,
		      size_t why_len);
void bench_redis_teardown(struct bench_redis *r);
void bench_redis_bucket(struct bench_redis *r, struct bench_workload *w);

/* memory.c */
struct bench_memory {
	uint64_t total_size;     /* bench segment */
	uint32_t capacity, record_size;
	uint64_t big_total_size; /* the 10,000-record segment */
	uint32_t big_capacity, big_records;
	double create_ms;        /* creating the 10,000 breakers */
	double attach_ms[3];     /* median, min, max */
	double scan_ms[3];
	int bctl_found;          /* 1 ran, 0 absent, -1 failed */
	double bctl_ms[3];
	char bctl_path[512];
	char note[256];
};
int bench_memory(const char *shm_name, const char *big_shm_name,
		 const char *bctl_path, int runs, struct bench_memory *out);

/* calibrate.c: reference rows (1 worker). */
void bench_ref_clock(struct bench_workload *w);
void bench_ref_syscall(struct bench_workload *w);

/* fastpath.c */
int bench_fastpath(const char *shm_name, uint64_t ops);

/* env.c */
void bench_sibling_path(const char *rel, char *buf, size_t len);
double bench_loadavg(void);

/* bench_report.c */
struct bench_row {
	const char *label;
	int procs;
	int distinct;
	int skipped;           /* not measured: note says why */
	const char *note;
	int nruns;
	struct bench_sample runs[BENCH_MAX_RUNS];
	double ns_med, ns_min, ns_max, ops_med;
	uint64_t failed;       /* ops that returned an error, over runs */
	int64_t last_err;      /* the last such error code */
};
double bench_median(double *v, int n);
void bench_row_finish(struct bench_row *r);
void bench_print_header(const char *title);
void bench_print_row(const struct bench_row *r, const struct bench_row *base);
/* Prints "GOAL <what> met/MISSED (x.xx× vs target)"; returns 1 if met.
 * @better_is_higher: the goal is "value >= target" (else "<="). */
int bench_goal(const char *what, double value, double target,
	       int better_is_higher);
/* The same with a unit ("×", " ns", " %"): "(12.3 ns vs target <= 100 ns)". */
int bench_goal_unit(const char *what, double value, double target,
		    const char *unit, int better_is_higher);
/* "GOAL <what>: not measured (<why>)"; returns 0 (never met). */
int bench_goal_skipped(const char *what, const char *why);
void bench_print_memory(const struct bench_memory *m);

#endif /* BENCH_H */
