/*
 * it_bad_segment.c - bad segment input, across processes.
 *
 * Full table: with capacity 4, 8 processes racing get-or-create of one
 * name make exactly one record; 8 processes racing for 8 new names get 3
 * records and 5 -ENOSPC; the existing records stay intact and a 5th
 * brk_breaker_get of a new name returns -ENOSPC touching nothing.
 *
 * Corruption: a segment is created, then bytes of /dev/shm/<name> are
 * overwritten (open + pwrite, offsets from lib/src/layout.h): wrong magic,
 * version, sizes and offsets, a truncated file, garbage in the name index,
 * in a record's name and kind, in the record count, the event ring, the
 * state, settings and lease words. A fresh child process attaches and
 * exercises the API (find, get, info, acquire, events, reclaim): it must
 * get a clear error (-EPROTO / -BRK_ECORRUPT, -BRK_ETRUNCATED for a file
 * shorter than its header says) where one is due, and must
 * never crash or hang (it must exit normally, not by a signal).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "layout.h"

#define CAP 4u
#define UNITS ((uint32_t)brk__default_arena_units(CAP))
#define NREFS 64u /* brk_info_at() is tried on refs 0 .. NREFS - 1 */
#define NW 8

static const char *shm;
static char shm_path[256];

/* ---- results written by a probing child ------------------------------ */
struct probe_result {
	int done;
	int attach_rc;
	char errbuf[256];
	int find_a, find_b, get_new, info_a, acquire_a, release_a, reclaim;
	int info_at[NREFS];
	uint32_t record_count;
	int events_n, events_calls;
	int seginfo;
};

struct shared {
	struct probe_result pr;
	/* full-table race */
	int get_rc[NW];
	uint32_t get_idx[NW];
};

static struct shared *sh;

/* ---- building and corrupting segments -------------------------------- */
struct made {
	uint32_t idx_a, idx_b;
};

static int make_segment(struct made *m)
{
	struct brk_config cfg;
	struct brk_info info;
	brk_segment *seg;
	brk_breaker *a, *b;
	brk_permit p;
	int rc;

	brk_segment_unlink(shm);
	seg = it_attach(shm, CAP);
	brk_config_init(&cfg);
	cfg.failure_threshold = 3;
	rc = brk_breaker_get(seg, "a", &cfg, &a);
	rc = rc ? rc : brk_breaker_get(seg, "b", NULL, &b);
	if (rc == 0 && brk_acquire(a, &p, NULL) == 0)
		brk_release(&p, BRK_FAILURE, BRK_REASON_CONNECT, 0);
	if (rc == 0) {
		brk_breaker_info(a, &info);
		m->idx_a = info.index;
		brk_breaker_info(b, &info);
		m->idx_b = info.index;
	}
	brk_detach(seg);
	return rc;
}

static void poke(uint64_t off, const void *data, size_t len)
{
	int fd = open(shm_path, O_RDWR);

	if (fd < 0 || pwrite(fd, data, len, (off_t)off) != (ssize_t)len) {
		perror(shm_path);
		it_finish();
		exit(1);
	}
	close(fd);
}

static void poke64(uint64_t off, uint64_t v)
{
	poke(off, &v, 8);
}

static void poke32(uint64_t off, uint32_t v)
{
	poke(off, &v, 4);
}

static uint64_t peek64(uint64_t off)
{
	uint64_t v = 0;
	int fd = open(shm_path, O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &v, 8, (off_t)off) != 8)
			v = 0;
		close(fd);
	}
	return v;
}

static void truncate_to(uint64_t size)
{
	int fd = open(shm_path, O_RDWR);

	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		perror("ftruncate");
		it_finish();
		exit(1);
	}
	close(fd);
}

#define HDR(field) ((uint64_t)offsetof(struct brk__header, field))
#define REC(idx, field) (brk__arena_offset(CAP) + \
	(uint64_t)(idx) * BRK__UNIT + offsetof(struct brk__record, field))

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* The index slot that points at record @idx. */
static int64_t slot_of(uint32_t idx)
{
	uint32_t i, n = brk__index_slots(CAP);
	uint64_t w;

	for (i = 0; i < n; i++) {
		w = peek64(brk__index_offset() + (uint64_t)i * 8);
		if (w && BRK__IDX_REC(w) == idx + 1)
			return i;
	}
	return -1;
}

