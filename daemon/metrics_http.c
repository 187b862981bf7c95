/*
 * metrics_http.c - breakerd's /metrics endpoint (see metrics_http.h).
 */
#include "metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "logfmt.h"

#define METRICS_HTTP_USAGE "--metrics-listen: '%s' "

#ifdef BREAKERD_HAVE_MICROHTTPD
#include <microhttpd.h>

#include "metrics_render.h"

/* ADDR:PORT into @ss. 0 or CLI_EXIT_USAGE after the message. */
static int parse_listen(const char *arg, struct sockaddr_storage *ss,
			socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *h = arg, *port;
	size_t hlen;
	uint64_t p;
	int v6 = arg[0] == '[';

	if (v6) {
		const char *close = strchr(arg, ']');

		if (!close || close[1] != ':')
			return cli_usage_error(METRICS_HTTP_USAGE "is not ADDR:PORT "
					       "(an IPv6 address is written [::1]:9464)",
					       cli_q(arg));
		h = arg + 1;
		hlen = (size_t)(close - h);
		port = close + 2;
	} else {
		colon = strrchr(arg, ':');
		if (!colon)
			return cli_usage_error(METRICS_HTTP_USAGE "has no port: "
					       "write ADDR:PORT, e.g. 127.0.0.1:9464",
					       cli_q(arg));
		hlen = (size_t)(colon - arg);
		port = colon + 1;
	}
	if (parse_uint_arg(port, 0, 65535, &p) != 0)
		return cli_usage_error(METRICS_HTTP_USAGE "has a bad port '%s': "
				       "0-65535 (0: the kernel chooses)",
				       cli_q(arg), cli_q(port));
	if (hlen == 0 || hlen >= sizeof(host))
		goto bad_addr;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			goto bad_addr;
		/* The socket is IPv6-only (IPV6_V6ONLY): bind() would say
		 * EINVAL. */
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			char v4[INET_ADDRSTRLEN];

			inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], v4, sizeof(v4));
			return cli_usage_error(METRICS_HTTP_USAGE "is an IPv4-mapped "
					       "IPv6 address: write it as IPv4, "
					       "%s:%" PRIu64, cli_q(arg), v4, p);
		}
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			goto bad_addr;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)p);
		*len = sizeof(*s4);
	}
	return 0;
bad_addr:
	return cli_usage_error(METRICS_HTTP_USAGE "has a bad address: a numeric "
			       "IPv4 address (127.0.0.1:9464) or a bracketed IPv6 "
			       "one ([::1]:9464)", cli_q(arg));
}

int metrics_http_bind(const char *arg)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	int fd, one = 1, e;

	if (parse_listen(arg, &ss, &len))
		return -CLI_EXIT_USAGE;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		if (e == EAFNOSUPPORT)
			return -cli_usage_error(METRICS_HTTP_USAGE "cannot be used: %s",
						cli_q(arg), strerror(e));
		cli_error("--metrics-listen: socket: %s", strerror(e));
		return -CLI_EXIT_ERROR;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 64) != 0) {
		e = errno;
		close(fd);
		if (e == EADDRINUSE || e == EADDRNOTAVAIL || e == EACCES ||
		    e == EAFNOSUPPORT)
			return -cli_usage_error(METRICS_HTTP_USAGE "cannot be bound: %s",
						cli_q(arg), strerror(e));
		cli_error("--metrics-listen: '%s': %s", cli_q(arg), strerror(e));
		return -CLI_EXIT_ERROR;
	}
	return fd;
}

/* A connection: when its request (the next one, on a kept-alive
 * connection) started, and whether libmicrohttpd has read it whole. The
 * reaper thread drops those too slow (shutdown(2): libmicrohttpd sees
 * the end and closes it; the slot is freed on its CLOSED notice, before
 * libmicrohttpd closes the fd, under the same mutex). */
struct conn_slot {
	int used;
	int fd;
	int dropped;
	int have_request;           /* on_request() called for this request */
	uint64_t start_ms;          /* monotonic */
	struct sockaddr_storage addr;
	socklen_t addr_len;
};

