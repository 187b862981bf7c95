/*
 * it_events_follow.c - `bctl events --follow` in one process prints a transition
 * caused in another process within 100 ms.
 *
 *   bctl --shm S events --follow --json      (stdout on a pipe)
 *
 * Five times: a freshly forked process takes the time t0 (CLOCK_MONOTONIC,
 * system-wide) and trips the breaker through the library; this process,
 * blocked in poll() on the pipe, takes t1 when the "trip" line arrives.
 * Required: every t1 - t0 < 100 ms (bctl polls the ring every 20 ms and
 * writes each event as it reads it; stdout is a pipe, so this also checks
 * that bctl does not block-buffer). The iterations start at staggered
 * offsets so they sample different phases of bctl's poll. Then SIGTERM
 * ends bctl with status 0.
 *
 * Usage: it_events_follow BCTL_EXE
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#define ROUNDS 5
#define BOUND_MS 100
#define NAME "follow/upstream"

static const char *shm;

struct shared {
	uint64_t t0_ns;
	int trip_rc;
};

static struct shared *sh;

static int tripper(int idx, void *arg)
{
	brk_segment *seg = it_attach(shm, 0);
	brk_breaker *b = ft_breaker(seg, NAME, NULL);

	(void)idx;
	(void)arg;
	AT_STORE(&sh->t0_ns, it_now_ns());
	AT_STORE(&sh->trip_rc, brk_trip(b, 60000));
	brk_detach(seg);
	return 0;
}

/* Wait for the next line with "reason":@reason for NAME; 1 if found. */
static int await_event(struct ft_lines *r, const char *reason, int timeout_ms,
		       uint64_t *t1)
{
	uint64_t deadline = it_now_ms() + (uint64_t)timeout_ms;
	char line[1024];

	for (;;) {
		int64_t left = (int64_t)deadline - (int64_t)it_now_ms();
		int rc = ft_line(r, line, sizeof(line), left > 0 ? (int)left : 0);
		if (rc <= 0)
			return 0;
		*t1 = it_now_ns();
		if (ft_json_has(line, "reason", reason) &&
		    ft_json_has(line, "name", NAME))
			return 1;
		it_note("skipped: %s", line);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t lat_us[ROUNDS], sorted[ROUNDS], t1 = 0;
	struct ft_lines *lines = malloc(sizeof(*lines));
	brk_segment *seg;
	brk_breaker *b;
	int pfd[2], i, st, all_ok = 1;
	char *args[8];
	pid_t bctl, pid;

	it_init("it_events_follow", 60);
	if (argc < 2 || access(argv[1], X_OK) != 0)
		it_skip("needs the bctl executable as argument");
	if (!lines || pipe2(pfd, O_CLOEXEC) != 0)
		it_skip("pipe: %s", strerror(errno));
	sh = it_shared(sizeof(*sh));
	shm = it_segment(NULL);
	seg = it_attach(shm, 0);
	b = ft_breaker(seg, NAME, NULL);

	args[0] = argv[1];
	args[1] = "--shm";
	args[2] = (char *)shm;
	args[3] = "events";
	args[4] = "--follow";
	args[5] = "--json";
	args[6] = NULL;
	bctl = it_spawn(args, pfd[1], -1);
	close(pfd[1]);
	ft_lines_init(lines, pfd[0]);

	/* Synchronise: bctl is following once it printed this reset. */
	CHECK(brk_reset(b) == 0, "reset (start marker)");
	if (!CHECK(await_event(lines, "reset", 5000, &t1),
		   "bctl events --follow printed the start marker within 5 s"))
		return it_finish();

	for (i = 0; i < ROUNDS; i++) {
		it_sleep_ms(7u * (unsigned)i + 3u); /* vary the phase */
		AT_STORE(&sh->t0_ns, 0);
		pid = it_fork(tripper, i, NULL);
		if (!await_event(lines, "trip", 5000, &t1)) {
			CHECK(0, "round %d: no trip line within 5 s", i);
			all_ok = 0;
			break;
		}
		it_wait(pid, 5000, &st);
		CHECK(AT_LOAD(&sh->trip_rc) == 0, "round %d: brk_trip in pid %d", i,
		      (int)pid);
		lat_us[i] = (t1 - AT_LOAD(&sh->t0_ns)) / 1000u;
		if (!CHECK(lat_us[i] < BOUND_MS * 1000u,
			   "round %d: trip in another process printed after %llu.%03llu ms (< %d)",
			   i, (unsigned long long)lat_us[i] / 1000,
			   (unsigned long long)lat_us[i] % 1000, BOUND_MS))
			all_ok = 0;
		CHECK(brk_reset(b) == 0, "round %d: reset", i);
		CHECK(await_event(lines, "reset", 5000, &t1), "round %d: reset printed", i);
	}
	if (all_ok && i == ROUNDS) {
		memcpy(sorted, lat_us, sizeof(sorted));
		qsort(sorted, ROUNDS, sizeof(sorted[0]), cmp_u64);
		it_note("follow latency over %d rounds: min %llu us, median %llu us, max %llu us",
			ROUNDS, (unsigned long long)sorted[0],
			(unsigned long long)sorted[ROUNDS / 2],
			(unsigned long long)sorted[ROUNDS - 1]);
	}

	kill(bctl, SIGTERM);
	if (CHECK(it_wait(bctl, 3000, &st) == 0, "bctl ends within 3 s of SIGTERM"))
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "bctl events --follow exits 0 on SIGTERM (status 0x%x)", st);
	close(pfd[0]);
	free(lines);
	brk_detach(seg);
	return it_finish();
}
