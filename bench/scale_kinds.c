/*
 * scale_kinds.c - what a record of each kind costs, index included, and
 * how big a segment of a given capacity is.
 *
 * Two segments of SCALE_CAP_A and SCALE_CAP_B records (powers of two, so
 * the name index has exactly 2 slots per record in both) are created one
 * after the other. The difference of their sizes per record of capacity
 * is what a record slot costs with its share of the index; what is left
 * at capacity SCALE_CAP_A is the fixed part (header, event ring).
 *
 * Records are sized by kind (layout 3): the record of a kind costs the
 * arena bytes its creation used (SCALE_PER_KIND records of each kind,
 * brk_segment_info.arena_used_bytes before and after), plus the
 * per-record part of the segment outside the arena (index, lease map);
 * the breakers' figure is also read back from the record itself
 * (brk_info.record_bytes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breaker.h"
#include "bench.h"
#include "scale.h"

#define SCALE_CAP_A 1024u
#define SCALE_CAP_B 2048u
#define SCALE_PER_KIND 64u
#define SCALE_BULKHEAD 10u

static const char *const kind_label[SCALE_KINDS] = {
	[SCALE_BREAKER] = "breaker (no bulkhead)",
	[SCALE_BULKHEAD10] = "breaker + bulkhead of 10",
	[SCALE_BUCKET] = "GCRA bucket",
	[SCALE_BUDGET] = "retry budget",
};

/* Create record @i of @kind; for breakers, *rec_bytes from the record
 * itself when the library reports it (else left alone). */
static int create_one(brk_segment *seg, int kind, uint32_t i,
		      double *rec_bytes)
{
	char name[BRK_NAME_MAX + 1];
	struct brk_config cfg;
	brk_breaker *b;
	brk_bucket *k;
	brk_budget *g;
	int rc;

	snprintf(name, sizeof(name), "scale/kind%d/%u", kind, i);
	switch (kind) {
	case SCALE_BREAKER:
	case SCALE_BULKHEAD10:
		brk_config_init(&cfg);
		if (kind == SCALE_BULKHEAD10)
			cfg.max_concurrent = SCALE_BULKHEAD;
		rc = brk_breaker_get(seg, name, &cfg, &b);
		if (rc == 0) {
			struct brk_info *info = malloc(sizeof(*info));
			if (info && brk_breaker_info(b, info) == 0)
				*rec_bytes = info->record_bytes;
			free(info);
		}
		return rc;
	case SCALE_BUCKET:
		return brk_bucket_get(seg, name, 100.0, 10, &k);
	default:
		return brk_budget_get(seg, name, BRK_DEFAULT_BUDGET_FLOOR,
				      BRK_DEFAULT_BUDGET_RATIO, &g);
	}
}

/* Record bytes of each kind, measured in @seg. */
static int measure_kinds(brk_segment *seg, struct scale_kind_cost cost[],
			 char *why, size_t why_len)
{
	struct brk_segment_info si;
	int kind, rc;
	uint32_t i;

	for (kind = 0; kind < SCALE_KINDS; kind++) {
		double from_record = 0;
		uint64_t before;
		brk_segment_info(seg, &si);
		before = si.arena_used_bytes;
		for (i = 0; i < SCALE_PER_KIND; i++) {
			rc = create_one(seg, kind, i, &from_record);
			if (rc) {
				snprintf(why, why_len, "creating a %s: %s",
					 kind_label[kind], brk_strerror(rc));
				return rc;
			}
		}
		brk_segment_info(seg, &si);
		cost[kind].record_bytes =
			(double)(si.arena_used_bytes - before) / SCALE_PER_KIND;
		if (from_record > 0)
			cost[kind].record_bytes = from_record;
		cost[kind].label = kind_label[kind];
	}
	return 0;
}

/* Create @shm with @capacity; *total and *outside (bytes not in the
 * arena) from its info. */
static int probe(const char *shm, uint32_t capacity, brk_segment **seg,
		 uint64_t *total, uint64_t *outside)
{
	struct brk_segment_info si;
	int rc;

	brk_segment_unlink(shm);
	rc = bench_attach(shm, 0, capacity, seg);
	if (rc)
		return rc;
	brk_segment_info(*seg, &si);
	*total = si.total_size;
	*outside = si.total_size - si.arena_bytes;
	return 0;
}

/**
 * scale_kinds - fill @g (segment geometry) and @cost (bytes per record of
 * each kind). Creates and unlinks @shm twice. Returns 0 or a negative
 * code with the reason in @why.
 */
int scale_kinds(const char *shm, struct scale_geometry *g,
		struct scale_kind_cost cost[SCALE_KINDS], char *why,
		size_t why_len)
{
	uint64_t ta, tb, oa, ob;
	brk_segment *seg;
	int kind, rc;

	memset(g, 0, sizeof(*g));
	memset(cost, 0, sizeof(*cost) * SCALE_KINDS);
	rc = probe(shm, SCALE_CAP_A, &seg, &ta, &oa);
	if (rc) {
		snprintf(why, why_len, "creating a %u-record segment: %s",
			 SCALE_CAP_A, brk_strerror(rc));
		return rc;
	}
	brk_detach(seg);
	brk_segment_unlink(shm);
	rc = probe(shm, SCALE_CAP_B, &seg, &tb, &ob);
	if (rc) {
		snprintf(why, why_len, "creating a %u-record segment: %s",
			 SCALE_CAP_B, brk_strerror(rc));
		return rc;
	}
	g->per_capacity = (double)(tb - ta) / (SCALE_CAP_B - SCALE_CAP_A);
	g->fixed = (double)ta - g->per_capacity * SCALE_CAP_A;
	rc = measure_kinds(seg, cost, why, why_len);
	brk_detach(seg);
	brk_segment_unlink(shm);
	if (rc)
		return rc;
	/* outside the arena, per record: index slots, lease map bits */
	g->index_per_rec = (double)(ob - oa) / (SCALE_CAP_B - SCALE_CAP_A);
	g->method = "arena bytes used by creating the record, plus the index"
		    " and lease map per record of capacity";
	for (kind = 0; kind < SCALE_KINDS; kind++)
		cost[kind].bytes = cost[kind].record_bytes + g->index_per_rec;
	return 0;
}

/**
 * scale_segment_bytes - an upper bound of the size of a segment of
 * @capacity records: the measured bytes per record of capacity plus up
 * to 2 more index slots (8 B each) per record, since the index rounds up
 * to a power of two, plus the fixed part.
 */
uint64_t scale_segment_bytes(const struct scale_geometry *g, uint32_t capacity)
{
	return (uint64_t)(g->fixed + (g->per_capacity + 16.0) * capacity);
}