struct metrics_http {
	struct MHD_Daemon *d;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t reaper;
	int reaper_started;
	int reaper_stop;            /* under mu */
	struct conn_slot conns[METRICS_HTTP_MAX_CONN + 8]; /* under mu */
	uint64_t slow_dropped;      /* under mu: since the last log line */
	uint64_t slow_last_log_ms;  /* under mu */
	brk_segment *seg;    /* read-only; used by the HTTP thread only */
	atomic_int stopping; /* set by metrics_http_stop(): a render in
	                        progress gives up (metrics_opts.cancel) */
	atomic_uint renders; /* rendered bodies alive (queued or being sent;
	                        see METRICS_HTTP_MAX_RENDERS) */
	unsigned left_out;   /* corrupt records the last scrape left out
	                        (HTTP thread only; logged when it changes) */
	char shm[BRK_SHM_NAME_MAX + 1];
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *text, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

/* Corrupt records a scrape left out, logged when their number changes
 * (not once a scrape: the renderer's own notes would be bare stderr
 * lines from this thread, one per record and scrape). */
static void log_left_out(struct metrics_http *m, unsigned left_out)
{
	struct logline l;

	if (left_out)
		ll_begin(&l, "warn", "metrics: corrupt records left out of /metrics");
	else
		ll_begin(&l, "info", "metrics: no corrupt record left out any more");
	ll_str(&l, "shm", m->shm);
	ll_u64(&l, "left_out", left_out);
	ll_end(&l);
	m->left_out = left_out;
}

/* A rendered body, alive until libmicrohttpd has sent it or dropped its
 * connection (then body_free(): one render fewer). */
struct body {
	struct metrics_http *m;
	char *buf;
};

static void body_free(void *cls)
{
	struct body *b = cls;

	atomic_fetch_sub(&b->m->renders, 1);
	free(b->buf);
	free(b);
}

/* 503 while METRICS_HTTP_MAX_RENDERS bodies are alive. */
static enum MHD_Result busy(struct MHD_Connection *c)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(METRICS_HTTP_BUSY), (void *)METRICS_HTTP_BUSY,
		MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	ok = MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, r);
	MHD_destroy_response(r);
	return ok;
}

/* One render of the segment into a malloc'd buffer. */
static enum MHD_Result scrape(struct metrics_http *m, struct MHD_Connection *c)
{
	struct metrics_opts o;
	struct MHD_Response *r;
	struct body *b;
	enum MHD_Result ok;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	unsigned left_out = 0;
	int rc;

	/* Each answer holds a whole render until it is sent: a client that
	 * does not read would otherwise pin one per connection. */
	if (atomic_load(&m->renders) >= METRICS_HTTP_MAX_RENDERS)
		return busy(c);
	b = malloc(sizeof(*b));
	f = b ? open_memstream(&buf, &len) : NULL;
	if (!f) {
		free(b);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	metrics_opts_init(&o);
	o.left_out = &left_out;
	o.cancel = &m->stopping;
	rc = metrics_render(f, m->seg, m->shm, &o);
	if (fclose(f) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc == -ECANCELED) { /* breakerd is stopping */
		free(b);
		free(buf);
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			     "breakerd is stopping\n", NULL);
	}
	if (rc < 0) {
		struct logline l;

		free(b);
		free(buf);
		ll_begin(&l, "error", "metrics render failed");
		ll_str(&l, "error", brk_strerror(rc));
		ll_end(&l);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "metrics render failed\n", NULL);
	}
	if (left_out != m->left_out)
		log_left_out(m, left_out);
	b->m = m;
	b->buf = buf;
	r = MHD_create_response_from_buffer_with_free_callback_cls(len, buf,
								   body_free, b);
	if (!r) {
		free(b);
		free(buf);
		return MHD_NO;
	}
	atomic_fetch_add(&m->renders, 1); /* body_free() takes it back */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ok;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct conn_slot *slot_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static int same_addr(const struct conn_slot *a, const struct conn_slot *b)
{
	const struct sockaddr_in *a4 = (const void *)&a->addr, *b4 = (const void *)&b->addr;
	const struct sockaddr_in6 *a6 = (const void *)&a->addr, *b6 = (const void *)&b->addr;

	if (a->addr.ss_family != b->addr.ss_family)
		return 0;
	if (a->addr.ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	if (a->addr.ss_family == AF_INET6)
		return memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr)) == 0;
	return 0;
}

/* Under mu: drop @s (a slow request); counted for the next log line. */
static void drop_slow(struct metrics_http *m, struct conn_slot *s)
{
	if (s->dropped)
		return;
	s->dropped = 1;
	(void)shutdown(s->fd, SHUT_RDWR);
	m->slow_dropped++;
}

