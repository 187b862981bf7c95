/*
 * it_event_ring_overrun.c - the event ring overruns while a reader sleeps: the reader
 * learns exactly how many events it lost, and resumes.
 *
 * The ring has 4096 slots (BRK__EVENT_SLOTS in lib/src/layout.h). Events
 * are written fast by a writer process toggling the breaker's mode
 * (brk_set_mode(): one "forced" event each, value = the new mode).
 *
 * 1. Library: a reader process reads to the end, keeps its cursor and
 *    sleeps; the writer writes W events; the reader reads from its cursor.
 *    For W = 4096, 4097 and 40960 (10x the ring) the lost count must be
 *    exactly max(0, W - 4096); the events returned are the last
 *    min(W, 4096) ones, in order, with consecutive sequence numbers, each
 *    the mode the writer set at that sequence; a further read after a few
 *    more events loses nothing.
 *
 * 2. bctl: `bctl events --follow --json` (stdout and stderr on pipes) is
 *    stopped (SIGSTOP) right after it printed the last event; 40960
 *    events are written; SIGCONT. It must print {"lost":36864} on stdout
 *    and "bctl: 36864 events lost ..." on stderr, then the 4096 kept
 *    events with consecutive seq up to the last one written, then go on
 *    following (one more event is printed).
 *
 * Usage: it_event_ring_overrun BCTL_EXE
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#define SLOTS 4096u
#define NAME "ring/toggle"
#define BIG (10u * SLOTS)

static const char *shm;

struct shared {
	/* writer */
	uint32_t to_write;
	int write_go, write_done, write_errors;
	uint64_t first_seq, last_seq; /* the writer's events */
	/* reader */
	int reader_ready, reader_go, reader_done, reader_exit;
	uint64_t cursor;
	uint64_t lost, got, first, last, more_lost, more_got;
	int not_consecutive, wrong_mode, wrong_name;
};

static struct shared *sh;

static void wait_flag(int *flag)
{
	while (!AT_LOAD(flag))
		it_sleep_us(200);
}

/* The mode written by the toggler at event @seq (see writer()). */
static int mode_at(uint64_t seq)
{
	return seq % 2 ? BRK_MODE_DISABLED : BRK_MODE_NORMAL;
}

/* Write @n forced events; the mode alternates with the event's seq parity
 * (brk_set_mode() to the mode it is not in: exactly one event each). */
static int write_events(brk_segment *seg, brk_breaker *b, uint32_t n)
{
	uint32_t i;
	int errors = 0;

	for (i = 0; i < n; i++) {
		uint64_t next = ft_events_written(seg) + 1;
		/* Nobody else writes while we do: @next is our event's seq. */
		if (brk_set_mode(b, mode_at(next)) != 0)
			errors++;
	}
	return errors;
}

static int writer(int idx, void *arg)
{
	brk_segment *seg = it_attach(shm, 0);
	brk_breaker *b = ft_breaker(seg, NAME, NULL);

	(void)idx;
	(void)arg;
	wait_flag(&sh->write_go);
	sh->first_seq = ft_events_written(seg) + 1;
	sh->write_errors = write_events(seg, b, sh->to_write);
	sh->last_seq = ft_events_written(seg);
	brk_detach(seg);
	AT_STORE(&sh->write_done, 1);
	return 0;
}

/* Read from the cursor until nothing is left; check order and content. */
static void read_all(brk_segment *seg, uint64_t *lost_out, uint64_t *got_out)
{
	static struct brk_event ev[SLOTS + 64];
	uint64_t lost_total = 0, got = 0, lost, prev = 0;
	int n, i, first_call = 1;

	do {
		n = brk_events_read(seg, &sh->cursor, ev, SLOTS + 64, &lost);
		lost_total += lost;
		for (i = 0; i < n; i++) {
			if (got == 0 && first_call)
				sh->first = ev[i].seq;
			if (prev && ev[i].seq != prev + 1)
				sh->not_consecutive++;
			prev = ev[i].seq;
			if (ev[i].reason != BRK_EV_FORCED ||
			    (int)ev[i].value != mode_at(ev[i].seq))
				sh->wrong_mode++;
			if (strcmp(ev[i].name, NAME) != 0)
				sh->wrong_name++;
			got++;
		}
		first_call = 0;
	} while (n > 0);
	sh->last = prev;
	*lost_out = lost_total;
	*got_out = got;
}

