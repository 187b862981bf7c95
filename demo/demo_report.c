/*
 * demo_report.c - the demo's figures as text: the set-up, one table with both
 * runs side by side, the breaker's time line and the comparison.
 */
#include <stdio.h>

#include "demo_api.h"

/** demo_rel_s - @ns in seconds after the start of @r's run (may be < 0). */
double demo_rel_s(const struct run_result *r, uint64_t ns)
{
	return ((double)ns - (double)r->sched.start_ns) / 1e9;
}

/**
 * demo_recovery_s - seconds from the upstream's recovery to the first
 * successful worker request; -1 if no request succeeded after it.
 */
double demo_recovery_s(const struct run_result *r)
{
	if (!r->first_ok_ns)
		return -1;
	return ((double)r->first_ok_ns - (double)r->sched.recovered_ns) / 1e9;
}

void report_header(const struct demo_opts *o, const struct upstream *up,
		   const char *shm_name)
{
	printf("breakerd demo: %u worker processes, each making one call every"
	       " %llu ms to\n%s/item (libcurl, %ld ms timeout); a failed call"
	       " is\nretried at once, up to %u times.",
	       o->workers, (unsigned long long)o->interval_ms, up->url,
	       DEMO_TOTAL_TIMEOUT_MS, o->retries);
	printf(" The upstream is up for %.1f s, then down\nfor %.1f s (503,"
	       " no Retry-After), then up again for %.1f s.\n",
	       o->up_ms / 1e3, o->down_ms / 1e3, o->after_ms / 1e3);
	printf("Two runs with the same schedule:\n"
	       "  A  without breakerd: each worker finds out on its own, by"
	       " calling.\n");
	printf("  B  with breakerd: one breaker \"%s\", shared by all"
	       " workers\n     (segment %s): failure_threshold %u, open %u"
	       " ms,\n     doubling per failed probe up to %u ms, %u"
	       " half-open probe(s) across\n     all workers,"
	       " success_threshold %u.\n\n",
	       DEMO_BREAKER_NAME, shm_name, DEMO_FAILURE_THRESHOLD,
	       DEMO_OPEN_MS, DEMO_MAX_OPEN_MS, DEMO_HALF_OPEN_PROBES,
	       DEMO_SUCCESS_THRESHOLD);
}

/* Progress, on stderr when stdout carries JSON. */
void report_run_start(const struct demo_opts *o, const char *what)
{
	FILE *f = o->json ? stderr : stdout;

	fprintf(f, "running %s (%.1f s) ...\n", what,
		(o->up_ms + o->down_ms + o->after_ms) / 1e3);
	fflush(f);
}

static void row(const char *label, unsigned long long a, unsigned long long b)
{
	printf("  %-42s %10llu %10llu\n", label, a, b);
}

static void print_ms(double s)
{
	if (s < 0)
		printf(" %10s", "none");
	else
		printf(" %7.1f ms", s * 1e3);
}

static void row_recovery(const struct run_result *a,
			 const struct run_result *b)
{
	printf("  %-42s", "first success after recovery");
	print_ms(demo_recovery_s(a));
	print_ms(demo_recovery_s(b));
	printf("\n");
}

void report_table(const struct run_result *a, const struct run_result *b)
{
	const struct worker_stats *x = &a->total, *y = &b->total;

	printf("\n  %-42s %10s %10s\n", "", "without", "with");
	printf("  %-42s %10s %10s\n", "", "breakerd", "breakerd");
	row("requests that reached the upstream", a->seen.up + a->seen.down +
	    a->seen.recovered, b->seen.up + b->seen.down + b->seen.recovered);
	row("  while it was down", a->seen.down, b->seen.down);
	row("  while it was up", a->seen.up + a->seen.recovered,
	    b->seen.up + b->seen.recovered);
	row("calls made by the workers", x->calls, y->calls);
	row("  attempts sent (with retries)", x->attempts, y->attempts);
	row("  of which retries", x->retries, y->retries);
	row("  succeeded", x->successes, y->successes);
	row("  failed", x->failures, y->failures);
	row("  refused by the breaker (not sent)", x->refused, y->refused);
	row_recovery(a, b);
	if (!b->have_info)
		return;
	printf("  breaker counters (run B): allowed %llu, rejected_open %llu,"
	       " probes %llu,\n    successes %llu, failures %llu,"
	       " transitions %llu\n",
	       (unsigned long long)b->info.counters.allowed,
	       (unsigned long long)b->info.counters.rejected_open,
	       (unsigned long long)b->info.counters.probes,
	       (unsigned long long)b->info.counters.successes,
	       (unsigned long long)b->info.counters.failures,
	       (unsigned long long)b->info.counters.transitions);
}

