/*
 * killpoint.c - the test-only kill point (see killpoint.h). Compiled only
 * into libbreaker_hooks, never into the shipped library.
 */
#ifndef BRK__TEST_HOOKS
#error "killpoint.c belongs to the test variant libbreaker_hooks only"
#endif
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "killpoint.h"

void (*brk__test_hook)(int id, struct brk_segment *seg, uint32_t ref);

static pid_t kp_pid; /* the process the cached value was read in */
static int kp_id;    /* 0: none */

void brk__killpoint(int id)
{
	pid_t me = getpid();

	if (kp_pid != me) { /* once per process, again in a forked child */
		const char *v = getenv("BRK_KILLPOINT");
		kp_id = v ? atoi(v) : 0;
		kp_pid = me;
	}
	if (kp_id == id)
		raise(SIGKILL);
}
