/*
 * it_trip_quorum.c - trip quorum across processes: with min_distinct_processes
 * 2 and failure_threshold 5, 20 failures from one process do not open the
 * breaker; a failure from a second process (within window_ms) does.
 *
 * Also: the breaker reports distinct_failing_processes 1, then 2; the
 * transition event names the second process and the reason "threshold";
 * after a reset, one process alone cannot open it again.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "proc.h"

#define NAME "quorum/upstream"

int main(void)
{
	struct brk_config cfg;
	struct brk_info in;
	struct ft_worker *p1, *p2;
	struct brk_event ev[64];
	const char *shm;
	brk_segment *seg;
	brk_breaker *b;
	uint64_t cursor, lost;
	int n, i, opened = 0, reason = 0;
	int32_t by_pid = 0;

	it_init("it_trip_quorum", 60);
	shm = it_segment(NULL);
	seg = it_attach(shm, 0);
	brk_config_init(&cfg);
	cfg.failure_threshold = 5;
	cfg.min_distinct_processes = 2;
	cfg.window_ms = 30000; /* generous: all of this takes well under 1 s */
	cfg.open_ms = 60000;
	b = ft_breaker(seg, NAME, &cfg);
	cursor = ft_events_written(seg) + 1;
	p1 = ft_worker_start(shm, NAME, &cfg, 0);
	p2 = ft_worker_start(shm, NAME, &cfg, 0);

	ft_worker_calls(p1, 20, BRK_FAILURE, BRK_REASON_SERVER_ERROR);
	it_info(b, &in);
	CHECK(p1->admitted == 20 && p1->release_errors == 0,
	      "process 1 (pid %d): 20 failures reported", (int)p1->self_pid);
	CHECK(in.state == BRK_CLOSED,
	      "20 failures from one process do not open it (state %s)",
	      brk_state_name(in.state));
	CHECK(in.consecutive_failures == 20 && in.distinct_failing_processes == 1,
	      "consecutive_failures 20 (%" PRIu64 "), distinct_failing_processes 1 (%u)",
	      in.consecutive_failures, in.distinct_failing_processes);

	ft_worker_calls(p2, 1, BRK_FAILURE, BRK_REASON_SERVER_ERROR);
	it_info(b, &in);
	CHECK(p2->admitted == 1, "process 2 (pid %d): 1 failure reported",
	      (int)p2->self_pid);
	CHECK(in.state == BRK_OPEN, "a failure from a second process opens it (state %s)",
	      brk_state_name(in.state));
	CHECK(in.distinct_failing_processes == 2, "distinct_failing_processes 2 (%u)",
	      in.distinct_failing_processes);
	while ((n = brk_events_read(seg, &cursor, ev, 64, &lost)) > 0)
		for (i = 0; i < n; i++)
			if (ev[i].to == BRK_OPEN && ev[i].from == BRK_CLOSED) {
				opened++;
				by_pid = ev[i].pid;
				reason = ev[i].reason;
			}
	CHECK(opened == 1 && by_pid == p2->self_pid && reason == BRK_EV_THRESHOLD,
	      "one closed -> open event, by process 2, reason threshold (%d, pid %d, %s)",
	      opened, (int)by_pid, brk_event_reason_name(reason));

	/* After a reset the quorum is empty: one process is not enough. */
	CHECK(brk_reset(b) == 0, "reset");
	ft_worker_calls(p2, 10, BRK_FAILURE, BRK_REASON_TIMEOUT);
	it_info(b, &in);
	CHECK(in.state == BRK_CLOSED && in.distinct_failing_processes == 1,
	      "after reset, 10 failures from process 2 alone: closed (%s), 1 process (%u)",
	      brk_state_name(in.state), in.distinct_failing_processes);
	ft_worker_calls(p1, 1, BRK_FAILURE, BRK_REASON_TIMEOUT);
	it_info(b, &in);
	CHECK(in.state == BRK_OPEN, "then one from process 1 opens it (%s)",
	      brk_state_name(in.state));

	ft_worker_stop(p1);
	ft_worker_stop(p2);
	brk_detach(seg);
	return it_finish();
}
