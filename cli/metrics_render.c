/*
 * metrics_render.c - the Prometheus rendering of a segment that `bctl
 * metrics` prints and breakerd serves on /metrics (metrics_render.h):
 * every breaker of the segment in the
 * Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/).
 *
 * Each metric family is printed once: "# HELP", "# TYPE", then one sample
 * per breaker (and per label value for the enum-like families), so every
 * series is there even at zero ("never fired" is distinguishable from "not
 * wired"). Counters end in _total; the one label every per-breaker series
 * carries is name="...", escaped as the format asks (\\, \" and \n).
 *
 * The signals of docs/design/cli.md "Signals" are families of their own
 * (breakerd_arrivals_total, _completions_total, _oldest_in_flight_seconds,
 * _max_concurrent, _half_open_probes) or, for budgets, the existing
 * breakerd_budget_deposits_total (first attempts), _retries_total and
 * _tokens (tokens left).
 *
 * GCRA buckets (breakerd_bucket_*) and retry budgets (breakerd_budget_*)
 * are exported the same way, with their own families and the same name
 * label. Breaker families are always printed, even with no breaker (the
 * contract dashboards and alerts rely on); a bucket or budget family is
 * printed only if the segment holds at least one record of that kind:
 * an empty family is legal but noise, and most segments have neither.
 * The fleet link's families (breakerd_fleet_*, metrics_fleet.c) follow the
 * segment's, only where a link ran (brk_fleet_status(): state not off, or
 * a counter moved), for the same reason.
 *
 * A snapshot of every record is taken first (one brk_info_at() each, in
 * name-index order, brk_record_next_brief()), so the numbers printed for
 * one record come from one read of it: the families are grouped, so the
 * output cannot stream like `bctl list`'s (breakerd renders into an
 * open_memstream() buffer, bctl to stdout). Cardinality limits: the
 * filters of record_filter.h (--prefix, --state, --kind, --not-closed,
 * --changed-within) keep only some records; --by-level N sums the
 * counters of the records sharing the first N levels of their names
 * (metrics_level.c) into one series per prefix (label prefix="..."), with breakerd_breakers
 * {prefix,state} counting the breakers and only counters and the
 * in-flight gauges summed (a sum of tokens, rates or remaining seconds
 * means nothing).
 * Read-only attach: read permission on the segment is enough.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_fleet.h"
#include "metrics_level.h"
#include "metrics_render.h"
#include "record_out.h"


enum m_type { M_COUNTER, M_GAUGE };

/* How a record field is stored and printed. */
enum m_fmt {
	M_U64,  /* uint64_t */
	M_MS,   /* uint64_t ms, printed as seconds */
	M_U32,  /* uint32_t */
	M_DBL   /* double */
};

/*
 * A family with one value per record and only the name label. The records
 * are struct m_snap (breakers), struct brk_bucket_info or struct
 * brk_budget_info: each begins with its name (asserted below).
 */
struct m_plain {
	const char *name;
	enum m_type type;
	const char *help;
	enum m_fmt fmt;
	size_t off;              /* offset of the field in the record */
};

_Static_assert(offsetof(struct m_snap, name) == 0 &&
	       offsetof(struct brk_bucket_info, name) == 0 &&
	       offsetof(struct brk_budget_info, name) == 0,
	       "every record snapshot begins with its name");

#define SNAP(f) offsetof(struct m_snap, f)
#define BKT(f) offsetof(struct brk_bucket_info, f)
#define BUD(f) offsetof(struct brk_budget_info, f)