/* ---- the probing child ----------------------------------------------- */
static int prober(int flags, void *arg)
{
	struct probe_result *r = &sh->pr;
	struct brk_segment_info si;
	struct brk_reclaim_stats rs;
	struct brk_event ev[32];
	struct brk_info info;
	brk_segment *seg = NULL;
	brk_breaker *a = NULL, *b = NULL, *nb = NULL;
	brk_permit p;
	uint64_t cursor = 1, lost;
	uint32_t i;
	int n;

	(void)arg;
	alarm(10); /* a hang is a failure too (killed by SIGALRM) */
	memset(r, 0, sizeof(*r));
	r->attach_rc = it_attach_rc(shm, CAP, (uint32_t)flags, &seg, r->errbuf,
				    sizeof(r->errbuf));
	if (r->attach_rc == 0) {
		r->seginfo = brk_segment_info(seg, &si);
		r->record_count = brk_record_count(seg);
		r->find_a = brk_breaker_find(seg, "a", &a);
		r->find_b = brk_breaker_find(seg, "b", &b);
		if (r->find_a == 0) {
			r->info_a = brk_breaker_info(a, &info);
			r->acquire_a = brk_acquire(a, &p, NULL);
			if (r->acquire_a == 0)
				r->release_a = brk_release(&p, BRK_SUCCESS,
							   BRK_REASON_NONE, 0);
		}
		if (!(flags & BRK_ATTACH_READONLY))
			r->get_new = brk_breaker_get(seg, "newname", NULL, &nb);
		for (i = 0; i < NREFS; i++)
			r->info_at[i] = brk_info_at(seg, i, &info);
		for (r->events_calls = 0; r->events_calls < 1000;
		     r->events_calls++) {
			n = brk_events_read(seg, &cursor, ev, 32, &lost);
			if (n < 0 || n > 32) {
				r->events_n = -1000;
				break;
			}
			r->events_n += n;
			if (n == 0)
				break;
		}
		if (!(flags & BRK_ATTACH_READONLY))
			r->reclaim = brk_reclaim(seg, &rs);
		brk_detach(seg);
	}
	AT_STORE(&r->done, 1);
	return 0;
}

/* Run the prober in a fresh process; 1 if it exited normally. */
static int probe(const char *what, int flags)
{
	pid_t pid;
	int st = -1;

	pid = it_fork(prober, flags, NULL);
	if (it_wait(pid, 15000, &st) < 0) {
		it_kill(pid);
		CHECK(0, "%s: the probing process hung", what);
		return 0;
	}
	if (!CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && sh->pr.done,
		   "%s: the probing process exited normally (status 0x%x%s)",
		   what, st, WIFSIGNALED(st) ? ", killed by a signal" : ""))
		return 0;
	return 1;
}

static int is_clear(int rc)
{
	return rc == -EPROTO || rc == -BRK_ECORRUPT;
}

/* A segment shorter than its header says (0 bytes included) is refused
 * with -BRK_ETRUNCATED, a message naming the segment and saying so, never
 * re-made (issue 22). */
static void expect_truncated(const char *what)
{
	struct probe_result *r = &sh->pr;

	if (!probe(what, 0))
		return;
	CHECK(r->attach_rc == -BRK_ETRUNCATED, "%s: brk_attach refuses: %d %s",
	      what, r->attach_rc, brk_strerror(r->attach_rc));
	CHECK(strstr(r->errbuf, shm) != NULL && strstr(r->errbuf, "truncated"),
	      "%s: the message names the segment and says truncated: \"%s\"",
	      what, r->errbuf);
}

/* Attach must refuse with -EPROTO (or -BRK_ECORRUPT if @corrupt_ok). */
static void expect_refused(const char *what, int corrupt_ok)
{
	struct probe_result *r = &sh->pr;

	if (!probe(what, 0))
		return;
	CHECK(r->attach_rc == -EPROTO || (corrupt_ok && r->attach_rc == -BRK_ECORRUPT),
	      "%s: brk_attach refuses: %d %s", what, r->attach_rc,
	      brk_strerror(r->attach_rc));
	CHECK(strstr(r->errbuf, shm) != NULL, "%s: the message names the "
	      "segment: \"%s\"", what, r->errbuf);
}

