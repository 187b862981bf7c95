/*
 * it_late_declarer.c - a worker that starts later and declares the same
 * breaker with other settings neither resets its counters nor changes its
 * settings nor extends (or shortens) its open period.
 *
 * The parent declares "svc" (failure_threshold 3, open_ms 1500). Two
 * workers report a failure each; then 8 late processes declare "svc" with
 * failure_threshold 100+ and open_ms 60 s: the 2 failures and the settings
 * stay. A third failure (another process) opens it for 1500 ms; 8 more late
 * processes declare it with open_ms 10 ms or 60 s (and one with NULL) and
 * ask to be admitted: refused, and the open deadline does not move. After
 * the original deadline a probe is admitted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#define NW 8
#define OPEN_MS 1500u
#define NAME "svc"

struct shared {
	int get_errors, last_get_err;
	int saw_threshold_3;   /* late declarers that see the original cfg */
	int refused_open;      /* late declarers refused while open */
	int admitted;          /* late declarers admitted while open (bad) */
	int fail_rc[3];
};

static const char *shm;
static struct shared *sh;

static void cfg_a(struct brk_config *c)
{
	brk_config_init(c);
	c->failure_threshold = 3;
	c->open_ms = OPEN_MS;
	c->max_open_ms = 10000;
	c->probe_timeout_ms = 30000;
}

/* One failure from a process of its own. */
static int failer(int idx, void *arg)
{
	brk_segment *seg = it_attach(shm, 0);
	struct brk_config cfg;
	brk_breaker *b;
	brk_permit p;
	int rc;

	(void)arg;
	cfg_a(&cfg);
	rc = brk_breaker_get(seg, NAME, &cfg, &b);
	if (rc == 0)
		rc = brk_acquire(b, &p, NULL);
	if (rc == 0)
		rc = brk_release(&p, BRK_FAILURE, BRK_REASON_CONNECT, 0);
	sh->fail_rc[idx] = rc;
	brk_detach(seg);
	return rc == 0 ? 0 : 1;
}

/* A late declarer with other settings; while open (arg != NULL) it also
 * asks to be admitted. */
static int declarer(int idx, void *arg)
{
	brk_segment *seg = it_attach(shm, 0);
	struct brk_config cfg;
	struct brk_info info;
	brk_breaker *b;
	brk_permit p;
	int rc;

	brk_config_init(&cfg);
	cfg.failure_threshold = 100 + (uint32_t)idx;
	cfg.open_ms = (idx % 2) ? 10 : 60000;
	cfg.max_open_ms = 600000;
	cfg.probe_timeout_ms = 1000 + (uint64_t)idx;
	cfg.half_open_probes = 1 + (uint32_t)(idx % 3);
	rc = brk_breaker_get(seg, NAME, idx == NW - 1 ? NULL : &cfg, &b);
	if (rc != 0) {
		AT_ADD(&sh->get_errors, 1);
		AT_STORE(&sh->last_get_err, rc);
		return 1;
	}
	if (brk_breaker_info(b, &info) == 0 && info.config.failure_threshold == 3 &&
	    info.config.open_ms == OPEN_MS)
		AT_ADD(&sh->saw_threshold_3, 1);
	if (arg) {
		rc = brk_acquire(b, &p, NULL);
		if (rc == 0) {
			AT_ADD(&sh->admitted, 1);
			brk_release(&p, BRK_CANCELLED, BRK_REASON_NONE, 0);
		} else if (rc == -BRK_EOPEN) {
			AT_ADD(&sh->refused_open, 1);
		}
	}
	brk_detach(seg);
	return 0;
}

