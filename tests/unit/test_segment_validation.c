/*
 * test_segment_validation.c - the segment is untrusted
 * (docs/design/segment.md "The segment"): a corrupt or hostile /dev/shm
 * object gives a clear error (-EPROTO at attach, -BRK_ECORRUPT / -ENOENT on
 * records), never a crash or an out-of-bounds access.
 *
 * Each case builds a good segment (capacity 8, records "a", "b/c", "d"),
 * detaches (so no mapping of ours can SIGBUS on a truncation), corrupts
 * the file with pwrite/ftruncate, and exercises the library in a forked
 * child, which reports through a shared anonymous mapping. The parent
 * asserts the child exited (no signal) and checks the codes.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "layout.h"
#include "fixture.h"

#define CAP 8u
#define UNITS ((uint32_t)brk__default_arena_units(CAP))
#define SEG_SIZE brk__total_size(CAP, UNITS)
#define NREFS 64u /* brk_info_at() is tried on refs 0 .. NREFS - 1 */

struct world {
	struct ut *u;
	char path[160];
	uint8_t *orig;   /* the good bytes */
	uint32_t idx_a;  /* ref of "a" */
	uint32_t idx_d;
};

/* What a child saw, in a MAP_SHARED|MAP_ANONYMOUS page. */
struct report {
	int attach_rc;
	char err[256];
	int find_rc[4];
	int get_rc;
	uint32_t count;
	int info_rc[NREFS]; /* brk_info_at() of each ref */
	int acquire_rc[4];
	int release_rc[4];
	int events_rc;
	int bad_value; /* the child found an impossible value */
	char bad_what[128];
	int done;
};

static struct report *rep;

static const char *const names[] = { "a", "b/c", "d", "absent" };

static void rec_at(struct world *w, uint32_t idx, uint64_t *off)
{
	*off = brk__arena_offset(CAP) + (uint64_t)idx * BRK__UNIT;
	(void)w;
}

static void put(struct world *w, uint64_t off, const void *p, size_t n)
{
	int fd = open(w->path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, p, n, (off_t)off), (ssize_t)n);
	close(fd);
}

static void put64(struct world *w, uint64_t off, uint64_t v)
{
	put(w, off, &v, sizeof v);
}

static uint64_t get64(struct world *w, uint64_t off)
{
	uint64_t v;
	memcpy(&v, w->orig + off, sizeof v);
	return v;
}

static void restore(struct world *w)
{
	int fd = open(w->path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)SEG_SIZE), 0);
	assert_int_equal(pwrite(fd, w->orig, SEG_SIZE, 0), (ssize_t)SEG_SIZE);
	assert_int_equal(fchmod(fd, 0600), 0);
	close(fd);
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof *w);
	struct brk_config c;
	struct brk_info i;
	brk_breaker *b;
	int fd;

	assert_non_null(w);
	w->u = ut_new("segval", CAP, 0);
	snprintf(w->path, sizeof w->path, "/dev/shm%s", w->u->shm);
	ut_cfg(&c);
	c.max_concurrent = 4;
	b = ut_breaker(w->u, "a", &c);
	ut_info(b, &i);
	w->idx_a = i.index;
	ut_call(b, BRK_SUCCESS, 0);
	b = ut_breaker(w->u, "b/c", &c);
	ut_fail_n(b, 3);
	b = ut_breaker(w->u, "d", &c);
	ut_info(b, &i);
	w->idx_d = i.index;
	ut_rc(0, brk_trip(b, 5000));
	brk_detach(w->u->seg);
	w->u->seg = NULL;

	w->orig = malloc(SEG_SIZE);
	assert_non_null(w->orig);
	fd = open(w->path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, w->orig, SEG_SIZE, 0), (ssize_t)SEG_SIZE);
	close(fd);
	if (!rep) {
		rep = mmap(NULL, sizeof *rep, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		assert_true(rep != MAP_FAILED);
	}
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	if (!w)
		return 0;
	chmod(w->path, 0600);
	ut_free(w->u);
	free(w->orig);
	free(w);
	return 0;
}

/* ---- the child ----------------------------------------------------------- */

static void child_bad(const char *what)
{
	if (!rep->bad_value) {
		rep->bad_value = 1;
		snprintf(rep->bad_what, sizeof rep->bad_what, "%s", what);
	}
}

