/*
 * bctl_run.h - run a command the way `bctl exec` needs it: in its own
 * process group, its stdout and stderr passed through byte for byte while
 * being scanned (bctl_scan.h), an optional timeout (SIGTERM to the group,
 * SIGKILL 2 s later), and SIGINT/SIGTERM/SIGHUP/SIGQUIT forwarded to the
 * group. No fd of ours leaks into the command; the child is always reaped.
 */
#ifndef BCTL_RUN_H
#define BCTL_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "bctl_scan.h"

#define RUN_KILL_GRACE_MS 2000u /* SIGTERM -> SIGKILL */
#define RUN_DRAIN_IDLE_MS 250u  /* after the command exits, stop reading
                                   pipes still held open by its
                                   background children once idle this long */

struct run_opts {
	char **argv;               /* the command; argv[0] is looked up in PATH */
	uint64_t timeout_ms;       /* 0: no timeout */
	const sigset_t *forward;   /* signals to forward; the caller has them
	                              blocked */
	const sigset_t *child_mask; /* the signal mask the command starts with */
};

struct run_result {
	int start_errno;     /* nonzero: not started (pipe/fork error or
	                        execvp's errno); nothing else is valid */
	bool exec_failed;    /* start_errno is execvp's */
	int status;          /* waitpid() status */
	bool timed_out;      /* the timeout fired */
	bool interrupted;    /* a forwarded signal reached the group */
	struct scan_result scan;
};

/**
 * bctl_run - run @o->argv to completion. Returns 0 when the command ran
 * (see @r), or -errno if it could not be started (@r->start_errno).
 */
int bctl_run(const struct run_opts *o, struct run_result *r);

#endif /* BCTL_RUN_H */
