/*
 * it_probe_race.c - at the open -> half-open edge, 8 processes racing
 * brk_acquire admit exactly one probe (half_open_probes = 1).
 *
 * Each round the parent resets the breaker and trips it open for 20-40 ms;
 * the 8 workers spin on brk_acquire through the open period and past the
 * edge. Whoever is admitted counts itself in a shared page and holds the
 * probe while the others keep racing for a further 10 ms; then everyone
 * stops asking, the probe is released (success) and the parent checks that
 * exactly one admission happened in the round. >= 200 rounds, 0 violations.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#define NW 8
#define ROUNDS 220
#define HOLD_MS 10
#define NAME "edge"

enum { PH_IDLE, PH_RACE, PH_STOP, PH_RELEASE };

struct shared {
	int ready, quit;
	int round, phase;
	int acked_stop, acked_release;
	int admits[ROUNDS + 1];
	int errors, last_err, bad_release, last_release_rc;
	uint64_t refusals;
	int where[NW]; /* 1: inside brk_acquire, 2: inside brk_release */
};

static const char *shm;
static struct shared *sh;

static void cfg_init(struct brk_config *c)
{
	brk_config_init(c);
	c->failure_threshold = 1;
	c->open_ms = 1000;
	c->half_open_probes = 1;
	c->success_threshold = 1;
	c->probe_timeout_ms = 60000; /* no reclaim during a round */
}

static int worker(int idx, void *arg)
{
	struct brk_config cfg;
	brk_segment *seg;
	brk_breaker *b;
	brk_permit p;
	int my_round = 0, held, rc;

	(void)arg;
	seg = it_attach(shm, 0);
	cfg_init(&cfg);
	rc = brk_breaker_get(seg, NAME, &cfg, &b);
	if (rc < 0)
		return 1;
	AT_ADD(&sh->ready, 1);
	for (;;) {
		/* Join every round, even one whose race is already over. */
		while (!AT_LOAD(&sh->quit) && AT_LOAD(&sh->round) <= my_round)
			it_sleep_us(100);
		if (AT_LOAD(&sh->quit))
			break;
		my_round = AT_LOAD(&sh->round);
		held = 0;
		while (AT_LOAD(&sh->phase) == PH_RACE) {
			AT_STORE(&sh->where[idx], 1);
			rc = brk_acquire(b, &p, NULL);
			AT_STORE(&sh->where[idx], 0);
			if (rc == 0) {
				AT_ADD(&sh->admits[my_round], 1);
				held = 1;
				break;
			}
			if (rc != -BRK_EOPEN && rc != -BRK_ECONTENDED) {
				AT_ADD(&sh->errors, 1);
				AT_STORE(&sh->last_err, rc);
			}
		}
		while (AT_LOAD(&sh->phase) < PH_STOP)
			it_sleep_us(100);
		AT_ADD(&sh->acked_stop, 1);
		while (AT_LOAD(&sh->phase) < PH_RELEASE)
			it_sleep_us(100);
		if (held) {
			AT_STORE(&sh->where[idx], 2);
			rc = brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
			AT_STORE(&sh->where[idx], 0);
			if (rc != 0) {
				AT_ADD(&sh->bad_release, 1);
				AT_STORE(&sh->last_release_rc, rc);
			}
		}
		AT_ADD(&sh->acked_release, 1);
	}
	brk_detach(seg);
	return 0;
}

static int wait_count(int *ctr, int want, int timeout_ms)
{
	uint64_t deadline = it_now_ms() + (uint64_t)timeout_ms;

	while (AT_LOAD(ctr) < want) {
		if (it_now_ms() > deadline)
			return -1;
		it_sleep_us(200);
	}
	return 0;
}

/* A handshake timed out: say who is where. */
static void stalled(brk_breaker *b, int r, const char *what)
{
	struct brk_info info;
	int i;

	it_info(b, &info);
	it_note("round %d: %s handshake timed out: %d stopped, %d released, "
		"%d admitted; breaker %s, %u probes in flight", r, what,
		AT_LOAD(&sh->acked_stop), AT_LOAD(&sh->acked_release),
		AT_LOAD(&sh->admits[r]), brk_state_name(info.state),
		info.probes_in_flight);
	for (i = 0; i < NW; i++)
		it_note("worker %d: at %s", i, AT_LOAD(&sh->where[i]) == 1 ?
			"acquire" : AT_LOAD(&sh->where[i]) == 2 ? "release" :
			"a handshake");
}

