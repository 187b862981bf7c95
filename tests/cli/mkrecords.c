/*
 * mkrecords.c - fill a segment for the list and metrics tests (and the
 * inspection benchmark): mkrecords SHM CAPACITY N [OPEN_EVERY [BUCKETS]]
 *
 * Creates N breakers named "t<i % 10>/s<i % 100>/h<i>" (so --by-level 1
 * gives 10 prefixes, 2 gives 100, 3 gives N), trips every OPEN_EVERY-th
 * one (i % OPEN_EVERY == 0; 0: none) for an hour, and adds BUCKETS GCRA
 * buckets "t<i % 10>/bucket<i>". Exit 0, or 1 with the error on stderr.
 *
 * mkrecords --walk SHM: print every record's name, one a line, in the
 * order brk_record_next() returns them (what `bctl list` must match).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "breaker.h"

static int walk(const char *shm)
{
	struct brk_attach_opts o;
	struct brk_info *in = malloc(sizeof(*in));
	brk_segment *seg;
	uint64_t cur = 0;
	int rc;

	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.flags = BRK_ATTACH_READONLY | BRK_ATTACH_NOCREATE;
	if (!in || (rc = brk_attach(&o, &seg)) != 0) {
		fprintf(stderr, "mkrecords: cannot attach %s\n", shm);
		return 1;
	}
	while ((rc = brk_record_next(seg, &cur, in)) != -ENOENT)
		if (rc == 0)
			printf("%s\n", in->name);
	brk_detach(seg);
	free(in);
	return 0;
}

int main(int argc, char **argv)
{
	struct brk_attach_opts o;
	unsigned long n, every = 0, buckets = 0, i;
	brk_segment *seg;
	brk_breaker *b;
	brk_bucket *k;
	char name[64];
	int rc;

	if (argc == 3 && strcmp(argv[1], "--walk") == 0)
		return walk(argv[2]);
	if (argc < 4) {
		fprintf(stderr, "usage: mkrecords SHM CAPACITY N [OPEN_EVERY [BUCKETS]]\n");
		return 2;
	}
	n = strtoul(argv[3], NULL, 10);
	if (argc > 4)
		every = strtoul(argv[4], NULL, 10);
	if (argc > 5)
		buckets = strtoul(argv[5], NULL, 10);
	brk_attach_opts_init(&o);
	o.shm_name = argv[1];
	o.capacity = (uint32_t)strtoul(argv[2], NULL, 10);
	rc = brk_attach(&o, &seg);
	if (rc) {
		fprintf(stderr, "mkrecords: attach %s: %s\n", argv[1], brk_strerror(rc));
		return 1;
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "t%lu/s%lu/h%lu", i % 10, i % 100, i);
		rc = brk_breaker_get(seg, name, NULL, &b);
		if (rc == 0 && every && i % every == 0)
			rc = brk_trip(b, 3600 * 1000);
		if (rc) {
			fprintf(stderr, "mkrecords: %s: %s\n", name, brk_strerror(rc));
			return 1;
		}
	}
	for (i = 0; i < buckets; i++) {
		snprintf(name, sizeof name, "t%lu/bucket%lu", i % 10, i);
		rc = brk_bucket_get(seg, name, 10.0, 5, &k);
		if (rc) {
			fprintf(stderr, "mkrecords: %s: %s\n", name, brk_strerror(rc));
			return 1;
		}
	}
	brk_detach(seg);
	return 0;
}