static const struct m_plain m_counters[] = {
	{ "breakerd_allowed_total", M_COUNTER,
	  "Calls admitted (brk_acquire returned 0).", M_U64, SNAP(c.allowed) },
	{ "breakerd_successes_total", M_COUNTER,
	  "Calls reported as success.", M_U64, SNAP(c.successes) },
	{ "breakerd_healthy_errors_total", M_COUNTER,
	  "Calls reported as healthy_error (a correct business error; counts as success).",
	  M_U64, SNAP(c.healthy_errors) },
	{ "breakerd_ignored_total", M_COUNTER,
	  "Calls reported as rejected_request (our fault; counts neither way).",
	  M_U64, SNAP(c.ignored) },
	{ "breakerd_cancelled_total", M_COUNTER,
	  "Calls reported as cancelled (given up locally; no verdict).",
	  M_U64, SNAP(c.cancelled) },
	{ "breakerd_throttled_total", M_COUNTER,
	  "Calls reported as throttled (a rate-limit answer a pace took; no verdict).",
	  M_U64, SNAP(c.throttled) },
	{ "breakerd_probes_total", M_COUNTER,
	  "Half-open probes admitted.", M_U64, SNAP(c.probes) },
	{ "breakerd_reclaimed_total", M_COUNTER,
	  "Leases reclaimed (dead owner or probe timeout).", M_U64, SNAP(c.reclaimed) },
	{ "breakerd_transitions_total", M_COUNTER,
	  "State transitions.", M_U64, SNAP(c.transitions) },
	{ "breakerd_stale_total", M_COUNTER,
	  "Releases not counted (lease reclaimed, reset, newer generation, released twice).",
	  M_U64, SNAP(c.stale) },
	{ "breakerd_arrivals_total", M_COUNTER,
	  "Calls that asked to go (allowed plus every rejected cause).",
	  M_U64, SNAP(arrivals) },
	{ "breakerd_completions_total", M_COUNTER,
	  "Calls released with a verdict or a cancel (successes, failures, healthy "
	  "errors, ignored, cancelled, throttled; not stale or reclaimed).",
	  M_U64, SNAP(completions) },
};

static const struct m_plain m_gauges[] = {
	{ "breakerd_consecutive_failures", M_GAUGE,
	  "Consecutive failures counted toward failure_threshold.",
	  M_U64, SNAP(consecutive_failures) },
	{ "breakerd_cooling_level", M_GAUGE,
	  "Failed probes in a row (the cooling period doubles with each).",
	  M_U64, SNAP(cooling_level) },
	{ "breakerd_open_remaining_seconds", M_GAUGE,
	  "Seconds until an open breaker lets a probe through (0 unless open).",
	  M_MS, SNAP(open_remaining_ms) },
	{ "breakerd_cool_until_remaining_seconds", M_GAUGE,
	  "Seconds left of the shared cool-until set by a Retry-After.",
	  M_MS, SNAP(cool_until_remaining_ms) },
	{ "breakerd_probes_in_flight", M_GAUGE,
	  "Half-open probe leases held.", M_U64, SNAP(probes_in_flight) },
	{ "breakerd_in_flight", M_GAUGE,
	  "Bulkhead permits held.", M_U64, SNAP(in_flight) },
	{ "breakerd_window_calls", M_GAUGE,
	  "Calls in the sliding window (closed state; 0 otherwise).",
	  M_U64, SNAP(window_calls) },
	{ "breakerd_window_failures", M_GAUGE,
	  "Failures in the sliding window (closed state; 0 otherwise).",
	  M_U64, SNAP(window_failures) },
	{ "breakerd_window_slow_calls", M_GAUGE,
	  "Slow calls in the sliding window (closed state; 0 otherwise).",
	  M_U64, SNAP(window_slow) },
	{ "breakerd_distinct_failing_processes", M_GAUGE,
	  "Processes that reported a failure in the last window_ms (trip quorum).",
	  M_U64, SNAP(distinct_failing) },
	{ "breakerd_oldest_in_flight_seconds", M_GAUGE,
	  "Age of the oldest bulkhead permit or half-open probe held (0: none).",
	  M_MS, SNAP(oldest_in_flight_ms) },
	{ "breakerd_max_concurrent", M_GAUGE,
	  "Bulkhead limit: permits that may be out at once (0: no bulkhead).",
	  M_U64, SNAP(max_concurrent) },
	{ "breakerd_half_open_probes", M_GAUGE,
	  "Probes a half-open breaker lets through at once (setting).",
	  M_U64, SNAP(half_open_probes) },
};

static const struct m_plain m_buckets[] = {
	{ "breakerd_bucket_taken_total", M_COUNTER,
	  "GCRA bucket takes granted (brk_bucket_take returned 0).",
	  M_U64, BKT(taken) },
	{ "breakerd_bucket_denied_total", M_COUNTER,
	  "GCRA bucket takes refused (too few tokens).", M_U64, BKT(denied) },
	{ "breakerd_bucket_tokens_taken_total", M_COUNTER,
	  "Tokens granted (the sum of n over the granted takes).",
	  M_U64, BKT(tokens_taken) },
	{ "breakerd_bucket_tokens", M_GAUGE,
	  "Tokens available now (0 to burst, fractional).", M_DBL, BKT(tokens) },
	{ "breakerd_bucket_rate_per_second", M_GAUGE,
	  "Tokens added per second (the effective rate).",
	  M_DBL, BKT(rate_per_s) },
	{ "breakerd_bucket_burst", M_GAUGE,
	  "Bucket capacity in tokens.", M_U32, BKT(burst) },
};

