/*
 * it_shared_trip.c - failures add up across processes and the open
 * breaker holds back every process until its cooling period ends.
 *
 * 8 workers (separate processes, each attaching the segment itself) each
 * report one failure; failure_threshold is 8, so the 8th failure, from
 * whichever process, opens the breaker. Then every worker loops on
 * brk_acquire for ~1.5 s and counts its upstream calls (admissions) in a
 * shared page. Checked: zero admissions before open_ms (500 ms) has
 * passed since the breaker opened; exactly the probe is admitted at the
 * edge, then, the probe having succeeded, every worker is admitted again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#define NW 8
#define OPEN_MS 500u
#define LOOP_MS 1500u
#define NAME "payments"

struct shared {
	int ready, go, reported, go_loop;
	int errors;                  /* unexpected return codes in workers */
	uint64_t max_pre_release_ns; /* latest start of a failure release */
	uint64_t deadline_lo_ns;     /* no admission may end before this */
	uint64_t loop_end_ns;
	uint64_t calls_phase1;
	uint64_t calls;              /* admissions in the loop */
	uint64_t calls_early;        /* ... that ended before deadline_lo */
	uint64_t first_admit_ns;
	uint64_t probe_admits;       /* admissions before the first release */
	uint64_t rejected_open, rejected_other, bad_by;
	uint64_t per_worker[NW];
	int first_release_done;
	int last_err;
};

static const char *shm;
static struct shared *sh;

static void cfg_init(struct brk_config *c)
{
	brk_config_init(c);
	c->failure_threshold = NW;
	c->open_ms = OPEN_MS;
	c->max_open_ms = 8 * OPEN_MS;
	c->probe_timeout_ms = 10000;
}

static void wait_flag(int *flag)
{
	while (!AT_LOAD(flag))
		it_sleep_us(200);
}

static void worker_error(int rc)
{
	AT_ADD(&sh->errors, 1);
	AT_STORE(&sh->last_err, rc);
}

static int worker(int idx, void *arg)
{
	struct brk_refusal why;
	struct brk_config cfg;
	brk_segment *seg;
	brk_breaker *b;
	brk_permit p;
	uint64_t t1;
	int rc;

	(void)arg;
	seg = it_attach(shm, 0);
	cfg_init(&cfg);
	rc = brk_breaker_get(seg, NAME, &cfg, &b);
	if (rc < 0) {
		worker_error(rc);
		return 1;
	}
	AT_ADD(&sh->ready, 1);
	wait_flag(&sh->go);

	/* Phase 1: one call, one failure. */
	rc = brk_acquire(b, &p, NULL);
	if (rc != 0) {
		worker_error(rc);
	} else {
		AT_ADD(&sh->calls_phase1, 1);
		AT_MAX(&sh->max_pre_release_ns, it_now_ns());
		rc = brk_release(&p, BRK_FAILURE, BRK_REASON_SERVER_ERROR, 0);
		if (rc != 0)
			worker_error(rc);
	}
	AT_ADD(&sh->reported, 1);

	/* Phase 2: everyone keeps asking. */
	wait_flag(&sh->go_loop);
	while (it_now_ns() < AT_LOAD(&sh->loop_end_ns)) {
		memset(&why, 0, sizeof(why));
		rc = brk_acquire(b, &p, &why);
		t1 = it_now_ns();
		if (rc == 0) {
			AT_ADD(&sh->calls, 1);
			AT_ADD(&sh->per_worker[idx], 1);
			if (t1 < AT_LOAD(&sh->deadline_lo_ns))
				AT_ADD(&sh->calls_early, 1);
			AT_MIN(&sh->first_admit_ns, t1);
			if (!AT_LOAD(&sh->first_release_done))
				AT_ADD(&sh->probe_admits, 1);
			it_sleep_us(1000); /* the upstream call */
			/* Flag first: an admission after the probe's release
			 * (closed again) is not a second probe. */
			AT_STORE(&sh->first_release_done, 1);
			rc = brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
			if (rc != 0 && rc != -BRK_ESTALE)
				worker_error(rc);
		} else if (rc == -BRK_EOPEN) {
			AT_ADD(&sh->rejected_open, 1);
			if (strcmp(why.by, NAME) != 0)
				AT_ADD(&sh->bad_by, 1);
		} else if (rc == -BRK_ECONTENDED) {
			AT_ADD(&sh->rejected_other, 1);
		} else {
			AT_ADD(&sh->rejected_other, 1);
			worker_error(rc);
		}
		it_sleep_us(300);
	}
	brk_detach(seg);
	return 0;
}

/* Find the breaker's transitions in the event ring, in order. */
static void check_events(brk_segment *seg)
{
	static const int want[3][3] = {
		{ BRK_CLOSED, BRK_OPEN, BRK_EV_THRESHOLD },
		{ BRK_OPEN, BRK_HALF_OPEN, BRK_EV_COOLED },
		{ BRK_HALF_OPEN, BRK_CLOSED, BRK_EV_PROBE_OK },
	};
	struct brk_event ev[64];
	uint64_t cursor = 1, lost = 0;
	int n, i, k = 0;

	while ((n = brk_events_read(seg, &cursor, ev, 64, &lost)) > 0) {
		for (i = 0; i < n; i++) {
			if (strcmp(ev[i].name, NAME) != 0 || k >= 3)
				continue;
			if (ev[i].from == want[k][0] && ev[i].to == want[k][1] &&
			    ev[i].reason == want[k][2])
				k++;
		}
	}
	CHECK(k == 3, "event ring shows closed->open (threshold), "
	      "open->half_open (cooled), half_open->closed (probe_ok) in order "
	      "(found %d of 3)", k);
}

