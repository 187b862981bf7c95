/*
 * it_health.c - health states across real processes.
 *
 * Process A (a forked child with its own handle) opens the child breaker
 * "shop/cart" by three failures; process B (bctl health shop --json, run
 * as its own program) sees "partial" by shop/cart; A resets shop/cart; B
 * sees "live" again. The event ring then holds exactly two health events
 * for "shop" (live -> partial, partial -> live), written by the bctl
 * processes that noticed them, however many times B looked; and
 * bctl health on a name nothing carries exits 1 with the message.
 *
 * Usage: it_health BCTL_EXE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

#define CAP 8192

struct shared {
	int opened;  /* A: shop/cart is open */
	int go;      /* main: A may reset */
	int reset;   /* A: reset done */
	int rc;      /* A: the first error */
};

static const char *bctl, *shm;
static char out[CAP], err[CAP];

/* Process A: open shop/cart by failures, then reset it when told. */
static int proc_a(int idx, void *arg)
{
	struct shared *sh = arg;
	struct brk_config c;
	brk_segment *seg = it_attach(shm, 0);
	brk_breaker *b;
	brk_permit p;
	int i, rc = 0;

	(void)idx;
	brk_config_init(&c);
	c.failure_threshold = 3;
	c.open_ms = 60000;
	rc = brk_breaker_get(seg, "shop/cart", &c, &b);
	for (i = 0; i < 3 && rc == 0; i++) {
		rc = brk_acquire(b, &p, NULL);
		if (rc == 0)
			rc = brk_release(&p, BRK_FAILURE, BRK_REASON_SERVER_ERROR, 0);
	}
	__atomic_store_n(&sh->rc, rc, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->opened, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 1000 && !__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE); i++)
		it_sleep_ms(10);
	rc = brk_reset(b);
	if (rc && !sh->rc)
		__atomic_store_n(&sh->rc, rc, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->reset, 1, __ATOMIC_RELEASE);
	brk_detach(seg);
	return rc ? 1 : 0;
}

static int wait_flag(int *flag)
{
	int i;

	for (i = 0; i < 1000 && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
		it_sleep_ms(10);
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* bctl health shop --json, @times times; 1 if every answer had @state. */
static int health_is(const char *state, int times)
{
	char want[64];
	int i, rc, ok = 1;

	snprintf(want, sizeof(want), "\"state\": \"%s\"", state);
	for (i = 0; i < times; i++) {
		rc = ft_bctl(bctl, shm, out, err, CAP, "health", "shop", "--json",
			     (char *)NULL);
		ok &= rc == 0 && strstr(out, want) != NULL;
	}
	return ok;
}

int main(int argc, char **argv)
{
	struct brk_event ev[256];
	struct shared *sh;
	brk_segment *seg;
	brk_breaker *shop;
	uint64_t cursor;
	int n, i, k = 0, from[8], to[8], st, rc;
	pid_t a;

	it_init("it_health", 90);
	if (argc < 2 || access(argv[1], X_OK) != 0)
		it_skip("needs the bctl executable as argument");
	bctl = argv[1];
	shm = it_segment(NULL);
	seg = it_attach(shm, 0);
	shop = ft_breaker(seg, "shop", NULL);
	(void)shop;
	sh = it_shared(sizeof(*sh));
	cursor = ft_events_written(seg) + 1;

	CHECK(health_is("live", 2), "before: bctl health shop is live (%s)", out);
	a = it_fork(proc_a, 0, sh);
	CHECK(wait_flag(&sh->opened) && sh->rc == 0,
	      "process A opened shop/cart (rc %d)", sh->rc);
	CHECK(health_is("partial", 3), "bctl health shop sees partial (%s)", out);
	CHECK(strstr(out, "\"by\": \"shop/cart\"") && strstr(out, "\"children\": 1") &&
	      strstr(out, "\"children_unavailable\": 1"),
	      "by shop/cart, 1 child, 1 unavailable");
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	CHECK(wait_flag(&sh->reset) && sh->rc == 0, "process A reset shop/cart");
	CHECK(health_is("live", 3), "bctl health shop is live again (%s)", out);
	CHECK(it_wait(a, 5000, &st) == 0, "process A exited");

	while ((n = brk_events_read(seg, &cursor, ev, 256, NULL)) > 0)
		for (i = 0; i < n; i++) {
			if (ev[i].reason != BRK_EV_HEALTH)
				continue;
			CHECK(strcmp(ev[i].name, "shop") == 0,
			      "a health event names shop (%s)", ev[i].name);
			CHECK(ev[i].pid != getpid() && ev[i].pid != a,
			      "written by a bctl process (pid %d)", (int)ev[i].pid);
			if (k < 8) {
				from[k] = ev[i].from;
				to[k] = ev[i].to;
			}
			k++;
		}
	CHECK(k == 2, "exactly two health events in the ring (%d)", k);
	CHECK(k == 2 && from[0] == BRK_HEALTH_LIVE && to[0] == BRK_HEALTH_PARTIAL &&
	      from[1] == BRK_HEALTH_PARTIAL && to[1] == BRK_HEALTH_LIVE,
	      "live -> partial, partial -> live");

	rc = ft_bctl(bctl, shm, out, err, CAP, "health", "nothing-here", (char *)NULL);
	CHECK(rc == 1 && strstr(err, "bctl: nothing-here: no such breaker, bucket or budget"),
	      "an unknown name: exit 1 with the message (%d, %s)", rc, err);
	rc = ft_bctl(bctl, shm, out, err, CAP, "events", "--json", (char *)NULL);
	CHECK(rc == 0 && strstr(out, "\"to\":\"partial\",\"reason\":\"health\"") &&
	      strstr(out, "\"code\":\"PARTIAL\""),
	      "bctl events --json names the health states and code");
	brk_detach(seg);
	return it_finish();
}