/* ---- full table, across processes ------------------------------------ */
static int racer(int idx, void *arg)
{
	const char *mode = arg;
	brk_segment *seg = it_attach(shm, CAP);
	struct brk_info info;
	brk_breaker *b;
	char name[32];

	if (!strcmp(mode, "same"))
		snprintf(name, sizeof(name), "same");
	else
		snprintf(name, sizeof(name), "n%d", idx);
	sh->get_rc[idx] = brk_breaker_get(seg, name, NULL, &b);
	if (sh->get_rc[idx] == 0 && brk_breaker_info(b, &info) == 0)
		sh->get_idx[idx] = info.index;
	brk_detach(seg);
	return 0;
}

static void race(const char *mode)
{
	pid_t pids[NW];
	int i, st;

	memset(sh->get_rc, 0x7f, sizeof(sh->get_rc));
	for (i = 0; i < NW; i++)
		pids[i] = it_fork(racer, i, (void *)mode);
	for (i = 0; i < NW; i++)
		if (it_wait(pids[i], 10000, &st) < 0 || !WIFEXITED(st))
			CHECK(0, "racer %d exited normally", i);
}

static void full_table(void)
{
	struct brk_config cfg;
	struct brk_info info, before;
	brk_segment *seg;
	brk_breaker *same, *x;
	brk_permit p;
	int i, ok = 0, nospc = 0, same_idx = 1, rc, intact = 1;
	char name[32];

	brk_segment_unlink(shm);
	seg = it_attach(shm, CAP);

	race("same");
	for (i = 0; i < NW; i++) {
		if (sh->get_rc[i] != 0 || sh->get_idx[i] != sh->get_idx[0])
			same_idx = 0;
	}
	CHECK(same_idx, "[full] %d processes racing get-or-create of one name "
	      "all got the same record", NW);
	CHECK(brk_record_count(seg) == 1, "[full] exactly one record made (%u)",
	      brk_record_count(seg));

	rc = brk_breaker_find(seg, "same", &same);
	brk_config_init(&cfg);
	cfg.failure_threshold = 7;
	cfg.open_ms = 12345;
	rc = rc ? rc : brk_breaker_configure(same, &cfg);
	for (i = 0; rc == 0 && i < 2; i++) {
		rc = brk_acquire(same, &p, NULL);
		rc = rc ? rc : brk_release(&p, BRK_FAILURE, BRK_REASON_TIMEOUT, 0);
	}
	CHECK(rc == 0, "[full] configured \"same\" and reported 2 failures (%d)",
	      rc);
	it_info(same, &before);

	race("distinct");
	for (i = 0; i < NW; i++) {
		if (sh->get_rc[i] == 0)
			ok++;
		else if (sh->get_rc[i] == -ENOSPC)
			nospc++;
	}
	CHECK(ok == (int)CAP - 1 && nospc == NW - ((int)CAP - 1),
	      "[full] 8 processes racing for 8 new names in a table with room "
	      "for 3: %d made, %d -ENOSPC", ok, nospc);
	CHECK(brk_record_count(seg) == CAP, "[full] record count %u == capacity",
	      brk_record_count(seg));

	rc = brk_breaker_get(seg, "fifth", NULL, &x);
	CHECK(rc == -ENOSPC, "[full] one more brk_breaker_get -> -ENOSPC (%d %s)",
	      rc, brk_strerror(rc));
	CHECK(brk_record_count(seg) == CAP, "[full] ... and no record touched "
	      "(%u)", brk_record_count(seg));
	rc = brk_breaker_get(seg, "same", NULL, &x);
	CHECK(rc == 0, "[full] get of an existing name still works when full "
	      "(%d)", rc);

	it_info(same, &info);
	CHECK(info.config.failure_threshold == 7 && info.config.open_ms == 12345 &&
	      info.consecutive_failures == 2 && info.state == BRK_CLOSED &&
	      !memcmp(&info.counters, &before.counters, sizeof(info.counters)),
	      "[full] \"same\" intact: settings, 2 failures, counters");
	for (i = 0; i < NW; i++) {
		if (sh->get_rc[i] != 0)
			continue;
		snprintf(name, sizeof(name), "n%d", i);
		rc = brk_breaker_find(seg, name, &x);
		if (rc != 0 || brk_breaker_info(x, &info) != 0 ||
		    strcmp(info.name, name) || info.index != sh->get_idx[i] ||
		    info.state != BRK_CLOSED || info.counters.failures != 0)
			intact = 0;
	}
	CHECK(intact, "[full] the 3 racing winners' records are intact and "
	      "findable under their names");
	{
		uint32_t ref, live = 0;
		for (ref = 1; ref < UNITS; ref++)
			live += brk_info_at(seg, ref, &info) == 0;
		CHECK(live == CAP, "[full] brk_info_at finds all %u records (%u)",
		      CAP, live);
	}
	brk_detach(seg);

	/* The same from a fresh process. */
	if (probe("[full] fresh process", 0)) {
		CHECK(sh->pr.attach_rc == 0 && sh->pr.find_a == -ENOENT &&
		      sh->pr.get_new == -ENOSPC && sh->pr.record_count == CAP,
		      "[full] a fresh process: attach %d, find of a missing name "
		      "%d, get of a new name %d, %u records", sh->pr.attach_rc,
		      sh->pr.find_a, sh->pr.get_new, sh->pr.record_count);
	}
	brk_segment_unlink(shm);
}

