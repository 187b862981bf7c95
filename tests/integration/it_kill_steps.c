/*
 * it_kill_steps.c - a worker SIGKILLed at each step between acquire and
 * release (issue 9, "Kill at every step").
 *
 * Linked with libbreaker_hooks (the kill points of lib/src/killpoint.h
 * compiled in; the shipped library has none). For each kill point x
 * {probe, permit} x {with breakerd, without}: a forked worker with
 * BRK_KILLPOINT=<id> acquires and releases one call and is SIGKILLed at
 * that point (or, where the point is not on its path, finishes). Then:
 *   - a lease held at death is marked in the lease map (no daemon);
 *   - the lease comes back: with breakerd (--interval 20ms) within 1 s,
 *     breakerd alone (the test does not call acquire until it is back);
 *     without it, through the caller-side reclaim of a refused acquire or
 *     probe_timeout_ms, within 2 s;
 *   - in_flight and probes_in_flight return to 0;
 *   - the breaker is not stuck: a later call is admitted (after a
 *     re-open's cooling period, as the half-open probe) and its success
 *     leaves the breaker closed;
 *   - counters: a lease held at death is reclaimed exactly once
 *     (reclaimed + 1), none otherwise; allowed counts every admitted call.
 * probe: a breaker with no bulkhead, open with its cooling period over,
 * so the worker's acquire takes the half-open probe. permit: a closed
 * breaker with max_concurrent = 1.
 *
 * Usage: it_kill_steps BREAKERD_EXE
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "internal.h" /* brk__lmap_test(): the lease map */
#include "killpoint.h"

#define OPEN_MS 30
#define PROBE_TIMEOUT_MS 300

/* Which points a call of each kind passes, and whether it holds a
 * current-generation lease when killed there. */
struct kp {
	int id;
	const char *name;
	int probe_fires, probe_holds;
	int permit_fires, permit_holds;
};

static const struct kp kps[] = {
	{ BRK__KP_COOLED, "cooled", 1, 0, 0, 0 },
	{ BRK__KP_LEASE_CLAIMED, "lease_claimed", 1, 1, 1, 1 },
	{ BRK__KP_LEASE_MARKED, "lease_marked", 1, 1, 1, 1 },
	{ BRK__KP_LEASE_META, "lease_meta", 1, 1, 1, 1 },
	{ BRK__KP_LEASE_START, "lease_start", 1, 1, 1, 1 },
	{ BRK__KP_PROBE_CHECKED, "probe_checked", 1, 1, 0, 0 },
	{ BRK__KP_PROBE_ADMITTED, "probe_admitted", 1, 1, 0, 0 },
	{ BRK__KP_PERMIT_ADMITTED, "permit_admitted", 0, 0, 1, 1 },
	{ BRK__KP_REL_PERMIT, "rel_permit_freed", 1, 1, 1, 0 },
	{ BRK__KP_REL_CHECKED, "rel_checked", 1, 1, 1, 0 },
	/* the probe's success closed the breaker: its slot holds a token of
	 * a finished generation, free for the next claim, not reclaimed */
	{ BRK__KP_REL_VERDICT, "rel_verdict", 1, 0, 1, 0 },
	{ BRK__KP_REL_FREED, "rel_freed", 1, 0, 1, 0 },
	/* creation only (it_retire_lock_kill): a call never passes it */
	{ BRK__KP_INDEX_LOCKED, "index_locked", 0, 0, 0, 0 },
};
#define N_KP (sizeof(kps) / sizeof(kps[0]))
_Static_assert(N_KP == BRK__KP_COUNT - 1, "every kill point is tested");

static const char *shm_d, *shm_n;

struct job {
	const char *shm;
	char name[64];
	int kp;
};

static void cfg_for(struct brk_config *c, int permit)
{
	brk_config_init(c);
	c->failure_threshold = 1;
	c->open_ms = OPEN_MS;
	c->max_open_ms = 4 * OPEN_MS;
	c->probe_timeout_ms = PROBE_TIMEOUT_MS;
	c->max_concurrent = permit ? 1 : 0;
}

/* Child: one call, success; dies at its kill point if it is on the path. */
static int worker(int idx, void *arg)
{
	struct job *j = arg;
	brk_segment *seg;
	brk_breaker *b;
	brk_permit p;
	char v[16];
	int rc;

	(void)idx;
	snprintf(v, sizeof(v), "%d", j->kp);
	setenv("BRK_KILLPOINT", v, 1);
	seg = it_attach(j->shm, 0);
	if (brk_breaker_find(seg, j->name, &b) != 0)
		return 2;
	rc = brk_acquire(b, &p, NULL);
	if (rc != 0)
		return 3;
	rc = brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	return rc == 0 ? 0 : 4;
}

static int leases_out(const struct brk_info *i)
{
	return i->in_flight + i->probes_in_flight;
}