/* Paced buckets only (bctl pace; breaker.h "Pacing (learned rate)"). */
static const struct m_plain m_paces[] = {
	{ "breakerd_pace_rate", M_GAUGE,
	  "Learned rate of a pace now, tokens per second.", M_DBL, BKT(learned_per_s) },
	{ "breakerd_pace_ceiling", M_GAUGE,
	  "Ceiling of a pace (the learned rate never exceeds it), tokens per second.",
	  M_DBL, BKT(ceiling_per_s) },
	{ "breakerd_pace_floor", M_GAUGE,
	  "Floor of a pace (the learned rate never falls below it), tokens per second.",
	  M_DBL, BKT(floor_per_s) },
	{ "breakerd_pace_cuts_total", M_COUNTER,
	  "Rate-limit answers that cut a pace's rate (one per round trip).",
	  M_U64, BKT(cuts) },
	{ "breakerd_pace_limited_total", M_COUNTER,
	  "Rate-limit answers reported to a pace (brk_pace_report LIMITED).",
	  M_U64, BKT(limited) },
	{ "breakerd_pace_implicit", M_GAUGE,
	  "1: an implicit pace, made by its breaker at its first rate-limit "
	  "answer (NAME:pace); 0: declared.", M_U32, BKT(implicit) },
};

static const struct m_plain m_budgets[] = {
	{ "breakerd_budget_deposits_total", M_COUNTER,
	  "First attempts recorded (brk_budget_deposit calls).",
	  M_U64, BUD(deposits) },
	{ "breakerd_budget_retries_total", M_COUNTER,
	  "Retries permitted (brk_retry_permitted returned 0).",
	  M_U64, BUD(retries) },
	{ "breakerd_budget_floor_retries_total", M_COUNTER,
	  "Retries permitted that were drawn from the floor (a part of "
	  "breakerd_budget_retries_total).", M_U64, BUD(retries_floor) },
	{ "breakerd_budget_deferred_total", M_COUNTER,
	  "Retries refused: budget exhausted.", M_U64, BUD(deferred) },
	{ "breakerd_budget_tokens", M_GAUGE,
	  "Retries available now (pool plus floor, fractional).",
	  M_DBL, BUD(balance) },
	{ "breakerd_budget_pool_tokens", M_GAUGE,
	  "Deposited tokens left in the pool (unspent, not expired).", M_DBL, BUD(pool) },
	{ "breakerd_budget_floor_tokens", M_GAUGE,
	  "Floor tokens available now.", M_DBL, BUD(floor_tokens) },
	{ "breakerd_budget_floor_per_second", M_GAUGE,
	  "Retries per second the floor always allows.",
	  M_DBL, BUD(floor_per_s) },
	{ "breakerd_budget_floor_burst", M_GAUGE,
	  "Retries the floor holds at most.", M_U32, BUD(floor_burst) },
	{ "breakerd_budget_ratio", M_GAUGE,
	  "Tokens deposited per first attempt.", M_DBL, BUD(ratio) },
};

/* State, mode and reason labels are the library's brk_*_name() words.
 * The cause labels are this exposition's own coarse grouping of the
 * rejected_* counters (not enum brk_cause: "open" also counts probes_busy
 * and forced_open). */
static const char *const m_causes[] = { "open", "cooling", "full" };

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* A label value with \, " and newline escaped (the names a segment can
 * hold never need it, but the segment is untrusted). */
static void m_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void m_head(FILE *f, const char *name, enum m_type type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
		type == M_COUNTER ? "counter" : "gauge");
}

/* The label every per-record series carries: "name", or "prefix" with
 * --by-level (the series of a group of records). */
/* Per thread: breakerd renders in its HTTP thread while bctl, or a
 * test, may render in another. */
static _Thread_local const char *m_key = "name";

/* metrics_opts.cancel of the render this thread is doing (NULL: none). */
static _Thread_local const atomic_int *m_cancel;

/* Has the caller asked the render to stop? Checked before each family
 * and each record snapshot, so a stop waits for one of them at most. */
