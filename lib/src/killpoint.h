/*
 * killpoint.h - test-only kill points (private).
 *
 * BRK__KILLPOINT(id) marks a step of acquire or release. In the shipped
 * library it compiles to nothing. In the test variant libbreaker_hooks
 * (built with -DBRK__TEST_HOOKS, linked only by tests/integration/
 * it_kill_steps and tests/unit/test_leasemap) it raises SIGKILL if the environment variable
 * BRK_KILLPOINT holds that id, read once per process (again after fork).
 * The ids, in the order a call passes them:
 */
#ifndef BRK_KILLPOINT_H
#define BRK_KILLPOINT_H

enum brk__killpoint {
	BRK__KP_COOLED = 1,          /* acquire: open -> half_open CAS tried */
	BRK__KP_LEASE_CLAIMED = 2,   /* lease owner word claimed, not yet
	                                re-marked in the lease map, no meta */
	BRK__KP_LEASE_MARKED = 3,    /* claimed and re-marked, no meta */
	BRK__KP_LEASE_META = 4,      /* meta (claim time) written, no start */
	BRK__KP_LEASE_START = 5,     /* start written, claim not returned */
	BRK__KP_PROBE_CHECKED = 6,   /* probe: state re-checked, no permit yet */
	BRK__KP_PROBE_ADMITTED = 7,  /* probe admitted, counted */
	BRK__KP_PERMIT_ADMITTED = 8, /* closed call admitted, counted */
	BRK__KP_REL_PERMIT = 9,      /* release: permit freed (if any) */
	BRK__KP_REL_CHECKED = 10,    /* release: probe_lost checked */
	BRK__KP_REL_VERDICT = 11,    /* release: verdict counted, probe held */
	BRK__KP_REL_FREED = 12,      /* release: probe slot freed */
	BRK__KP_INDEX_LOCKED = 13,   /* create: index lock held, run taken
	                                and initialised, not in the index */
	BRK__KP_COUNT = 14
};

/*
 * BRK__HOOK(id, seg, ref): a step of a lease claim (lease.c). In the test
 * variant it calls brk__test_hook if a test set it (tests/unit/
 * test_leasemap.c runs the scanner there: the races the lease map's
 * mark, re-mark and re-check exist for); nothing otherwise.
 */
enum brk__hook {
	BRK__HOOK_MARKED = 1,  /* claim: record marked, no slot claimed yet */
	BRK__HOOK_CLAIMED = 2, /* claim: slot claimed, not yet re-marked */
	BRK__HOOK_PACE_HALF = 3, /* brk_pace_update: the first of its two
	                            words written, not the second (ref 0) */
	BRK__HOOK_PACE_READ = 4, /* brk_pace_update: its words read, nothing
	                            written yet (ref 0) */
	BRK__HOOK_PROBE_RECLAIMING = 5, /* brk__reclaim_probe: the dead probe's
	                                   slot taken, its verdict not counted */
	BRK__HOOK_GCRA_LOADED = 6, /* brk__gcra_take: TAT and clock read, the
	                              new TAT computed, its CAS not tried */
	BRK__HOOK_BQ_GONE_SET = 7, /* brk__bq_leave: the leaver's GONE bit
	                              set, SERVED not read again (ref: the
	                              record) */
};

#ifdef BRK__TEST_HOOKS
#include <stdint.h>
struct brk_segment;
void brk__killpoint(int id);
extern void (*brk__test_hook)(int id, struct brk_segment *seg, uint32_t ref);
#define BRK__KILLPOINT(id) brk__killpoint(id)
#define BRK__HOOK(id, seg, ref) \
	do { if (brk__test_hook) brk__test_hook((id), (seg), (ref)); } while (0)
#else
#define BRK__KILLPOINT(id) ((void)0)
#define BRK__HOOK(id, seg, ref) ((void)(seg), (void)(ref))
#endif

#endif /* BRK_KILLPOINT_H */