static void one(brk_segment *seg, const char *shm, int daemon,
		const struct kp *k, int permit)
{
	const char *tag = daemon ? "breakerd" : "no daemon";
	const char *mode = permit ? "permit" : "probe";
	int fires = permit ? k->permit_fires : k->probe_fires;
	int holds = permit ? k->permit_holds : k->probe_holds;
	struct brk_config cfg;
	struct brk_info info, before;
	struct job *j = it_shared(sizeof(*j));
	brk_breaker *b;
	brk_permit p;
	uint64_t t0, deadline, back = 0, admitted = 0;
	int rc, st = 0, killed, ours = 0;
	pid_t child;

	j->shm = shm;
	j->kp = k->id;
	snprintf(j->name, sizeof(j->name), "kp%d-%s", k->id, mode);
	cfg_for(&cfg, permit);
	rc = brk_breaker_get(seg, j->name, &cfg, &b);
	if (rc != 0) {
		CHECK(0, "brk_breaker_get(%s): %s", j->name, brk_strerror(rc));
		return;
	}
	if (!permit) { /* open it; its cooling period runs out */
		rc = brk_acquire(b, &p, NULL);
		if (rc == 0)
			brk_release(&p, BRK_FAILURE, BRK_REASON_TIMEOUT, 0);
		it_sleep_ms(OPEN_MS + 10);
	}
	it_info(b, &before);

	child = it_fork(worker, 0, j);
	rc = it_wait(child, 5000, &st);
	killed = rc == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	if (fires)
		CHECK(killed, "[%s %s %s] the worker was SIGKILLed at the point "
		      "(status %#x)", tag, mode, k->name, st);
	else
		CHECK(rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "[%s %s %s] not on the path: the worker finished (status "
		      "%#x)", tag, mode, k->name, st);
	if (rc != 0)
		it_kill(child);
	/* A lease held at death is marked in the lease map, so breakerd's
	 * scan visits it: killed right after the claim (lease_claimed), by
	 * the mark made before the claim. Without a daemon nothing clears
	 * the bit; with one, the check would race its scan. */
	if (!daemon && killed && holds)
		CHECK(brk__lmap_test(seg, brk__bidx(b)),
		      "[%s %s %s] the dead worker's record is marked in the lease "
		      "map", tag, mode, k->name);

	/* The lease comes back and a later call is admitted and closes it. */
	t0 = it_now_ms();
	deadline = t0 + (daemon ? 1000 : 2000) + 4 * OPEN_MS;
	while (it_now_ms() < deadline) {
		it_info(b, &info);
		if (!back && leases_out(&info) == 0)
			back = it_now_ms();
		if (daemon && !back) { /* let breakerd do it: no acquire */
			it_sleep_ms(2);
			continue;
		}
		rc = brk_acquire(b, &p, NULL);
		if (rc == 0) {
			ours++;
			it_info(b, &info);
			/* a probe if half-open; a permit if it has a bulkhead */
			CHECK(leases_out(&info) ==
			      (info.state == BRK_HALF_OPEN || permit ? 1 : 0) &&
			      info.in_flight == (uint32_t)permit,
			      "[%s %s %s] the new call (%s) holds the only lease (%u "
			      "permits, %u probes)", tag, mode, k->name,
			      brk_state_name(info.state), info.in_flight,
			      info.probes_in_flight);
			rc = brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
			CHECK(rc == 0, "[%s %s %s] its release is counted (%d %s)",
			      tag, mode, k->name, rc, brk_strerror(rc));
			admitted = it_now_ms();
			if (!back)
				back = admitted;
			break;
		}
		CHECK(brk_is_refusal(rc), "[%s %s %s] acquire refused, not an "
		      "error (%d %s)", tag, mode, k->name, rc, brk_strerror(rc));
		it_sleep_ms(3);
	}
	CHECK(back != 0, "[%s %s %s] the lease came back (%lld ms)", tag, mode,
	      k->name, back ? (long long)(back - t0) : -1LL);
	CHECK(admitted != 0, "[%s %s %s] a later call was admitted (%lld ms)",
	      tag, mode, k->name, admitted ? (long long)(admitted - t0) : -1LL);
	it_info(b, &info);
	CHECK(info.state == BRK_CLOSED && leases_out(&info) == 0,
	      "[%s %s %s] closed, nothing in flight (%s, %u permits, %u probes)",
	      tag, mode, k->name, brk_state_name(info.state), info.in_flight,
	      info.probes_in_flight);
	CHECK(info.counters.reclaimed - before.counters.reclaimed ==
	      (uint64_t)(killed && holds),
	      "[%s %s %s] reclaimed +%llu (a lease was %sheld at death)", tag,
	      mode, k->name,
	      (unsigned long long)(info.counters.reclaimed -
				   before.counters.reclaimed),
	      killed && holds ? "" : "not ");
	{
		/* admitted: the worker's call if it got past admission, ours */
		int worker_admitted = !killed ||
			k->id >= (permit ? BRK__KP_PERMIT_ADMITTED
					 : BRK__KP_PROBE_ADMITTED);
		uint64_t d = info.counters.allowed - before.counters.allowed;
		CHECK(d == (uint64_t)(worker_admitted + ours),
		      "[%s %s %s] allowed +%llu (worker %d, ours %d)", tag, mode,
		      k->name, (unsigned long long)d, worker_admitted, ours);
	}
}

int main(int argc, char **argv)
{
	brk_segment *sd, *sn;
	pid_t d;
	size_t i;
	int permit;

	it_init("kill_steps", 90);
	if (argc < 2 || access(argv[1], X_OK) != 0)
		it_skip("needs the breakerd executable as argument");
	shm_d = it_segment("d");
	shm_n = it_segment("n");
	sd = it_attach(shm_d, 0);
	sn = it_attach(shm_n, 0);
	d = it_daemon_start(argv[1], shm_d, "20ms", -1);
	CHECK(it_daemon_wait_heartbeat(sd, d, 3000) == 0,
	      "breakerd (pid %d) started with --interval 20ms", (int)d);
	for (permit = 0; permit <= 1; permit++)
		for (i = 0; i < N_KP; i++) {
			one(sd, shm_d, 1, &kps[i], permit);
			one(sn, shm_n, 0, &kps[i], permit);
		}
	CHECK(it_daemon_stop(d, SIGTERM, 3000) == 0, "breakerd stopped");
	brk_detach(sd);
	brk_detach(sn);
	return it_finish();
}