static int m_stopped(void)
{
	return m_cancel && atomic_load_explicit(m_cancel, memory_order_relaxed);
}

/* "NAME{name="B"" - the caller adds more labels and the value. */
static void m_open(FILE *f, const char *family, const char *name)
{
	fprintf(f, "%s{%s=\"", family, m_key);
	m_label(f, name);
	fputc('"', f);
}

static void m_value(FILE *f, uint64_t v, int seconds)
{
	if (seconds)
		fprintf(f, "} %" PRIu64 ".%03" PRIu64 "\n", v / 1000, v % 1000);
	else
		fprintf(f, "} %" PRIu64 "\n", v);
}

/* The shortest of %.15g and %.17g that reads back as @v; never "inf" or
 * "nan", which the format spells +Inf, -Inf and NaN. */
static void m_double(FILE *f, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		fputs(isnan(v) ? "} NaN\n" : v > 0 ? "} +Inf\n" : "} -Inf\n", f);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fprintf(f, "} %s\n", buf);
}

/* The field @m describes, of the record at @rec, and the end of the line. */
static void m_field_value(FILE *f, const char *rec, const struct m_plain *m)
{
	uint64_t u64;
	uint32_t u32;
	double d;

	switch (m->fmt) {
	case M_U32:
		memcpy(&u32, rec + m->off, sizeof(u32));
		m_value(f, u32, 0);
		break;
	case M_DBL:
		memcpy(&d, rec + m->off, sizeof(d));
		m_double(f, d);
		break;
	case M_U64:
	case M_MS:
		memcpy(&u64, rec + m->off, sizeof(u64));
		m_value(f, u64, m->fmt == M_MS);
		break;
	}
}

/* @n records of @size bytes each at @recs (each begins with its name). */
static void m_plain_family(FILE *f, const struct m_plain *m, const void *recs,
			   size_t size, size_t n)
{
	const char *rec = recs;
	size_t i;

	if (m_stopped())
		return;

	m_head(f, m->name, m->type, m->help);
	for (i = 0; i < n; i++, rec += size) {
		m_open(f, m->name, rec);
		m_field_value(f, rec, m);
	}
}

/* Every family of @fams, or none if there is no record (see the top). */
static void m_plain_all(FILE *f, const struct m_plain *fams, size_t nfams,
			const void *recs, size_t size, size_t n)
{
	size_t k;

	for (k = 0; n > 0 && k < nfams; k++)
		m_plain_family(f, &fams[k], recs, size, n);
}

/* An enum as labels: 1 for the current value, 0 for the others. */
/* One series per value 0 .. @nv - 1 of an enum, labelled @name(value). */
static void m_enum_family(FILE *f, const char *family, const char *help,
			  const char *label, const char *(*name)(int),
			  int nv, int which_mode, const struct m_snap *snaps,
			  size_t n)
{
	size_t i;
	int k;

	if (m_stopped())
		return;

	m_head(f, family, M_GAUGE, help);
	for (i = 0; i < n; i++) {
		int cur = which_mode ? snaps[i].mode : snaps[i].state;
		for (k = 0; k < nv; k++) {
			m_open(f, family, snaps[i].name);
			fprintf(f, ",%s=\"%s\"", label, name(k));
			m_value(f, cur == k, 0);
		}
	}
}

static void m_rejected(FILE *f, const struct m_snap *snaps, size_t n)
{
	size_t i, k;

	if (m_stopped())
		return;

	m_head(f, "breakerd_rejected_total", M_COUNTER,
	       "Calls refused, by cause (open: open, half-open with every probe "
	       "slot taken, or forced open; cooling: shared cool-until; full: "
	       "bulkhead).");
	for (i = 0; i < n; i++) {
		const struct brk_counters *c = &snaps[i].c;
		uint64_t v[3] = { c->rejected_open, c->rejected_cooling,
				  c->rejected_full };
		for (k = 0; k < N_OF(m_causes); k++) {
			m_open(f, "breakerd_rejected_total", snaps[i].name);
			fprintf(f, ",cause=\"%s\"", m_causes[k]);
			m_value(f, v[k], 0);
		}
	}
}