int main(void)
{
	struct brk_config cfg;
	struct brk_info info;
	brk_segment *seg;
	brk_breaker *b;
	uint64_t deadline_ns;
	int i, st, all_exit0 = 1, admitted_workers = 0;
	pid_t pids[NW];

	it_init("shared_trip", 60);
	shm = it_segment(NULL);
	sh = it_shared(sizeof(*sh));
	sh->first_admit_ns = UINT64_MAX;
	seg = it_attach(shm, 0);
	cfg_init(&cfg);
	if (brk_breaker_get(seg, NAME, &cfg, &b) != 0) {
		CHECK(0, "brk_breaker_get");
		return it_finish();
	}

	for (i = 0; i < NW; i++)
		pids[i] = it_fork(worker, i, NULL);
	for (i = 0; i < 500 && AT_LOAD(&sh->ready) < NW; i++)
		it_sleep_ms(10);
	CHECK(AT_LOAD(&sh->ready) == NW, "%d workers attached", NW);
	AT_STORE(&sh->go, 1);
	for (i = 0; i < 500 && AT_LOAD(&sh->reported) < NW; i++)
		it_sleep_ms(1);
	CHECK(AT_LOAD(&sh->reported) == NW, "%d workers reported one failure each",
	      NW);
	CHECK(sh->calls_phase1 == NW, "all %d first calls admitted while closed "
	      "(%llu)", NW, (unsigned long long)sh->calls_phase1);

	it_info(b, &info);
	CHECK(info.state == BRK_OPEN, "breaker is open after %d failures from %d "
	      "processes (state %s)", NW, NW, brk_state_name(info.state));
	CHECK(info.counters.failures == NW, "failures counted across processes: "
	      "%llu == %d", (unsigned long long)info.counters.failures, NW);
	CHECK(info.open_remaining_ms > OPEN_MS - 300 &&
	      info.open_remaining_ms <= OPEN_MS,
	      "open_remaining_ms %llu in (%u, %u]",
	      (unsigned long long)info.open_remaining_ms, OPEN_MS - 300, OPEN_MS);

	/* The breaker opened after every failure release had started. */
	deadline_ns = sh->max_pre_release_ns + (uint64_t)OPEN_MS * 1000000u;
	AT_STORE(&sh->deadline_lo_ns, deadline_ns - 2000000u);
	AT_STORE(&sh->loop_end_ns, sh->max_pre_release_ns +
		 (uint64_t)LOOP_MS * 1000000u);
	AT_STORE(&sh->go_loop, 1);

	for (i = 0; i < NW; i++) {
		st = -1;
		if (it_wait(pids[i], 10000, &st) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			all_exit0 = 0;
	}
	CHECK(all_exit0, "all workers exited 0");
	CHECK(sh->errors == 0, "no unexpected return codes in workers (%d, last %d %s)",
	      sh->errors, sh->last_err, brk_strerror(sh->last_err));

	it_note("loop: %llu admissions, %llu rejected open, %llu other",
		(unsigned long long)sh->calls, (unsigned long long)sh->rejected_open,
		(unsigned long long)sh->rejected_other);
	CHECK(sh->calls_early == 0, "zero upstream calls while open (%llu "
	      "admissions before the %u ms cooling period ended)",
	      (unsigned long long)sh->calls_early, OPEN_MS);
	CHECK(sh->rejected_open > 0, "workers were refused with -BRK_EOPEN while "
	      "open (%llu)", (unsigned long long)sh->rejected_open);
	CHECK(sh->bad_by == 0, "every refusal names the breaker (%llu did not)",
	      (unsigned long long)sh->bad_by);
	CHECK(sh->first_admit_ns != UINT64_MAX &&
	      sh->first_admit_ns < deadline_ns + 250000000u,
	      "admissions resume within 250 ms of the cooling period's end "
	      "(first at %+lld ms)", sh->first_admit_ns == UINT64_MAX ? -1LL :
	      (long long)(sh->first_admit_ns - deadline_ns) / 1000000);
	CHECK(sh->probe_admits == 1, "exactly one probe admitted at the edge "
	      "(%llu)", (unsigned long long)sh->probe_admits);
	for (i = 0; i < NW; i++)
		admitted_workers += sh->per_worker[i] > 0;
	CHECK(admitted_workers == NW, "after the probe closed it, every worker "
	      "was admitted again (%d of %d)", admitted_workers, NW);

	it_info(b, &info);
	CHECK(info.state == BRK_CLOSED, "breaker closed at the end (%s)",
	      brk_state_name(info.state));
	CHECK(info.counters.failures == NW, "failures still %d (%llu)", NW,
	      (unsigned long long)info.counters.failures);
	CHECK(info.counters.probes >= 1, "probes counted (%llu)",
	      (unsigned long long)info.counters.probes);
	CHECK(info.counters.rejected_open >= sh->rejected_open,
	      "rejected_open counter %llu >= refusals seen %llu",
	      (unsigned long long)info.counters.rejected_open,
	      (unsigned long long)sh->rejected_open);
	CHECK(info.counters.transitions >= 3, "transitions >= 3 (%llu)",
	      (unsigned long long)info.counters.transitions);
	check_events(seg);
	brk_detach(seg);
	return it_finish();
}
