/*
 * it_admit_reserve.c - brk_admit() across real processes on the real
 * clock (issue 11 §3):
 *
 *  1. The bulkhead reserve holds across processes: breaker max_concurrent
 *     10, reserve_pct 20. 12 processes flood it with normal-priority
 *     admissions (each holds its permit 5 ms, then releases), 2 processes
 *     ask with high priority. Checked: normal work never has more than 8
 *     permits out at once (counted in a shared page between admit and
 *     release), high work gets through (>= 90 % of its tries; a normal
 *     claimer that claims a slot and gives it back may make a high try
 *     find no free slot for an instant), and normal work is refused
 *     BULKHEAD_FULL meanwhile.
 *  2. On the real clock brk_admit() sleeps: a Retry-After of 200 ms cools
 *     the breaker, a job with max_wait 2 s is admitted after >= 200 ms
 *     (adm.wait_ms says how long it slept); a job with 100 ms left is
 *     refused EXPIRED at once (well under 100 ms); a pace of 20/s, burst
 *     1: the second take of a job with max_wait 1 s waits about 50 ms.
 *  3. a_token_due_within_max_wait_is_never_refused_for_its_jitter: a
 *     bucket of 50/s, burst 1, just emptied (next token in <= 20 ms), a
 *     job with max_wait 30 ms: admitted every time (20 of 20). The wake
 *     jitter (up to one interval, 20 ms) pushed the wake past max_wait and
 *     refused RATE_LIMITED 13 of 20 such jobs before the fix.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

#define NORMAL_W 12
#define HIGH_W 2
#define RUN_MS 1500u
#define NAME "svc"

struct shared {
	int ready, go;
	uint64_t end_ns;
	int normal_out, normal_max; /* normal permits out, most seen */
	int total_out, total_max;
	uint64_t normal_go, normal_full, high_go, high_tries, other, errors;
	int last_err;
};

static const char *shm;
static struct shared *sh;

static void cfg_init(struct brk_config *c)
{
	brk_config_init(c);
	c->max_concurrent = 10;
	c->reserve_pct = 20;
	c->failure_threshold = 1000;
}

static int worker(int idx, void *arg)
{
	int high = idx >= NORMAL_W;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_config cfg;
	brk_segment *seg;
	brk_breaker *b;
	int rc;

	(void)arg;
	seg = it_attach(shm, 0);
	cfg_init(&cfg);
	if ((rc = brk_breaker_get(seg, NAME, &cfg, &b)) != 0) {
		AT_ADD(&sh->errors, 1);
		return 1;
	}
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.breaker = b;
	q.priority = high ? BRK_PRIORITY_HIGH : BRK_PRIORITY_NORMAL;
	AT_ADD(&sh->ready, 1);
	while (!AT_LOAD(&sh->go))
		it_sleep_us(200);
	while (it_now_ns() < AT_LOAD(&sh->end_ns)) {
		if (high)
			AT_ADD(&sh->high_tries, 1);
		rc = brk_admit(&q, &a);
		if (rc == 0) {
			int n = AT_ADD(&sh->total_out, 1);
			AT_MAX(&sh->total_max, n);
			if (!high) {
				n = AT_ADD(&sh->normal_out, 1);
				AT_MAX(&sh->normal_max, n);
				AT_ADD(&sh->normal_go, 1);
			} else {
				AT_ADD(&sh->high_go, 1);
			}
			it_sleep_us(5000); /* the upstream call */
			if (!high)
				AT_ADD(&sh->normal_out, -1);
			AT_ADD(&sh->total_out, -1);
			rc = brk_admit_release(&a, BRK_SUCCESS, 0, 0);
			if (rc != 0) {
				AT_ADD(&sh->errors, 1);
				AT_STORE(&sh->last_err, rc);
			}
		} else if (rc == -BRK_EFULL && a.code == BRK_ADMIT_BULKHEAD_FULL) {
			if (!high)
				AT_ADD(&sh->normal_full, 1);
			else
				AT_ADD(&sh->other, 1);
			it_sleep_us(high ? 200 : 500);
		} else if (rc == -BRK_ECONTENDED) {
			AT_ADD(&sh->other, 1);
		} else {
			AT_ADD(&sh->errors, 1);
			AT_STORE(&sh->last_err, rc);
		}
		if (high)
			it_sleep_us(2000);
	}
	brk_detach(seg);
	return 0;
}

