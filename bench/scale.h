/*
 * scale.h - declarations shared by bench/scale's files (issue 10).
 *
 *   scale.c         options, the sizes N, the table and the goal lines;
 *   scale_kinds.c   bytes per record by kind, and the segment size a
 *                   capacity needs (to skip an N that does not fit);
 *   scale_daemon.c  the real breakerd (start, CPU %, stop), the lease
 *                   holders (forked processes holding bulkhead permits)
 *                   and the dead-owner reclaim latency;
 *   scale_bctl.c    the bctl commands, one table row each: time to the
 *                   first byte, total time, lines and series.
 * Every segment is named by scale.c (with our pid) and unlinked by it,
 * also on SIGINT/SIGTERM; every child process gets PR_SET_PDEATHSIG.
 */
#ifndef BENCH_SCALE_H
#define BENCH_SCALE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "breaker.h"

/* ---- scale_kinds.c ----------------------------------------------------- */

enum scale_kind {
	SCALE_BREAKER,     /* defaults: no bulkhead */
	SCALE_BULKHEAD10,  /* max_concurrent 10 */
	SCALE_BUCKET,
	SCALE_BUDGET,
	SCALE_KINDS
};

struct scale_kind_cost {
	const char *label;
	double bytes;        /* per record, its share of the index included */
	double record_bytes; /* the record alone (0: not known) */
};

struct scale_geometry {
	double per_capacity;   /* segment bytes per record of capacity */
	double fixed;          /* bytes per segment: header, event ring */
	double index_per_rec;  /* index (and lease map) bytes per record */
	const char *method;    /* how the kinds' bytes were found */
};

/* Measure on two small segments named @shm (created and unlinked here).
 * Returns 0 or a negative code (a reason in @why). */
int scale_kinds(const char *shm, struct scale_geometry *g,
		struct scale_kind_cost cost[SCALE_KINDS], char *why,
		size_t why_len);
/* Upper bound of the segment bytes for @capacity records. */
uint64_t scale_segment_bytes(const struct scale_geometry *g, uint32_t capacity);

/* ---- scale_daemon.c ---------------------------------------------------- */

#define SCALE_HOLDERS 100          /* lease-holding processes */
#define SCALE_HOLDER_LEASES 10     /* permits each, on different breakers */
#define SCALE_LEASE_BREAKERS 100   /* bulkheads of SCALE_HOLDER_LEASES */

/* "scale/lease/%03d": the bulkhead breaker @i of the lease holders. */
void scale_lease_name(char *buf, size_t len, int i);

/* Fork/exec @path --shm @shm (default interval); wait (up to @wait_ms)
 * until its heartbeat is in the segment. Returns 0 or a negative code. */
int scale_daemon_start(const char *path, const char *shm, brk_segment *seg,
		       uint64_t wait_ms, pid_t *pid);
/* SIGTERM and wait. Returns its exit status (0 expected) or -errno. */
int scale_daemon_stop(pid_t pid);
/* CPU % of one core used by @pid over @window_ms (-1: cannot read). */
double scale_cpu_pct(pid_t pid, uint64_t window_ms);

struct scale_holders {
	int n;                      /* started and holding */
	pid_t pid[SCALE_HOLDERS];
	int release_fd;             /* closing it ends every holder */
};
/* Fork SCALE_HOLDERS processes, each attaches @shm and holds one permit
 * on SCALE_HOLDER_LEASES different lease breakers until release_fd is
 * closed. Returns 0 once all hold theirs, or a negative code. */
int scale_holders_start(const char *shm, struct scale_holders *h);
/* SIGKILL holder @victim, reap it, poll every 1 ms until its permits are
 * back (or @timeout_ms). *ms = kill to back. Returns 0, -ETIMEDOUT, ... */
int scale_reclaim_latency(struct scale_holders *h, int victim,
			  brk_segment *seg, uint64_t timeout_ms, double *ms);
/* Close release_fd and reap every holder. */
void scale_holders_stop(struct scale_holders *h);
/* Async-signal-safe: SIGKILL every child this module started. */
void scale_children_kill(void);

/* ---- scale_bctl.c ------------------------------------------------------ */

/* One bctl command of the table: its arguments after "--shm NAME". */
struct scale_bctl_cmd {
	const char *label;
	const char *args[6];   /* NULL-terminated */
	const char *needs;     /* run only if `bctl help` contains this */
};
extern const struct scale_bctl_cmd scale_bctl_cmds[];
extern const int scale_bctl_ncmds;

struct scale_bctl_result {
	int state;            /* 1 ran, 0 not run (note), -1 failed (note) */
	int runs;
	double first_ms;      /* fork/exec to the first byte, median */
	double total_ms;      /* fork/exec to exit, median */
	uint64_t lines;
	uint64_t series;      /* lines not starting with '#' */
	char note[96];
};
/* 1 if @bctl's help mentions @needle (NULL: 1), 0 if not, -1 failed. */
int scale_bctl_has(const char *bctl, const char *needle);
/* Run @cmd up to @runs times (fewer once @budget_ms is spent). */
void scale_bctl_run(const char *bctl, const char *shm,
		    const struct scale_bctl_cmd *cmd, int runs,
		    uint64_t budget_ms, struct scale_bctl_result *out);

#endif /* BENCH_SCALE_H */