/* Under mu: one line for the drops since the last, at most every 10 s. */
static void log_slow(struct metrics_http *m, uint64_t now, int force)
{
	struct logline l;

	if (!m->slow_dropped ||
	    (!force && m->slow_last_log_ms && now - m->slow_last_log_ms < 10000))
		return;
	ll_begin(&l, "warn", "metrics: slow clients dropped (no whole request "
		 "in time, or the oldest of an address over its limit)");
	ll_u64(&l, "dropped", m->slow_dropped);
	ll_u64(&l, "within_s", METRICS_HTTP_REQUEST_S);
	ll_end(&l);
	m->slow_dropped = 0;
	m->slow_last_log_ms = now;
}

static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct metrics_http *m = cls;
	const union MHD_ConnectionInfo *fdi, *ai;
	struct conn_slot *s = NULL, *old = NULL;
	unsigned i, same = 0;

	pthread_mutex_lock(&m->mu);
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		s = *socket_context;
		if (s)
			s->used = 0;
		*socket_context = NULL;
		pthread_mutex_unlock(&m->mu);
		return;
	}
	for (i = 0; i < sizeof(m->conns) / sizeof(m->conns[0]); i++)
		if (!m->conns[i].used) {
			s = &m->conns[i];
			break;
		}
	fdi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (s && fdi) {
		memset(s, 0, sizeof(*s));
		s->used = 1;
		s->fd = fdi->connect_fd;
		s->start_ms = mono_ms();
		if (ai && ai->client_addr) {
			s->addr_len = ai->client_addr->sa_family == AF_INET6
				? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
			memcpy(&s->addr, ai->client_addr, s->addr_len);
		}
		*socket_context = s;
		/* over the address's share: its oldest slow request goes */
		for (i = 0; i < sizeof(m->conns) / sizeof(m->conns[0]); i++) {
			struct conn_slot *o = &m->conns[i];

			if (!o->used || o == s || o->dropped || !same_addr(o, s))
				continue;
			same++;
			if (!o->have_request && (!old || o->start_ms < old->start_ms))
				old = o;
		}
		if (same + 1 > METRICS_HTTP_MAX_PER_IP && old)
			drop_slow(m, old);
	}
	pthread_mutex_unlock(&m->mu);
}

/* A request answered: the next one on this connection gets its own
 * METRICS_HTTP_REQUEST_S. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct metrics_http *m = cls;
	struct conn_slot *s = slot_of(c);

	(void)con_cls;
	(void)toe;
	pthread_mutex_lock(&m->mu);
	if (s && s->used) {
		s->have_request = 0;
		s->start_ms = mono_ms();
	}
	pthread_mutex_unlock(&m->mu);
}

static void *reaper_main(void *arg)
{
	struct metrics_http *m = arg;
	struct timespec until;
	uint64_t now;
	unsigned i;

	pthread_mutex_lock(&m->mu);
	while (!m->reaper_stop) {
		now = mono_ms();
		for (i = 0; i < sizeof(m->conns) / sizeof(m->conns[0]); i++) {
			struct conn_slot *s = &m->conns[i];

			if (s->used && !s->have_request &&
			    now - s->start_ms >= METRICS_HTTP_REQUEST_S * 1000u)
				drop_slow(m, s);
		}
		log_slow(m, now, 0);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 250 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&m->cv, &m->mu, &until);
	}
	log_slow(m, mono_ms(), 1);
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

/* Every request is answered on its first call, before any body is read:
 * libmicrohttpd then closes a connection whose upload was not read, so
 * a body costs nothing. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct metrics_http *m = cls;
	struct conn_slot *s = slot_of(c);

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (s) {
		pthread_mutex_lock(&m->mu);
		if (s->used)
			s->have_request = 1; /* the whole head is read */
		pthread_mutex_unlock(&m->mu);
	}
	if (strcmp(url, "/metrics") != 0)
		return reply(c, MHD_HTTP_NOT_FOUND,
			     "not found: breakerd serves /metrics\n", NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			     "method not allowed: GET or HEAD\n", "GET, HEAD");
	return scrape(m, c);
}