static void reserve_across_processes(void)
{
	struct brk_config cfg;
	struct brk_info info;
	brk_segment *seg = it_attach(shm, 0);
	brk_breaker *b;
	int i, st;
	pid_t pids[NORMAL_W + HIGH_W];

	cfg_init(&cfg);
	if (brk_breaker_get(seg, NAME, &cfg, &b) != 0) {
		CHECK(0, "brk_breaker_get");
		return;
	}
	for (i = 0; i < NORMAL_W + HIGH_W; i++)
		pids[i] = it_fork(worker, i, NULL);
	for (i = 0; i < 500 && AT_LOAD(&sh->ready) < NORMAL_W + HIGH_W; i++)
		it_sleep_ms(10);
	CHECK(AT_LOAD(&sh->ready) == NORMAL_W + HIGH_W, "%d workers attached",
	      NORMAL_W + HIGH_W);
	AT_STORE(&sh->end_ns, it_now_ns() + RUN_MS * 1000000ull);
	AT_STORE(&sh->go, 1);
	for (i = 0; i < NORMAL_W + HIGH_W; i++)
		CHECK(it_wait(pids[i], 20000, &st) == 0 && st == 0,
		      "worker %d exited 0", i);
	it_note("normal: %llu admitted, %llu refused BULKHEAD_FULL, most out %d; "
		"high: %llu of %llu admitted; most out in all %d; other %llu",
		(unsigned long long)sh->normal_go, (unsigned long long)sh->normal_full,
		sh->normal_max, (unsigned long long)sh->high_go,
		(unsigned long long)sh->high_tries, sh->total_max,
		(unsigned long long)sh->other);
	CHECK(sh->errors == 0, "no unexpected return codes (%llu, last %d %s)",
	      (unsigned long long)sh->errors, sh->last_err,
	      brk_strerror(sh->last_err));
	CHECK(sh->normal_max <= 8, "normal work never held more than 10 - 20 %% "
	      "= 8 permits at once across %d processes (most %d)", NORMAL_W,
	      sh->normal_max);
	CHECK(sh->normal_max >= 7, "normal work did fill its share (most %d)",
	      sh->normal_max);
	CHECK(sh->normal_full > 0, "normal work was refused BULKHEAD_FULL (%llu)",
	      (unsigned long long)sh->normal_full);
	CHECK(sh->high_tries > 20 && sh->high_go * 10 >= sh->high_tries * 9,
	      "high priority got through while normal was refused: %llu of %llu",
	      (unsigned long long)sh->high_go, (unsigned long long)sh->high_tries);
	CHECK(sh->total_max <= 10, "never more than max_concurrent out (%d)",
	      sh->total_max);
	it_info(b, &info);
	CHECK(info.in_flight == 0, "every permit released (%u)", info.in_flight);
	brk_detach(seg);
}

static void real_clock_sleeps(void)
{
	struct brk_config cfg;
	struct brk_admit_req q;
	struct brk_admission a;
	struct brk_pace_config pc;
	brk_segment *seg = it_attach(shm, 0);
	brk_breaker *b;
	brk_bucket *k;
	brk_permit p;
	uint64_t t0, dt;
	int rc;

	brk_config_init(&cfg);
	if (brk_breaker_get(seg, "cooled", &cfg, &b) != 0 ||
	    brk_acquire(b, &p, NULL) != 0 ||
	    brk_release(&p, BRK_FAILURE, BRK_REASON_RATE_LIMITED, 200) != 0) {
		CHECK(0, "set up a 200 ms cool-until");
		return;
	}
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.breaker = b;
	q.deadline_ns = brk_now_ns(seg) + 100 * 1000000ull;
	q.max_wait_ms = 2000;
	t0 = it_now_ns();
	rc = brk_admit(&q, &a);
	dt = (it_now_ns() - t0) / 1000000u;
	CHECK(rc == -BRK_EEXPIRED && a.code == BRK_ADMIT_EXPIRED && dt < 50,
	      "100 ms left, 200 ms to wait: EXPIRED at once (%s, %llu ms)",
	      brk_strerror(rc), (unsigned long long)dt);
	q.deadline_ns = brk_now_ns(seg) + 2000 * 1000000ull;
	t0 = it_now_ns();
	rc = brk_admit(&q, &a);
	dt = (it_now_ns() - t0) / 1000000u;
	CHECK(rc == 0 && dt >= 150 && dt < 1500 && a.wait_ms + 5 >= dt &&
	      a.wait_ms <= dt,
	      "2 s left: admitted after sleeping out the cooling (%s, %llu ms, "
	      "wait_ms %llu)", brk_strerror(rc), (unsigned long long)dt,
	      (unsigned long long)a.wait_ms);
	if (rc == 0)
		brk_admit_release(&a, BRK_SUCCESS, 0, 0);

	brk_pace_config_init(&pc);
	pc.ceiling_per_s = 20;
	pc.burst = 1;
	if (brk_pace_get(seg, "paced", &pc, &k) != 0) {
		CHECK(0, "brk_pace_get");
		return;
	}
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.pace = k;
	q.max_wait_ms = 1000;
	rc = brk_admit(&q, &a);
	CHECK(rc == 0, "first take at once (%s)", brk_strerror(rc));
	t0 = it_now_ns();
	rc = brk_admit(&q, &a);
	dt = (it_now_ns() - t0) / 1000000u;
	CHECK(rc == 0 && dt >= 30 && dt < 600,
	      "second take of a 20/s pace slept about 50 ms (%s, %llu ms)",
	      brk_strerror(rc), (unsigned long long)dt);
	brk_detach(seg);
}

static void a_token_due_within_max_wait_is_never_refused_for_its_jitter(void)
{
	brk_segment *seg = it_attach(shm, 0);
	struct brk_admit_req q;
	struct brk_admission a;
	brk_bucket *k;
	uint64_t nb;
	int i, refused = 0, rc;
	char name[32];

	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "due%d", i);
		if (brk_bucket_get(seg, name, 50, 1, &k) != 0 ||
		    brk_bucket_take(k, 1, &nb) != 0) {
			CHECK(0, "set up bucket %s", name);
			break;
		}
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.pace = k;
		q.max_wait_ms = 30;
		rc = brk_admit(&q, &a);
		if (rc)
			refused++;
		else
			brk_admit_release(&a, BRK_SUCCESS, 0, 0);
	}
	CHECK(refused == 0, "token due in <= 20 ms, max_wait 30 ms: %d of 20 refused",
	      refused);
	brk_detach(seg);
}

int main(void)
{
	it_init("admit_reserve", 60);
	shm = it_segment(NULL);
	sh = it_shared(sizeof(*sh));
	reserve_across_processes();
	real_clock_sleeps();
	a_token_due_within_max_wait_is_never_refused_for_its_jitter();
	return it_finish();
}