/* Check a snapshot for values no valid segment can produce. */
static void check_info(const struct brk_info *i)
{
	if (strnlen(i->name, sizeof i->name) >= sizeof i->name)
		child_bad("info name not NUL-terminated");
	if (i->n_leases > BRK_MAX_PROBES + BRK_MAX_CONCURRENT)
		child_bad("n_leases out of range");
	if (i->kind == BRK_KIND_BREAKER) {
		if (i->state < BRK_CLOSED || i->state > BRK_HALF_OPEN)
			child_bad("state out of range");
		if (i->probes_in_flight > BRK_MAX_PROBES)
			child_bad("probes_in_flight out of range");
		if (i->in_flight > BRK_MAX_CONCURRENT)
			child_bad("in_flight out of range");
		if (i->open_remaining_ms > BRK_MAX_DURATION_MS)
			child_bad("open_remaining_ms out of range");
	}
}

/*
 * Attach, find every name, get a new one, snapshot every index, acquire
 * and release on whatever was found, read the events. Never asserts:
 * reports codes and impossible values.
 */
static void exercise(struct world *w, uint32_t flags, int do_writes)
{
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	brk_breaker *b[4] = { 0 };
	struct brk_info *i = malloc(sizeof *i);
	struct brk_event *ev = malloc(64 * sizeof *ev);
	uint64_t cur = 1, lost = 0;
	int rc;

	memset(rep, 0, sizeof *rep);
	for (uint32_t k = 0; k < NREFS; k++)
		rep->info_rc[k] = 1;
	ut_opts(w->u, &o, 0);
	o.flags = BRK_ATTACH_NOCREATE | flags;
	o.init_wait_ms = 1;
	o.errbuf = rep->err;
	o.errbuf_len = sizeof rep->err;
	rep->attach_rc = brk_attach(&o, &s);
	if (rep->attach_rc != 0 || !i || !ev) {
		rep->done = 1;
		return;
	}
	for (int k = 0; k < 4; k++) {
		rep->find_rc[k] = brk_breaker_find(s, names[k], &b[k]);
		if (rep->find_rc[k] == 0) {
			rc = brk_breaker_info(b[k], i);
			if (rc == 0)
				check_info(i);
		}
	}
	if (do_writes) {
		brk_breaker *nb = NULL;
		rep->get_rc = brk_breaker_get(s, "new/one", NULL, &nb);
	}
	rep->count = brk_record_count(s);
	if (rep->count > CAP)
		child_bad("record count above capacity");
	for (uint32_t k = 0; k < NREFS; k++) {
		rep->info_rc[k] = brk_info_at(s, k, i);
		if (rep->info_rc[k] == 0)
			check_info(i);
	}
	(void)brk_info_at(s, UINT32_MAX, i);
	(void)brk_info_at(s, UNITS, i);
	(void)brk_info_at(s, UNITS - 1, i);
	if (do_writes) {
		for (int k = 0; k < 4; k++) {
			brk_permit p;
			struct brk_refusal why;
			if (!b[k])
				continue;
			rep->acquire_rc[k] = brk_acquire(b[k], &p, &why);
			if (rep->acquire_rc[k] == 0)
				rep->release_rc[k] =
					brk_release(&p, BRK_FAILURE, 0, 1000);
			(void)brk_trip(b[k], 10);
			ut_advance_ms(w->u, 20);
			for (int j = 0; j < 12; j++) {
				if (brk_acquire(b[k], &p, &why) == 0)
					(void)brk_release(&p, (j % 2) ? BRK_SUCCESS
								      : BRK_FAILURE,
							  0, 0);
				ut_advance_ms(w->u, 5000);
			}
			if (brk_breaker_info(b[k], i) == 0)
				check_info(i);
			(void)brk_reset(b[k]);
		}
		{
			struct brk_reclaim_stats st;
			(void)brk_reclaim(s, &st);
		}
	}
	rep->events_rc = brk_events_read(s, &cur, ev, 64, &lost);
	for (int k = 0; k < rep->events_rc && k < 64; k++)
		if (strnlen(ev[k].name, sizeof ev[k].name) >= sizeof ev[k].name)
			child_bad("event name not NUL-terminated");
	{
		struct brk_segment_info si;
		(void)brk_segment_info(s, &si);
	}
	brk_detach(s);
	free(i);
	free(ev);
	rep->done = 1;
}

