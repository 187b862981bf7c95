/*
 * bctl_metrics.c - `bctl metrics`: every breaker of the segment in the
 * Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/).
 *
 * Each metric family is printed once: "# HELP", "# TYPE", then one sample
 * per breaker (and per label value for the enum-like families), so every
 * series is there even at zero ("never fired" is distinguishable from "not
 * wired"). Counters end in _total; the one label every per-breaker series
 * carries is name="...", escaped as the format asks (\\, \" and \n).
 *
 * A snapshot of every breaker is taken first (one brk_info_at() each), so
 * the state, mode and counters printed for one breaker come from one read
 * of its record. Buckets and budgets are not breakers and are skipped.
 * Read-only attach: read permission on the segment is enough.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bctl.h"
#include "bctl_out.h"

#define RO_FLAGS (BRK_ATTACH_READONLY | BRK_ATTACH_NOPROCESS)

/* The numbers printed for one breaker (struct brk_info is ~2 KiB). */
struct m_snap {
	char name[BRK_NAME_MAX + 1]; /* printable ASCII (bctl_safe_name) */
	int state, mode;
	uint64_t consecutive_failures, cooling_level;
	uint64_t open_remaining_ms, cool_until_remaining_ms;
	uint64_t probes_in_flight, in_flight;
	uint64_t window_calls, window_failures, window_slow, distinct_failing;
	struct brk_counters c;
};

enum m_type { M_COUNTER, M_GAUGE };

/* A family with one value per breaker and only the name label. */
struct m_plain {
	const char *name;
	enum m_type type;
	const char *help;
	int seconds;             /* the value is ms, printed as seconds */
	size_t off;              /* offset of a uint64_t in struct m_snap */
};

#define SNAP(f) offsetof(struct m_snap, f)

static const struct m_plain m_counters[] = {
	{ "breakerd_allowed_total", M_COUNTER,
	  "Calls admitted (brk_acquire returned 0).", 0, SNAP(c.allowed) },
	{ "breakerd_successes_total", M_COUNTER,
	  "Calls reported as success.", 0, SNAP(c.successes) },
	{ "breakerd_healthy_errors_total", M_COUNTER,
	  "Calls reported as healthy_error (a correct business error; counts as success).",
	  0, SNAP(c.healthy_errors) },
	{ "breakerd_ignored_total", M_COUNTER,
	  "Calls reported as rejected_request (our fault; counts neither way).",
	  0, SNAP(c.ignored) },
	{ "breakerd_cancelled_total", M_COUNTER,
	  "Calls reported as cancelled (given up locally; no verdict).", 0,
	  SNAP(c.cancelled) },
	{ "breakerd_probes_total", M_COUNTER,
	  "Half-open probes admitted.", 0, SNAP(c.probes) },
	{ "breakerd_reclaimed_total", M_COUNTER,
	  "Leases reclaimed (dead owner or probe timeout).", 0, SNAP(c.reclaimed) },
	{ "breakerd_transitions_total", M_COUNTER,
	  "State transitions.", 0, SNAP(c.transitions) },
	{ "breakerd_stale_total", M_COUNTER,
	  "Releases not counted (lease reclaimed, reset, newer generation, released twice).",
	  0, SNAP(c.stale) },
};