static void print_event(const struct run_result *r, const struct brk_event *e)
{
	printf("  %+8.3fs  %s -> %s (%s", demo_rel_s(r, e->mono_ns),
	       brk_state_name(e->from), brk_state_name(e->to),
	       brk_event_reason_name(e->reason));
	if (e->to == BRK_OPEN && e->value)
		printf(", open for %llu ms", (unsigned long long)e->value);
	printf(")\n");
}

static void print_mark(const struct run_result *r, uint64_t ns,
		       const char *what, int *done)
{
	if (*done)
		return;
	printf("  %+8.3fs  -- %s --\n", demo_rel_s(r, ns), what);
	*done = 1;
}

/** report_timeline - run B's breaker events, with the schedule's marks. */
void report_timeline(const struct run_result *b)
{
	const struct schedule *s = &b->sched;
	int down = 0, rec = 0;
	size_t i;

	printf("\nrun B, the breaker's transitions (from the segment's event"
	       " ring),\nin seconds after the run's start:\n");
	for (i = 0; i < b->n_events; i++) {
		if (b->events[i].mono_ns >= s->down_ns)
			print_mark(b, s->down_ns, "upstream goes down", &down);
		if (b->events[i].mono_ns >= s->recovered_ns)
			print_mark(b, s->recovered_ns, "upstream recovers", &rec);
		print_event(b, &b->events[i]);
	}
	print_mark(b, s->down_ns, "upstream goes down", &down);
	print_mark(b, s->recovered_ns, "upstream recovers", &rec);
	if (b->n_events == 0)
		printf("  (no transitions recorded)\n");
	if (b->events_lost)
		printf("  (%llu events were overwritten before they were"
		       " read)\n", (unsigned long long)b->events_lost);
}

static void print_ratio(uint64_t a, uint64_t b)
{
	if (b == 0)
		printf("(none at all with it)");
	else if (a >= 10 * b)
		printf("(%.0fx fewer)", (double)a / (double)b);
	else
		printf("(%.1fx fewer)", (double)a / (double)b);
}

static void print_price(double ra, double rb)
{
	if (ra < 0 || rb < 0) {
		printf("warning: a run saw no success after recovery; make"
		       " --after longer.\n");
		return;
	}
	if (rb <= ra) {
		printf("Recovery was not noticed later with the breaker in"
		       " this run.\n");
		return;
	}
	printf("The price: with the breaker, the workers saw the recovery"
	       " %.0f ms later.\nUntil its cooling period ran out (%u ms,"
	       " doubled per failed probe up to\n%u ms), the breaker kept"
	       " every worker away; then one probe found the\nupstream"
	       " healthy and closed it for all of them.\n",
	       (rb - ra) * 1e3, DEMO_OPEN_MS, DEMO_MAX_OPEN_MS);
}

/** report_compare - the one-line verdict, and the trade-off, honestly. */
void report_compare(const struct run_result *a, const struct run_result *b)
{
	double ra = demo_recovery_s(a), rb = demo_recovery_s(b);

	printf("\nupstream hit while down: %llu without breakerd, %llu with ",
	       (unsigned long long)a->seen.down,
	       (unsigned long long)b->seen.down);
	print_ratio(a->seen.down, b->seen.down);
	printf("; first success after recovery: ");
	if (ra < 0 || rb < 0)
		printf("%s\n", "n/a");
	else
		printf("%.1f ms vs %.1f ms\n", ra * 1e3, rb * 1e3);
	print_price(ra, rb);
	fflush(stdout);
}
