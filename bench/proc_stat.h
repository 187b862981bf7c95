/*
 * proc_stat.h - a process's parent and CPU times from /proc/PID/stat, for
 * the benchmarks that report another process's CPU (scale, reclaim-scale,
 * adaptive_bench).
 */
#ifndef BENCH_PROC_STAT_H
#define BENCH_PROC_STAT_H

#include <stdint.h>
#include <sys/types.h>

/* Fields 4 and 14-17 of proc(5)'s /proc/PID/stat; times in clock ticks
 * (sysconf(_SC_CLK_TCK)). cutime/cstime: waited-for children's. */
struct bench_proc_stat {
	pid_t ppid;
	uint64_t utime, stime, cutime, cstime;
};

/* Reads @pid's stat into *@out. 0; -errno when it cannot be read (-ENOENT:
 * the process is gone); -EPROTO when the line does not parse. */
int bench_proc_stat(pid_t pid, struct bench_proc_stat *out);

#endif