static void m_failures(FILE *f, const struct m_snap *snaps, size_t n)
{
	size_t i;
	int r;

	if (m_stopped())
		return;

	m_head(f, "breakerd_failures_total", M_COUNTER,
	       "Calls reported as failure, by reason.");
	for (i = 0; i < n; i++) {
		for (r = BRK_REASON_NONE + 1; r < BRK_REASON_COUNT; r++) {
			m_open(f, "breakerd_failures_total", snaps[i].name);
			fprintf(f, ",reason=\"%s\"", brk_reason_name(r));
			m_value(f, snaps[i].c.failures_by_reason[r], 0);
		}
	}
}

/*
 * breakerd_permit_hold_seconds: a histogram (_bucket{le} cumulative,
 * _sum, _count) of how long admitted calls held their permit, from
 * brk_info.hold (non-cumulative buckets with bounds brk_hold_bound_us()).
 * Only breakers that record one have series: hold_histogram on (zeros
 * before the first release), or a histogram kept after it was turned off.
 * A breaker with it off, or whose histogram could not be allocated
 * (BRK_HOLD_NOROOM: no room left in the arena), has none: zeros would
 * claim holds were seen and none took long. The family, like the bucket
 * and budget ones, is printed only if some breaker has series.
 * Self-contained: m_print() calls it once.
 */
static int m_hold_shown(const struct m_snap *s)
{
	return s->hold.state == BRK_HOLD_RECORDED ||
	       (s->hold_on && s->hold.state != BRK_HOLD_NOROOM);
}

static void m_hold(FILE *f, const struct m_snap *snaps, size_t n)
{
	static const char fam[] = "breakerd_permit_hold_seconds";
	size_t i;
	unsigned k;

	if (m_stopped())
		return;

	for (i = 0; i < n && !m_hold_shown(&snaps[i]); i++)
		;
	if (i == n)
		return;
	fprintf(f, "# HELP %s Time admitted calls held their permit, brk_acquire "
		"to brk_release (reclaimed leases of dead owners not seen).\n"
		"# TYPE %s histogram\n", fam, fam);
	for (i = 0; i < n; i++) {
		const struct brk_hold_info *h = &snaps[i].hold;
		uint64_t cum = 0;

		if (!m_hold_shown(&snaps[i]))
			continue;
		for (k = 0; k < BRK_HOLD_BUCKETS; k++) {
			uint64_t b = brk_hold_bound_us(k);

			uint64_t v = h->state == BRK_HOLD_RECORDED ? h->bucket[k] : 0;

			/* saturating: the segment is untrusted, and a wrapped sum
			 * would make the cumulative buckets decrease */
			cum = v > UINT64_MAX - cum ? UINT64_MAX : cum + v;
			m_open(f, "breakerd_permit_hold_seconds_bucket", snaps[i].name);
			if (b == UINT64_MAX)
				fputs(",le=\"+Inf\"", f);
			else
				fprintf(f, ",le=\"%g\"", (double)b / 1e6);
			m_value(f, cum, 0);
		}
		m_open(f, "breakerd_permit_hold_seconds_sum", snaps[i].name);
		fprintf(f, "} %" PRIu64 ".%06" PRIu64 "\n", h->sum_us / 1000000u,
			h->sum_us % 1000000u);
		m_open(f, "breakerd_permit_hold_seconds_count", snaps[i].name);
		m_value(f, cum, 0);
	}
}

/*
 * max_concurrent = auto (docs/design/limits.md "Adaptive concurrency"):
 * the learned limit and the two latencies it is learned from. Only
 * breakers with a learned limit have series, and the families are printed
 * only if one has (a static bulkhead's limit is breakerd_max_concurrent).
 */
static void m_adaptive(FILE *f, const struct m_snap *snaps, size_t n)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "breakerd_concurrency_limit",
		  "Bulkhead limit learned from latency (max_concurrent auto), "
		  "shared by every process of the host." },
		{ "breakerd_latency_baseline_seconds",
		  "Long-window (baseline) completion latency the learned limit "
		  "compares against." },
		{ "breakerd_latency_recent_seconds",
		  "Mean completion latency of the last closed window." },
	};
	size_t i, k;

	for (i = 0; i < n && !snaps[i].auto_on; i++)
		;
	if (i == n || m_stopped())
		return;
	for (k = 0; k < N_OF(fam); k++) {
		m_head(f, fam[k].name, M_GAUGE, fam[k].help);
		for (i = 0; i < n; i++) {
			uint64_t us = k == 1 ? snaps[i].latency_baseline_us
					     : snaps[i].latency_recent_us;

			if (!snaps[i].auto_on)
				continue;
			m_open(f, fam[k].name, snaps[i].name);
			if (k == 0)
				m_double(f, snaps[i].concurrency_limit);
			else
				fprintf(f, "} %" PRIu64 ".%06" PRIu64 "\n",
					us / 1000000u, us % 1000000u);
		}
	}
}

