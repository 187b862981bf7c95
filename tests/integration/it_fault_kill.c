/*
 * it_fault_kill.c - kill -9 at random points of acquire/release on a
 * bulkhead: nothing leaks.
 *
 * 8 workers loop brk_acquire / (hold 0-2 ms) / brk_release on a breaker
 * with max_concurrent 3 while breakerd (--interval 50ms) runs. For ~3 s
 * the parent SIGKILLs a random worker after a random delay and starts a
 * new one. Checked: never more than 3 callers inside at once; after every
 * worker is killed, in_flight returns to 0 with no lease left; then 3
 * permits can be taken again and the 4th is refused (-BRK_EFULL).
 *
 * Usage: it_fault_kill BREAKERD_EXE
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#define NW 8
#define MAXC 3u
#define RUN_MS 3000
#define NAME "bulk"

struct shared {
	int inside[NW];          /* worker i is between admission and release */
	int dying[NW];           /* worker i is being killed: once dead, its
	                            permit may be reclaimed (by breakerd or by a
	                            refused caller) before the parent has
	                            cleared inside[i], so it is not counted */
	int over;                /* more than MAXC inside at once */
	int max_inside;
	uint64_t admitted, refused_full;
	int errors, last_err;
};

static const char *shm;
static struct shared *sh;

static void cfg_init(struct brk_config *c)
{
	brk_config_init(c);
	c->failure_threshold = 1000000;
	c->max_concurrent = MAXC;
	c->probe_timeout_ms = 60000;
}