static const struct m_plain m_gauges[] = {
	{ "breakerd_consecutive_failures", M_GAUGE,
	  "Consecutive failures counted toward failure_threshold.", 0,
	  SNAP(consecutive_failures) },
	{ "breakerd_cooling_level", M_GAUGE,
	  "Failed probes in a row (the cooling period doubles with each).", 0,
	  SNAP(cooling_level) },
	{ "breakerd_open_remaining_seconds", M_GAUGE,
	  "Seconds until an open breaker lets a probe through (0 unless open).",
	  1, SNAP(open_remaining_ms) },
	{ "breakerd_cool_until_remaining_seconds", M_GAUGE,
	  "Seconds left of the shared cool-until set by a Retry-After.", 1,
	  SNAP(cool_until_remaining_ms) },
	{ "breakerd_probes_in_flight", M_GAUGE,
	  "Half-open probe leases held.", 0, SNAP(probes_in_flight) },
	{ "breakerd_in_flight", M_GAUGE,
	  "Bulkhead permits held.", 0, SNAP(in_flight) },
	{ "breakerd_window_calls", M_GAUGE,
	  "Calls in the sliding window (closed state; 0 otherwise).", 0,
	  SNAP(window_calls) },
	{ "breakerd_window_failures", M_GAUGE,
	  "Failures in the sliding window (closed state; 0 otherwise).", 0,
	  SNAP(window_failures) },
	{ "breakerd_window_slow_calls", M_GAUGE,
	  "Slow calls in the sliding window (closed state; 0 otherwise).", 0,
	  SNAP(window_slow) },
	{ "breakerd_distinct_failing_processes", M_GAUGE,
	  "Processes that reported a failure in the last window_ms (trip quorum).",
	  0, SNAP(distinct_failing) },
};

static const char *const m_states[] = { "closed", "open", "half_open" };
static const char *const m_modes[] = { "normal", "forced_open", "disabled",
				       "metrics_only" };
static const char *const m_causes[] = { "open", "cooling", "full" };
static const struct { const char *label; int reason; } m_reasons[] = {
	{ "timeout", BRK_REASON_TIMEOUT },
	{ "connect", BRK_REASON_CONNECT },
	{ "server_error", BRK_REASON_SERVER_ERROR },
	{ "overloaded", BRK_REASON_OVERLOADED },
	{ "rate_limited", BRK_REASON_RATE_LIMITED },
	{ "other", BRK_REASON_OTHER },
};

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

/* "NAME{name="B"" - the caller adds more labels and the value. */
static void m_open(FILE *f, const char *family, const struct m_snap *s)
{
	fprintf(f, "%s{name=\"", family);
	m_label(f, s->name);
	fputc('"', f);
}

static void m_value(FILE *f, uint64_t v, int seconds)
{
	if (seconds)
		fprintf(f, "} %" PRIu64 ".%03" PRIu64 "\n", v / 1000, v % 1000);
	else
		fprintf(f, "} %" PRIu64 "\n", v);
}

static uint64_t m_field(const struct m_snap *s, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}

static void m_plain_family(FILE *f, const struct m_plain *m,
			   const struct m_snap *snaps, size_t n)
{
	size_t i;

	m_head(f, m->name, m->type, m->help);
	for (i = 0; i < n; i++) {
		m_open(f, m->name, &snaps[i]);
		m_value(f, m_field(&snaps[i], m->off), m->seconds);
	}
}

/* An enum as labels: 1 for the current value, 0 for the others. */
static void m_enum_family(FILE *f, const char *family, const char *help,
			  const char *label, const char *const *values,
			  size_t nv, int which_mode, const struct m_snap *snaps,
			  size_t n)
{
	size_t i, k;

	m_head(f, family, M_GAUGE, help);
	for (i = 0; i < n; i++) {
		int cur = which_mode ? snaps[i].mode : snaps[i].state;
		for (k = 0; k < nv; k++) {
			m_open(f, family, &snaps[i]);
			fprintf(f, ",%s=\"%s\"", label, values[k]);
			m_value(f, (size_t)cur == k, 0);
		}
	}
}

static void m_rejected(FILE *f, const struct m_snap *snaps, size_t n)
{
	size_t i, k;

	m_head(f, "breakerd_rejected_total", M_COUNTER,
	       "Calls refused, by cause (open: open, half-open with every probe "
	       "slot taken, or forced open; cooling: shared cool-until; full: "
	       "bulkhead).");
	for (i = 0; i < n; i++) {
		const struct brk_counters *c = &snaps[i].c;
		uint64_t v[3] = { c->rejected_open, c->rejected_cooling,
				  c->rejected_full };
		for (k = 0; k < N_OF(m_causes); k++) {
			m_open(f, "breakerd_rejected_total", &snaps[i]);
			fprintf(f, ",cause=\"%s\"", m_causes[k]);
			m_value(f, v[k], 0);
		}
	}
}