/*
 * breakerd_bulkhead_queued: the waiters in a bulkhead's queue now
 * (brk_info.queued; docs/design/limits.md "Fair bulkhead waits"). Only
 * breakers with a bulkhead (max_concurrent > 0 or auto) have a series, and
 * the family is printed only if one has: without a bulkhead nobody can
 * queue, and a zero would say "nobody waits" of a breaker that has no
 * queue at all.
 */
static void m_queued(FILE *f, const struct m_snap *snaps, size_t n)
{
	static const char fam[] = "breakerd_bulkhead_queued";
	size_t i;

	for (i = 0; i < n && !snaps[i].bulkhead_on; i++)
		;
	if (i == n || m_stopped())
		return;
	m_head(f, fam, M_GAUGE,
	       "Callers waiting in the bulkhead's queue for a permit (brk_admit "
	       "with a wait, bctl exec --wait), every process of the host.");
	for (i = 0; i < n; i++) {
		if (!snaps[i].bulkhead_on)
			continue;
		m_open(f, fam, snaps[i].name);
		m_value(f, snaps[i].queued, 0);
	}
}

static void m_segment(FILE *f, const struct brk_segment_info *si)
{
	enum bctl_daemon d = bctl_daemon_state(si);

	m_head(f, "breakerd_segment_capacity", M_GAUGE,
	       "Records the segment can hold.");
	fprintf(f, "breakerd_segment_capacity %" PRIu32 "\n", si->capacity);
	m_head(f, "breakerd_segment_records", M_GAUGE,
	       "Records allocated (breakers, buckets and budgets).");
	fprintf(f, "breakerd_segment_records %" PRIu32 "\n", si->used);
	m_head(f, "breakerd_events_total", M_COUNTER,
	       "Events appended to the segment's event ring.");
	fprintf(f, "breakerd_events_total %" PRIu64 "\n", si->events_written);
	m_head(f, "breakerd_daemon_up", M_GAUGE,
	       "1 if breakerd is running with a fresh heartbeat, else 0.");
	fprintf(f, "breakerd_daemon_up %d\n", d == BCTL_DAEMON_OK);
	if (d == BCTL_DAEMON_NEVER)
		return; /* no heartbeat was ever published: no age to give */
	m_head(f, "breakerd_daemon_heartbeat_age_seconds", M_GAUGE,
	       "Seconds since breakerd's last heartbeat.");
	fprintf(f, "breakerd_daemon_heartbeat_age_seconds %" PRIu64 ".%03" PRIu64
		"\n", si->heartbeat_age_ms / 1000, si->heartbeat_age_ms % 1000);
}

static void m_snap_fill(struct m_snap *s, const struct brk_info *in)
{
	bctl_safe_name(in->name, sizeof(in->name), s->name);
	s->state = in->state >= BRK_CLOSED && in->state <= BRK_HALF_OPEN
			   ? in->state : BRK_OPEN;
	/* As the library does: an unknown mode word acts as forced open. */
	s->mode = in->mode >= BRK_MODE_NORMAL && in->mode <= BRK_MODE_METRICS_ONLY
			  ? in->mode : BRK_MODE_FORCED_OPEN;
	s->consecutive_failures = in->consecutive_failures;
	s->cooling_level = in->cooling_level;
	s->open_remaining_ms = in->open_remaining_ms;
	s->cool_until_remaining_ms = in->cool_until_remaining_ms;
	s->probes_in_flight = in->probes_in_flight;
	s->in_flight = in->in_flight;
	s->window_calls = in->window_calls;
	s->window_failures = in->window_failures;
	s->window_slow = in->window_slow;
	s->distinct_failing = in->distinct_failing_processes;
	s->arrivals = in->arrivals;
	s->completions = in->completions;
	s->oldest_in_flight_ms = in->oldest_in_flight_ms;
	s->max_concurrent = in->config.max_concurrent;
	s->half_open_probes = in->config.half_open_probes;
	s->c = in->counters;
	s->hold = in->hold;
	s->hold_on = in->config.hold_histogram != 0;
	s->auto_on = in->config.concurrency_auto != 0;
	s->concurrency_limit = in->concurrency_limit;
	s->latency_baseline_us = in->latency_baseline_us;
	s->latency_recent_us = in->latency_recent_us;
	s->bulkhead_on = in->config.max_concurrent != 0 ||
			 in->config.concurrency_auto != 0;
	s->queued = in->queued;
}

