/*
 * baseline_redis.c - a token bucket as a Lua script on a local
 * redis-server, the usual "shared rate limit" design, over loopback TCP.
 *
 * bench/run.sh starts redis-server on a free 127.0.0.1 port with no
 * persistence and passes --redis-port; without it this baseline is
 * skipped with a note. The client is a minimal RESP (REdis Serialization
 * Protocol) writer and reader over one TCP socket per worker, so no
 * hiredis is needed: one request written with one write(), one reply
 * read, TCP_NODELAY, no pipelining (a rate-limit check is one round trip).
 *
 * The script is loaded once (SCRIPT LOAD) and each take is one EVALSHA
 * (EVAL if the server answers NOSCRIPT). Its rate is out of reach, so
 * every take is admitted: like the other rows, this is the admit path.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "bench.h"

#define CONNECT_WAIT_MS 5000

/* KEYS[1]; ARGV: rate per µs, burst, now (µs), tokens wanted. */
static const char script[] =
	"local rate = tonumber(ARGV[1])\n"
	"local burst = tonumber(ARGV[2])\n"
	"local now = tonumber(ARGV[3])\n"
	"local want = tonumber(ARGV[4])\n"
	"local v = redis.call('HMGET', KEYS[1], 'tokens', 'ts')\n"
	"local tokens = tonumber(v[1])\n"
	"local ts = tonumber(v[2])\n"
	"if tokens == nil then tokens = burst; ts = now end\n"
	"local dt = now - ts\n"
	"if dt < 0 then dt = 0 end\n"
	"tokens = math.min(burst, tokens + dt * rate)\n"
	"local ok = 0\n"
	"if tokens >= want then tokens = tokens - want; ok = 1 end\n"
	"redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)\n"
	"return ok\n";

struct conn {
	int fd;
	size_t len, pos;
	char buf[4096];
};

struct bench_redis {
	int port;
	char sha[41];
};

struct rlocal {
	struct conn c;
	const struct bench_redis *r;
	char key[32];
};

static int send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Encode argv as a RESP array of bulk strings and write it. */
static int command(struct conn *c, int argc, const char *const *argv)
{
	char out[4096];
	size_t o = 0;
	int i, k;

	k = snprintf(out, sizeof(out), "*%d\r\n", argc);
	o = (size_t)k;
	for (i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]);
		k = snprintf(out + o, sizeof(out) - o, "$%zu\r\n", n);
		if (k < 0 || o + (size_t)k + n + 2 > sizeof(out))
			return -E2BIG;
		o += (size_t)k;
		memcpy(out + o, argv[i], n);
		o += n;
		out[o++] = '\r';
		out[o++] = '\n';
	}
	return send_all(c->fd, out, o);
}

static int fill(struct conn *c)
{
	ssize_t k;

	if (c->pos == c->len)
		c->pos = c->len = 0;
	if (c->len == sizeof(c->buf))
		return -E2BIG;
	do
		k = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
	while (k < 0 && errno == EINTR);
	if (k <= 0)
		return -EIO;
	c->len += (size_t)k;
	return 0;
}

/* One CRLF-terminated line, without the CRLF. */
static int read_line(struct conn *c, char *line, size_t cap)
{
	for (;;) {
		char *p = memchr(c->buf + c->pos, '\n', c->len - c->pos);
		if (p) {
			size_t n = (size_t)(p - (c->buf + c->pos));
			if (n > 0 && p[-1] == '\r')
				n--;
			if (n >= cap)
				return -E2BIG;
			memcpy(line, c->buf + c->pos, n);
			line[n] = 0;
			c->pos = (size_t)(p - c->buf) + 1;
			return 0;
		}
		if (c->pos > 0) {
			memmove(c->buf, c->buf + c->pos, c->len - c->pos);
			c->len -= c->pos;
			c->pos = 0;
		}
		if (fill(c))
			return -EIO;
	}
}

/*
 * Read one reply: simple string, error, integer or bulk string (arrays are
 * not used here). @out receives its text ("-..." for errors, kept with
 * the dash so the caller can tell). Returns 0 or -EIO/-E2BIG/-EPROTO.
 */
static int reply(struct conn *c, char *out, size_t cap)
{
	char line[256];
	long n;
	int rc = read_line(c, line, sizeof(line));

	if (rc)
		return rc;
	switch (line[0]) {
	case '+':
	case ':':
		snprintf(out, cap, "%s", line + 1);
		return 0;
	case '-':
		snprintf(out, cap, "%s", line);
		return 0;
	case '$':
		n = strtol(line + 1, NULL, 10);
		if (n < 0) {
			snprintf(out, cap, "(nil)");
			return 0;
		}
		if ((size_t)n + 2 > sizeof(c->buf))
			return -E2BIG;
		if (c->pos > 0) {
			memmove(c->buf, c->buf + c->pos, c->len - c->pos);
			c->len -= c->pos;
			c->pos = 0;
		}
		while (c->len - c->pos < (size_t)n + 2)
			if (fill(c))
				return -EIO;
		snprintf(out, cap, "%.*s", (int)n, c->buf + c->pos);
		c->pos += (size_t)n + 2;
		return 0;
	default:
		return -EPROTO;
	}
}

