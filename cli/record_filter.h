/*
 * record_filter.h - the record filters `bctl list` and `bctl metrics` share
 * (and breakerd's /metrics, through metrics_render.h):
 * --prefix P, --state STATE, --kind KIND (breaker, bucket, pace: the
 * paced buckets, or budget), --not-closed, --changed-within
 * DUR. They are decided on a struct brk_record_brief (name and state
 * only), so a record that does not match costs no full snapshot.
 */
#ifndef RECORD_FILTER_H
#define RECORD_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "breaker.h"
#include "cli_util.h"

/* Option codes (out of the commands' own ranges). */
enum {
	BCTL_OPT_PREFIX = 0x180,
	BCTL_OPT_STATE,
	BCTL_OPT_KIND,
	BCTL_OPT_NOT_CLOSED,
	BCTL_OPT_CHANGED_WITHIN,
};

#define BCTL_FILTER_LONGOPTS                                               \
	{ "prefix", required_argument, NULL, BCTL_OPT_PREFIX },           \
	{ "state", required_argument, NULL, BCTL_OPT_STATE },             \
	{ "kind", required_argument, NULL, BCTL_OPT_KIND },               \
	{ "not-closed", no_argument, NULL, BCTL_OPT_NOT_CLOSED },         \
	{ "changed-within", required_argument, NULL, BCTL_OPT_CHANGED_WITHIN }

struct bctl_filter {
	const char *prefix;  /* NULL: any name */
	size_t prefix_len;
	int state;           /* enum brk_state, or -1: any (breakers only
	                        when set) */
	int kind;            /* enum brk_kind, or 0: any */
	bool paced;          /* --kind pace: paced buckets only (kind is
	                        BRK_KIND_BUCKET) */
	bool not_closed;     /* breakers whose state is open or half_open */
	bool within;         /* breakers whose last transition is at most
	                        within_ms old */
	uint64_t within_ms;
	unsigned *corrupt;   /* NULL: bctl_filter_next() reports each corrupt
	                        slot or record on stderr; else it only counts
	                        them here, for a caller with its own log
	                        (breakerd's HTTP thread: logfmt, and stderr
	                        notes are not thread-safe) */
};

void bctl_filter_init(struct bctl_filter *f);

/**
 * bctl_filter_opt - handle filter option @c with argument @arg. Returns
 * CLI_CONTINUE (taken), CLI_EXIT_USAGE after a message naming the option,
 * or 0 if @c is not a filter option.
 */
int bctl_filter_opt(struct bctl_filter *f, int c, const char *arg);

/** bctl_filter_match - does the record @b pass every filter of @f? */
bool bctl_filter_match(const struct bctl_filter *f,
		       const struct brk_record_brief *b);

/**
 * bctl_filter_next - the next record that passes @f, walking the name
 * index from *@cur (0: the start): brk_record_next() when no filter is
 * set, else brk_record_next_brief() and brk_info_at() for the records
 * that pass, so a record filtered out costs no full snapshot. A corrupt
 * slot or record is reported on stderr (naming segment @shm), or only
 * counted in *@f->corrupt if that is set, and skipped, with *@bad set.
 * Returns 1 (*@in filled) or 0 (the end).
 */
int bctl_filter_next(const char *shm, brk_segment *seg, uint64_t *cur,
		     const struct bctl_filter *f, struct brk_info *in, int *bad);

/** bctl_filter_any - is any filter set? */
bool bctl_filter_any(const struct bctl_filter *f);

#endif /* RECORD_FILTER_H */
