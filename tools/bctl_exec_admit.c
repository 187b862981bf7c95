/*
 * bctl_exec_admit.c - brk_admit() with bctl exec's forwarded signals let
 * in. See bctl_exec_admit.h.
 *
 * bctl exec blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT for its whole life
 * and takes them with sigtimedwait (its own sleeps, bctl_run.c's
 * forwarding). brk_admit() sleeps with clock_nanosleep, which a blocked
 * signal does not interrupt, and gives up with -EINTR only when a handler
 * ran during the sleep. So around brk_admit() those signals get a handler
 * that records the first one and are unblocked; the race (a signal handled
 * after the check and before brk_admit()'s next sleep starts, which that
 * sleep would not see) is closed by alarm(1) from the handler: SIGALRM's
 * handler re-arms it, so every later sleep is cut within a second.
 * alarm() is async-signal-safe (POSIX.1-2008 2.4.3).
 */
#include "bctl_exec_admit.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t exec_got;

static void exec_on_stop(int sig)
{
	int e = errno;

	if (!exec_got)
		exec_got = sig;
	alarm(1);
	errno = e;
}

static void exec_on_kick(int sig)
{
	int e = errno;

	(void)sig;
	if (exec_got)
		alarm(1);
	errno = e;
}

int exec_admit_sig(const struct brk_admit_req *q, struct brk_admission *a,
		   const sigset_t *stops, int *sig)
{
	static const int known[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	enum { N = sizeof(known) / sizeof(known[0]) };
	struct sigaction sa, old[N], old_alrm;
	struct timespec zero = { 0, 0 };
	sigset_t win, prev, alrm;
	int i, rc = -EINTR;

	memset(a, 0, sizeof(*a)); /* if not called: as brk_admit()'s -EINTR */
	a->code = -1;
	win = *stops;
	sigaddset(&win, SIGALRM);
	memset(&sa, 0, sizeof(sa));
	sa.sa_mask = win; /* no handler runs inside another */
	sa.sa_flags = 0;  /* no SA_RESTART: the sleep must end */
	exec_got = 0;
	sa.sa_handler = exec_on_stop;
	for (i = 0; i < N; i++)
		if (sigismember(stops, known[i]) == 1)
			sigaction(known[i], &sa, &old[i]);
	sa.sa_handler = exec_on_kick;
	sigaction(SIGALRM, &sa, &old_alrm);

	/* a signal already pending is handled here, before brk_admit() */
	sigprocmask(SIG_UNBLOCK, &win, &prev);
	if (!exec_got)
		rc = brk_admit(q, a);
	sigprocmask(SIG_BLOCK, &win, NULL);
	alarm(0);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	while (sigtimedwait(&alrm, NULL, &zero) > 0)
		; /* a kick that came after the sleep: not for later */
	sigaction(SIGALRM, &old_alrm, NULL);
	for (i = 0; i < N; i++)
		if (sigismember(stops, known[i]) == 1)
			sigaction(known[i], &old[i], NULL);
	if (sigismember(&prev, SIGALRM) != 1)
		sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	*sig = exec_got;
	return rc;
}
