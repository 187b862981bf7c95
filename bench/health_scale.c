/*
 * health_scale.c - what one brk_health() costs on a filled segment
 * (docs/design/observability.md "Health states"): the walk of the name index
 * is O(index_slots), whatever the subtree's size. Public API only.
 *
 *   health-scale SHM NAME [REPS]
 *
 * Attaches SHM (it must exist: e.g. tests/cli/mkrecords SHM 1048576
 * 1000000), walks the index once for another name (faulting the mapping
 * in), evaluates NAME once (the walk of the name index), then REPS (default 20) times more (the
 * handle's cached subtree, the name index unchanged), and prints both,
 * with the segment's record count and the subtree's size.
 */
#include <stdio.h>
#include <stdlib.h>

#include "breaker.h"

int main(int argc, char **argv)
{
	struct brk_attach_opts o;
	struct brk_segment_info si;
	struct brk_health h;
	brk_segment *seg;
	double sum = 0, mn = 1e30, mx = 0, first;
	long reps = argc > 3 ? atol(argv[3]) : 20, i;
	int rc;

	if (argc < 3 || reps < 1) {
		fprintf(stderr, "usage: health-scale SHM NAME [REPS]\n");
		return 2;
	}
	brk_attach_opts_init(&o);
	o.shm_name = argv[1];
	o.flags = BRK_ATTACH_NOCREATE;
	rc = brk_attach(&o, &seg);
	if (rc) {
		fprintf(stderr, "health-scale: %s: %s\n", argv[1], brk_strerror(rc));
		return 1;
	}
	/* fault the mapping in with a walk for a name nobody has, so the
	 * first figure is the walk, not the page faults */
	(void)brk_health(seg, "health-scale-warm-up", &h);
	{
		uint64_t t0 = brk_monotonic_ns(NULL);
		rc = brk_health(seg, argv[2], &h);
		first = (double)(brk_monotonic_ns(NULL) - t0) / 1e6;
	}
	if (rc) {
		fprintf(stderr, "health-scale: %s: %s\n", argv[2], brk_strerror(rc));
		return 1;
	}
	for (i = 0; i < reps; i++) {
		uint64_t t0 = brk_monotonic_ns(NULL), t1;
		double ms;

		brk_health(seg, argv[2], &h);
		t1 = brk_monotonic_ns(NULL);
		ms = (double)(t1 - t0) / 1e6;
		sum += ms;
		mn = ms < mn ? ms : mn;
		mx = ms > mx ? ms : mx;
	}
	if (brk_segment_info(seg, &si) != 0)
		si.used = 0;
	printf("records %llu  name %s  subtree %u  state %s  brk_health: "
	       "first (index walk) %.2f ms; then (cached subtree) mean %.3f ms, "
	       "min %.3f, max %.3f (%ld calls)\n",
	       (unsigned long long)si.used, argv[2], h.children + 1,
	       brk_health_state_name(h.state), first, sum / (double)reps, mn, mx,
	       reps);
	brk_detach(seg);
	return 0;
}