static void m_recs_free(struct m_recs *r)
{
	free(r->brk.v);
	free(r->bkt.v);
	free(r->bud.v);
	free(r->pace.v);
}

/* Keep the snapshot of one record. Returns 0 or -ENOMEM. */
static int m_keep(struct m_recs *r, const struct brk_info *in)
{
	struct m_snap *s;
	struct brk_bucket_info *k;
	struct brk_budget_info *u;

	switch (in->kind) {
	case BRK_KIND_BREAKER:
		if (!(s = m_push(&r->brk)))
			return -ENOMEM;
		m_snap_fill(s, in);
		return 0;
	case BRK_KIND_BUCKET:
		if (!(k = m_push(&r->bkt)))
			return -ENOMEM;
		*k = in->bucket;
		bctl_safe_name(in->name, sizeof(in->name), k->name);
		if (in->bucket.paced) {
			struct brk_bucket_info *pk = m_push(&r->pace);

			if (!pk)
				return -ENOMEM;
			*pk = *(struct brk_bucket_info *)((char *)r->bkt.v +
							  (r->bkt.n - 1) * r->bkt.size);
		}
		return 0;
	case BRK_KIND_BUDGET:
		if (!(u = m_push(&r->bud)))
			return -ENOMEM;
		*u = in->budget;
		bctl_safe_name(in->name, sizeof(in->name), u->name);
		return 0;
	default:
		return 0; /* a kind this bctl does not know */
	}
}

/* Snapshot every record that passes the filters into @r (which the
 * caller frees with m_recs_free() on success), or, with --by-level, sum
 * them per prefix first (metrics_level.c). Records are read through the name index
 * (bctl_filter_next()); a corrupt one is reported (or counted in
 * *@o->left_out) and left out.
 * Returns 0 or -ENOMEM. */
static int m_collect(const char *shm, brk_segment *seg,
		     const struct metrics_opts *o, struct m_recs *r)
{
	struct brk_info *in = malloc(sizeof(*in));
	struct bctl_filter flt = o->filter;
	struct m_groups grp;
	uint64_t cur = 0;
	int err = 0, bad = 0;

	memset(r, 0, sizeof(*r));
	metrics_level_init(&grp, o->by_level);
	r->brk.size = sizeof(struct m_snap);
	r->bkt.size = sizeof(struct brk_bucket_info);
	r->bud.size = sizeof(struct brk_budget_info);
	r->pace.size = sizeof(struct brk_bucket_info);
	if (!in)
		return -ENOMEM;
	flt.corrupt = o->left_out;
	if (o->left_out)
		*o->left_out = 0;
	while (!err && !m_stopped() &&
	       bctl_filter_next(shm, seg, &cur, &flt, in, &bad))
		err = o->by_level ? metrics_level_add(&grp, in) : m_keep(r, in);
	if (!err && o->by_level)
		err = metrics_level_out(&grp, r);
	free(in);
	metrics_level_free(&grp);
	if (err) {
		m_recs_free(r);
		return -ENOMEM;
	}
	return 0;
}

/* The families of @fams of type counter only (--by-level sums counters;
 * a sum of gauges such as tokens or rates means nothing). */
static void m_plain_counters(FILE *f, const struct m_plain *fams, size_t nfams,
			     const void *recs, size_t size, size_t n)
{
	size_t k;

	for (k = 0; n > 0 && k < nfams; k++)
		if (fams[k].type == M_COUNTER)
			m_plain_family(f, &fams[k], recs, size, n);
}

