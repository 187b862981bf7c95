/*
 * it_retire_lock_kill.c - a creator SIGKILLed while it holds the index
 * lock wedges nobody (kill point BRK__KP_INDEX_LOCKED of libbreaker_hooks:
 * lock held, a slot taken and initialised, not in the index yet).
 *
 * The parent sees the lock still held by the dead child, then: lookups
 * and calls go on without waiting; the next creation takes the lock over
 * (the holder is dead), puts the child's half-made slot on the free list,
 * and creates; the child's name can be created; the lock is free after.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "internal.h"
#include "killpoint.h"

static const char *shm;

static int creator(int idx, void *arg)
{
	char kp[8];
	brk_segment *seg;
	brk_breaker *b;

	(void)idx;
	(void)arg;
	snprintf(kp, sizeof kp, "%d", BRK__KP_INDEX_LOCKED);
	setenv("BRK_KILLPOINT", kp, 1);
	seg = it_attach(shm, 16);
	(void)brk_breaker_get(seg, "x", NULL, &b); /* dies inside */
	return 3;
}

int main(void)
{
	brk_segment *seg;
	brk_breaker *first, *b;
	brk_permit p;
	uint64_t t0, ms, ref1;
	pid_t pid;
	int st = 0;

	it_init("retire_lock_kill", 60);
	shm = it_segment(NULL);
	seg = it_attach(shm, 16);
	if (brk_breaker_get(seg, "first", NULL, &first) != 0)
		return 1;
	ref1 = seg->hdr->arena_next + 1; /* the run the child will take */
	pid = it_fork(creator, 0, NULL);
	CHECK(it_wait(pid, 20000, &st) == 0 && WIFSIGNALED(st) &&
	      WTERMSIG(st) == SIGKILL, "the creator was killed at the kill point");
	CHECK(BRK__TOK_PID(seg->hdr->index_lock) == (uint32_t)pid,
	      "it died holding the index lock");
	t0 = it_now_ms();
	CHECK(brk_breaker_find(seg, "first", &b) == 0 &&
	      brk_acquire(first, &p, NULL) == 0 &&
	      brk_release(&p, BRK_SUCCESS, 0, 0) == 0,
	      "lookups and calls do not wait for the lock");
	CHECK(it_now_ms() - t0 < 100, "... at all (%llu ms)",
	      (unsigned long long)(it_now_ms() - t0));
	t0 = it_now_ms();
	CHECK(brk_breaker_get(seg, "y", NULL, &b) == 0, "a creator takes the lock over");
	ms = it_now_ms() - t0;
	CHECK(ms < 1000, "... without waiting out a timeout (%llu ms)",
	      (unsigned long long)ms);
	CHECK(seg->hdr->free_head[BRK_KIND_BREAKER] == ref1,
	      "the dead creator's half-made slot is on the free list (%llu)",
	      (unsigned long long)seg->hdr->free_head[BRK_KIND_BREAKER]);
	CHECK(brk_breaker_get(seg, "x", NULL, &b) == 0, "the dead creator's name "
	      "can be created");
	CHECK(seg->hdr->index_lock == 0, "the lock is free afterwards");
	brk_detach(seg);
	return it_finish();
}
