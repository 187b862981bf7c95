/*
 * report_json.c - the demo's figures as one JSON object (jansson), for
 * scripts and for demo/check_demo.sh. Times are in ms; a first success
 * that never came is null.
 */
#include <errno.h>
#include <stdio.h>

#include <jansson.h>

#include "demo_api.h"

/* Seconds to milliseconds, rounded to the microsecond. */
static double to_ms(double s)
{
	return (double)(int64_t)(s * 1e6 + (s < 0 ? -0.5 : 0.5)) / 1e3;
}

static json_t *ms_or_null(double s)
{
	return s < 0 ? json_null() : json_real(to_ms(s));
}

static json_t *transitions_json(const struct run_result *r)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < r->n_events; i++) {
		const struct brk_event *e = &r->events[i];

		json_array_append_new(arr, json_pack("{s:f,s:s,s:s,s:s,s:I}",
			"t_ms", to_ms(demo_rel_s(r, e->mono_ns)),
			"from", brk_state_name(e->from),
			"to", brk_state_name(e->to),
			"reason", brk_event_reason_name(e->reason),
			"value", (json_int_t)e->value));
	}
	return arr;
}

static json_t *counters_json(const struct brk_counters *c)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"allowed", (json_int_t)c->allowed,
		"rejected_open", (json_int_t)c->rejected_open,
		"rejected_cooling", (json_int_t)c->rejected_cooling,
		"probes", (json_int_t)c->probes,
		"successes", (json_int_t)c->successes,
		"failures", (json_int_t)c->failures,
		"transitions", (json_int_t)c->transitions);
}

static json_t *run_json(const struct run_result *r)
{
	const struct worker_stats *t = &r->total;
	json_t *j = json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,"
			      "s:I,s:I,s:o,s:i}",
		"breaker", r->with_breaker,
		"upstream_down", (json_int_t)r->seen.down,
		"upstream_up", (json_int_t)(r->seen.up + r->seen.recovered),
		"calls", (json_int_t)t->calls,
		"attempts", (json_int_t)t->attempts,
		"retries", (json_int_t)t->retries,
		"successes", (json_int_t)t->successes,
		"failures", (json_int_t)t->failures,
		"refused", (json_int_t)t->refused,
		"stale", (json_int_t)t->stale,
		"errors", (json_int_t)t->errors,
		"workers_finished", (json_int_t)t->done,
		"first_success_after_recovery_ms",
		ms_or_null(demo_recovery_s(r)),
		"bad_workers", (int)r->bad_workers);

	if (j)
		json_object_set_new(j, "upstream_total", json_integer(
			(json_int_t)(r->seen.up + r->seen.down +
				     r->seen.recovered)));
	if (j && r->with_breaker) {
		json_object_set_new(j, "opened", json_integer(r->opened));
		json_object_set_new(j, "closed", json_integer(r->closed));
		json_object_set_new(j, "events_lost",
				    json_integer((json_int_t)r->events_lost));
		json_object_set_new(j, "transitions", transitions_json(r));
		if (r->have_info)
			json_object_set_new(j, "counters",
					    counters_json(&r->info.counters));
	}
	return j;
}

static json_t *setup_json(const struct demo_opts *o, const char *shm_name)
{
	return json_pack("{s:i,s:I,s:i,s:{s:I,s:I,s:I},"
			 "s:{s:s,s:s,s:i,s:i,s:i,s:i,s:i}}",
		"workers", (int)o->workers,
		"interval_ms", (json_int_t)o->interval_ms,
		"retries", (int)o->retries,
		"schedule",
		"up_ms", (json_int_t)o->up_ms,
		"down_ms", (json_int_t)o->down_ms,
		"after_ms", (json_int_t)o->after_ms,
		"breaker",
		"name", DEMO_BREAKER_NAME,
		"shm", shm_name,
		"failure_threshold", (int)DEMO_FAILURE_THRESHOLD,
		"open_ms", (int)DEMO_OPEN_MS,
		"max_open_ms", (int)DEMO_MAX_OPEN_MS,
		"half_open_probes", (int)DEMO_HALF_OPEN_PROBES,
		"success_threshold", (int)DEMO_SUCCESS_THRESHOLD);
}

/**
 * report_json - print setup, both runs and the ratio as one JSON object
 * on stdout. Returns 0 or -ENOMEM.
 */
int report_json(const struct demo_opts *o, const char *shm_name,
		const struct run_result *a, const struct run_result *b)
{
	json_t *j = setup_json(o, shm_name);
	uint64_t hb = b->seen.down ? b->seen.down : 1;
	int rc;

	if (!j)
		return -ENOMEM;
	json_object_set_new(j, "without", run_json(a));
	json_object_set_new(j, "with", run_json(b));
	json_object_set_new(j, "down_hits_ratio",
			    json_real((double)a->seen.down / (double)hb));
	rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("\n");
	fflush(stdout);
	json_decref(j);
	return rc ? -ENOMEM : 0;
}
