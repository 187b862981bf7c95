/*
 * fleet_connect_probe.c - test helper: fleet_url_parse() + fleet_connect()
 * (daemon/fleet/fleet_conf.c) against a real server, for fleet_connect.sh.
 *
 *   fleet_connect_probe URL           connect to URL
 *   fleet_connect_probe --silent      a loopback listener that completes
 *                                     the TCP handshake and never answers
 *   fleet_connect_probe --blackhole   a loopback listener whose accept
 *                                     queue is full: the SYN goes unanswered
 *
 * Prints "ok db=N" (the server's CLIENT INFO) or "error: MESSAGE", then
 * "elapsed_ms=N" (CLOCK_MONOTONIC around fleet_connect()). Exit 0 (ok),
 * 1 (connect refused), 2 (URL refused). The URL is read as from a file
 * (from_argv 0): the test passes passwords on purpose.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fleet_conf.h"

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A listener on 127.0.0.1 (backlog @backlog); its port in *@port. */
static int listener(int backlog, int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, backlog) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		perror("listener");
		exit(3);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Fill the accept queue of the listener on @port: connect until a
 * handshake no longer completes within 200 ms. */
static void fill_queue(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int i;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	for (i = 0; i < 64; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		fd_set w;
		struct timeval tv = { 0, 200000 };

		if (fd < 0)
			exit(3);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			continue;
		if (errno != EINPROGRESS)
			exit(3);
		FD_ZERO(&w);
		FD_SET(fd, &w);
		if (select(fd + 1, NULL, &w, NULL, &tv) == 0)
			return; /* this one hangs: the queue is full */
	}
	fprintf(stderr, "fleet_connect_probe: the accept queue never filled\n");
	exit(3);
}

int main(int argc, char **argv)
{
	struct fleet_conf c;
	char err[512], url[64];
	redisContext *ctx;
	uint64_t t0, t1;
	int port;

	if (argc != 2) {
		fprintf(stderr, "usage: %s URL|--silent|--blackhole\n", argv[0]);
		return 3;
	}
	memset(&c, 0, sizeof(c));
	if (strcmp(argv[1], "--silent") == 0 ||
	    strcmp(argv[1], "--blackhole") == 0) {
		int blackhole = argv[1][2] == 'b';

		listener(blackhole ? 0 : 16, &port);
		if (blackhole)
			fill_queue(port);
		snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
		argv[1] = url;
	}
	if (fleet_url_parse(argv[1], 0, &c, err, sizeof(err))) {
		printf("error: %s\n", err);
		return 2;
	}
	t0 = mono_ms();
	ctx = fleet_connect(&c, err, sizeof(err));
	t1 = mono_ms();
	if (!ctx) {
		printf("error: %s\nelapsed_ms=%llu\n", err,
		       (unsigned long long)(t1 - t0));
		return 1;
	}
	{
		redisReply *r = redisCommand(ctx, "CLIENT INFO");
		const char *db = r && r->type == REDIS_REPLY_STRING ?
				 strstr(r->str, " db=") : NULL;

		printf("ok db=%d\nelapsed_ms=%llu\n", db ? atoi(db + 4) : -1,
		       (unsigned long long)(t1 - t0));
		if (r)
			freeReplyObject(r);
	}
	redisFree(ctx);
	return 0;
}