static int reader(int idx, void *arg)
{
	brk_segment *seg = it_attach(shm, 0);
	uint64_t lost, got;

	(void)idx;
	(void)arg;
	sh->cursor = 1;
	read_all(seg, &lost, &got); /* catch up: everything so far */
	AT_STORE(&sh->reader_ready, 1);
	wait_flag(&sh->reader_go);  /* "asleep" while the writer runs */
	sh->not_consecutive = sh->wrong_mode = sh->wrong_name = 0;
	read_all(seg, &sh->lost, &sh->got);
	AT_STORE(&sh->reader_done, 1);
	/* Resume: a few more events, nothing lost. */
	wait_flag(&sh->reader_exit);
	read_all(seg, &sh->more_lost, &sh->more_got);
	brk_detach(seg);
	return 0;
}

static void run_writer(uint32_t n)
{
	int st;
	pid_t w;

	memset((char *)sh, 0, offsetof(struct shared, reader_ready));
	sh->to_write = n;
	w = it_fork(writer, 0, NULL);
	AT_STORE(&sh->write_go, 1);
	wait_flag(&sh->write_done);
	it_wait(w, 5000, &st);
	CHECK(sh->write_errors == 0 && sh->last_seq - sh->first_seq + 1 == n,
	      "writer process wrote %u events (seq %" PRIu64 "..%" PRIu64 ")", n,
	      sh->first_seq, sh->last_seq);
}

static void library_case(uint32_t w)
{
	uint64_t want_lost = w > SLOTS ? w - SLOTS : 0;
	uint64_t want_got = w > SLOTS ? SLOTS : w;
	int st;
	pid_t r;

	memset(sh, 0, sizeof(*sh));
	r = it_fork(reader, 0, NULL);
	wait_flag(&sh->reader_ready);
	run_writer(w);
	AT_STORE(&sh->reader_go, 1);
	wait_flag(&sh->reader_done);
	CHECK(sh->lost == want_lost,
	      "W=%u: reader reports exactly %" PRIu64 " lost (got %" PRIu64 ")",
	      w, want_lost, sh->lost);
	CHECK(sh->got == want_got && sh->last == sh->last_seq &&
	      sh->first == sh->last_seq - want_got + 1,
	      "W=%u: then reads the %" PRIu64 " kept events, seq %" PRIu64 "..%"
	      PRIu64 " (got %" PRIu64 ", %" PRIu64 "..%" PRIu64 ")", w, want_got,
	      sh->last_seq - want_got + 1, sh->last_seq, sh->got, sh->first,
	      sh->last);
	CHECK(sh->not_consecutive == 0 && sh->wrong_mode == 0 && sh->wrong_name == 0,
	      "W=%u: in order, consecutive seq, each the writer's event "
	      "(gaps %d, wrong mode %d, wrong name %d)", w, sh->not_consecutive,
	      sh->wrong_mode, sh->wrong_name);
	/* resume */
	run_writer(5);
	AT_STORE(&sh->reader_exit, 1);
	it_wait(r, 5000, &st);
	CHECK(sh->more_lost == 0 && sh->more_got == 5 && sh->last == sh->last_seq,
	      "W=%u: reading resumes: 5 more events, none lost (got %" PRIu64
	      ", lost %" PRIu64 ")", w, sh->more_got, sh->more_lost);
}

/* ---- bctl events --follow ------------------------------------------ */

struct follow_check {
	int lost_line, lost_before_events, gaps, wrong;
	uint64_t lost, first, last, n;
};

