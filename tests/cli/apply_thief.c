/*
 * apply_thief.c - an LD_PRELOAD shim for tests/cli/bctl_apply_room.sh
 * (never linked into a product): the $BRKTEST_THIEF_AT-th call of
 * brk_breaker_get() in the process first fills the segment with records
 * of its own ("thief-0", "thief-1", ... until the segment refuses one),
 * then does what was asked - which then finds no room.
 *
 * Why: bctl apply checks the whole file against the room the segment has,
 * then writes; a worker creating records between the two takes that
 * room. In a real race that moment is hit only sometimes; this takes the
 * room at exactly the N-th create of the apply, every run, so the test
 * can see that the N - 1 sections written before are rolled back (records
 * retired, settings of existing records put back).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "breaker.h"

typedef int (*get_fn)(brk_segment *, const char *, const struct brk_config *,
		      brk_breaker **);

int brk_breaker_get(brk_segment *seg, const char *name,
		    const struct brk_config *cfg, brk_breaker **out)
{
	static get_fn real;
	static long calls, at = -1;
	char own[32];
	brk_breaker *b;
	int i;

	if (!real)
		real = (get_fn)dlsym(RTLD_NEXT, "brk_breaker_get");
	if (!real)
		abort();
	if (at < 0) {
		const char *e = getenv("BRKTEST_THIEF_AT");
		at = e ? atol(e) : 0;
	}
	if (++calls == at)
		for (i = 0; i < 1000000; i++) {
			snprintf(own, sizeof(own), "thief-%d", i);
			if (real(seg, own, NULL, &b) != 0)
				break;
		}
	return real(seg, name, cfg, out);
}