/* Run exercise() in a child; assert it was not killed by a signal. */
static void run_child(struct world *w, uint32_t flags, int do_writes)
{
	pid_t pid;
	int st = 0;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(20);
		exercise(w, flags, do_writes);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("child killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(rep->done, 1);
	if (rep->bad_value)
		fail_msg("impossible value: %s", rep->bad_what);
}

static void expect_attach(struct world *w, int want)
{
	run_child(w, 0, 1);
	if (rep->attach_rc != want)
		fprintf(stderr, "attach: %d (%s), want %d; errbuf: %s\n",
			rep->attach_rc, brk_strerror(rep->attach_rc), want,
			rep->err);
	assert_int_equal(rep->attach_rc, want);
	if (want != 0)
		assert_true(strlen(rep->err) > 0);
}

/* ---- cases ------------------------------------------------------------- */

static void good_segment_attaches(void **state)
{
	struct world *w = *state;

	expect_attach(w, 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(rep->find_rc[k], 0);
	assert_int_equal(rep->find_rc[3], -ENOENT);
	assert_int_equal(rep->get_rc, 0);
	assert_int_equal(rep->count, 4);
	{
		unsigned live = 0;
		for (uint32_t k = 0; k < NREFS; k++) {
			assert_true(rep->info_rc[k] == 0 || rep->info_rc[k] == -ENOENT);
			live += rep->info_rc[k] == 0;
		}
		assert_int_equal(live, 4);
		assert_int_equal(rep->info_rc[w->idx_a], 0);
		assert_int_equal(rep->info_rc[w->idx_d], 0);
		assert_int_equal(rep->info_rc[0], -ENOENT);
		assert_int_equal(rep->info_rc[w->idx_a + 1], -ENOENT);
	}
}

#define HDR(f) offsetof(struct brk__header, f)

static void wrong_magic(void **state)
{
	struct world *w = *state;
	put64(w, HDR(magic), BRK__MAGIC ^ 1);
	expect_attach(w, -EPROTO);
	put64(w, HDR(magic), 0x4141414141414141ULL);
	expect_attach(w, -EPROTO);
}

/* Magic 0 with the creator's init-in-progress marker (u+x) still set: a
 * creator at work, or one that died half-way: -ETIMEDOUT after the wait
 * (breakerd repairs it). Without the marker nobody is making it: it was
 * emptied after it was made, -BRK_ETRUNCATED at once (issue 22). */
static void zero_magic_times_out(void **state)
{
	struct world *w = *state;
	put64(w, HDR(magic), 0);
	assert_int_equal(chmod(w->path, 0700), 0);
	expect_attach(w, -ETIMEDOUT);
	assert_true(strstr(rep->err, "died half-way") != NULL);
	assert_int_equal(chmod(w->path, 0600), 0);
	expect_attach(w, -BRK_ETRUNCATED);
	assert_true(strstr(rep->err, "all zero") != NULL);
	assert_true(strstr(rep->err, "died half-way") == NULL);
}

static void wrong_version(void **state)
{
	struct world *w = *state;
	uint64_t word = get64(w, HDR(version)); /* version | header_size */

	put64(w, HDR(version), (word & ~0xffffffffULL) | (BRK__LAYOUT_VERSION + 1));
	expect_attach(w, -EPROTO);
	put64(w, HDR(version), word & ~0xffffffffULL);
	expect_attach(w, -EPROTO);
}

static void total_size_mismatch(void **state)
{
	struct world *w = *state;

	put64(w, HDR(total_size), SEG_SIZE + 4096);
	expect_attach(w, -EPROTO);
	put64(w, HDR(total_size), SEG_SIZE - 4096);
	expect_attach(w, -EPROTO);
	put64(w, HDR(total_size), UINT64_MAX);
	expect_attach(w, -EPROTO);
}

static void truncated_file(void **state)
{
	struct world *w = *state;
	const off_t sizes[] = { (off_t)SEG_SIZE / 2, (off_t)SEG_SIZE - 1,
				BRK__HEADER_SIZE, 100, 8 };

	/* shorter than its header says, 0 bytes included: -BRK_ETRUNCATED,
	 * never "a creator that died half-way" (issue 22) */
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		restore(w);
		assert_int_equal(truncate(w->path, sizes[k]), 0);
		expect_attach(w, -BRK_ETRUNCATED);
		assert_true(strstr(rep->err, "truncated") != NULL);
	}
	restore(w);
	assert_int_equal(truncate(w->path, 0), 0);
	expect_attach(w, -BRK_ETRUNCATED);
	assert_true(strstr(rep->err, "0 bytes") != NULL);
	assert_true(strstr(rep->err, "died half-way") == NULL);
	/* grown is not ours either */
	restore(w);
	assert_int_equal(truncate(w->path, (off_t)SEG_SIZE + 4096), 0);
	expect_attach(w, -EPROTO);
}

static void capacity_absurd(void **state)
{
	struct world *w = *state;
	uint64_t word = get64(w, HDR(capacity)); /* capacity | unit_size */
	/* (a capacity of the same index size, 1 .. 8, only bounds how many
	 * records may be made: the arena has its own size) */
	const uint32_t caps[] = { 0, 0xffffffffu, BRK_MAX_CAPACITY + 1, 16, 9, 1000 };

	for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
		put64(w, HDR(capacity), (word & ~0xffffffffULL) | caps[k]);
		expect_attach(w, -EPROTO);
	}
}