/* --by-level: one series per prefix (label prefix="..."). */
static void m_print_levels(FILE *f, const struct brk_segment_info *si,
			   const struct m_recs *r)
{
	const struct m_snap *snaps = r->brk.v;
	size_t i, k, n = r->brk.n, z = sizeof(*snaps);
	int st;

	m_head(f, "breakerd_breakers", M_GAUGE,
	       "Breakers under the prefix, by state (bctl metrics --by-level).");
	for (i = 0; i < n; i++)
		for (st = BRK_CLOSED; st <= BRK_HALF_OPEN; st++) {
			m_open(f, "breakerd_breakers", snaps[i].name);
			fprintf(f, ",state=\"%s\"", brk_state_name(st));
			m_value(f, snaps[i].n_state[st], 0);
		}
	m_plain_family(f, &m_counters[0], snaps, z, n); /* allowed */
	m_rejected(f, snaps, n);
	m_plain_family(f, &m_counters[1], snaps, z, n); /* successes */
	m_failures(f, snaps, n);
	for (k = 2; k < N_OF(m_counters); k++)
		m_plain_family(f, &m_counters[k], snaps, z, n);
	for (k = 0; k < N_OF(m_gauges); k++)
		if (m_gauges[k].off == SNAP(probes_in_flight) ||
		    m_gauges[k].off == SNAP(in_flight))
			m_plain_family(f, &m_gauges[k], snaps, z, n);
	m_plain_counters(f, m_buckets, N_OF(m_buckets), r->bkt.v, r->bkt.size,
			 r->bkt.n);
	m_plain_counters(f, m_budgets, N_OF(m_budgets), r->bud.v, r->bud.size,
			 r->bud.n);
	m_segment(f, si);
}

static void m_print(FILE *f, const struct brk_segment_info *si,
		    const struct m_recs *r)
{
	const struct m_snap *snaps = r->brk.v;
	size_t k, n = r->brk.n, z = sizeof(*snaps);

	m_enum_family(f, "breakerd_state",
		      "Breaker state: 1 for the current one, 0 for the others.",
		      "state", brk_state_name, BRK_HALF_OPEN + 1, 0, snaps, n);
	m_enum_family(f, "breakerd_mode",
		      "Operator mode (bctl force-open, disable, metrics-only; "
		      "reset returns to normal): 1 for the current one.",
		      "mode", brk_mode_name, BRK_MODE_METRICS_ONLY + 1, 1,
		      snaps, n);
	m_plain_family(f, &m_counters[0], snaps, z, n); /* allowed */
	m_rejected(f, snaps, n);
	m_plain_family(f, &m_counters[1], snaps, z, n); /* successes */
	m_failures(f, snaps, n);
	for (k = 2; k < N_OF(m_counters); k++)
		m_plain_family(f, &m_counters[k], snaps, z, n);
	for (k = 0; k < N_OF(m_gauges); k++)
		m_plain_family(f, &m_gauges[k], snaps, z, n);
	m_hold(f, snaps, n);
	m_queued(f, snaps, n);
	m_adaptive(f, snaps, n);
	m_plain_all(f, m_buckets, N_OF(m_buckets), r->bkt.v, r->bkt.size,
		    r->bkt.n);
	m_plain_all(f, m_paces, N_OF(m_paces), r->pace.v, r->pace.size,
		    r->pace.n);
	m_plain_all(f, m_budgets, N_OF(m_budgets), r->bud.v, r->bud.size,
		    r->bud.n);
	m_segment(f, si);
}

void metrics_opts_init(struct metrics_opts *o)
{
	memset(o, 0, sizeof(*o));
	bctl_filter_init(&o->filter);
}

int metrics_render(FILE *f, brk_segment *seg, const char *shm,
		   const struct metrics_opts *o)
{
	struct brk_segment_info si;
	struct brk_fleet_status fleet;
	struct m_recs r;
	int rc;

	rc = brk_segment_info(seg, &si);
	if (rc < 0)
		return rc;
	m_cancel = o->cancel;
	rc = m_collect(shm, seg, o, &r);
	if (rc == 0 && m_stopped()) {
		m_recs_free(&r);
		rc = -ECANCELED;
	}
	if (rc < 0) {
		m_cancel = NULL;
		return rc;
	}
	m_key = o->by_level ? "prefix" : "name";
	if (o->by_level)
		m_print_levels(f, &si, &r);
	else
		m_print(f, &si, &r);
	/* the fleet link's families, only where a link ran (an unreadable
	 * status is left out like a corrupt record, the rest is served) */
	if (bctl_fleet_read(seg, &fleet) == 1)
		metrics_fleet(f, &fleet, bctl_wall_ms());
	m_recs_free(&r);
	rc = m_stopped() ? -ECANCELED : 0; /* what was written is cut short */
	m_cancel = NULL;
	return rc;
}