int main(void)
{
	struct brk_config cfg;
	struct brk_info info;
	brk_segment *seg;
	brk_breaker *b;
	int r, i, rc, violations = 0, stuck = 0, bad_inflight = 0, bad_state = 0;
	int trip_errors = 0, shown = 0, st, all_exit0 = 1;
	uint64_t t_start, probes0, t_r, t_a, t_s;
	uint64_t ms_trip = 0, ms_race = 0, ms_hand = 0;
	int bad_probe_ctr = 0;
	pid_t pids[NW];

	it_init("probe_race", 90);
	shm = it_segment(NULL);
	sh = it_shared(sizeof(*sh));
	seg = it_attach(shm, 0);
	cfg_init(&cfg);
	if (brk_breaker_get(seg, NAME, &cfg, &b) != 0) {
		CHECK(0, "brk_breaker_get");
		return it_finish();
	}
	for (i = 0; i < NW; i++)
		pids[i] = it_fork(worker, i, NULL);
	if (wait_count(&sh->ready, NW, 5000) < 0) {
		CHECK(0, "%d workers attached", NW);
		return it_finish();
	}

	t_start = it_now_ms();
	for (r = 1; r <= ROUNDS; r++) {
		t_r = it_now_ns();
		rc = brk_reset(b);
		rc = rc ? rc : brk_trip(b, 20 + (uint64_t)(r % 21));
		if (rc != 0) {
			trip_errors++;
			if (trip_errors == 1)
				it_note("round %d: reset/trip: %d %s", r, rc,
					brk_strerror(rc));
		}
		it_info(b, &info);
		probes0 = info.counters.probes;
		AT_STORE(&sh->acked_stop, 0);
		AT_STORE(&sh->acked_release, 0);
		AT_STORE(&sh->phase, PH_RACE);
		AT_STORE(&sh->round, r);

		t_a = it_now_ns();
		ms_trip += t_a - t_r;
		if (wait_count(&sh->admits[r], 1, 3000) < 0) {
			stuck++;
		} else {
			it_sleep_ms(HOLD_MS); /* the others keep racing */
			it_info(b, &info);
			if (info.probes_in_flight != 1 || info.state != BRK_HALF_OPEN)
				bad_inflight++;
		}
		t_s = it_now_ns();
		ms_race += t_s - t_a;
		AT_STORE(&sh->phase, PH_STOP);
		if (wait_count(&sh->acked_stop, NW, 5000) < 0) {
			stalled(b, r, "stop");
			break;
		}
		AT_STORE(&sh->phase, PH_RELEASE);
		if (wait_count(&sh->acked_release, NW, 5000) < 0) {
			stalled(b, r, "release");
			break;
		}
		AT_STORE(&sh->phase, PH_IDLE);
		ms_hand += it_now_ns() - t_s;
		if (AT_LOAD(&sh->admits[r]) != 1) {
			violations++;
			if (shown++ < 10)
				it_note("round %d: %d admissions", r,
					AT_LOAD(&sh->admits[r]));
		}
		it_info(b, &info);
		if (info.state != BRK_CLOSED)
			bad_state++;
		if (info.counters.probes != probes0 + 1)
			bad_probe_ctr++;
	}
	AT_STORE(&sh->quit, 1);
	for (i = 0; i < NW; i++) {
		st = -1;
		if (it_wait(pids[i], 5000, &st) < 0) {
			it_note("worker %d did not exit", i);
			all_exit0 = 0;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			it_note("worker %d: status 0x%x", i, st);
			all_exit0 = 0;
		}
	}

	it_note("%d rounds in %llu ms (reset+trip %llu ms, race+hold %llu ms, "
		"handshakes %llu ms)", r - 1,
		(unsigned long long)(it_now_ms() - t_start),
		(unsigned long long)ms_trip / 1000000,
		(unsigned long long)ms_race / 1000000,
		(unsigned long long)ms_hand / 1000000);
	CHECK(r == ROUNDS + 1, "all %d rounds completed (handshakes did not hang)",
	      ROUNDS);
	CHECK(trip_errors == 0, "brk_reset + brk_trip succeeded every round "
	      "(%d failed)", trip_errors);
	CHECK(stuck == 0, "a probe was admitted in every round (%d rounds without)",
	      stuck);
	CHECK(violations == 0, "exactly one probe admitted per round across %d "
	      "racing processes: %d violations in %d rounds", NW, violations,
	      r - 1);
	CHECK(bad_inflight == 0, "half_open with probes_in_flight == 1 while held "
	      "(%d rounds otherwise)", bad_inflight);
	CHECK(sh->bad_release == 0, "every probe release counted (%d returned "
	      "%d %s)", sh->bad_release, sh->last_release_rc,
	      brk_strerror(sh->last_release_rc));
	CHECK(bad_state == 0, "the successful probe closed the breaker every "
	      "round (%d rounds not closed)", bad_state);
	CHECK(sh->errors == 0, "no unexpected acquire codes (%d, last %d %s)",
	      sh->errors, sh->last_err, brk_strerror(sh->last_err));
	CHECK(all_exit0, "all workers exited 0");
	CHECK(bad_probe_ctr == 0, "the probes counter rose by exactly 1 per "
	      "round (%d rounds otherwise)", bad_probe_ctr);
	brk_detach(seg);
	return it_finish();
}
