/*
 * bctl_exec_admit.h - brk_admit() for `bctl exec`, with the signals bctl
 * exec forwards let in while it may sleep.
 */
#ifndef BCTL_EXEC_ADMIT_H
#define BCTL_EXEC_ADMIT_H

#include <signal.h>

#include "bctl.h"

/**
 * exec_admit_sig - brk_admit(@q, @a) while the signals of @stops (bctl
 * exec keeps them blocked, to forward them with sigtimedwait) are let in
 * to a handler that only records them: a blocked signal does not end
 * clock_nanosleep, so without this Ctrl-C would wait out the whole
 * --wait. One that comes while brk_admit() sleeps ends the sleep
 * (-EINTR, nothing held); one that comes just before a sleep starts ends
 * it within a second (the handler arms alarm(1), whose handler re-arms
 * it). Afterwards @stops are blocked again and every disposition and
 * SIGALRM's mask are as before. *@sig: the first signal of @stops that
 * came (0: none); with one, brk_admit() may still have returned 0, and
 * the caller releases what it holds. A signal of @stops already pending
 * is taken before brk_admit() is called (it is then not called: -EINTR,
 * @a->code -1). Returns brk_admit()'s result.
 */
int exec_admit_sig(const struct brk_admit_req *q, struct brk_admission *a,
		   const sigset_t *stops, int *sig);

#endif /* BCTL_EXEC_ADMIT_H */
