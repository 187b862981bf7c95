/*
 * breaker_run.c - the shared breaker of run B: its settings, a fresh
 * segment to hold it, and what it recorded (events and counters).
 */
#include <stdio.h>
#include <string.h>

#include "demo_api.h"

/**
 * demo_breaker_config - the demo's settings: open after 5 consecutive
 * failures, cool 500 ms at first, doubling per failed probe up to 2 s,
 * one probe across all workers. Short periods so that the price of the
 * breaker (recovery noticed up to one cooling period late) stays small.
 */
void demo_breaker_config(struct brk_config *cfg)
{
	brk_config_init(cfg);
	cfg->failure_threshold = DEMO_FAILURE_THRESHOLD;
	cfg->open_ms = DEMO_OPEN_MS;
	cfg->max_open_ms = DEMO_MAX_OPEN_MS;
	cfg->half_open_probes = DEMO_HALF_OPEN_PROBES;
	cfg->success_threshold = DEMO_SUCCESS_THRESHOLD;
	cfg->probe_timeout_ms = DEMO_PROBE_TIMEOUT_MS;
}

/**
 * breaker_segment_open - create the run's own segment @shm_name (it must
 * not exist yet) and the breaker in it. Returns 0, or a negative code
 * (message printed).
 */
int breaker_segment_open(const char *shm_name, brk_segment **seg)
{
	struct brk_attach_opts ao;
	struct brk_config cfg;
	brk_breaker *b;
	char err[256] = "";
	int rc;

	brk_attach_opts_init(&ao);
	ao.shm_name = shm_name;
	ao.capacity = 16;
	ao.errbuf = err;
	ao.errbuf_len = sizeof(err);
	demo_breaker_config(&cfg);
	rc = brk_attach(&ao, seg);
	if (rc) {
		fprintf(stderr, "breakerd-demo: %s: %s %s\n", shm_name,
			brk_strerror(rc), err);
		return rc;
	}
	rc = brk_breaker_get(*seg, DEMO_BREAKER_NAME, &cfg, &b);
	if (rc) {
		fprintf(stderr, "breakerd-demo: %s: breaker %s: %s\n",
			shm_name, DEMO_BREAKER_NAME, brk_strerror(rc));
		brk_detach(*seg);
		*seg = NULL;
	}
	return rc;
}

static void count_transition(struct run_result *res,
			     const struct brk_event *ev)
{
	if (ev->from == ev->to)
		return;
	if (ev->to == BRK_OPEN)
		res->opened++;
	else if (ev->to == BRK_CLOSED)
		res->closed++;
}

/**
 * breaker_collect - read the breaker's events (oldest first) and a
 * snapshot of its counters into @res.
 */
void breaker_collect(brk_segment *seg, struct run_result *res)
{
	struct brk_event buf[32];
	uint64_t cursor = 1, lost = 0;
	brk_breaker *b;
	int n, i;

	res->n_events = 0;
	res->events_lost = 0;
	for (;;) {
		lost = 0;
		n = brk_events_read(seg, &cursor, buf, 32, &lost);
		res->events_lost += lost;
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (strcmp(buf[i].name, DEMO_BREAKER_NAME) != 0)
				continue;
			count_transition(res, &buf[i]);
			if (res->n_events < DEMO_MAX_EVENTS)
				res->events[res->n_events++] = buf[i];
		}
	}
	if (brk_breaker_find(seg, DEMO_BREAKER_NAME, &b) == 0 &&
	    brk_breaker_info(b, &res->info) == 0)
		res->have_info = 1;
}