static void geometry_fields(void **state)
{
	struct world *w = *state;
	const size_t offs[] = { HDR(capacity), HDR(index_slots), HDR(event_slots),
				HDR(index_offset), HDR(arena_offset),
				HDR(events_offset), HDR(version), HDR(unit_size),
				HDR(arena_units), HDR(lmap_offset), HDR(lmap_offset),
				HDR(lmap_words), HDR(lmap_words) };
	const uint64_t deltas[] = { 1ULL << 32, 1, 1ULL << 32, 8, 4096, 128,
				    1ULL << 32, 1, 1, 64, (uint64_t)-4096, 1,
				    (uint64_t)-1 };

	for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
		restore(w);
		put64(w, offs[k], get64(w, offs[k]) + deltas[k]);
		expect_attach(w, -EPROTO);
	}
}

static void namespace_mismatch(void **state)
{
	struct world *w = *state;

	if (get64(w, HDR(pidns_ino)) == 0)
		skip();
	put64(w, HDR(pidns_ino), get64(w, HDR(pidns_ino)) + 1);
	expect_attach(w, -EXDEV);
	run_child(w, BRK_ATTACH_NOPROCESS, 0);
	assert_int_equal(rep->attach_rc, 0);
	assert_int_equal(rep->find_rc[0], 0);
}

/* record_count above the capacity: attach works, counts are clamped,
 * nothing is read past the table, and no record is created. */
static void record_count_above_capacity(void **state)
{
	struct world *w = *state;
	const uint64_t counts[] = { CAP + 1, 1000, UINT64_MAX, 1ULL << 32 };

	for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
		put64(w, HDR(live_records), counts[k]);
		run_child(w, 0, 1);
		assert_true(rep->attach_rc == 0 || rep->attach_rc == -EPROTO ||
			    rep->attach_rc == -BRK_ECORRUPT);
		if (rep->attach_rc)
			continue;
		assert_true(rep->count <= CAP);
		assert_true(rep->get_rc == -ENOSPC || rep->get_rc == -BRK_ECORRUPT);
		for (uint32_t j = 0; j < NREFS; j++)
			assert_true(rep->info_rc[j] == 0 ||
				    rep->info_rc[j] == -ENOENT ||
				    rep->info_rc[j] == -BRK_ECORRUPT);
	}
}

/* Index words pointing out of the table. */
static void index_garbage(void **state)
{
	struct world *w = *state;
	const uint32_t slots = brk__index_slots(CAP);
	const uint64_t ioff = brk__index_offset();

	/* every slot: out-of-range record index */
	for (uint32_t k = 0; k < slots; k++)
		put64(w, ioff + 8ULL * k, BRK__IDX_MAKE(0x12345678u + k, 0xfffffff0u));
	run_child(w, 0, 1);
	assert_int_equal(rep->attach_rc, 0);
	for (int k = 0; k < 4; k++)
		assert_true(rep->find_rc[k] == -ENOENT ||
			    rep->find_rc[k] == -BRK_ECORRUPT);
	assert_true(rep->get_rc == -ENOSPC || rep->get_rc == -BRK_ECORRUPT);

	/* "a"'s slot, same hash, record index out of range or at another
	 * record: "a" is reported missing or corrupt, never another's */
	/* past the arena, far past it, none, the middle of "d"'s run, the
	 * middle of "a"'s, "a"'s permit block */
	const uint32_t bad_rec[] = { UNITS + 1, 0xffffffffu, 0, w->idx_d + 1,
				     w->idx_a + 3, w->idx_a + BRK__BREAKER_UNITS + 1 };
	for (size_t j = 0; j < sizeof bad_rec / sizeof bad_rec[0]; j++) {
		restore(w);
		for (uint32_t k = 0; k < slots; k++) {
			uint64_t v = get64(w, ioff + 8ULL * k);
			if (v && BRK__IDX_REC(v) == w->idx_a + 1)
				put64(w, ioff + 8ULL * k,
				      BRK__IDX_MAKE(BRK__IDX_HASH(v), bad_rec[j]));
		}
		run_child(w, 0, 0);
		assert_int_equal(rep->attach_rc, 0);
		if (rep->find_rc[0] != -ENOENT && rep->find_rc[0] != -BRK_ECORRUPT)
			fprintf(stderr, "index -> %u: find(a) = %d\n", bad_rec[j],
				rep->find_rc[0]);
		assert_true(rep->find_rc[0] == -ENOENT ||
			    rep->find_rc[0] == -BRK_ECORRUPT);
		assert_int_equal(rep->find_rc[2], 0); /* "d" is intact */
	}
}

