/*
 * it_forced_states.c - forced states set with bctl act on every process.
 *
 * Workers are separate processes with their own handle on breaker "fx"
 * (failure_threshold 3); the forced states are set by running bctl:
 *
 *  - `bctl force-open fx`: another process's acquire is refused
 *    (-BRK_EOPEN) and counters.rejected_open moves; the state stays
 *    closed; a second force-open is a note on stderr, exit 0, no event;
 *    `bctl inspect` shows the mode;
 *  - `bctl disable fx`: acquires are admitted, closed or open; failures
 *    are counted (counters.failures) but never make a transition;
 *  - `bctl metrics-only fx`: never refused, yet the state machine runs
 *    (3 failures open it: a transition and a "threshold" event) and the
 *    refusals it would have made are counted (rejected_open) while
 *    allowed moves too;
 *  - `bctl reset fx`: back to normal: an open breaker refuses again;
 *  - BREAKERD_DISABLED=1 in one worker's environment: that worker is
 *    admitted while the others are refused (open, and forced open);
 *  - bctl on an unknown breaker exits 1, without NAME 2.
 *
 * Usage: it_forced_states BCTL_EXE
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

#define NAME "fx"
#define CAP 8192

static const char *bctl, *shm;
static char out[CAP], err[CAP];

static int run(const char *cmd, const char *name)
{
	return ft_bctl(bctl, shm, out, err, CAP, cmd, name, (char *)NULL);
}

static void snap(brk_breaker *b, struct brk_info *in)
{
	it_info(b, in);
}

int main(int argc, char **argv)
{
	struct brk_info a, z;
	struct brk_config cfg;
	struct ft_worker *w, *wd;
	brk_segment *seg;
	brk_breaker *b;
	struct brk_event ev[64];
	uint64_t cursor = 1, lost = 0;
	int rc, n, i, forced = 0, threshold_ev = 0, modes[8], nm = 0;

	it_init("it_forced_states", 90);
	if (argc < 2 || access(argv[1], X_OK) != 0)
		it_skip("needs the bctl executable as argument");
	bctl = argv[1];
	shm = it_segment(NULL);
	seg = it_attach(shm, 0);
	brk_config_init(&cfg);
	cfg.failure_threshold = 3;
	cfg.open_ms = 60000;
	b = ft_breaker(seg, NAME, &cfg);
	w = ft_worker_start(shm, NAME, &cfg, 0);
	wd = ft_worker_start(shm, NAME, &cfg, 1);

	ft_worker_calls(w, 1, BRK_SUCCESS, 0);
	CHECK(w->admitted == 1, "normal: a worker is admitted");

	/* ---- force-open ---------------------------------------------- */
	snap(b, &a);
	rc = run("force-open", NAME);
	CHECK(rc == 0 && strstr(out, "forced_open"), "bctl force-open fx: exit %d, '%s'",
	      rc, out);
	ft_worker_calls(w, 1, BRK_SUCCESS, 0);
	snap(b, &z);
	CHECK(w->refused == 1 && w->last_rc == -BRK_EOPEN && strcmp(w->by, NAME) == 0,
	      "forced open: another process is refused with -BRK_EOPEN by fx (rc %d, by '%s')",
	      w->last_rc, w->by);
	CHECK(z.counters.rejected_open == a.counters.rejected_open + 1 &&
	      z.counters.allowed == a.counters.allowed,
	      "forced open: rejected_open +1 (%" PRIu64 " -> %" PRIu64 "), allowed unchanged",
	      a.counters.rejected_open, z.counters.rejected_open);
	CHECK(z.state == BRK_CLOSED && z.mode == BRK_MODE_FORCED_OPEN,
	      "forced open: state still closed, mode forced_open");
	ft_worker_calls(wd, 1, BRK_SUCCESS, 0);
	CHECK(wd->admitted == 1,
	      "forced open: the worker with BREAKERD_DISABLED=1 is admitted (rc %d)",
	      wd->last_rc);
	rc = run("force-open", NAME);
	CHECK(rc == 0 && strstr(err, "already forced_open"),
	      "second force-open: exit %d, note '%s'", rc, err);
	rc = run("inspect", NAME);
	CHECK(rc == 0 && strstr(out, "\nmode:") && strstr(out, "forced_open"),
	      "bctl inspect shows the mode");
	rc = ft_bctl(bctl, shm, out, err, CAP, "inspect", NAME, "--json", (char *)NULL);
	CHECK(rc == 0 && strstr(out, "\"mode\": \"forced_open\""),
	      "bctl inspect --json has \"mode\": \"forced_open\"");

	/* ---- disable --------------------------------------------------- */
	rc = run("disable", NAME);
	CHECK(rc == 0 && strstr(out, "disabled"), "bctl disable fx: exit %d", rc);
	snap(b, &a);
	ft_worker_calls(w, 5, BRK_FAILURE, BRK_REASON_TIMEOUT);
	snap(b, &z);
	CHECK(w->admitted == 5 && w->release_errors == 0,
	      "disabled, closed: 5 calls admitted (admitted %d)", w->admitted);
	CHECK(z.counters.failures == a.counters.failures + 5 &&
	      z.counters.failures_by_reason[BRK_REASON_TIMEOUT] ==
		      a.counters.failures_by_reason[BRK_REASON_TIMEOUT] + 5,
	      "disabled: 5 failures counted (by reason too)");
	CHECK(z.state == BRK_CLOSED && z.counters.transitions == a.counters.transitions,
	      "disabled: 5 failures over a threshold of 3 made no transition");
	CHECK(brk_trip(b, 60000) == 0, "trip fx (state open, still disabled)");
	snap(b, &a);
	ft_worker_calls(w, 3, BRK_FAILURE, BRK_REASON_CONNECT);
	snap(b, &z);
	CHECK(w->admitted == 3 && a.state == BRK_OPEN,
	      "disabled, open: every call admitted (admitted %d)", w->admitted);
	CHECK(z.counters.failures == a.counters.failures + 3 &&
	      z.counters.transitions == a.counters.transitions && z.state == BRK_OPEN,
	      "disabled, open: failures counted, no transition");

	/* ---- metrics-only ---------------------------------------------- */
	rc = run("metrics-only", NAME);
	CHECK(rc == 0 && strstr(out, "metrics_only"), "bctl metrics-only fx: exit %d", rc);
	snap(b, &a);
	ft_worker_calls(w, 2, BRK_SUCCESS, 0);
	snap(b, &z);
	CHECK(w->admitted == 2, "metrics-only, open: never refused (admitted %d)",
	      w->admitted);
	CHECK(z.counters.rejected_open == a.counters.rejected_open + 2 &&
	      z.counters.allowed == a.counters.allowed + 2,
	      "metrics-only: rejected_open +2 and allowed +2 (%" PRIu64 "->%" PRIu64
	      ", %" PRIu64 "->%" PRIu64 ")", a.counters.rejected_open,
	      z.counters.rejected_open, a.counters.allowed, z.counters.allowed);
	rc = run("reset", NAME);
	CHECK(rc == 0, "bctl reset fx");
	snap(b, &a);
	CHECK(a.state == BRK_CLOSED && a.mode == BRK_MODE_NORMAL,
	      "reset: closed, mode normal");
	rc = run("metrics-only", NAME);
	CHECK(rc == 0, "bctl metrics-only fx (closed)");
	ft_worker_calls(w, 3, BRK_FAILURE, BRK_REASON_SERVER_ERROR);
	snap(b, &z);
	CHECK(w->admitted == 3 && z.state == BRK_OPEN &&
	      z.counters.transitions == a.counters.transitions + 1,
	      "metrics-only: 3 failures still open the breaker (state %s, transitions +%"
	      PRIu64 ")", brk_state_name(z.state),
	      z.counters.transitions - a.counters.transitions);
	snap(b, &a);
	ft_worker_calls(w, 1, BRK_SUCCESS, 0);
	snap(b, &z);
	CHECK(w->admitted == 1 && z.counters.rejected_open == a.counters.rejected_open + 1 &&
	      z.counters.allowed == a.counters.allowed + 1,
	      "metrics-only, opened by the state machine: admitted, rejected_open +1, allowed +1");

	/* ---- reset: normal again ----------------------------------------- */
	rc = run("reset", NAME);
	CHECK(rc == 0, "bctl reset fx");
	ft_worker_calls(w, 1, BRK_SUCCESS, 0);
	CHECK(w->admitted == 1, "normal, closed: admitted");
	CHECK(brk_trip(b, 60000) == 0, "trip fx");
	snap(b, &a);
	ft_worker_calls(w, 1, BRK_SUCCESS, 0);
	snap(b, &z);
	CHECK(w->refused == 1 && w->last_rc == -BRK_EOPEN &&
	      z.counters.rejected_open == a.counters.rejected_open + 1,
	      "normal, open: another process is refused again");

	/* ---- BREAKERD_DISABLED=1 ----------------------------------------- */
	ft_worker_calls(wd, 2, BRK_FAILURE, BRK_REASON_TIMEOUT);
	ft_worker_calls(w, 1, BRK_SUCCESS, 0);
	CHECK(wd->admitted == 2 && w->refused == 1,
	      "open: the BREAKERD_DISABLED=1 worker is admitted (%d of 2), the other "
	      "refused (%d of 1)", wd->admitted, w->refused);
	snap(b, &z);
	CHECK(z.state == BRK_OPEN, "... and the breaker is still open");

	/* ---- errors ------------------------------------------------------ */
	rc = run("force-open", "nosuch");
	CHECK(rc == 1 && strstr(err, "no breaker named 'nosuch'"),
	      "force-open of an unknown breaker: exit %d, '%s'", rc, err);
	rc = run("disable", "nosuch");
	CHECK(rc == 1, "disable of an unknown breaker: exit %d", rc);
	rc = run("metrics-only", "nosuch");
	CHECK(rc == 1, "metrics-only of an unknown breaker: exit %d", rc);
	rc = ft_bctl(bctl, shm, out, err, CAP, "disable", (char *)NULL);
	CHECK(rc == 2, "disable without NAME: exit %d (usage)", rc);
	rc = ft_bctl(bctl, shm, out, err, CAP, "force-open", NAME, "extra", (char *)NULL);
	CHECK(rc == 2, "force-open with an extra argument: exit %d (usage)", rc);
	snap(b, &z);
	CHECK(z.mode == BRK_MODE_NORMAL, "... and nothing changed the mode");

	/* ---- events -------------------------------------------------------- */
	while ((n = brk_events_read(seg, &cursor, ev, 64, &lost)) > 0)
		for (i = 0; i < n; i++) {
			if (ev[i].reason == BRK_EV_FORCED && nm < 8)
				modes[nm++] = (int)ev[i].value;
			forced += ev[i].reason == BRK_EV_FORCED;
			threshold_ev += ev[i].reason == BRK_EV_THRESHOLD;
		}
	CHECK(forced == 4 && modes[0] == BRK_MODE_FORCED_OPEN &&
	      modes[1] == BRK_MODE_DISABLED && modes[2] == BRK_MODE_METRICS_ONLY &&
	      modes[3] == BRK_MODE_METRICS_ONLY,
	      "one \"forced\" event per mode change, none for the repeated force-open "
	      "(%d events)", forced);
	CHECK(threshold_ev == 1, "one threshold event (metrics-only opened it)");

	ft_worker_stop(w);
	ft_worker_stop(wd);
	brk_detach(seg);
	return it_finish();
}