/* ---- corruption cases ------------------------------------------------ */
static void header_cases(void)
{
	struct made m;

	make_segment(&m);
	poke64(HDR(magic), 0x4141414141414141ULL);
	expect_refused("wrong magic", 0);
	if (probe("wrong magic, read-only attach", BRK_ATTACH_READONLY))
		CHECK(sh->pr.attach_rc == -EPROTO, "wrong magic, read-only attach: "
		      "%d %s", sh->pr.attach_rc, brk_strerror(sh->pr.attach_rc));

	make_segment(&m);
	poke32(HDR(version), BRK__LAYOUT_VERSION + 98);
	expect_refused("wrong layout version", 0);

	make_segment(&m);
	poke64(HDR(total_size), brk__total_size(CAP, UNITS) + 4096);
	expect_refused("wrong total_size in the header", 0);

	make_segment(&m);
	truncate_to(brk__total_size(CAP, UNITS) / 2);
	expect_truncated("file truncated to half its size");

	make_segment(&m);
	truncate_to(1000);
	expect_truncated("file truncated below the header size");

	make_segment(&m);
	truncate_to(0);
	expect_truncated("file emptied to 0 bytes");

	make_segment(&m);
	poke32(HDR(capacity), 1000000);
	expect_refused("capacity field changed", 1);

	make_segment(&m);
	poke32(HDR(header_size), 64);
	expect_refused("header_size changed", 1);

	make_segment(&m);
	poke64(HDR(index_offset), 1ULL << 40);
	expect_refused("index_offset out of bounds", 1);

	make_segment(&m);
	poke64(HDR(events_offset), brk__total_size(CAP, UNITS) - 64);
	expect_refused("events_offset at the end of the segment", 1);

	make_segment(&m);
	poke32(HDR(unit_size), 128);
	expect_refused("unit_size changed", 1);
	make_segment(&m);
	poke32(HDR(arena_units), UNITS + 1);
	expect_refused("arena_units changed", 1);

	make_segment(&m);
	poke64(HDR(lmap_offset), brk__total_size(CAP, UNITS) - 8);
	expect_refused("lease map at the end of the segment", 1);

	make_segment(&m);
	poke64(HDR(lmap_words), 1ULL << 40);
	expect_refused("lease map larger than the segment", 1);
}