static void log_bound(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN], listen[INET6_ADDRSTRLEN + 16];
	struct logline l;
	unsigned port = 0;

	host[0] = '\0';
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
		if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
			port = ntohs(s6->sin6_port);
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
			port = ntohs(s4->sin_port);
		}
	}
	snprintf(listen, sizeof(listen), ss.ss_family == AF_INET6 ? "[%s]:%u"
		 : "%s:%u", host, port);
	ll_begin(&l, "info", "metrics listening");
	ll_str(&l, "listen", listen);
	ll_u64(&l, "port", port);
	ll_str(&l, "path", "/metrics");
	ll_end(&l);
}

/* libmicrohttpd's own messages (refused connections, limits reached,
 * malformed requests) as logfmt lines of the HTTP thread. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	/* one line a second at most (per connection messages can come by
	 * the thousand); the next says how many were left out. HTTP thread
	 * (and the starter, before it runs) only. */
	static uint64_t last_ms, left_out;
	char msg[512];
	struct logline l;
	uint64_t now = mono_ms();
	size_t n;

	(void)cls;
	if (last_ms && now - last_ms < 1000) {
		left_out++;
		return;
	}
	last_ms = now ? now : 1;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
		msg[--n] = '\0';
	ll_begin(&l, "warn", "metrics http");
	ll_str(&l, "message", msg);
	if (left_out)
		ll_u64(&l, "suppressed", left_out);
	ll_end(&l);
	left_out = 0;
}

static void log_fail(const char *what, const char *why)
{
	struct logline l;

	ll_begin(&l, "error", "metrics endpoint not started");
	ll_str(&l, "step", what);
	ll_str(&l, "error", why);
	ll_end(&l);
}

static void reaper_end(struct metrics_http *m)
{
	pthread_mutex_lock(&m->mu);
	m->reaper_stop = 1;
	pthread_cond_signal(&m->cv);
	pthread_mutex_unlock(&m->mu);
	if (m->reaper_started)
		pthread_join(m->reaper, NULL);
	m->reaper_started = 0;
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
}

struct metrics_http *metrics_http_start(int fd, const char *shm)
{
	struct metrics_http *m = calloc(1, sizeof(*m));
	struct brk_attach_opts ao;
	int rc;

	if (!m) {
		close(fd);
		log_fail("alloc", strerror(ENOMEM));
		return NULL;
	}
	snprintf(m->shm, sizeof(m->shm), "%s", shm);
	brk_attach_opts_init(&ao);
	ao.shm_name = shm;
	ao.flags = BRK_ATTACH_READONLY | BRK_ATTACH_NOPROCESS;
	rc = brk_attach(&ao, &m->seg);
	if (rc < 0) {
		close(fd);
		log_fail("attach read-only", brk_strerror(rc));
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	m->reaper_started = pthread_create(&m->reaper, NULL, reaper_main, m) == 0;
	/* the per-address limit is ours (on_connection): one more than it
	 * here, so the connection over it is accepted and drops the
	 * address's oldest slow one */
	m->d = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
		on_request, m,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL, /* first, as asked */
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, m,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_HTTP_MAX_CONN,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)METRICS_HTTP_MAX_PER_IP + 1,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_HTTP_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_HTTP_MEMORY,
		MHD_OPTION_END);
	if (!m->d || !m->reaper_started) {
		if (m->d)
			MHD_stop_daemon(m->d);
		else
			close(fd);
		reaper_end(m);
		brk_detach(m->seg);
		free(m);
		log_fail("MHD_start_daemon", "libmicrohttpd refused to start");
		return NULL;
	}
	log_bound(fd);
	return m;
}

void metrics_http_stop(struct metrics_http *m)
{
	if (!m)
		return;
	/* A render in progress stops at its next record or family instead
	 * of holding SIGTERM up for a whole render of a big segment. */
	atomic_store(&m->stopping, 1);
	MHD_stop_daemon(m->d); /* joins the thread, closes the listen socket */
	reaper_end(m);
	brk_detach(m->seg);
	free(m);
}

#else /* built without libmicrohttpd */

int metrics_http_bind(const char *arg)
{
	return -cli_usage_error(METRICS_HTTP_USAGE "cannot be served: this "
				"breakerd was built without libmicrohttpd "
				"(install libmicrohttpd-dev and rebuild; meson "
				"option 'metrics_http')", cli_q(arg));
}

struct metrics_http *metrics_http_start(int fd, const char *shm)
{
	(void)shm;
	close(fd);
	return NULL;
}

void metrics_http_stop(struct metrics_http *m)
{
	(void)m;
}
#endif