/* A record whose name has no NUL, bad characters, or is empty. */
static void record_name_corrupt(void **state)
{
	struct world *w = *state;
	uint64_t roff;
	char name[BRK__NAME_BYTES];

	rec_at(w, w->idx_a, &roff);
	roff += offsetof(struct brk__record, name);

	memset(name, 'a', sizeof name); /* no NUL */
	put(w, roff, name, sizeof name);
	run_child(w, 0, 1);
	assert_int_equal(rep->attach_rc, 0);
	assert_int_equal(rep->info_rc[w->idx_a], -BRK_ECORRUPT);
	assert_true(rep->find_rc[0] == -ENOENT || rep->find_rc[0] == -BRK_ECORRUPT);

	restore(w);
	memset(name, 0, sizeof name);
	memcpy(name, "a*", 2);
	put(w, roff, name, sizeof name);
	run_child(w, 0, 1);
	assert_int_equal(rep->info_rc[w->idx_a], -BRK_ECORRUPT);

	restore(w);
	memset(name, 0, sizeof name);
	put(w, roff, name, sizeof name);
	run_child(w, 0, 1);
	assert_int_equal(rep->info_rc[w->idx_a], -BRK_ECORRUPT);

	restore(w);
	memset(name, 0, sizeof name);
	memcpy(name, "a\n", 2);
	put(w, roff, name, sizeof name);
	run_child(w, 0, 1);
	assert_int_equal(rep->info_rc[w->idx_a], -BRK_ECORRUPT);
}

/* A record kind the library does not know: "not a published record"
 * (-ENOENT) or corrupt (-BRK_ECORRUPT), both clean; never read as a
 * breaker. By name, "exists with another kind" (-EMEDIUMTYPE) is also
 * fair: it may be a record kind of a newer library (layout.h reserves
 * space for kinds to come). */
static void record_kind_corrupt(void **state)
{
	struct world *w = *state;
	uint64_t roff;
	const uint64_t kinds[] = { 77, UINT64_MAX, 0, BRK__HEAD_MAKE(77, 1, 1ULL << 32) };

	rec_at(w, w->idx_a, &roff);
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		put64(w, roff + offsetof(struct brk__record, head), kinds[k]);
		run_child(w, 0, 1);
		assert_int_equal(rep->attach_rc, 0);
		assert_true(rep->info_rc[w->idx_a] == -ENOENT ||
			    rep->info_rc[w->idx_a] == -BRK_ECORRUPT);
		if (rep->find_rc[0] != -ENOENT && rep->find_rc[0] != -BRK_ECORRUPT &&
		    rep->find_rc[0] != -EMEDIUMTYPE)
			fprintf(stderr, "kind %#" PRIx64 ": find(a) = %d (%s)\n",
				kinds[k], rep->find_rc[0],
				brk_strerror(rep->find_rc[0]));
		assert_true(rep->find_rc[0] == -BRK_ECORRUPT ||
			    rep->find_rc[0] == -ENOENT ||
			    rep->find_rc[0] == -EMEDIUMTYPE);
		assert_int_equal(rep->find_rc[2], 0);
	}
}

/* A name that exists as another kind: -EMEDIUMTYPE (the record is made
 * a bucket by hand: the public API has no bucket constructor yet). */
static void other_kind_is_emediumtype(void **state)
{
	struct world *w = *state;
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	brk_breaker *b = NULL;
	uint64_t roff;
	int rc;

	rec_at(w, w->idx_a, &roff);
	put64(w, roff + offsetof(struct brk__record, head),
	      BRK__HEAD_MAKE(BRK_KIND_BUCKET, BRK__BUCKET_UNITS, 0));
	ut_opts(w->u, &o, 0);
	o.flags = BRK_ATTACH_NOCREATE;
	ut_rc(0, brk_attach(&o, &s));
	rc = brk_breaker_get(s, "a", NULL, &b);
	ut_rc(-EMEDIUMTYPE, rc);
	ut_rc(-EMEDIUMTYPE, brk_breaker_find(s, "a", &b));
	assert_int_equal(brk_record_count(s), 3); /* nothing created */
	brk_detach(s);
}

/* Settings words out of their ranges (a hostile writer): the library
 * clamps them; nothing outside the record's slot arrays is written. */
