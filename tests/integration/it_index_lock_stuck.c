/*
 * it_index_lock_stuck.c - a holder of the index lock that is alive but
 * stuck (stopped, in a debugger) makes creations give up after 2 s; the
 * message says which lock and who holds it (issue 22).
 *
 * A forked child stands for the stuck holder: the parent writes its token
 * into the header's lock word (as brk__index_lock() would have), so the
 * child is alive and never lets go. Then: brk_breaker_get() of a new name
 * returns -BRK_ECONTENDED after about 2 s; brk_segment_info() names the
 * holder's pid (index_lock_pid); `bctl config NEW` exits 1 with a message
 * naming the index lock and that pid; lookups and calls of existing
 * records do not wait. Once the child is dead the next creation takes the
 * lock over.
 *
 * Usage: it_index_lock_stuck [BCTL_EXE] (the bctl part is skipped without)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "internal.h"

static int stuck(int idx, void *arg)
{
	(void)idx;
	(void)arg;
	for (;;)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	struct brk_segment_info si;
	brk_segment *seg;
	brk_breaker *first, *b;
	brk_permit p;
	const char *shm;
	uint64_t t0, ms;
	pid_t pid;
	int rc;

	it_init("index_lock_stuck", 60);
	shm = it_segment(NULL);
	seg = it_attach(shm, 16);
	if (brk_breaker_get(seg, "first", NULL, &first) != 0)
		return 1;
	pid = it_fork(stuck, 0, NULL);
	/* the child holds the lock: its token, no start time written yet */
	seg->hdr->index_lock = BRK__TOK_MAKE((uint32_t)pid, 0, 1);

	t0 = it_now_ms();
	CHECK(brk_breaker_find(seg, "first", &b) == 0 &&
	      brk_acquire(first, &p, NULL) == 0 &&
	      brk_release(&p, BRK_SUCCESS, 0, 0) == 0,
	      "lookups and calls do not wait for the lock");
	CHECK(it_now_ms() - t0 < 100, "... at all (%llu ms)",
	      (unsigned long long)(it_now_ms() - t0));

	t0 = it_now_ms();
	rc = brk_breaker_get(seg, "new", NULL, &b);
	ms = it_now_ms() - t0;
	CHECK(rc == -BRK_ECONTENDED, "a creation gives up: %d (%s)", rc,
	      brk_strerror(rc));
	CHECK(ms >= 1900 && ms < 5000, "... after about 2 s (%llu ms)",
	      (unsigned long long)ms);
	rc = brk_segment_info(seg, &si);
	CHECK(rc == 0 && si.index_lock_pid == pid,
	      "brk_segment_info names the holder: index_lock_pid %d (want %d)",
	      (int)si.index_lock_pid, (int)pid);

	if (argc > 1) {
		char errpath[] = "/tmp/brkit-lock-err.XXXXXX", buf[2048], want[64];
		char *args[] = { argv[1], "--shm", (char *)shm, "config", "other",
				 NULL };
		int efd = mkstemp(errpath), st = -1;
		ssize_t n;

		unlink(errpath);
		pid_t c = it_spawn(args, -1, efd);
		int w = it_wait(c, 20000, &st);
		CHECK(w == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1,
		      "bctl config of a new name exits 1 (status 0x%x)", st);
		n = pread(efd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		snprintf(want, sizeof(want), "held by pid %d", (int)pid);
		CHECK(strstr(buf, "index lock") && strstr(buf, want),
		      "bctl names the index lock and its holder's pid: %s", buf);
		close(efd);
	} else {
		it_note("no bctl given: its message is not checked");
	}

	it_kill(pid); /* the holder dies: the lock is taken over */
	t0 = it_now_ms();
	CHECK(brk_breaker_get(seg, "new", NULL, &b) == 0, "after the holder died "
	      "a creation takes the lock over");
	CHECK(it_now_ms() - t0 < 1000, "... without waiting out a timeout");
	rc = brk_segment_info(seg, &si);
	CHECK(rc == 0 && si.index_lock_pid == 0,
	      "the lock is free afterwards (index_lock_pid %d)", (int)si.index_lock_pid);
	brk_detach(seg);
	return it_finish();
}