static int connect_port(int port, int wait_ms, struct conn *c)
{
	struct sockaddr_in a;
	struct timespec ts = { 0, 20000000 };
	int one = 1, waited = 0;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (;;) {
		c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c->fd < 0)
			return -errno;
		if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		close(c->fd);
		c->fd = -1;
		if (waited >= wait_ms)
			return -ECONNREFUSED;
		nanosleep(&ts, NULL);
		waited += 20;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->len = c->pos = 0;
	return 0;
}

/**
 * bench_redis_setup - connect to 127.0.0.1:@port (waiting up to 5 s for
 * the server to come up), check PING and load the script.
 * Returns 0 or a negative code with a reason in @why.
 */
int bench_redis_setup(int port, struct bench_redis **out, char *why,
		      size_t why_len)
{
	struct bench_redis *r;
	struct conn *c;
	char rep[256];
	const char *ping[] = { "PING" };
	const char *load[] = { "SCRIPT", "LOAD", script };
	int rc;

	if (port <= 0 || port > 65535) {
		snprintf(why, why_len, "no redis port given");
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	c = malloc(sizeof(*c));
	if (!r || !c) {
		free(r);
		free(c);
		return -ENOMEM;
	}
	r->port = port;
	rc = connect_port(port, CONNECT_WAIT_MS, c);
	if (rc) {
		snprintf(why, why_len, "cannot connect to 127.0.0.1:%d: %s",
			 port, strerror(-rc));
		goto out;
	}
	rc = command(c, 1, ping);
	if (!rc)
		rc = reply(c, rep, sizeof(rep));
	if (rc || strcmp(rep, "PONG") != 0) {
		snprintf(why, why_len, "127.0.0.1:%d did not answer PING", port);
		rc = rc ? rc : -EPROTO;
		goto out;
	}
	rc = command(c, 3, load);
	if (!rc)
		rc = reply(c, rep, sizeof(rep));
	if (rc || strlen(rep) != 40) {
		snprintf(why, why_len, "SCRIPT LOAD failed: %s",
			 rc ? strerror(-rc) : rep);
		rc = rc ? rc : -EPROTO;
		goto out;
	}
	memcpy(r->sha, rep, 41);
out:
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	if (rc) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void bench_redis_teardown(struct bench_redis *r)
{
	free(r);
}

static int init_redis(void *arg, int worker, int rec, void **local)
{
	const struct bench_redis *r = arg;
	struct rlocal *l = malloc(sizeof(*l));
	int rc;

	(void)worker;
	if (!l)
		return -ENOMEM;
	l->r = r;
	snprintf(l->key, sizeof(l->key), "bench:tb:%d", rec);
	rc = connect_port(r->port, 0, &l->c);
	if (rc) {
		free(l);
		return rc;
	}
	*local = l;
	return 0;
}

static void fini_redis(void *p)
{
	struct rlocal *l = p;

	close(l->c.fd);
	free(l);
}

/* One take: EVALSHA (EVAL on NOSCRIPT). 1 admitted, 0 refused, <0 error. */
static int take(struct rlocal *l)
{
	char now[32], rep[256];
	const char *argv[] = { "EVALSHA", l->r->sha, "1", l->key, "1000000",
			       "1000000000", now, "1" };
	int rc;

	snprintf(now, sizeof(now), "%llu",
		 (unsigned long long)(bench_now_ns() / 1000u));
	rc = command(&l->c, 8, argv);
	if (!rc)
		rc = reply(&l->c, rep, sizeof(rep));
	if (!rc && strncmp(rep, "-NOSCRIPT", 9) == 0) {
		argv[0] = "EVAL";
		argv[1] = script;
		rc = command(&l->c, 8, argv);
		if (!rc)
			rc = reply(&l->c, rep, sizeof(rep));
	}
	if (rc)
		return rc;
	return rep[0] == '1' ? 1 : rep[0] == '0' ? 0 : -EPROTO;
}

static void run_redis(void *p, uint64_t n, struct bench_counts *c)
{
	struct rlocal *l = p;
	uint64_t i;

	int rc;

	for (i = 0; i < n; i++) {
		rc = take(l);
		if (rc == 1) {
			c->ok++;
		} else {
			c->failed++;
			c->last_err = rc ? rc : -EAGAIN; /* 0: refused */
		}
	}
}

void bench_redis_bucket(struct bench_redis *r, struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "redis EVALSHA token bucket (TCP)";
	w->arg = r;
	w->ops = 2000;
	w->warmup = 100;
	w->init = init_redis;
	w->run = run_redis;
	w->fini = fini_redis;
}
