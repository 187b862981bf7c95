/*
 * bctl_outcome.h - what `bctl exec` reports to the breaker, and the status
 * it exits with, from how the command ended. Pure functions.
 *
 * Verdict, first match wins:
 *   killed by --timeout              -> failure (timeout)
 *   signs in its output (bctl_scan.h) -> the library's verdict for an
 *                                       unknown status (brk_http_verdict():
 *                                       429 -> failure (rate_limited),
 *                                       503/529 -> failure (overloaded),
 *                                       only a Retry-After / "try again"
 *                                       -> failure (rate_limited))
 *   our caller's signal was forwarded and the command did not exit 0
 *                                    -> cancelled (no verdict)
 *   exit 0                           -> success
 *   exit code in --healthy-exit      -> healthy_error
 *   exit code in --ignore-exit       -> rejected_request
 *   other exit code, or a signal     -> failure (other)
 * Any Retry-After found is passed along with every verdict.
 */
#ifndef BCTL_OUTCOME_H
#define BCTL_OUTCOME_H

#include <stdbool.h>
#include <stdint.h>

#include "bctl_scan.h"

struct exec_facts {
	int status;        /* waitpid() status */
	bool timed_out;
	bool interrupted;
	const struct scan_result *scan;
	const uint8_t *healthy; /* code sets (cli_util.h), may be NULL */
	const uint8_t *ignore;
};

struct exec_verdict {
	int outcome;            /* enum brk_outcome */
	int reason;             /* enum brk_reason */
	int64_t retry_after_ms; /* 0: none */
};

void bctl_verdict(const struct exec_facts *f, struct exec_verdict *v);

/** bctl_exit_status - 124 after a timeout, else the command's exit code,
 * or 128 + signal. */
int bctl_exit_status(const struct exec_facts *f);

#endif /* BCTL_OUTCOME_H */
