/*
 * killpoint.h - test-only kill points (private).
 *
 * BRK__KILLPOINT(id) marks a step of acquire or release. In the shipped
 * library it compiles to nothing. In the test variant libbreaker_hooks
 * (built with -DBRK__TEST_HOOKS, linked only by tests/integration/
 * it_kill_steps) it raises SIGKILL if the environment variable
 * BRK_KILLPOINT holds that id, read once per process (again after fork).
 * The ids, in the order a call passes them:
 */
#ifndef BRK_KILLPOINT_H
#define BRK_KILLPOINT_H

enum brk__killpoint {
	BRK__KP_COOLED = 1,          /* acquire: open -> half_open CAS tried */
	BRK__KP_LEASE_CLAIMED = 2,   /* lease owner word claimed, no meta */
	BRK__KP_LEASE_META = 3,      /* meta (claim time) written, no start */
	BRK__KP_LEASE_START = 4,     /* start written, claim not returned */
	BRK__KP_PROBE_CHECKED = 5,   /* probe: state re-checked, no permit yet */
	BRK__KP_PROBE_ADMITTED = 6,  /* probe admitted, counted */
	BRK__KP_PERMIT_ADMITTED = 7, /* closed call admitted, counted */
	BRK__KP_REL_PERMIT = 8,      /* release: permit freed (if any) */
	BRK__KP_REL_CHECKED = 9,     /* release: probe_lost checked */
	BRK__KP_REL_VERDICT = 10,    /* release: verdict counted, probe held */
	BRK__KP_REL_FREED = 11,      /* release: probe slot freed */
	BRK__KP_INDEX_LOCKED = 12,   /* create: index lock held, run taken
	                                and initialised, not in the index */
	BRK__KP_COUNT = 13
};

#ifdef BRK__TEST_HOOKS
void brk__killpoint(int id);
#define BRK__KILLPOINT(id) brk__killpoint(id)
#else
#define BRK__KILLPOINT(id) ((void)0)
#endif

#endif /* BRK_KILLPOINT_H */