static void bctl_case(const char *bctl_exe)
{
	static struct ft_lines out, err;
	struct follow_check fc;
	char line[1024], *args[8];
	int po[2], pe[2], st, rc;
	uint64_t h0, want_lost = BIG - SLOTS;
	pid_t bctl;

	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		it_skip("pipe: %s", strerror(errno));
	args[0] = (char *)bctl_exe;
	args[1] = "--shm";
	args[2] = (char *)shm;
	args[3] = "events";
	args[4] = "--follow";
	args[5] = "--json";
	args[6] = NULL;
	bctl = it_spawn(args, po[1], pe[1]);
	close(po[1]);
	close(pe[1]);
	ft_lines_init(&out, po[0]);
	ft_lines_init(&err, pe[0]);

	/* Let it print everything there is (the first read starts at 1 on
	 * an already overrun ring: not a loss). */
	memset(sh, 0, sizeof(*sh));
	run_writer(1);
	h0 = sh->last_seq;
	do {
		rc = ft_line(&out, line, sizeof(line), 5000);
	} while (rc == 1 && ft_json_u64(line, "seq") != (int64_t)h0);
	if (!CHECK(rc == 1, "bctl printed up to seq %" PRIu64 " before the stop", h0))
		return;

	kill(bctl, SIGSTOP);
	CHECK(waitpid(bctl, &st, WUNTRACED) == bctl && WIFSTOPPED(st),
	      "bctl stopped (the reader sleeps)");
	run_writer(BIG);
	kill(bctl, SIGCONT);

	memset(&fc, 0, sizeof(fc));
	while ((rc = ft_line(&out, line, sizeof(line), 10000)) == 1) {
		int64_t seq = ft_json_u64(line, "seq");
		if (seq < 0 && ft_json_u64(line, "lost") >= 0) {
			fc.lost_line++;
			fc.lost = (uint64_t)ft_json_u64(line, "lost");
			fc.lost_before_events = fc.n == 0;
			continue;
		}
		if (seq < 0) {
			fc.wrong++;
			continue;
		}
		if (fc.n == 0)
			fc.first = (uint64_t)seq;
		else if ((uint64_t)seq != fc.last + 1)
			fc.gaps++;
		if (!ft_json_has(line, "reason", "forced") ||
		    !ft_json_has(line, "mode", brk_mode_name(mode_at((uint64_t)seq))))
			fc.wrong++;
		fc.last = (uint64_t)seq;
		fc.n++;
		if (fc.last == sh->last_seq)
			break;
	}
	CHECK(fc.lost_line == 1 && fc.lost == want_lost && fc.lost_before_events,
	      "bctl --json printed {\"lost\":%" PRIu64 "} once, before the kept "
	      "events (lines %d, lost %" PRIu64 ")", want_lost, fc.lost_line, fc.lost);
	CHECK(fc.n == SLOTS && fc.first == sh->last_seq - SLOTS + 1 &&
	      fc.last == sh->last_seq && fc.gaps == 0 && fc.wrong == 0,
	      "then the %u kept events, seq %" PRIu64 "..%" PRIu64 ", consecutive "
	      "(got %" PRIu64 ", %" PRIu64 "..%" PRIu64 ", gaps %d, wrong %d)",
	      SLOTS, sh->last_seq - SLOTS + 1, sh->last_seq, fc.n, fc.first,
	      fc.last, fc.gaps, fc.wrong);
	rc = ft_line(&err, line, sizeof(line), 2000);
	{
		char want[64];
		snprintf(want, sizeof(want), "bctl: %" PRIu64 " events lost ", want_lost);
		CHECK(rc == 1 && strncmp(line, want, strlen(want)) == 0,
		      "stderr says '%s...' (got '%s')", want, rc == 1 ? line : "");
	}
	/* It follows on. */
	run_writer(1);
	rc = ft_line(&out, line, sizeof(line), 5000);
	CHECK(rc == 1 && ft_json_u64(line, "seq") == (int64_t)sh->last_seq,
	      "and resumes following: seq %" PRIu64 " printed", sh->last_seq);
	CHECK(ft_line(&err, line, sizeof(line), 100) == 0,
	      "no other message on stderr");

	kill(bctl, SIGTERM);
	if (CHECK(it_wait(bctl, 3000, &st) == 0, "bctl ends on SIGTERM"))
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "... with status 0");
	close(po[0]);
	close(pe[0]);
}

int main(int argc, char **argv)
{
	brk_segment *seg;

	it_init("it_event_ring_overrun", 90);
	sh = it_shared(sizeof(*sh));
	shm = it_segment(NULL);
	seg = it_attach(shm, 0);
	ft_breaker(seg, NAME, NULL);

	library_case(SLOTS);
	library_case(SLOTS + 1);
	library_case(BIG);

	if (argc < 2 || access(argv[1], X_OK) != 0)
		it_note("no bctl given: the bctl part is skipped");
	else
		bctl_case(argv[1]);
	brk_detach(seg);
	return it_finish();
}