static void config_words_hostile(void **state)
{
	struct world *w = *state;
	uint64_t roff, cfg;
	const struct {
		int k;
		uint64_t v;
	} bad[] = {
		{ BRK__CFG_HALF_OPEN_PROBES, 1000 },
		{ BRK__CFG_MAX_CONCURRENT, 100000 },
		{ BRK__CFG_FAILURE_THRESHOLD, 0 },
		{ BRK__CFG_SUCCESS_THRESHOLD, 0 },
		{ BRK__CFG_OPEN_MS, UINT64_MAX },
		{ BRK__CFG_MAX_OPEN_MS, 0 },
		{ BRK__CFG_PROBE_TIMEOUT_MS, 0 },
		{ BRK__CFG_MAX_WAIT_MS, UINT64_MAX },
		{ BRK__CFG_FAILURE_RATE, 1000 },
		{ BRK__CFG_WINDOW_MS, 0 },
		{ BRK__CFG_MIN_CALLS, 0 },
	};

	rec_at(w, w->idx_a, &roff);
	cfg = roff + offsetof(struct brk__record, cfg);
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
		put64(w, cfg + 8ULL * (uint64_t)bad[k].k, bad[k].v);
	run_child(w, 0, 1);
	assert_int_equal(rep->attach_rc, 0);
	assert_int_equal(rep->find_rc[0], 0);

	/* the neighbours' bytes (records after "a") are untouched, except
	 * what the child itself did to them through the API: compare the
	 * identity line and settings of "d" */
	{
		uint8_t now[BRK__BREAKER_UNITS * BRK__UNIT];
		uint64_t doff;
		int fd = open(w->path, O_RDONLY);
		rec_at(w, w->idx_d, &doff);
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, now, sizeof now, (off_t)doff),
				 (ssize_t)sizeof now);
		close(fd);
		assert_memory_equal(now, w->orig + doff, 80); /* identity */
		assert_memory_equal(now + offsetof(struct brk__record, cfg),
				    w->orig + doff + offsetof(struct brk__record, cfg),
				    8 * BRK__CFG_WORDS); /* settings */
	}
}

/* State and lease words garbage. */
static void state_and_leases_hostile(void **state)
{
	struct world *w = *state;
	uint64_t roff;

	rec_at(w, w->idx_a, &roff);
	put64(w, roff + offsetof(struct brk__record, state), UINT64_MAX);
	put64(w, roff + offsetof(struct brk__record, fails), UINT64_MAX);
	put64(w, roff + offsetof(struct brk__record, ho_successes), UINT64_MAX);
	put64(w, roff + offsetof(struct brk__record, cool_until_ns), UINT64_MAX - 1);
	put64(w, roff + offsetof(struct brk__record, probe0), 0xdeadbeefcafef00dULL);
	/* "a"'s permit block (4 slots) follows its core run */
	for (uint32_t k = 0; k < 4; k++) {
		uint64_t lo = roff + BRK__BREAKER_UNITS * BRK__UNIT + 32ULL * k;
		put64(w, lo, ~0ULL - k);
		put64(w, lo + 8, ~0ULL);
		put64(w, lo + 16, ~0ULL);
	}
	run_child(w, 0, 1);
	assert_int_equal(rep->attach_rc, 0);
	assert_int_equal(rep->find_rc[0], 0);
}

/* Event ring garbage: head far ahead, slots with garbage seq/meta/name. */
static void events_hostile(void **state)
{
	struct world *w = *state;
	const uint64_t eoff = brk__events_offset(CAP, UNITS);
	struct brk__event e;

	memset(&e, 0x41, sizeof e); /* name without NUL, meta garbage */
	for (uint32_t k = 0; k < 64; k++) {
		e.seq = k + 1;
		put(w, eoff + (uint64_t)k * BRK__EVENT_SIZE, &e, sizeof e);
	}
	run_child(w, 0, 0);
	assert_int_equal(rep->attach_rc, 0);
	assert_true(rep->events_rc >= 0);

	put64(w, HDR(event_head), UINT64_MAX);
	run_child(w, 0, 1);
	assert_int_equal(rep->attach_rc, 0);
	assert_true(rep->events_rc >= 0);
	put64(w, HDR(event_head), UINT64_MAX / 2);
	run_child(w, 0, 1);
	assert_true(rep->events_rc >= 0);
}

/* Fuzz-ish: 2000 iterations of random words over header, index, records
 * and events (seeded), each exercised in a child; no child may die by a
 * signal (SIGALRM included: a hang is a failure). */
