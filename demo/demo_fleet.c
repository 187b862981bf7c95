/*
 * demo_fleet.c - fork the worker processes of one run, wait for every one of
 * them, and add up their figures from the MAP_SHARED page.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo_api.h"

static void add_stats(struct worker_stats *sum, const struct worker_stats *w)
{
	sum->calls += w->calls;
	sum->attempts += w->attempts;
	sum->retries += w->retries;
	sum->successes += w->successes;
	sum->failures += w->failures;
	sum->refused += w->refused;
	sum->stale += w->stale;
	sum->errors += w->errors;
	sum->done += w->done;
	if (w->first_ok_ns &&
	    (!sum->first_ok_ns || w->first_ok_ns < sum->first_ok_ns))
		sum->first_ok_ns = w->first_ok_ns;
}

/* Fork up to @n workers; returns how many were started. */
static unsigned spawn(const struct demo_opts *o, const struct schedule *s,
		      const struct upstream *up,
		      const struct breaker_target *bt,
		      struct worker_stats *page, pid_t *pids, unsigned n)
{
	unsigned i;

	fflush(NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("breakerd-demo: fork");
			break;
		}
		if (pids[i] == 0)
			_exit(worker_main(o, s, up, bt, i, &page[i]) ? 1 : 0);
	}
	return i;
}

/* Reap @n children; returns how many did not exit with status 0. */
static unsigned reap(const pid_t *pids, unsigned n)
{
	unsigned i, bad = 0;
	int status;

	for (i = 0; i < n; i++) {
		while (waitpid(pids[i], &status, 0) < 0)
			if (errno != EINTR) {
				status = -1;
				break;
			}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (WIFSIGNALED(status))
				fprintf(stderr, "breakerd-demo: worker %d killed"
					" by signal %d\n", (int)pids[i],
					WTERMSIG(status));
			bad++;
		}
	}
	return bad;
}

/**
 * workers_run - run @o->workers forked workers over schedule @s, against
 * the breaker @bt (NULL: none), wait for all of them and sum their
 * figures into @res. Returns 0, or a negative errno.
 */
int workers_run(const struct demo_opts *o, const struct schedule *s,
		const struct upstream *up, const struct breaker_target *bt,
		struct run_result *res)
{
	size_t len = sizeof(struct worker_stats) * o->workers;
	pid_t pids[DEMO_MAX_WORKERS];
	struct worker_stats *page;
	unsigned started, i;

	page = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return -errno;
	memset(page, 0, len);
	started = spawn(o, s, up, bt, page, pids, o->workers);
	res->bad_workers = reap(pids, started) + (o->workers - started);
	memset(&res->total, 0, sizeof(res->total));
	for (i = 0; i < started; i++)
		add_stats(&res->total, &page[i]);
	res->first_ok_ns = res->total.first_ok_ns;
	munmap(page, len);
	return started == o->workers ? 0 : -EAGAIN;
}
