/*
 * metrics_http.h - breakerd --metrics-listen ADDR:PORT: GET/HEAD /metrics
 * serves the segment in the Prometheus text format, rendered by the same
 * code as `bctl metrics` (cli/metrics_render.h), with libmicrohttpd
 * (Debian: libmicrohttpd-dev; meson feature option 'metrics_http').
 *
 * ADDR is a numeric IPv4 address (127.0.0.1:9464) or a bracketed IPv6
 * one ([::1]:9464); PORT 0 lets the kernel choose, and the bound address
 * is logged ("metrics listening", port=N). The socket is bound before the
 * segment is attached, so a bad or busy address stops breakerd with a
 * usage error (exit 2) and touches nothing.
 *
 * Served from one internal polling thread of libmicrohttpd: each scrape
 * is one render of a read-only attach of the segment (a snapshot per
 * record, metrics_render()). Other paths: 404; other methods: 405 with
 * "Allow: GET, HEAD". Hostile clients are bounded: at most
 * METRICS_HTTP_MAX_CONN connections (METRICS_HTTP_MAX_PER_IP per client
 * address), METRICS_HTTP_MEMORY bytes of request line and headers per
 * connection (more: 414 or 431 from libmicrohttpd), an idle connection is
 * closed after METRICS_HTTP_TIMEOUT_S seconds, and one that has not sent
 * a whole request METRICS_HTTP_REQUEST_S seconds after it connected (or
 * after its last answer) is dropped, however slowly it trickles bytes; a
 * new connection from an address that already holds
 * METRICS_HTTP_MAX_PER_IP drops that address's oldest one still sending
 * its request (so slow sockets cannot lock a scraper out), a
 * request body is never read (the answer comes first, then the
 * connection is closed), and at most METRICS_HTTP_MAX_RENDERS rendered
 * answers are alive at once - each holds a whole render of the segment
 * until it is sent, so clients that do not read cannot pin one per
 * connection: a scrape past that is answered 503 with Retry-After: 1.
 */
#ifndef BREAKERD_METRICS_HTTP_H
#define BREAKERD_METRICS_HTTP_H

#include "breaker.h"

#define METRICS_HTTP_MAX_CONN 32
#define METRICS_HTTP_MAX_PER_IP 16
#define METRICS_HTTP_MEMORY (32u * 1024u)
#define METRICS_HTTP_TIMEOUT_S 5u
#define METRICS_HTTP_REQUEST_S 5u   /* a whole request within this */
#define METRICS_HTTP_MAX_RENDERS 4 /* rendered answers alive at once */
#define METRICS_HTTP_BUSY "busy: other scrapes are still being sent; retry\n"

struct metrics_http;

/**
 * metrics_http_bind - parse @arg (ADDR:PORT, see above) and bind and
 * listen on it. Returns the listening socket (>= 0), or CLI_EXIT_USAGE
 * negated after a usage error naming @arg (bad form, port out of range,
 * bad address, address in use or not available), or -CLI_EXIT_ERROR
 * after another system error. Without libmicrohttpd: the usage error
 * saying breakerd was built without it.
 */
int metrics_http_bind(const char *arg);

/**
 * metrics_http_start - serve /metrics on the socket @fd of
 * metrics_http_bind() (it takes it over), for segment @shm (attached
 * read-only here, for the HTTP thread alone), and log the bound address.
 * Call after the segment exists and after supervise_signals_init(), so
 * the thread inherits the blocked signal mask. Returns the server, or
 * NULL after logging why (the socket is closed).
 */
struct metrics_http *metrics_http_start(int fd, const char *shm);

/** metrics_http_stop - stop the thread, close the socket, detach; a
 * render in progress gives up at its next record or family (its scrape
 * gets 503), so SIGTERM is not held up by a render of a big segment.
 * NULL: nothing. */
void metrics_http_stop(struct metrics_http *m);

#endif /* BREAKERD_METRICS_HTTP_H */
