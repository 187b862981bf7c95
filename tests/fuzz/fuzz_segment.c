/*
 * fuzz_segment.c - libFuzzer target: libbreaker's read paths on a hostile
 * segment (DESIGN.md "The segment": everything read from shared memory is
 * untrusted).
 *
 * There is no in-memory attach: brk_attach() opens a named shm object. So
 * the target creates one real segment once (capacity 8: breakers "a",
 * "b/c" and "d" with counters, leases, a trip and events; a bucket "k"; a
 * retry budget "g"), keeps a copy of its good bytes, and per input:
 *
 *   1. applies the input as patches onto the live object through its own
 *      writable mapping (no syscall per patch);
 *   2. optionally truncates or grows the object by one page;
 *   3. attaches read-only (the path bctl list/inspect/events/metrics
 *      take), lists every record with brk_info_at(), finds every name as
 *      a breaker, a bucket and a budget and snapshots what it finds, reads
 *      the event ring and the header summary;
 *   4. checks every snapshot for values no valid segment can produce
 *      (abort() = a finding), detaches, and restores the patched bytes.
 *
 * Input format: byte 0 = flags (bit 0: truncate by 4096 bytes, bit 1:
 * grow by 4096 bytes); then patches of [region:2 | len-1:6][offset lo]
 * [offset hi][len bytes], region 0 header, 1 name index, 2 records, 3
 * event ring, the offset taken modulo the region's size. A patch that
 * sets the magic to 0 is undone before attaching: a zero magic means "the
 * creator is still initialising" and makes brk_attach() wait (a timing
 * path the unit tests cover), not a validation.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "breaker.h"
#include "layout.h"

#define CAP 8u
#define UNITS ((uint32_t)brk__default_arena_units(CAP))
/* the units the populated records and their blocks use (and a margin) */
#define USED_UNITS 96u
#define MAX_PATCHES 64

static char shm[64];
static uint8_t *live;   /* our RW mapping of the object */
static uint8_t *good;   /* the good bytes */
static uint64_t total;
static int fd = -1;

struct patch {
	uint64_t off;
	size_t len;
};

/* A fixed clock, so that a finding replays: the segment is made at T0 and
 * read 1 s later, every time. */
#define T0_NS (1000ULL * 1000000000ULL)
static uint64_t clock_ns = T0_NS;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return clock_ns;
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz_segment: %s\n", what);
	abort();
}

static void cleanup(void)
{
	if (shm[0])
		shm_unlink(shm);
}

static void populate(brk_segment *s)
{
	struct brk_config c;
	brk_breaker *b;
	brk_bucket *k;
	brk_budget *g;
	brk_permit p, q;
	uint64_t nb;
	int i;

	brk_config_init(&c);
	c.failure_threshold = 2;
	c.max_concurrent = 4;
	if (brk_breaker_get(s, "a", &c, &b))
		die("get a");
	if (brk_acquire(b, &p, NULL) == 0)
		brk_release(&p, BRK_SUCCESS, 0, 0);
	if (brk_acquire(b, &q, NULL))
		die("acquire a"); /* left held: a permit lease */
	if (brk_breaker_get(s, "b/c", &c, &b))
		die("get b/c");
	for (i = 0; i < 3; i++)
		if (brk_acquire(b, &p, NULL) == 0)
			brk_release(&p, BRK_FAILURE, BRK_REASON_SERVER_ERROR, 0);
	if (brk_breaker_get(s, "d", &c, &b))
		die("get d");
	brk_trip(b, 5000);
	if (brk_bucket_get(s, "k", 10.0, 5, &k))
		die("get k");
	brk_bucket_take(k, 2, &nb);
	if (brk_budget_get(s, "g", 10.0, 0.2, &g))
		die("get g");
	brk_budget_deposit(g);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct brk_attach_opts o;
	brk_segment *s;

	(void)argc;
	(void)argv;
	snprintf(shm, sizeof(shm), "/brkfz-seg-%d", (int)getpid());
	shm_unlink(shm);
	atexit(cleanup);
	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.capacity = CAP;
	o.clock = fake_clock;
	if (brk_attach(&o, &s))
		die("create");
	populate(s);
	brk_detach(s);
	total = brk__total_size(CAP, UNITS);
	fd = shm_open(shm, O_RDWR, 0);
	if (fd < 0)
		die("shm_open");
	live = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	good = malloc(total);
	if (live == MAP_FAILED || !good)
		die("mmap");
	memcpy(good, live, total);
	clock_ns = T0_NS + 1000000000ULL;
	return 0;
}

static void region(unsigned r, uint64_t *base, uint64_t *size)
{
	switch (r) {
	case 0:
		*base = 0;
		*size = BRK__HEADER_SIZE;
		break;
	case 1:
		*base = brk__index_offset();
		*size = brk__arena_offset(CAP) - *base;
		break;
	case 2: /* the records' units (heads, links, extension blocks) */
		*base = brk__arena_offset(CAP);
		*size = (uint64_t)USED_UNITS * BRK__UNIT;
		break;
	default:
		*base = brk__events_offset(CAP, UNITS);
		*size = total - *base;
		break;
	}
}

static size_t apply(const uint8_t *d, size_t n, struct patch *pt)
{
	size_t i = 1, np = 0;

	while (i + 3 <= n && np < MAX_PATCHES) {
		uint64_t base, size, off;
		size_t len = (size_t)(d[i] & 0x3f) + 1;

		region(d[i] >> 6, &base, &size);
		off = base + ((uint64_t)d[i + 1] | (uint64_t)d[i + 2] << 8) % size;
		i += 3;
		if (len > n - i)
			len = n - i;
		if (off + len > base + size)
			len = (size_t)(base + size - off);
		memcpy(live + off, d + i, len);
		pt[np].off = off;
		pt[np].len = len;
		np++;
		i += len;
	}
	return np;
}

