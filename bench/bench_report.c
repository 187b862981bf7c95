/*
 * bench_report.c - statistics over runs, the table, the goal lines and the
 * memory section. Printing only: no measuring here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breaker.h"
#include "bench.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/** bench_median - median of @v[0..n-1] (sorts a copy). 0 if n == 0. */
double bench_median(double *v, int n)
{
	double t[BENCH_MAX_RUNS * 4];
	int i;

	if (n <= 0)
		return 0;
	if (n > (int)(sizeof(t) / sizeof(t[0])))
		n = (int)(sizeof(t) / sizeof(t[0]));
	for (i = 0; i < n; i++)
		t[i] = v[i];
	qsort(t, (size_t)n, sizeof(t[0]), cmp_double);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/** bench_row_finish - median, min and max of the runs' ns/op; median of
 * their aggregate ops/s. Runs that failed are left out. */
void bench_row_finish(struct bench_row *r)
{
	double ns[BENCH_MAX_RUNS], ops[BENCH_MAX_RUNS];
	int i, n = 0;

	for (i = 0; i < r->nruns; i++) {
		if (!r->runs[i].ok)
			continue;
		ns[n] = r->runs[i].ns_per_op;
		ops[n] = r->runs[i].ops_per_sec;
		n++;
	}
	if (n == 0) {
		r->ns_med = r->ns_min = r->ns_max = r->ops_med = 0;
		if (!r->skipped) {
			r->skipped = 1;
			r->note = r->note ? r->note : "every run failed";
		}
		return;
	}
	r->ns_min = r->ns_max = ns[0];
	for (i = 1; i < n; i++) {
		if (ns[i] < r->ns_min)
			r->ns_min = ns[i];
		if (ns[i] > r->ns_max)
			r->ns_max = ns[i];
	}
	r->ns_med = bench_median(ns, n);
	r->ops_med = bench_median(ops, n);
}

static void fmt_rate(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

static void fmt_ns(char *buf, size_t len, double v)
{
	if (v >= 10000)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.1f", v);
}

void bench_print_header(const char *title)
{
	printf("\n== %s\n", title);
	printf("%-38s %-5s %10s  %-21s %9s %10s\n", "operation", "procs",
	       "ns/op", "[min - max]", "ops/s", "vs brkd");
}

/**
 * bench_print_row - one line: label, workers, median ns/op (median over
 * workers, then over runs) with min and max over runs, median aggregate
 * ops/s, and its cost relative to @base (breakerd acquire+release with
 * the same workers): the ratio of ns/op with 1 worker; with several, the
 * ratio of aggregate throughputs (base ops/s / this row's ops/s), since a
 * worker's elapsed time then includes time it waited for a CPU and a
 * short run (SysV, Redis) may finish inside one time slice.
 */
void bench_print_row(const struct bench_row *r, const struct bench_row *base)
{
	char procs[16], med[32], lo[32], hi[32], rate[32], range[80], ratio[32];

	snprintf(procs, sizeof(procs), "%d%s", r->procs, r->distinct ? "x1" : "");
	if (r->skipped) {
		printf("%-38s %-5s %s\n", r->label, procs,
		       r->note ? r->note : "skipped");
		return;
	}
	fmt_ns(med, sizeof(med), r->ns_med);
	fmt_ns(lo, sizeof(lo), r->ns_min);
	fmt_ns(hi, sizeof(hi), r->ns_max);
	snprintf(range, sizeof(range), "[%s - %s]", lo, hi);
	fmt_rate(rate, sizeof(rate), r->ops_med);
	if (base && !base->skipped && r->procs == 1 && base->ns_med > 0)
		snprintf(ratio, sizeof(ratio), "%.2fx", r->ns_med / base->ns_med);
	else if (base && !base->skipped && r->procs > 1 && r->ops_med > 0)
		snprintf(ratio, sizeof(ratio), "%.2fx", base->ops_med / r->ops_med);
	else
		snprintf(ratio, sizeof(ratio), "-");
	printf("%-38s %-5s %10s  %-21s %9s %10s", r->label, procs, med, range,
	       rate, ratio);
	if (r->failed)
		printf("  (%llu ops failed: %s)", (unsigned long long)r->failed,
		       brk_strerror((int)r->last_err));
	putchar('\n');
}

/**
 * bench_goal_unit - print "GOAL <what>: met/MISSED (x<unit> vs target
 * <= y<unit>)". The goal is value >= target when @better_is_higher, else
 * value <= target. A value of 0 or less means "not measured" and is
 * printed as such (not met). Returns 1 if met.
 */
int bench_goal_unit(const char *what, double value, double target,
		    const char *unit, int better_is_higher)
{
	int met;

	if (value <= 0) {
		printf("GOAL %s: NOT MEASURED\n", what);
		return 0;
	}
	met = better_is_higher ? value >= target : value <= target;
	printf("GOAL %s: %s (%.2f%s vs target %s%g%s)\n", what,
	       met ? "met" : "MISSED", value, unit,
	       better_is_higher ? ">= " : "<= ", target, unit);
	return met;
}

/** bench_goal - bench_goal_unit() for ratios (unit "×"). */
int bench_goal(const char *what, double value, double target,
	       int better_is_higher)
{
	return bench_goal_unit(what, value, target, "×", better_is_higher);
}

/** bench_goal_skipped - "GOAL <what>: not measured (<why>)"; returns 0. */
int bench_goal_skipped(const char *what, const char *why)
{
	printf("GOAL %s: not measured (%s)\n", what, why);
	return 0;
}

void bench_print_memory(const struct bench_memory *m)
{
	printf("\n== memory and inspection\n");
	printf("record size: %u bytes; bench segment: %llu bytes / %u records"
	       " = %.0f bytes per record (index, header and event ring included)\n",
	       m->record_size, (unsigned long long)m->total_size, m->capacity,
	       m->capacity ? (double)m->total_size / m->capacity : 0.0);
	if (!m->big_capacity) {
		printf("10,000-record segment: %s\n", m->note[0] ? m->note : "failed");
		return;
	}
	printf("10,000-record segment: %llu bytes / %u records = %.0f bytes per"
	       " record; %u breakers created in %.1f ms\n",
	       (unsigned long long)m->big_total_size, m->big_capacity,
	       (double)m->big_total_size / m->big_capacity, m->big_records,
	       m->create_ms);
	printf("  brk_attach (existing segment):       %8.3f ms [%.3f - %.3f]\n",
	       m->attach_ms[0], m->attach_ms[1], m->attach_ms[2]);
	printf("  full brk_record_next walk (%u records): %8.3f ms [%.3f - %.3f]\n",
	       m->big_records, m->scan_ms[0], m->scan_ms[1], m->scan_ms[2]);
	if (m->bctl_found == 1)
		printf("  bctl --shm NAME list >/dev/null:      %8.3f ms [%.3f - %.3f]"
		       " (fork+exec+attach+print)\n",
		       m->bctl_ms[0], m->bctl_ms[1], m->bctl_ms[2]);
	else if (m->bctl_found == 0)
		printf("  bctl list: not timed (no executable at %s)\n",
		       m->bctl_path[0] ? m->bctl_path : "(unknown path)");
	else
		printf("  bctl list: not timed: %s\n", m->note);
}