static void index_cases(void)
{
	struct probe_result *r = &sh->pr;
	struct made m;
	int64_t sa, sb;
	uint64_t w;
	uint32_t i;

	/* Slot of "a" points past the records, hash kept. */
	make_segment(&m);
	sa = slot_of(m.idx_a);
	CHECK(sa >= 0, "index slot of \"a\" found");
	if (sa < 0)
		return;
	w = peek64(brk__index_offset() + (uint64_t)sa * 8);
	poke64(brk__index_offset() + (uint64_t)sa * 8,
	       BRK__IDX_MAKE(BRK__IDX_HASH(w), 0xffffffffu));
	if (probe("index: record number out of range", 0)) {
		CHECK(r->attach_rc == 0, "index: out of range: attach %d",
		      r->attach_rc);
		CHECK(r->find_a == -BRK_ECORRUPT, "index: out of range: "
		      "find(\"a\") -> -BRK_ECORRUPT (%d %s)", r->find_a,
		      brk_strerror(r->find_a));
		CHECK(r->find_b == 0, "index: out of range: \"b\" still found "
		      "(%d)", r->find_b);
	}

	/* Slot of "a" points at "b"'s record. */
	make_segment(&m);
	sa = slot_of(m.idx_a);
	sb = slot_of(m.idx_b);
	if (sa >= 0 && sb >= 0) {
		w = peek64(brk__index_offset() + (uint64_t)sa * 8);
		poke64(brk__index_offset() + (uint64_t)sa * 8,
		       BRK__IDX_MAKE(BRK__IDX_HASH(w), m.idx_b + 1));
		if (probe("index: slot points at another name's record", 0))
			CHECK(r->find_a != 0 && r->find_b == 0,
			      "index: wrong record: find(\"a\") never returns "
			      "\"b\"'s record (%d %s), \"b\" found (%d)",
			      r->find_a, brk_strerror(r->find_a), r->find_b);
	}

	/* Slot of "a" points at an allocated-but-unpublished record. */
	make_segment(&m);
	sa = slot_of(m.idx_a);
	if (sa >= 0) {
		w = peek64(brk__index_offset() + (uint64_t)sa * 8);
		poke64(brk__index_offset() + (uint64_t)sa * 8,
		       BRK__IDX_MAKE(BRK__IDX_HASH(w), CAP));
		if (probe("index: slot points at an unpublished record", 0))
			CHECK(r->find_a == -BRK_ECORRUPT || r->find_a == -ENOENT,
			      "index: unpublished record: find(\"a\") -> %d %s",
			      r->find_a, brk_strerror(r->find_a));
	}

	/* Every slot garbage: no empty slot, no valid record number. */
	make_segment(&m);
	for (i = 0; i < brk__index_slots(CAP); i++)
		poke64(brk__index_offset() + (uint64_t)i * 8,
		       BRK__IDX_MAKE(rnd(), CAP + 1 + (rnd() % 1000000)));
	if (probe("index: every slot garbage", 0)) {
		CHECK(r->attach_rc == 0 || is_clear(r->attach_rc),
		      "index: all garbage: attach %d", r->attach_rc);
		if (r->attach_rc == 0) {
			CHECK(r->find_a == -BRK_ECORRUPT || r->find_a == -ENOENT,
			      "index: all garbage: find(\"a\") -> %d %s", r->find_a,
			      brk_strerror(r->find_a));
			CHECK(r->get_new == -BRK_ECORRUPT || r->get_new == -ENOSPC,
			      "index: all garbage: get of a new name -> %d %s",
			      r->get_new, brk_strerror(r->get_new));
		}
	}
}