static void bad(const char *what, const char *name)
{
	fprintf(stderr, "fuzz_segment: impossible value: %s (record '%.64s')\n",
		what, name);
	abort();
}

/* Values no segment, however corrupt, may make the library report. */
static void check_info(const struct brk_info *i)
{
	if (strnlen(i->name, sizeof(i->name)) >= sizeof(i->name))
		bad("name not NUL-terminated", "?");
	if (brk_name_validate(i->name) != 0)
		bad("invalid name reported", i->name);
	if (i->n_leases > BRK_MAX_PROBES + BRK_MAX_CONCURRENT)
		bad("n_leases", i->name);
	if (i->kind == BRK_KIND_BREAKER) {
		if (i->state < BRK_CLOSED || i->state > BRK_HALF_OPEN)
			bad("state", i->name);
		if (i->probes_in_flight > BRK_MAX_PROBES)
			bad("probes_in_flight", i->name);
		if (i->in_flight > BRK_MAX_CONCURRENT)
			bad("in_flight", i->name);
		if (i->open_remaining_ms > BRK_MAX_DURATION_MS)
			bad("open_remaining_ms", i->name);
		if (i->probes_in_flight + i->in_flight != i->n_leases)
			bad("lease counts", i->name);
	} else if (i->kind == BRK_KIND_BUCKET) {
		if (i->bucket.configured && (i->bucket.burst == 0 ||
					     i->bucket.burst > BRK_BUCKET_MAX_BURST))
			bad("bucket burst", i->name);
		if (!(i->bucket.tokens >= 0 && i->bucket.tokens <= i->bucket.burst)) {
			fprintf(stderr, "tokens %g burst %u configured %d T %llu\n",
				i->bucket.tokens, i->bucket.burst,
				i->bucket.configured,
				(unsigned long long)i->bucket.interval_ns);
			bad("bucket tokens", i->name);
		}
	} else if (i->kind != BRK_KIND_BUDGET) {
		bad("kind", i->name);
	}
}

static void exercise(brk_segment *s)
{
	static const char *const names[] = { "a", "b/c", "b", "d", "k", "g",
					     "absent" };
	static struct brk_info info;
	static struct brk_bucket_info bi;
	static struct brk_budget_info gi;
	static struct brk_event ev[64];
	struct brk_segment_info si;
	brk_breaker *b;
	brk_bucket *k;
	brk_budget *g;
	uint64_t cur = 1, lost;
	uint32_t n, i;
	int got, rounds;

	n = brk_record_count(s);
	if (n > CAP)
		bad("record count above capacity", "-");
	for (i = 0; i < USED_UNITS + 8; i++) /* refs: arena units */
		if (brk_info_at(s, i, &info) == 0)
			check_info(&info);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (brk_breaker_find(s, names[i], &b) == 0 &&
		    brk_breaker_info(b, &info) == 0)
			check_info(&info);
		if (brk_bucket_find(s, names[i], &k) == 0 &&
		    brk_bucket_info(k, &bi) == 0 &&
		    strnlen(bi.name, sizeof(bi.name)) >= sizeof(bi.name))
			bad("bucket name", names[i]);
		if (brk_budget_find(s, names[i], &g) == 0 &&
		    brk_budget_info(g, &gi) == 0 &&
		    strnlen(gi.name, sizeof(gi.name)) >= sizeof(gi.name))
			bad("budget name", names[i]);
	}
	for (rounds = 0; rounds < 80; rounds++) {
		got = brk_events_read(s, &cur, ev, 64, &lost);
		if (got < 0 || got > 64)
			bad("events_read count", "-");
		if (got == 0)
			break;
		for (i = 0; i < (uint32_t)got; i++)
			if (strnlen(ev[i].name, sizeof(ev[i].name)) >= sizeof(ev[i].name))
				bad("event name", "-");
	}
	brk_segment_info(s, &si);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct patch pt[MAX_PATCHES];
	struct brk_attach_opts o;
	brk_segment *s = NULL;
	char err[256];
	int flags = n > 0 ? d[0] : 0;
	size_t np, i;
	int resized = 0;
	uint64_t zero_magic = 0;

	np = apply(d, n, pt);
	if (memcmp(live, &zero_magic, sizeof(zero_magic)) == 0)
		memcpy(live, good, sizeof(zero_magic));
	if (flags & 3) {
		resized = 1;
		if (ftruncate(fd, (off_t)(flags & 1 ? total - 4096 : total + 4096)))
			die("ftruncate");
	}
	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.flags = BRK_ATTACH_READONLY | BRK_ATTACH_NOCREATE | BRK_ATTACH_NOPROCESS;
	o.init_wait_ms = 1;
	o.clock = fake_clock;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	if (brk_attach(&o, &s) == 0) {
		exercise(s);
		brk_detach(s);
	} else if (strnlen(err, sizeof(err)) == 0) {
		bad("attach failed without a message", "-");
	}
	if (resized) {
		if (ftruncate(fd, (off_t)total))
			die("ftruncate back");
		memcpy(live + total - 4096, good + total - 4096, 4096);
	}
	for (i = 0; i < np; i++)
		memcpy(live + pt[i].off, good + pt[i].off, pt[i].len);
	memcpy(live, good, sizeof(zero_magic));
	return 0;
}
