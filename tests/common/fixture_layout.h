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
 * words of the record @name (from its head word: brk__xw() indexes, e.g.
 * BRK__BK_TAT), which must be of @kind (enum brk_kind). *map and *len are
 * the mapping: munmap() them.
 */
static inline uint64_t *ut_record_ext(struct ut *u, const char *name,
				      int kind, void **map, size_t *len)
{
	struct brk_segment_info si;
	struct brk_info *i = calloc(1, sizeof *i);
	uint32_t ref = ut_ref_of(u->seg, name);
	int fd;

	assert_non_null(i);
	assert_true(ref != UINT32_MAX);
	assert_int_equal(brk_info_at(u->seg, ref, i), 0);
	assert_int_equal(i->kind, kind);
	free(i);
	assert_int_equal(brk_segment_info(u->seg, &si), 0);
	fd = shm_open(u->shm, O_RDWR, 0);
	assert_true(fd >= 0);
	*len = si.total_size;
	*map = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(*map != MAP_FAILED);
	return (uint64_t *)(void *)((uint8_t *)*map + brk__arena_offset(si.capacity) +
				    (uint64_t)ref * BRK__UNIT);
}

/* ut_record_at - the record @name in a second writable mapping (as
 * ut_record_ext()). */
static inline struct brk__record *ut_record_at(struct ut *u, const char *name,
					       int kind, void **map, size_t *len)
{
	return (struct brk__record *)(void *)ut_record_ext(u, name, kind, map, len);
}

#endif /* BRK_TEST_FIXTURE_LAYOUT_H */
