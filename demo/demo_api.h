/*
 * demo_api.h - breakerd-demo: N forked workers call a loopback HTTP upstream
 * that goes down and comes back, once on their own and once through one
 * shared breaker; the figures show how much load the dead upstream took.
 *
 * Internal to demo/; the library is used only through breaker.h.
 */
#ifndef BREAKERD_DEMO_H
#define BREAKERD_DEMO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "breaker.h"

/* Defaults: one run is up + down + after, two runs in all (~20 s). */
#define DEMO_DEFAULT_WORKERS 8u
#define DEMO_MAX_WORKERS 256u
#define DEMO_DEFAULT_UP_MS 2000u
#define DEMO_DEFAULT_DOWN_MS 5000u
#define DEMO_DEFAULT_AFTER_MS 3000u
#define DEMO_MAX_PHASE_MS 600000u
#define DEMO_DEFAULT_INTERVAL_MS 50u  /* one call per worker every 50 ms */
#define DEMO_DEFAULT_RETRIES 2u       /* naive client retries per call */
#define DEMO_MAX_RETRIES 10u
#define DEMO_CONNECT_TIMEOUT_MS 500L
#define DEMO_TOTAL_TIMEOUT_MS 1000L
#define DEMO_UPSTREAM_START_MS 5000   /* the upstream must print its port */
#define DEMO_WATCHDOG_SLACK_S 15u     /* a child past its run + this dies */

/* The shared breaker of run B. */
#define DEMO_BREAKER_NAME "demo/upstream"
#define DEMO_FAILURE_THRESHOLD 5u
#define DEMO_OPEN_MS 500u
#define DEMO_MAX_OPEN_MS 2000u
#define DEMO_HALF_OPEN_PROBES 1u
#define DEMO_SUCCESS_THRESHOLD 1u
#define DEMO_PROBE_TIMEOUT_MS 2000u

/* Set by meson to the source tree's copy; the fallback is for running
 * from the repository root after the tree moved. */
#ifndef DEMO_UPSTREAM_PY
#define DEMO_UPSTREAM_PY "demo/upstream.py"
#endif
#define DEMO_UPSTREAM_PY_REL "demo/upstream.py"

#define DEMO_MAX_EVENTS 256u

struct demo_opts {
	unsigned workers;
	uint64_t up_ms, down_ms, after_ms;
	uint64_t interval_ms;
	unsigned retries;
	const char *upstream_py;
	int upstream_given;    /* --upstream was passed: no fallback */
	const char *python;
	int json;
};

/* The python upstream process. */
struct upstream {
	pid_t pid;
	int port;
	char url[64];          /* http://127.0.0.1:PORT */
};

/* One run's time line, CLOCK_MONOTONIC ns, as the upstream reports it. */
struct schedule {
	uint64_t start_ns, down_ns, recovered_ns, end_ns;
};

/* Requests the upstream counted, by phase of the run. */
struct upstream_counts {
	uint64_t up, down, recovered;
};

/* One worker's figures, in a MAP_SHARED page written only by that worker. */
struct worker_stats {
	uint64_t calls;        /* paced units of work */
	uint64_t attempts;     /* HTTP requests sent (first tries + retries) */
	uint64_t retries;
	uint64_t successes;    /* attempts answered 2xx (or a healthy error) */
	uint64_t failures;     /* attempts that failed */
	uint64_t refused;      /* attempts the breaker refused (not sent) */
	uint64_t stale;        /* releases the breaker did not count */
	uint64_t errors;       /* library errors other than refusals */
	uint64_t first_ok_ns;  /* first success at/after recovery; 0: none */
	int32_t done;          /* 1 once the worker finished its loop */
};

struct run_result {
	int with_breaker;
	struct schedule sched;
	struct upstream_counts seen;
	struct worker_stats total;
	uint64_t first_ok_ns;          /* earliest over the workers; 0: none */
	unsigned bad_workers;          /* children that did not exit 0 */
	struct brk_event events[DEMO_MAX_EVENTS];
	size_t n_events;
	uint64_t events_lost;
	unsigned opened, closed;
	int have_info;
	struct brk_info info;
};

/* What one HTTP attempt came to. */
struct reply {
	long http_code;        /* 0 if no response */
	int outcome;           /* enum brk_outcome */
	int reason;            /* enum brk_reason, for BRK_FAILURE */
	int64_t retry_after_ms;
};

/* Where the shared breaker lives, for the workers of run B. */
struct breaker_target {
	const char *shm_name;
	const char *name;
	const struct brk_config *cfg;
};

static inline uint64_t demo_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* options.c */
int demo_parse_opts(int argc, char **argv, struct demo_opts *o);

/* upstream_proc.c */
int upstream_start(struct demo_opts *o, struct upstream *up);
void upstream_stop(struct upstream *up);

/* control.c: POST /start and GET /stats, from the parent only */
int control_start(const struct upstream *up, struct schedule *s);
int control_stats(const struct upstream *up, struct upstream_counts *c);

/* request.c: one reused easy handle per worker */
void *request_new(const char *url);
void request_do(void *req, struct reply *r);
void request_free(void *req);
void classify_reply(long http_code, int curl_rc, int64_t retry_after_s,
		    struct reply *r);

/* worker.c: the body of one forked worker */
int worker_main(const struct demo_opts *o, const struct schedule *s,
		const struct upstream *up, const struct breaker_target *bt,
		unsigned idx, struct worker_stats *st);

/* demo_fleet.c: fork, reap and add up the workers of one run */
int workers_run(const struct demo_opts *o, const struct schedule *s,
		const struct upstream *up, const struct breaker_target *bt,
		struct run_result *res);

/* breaker_run.c: the segment of run B */
void demo_breaker_config(struct brk_config *cfg);
int breaker_segment_open(const char *shm_name, brk_segment **seg);
void breaker_collect(brk_segment *seg, struct run_result *res);

/* demo_report.c: text for people */
double demo_rel_s(const struct run_result *r, uint64_t ns);
double demo_recovery_s(const struct run_result *r);
void report_header(const struct demo_opts *o, const struct upstream *up,
		   const char *shm_name);
void report_run_start(const struct demo_opts *o, const char *what);
void report_table(const struct run_result *a, const struct run_result *b);
void report_timeline(const struct run_result *b);
void report_compare(const struct run_result *a, const struct run_result *b);

/* report_json.c: one JSON object, for scripts and tests */
int report_json(const struct demo_opts *o, const char *shm_name,
		const struct run_result *a, const struct run_result *b);

#endif /* BREAKERD_DEMO_H */
