/*
 * race_creator.c - a worker creating records while bctl apply runs
 * (tests/cli/bctl_apply_room.sh): race_creator SHM PREFIX N GOFILE SEED
 * waits until GOFILE exists and a random 0-15 ms more, then creates the
 * breakers PREFIX-0 .. PREFIX-(N-1) with a random pause of 0-300 µs
 * before each (seeded by SEED), going on after a refusal (the segment
 * full): spread so that some rounds land between bctl apply's check and
 * its writes. Prints how many it
 * created; exit 0, or 1 if it could not attach.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"

int main(int argc, char **argv)
{
	struct brk_attach_opts o;
	struct timespec ts = { 0, 50000 };
	brk_segment *seg;
	brk_breaker *b;
	char name[64];
	int i, n, made = 0;
	unsigned seed;

	if (argc != 6) {
		fprintf(stderr, "usage: race_creator SHM PREFIX N GOFILE SEED\n");
		return 2;
	}
	n = atoi(argv[3]);
	seed = (unsigned)strtoul(argv[5], NULL, 10);
	brk_attach_opts_init(&o);
	o.shm_name = argv[1];
	o.flags = BRK_ATTACH_NOCREATE;
	if (brk_attach(&o, &seg) != 0) {
		fprintf(stderr, "race_creator: cannot attach %s\n", argv[1]);
		return 1;
	}
	while (access(argv[4], F_OK) != 0)
		nanosleep(&ts, NULL);
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(rand_r(&seed) % 15000) * 1000;
	nanosleep(&ts, NULL);
	for (i = 0; i < n; i++) {
		ts.tv_nsec = (long)(rand_r(&seed) % 300) * 1000;
		nanosleep(&ts, NULL);
		snprintf(name, sizeof(name), "%s-%d", argv[2], i);
		if (brk_breaker_get(seg, name, NULL, &b) == 0)
			made++;
	}
	printf("%d\n", made);
	brk_detach(seg);
	return 0;
}
