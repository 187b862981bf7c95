/*
 * abi.c - structs whose size may differ between the caller and the
 * library (breaker.h, "Growing structs"): the frozen BREAKER_0 sizes and
 * the two byte copies. A leaf: it calls nothing of the library. Each
 * sized function (and its plain-name entry point with the BREAKER_0 size)
 * lives with its concept: config.c, segment.c, info.c, gcra.c, budget.c,
 * events.c.
 *
 * Reading follows the Linux kernel's copy_struct_from_user() (used by
 * openat2(2) and clone3(2)): take what both sides know, default what only
 * the library knows, refuse (-E2BIG) what only the caller knows unless it
 * is zero. Writing never goes past the caller's size.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "abi.h"
#include "breaker.h"

/* The BREAKER_0 sizes are facts about the frozen ABI: if one of these
 * fails, a struct was changed in a way that breaks existing programs. */
_Static_assert(sizeof(struct brk_config) == BRK_CONFIG_SIZE_VER5, "brk_config");
_Static_assert(offsetof(struct brk_config, fleet) == BRK_CONFIG_SIZE_VER2,
	       "brk_config grew at the end (fleet)");
_Static_assert(sizeof(struct brk_attach_opts) == BRK_ATTACH_OPTS_SIZE_VER1,
	       "brk_attach_opts");
_Static_assert(sizeof(struct brk_segment_info) == BRK_SEGMENT_INFO_SIZE_VER3,
	       "brk_segment_info");
_Static_assert(offsetof(struct brk_segment_info, index_lock_pid) ==
	       BRK_SEGMENT_INFO_SIZE_VER2, "brk_segment_info grew at the end (index_lock_pid)");
_Static_assert(sizeof(struct brk_info) == BRK_INFO_SIZE_VER6, "brk_info");
_Static_assert(offsetof(struct brk_info, generation_full) == BRK_INFO_SIZE_VER4,
	       "brk_info grew at the end (generation_full, implicit_pace_per_s)");
_Static_assert(offsetof(struct brk_config, implicit_pace) == BRK_CONFIG_SIZE_VER3,
	       "brk_config grew at the end (implicit_pace)");
_Static_assert(offsetof(struct brk_info, config_seq) == BRK_INFO_SIZE_VER3,
	       "brk_info grew at the end (config_seq)");
/* ... and they grew only at the end */
_Static_assert(offsetof(struct brk_config, reserve_pct) == BRK_CONFIG_SIZE_VER0,
	       "brk_config grew at the end");
_Static_assert(offsetof(struct brk_config, hold_histogram) == BRK_CONFIG_SIZE_VER1,
	       "brk_config grew at the end (hold_histogram)");
_Static_assert(offsetof(struct brk_attach_opts, arena_bytes) == BRK_ATTACH_OPTS_SIZE_VER0,
	       "brk_attach_opts grew at the end");
_Static_assert(offsetof(struct brk_segment_info, arena_bytes) == BRK_SEGMENT_INFO_SIZE_VER0,
	       "brk_segment_info grew at the end");
_Static_assert(offsetof(struct brk_segment_info, mode) == BRK_SEGMENT_INFO_SIZE_VER1,
	       "brk_segment_info grew at the end (mode, owner, namespaces)");
_Static_assert(offsetof(struct brk_info, record_bytes) == BRK_INFO_SIZE_VER0,
	       "brk_info grew at the end");
_Static_assert(offsetof(struct brk_info, arrivals) == BRK_INFO_SIZE_VER1,
	       "brk_info grew at the end (signals)");
_Static_assert(offsetof(struct brk_info, hold) == BRK_INFO_SIZE_VER2,
	       "brk_info grew at the end (hold time)");
_Static_assert(sizeof(struct brk_bucket_info) == BRK_BUCKET_INFO_SIZE_VER2,
	       "brk_bucket_info");
_Static_assert(offsetof(struct brk_bucket_info, implicit) == BRK_BUCKET_INFO_SIZE_VER1,
	       "brk_bucket_info grew at the end (implicit)");
_Static_assert(offsetof(struct brk_bucket_info, ceiling_per_s) == BRK_BUCKET_INFO_SIZE_VER0,
	       "brk_bucket_info grew at the end (paced sits in VER0's tail padding)");
_Static_assert(sizeof(struct brk_pace_config) == BRK_PACE_CONFIG_SIZE_VER1,
	       "brk_pace_config");
_Static_assert(sizeof(struct brk_budget_info) == BRK_BUDGET_INFO_SIZE_VER0,
	       "brk_budget_info");
_Static_assert(sizeof(struct brk_event) == BRK_EVENT_SIZE_VER1, "brk_event");
_Static_assert(offsetof(struct brk_event, origin) == BRK_EVENT_SIZE_VER0, "brk_event grew at the end");
_Static_assert(sizeof(struct brk_fleet_status) == BRK_FLEET_STATUS_SIZE_VER1, "brk_fleet_status");
_Static_assert(offsetof(struct brk_fleet_status, drops_more) == BRK_FLEET_STATUS_SIZE_VER0,
	       "brk_fleet_status grew at the end (drops_more)");
_Static_assert(sizeof(struct brk_record_brief) == BRK_RECORD_BRIEF_SIZE_VER0,
	       "brk_record_brief");
/* Fixed-size structs (rule 3): new fields come out of reserved_. */
_Static_assert(sizeof(struct brk_refusal) == 128, "brk_refusal");
_Static_assert(sizeof(struct brk_result) == 64, "brk_result");
_Static_assert(sizeof(brk_permit) == 96, "brk_permit");
_Static_assert(sizeof(struct brk_reclaim_stats) == 64, "brk_reclaim_stats");
_Static_assert(sizeof(struct brk_lease_info) == 16, "brk_lease_info");
/* Embedded structs must fit their reserved room in brk_info. */
_Static_assert(sizeof(struct brk_config) <= 256, "brk_info.config room");
_Static_assert(sizeof(struct brk_counters) <= 512, "brk_info.counters room");
_Static_assert(sizeof(struct brk_bucket_info) <= 256, "brk_info.bucket room");
_Static_assert(sizeof(struct brk_budget_info) <= 256, "brk_info.budget room");
_Static_assert(sizeof(struct brk_hold_info) <= 256, "brk_info.hold room");
_Static_assert(BRK_REASON_COUNT <= BRK_REASON_SLOTS, "failures_by_reason");
/* The size member is first, so that it is read before anything else. */
_Static_assert(offsetof(struct brk_config, size) == 0, "brk_config.size");
_Static_assert(offsetof(struct brk_attach_opts, size) == 0,
	       "brk_attach_opts.size");

int brk__struct_in(void *dst, size_t ksize, const void *src, size_t usize)
{
	const unsigned char *tail;
	size_t i;

	if (usize < 8 || usize % 8 != 0 || usize > BRK_STRUCT_SIZE_MAX)
		return -EINVAL;
	if (usize > ksize) {
		tail = (const unsigned char *)src + ksize;
		for (i = 0; i < usize - ksize; i++)
			if (tail[i])
				return -E2BIG;
	}
	memcpy(dst, src, usize < ksize ? usize : ksize);
	return 0;
}

void brk__struct_out(void *dst, size_t usize, const void *src, size_t ksize)
{
	size_t n = usize < ksize ? usize : ksize;

	memcpy(dst, src, n);
	if (usize > n)
		memset((unsigned char *)dst + n, 0, usize - n);
}