static void fuzz_words(void **state)
{
	struct world *w = *state;
	/* BRKUT_FUZZ_ITERS / BRKUT_FUZZ_SEED: longer or other runs by hand */
	const char *e_iters = getenv("BRKUT_FUZZ_ITERS");
	const char *e_seed = getenv("BRKUT_FUZZ_SEED");
	const uint64_t seed0 = e_seed ? (uint64_t)strtoull(e_seed, NULL, 0)
				      : 0x5eed0001ULL;
	uint64_t seed = seed0;
	const unsigned iters = e_iters ? (unsigned)strtoul(e_iters, NULL, 0) : 2000;
	unsigned attached = 0, refused = 0;
	const uint64_t rec0 = brk__arena_offset(CAP);
	const uint64_t ev0 = brk__events_offset(CAP, UNITS);

	for (unsigned it = 0; it < iters; it++) {
		uint64_t offs[6];
		unsigned n = 1 + (unsigned)(ut_splitmix64(&seed) % 6);
		pid_t pid;
		int st = 0;

		for (unsigned k = 0; k < n; k++) {
			uint64_t r = ut_splitmix64(&seed);
			uint64_t v = ut_splitmix64(&seed);
			uint64_t off;
			switch (r % 8) {
			case 0: /* header line 0 (geometry) */
				off = (r >> 8) % 128;
				break;
			case 1: /* header lines 1-3 */
				off = 128 + (r >> 8) % 384;
				break;
			case 2: /* index */
				off = brk__index_offset() +
				      (r >> 8) % (brk__index_slots(CAP) * 8u);
				break;
			case 3: /* events */
				off = ev0 + (r >> 8) % (64 * BRK__EVENT_SIZE);
				break;
			default: /* the units of the records and their blocks */
				off = rec0 + BRK__UNIT + (r >> 8) % (40 * BRK__UNIT);
				break;
			}
			off &= ~7ULL;
			switch (v % 4) {
			case 0: v = 0; break;
			case 1: v = ~0ULL >> (v % 64); break;
			case 2: v = (v >> 2) % 128; break;
			default: break;
			}
			offs[k] = off;
			put64(w, off, v);
		}
		fflush(NULL);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			/* one in four read-only: the writers are called too and
			 * must answer -EROFS; a stray store into the PROT_READ
			 * mapping would kill the child */
			alarm(20);
			exercise(w, (it % 4 == 3) ? BRK_ATTACH_READONLY : 0, 1);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "iteration %u: child %s %d; words:", it,
				WIFSIGNALED(st) ? "killed by signal" : "exit",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			for (unsigned k = 0; k < n; k++)
				fprintf(stderr, " +%" PRIu64, offs[k]);
			fprintf(stderr, "\n");
			fail();
		}
		if (rep->bad_value) {
			fprintf(stderr, "iteration %u: %s\n", it, rep->bad_what);
			fail();
		}
		if (rep->attach_rc == 0)
			attached++;
		else
			refused++;
		/* undo: restore only the words written (fast) */
		for (unsigned k = 0; k < n; k++)
			put(w, offs[k], w->orig + offs[k], 8);
		/* the child's own writes through the API: a full restore
		 * every 50 iterations keeps the base close to the original */
		if (it % 50 == 49)
			restore(w);
	}
	fprintf(stderr, "fuzz: seed %#" PRIx64 ", %u iterations, %u attached, "
		"%u refused\n", seed0, iters, attached, refused);
	assert_true(attached > 0 && refused > 0);
}

/* Read-only attach on a 0400 segment: inspection works; writes -EROFS. */
static void readonly_attach(void **state)
{
	struct world *w = *state;
	struct brk_attach_opts o;
	struct brk_segment_info si;
	struct brk_info i;
	struct brk_event ev[8];
	struct brk_reclaim_stats st;
	brk_segment *s = NULL;
	brk_breaker *b = NULL, *nb = NULL;
	brk_permit p;
	struct brk_config c;
	uint64_t cur = 1;
	int rc;

	assert_int_equal(chmod(w->path, 0400), 0);
	ut_opts(w->u, &o, 0);
	o.flags = BRK_ATTACH_READONLY;
	ut_rc(0, brk_attach(&o, &s));
	ut_rc(0, brk_segment_info(s, &si));
	assert_int_equal(si.readonly, 1);
	assert_int_equal(si.used, 3);
	assert_int_equal(brk_record_count(s), 3);
	ut_rc(0, brk_breaker_find(s, "b/c", &b));
	ut_rc(0, brk_breaker_info(b, &i));
	assert_int_equal(i.state, BRK_OPEN);
	assert_int_equal(i.counters.failures, 3);
	ut_rc(0, brk_info_at(s, w->idx_d, &i));
	assert_string_equal(i.name, "d");
	assert_true(brk_events_read(s, &cur, ev, 8, NULL) > 0);

	ut_rc(-EROFS, brk_acquire(b, &p, NULL));
	ut_rc(-EROFS, brk_breaker_get(s, "new", NULL, &nb));
	rc = brk_breaker_get(s, "a", NULL, &nb); /* existing: no create */
	assert_true(rc == 0 || rc == -EROFS);
	ut_rc(-EROFS, brk_reset(b));
	ut_rc(-EROFS, brk_trip(b, 1000));
	ut_cfg(&c);
	ut_rc(-EROFS, brk_breaker_configure(b, &c));
	ut_rc(-EROFS, brk_reclaim(s, &st));
	ut_rc(-EROFS, brk_heartbeat(s, 100));
	brk_detach(s);
	assert_int_equal(chmod(w->path, 0600), 0);
}

