/*
 * rb_core.h - what the files of the breakerd Ruby extension share: the
 * reference-counted segment every object holds, the types' entry points,
 * and (rb_util.h) the helpers that turn library codes into Ruby
 * exceptions and check arguments.
 *
 * The extension holds no rule of its own: every decision is libbreaker's.
 * The GVL stays held around acquire/release/take/deposit/info (a few
 * atomics, tens of ns: cheaper than releasing and re-taking it, and it
 * keeps Segment#close in another thread from unmapping the segment under
 * a call); it is released only in Breakerd.attach, which may wait up to
 * init_wait_ms for another process that is creating the segment.
 */
#ifndef RBK_CORE_H
#define RBK_CORE_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <ruby.h>

#include <breaker.h>

#include "rb_util.h"

/* The segment handle, shared by the Segment object and every object made
 * from it (breakers, permits, buckets...): the last one to go detaches, so
 * a permit collected after its Segment never touches an unmapped segment.
 * Refcounts change under the GVL only. */
struct rbk_seg {
	brk_segment *seg;
	long refs;
	int closed;       /* Segment#close called: calls raise, detach at 0 refs */
	VALUE clock;      /* the FakeClock, marked so it outlives the segment */
};

struct rbk_seg *rbk_seg_ref(struct rbk_seg *s);
void rbk_seg_unref(struct rbk_seg *s);
/* The live handle, or raise Breakerd::Error "segment closed". */
brk_segment *rbk_seg_get(struct rbk_seg *s);
/* The shared handle of a Breakerd::Segment object (rb_segment.c). */
struct rbk_seg *rbk_seg_of(VALUE segment);

extern VALUE rbk_cSegment, rbk_cBreaker, rbk_cPermit, rbk_cBucket,
	rbk_cPace, rbk_cBudget, rbk_cFakeClock;

VALUE rbk_breaker_info_hash(const struct brk_info *in);
VALUE rbk_bucket_info_hash(const struct brk_bucket_info *b);
VALUE rbk_budget_info_hash(const struct brk_budget_info *g);

uint64_t rbk_fake_clock_read(void *ctx);
uint64_t *rbk_fake_clock_ptr(VALUE clock);

void rbk_init_segment(void);
void rbk_init_breaker(void);
void rbk_init_permit(void);
void rbk_init_bucket(void);
void rbk_init_budget(void);
void rbk_init_fakeclock(void);

/* Make a Permit object for a permit admitted by @b (rb_breaker.c -> rb_permit.c). */
VALUE rbk_permit_new(VALUE breaker, struct rbk_seg *s, const brk_permit *p);

#endif
