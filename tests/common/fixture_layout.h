/*
 * fixture_layout.h - fixtures of the unit tests that see the private
 * segment layout (lib/src/layout.h; 'private' in tests/unit/meson.build):
 * they map the segment a second time and poke its words by hand.
 */
#ifndef BRK_TEST_FIXTURE_LAYOUT_H
#define BRK_TEST_FIXTURE_LAYOUT_H

#include <fcntl.h>
#include <sys/mman.h>

#include "fixture.h"
#include "layout.h"

/*
 * ut_record_ext - map @u's segment a second time, writable, and return the
 * ext words of the record @name (found by listing), which must be of
 * @kind (enum brk_kind). *map and *len are the mapping: munmap() them.
 */
static inline uint64_t *ut_record_ext(struct ut *u, const char *name,
				      int kind, void **map, size_t *len)
{
	struct brk_segment_info si;
	struct brk_info *i = calloc(1, sizeof *i);
	uint32_t idx, n = brk_record_count(u->seg);
	struct brk__record *recs;
	int fd;

	assert_non_null(i);
	assert_int_equal(brk_segment_info(u->seg, &si), 0);
	for (idx = 0; idx < n; idx++)
		if (brk_info_at(u->seg, idx, i) == 0 && strcmp(i->name, name) == 0)
			break;
	assert_true(idx < n);
	assert_int_equal(i->kind, kind);
	free(i);
	fd = shm_open(u->shm, O_RDWR, 0);
	assert_true(fd >= 0);
	*len = si.total_size;
	*map = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(*map != MAP_FAILED);
	recs = (struct brk__record *)((uint8_t *)*map +
				      brk__records_offset(si.capacity));
	return recs[idx].ext;
}

#endif /* BRK_TEST_FIXTURE_LAYOUT_H */
