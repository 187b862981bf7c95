/*
 * bf_worker.c SHM NAME - a worker for breakers_reload.sh: attaches SHM,
 * gets breaker NAME with its own create-time config (failure_threshold 9)
 * and, for each line on stdin, prints "failure_threshold N" as this
 * process sees it now. Exits at EOF.
 */
#include <stdio.h>
#include <string.h>

#include "breaker.h"

int main(int argc, char **argv)
{
	struct brk_attach_opts o;
	struct brk_config c;
	struct brk_info in;
	brk_segment *seg;
	brk_breaker *b;
	char line[64];
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: bf_worker SHM NAME\n");
		return 2;
	}
	brk_attach_opts_init(&o);
	o.shm_name = argv[1];
	rc = brk_attach(&o, &seg);
	if (rc < 0) {
		fprintf(stderr, "bf_worker: attach: %s\n", brk_strerror(rc));
		return 1;
	}
	brk_config_init(&c);
	c.failure_threshold = 9;
	rc = brk_breaker_get(seg, argv[2], &c, &b);
	if (rc < 0) {
		fprintf(stderr, "bf_worker: get: %s\n", brk_strerror(rc));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		rc = brk_breaker_info(b, &in);
		if (rc < 0)
			printf("error %s\n", brk_strerror(rc));
		else
			printf("failure_threshold %u\n", (unsigned)in.config.failure_threshold);
		fflush(stdout);
	}
	brk_detach(seg);
	return 0;
}