static void record_cases(void)
{
	struct probe_result *r = &sh->pr;
	unsigned char junk[BRK__NAME_BYTES];
	struct made m;
	uint32_t i;

	/* "a"'s name: 64 bytes of 0xff, no NUL. */
	make_segment(&m);
	memset(junk, 0xff, sizeof(junk));
	poke(REC(m.idx_a, name), junk, sizeof(junk));
	if (probe("record: name garbage", 0)) {
		CHECK(r->find_a == -BRK_ECORRUPT, "record: name garbage: "
		      "find(\"a\") -> -BRK_ECORRUPT (%d %s)", r->find_a,
		      brk_strerror(r->find_a));
		CHECK(r->info_at[m.idx_a] == -BRK_ECORRUPT, "record: name garbage: "
		      "brk_info_at -> -BRK_ECORRUPT (%d)", r->info_at[m.idx_a]);
		CHECK(r->find_b == 0, "record: name garbage: \"b\" unaffected");
	}

	/* "a"'s name: a valid but different name. */
	make_segment(&m);
	poke(REC(m.idx_a, name), "zzz\0", 4);
	if (probe("record: name replaced", 0))
		CHECK(r->find_a == -BRK_ECORRUPT || r->find_a == -ENOENT,
		      "record: name replaced: find(\"a\") -> %d %s", r->find_a,
		      brk_strerror(r->find_a));

	/* "a"'s kind: 77. */
	make_segment(&m);
	poke64(REC(m.idx_a, head), 77);
	if (probe("record: kind garbage", 0))
		CHECK(r->find_a == -BRK_ECORRUPT, "record: kind garbage: "
		      "find(\"a\") -> -BRK_ECORRUPT (%d %s)", r->find_a,
		      brk_strerror(r->find_a));

	/* Record count beyond the capacity. */
	make_segment(&m);
	poke64(HDR(live_records), 0xffffffffffffULL);
	if (probe("header: live_records garbage", 0)) {
		CHECK(r->attach_rc == 0 || is_clear(r->attach_rc),
		      "record_count garbage: attach %d", r->attach_rc);
		if (r->attach_rc == 0)
			CHECK(r->record_count <= CAP, "record_count garbage: "
			      "brk_record_count bounded by the capacity (%u)",
			      r->record_count);
	}

	/* State, settings and lease words of "a": random bits. */
	make_segment(&m);
	poke64(REC(m.idx_a, state), rnd());
	poke64(REC(m.idx_a, fails), rnd());
	poke64(REC(m.idx_a, ho_successes), rnd());
	poke64(REC(m.idx_a, cool_until_ns), rnd());
	for (i = 0; i < 8; i++)
		poke64(REC(m.idx_a, cfg) + i * 8, (i % 2) ? rnd() : 0);
	for (i = 0; i < 4; i++)
		poke64(REC(m.idx_a, probe0) + i * 8, rnd());
	/* extension links: garbage refs are bounds-checked, never followed
	 * out of the arena */
	poke64(REC(m.idx_a, ext_refs), rnd());
	poke64(REC(m.idx_a, permit_refs), rnd());
	if (probe("record: state, settings and leases garbage", 0))
		CHECK(r->attach_rc == 0 && r->find_a == 0 && r->info_a == 0,
		      "record garbage words: attach, find and info still answer "
		      "(acquire %d %s, reclaim %d)", r->acquire_a,
		      brk_strerror(r->acquire_a), r->reclaim);
}

static void event_cases(void)
{
	struct probe_result *r = &sh->pr;
	struct made m;
	uint64_t off = brk__events_offset(CAP, UNITS);
	uint32_t i;

	make_segment(&m);
	poke64(HDR(event_head), 0x7fffffffffffff00ULL);
	for (i = 0; i < 64 * (BRK__EVENT_SIZE / 8); i++)
		poke64(off + (uint64_t)i * 8, rnd());
	if (probe("events: head and slots garbage", 0))
		CHECK(r->attach_rc != 0 ||
		      (r->events_n >= 0 && r->events_calls < 1000),
		      "events garbage: brk_events_read stays bounded (%d events "
		      "in %d calls)", r->events_n, r->events_calls);
}

int main(void)
{
	it_init("bad_segment", 100);
	shm = it_segment(NULL);
	snprintf(shm_path, sizeof(shm_path), "/dev/shm%s", shm);
	sh = it_shared(sizeof(*sh));

	full_table();
	header_cases();
	index_cases();
	record_cases();
	event_cases();
	/* A sound segment still passes everything (the prober is fair). */
	{
		struct made m;

		make_segment(&m);
		if (probe("control: an intact segment", 0))
			CHECK(sh->pr.attach_rc == 0 && sh->pr.find_a == 0 &&
			      sh->pr.find_b == 0 && sh->pr.acquire_a == 0 &&
			      sh->pr.get_new == 0 && sh->pr.reclaim == 0,
			      "control: intact segment: attach %d find %d/%d "
			      "acquire %d get %d reclaim %d", sh->pr.attach_rc,
			      sh->pr.find_a, sh->pr.find_b, sh->pr.acquire_a,
			      sh->pr.get_new, sh->pr.reclaim);
	}
	return it_finish();
}
