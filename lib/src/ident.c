/*
 * ident.c - who this process is (pid + start time), per-claim nonces and
 * the jitter random source.
 *
 * A lease token names its owner by pid; the slot also records the owner's
 * start time (/proc/PID/stat field 22, clock ticks since boot), so a pid
 * reused by a later process is not mistaken for the owner. A fork()ed
 * child recomputes its identity in an atfork hook (async-signal-safe
 * calls only), so it never inherits its parent's token.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ident.h"
#include "internal.h"

struct brk__ident brk__self_id;
int brk__self_ready;
static uint32_t nonce_ctr;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

/* Parse fields 3 (state) and 22 (starttime) of a /proc/PID/stat text
 * (@len bytes, NUL-terminated): after the last ')' (comm may hold spaces
 * and parentheses), field 3 begins. */
static int parse_stat(const char *buf, size_t len, uint64_t *ticks,
		      char *state)
{
	const char *p = NULL, *end = buf + len;
	const char *q;
	int field = 2;
	uint64_t v = 0;

	for (q = buf; q < end; q++)
		if (*q == ')')
			p = q;
	if (!p || p + 2 >= end)
		return -EINVAL;
	*state = p[2];
	for (q = p + 1; q < end && field < 22; q++)
		if (*q == ' ')
			field++;
	if (field != 22 || q >= end || brk__parse_digits(&q, 10, &v) != 0)
		return -EINVAL;
	*ticks = v;
	return 0;
}

/* Append the decimal digits of @v to @path at *@pl (hand-made: this runs
 * in an atfork child hook). */
static void put_uint(char *path, size_t *pl, uint32_t v)
{
	char digits[12];
	int n = 0, i;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < 11);
	for (i = n - 1; i >= 0; i--)
		path[(*pl)++] = digits[i];
}

static int read_stat_path(const char *path, uint64_t *ticks, char *state)
{
	char buf[1024];
	ssize_t got;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -EIO;
	buf[got] = '\0'; /* the digit loop stops at the NUL */
	return parse_stat(buf, (size_t)got, ticks, state);
}

/* Async-signal-safe: open/read/close and hand-made formatting only. */
static int read_stat(int32_t pid, uint64_t *ticks, char *state)
{
	char path[32] = "/proc/";
	size_t pl = 6;

	put_uint(path, &pl, (uint32_t)pid);
	memcpy(path + pl, "/stat", 6);
	return read_stat_path(path, ticks, state);
}

int brk__read_task_stat(int32_t pid, int32_t tid, uint64_t *ticks, char *state)
{
	char path[64] = "/proc/";
	size_t pl = 6;

	put_uint(path, &pl, (uint32_t)pid);
	memcpy(path + pl, "/task/", 6);
	pl += 6;
	put_uint(path, &pl, (uint32_t)tid);
	memcpy(path + pl, "/stat", 6);
	return read_stat_path(path, ticks, state);
}

int brk__read_start_ticks(int32_t pid, uint64_t *ticks)
{
	char state;

	return read_stat(pid, ticks, &state);
}

static void compute_self(void)
{
	uint64_t t = 0;

	brk__self_id.pid = (int32_t)getpid();
	if (brk__read_start_ticks(brk__self_id.pid, &t) != 0)
		t = 0;
	brk__self_id.start_ticks = t & 0xffffffffffULL;
	/* Nonces start at a per-process random point, so a new owner's nonce
	 * does not match the words a previous owner left in a slot. */
	t = brk__monotonic_ns(NULL);
	nonce_ctr = (uint32_t)(((uint64_t)brk__self_id.pid * 2654435761u) ^
			       t ^ (t >> 32));
}

static void atfork_child(void)
{
	compute_self();
}

static void init_self(void)
{
	compute_self();
	pthread_atfork(NULL, NULL, atfork_child);
	uatomic_set(&brk__self_ready, 1);
}

const struct brk__ident *brk__self_slow(void)
{
	pthread_once(&self_once, init_self);
	return &brk__self_id;
}

uint32_t brk__next_nonce(void)
{
	return (uint32_t)uatomic_add_return(&nonce_ctr, 1) & 0xffffffu;
}

int brk__proc_probe(int32_t pid, uint64_t *ticks)
{
	uint64_t t;
	char state = '?';

	if (pid <= 0)
		return BRK__PROC_DEAD;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return BRK__PROC_DEAD;
	if (read_stat(pid, &t, &state) != 0) /* kill() saw it: exited since
			 (the next scan sees ESRCH), or /proc hides it
			 (hidepid): keep its leases */
		return BRK__PROC_UNKNOWN;
	if (state == 'Z' || state == 'X') /* exited, not yet reaped */
		return BRK__PROC_DEAD;
	*ticks = t & 0xffffffffffULL;
	return BRK__PROC_ALIVE;
}

int brk__owner_dead(int32_t pid, uint64_t start_ticks, int start_known)
{
	uint64_t t = 0;
	int v = brk__proc_probe(pid, &t); /* sets t: before t is read */

	return brk__proc_verdict(v, t, start_ticks, start_known);
}

/*
 * The library's one random generator: xorshift64* (Vigna 2016, "An
 * experimental exploration of Marsaglia's xorshift generators,
 * scrambled"), one state per thread, seeded lazily from the pid, the
 * address of the thread's state and the monotonic clock, spread by one
 * splitmix64 step. A fork()ed child reseeds (atfork hook), so parent and
 * child never draw the same jitter. Not cryptographic.
 */
static __thread uint64_t rng_state;
static pthread_once_t rng_once = PTHREAD_ONCE_INIT;

static void rng_atfork_child(void)
{
	rng_state = 0; /* the child's only thread is the forking one */
}

static void rng_init_once(void)
{
	pthread_atfork(NULL, NULL, rng_atfork_child);
}

uint64_t brk__random_u64(void)
{
	uint64_t x = rng_state;

	if (x == 0) {
		pthread_once(&rng_once, rng_init_once);
		x = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&rng_state ^
		    brk__monotonic_ns(NULL);
		/* one splitmix64 step spreads the seed's bits */
		x += 0x9E3779B97F4A7C15ULL;
		x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
		x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
		x ^= x >> 31;
		if (x == 0)
			x = 0x9E3779B97F4A7C15ULL;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

uint64_t brk__random(const brk_segment *s)
{
	if (s->random)
		return s->random(s->random_ctx);
	return brk__random_u64();
}

uint64_t brk_monotonic_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