static int worker(int idx, void *arg)
{
	struct brk_config cfg;
	brk_segment *seg;
	brk_breaker *b;
	brk_permit p;
	uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL;
	int rc, i, n;

	(void)arg;
	seg = it_attach(shm, 0);
	cfg_init(&cfg);
	if (brk_breaker_get(seg, NAME, &cfg, &b) != 0)
		return 1;
	for (;;) {
		rc = brk_acquire(b, &p, NULL);
		if (rc == -BRK_EFULL) {
			AT_ADD(&sh->refused_full, 1);
			it_sleep_us(100);
			continue;
		}
		if (rc != 0) {
			AT_ADD(&sh->errors, 1);
			AT_STORE(&sh->last_err, rc);
			it_sleep_us(100);
			continue;
		}
		AT_ADD(&sh->admitted, 1);
		AT_STORE(&sh->inside[idx], 1);
		for (n = 0, i = 0; i < NW; i++)
			/* dying first: the parent clears inside[i] before dying[i] */
			n += !AT_LOAD(&sh->dying[i]) && AT_LOAD(&sh->inside[i]);
		AT_MAX(&sh->max_inside, n);
		if (n > (int)MAXC)
			AT_ADD(&sh->over, 1);
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		it_sleep_us((unsigned)(x % 2000));
		AT_STORE(&sh->inside[idx], 0); /* before the permit is free */
		rc = brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
		if (rc != 0) {
			AT_ADD(&sh->errors, 1);
			AT_STORE(&sh->last_err, rc);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct brk_config cfg;
	struct brk_info info;
	brk_segment *seg;
	brk_breaker *b;
	brk_permit p[MAXC + 1];
	pid_t pids[NW], daemon;
	uint64_t end, deadline, t_all_dead, x = 0x243f6a8885a308d3ULL;
	int i, kills = 0, lib_over = 0, rc, drained = 0, st;
	unsigned u, got;

	it_init("fault_kill", 60);
	if (argc < 2 || access(argv[1], X_OK) != 0)
		it_skip("needs the breakerd executable as argument");
	shm = it_segment(NULL);
	sh = it_shared(sizeof(*sh));
	seg = it_attach(shm, 0);
	cfg_init(&cfg);
	if (brk_breaker_get(seg, NAME, &cfg, &b) != 0) {
		CHECK(0, "brk_breaker_get");
		return it_finish();
	}
	daemon = it_daemon_start(argv[1], shm, "50ms", -1);
	CHECK(it_daemon_wait_heartbeat(seg, daemon, 3000) == 0,
	      "breakerd (pid %d) heartbeats", (int)daemon);

	for (i = 0; i < NW; i++)
		pids[i] = it_fork(worker, i, NULL);
	end = it_now_ms() + RUN_MS;
	while (it_now_ms() < end) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = (int)(x % NW);
		it_sleep_us((unsigned)((x >> 8) % 30000));
		AT_STORE(&sh->dying[i], 1);
		it_kill(pids[i]);
		AT_STORE(&sh->inside[i], 0);
		AT_STORE(&sh->dying[i], 0);
		kills++;
		pids[i] = it_fork(worker, i, NULL);
		it_info(b, &info);
		if (info.in_flight > MAXC)
			lib_over++;
	}
	for (i = 0; i < NW; i++) {
		AT_STORE(&sh->dying[i], 1); /* the survivors may reclaim */
		it_kill(pids[i]);
	}
	t_all_dead = it_now_ms();

	it_note("%d kills; %llu admissions, %llu refused full; max %d inside",
		kills, (unsigned long long)sh->admitted,
		(unsigned long long)sh->refused_full, sh->max_inside);
	CHECK(sh->admitted > 100, "workers made progress (%llu admissions)",
	      (unsigned long long)sh->admitted);
	CHECK(sh->over == 0, "never more than %u callers inside at once "
	      "(%d times more, max %d)", MAXC, sh->over, sh->max_inside);
	CHECK(lib_over == 0, "in_flight never above max_concurrent (%d samples)",
	      lib_over);
	CHECK(sh->errors == 0, "no unexpected return codes (%d, last %d %s)",
	      sh->errors, sh->last_err, brk_strerror(sh->last_err));

	deadline = t_all_dead + 2000;
	while (it_now_ms() < deadline) {
		it_info(b, &info);
		if (info.in_flight == 0 && info.probes_in_flight == 0 &&
		    info.n_leases == 0) {
			drained = 1;
			break;
		}
		it_sleep_ms(5);
	}
	CHECK(drained, "every lease of the killed workers reclaimed: in_flight "
	      "%u, leases %u, %llu ms after the last kill", info.in_flight,
	      info.n_leases, (unsigned long long)(it_now_ms() - t_all_dead));
	CHECK(it_now_ms() - t_all_dead <= 500, "... within 500 ms with "
	      "--interval 50ms");
	CHECK(info.counters.reclaimed >= 1, "reclaimed counter %llu",
	      (unsigned long long)info.counters.reclaimed);
	CHECK(info.state == BRK_CLOSED, "breaker still closed (%s)",
	      brk_state_name(info.state));

	for (got = 0, rc = 0; got < MAXC && rc == 0; got += rc == 0)
		rc = brk_acquire(b, &p[got], NULL);
	CHECK(got == MAXC, "all %u bulkhead permits can be taken again (%d %s)",
	      MAXC, rc, brk_strerror(rc));
	rc = brk_acquire(b, &p[MAXC], NULL);
	CHECK(rc == -BRK_EFULL, "the next one is refused -BRK_EFULL (%d %s)", rc,
	      brk_strerror(rc));
	if (rc == 0)
		brk_release(&p[MAXC], BRK_CANCELLED, BRK_REASON_NONE, 0);
	for (u = 0; u < got; u++)
		brk_release(&p[u], BRK_SUCCESS, BRK_REASON_NONE, 0);
	it_info(b, &info);
	CHECK(info.in_flight == 0, "in_flight 0 after releasing them (%u)",
	      info.in_flight);

	st = it_daemon_stop(daemon, SIGTERM, 3000);
	CHECK(st == 0, "breakerd stopped with status 0 (%d)", st);
	brk_detach(seg);
	return it_finish();
}
