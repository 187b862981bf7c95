/*
 * metrics_render.h - a segment in the Prometheus text exposition format,
 * version 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/):
 * the one renderer `bctl metrics` prints (tools/bctl_metrics.c) and
 * breakerd serves on GET /metrics with --metrics-listen (daemon/metrics_http.c).
 * The families, their labels and the --by-level grouping are described at
 * the top of metrics_render.c.
 */
#ifndef METRICS_RENDER_H
#define METRICS_RENDER_H

#include <stdatomic.h>
#include <stdio.h>

#include "record_filter.h"
#include "breaker.h"

/* Names have at most this many levels ("a/b/..." of 1-byte levels): the
 * largest --by-level. */
#define METRICS_MAX_LEVELS ((BRK_NAME_MAX + 1) / 2)

/* Which records, and how grouped. */
struct metrics_opts {
	struct bctl_filter filter; /* record_filter.h: --prefix, --state, ... */
	unsigned by_level;         /* 0: one series per record; N: summed per
	                              first N name levels (label prefix=) */
	const atomic_int *cancel;  /* NULL, or set non-zero by another thread
	                              to stop the render: -ECANCELED */
	unsigned *left_out;        /* NULL: a note on stderr per corrupt record
	                              left out; else only their number, set
	                              by metrics_render() (breakerd logs it) */
};

/* metrics_opts_init - no filter, one series per record. */
void metrics_opts_init(struct metrics_opts *o);

/**
 * metrics_render - write the exposition of @seg (attached, read-only is
 * enough) to @f: one snapshot of each record that passes @o's filters
 * (brk_info_at() per record, in name-index order), then every family.
 * @shm names the segment in the notes on stderr about a corrupt record
 * (which is left out, as bctl_filter_next() says); with @o->left_out set
 * there are no notes, *@o->left_out receives how many were left out. Nothing is written to
 * @f on an error. Write errors of @f are the caller's to check (ferror,
 * fflush/fclose). Safe to call from several threads at once on distinct
 * @f; what a worker in another process changes during the render may be
 * seen for some records and not others, but each record's numbers come
 * from one snapshot of it.
 * Returns 0, -ENOMEM, -ECANCELED (*@o->cancel was set during the render:
 * what was written to @f is incomplete), or an error of
 * brk_segment_info().
 */
int metrics_render(FILE *f, brk_segment *seg, const char *shm,
		   const struct metrics_opts *o);

#endif /* METRICS_RENDER_H */
