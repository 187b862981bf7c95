/*
 * metrics_level.h - private to the Prometheus renderer (metrics_render.c):
 * the snapshots a render collects (struct m_snap, struct m_recs), and
 * --by-level (metrics_level.c): the records summed per name prefix, one
 * group per prefix of the first N levels.
 */
#ifndef METRICS_LEVEL_H
#define METRICS_LEVEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "breaker.h"

/* The numbers printed for one breaker (struct brk_info is ~2 KiB). */
struct m_snap {
	char name[BRK_NAME_MAX + 1]; /* printable ASCII (bctl_safe_name) */
	int state, mode;
	uint64_t consecutive_failures, cooling_level;
	uint64_t open_remaining_ms, cool_until_remaining_ms;
	uint64_t probes_in_flight, in_flight;
	uint64_t window_calls, window_failures, window_slow, distinct_failing;
	uint64_t arrivals, completions, oldest_in_flight_ms; /* signals */
	uint64_t max_concurrent, half_open_probes;
	struct brk_counters c;
	uint64_t n_state[BRK_HALF_OPEN + 1]; /* --by-level: breakers per state */
	struct brk_hold_info hold;   /* permit hold time (m_hold(),
	                                metrics_render.c) */
	int hold_on;                 /* config.hold_histogram */
	int auto_on;                 /* config.concurrency_auto (m_adaptive(),
	                                metrics_render.c) */
	double concurrency_limit;    /* the learned limit */
	uint64_t latency_baseline_us, latency_recent_us;
	int bulkhead_on;             /* max_concurrent > 0 or concurrency_auto
	                                (m_queued(), metrics_render.c) */
	uint64_t queued;             /* waiters in the bulkhead's queue */
};

/* A growing array of records of @size bytes. */
struct m_vec {
	void *v;
	size_t n, cap, size;
};

/* The snapshots, by kind: struct m_snap, brk_bucket_info, brk_budget_info. */
struct m_recs {
	struct m_vec brk, bkt, bud, pace; /* pace: the paced buckets again */
};

/* A new slot at the end of @a, or NULL (out of memory). */
static inline void *m_push(struct m_vec *a)
{
	if (a->n == a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 64;
		void *p = realloc(a->v, ncap * a->size);

		if (!p)
			return NULL;
		a->v = p;
		a->cap = ncap;
	}
	return (char *)a->v + a->n++ * a->size;
}

/* The records of one prefix, summed. */
struct m_group {
	struct m_snap brk;            /* name = the prefix; counters and the
	                                 in-flight gauges summed */
	struct brk_bucket_info bkt;   /* counters summed */
	struct brk_budget_info bud;   /* counters summed */
	uint64_t n_brk, n_bkt, n_bud; /* records of each kind */
};

/* prefix -> group: open addressing over indices into a growing array. */
struct m_groups {
	struct m_vec v;               /* struct m_group */
	uint32_t *slot;               /* group index + 1; 0: empty */
	size_t mask;
	unsigned levels;
};

/* An empty grouping by the first @levels levels of the names. */
void metrics_level_init(struct m_groups *g, unsigned levels);

/* Add the record @in to its group. 0 or -ENOMEM. */
int metrics_level_add(struct m_groups *g, const struct brk_info *in);

/* The groups as the arrays the renderer prints, by kind, appended to @r.
 * 0 or -ENOMEM. */
int metrics_level_out(const struct m_groups *g, struct m_recs *r);

void metrics_level_free(struct m_groups *g);

#endif /* METRICS_LEVEL_H */