static void m_failures(FILE *f, const struct m_snap *snaps, size_t n)
{
	size_t i, k;

	m_head(f, "breakerd_failures_total", M_COUNTER,
	       "Calls reported as failure, by reason.");
	for (i = 0; i < n; i++) {
		for (k = 0; k < N_OF(m_reasons); k++) {
			m_open(f, "breakerd_failures_total", &snaps[i]);
			fprintf(f, ",reason=\"%s\"", m_reasons[k].label);
			m_value(f, snaps[i].c.failures_by_reason[m_reasons[k].reason], 0);
		}
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
	s->c = in->counters;
}

/* Snapshot every breaker. Returns 0 (with *out malloc'ed, maybe NULL if
 * there is none) or an exit status after printing the error. */
static int m_collect(const struct bctl *g, brk_segment *seg, uint32_t n,
		     struct m_snap **out, size_t *count)
{
	struct m_snap *snaps = NULL;
	struct brk_info *in = malloc(sizeof(*in));
	size_t used = 0, cap = 0;
	uint32_t i;
	int rc;

	*out = NULL;
	*count = 0;
	if (!in)
		return cli_error("out of memory");
	for (i = 0; i < n; i++) {
		rc = brk_info_at(seg, i, in);
		if (rc == -ENOENT)
			continue; /* being created right now */
		if (rc < 0) {
			cli_note("%s: record %" PRIu32 ": %s", cli_q(bctl_shm(g)),
				 i, brk_strerror(rc));
			continue;
		}
		if (in->kind != BRK_KIND_BREAKER)
			continue;
		if (used == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct m_snap *p = realloc(snaps, ncap * sizeof(*p));
			if (!p) {
				free(snaps);
				free(in);
				return cli_error("out of memory");
			}
			snaps = p;
			cap = ncap;
		}
		m_snap_fill(&snaps[used++], in);
	}
	free(in);
	*out = snaps;
	*count = used;
	return 0;
}

static void m_print(FILE *f, const struct brk_segment_info *si,
		    const struct m_snap *snaps, size_t n)
{
	size_t k;

	m_enum_family(f, "breakerd_state",
		      "Breaker state: 1 for the current one, 0 for the others.",
		      "state", m_states, N_OF(m_states), 0, snaps, n);
	m_enum_family(f, "breakerd_mode",
		      "Operator mode (bctl force-open, disable, metrics-only; "
		      "reset returns to normal): 1 for the current one.",
		      "mode", m_modes, N_OF(m_modes), 1, snaps, n);
	m_plain_family(f, &m_counters[0], snaps, n); /* allowed */
	m_rejected(f, snaps, n);
	m_plain_family(f, &m_counters[1], snaps, n); /* successes */
	m_failures(f, snaps, n);
	for (k = 2; k < N_OF(m_counters); k++)
		m_plain_family(f, &m_counters[k], snaps, n);
	for (k = 0; k < N_OF(m_gauges); k++)
		m_plain_family(f, &m_gauges[k], snaps, n);
	m_segment(f, si);
}

static const struct option metrics_opts[] = {
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

int bctl_cmd_metrics(struct bctl *g, int argc, char **argv)
{
	struct brk_segment_info si;
	struct m_snap *snaps;
	brk_segment *seg;
	size_t n;
	uint32_t records;
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", metrics_opts)) != -1) {
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	rc = bctl_no_args("metrics", argc, argv);
	if (rc)
		return rc;
	rc = bctl_attach(g, RO_FLAGS, NULL, &seg);
	if (rc)
		return rc;
	brk_segment_info(seg, &si);
	records = brk_record_count(seg);
	if (records > si.capacity)
		records = si.capacity;
	rc = m_collect(g, seg, records, &snaps, &n);
	if (rc == 0) {
		m_print(stdout, &si, snaps, n);
		free(snaps);
		if (fflush(stdout) == EOF || ferror(stdout))
			rc = cli_error("write error on standard output");
	}
	brk_detach(seg);
	return rc;
}