static int run_all(int (*fn)(int, void *), int n, void *arg)
{
	pid_t pids[NW];
	int i, st, ok = 1;

	for (i = 0; i < n; i++)
		pids[i] = it_fork(fn, i, arg);
	for (i = 0; i < n; i++) {
		st = -1;
		if (it_wait(pids[i], 10000, &st) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			ok = 0;
	}
	return ok;
}

static void check_cfg_kept(const struct brk_info *i, const char *when)
{
	CHECK(i->config.failure_threshold == 3 && i->config.open_ms == OPEN_MS &&
	      i->config.max_open_ms == 10000 &&
	      i->config.probe_timeout_ms == 30000 &&
	      i->config.half_open_probes == 1,
	      "%s: settings kept (failure_threshold %u, open_ms %llu, "
	      "probe_timeout_ms %llu, half_open_probes %u)", when,
	      i->config.failure_threshold, (unsigned long long)i->config.open_ms,
	      (unsigned long long)i->config.probe_timeout_ms,
	      i->config.half_open_probes);
}

int main(void)
{
	struct brk_config cfg;
	struct brk_info i0, i1;
	brk_segment *seg;
	brk_breaker *b;
	brk_permit p;
	uint64_t deadline_ms, d2, t, t_adm = 0;
	int rc;

	it_init("late_declarer", 60);
	shm = it_segment(NULL);
	sh = it_shared(sizeof(*sh));
	seg = it_attach(shm, 0);
	cfg_a(&cfg);
	if (brk_breaker_get(seg, NAME, &cfg, &b) != 0) {
		CHECK(0, "brk_breaker_get");
		return it_finish();
	}

	/* Closed, two failures from two processes. */
	CHECK(run_all(failer, 2, NULL), "2 processes reported a failure each");
	it_info(b, &i0);
	CHECK(i0.state == BRK_CLOSED && i0.consecutive_failures == 2,
	      "closed with 2 consecutive failures (%s, %llu)",
	      brk_state_name(i0.state),
	      (unsigned long long)i0.consecutive_failures);

	CHECK(run_all(declarer, NW, NULL), "%d late processes declared \"%s\" "
	      "with other settings", NW, NAME);
	CHECK(sh->get_errors == 0, "their brk_breaker_get succeeded (%d errors, "
	      "last %d)", sh->get_errors, sh->last_get_err);
	CHECK(sh->saw_threshold_3 == NW, "each of them sees the original settings "
	      "(%d of %d)", sh->saw_threshold_3, NW);
	it_info(b, &i1);
	CHECK(i1.state == BRK_CLOSED && i1.consecutive_failures == 2 &&
	      i1.generation == i0.generation,
	      "still closed, 2 consecutive failures, same generation (%llu, "
	      "gen %u -> %u)", (unsigned long long)i1.consecutive_failures,
	      i0.generation, i1.generation);
	CHECK(!memcmp(&i0.counters, &i1.counters, sizeof(i0.counters)),
	      "counters untouched by the late declarations (failures %llu)",
	      (unsigned long long)i1.counters.failures);
	check_cfg_kept(&i1, "closed");

	/* The third failure opens it for the original 1500 ms. */
	CHECK(run_all(failer, 1, NULL), "a third process reported a failure");
	it_info(b, &i0);
	t = it_now_ms();
	deadline_ms = t + i0.open_remaining_ms;
	CHECK(i0.state == BRK_OPEN && i0.open_remaining_ms <= OPEN_MS &&
	      i0.open_remaining_ms > OPEN_MS - 300,
	      "open for the original open_ms (%s, %llu ms left)",
	      brk_state_name(i0.state), (unsigned long long)i0.open_remaining_ms);

	sh->saw_threshold_3 = 0;
	CHECK(run_all(declarer, NW, (void *)1), "%d more late processes declared "
	      "it (open_ms 10 ms or 60 s) while open", NW);
	CHECK(sh->admitted == 0 && sh->refused_open == NW,
	      "none of them admitted while open (%d refused open, %d admitted)",
	      sh->refused_open, sh->admitted);
	CHECK(sh->saw_threshold_3 == NW, "each of them sees the original settings "
	      "(%d of %d)", sh->saw_threshold_3, NW);
	it_info(b, &i1);
	d2 = it_now_ms() + i1.open_remaining_ms;
	CHECK(i1.state == BRK_OPEN && i1.generation == i0.generation &&
	      i1.cooling_level == i0.cooling_level,
	      "still open, same generation and cooling level");
	CHECK(d2 + 20 >= deadline_ms && d2 <= deadline_ms + 20,
	      "open deadline neither extended nor shortened (moved %+lld ms)",
	      (long long)d2 - (long long)deadline_ms);
	CHECK(i1.counters.failures == i0.counters.failures &&
	      i1.counters.transitions == i0.counters.transitions,
	      "failure and transition counters untouched (%llu, %llu)",
	      (unsigned long long)i1.counters.failures,
	      (unsigned long long)i1.counters.transitions);
	check_cfg_kept(&i1, "open");

	/* The original deadline holds: a probe right after it. */
	while (it_now_ms() < deadline_ms + 1000) {
		rc = brk_acquire(b, &p, NULL);
		if (rc == 0) {
			t_adm = it_now_ms();
			break;
		}
		it_sleep_ms(3);
	}
	CHECK(t_adm && t_adm + 20 >= deadline_ms && t_adm <= deadline_ms + 300,
	      "the probe is admitted at the original deadline (%+lld ms)",
	      t_adm ? (long long)t_adm - (long long)deadline_ms : 0LL);
	if (t_adm)
		CHECK(brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0) == 0,
		      "probe success released");
	brk_detach(seg);
	return it_finish();
}
