/*
 * demo.c - breakerd-demo: what one shared breaker saves a dead upstream.
 *
 * Starts a loopback HTTP upstream (upstream.py) that is up, then down
 * (503), then up again, and runs the same fleet of forked workers against
 * it twice with the same schedule:
 *   A  without breakerd: every worker calls and retries on its own;
 *   B  with one breaker shared by all workers, in a fresh segment
 *      /breakerd-demo-<pid> that is unlinked at the end.
 * Then prints how many requests reached the upstream while it was down,
 * the breaker's transitions, and how soon each run noticed the recovery.
 *
 * Exit: 0; 1 if the upstream, the segment or a worker failed; 2 usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <curl/curl.h>

#include "demo_api.h"

/* For the signal handler: what to clean up if we are interrupted. */
static volatile pid_t g_upstream_pid;
static volatile sig_atomic_t g_shm_live;
static char g_shm[64];

static void on_signal(int sig)
{
	if (g_upstream_pid > 0)
		kill(g_upstream_pid, SIGTERM);
	if (g_shm_live)
		shm_unlink(g_shm);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* One run: start the upstream's schedule, run the fleet, read /stats. */
static int run_once(const struct demo_opts *o, const struct upstream *up,
		    const struct breaker_target *bt, struct run_result *res)
{
	int rc;

	res->with_breaker = bt != NULL;
	rc = control_start(up, &res->sched);
	if (rc)
		return rc;
	res->sched.end_ns = res->sched.recovered_ns + o->after_ms * 1000000u;
	rc = workers_run(o, &res->sched, up, bt, res);
	if (rc)
		fprintf(stderr, "breakerd-demo: could not start every worker\n");
	if (res->bad_workers)
		fprintf(stderr, "breakerd-demo: %u worker(s) failed\n",
			res->bad_workers);
	if (control_stats(up, &res->seen) && !rc)
		rc = -EIO;
	return rc ? rc : (res->bad_workers ? -ECHILD : 0);
}

/* Run B: a fresh segment holding one breaker, gone again at the end. */
static int run_with_breaker(const struct demo_opts *o,
			    const struct upstream *up, struct run_result *res)
{
	struct brk_config cfg;
	struct breaker_target bt = {
		.shm_name = g_shm, .name = DEMO_BREAKER_NAME, .cfg = &cfg,
	};
	brk_segment *seg = NULL;
	int rc;

	demo_breaker_config(&cfg);
	brk_segment_unlink(g_shm); /* a leftover of a killed demo, same pid */
	g_shm_live = 1;
	rc = breaker_segment_open(g_shm, &seg);
	if (rc == 0) {
		rc = run_once(o, up, &bt, res);
		breaker_collect(seg, res);
		brk_detach(seg);
	}
	brk_segment_unlink(g_shm);
	g_shm_live = 0;
	return rc;
}

static void report(const struct demo_opts *o, const struct run_result *a,
		   const struct run_result *b)
{
	if (o->json) {
		report_json(o, g_shm, a, b);
		return;
	}
	report_table(a, b);
	report_timeline(b);
	report_compare(a, b);
}

/* Run B needs a working breaker: drop the operator's kill-switch. */
static void clear_kill_switch(void)
{
#ifdef BRK_DISABLED_ENV
	if (getenv(BRK_DISABLED_ENV)) {
		fprintf(stderr, "breakerd-demo: ignoring %s for the demo's own"
			" segment\n", BRK_DISABLED_ENV);
		unsetenv(BRK_DISABLED_ENV);
	}
#endif
}

int main(int argc, char **argv)
{
	static struct run_result a, b; /* large: event buffers */
	struct demo_opts o;
	struct upstream up = { .pid = 0 };
	int rc = demo_parse_opts(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : 2;
	snprintf(g_shm, sizeof(g_shm), "/breakerd-demo-%d", (int)getpid());
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "breakerd-demo: libcurl failed to initialise\n");
		return 1;
	}
	install_signals();
	clear_kill_switch();
	rc = upstream_start(&o, &up);
	if (rc)
		goto out;
	g_upstream_pid = up.pid;
	if (!o.json)
		report_header(&o, &up, g_shm);
	report_run_start(&o, "A, without breakerd");
	rc = run_once(&o, &up, NULL, &a);
	if (rc == 0) {
		report_run_start(&o, "B, with breakerd");
		rc = run_with_breaker(&o, &up, &b);
	}
	if (rc == 0)
		report(&o, &a, &b);
out:
	g_upstream_pid = 0;
	upstream_stop(&up);
	curl_global_cleanup();
	return rc ? 1 : 0;
}