/*
 * An open-until word holding a hostile deadline (the 45-bit field's
 * largest value, 1115 years away) is reported as at most
 * BRK_MAX_DURATION_MS of open_remaining_ms, the longest any breaker can
 * be open: a snapshot never shows an impossible value (found by
 * tests/fuzz/fuzz_segment).
 */
static void hostile_open_until_reports_at_most_max_duration(void **state)
{
	struct world *w = *state;
	struct brk_attach_opts o;
	struct brk_info i;
	brk_segment *s = NULL;
	uint64_t off, st, gen;

	rec_at(w, w->idx_d, &off);
	st = get64(w, off + offsetof(struct brk__record, state));
	assert_int_equal(BRK__ST_STATE(st), BRK_OPEN);
	gen = BRK__ST_GEN(st);
	put64(w, off + offsetof(struct brk__record, open_until) + 8 * (gen & 1),
	      BRK__UT_MAKE(gen, BRK__UNTIL_MASK));
	ut_opts(w->u, &o, 0);
	o.flags = BRK_ATTACH_READONLY | BRK_ATTACH_NOCREATE;
	ut_rc(0, brk_attach(&o, &s));
	ut_rc(0, brk_info_at(s, w->idx_d, &i));
	assert_int_equal(i.state, BRK_OPEN);
	if (i.open_remaining_ms == 0 || i.open_remaining_ms > BRK_MAX_DURATION_MS)
		fail_msg("open_remaining_ms %llu, want 1..%llu",
			 (unsigned long long)i.open_remaining_ms,
			 (unsigned long long)BRK_MAX_DURATION_MS);
	brk_detach(s);
	restore(w);
}

/* The same hostile deadline word, met by a writer: brk_acquire() refuses
 * with a wait of at most BRK_MAX_DURATION_MS plus the 5 s jitter cap, not
 * the 35e12 ms the word says (the fuzz target found the reading side; the
 * refusal read the same word unclamped). */
static void hostile_open_until_refusal_waits_at_most_max_duration(void **state)
{
	struct world *w = *state;
	struct brk_attach_opts o;
	struct brk_refusal why;
	brk_segment *s = NULL;
	brk_breaker *b = NULL;
	brk_permit p;
	uint64_t off, st, gen;

	rec_at(w, w->idx_d, &off);
	st = get64(w, off + offsetof(struct brk__record, state));
	assert_int_equal(BRK__ST_STATE(st), BRK_OPEN);
	gen = BRK__ST_GEN(st);
	put64(w, off + offsetof(struct brk__record, open_until) + 8 * (gen & 1),
	      BRK__UT_MAKE(gen, BRK__UNTIL_MASK));
	ut_opts(w->u, &o, 0);
	o.flags = BRK_ATTACH_NOCREATE;
	ut_rc(0, brk_attach(&o, &s));
	ut_rc(0, brk_breaker_find(s, "d", &b));
	ut_rc(-BRK_EOPEN, brk_acquire(b, &p, &why));
	if (why.wait_ms == 0 || why.wait_ms > BRK_MAX_DURATION_MS + 5000)
		fail_msg("wait_ms %llu, want 1..%llu",
			 (unsigned long long)why.wait_ms,
			 (unsigned long long)BRK_MAX_DURATION_MS + 5000);
	brk_detach(s);
	restore(w);
}

/* A world-writable segment is refused for read-write, naming the owner. */
static void world_writable_refused(void **state)
{
	struct world *w = *state;

	assert_int_equal(chmod(w->path, 0666), 0);
	run_child(w, 0, 0);
	if (rep->attach_rc != -EPERM && rep->attach_rc != -EACCES)
		fprintf(stderr, "attach: %d %s\n", rep->attach_rc, rep->err);
	assert_true(rep->attach_rc == -EPERM || rep->attach_rc == -EACCES);
	assert_non_null(strstr(rep->err, "uid"));
	assert_int_equal(chmod(w->path, 0600), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(good_segment_attaches),
		T(wrong_magic),
		T(zero_magic_times_out),
		T(wrong_version),
		T(total_size_mismatch),
		T(truncated_file),
		T(capacity_absurd),
		T(geometry_fields),
		T(namespace_mismatch),
		T(record_count_above_capacity),
		T(index_garbage),
		T(record_name_corrupt),
		T(record_kind_corrupt),
		T(other_kind_is_emediumtype),
		T(config_words_hostile),
		T(state_and_leases_hostile),
		T(events_hostile),
		T(fuzz_words),
		T(readonly_attach),
		T(hostile_open_until_reports_at_most_max_duration),
		T(hostile_open_until_refusal_waits_at_most_max_duration),
		T(world_writable_refused),
	};
	return cmocka_run_group_tests_name("segment_validation", tests, NULL, NULL);
}
